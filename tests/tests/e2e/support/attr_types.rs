//! The derive test types of the attributes and layouts (flattened members, renamed and skipped
//! fields, `deny_unknown_keys`, borrowed fields, sparse fields, and a SequenceExample), with
//! their models, strategies and samples.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Debug;

use proptest::prelude::*;
use tfrecord_core::{Example, SequenceExample};

use super::model::{
    Feat, Feats, M, Model, SeqFeats, SeqModel, bytes_feat, f32_feat, f64_feat, i32_feat,
};
use super::value_types::{Fruit, blob, f32_bits, f64_no_nan, fruit, small_vec};

/// The innermost flattened member.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Deep {
    pub(crate) x: i64,
    pub(crate) tag: Option<String>,
}

impl Model for Deep {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("x", [self.x]);
        if let Some(t) = &self.tag {
            m.bytes("tag", [t]);
        }
        m.done()
    }
}

/// A flattened member that flattens another, with its own `rename_all`.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "camelCase")]
pub(crate) struct Middle {
    pub(crate) inner_count: u16,
    #[example(flatten)]
    pub(crate) deep: Deep,
}

impl Model for Middle {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("innerCount", [i64::from(self.inner_count)]);
        m.nest("deep", self.deep.feats(of));
        m.done()
    }
}

/// Flattening: keys `outer/inner`, nested, and with an explicit key prefix.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Outer {
    pub(crate) id: i64,
    #[example(flatten)]
    pub(crate) middle: Middle,
    #[example(flatten, key = "alt/prefix")]
    pub(crate) other: Deep,
    pub(crate) trailing: Vec<f32>,
}

impl Model for Outer {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("id", [self.id]);
        m.nest("middle", self.middle.feats(of));
        m.nest("alt/prefix", self.other.feats(of));
        m.f32("trailing", self.trailing.iter().copied());
        m.done()
    }
}

/// A strategy for [`Deep`].
fn deep() -> impl Strategy<Value = Deep> {
    (any::<i64>(), proptest::option::of(any::<String>())).prop_map(|(x, tag)| Deep { x, tag })
}

/// A strategy for [`Outer`].
pub(crate) fn outer() -> impl Strategy<Value = Outer> {
    (
        any::<i64>(),
        any::<u16>(),
        deep(),
        deep(),
        small_vec(-1e6f32..1e6),
    )
        .prop_map(|(id, inner_count, deep, other, trailing)| Outer {
            id,
            middle: Middle { inner_count, deep },
            other,
            trailing,
        })
}

/// Keys: `rename_all`, explicit keys with `/`, raw identifiers, and skipped fields.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) struct Renamed {
    pub(crate) image_width: i64,
    #[example(key = "image/encoded")]
    pub(crate) image_data: Vec<u8>,
    pub(crate) r#type: String,
    #[example(skip)]
    pub(crate) cache: Vec<String>,
    #[example(skip)]
    pub(crate) not_a_feature: NotAFeature,
}

/// A type with no feature impls: a `skip` field of it needs only `Default`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct NotAFeature(pub(crate) u8);

impl Model for Renamed {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("IMAGE_WIDTH", [self.image_width]);
        m.bytes("image/encoded", [&self.image_data]);
        m.bytes("TYPE", [&self.r#type]);
        m.done()
    }
}

/// The other `rename_all` rules.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "kebab-case")]
pub(crate) struct Kebab {
    pub(crate) first_value: i64,
    pub(crate) second_long_name: i64,
}

#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "PascalCase")]
pub(crate) struct Pascal {
    pub(crate) first_value: i64,
}

/// Rejects keys it does not read.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(deny_unknown_keys)]
pub(crate) struct Strict {
    pub(crate) a: i64,
    pub(crate) o: Option<i64>,
    #[example(flatten)]
    pub(crate) inner: Deep,
}

/// Borrowed fields: `&[u8]`, `&str`, `Cow`, in values, lists, arrays, options and defaults.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Borrowed<'a> {
    pub(crate) raw: &'a [u8],
    pub(crate) text: &'a str,
    pub(crate) cow_b: Cow<'a, [u8]>,
    pub(crate) cow_s: Cow<'a, str>,
    pub(crate) words: Vec<&'a str>,
    pub(crate) blobs: Vec<Cow<'a, [u8]>>,
    pub(crate) pair: [&'a str; 2],
    pub(crate) opt: Option<&'a [u8]>,
    #[example(default = "dflt")]
    pub(crate) d: &'a str,
    #[example(default = "dflt-bytes")]
    pub(crate) db: &'a [u8],
    #[example(default = "cow")]
    pub(crate) dc: Cow<'a, [u8]>,
    pub(crate) n: i64,
}

impl Model for Borrowed<'_> {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.bytes("raw", [self.raw]);
        m.bytes("text", [self.text]);
        m.bytes("cow_b", [&*self.cow_b]);
        m.bytes("cow_s", [self.cow_s.as_bytes()]);
        m.bytes("words", &self.words);
        m.bytes("blobs", self.blobs.iter().map(|b| &**b));
        m.bytes("pair", self.pair);
        if let Some(o) = self.opt {
            m.bytes("opt", [o]);
        }
        m.bytes("d", [self.d]);
        m.bytes("db", [self.db]);
        m.bytes("dc", [&*self.dc]);
        m.int("n", [self.n]);
        m.done()
    }
}

/// A SequenceExample: context features and feature lists of every step shape.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
pub(crate) struct Seq {
    pub(crate) id: i64,
    pub(crate) name: Option<String>,
    #[example(default = 3)]
    pub(crate) version: u16,
    #[example(lossy)]
    pub(crate) weight: f64,
    #[example(sequence)]
    pub(crate) tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    pub(crate) scores: Vec<f32>,
    #[example(sequence)]
    pub(crate) words: Vec<Vec<String>>,
    #[example(sequence)]
    pub(crate) pairs: Vec<[i32; 2]>,
    #[example(sequence)]
    pub(crate) maybe: Option<Vec<u16>>,
    #[example(sequence, default)]
    pub(crate) extra: Vec<bool>,
    #[example(sequence, key = "frames/data")]
    pub(crate) frames: Vec<Vec<u8>>,
    #[example(sequence)]
    pub(crate) fruits: Vec<Fruit>,
    #[example(sequence, lossy)]
    pub(crate) dbl: Vec<f64>,
    /// The same key as a context feature: feature lists are a separate map.
    #[example(sequence, key = "id")]
    pub(crate) id_steps: Vec<u64>,
    #[example(skip)]
    pub(crate) scratch: u8,
}

impl SeqModel for Seq {
    fn seq_feats(&self) -> SeqFeats {
        let mut c = M::new(false);
        c.int("id", [self.id]);
        if let Some(n) = &self.name {
            c.bytes("name", [n]);
        }
        c.int("version", [i64::from(self.version)]);
        c.f64("weight", [self.weight]);
        let mut lists = BTreeMap::new();
        let mut list = |k: &str, steps: Vec<Feat>| {
            lists.insert(k.to_string(), steps.into_iter().map(Some).collect());
        };
        list(
            "tokens",
            self.tokens.iter().map(|t| Feat::Int(t.clone())).collect(),
        );
        list(
            "scores",
            self.scores.iter().map(|&s| f32_feat([s])).collect(),
        );
        list("words", self.words.iter().map(bytes_feat).collect());
        list(
            "pairs",
            self.pairs.iter().map(|p| i32_feat(false, *p)).collect(),
        );
        if let Some(m) = &self.maybe {
            list(
                "maybe",
                m.iter().map(|&x| Feat::Int(vec![i64::from(x)])).collect(),
            );
        }
        list(
            "extra",
            self.extra
                .iter()
                .map(|&b| Feat::Int(vec![i64::from(b)]))
                .collect(),
        );
        list(
            "frames/data",
            self.frames.iter().map(|f| bytes_feat([f])).collect(),
        );
        list(
            "fruits",
            self.fruits.iter().map(|f| bytes_feat([f.wire()])).collect(),
        );
        list(
            "dbl",
            self.dbl.iter().map(|&d| f64_feat(false, [d])).collect(),
        );
        list(
            "id",
            self.id_steps
                .iter()
                .map(|&x| Feat::Int(vec![x.cast_signed()]))
                .collect(),
        );
        SeqFeats {
            context: c.done(),
            lists,
        }
    }
}

/// A strategy for [`Seq`].
pub(crate) fn seq() -> impl Strategy<Value = Seq> {
    (
        (
            any::<i64>(),
            proptest::option::of(any::<String>()),
            any::<u16>(),
            f64_no_nan(),
            small_vec(small_vec(any::<i64>())),
            small_vec(f32_bits()),
        ),
        (
            small_vec(small_vec(any::<String>())),
            small_vec(any::<[i32; 2]>()),
            proptest::option::of(small_vec(any::<u16>())),
            small_vec(any::<bool>()),
            small_vec(blob()),
            small_vec(fruit()),
        ),
        (small_vec(f64_no_nan()), small_vec(any::<u64>())),
    )
        .prop_map(
            |(
                (id, name, version, weight, tokens, scores),
                (words, pairs, maybe, extra, frames, fruits),
                (dbl, id_steps),
            )| Seq {
                id,
                name,
                version,
                weight,
                tokens,
                scores,
                words,
                pairs,
                maybe,
                extra,
                frames,
                fruits,
                dbl,
                id_steps,
                scratch: 0,
            },
        )
}

/// A hand-picked [`Seq`]: extremes, a NaN payload, `-0.0` and empty steps.
pub(crate) fn sample_seq() -> Seq {
    Seq {
        id: 42,
        name: Some("clip".into()),
        version: 9,
        weight: 0.25,
        tokens: vec![vec![1, 2], vec![], vec![-3]],
        scores: vec![0.5, -0.0, f32::from_bits(0x7fc0_1234)],
        words: vec![vec!["a".into()], vec![]],
        pairs: vec![[i32::MIN, i32::MAX]],
        maybe: Some(vec![]),
        extra: vec![true, false],
        frames: vec![vec![0xff, 0], vec![]],
        fruits: vec![Fruit::Kiwi, Fruit::RedApple],
        dbl: vec![1.0e300, 0.1],
        id_steps: vec![u64::MAX, 0],
        scratch: 0,
    }
}

/// A [`Borrowed`]'s features in tf.train.Example.
pub(crate) fn sample_borrowed_feats() -> Feats {
    Borrowed {
        raw: b"r",
        text: "t",
        cow_b: Cow::Borrowed(b"c"),
        cow_s: Cow::Borrowed("s"),
        words: vec!["w"],
        blobs: vec![],
        pair: ["p", "q"],
        opt: None,
        d: "d",
        db: b"db",
        dc: Cow::Borrowed(b"dc"),
        n: 1,
    }
    .feats(false)
}

#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Sparsey {
    pub(crate) label: i64,
    /// Kept in the record's order.
    #[example(sparse(index = "idx", value = "weight", size = [100], already_sorted))]
    pub(crate) one_d: tfrecord_core::Sparse<f32>,
    /// Put in the order of the indices on decode.
    #[example(sparse(index = ["row", "col"], size = [3, 4]))]
    pub(crate) two_d: tfrecord_core::Sparse<String>,
}

impl Model for Sparsey {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("label", [self.label]);
        m.int("idx", self.one_d.indices[0].clone());
        m.f32("weight", self.one_d.values.clone());
        m.int("row", self.two_d.indices[0].clone());
        m.int("col", self.two_d.indices[1].clone());
        m.bytes("two_d", self.two_d.values.iter().map(String::as_bytes));
        m.done()
    }
}

/// A strategy for [`Sparsey`].
pub(crate) fn sparsey() -> impl Strategy<Value = Sparsey> {
    let one = proptest::collection::vec((0i64..100, any::<f32>()), 0..6);
    let two = proptest::collection::vec((0i64..3, 0i64..4, "[a-z]{0,3}"), 0..6);
    (any::<i64>(), one, two).prop_map(|(label, one, mut two)| {
        // In index order, as `two_d` decodes (equal indices keep their order).
        two.sort_by_key(|t| (t.0, t.1));
        Sparsey {
            label,
            one_d: tfrecord_core::Sparse::new_1d(
                one.iter().map(|p| p.0).collect(),
                one.iter().map(|p| p.1).collect(),
            ),
            two_d: tfrecord_core::Sparse {
                indices: vec![
                    two.iter().map(|t| t.0).collect(),
                    two.iter().map(|t| t.1).collect(),
                ],
                values: two.into_iter().map(|t| t.2).collect(),
            },
        }
    })
}
