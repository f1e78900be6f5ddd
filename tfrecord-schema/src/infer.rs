//! Schema inference: a spec from the records themselves, as `tfrecord infer` writes it.
//!
//! The caller decodes each record and reports what each feature holds ([`Observed`]: the
//! list type and the number of values); [`Inferrer`] keeps a summary per key and turns it into
//! a [`Record`] whose spec the three consumers accept: `Schema::from_toml_str`, the code
//! generator (`tfrecord gen`, `Builder`), whose type then reads the records it was inferred
//! from, and the runtime parser (`tfrecord parse --spec`).
//!
//! # Rules
//!
//! - **dtype** from the list kind: `int64_list` -> `int64`, `float_list` -> `float`,
//!   `bytes_list` -> `string` when every value seen is valid UTF-8 (and there was at least
//!   one), else `bytes`; OFRecord's `int32_list` -> `int32` and `double_list` -> `double`.
//!   A key whose records disagree on the list kind, or that never holds a list with a kind
//!   set, is left out, with a [note](Inferred::notes) saying why.
//! - A `Feature` with no kind set counts as present with no values: the derive reads it as an
//!   empty list, TensorFlow as a missing feature, and both read a `var` feature that way.
//! - **kind**: `fixed` when every record that has the key holds the same number n >= 1 of
//!   values (`shape = []` for n = 1, `[n]` otherwise), else `var`. A key that only ever holds
//!   empty lists is `var`: nothing says how many values it should hold.
//! - **presence**: a `fixed` feature that some records lack is `optional = true`. A `var`
//!   feature reads an absent key as an empty list already (TensorFlow's `VarLenFeature`), so it
//!   stays a plain `var`.
//! - **SequenceExamples**: context features as above; a feature list is a `sequence`
//!   (`FixedLenSequenceFeature`) when every step of every record holds the same number n >= 1
//!   of values (`shape` as above), with `allow_missing = true` when some records lack the list;
//!   else a `var` feature list. A list that never has a step is left out (no dtype).
//! - **names**: the Rust field name comes from the key ([`symbol::field_name`]); when that
//!   fails or two keys collide, a `field = ".."` is set (`feature`, then `_2`, `_3` suffixes).
//! - An empty key cannot be a spec key, and is left out.
//!
//! Keys come out sorted (by bytes), so the output depends only on the records.

use std::collections::BTreeMap;

use crate::ir::{DType, Dialect, FeatureKind, Field, Origin, Presence, Record, RecordKind};
use crate::symbol;

/// The kind of list a feature holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ListType {
    /// `int64_list`.
    Int64,
    /// `float_list`.
    Float,
    /// `bytes_list`.
    Bytes,
    /// OFRecord's `int32_list`.
    Int32,
    /// OFRecord's `double_list`.
    Double,
}

impl ListType {
    /// The protobuf field name: `int64_list`, `float_list`, ...
    pub fn name(self) -> &'static str {
        match self {
            ListType::Int64 => "int64_list",
            ListType::Float => "float_list",
            ListType::Bytes => "bytes_list",
            ListType::Int32 => "int32_list",
            ListType::Double => "double_list",
        }
    }
}

/// What one feature of one record (or one step of a feature list) holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed {
    /// The list kind; `None` for a `Feature` with no kind set.
    pub list: Option<ListType>,
    /// The number of values.
    pub count: usize,
    /// For bytes: whether every value is valid UTF-8 (`true` when there are none).
    pub utf8: bool,
}

impl Observed {
    /// A list of `count` values of a numeric kind.
    pub fn numbers(list: ListType, count: usize) -> Self {
        Observed {
            list: Some(list),
            count,
            utf8: true,
        }
    }

    /// A `bytes_list` of these values.
    pub fn bytes<B: AsRef<[u8]>>(values: &[B]) -> Self {
        Observed {
            list: Some(ListType::Bytes),
            count: values.len(),
            utf8: values
                .iter()
                .all(|v| std::str::from_utf8(v.as_ref()).is_ok()),
        }
    }

    /// A `Feature` with no kind set.
    pub fn no_kind() -> Self {
        Observed {
            list: None,
            count: 0,
            utf8: true,
        }
    }
}

/// A summary of every value list seen under one key.
#[derive(Clone, Debug, Default)]
struct Lists {
    /// Every list kind seen.
    types: Vec<ListType>,
    /// Where each list kind was first seen, when the caller said where records are
    /// ([`Inferrer::add_example_at`]): the same order as `types`.
    first_at: Vec<Option<String>>,
    /// How many lists.
    lists: u64,
    /// The fewest and most values in one list.
    min: usize,
    max: usize,
    /// Whether any bytes value was seen, and whether all were UTF-8.
    any_bytes: bool,
    all_utf8: bool,
}

impl Lists {
    fn add(&mut self, o: Observed, at: &dyn Fn() -> Option<String>) {
        if self.lists == 0 {
            self.min = o.count;
            self.max = o.count;
            self.all_utf8 = true;
        } else {
            self.min = self.min.min(o.count);
            self.max = self.max.max(o.count);
        }
        self.lists += 1;
        if let Some(t) = o.list
            && let Err(i) = self.types.binary_search(&t)
        {
            self.types.insert(i, t);
            self.first_at.insert(i, at());
        }
        if o.list == Some(ListType::Bytes) && o.count > 0 {
            self.any_bytes = true;
        }
        self.all_utf8 &= o.utf8;
    }

    /// The dtype, or why there is none.
    fn dtype(&self) -> Result<DType, String> {
        match self.types.as_slice() {
            [] => Err("no record gives it a value type (every feature has no kind set)".into()),
            [t] => Ok(match t {
                ListType::Int64 => DType::Int64,
                ListType::Float => DType::Float,
                ListType::Int32 => DType::Int32,
                ListType::Double => DType::Double,
                ListType::Bytes if self.any_bytes && self.all_utf8 => DType::String,
                ListType::Bytes => DType::Bytes,
            }),
            many => Err(format!(
                "records disagree on its type: {}",
                many.iter()
                    .zip(&self.first_at)
                    .map(|(t, at)| match at {
                        Some(at) => format!("{} first in {at}", t.name()),
                        None => t.name().to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }

    /// Why an empty key is left out, with where its first list was seen when known.
    fn empty_key(&self) -> String {
        let places: Vec<&str> = self.first_at.iter().flatten().map(String::as_str).collect();
        if places.is_empty() {
            "a spec key cannot be empty".into()
        } else {
            format!(
                "a spec key cannot be empty (first in {})",
                places.join(", ")
            )
        }
    }

    /// The shape when every list holds the same number n >= 1 of values.
    fn fixed_shape(&self) -> Option<Vec<u64>> {
        (self.lists > 0 && self.min == self.max && self.min > 0).then(|| {
            if self.min == 1 {
                Vec::new()
            } else {
                vec![self.min as u64]
            }
        })
    }

    fn counts(&self) -> String {
        let noun = |n: usize| if n == 1 { "value" } else { "values" };
        if self.min == self.max {
            format!("{} {}", self.min, noun(self.min))
        } else {
            format!("{} to {} values", self.min, self.max)
        }
    }
}

/// One key of a feature-list map: its per-record presence and step counts, and its steps.
#[derive(Clone, Debug, Default)]
struct FeatureList {
    present: u64,
    min_steps: usize,
    max_steps: usize,
    steps: Lists,
}

/// Collects observations of records and infers a [`Record`] from them.
///
/// ```
/// use tfrecord_schema::infer::{Inferrer, ListType, Observed};
/// use tfrecord_schema::ir::{FeatureKind, Presence, RecordKind};
///
/// let mut inf = Inferrer::new(RecordKind::Example);
/// inf.add_example([("label", Observed::numbers(ListType::Int64, 1)), ("tags", Observed::bytes(&["a", "b"]))]);
/// inf.add_example([("tags", Observed::bytes(&["c"]))]);
/// let out = inf.finish("Sample");
/// let (label, tags) = (&out.record.fields[0], &out.record.fields[1]);
/// // In one of two records, one value each: an optional scalar.
/// assert_eq!(label.kind, FeatureKind::Fixed { shape: vec![] });
/// assert_eq!(label.presence, Presence::Optional);
/// // Two values, then one: any number.
/// assert_eq!((tags.key.as_str(), &tags.kind), ("tags", &FeatureKind::Var { rank: None }));
/// ```
#[derive(Clone, Debug)]
pub struct Inferrer {
    kind: RecordKind,
    dialect: Dialect,
    records: u64,
    features: BTreeMap<String, (u64, Lists)>,
    lists: BTreeMap<String, FeatureList>,
}

/// What [`Inferrer::finish`] found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Inferred {
    /// The inferred record.
    pub record: Record,
    /// Keys left out, each with the reason, in key order: `(key, reason)`.
    pub notes: Vec<(String, String)>,
    /// The keys of [`notes`](Self::notes) that some record holds (lists of disagreeing
    /// types, even empty ones, or under an empty key; and every feature list left out, since a
    /// record that holds one, even of no steps, tells `FixedLenSequenceFeature` that it is
    /// there): what a conversion by this spec would lose. The others are features that never
    /// hold a list (a feature with no kind set in every record).
    pub lost: Vec<String>,
    /// How many records were observed.
    pub records: u64,
}

impl Inferrer {
    /// An inferrer for records of this kind (`Example` also for OFRecord, with
    /// [`dialect`](Inferrer::dialect)).
    pub fn new(kind: RecordKind) -> Self {
        Inferrer {
            kind,
            dialect: Dialect::Both,
            records: 0,
            features: BTreeMap::new(),
            lists: BTreeMap::new(),
        }
    }

    /// The dialect written into the record (default [`Dialect::Both`]; [`Dialect::Of`] for
    /// OFRecord, whose `int32` and `double` lists TensorFlow has not).
    #[must_use]
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Adds one `tf.train.Example` (or OFRecord): each key once, with what it holds.
    pub fn add_example<'a>(&mut self, features: impl IntoIterator<Item = (&'a str, Observed)>) {
        self.records += 1;
        self.add_features(features, &|| None);
    }

    /// [`add_example`](Self::add_example), with where the record is (its file, byte offset and
    /// index, say), asked for only when the record shows a key a list kind for the first
    /// time: a key whose records disagree on the kind is then noted with where each kind was
    /// first seen.
    pub fn add_example_at<'a>(
        &mut self,
        features: impl IntoIterator<Item = (&'a str, Observed)>,
        at: impl Fn() -> String,
    ) {
        self.records += 1;
        self.add_features(features, &|| Some(at()));
    }

    /// Adds one `tf.train.SequenceExample`: its context features, and its feature lists each
    /// with what every step holds.
    pub fn add_sequence_example<'a, S>(
        &mut self,
        context: impl IntoIterator<Item = (&'a str, Observed)>,
        feature_lists: impl IntoIterator<Item = (&'a str, S)>,
    ) where
        S: IntoIterator<Item = Observed>,
    {
        self.add_sequence(context, feature_lists, &|| None);
    }

    /// [`add_sequence_example`](Self::add_sequence_example), with where the record is, as
    /// [`add_example_at`](Self::add_example_at) takes it.
    pub fn add_sequence_example_at<'a, S>(
        &mut self,
        context: impl IntoIterator<Item = (&'a str, Observed)>,
        feature_lists: impl IntoIterator<Item = (&'a str, S)>,
        at: impl Fn() -> String,
    ) where
        S: IntoIterator<Item = Observed>,
    {
        self.add_sequence(context, feature_lists, &|| Some(at()));
    }

    fn add_sequence<'a, S>(
        &mut self,
        context: impl IntoIterator<Item = (&'a str, Observed)>,
        feature_lists: impl IntoIterator<Item = (&'a str, S)>,
        at: &dyn Fn() -> Option<String>,
    ) where
        S: IntoIterator<Item = Observed>,
    {
        self.records += 1;
        self.add_features(context, at);
        for (key, steps) in feature_lists {
            let entry = self.lists.entry(key.to_string()).or_default();
            let mut n = 0usize;
            for step in steps {
                // Where a step's kind was first seen names the step too: two kinds in one
                // record's list are two places in it.
                let k = n;
                entry
                    .steps
                    .add(step, &|| at().map(|a| format!("{a}, step {k}")));
                n += 1;
            }
            if entry.present == 0 {
                entry.min_steps = n;
                entry.max_steps = n;
            } else {
                entry.min_steps = entry.min_steps.min(n);
                entry.max_steps = entry.max_steps.max(n);
            }
            entry.present += 1;
        }
    }

    fn add_features<'a>(
        &mut self,
        features: impl IntoIterator<Item = (&'a str, Observed)>,
        at: &dyn Fn() -> Option<String>,
    ) {
        for (key, o) in features {
            let entry = self.features.entry(key.to_string()).or_default();
            entry.0 += 1;
            entry.1.add(o, at);
        }
    }

    /// How many records were added.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// How many distinct keys were seen: features (context features), then feature lists,
    /// each counted once. The inferrer's memory grows with them, a little per key, so a caller
    /// reading untrusted records bounds it by checking this after each record.
    pub fn keys(&self) -> usize {
        self.features.len() + self.lists.len()
    }

    /// The record named `name`, with a field per key that could be inferred.
    pub fn finish(self, name: &str) -> Inferred {
        let mut notes = Vec::new();
        let mut lost = Vec::new();
        let mut fields = Vec::new();
        let records = self.records;
        let in_records = |present: u64| format!("In {present} of {records} records");
        for (key, (present, lists)) in &self.features {
            if key.is_empty() {
                notes.push((key.clone(), lists.empty_key()));
                if !lists.types.is_empty() {
                    lost.push(key.clone());
                }
                continue;
            }
            let dtype = match lists.dtype() {
                Ok(d) => d,
                Err(why) => {
                    notes.push((key.clone(), why));
                    if !lists.types.is_empty() {
                        lost.push(key.clone());
                    }
                    continue;
                }
            };
            let (kind, presence, what) = match lists.fixed_shape() {
                Some(shape) => (
                    FeatureKind::Fixed { shape },
                    if *present < records {
                        Presence::Optional
                    } else {
                        Presence::Required
                    },
                    "each",
                ),
                None => (
                    FeatureKind::Var { rank: None },
                    Presence::TypeDefault,
                    "per record",
                ),
            };
            let doc = format!("{}; {} {what}.", in_records(*present), lists.counts());
            fields.push(field(key, dtype, kind, presence, doc));
        }
        for (key, list) in &self.lists {
            // Every feature list left out is one that records hold (a key is listed when a
            // record holds it), even with no steps: lost to a conversion by this spec.
            if key.is_empty() {
                notes.push((key.clone(), list.steps.empty_key()));
                lost.push(key.clone());
                continue;
            }
            let dtype = match list.steps.dtype() {
                Ok(d) => d,
                Err(_) if list.steps.lists == 0 => {
                    notes.push((
                        key.clone(),
                        "the feature list never has a step, so nothing tells its type".into(),
                    ));
                    lost.push(key.clone());
                    continue;
                }
                Err(why) => {
                    notes.push((key.clone(), why));
                    lost.push(key.clone());
                    continue;
                }
            };
            let steps = if list.min_steps == list.max_steps {
                let s = if list.min_steps == 1 { "" } else { "s" };
                format!("{} step{s}", list.min_steps)
            } else {
                format!("{} to {} steps", list.min_steps, list.max_steps)
            };
            let (kind, presence) = match list.steps.fixed_shape() {
                Some(shape) => (
                    FeatureKind::FixedSequence {
                        shape: shape.into_iter().map(Some).collect(),
                        allow_missing: list.present < records,
                    },
                    Presence::TypeDefault,
                ),
                None => (
                    FeatureKind::Steps {
                        step: Box::new(FeatureKind::Var { rank: None }),
                    },
                    Presence::TypeDefault,
                ),
            };
            let doc = format!(
                "{}; {steps} of {} each.",
                in_records(list.present),
                list.steps.counts()
            );
            fields.push(field(key, dtype, kind, presence, doc));
        }
        name_fields(&mut fields);
        Inferred {
            record: Record {
                name: name.to_string(),
                kind: self.kind,
                dialect: self.dialect,
                deny_unknown_keys: false,
                fields,
                doc: vec![format!(
                    "Inferred from {records} record{}.",
                    if records == 1 { "" } else { "s" }
                )],
                origin: Origin::default(),
            },
            notes,
            lost,
            records,
        }
    }
}

fn field(key: &str, dtype: DType, kind: FeatureKind, presence: Presence, doc: String) -> Field {
    Field {
        name: key.to_string(),
        member: String::new(),
        key: key.to_string(),
        source: None,
        dtype: Some(dtype),
        kind,
        presence,
        skip: false,
        flatten: false,
        lossy: false,
        doc: vec![doc],
        origin: Origin::default(),
    }
}

/// Gives every field a distinct Rust name: the one derived from its key, else `feature`, with
/// `_2`, `_3`, ... on collisions (in field order, so the first keeps the plain name).
fn name_fields(fields: &mut [Field]) {
    let wanted: Vec<String> = fields
        .iter()
        .map(|f| symbol::field_name(&f.key).unwrap_or_else(|| "feature".to_string()))
        .collect();
    // A set, not a list: a record may have many thousands of keys.
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (f, base) in fields.iter_mut().zip(wanted.iter()) {
        let mut name = base.clone();
        let mut n = 1u32;
        while taken.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        taken.insert(name.clone());
        f.member = name;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: usize) -> Observed {
        Observed::numbers(ListType::Int64, n)
    }

    #[test]
    fn kinds_presence_and_names() {
        let mut inf = Inferrer::new(RecordKind::Example);
        inf.add_example([
            ("a/b", int(1)),
            ("a_b", int(2)),
            ("emb", Observed::numbers(ListType::Float, 3)),
            ("e", int(0)),
            ("mixed", int(1)),
            ("unset", Observed::no_kind()),
            ("txt", Observed::bytes(&["x"])),
            ("bin", Observed::bytes(&[b"\xff"])),
            ("", int(1)),
            ("ключ", Observed::no_kind()),
        ]);
        inf.add_example([
            ("a/b", int(1)),
            ("a_b", int(2)),
            ("e", int(0)),
            ("mixed", Observed::numbers(ListType::Float, 1)),
            ("txt", Observed::bytes(&["y", "z"])),
            ("bin", Observed::bytes(&[b"ok"])),
            ("ключ", int(1)),
        ]);
        let out = inf.finish("R");
        let get = |k: &str| out.record.fields.iter().find(|f| f.key == k).unwrap();
        assert_eq!(get("a/b").member, "a_b");
        assert_eq!(get("a_b").member, "a_b_2");
        assert_eq!(get("a_b").kind, FeatureKind::Fixed { shape: vec![2] });
        assert_eq!(get("emb").presence, Presence::Optional);
        assert_eq!(get("e").kind, FeatureKind::Var { rank: None });
        assert_eq!(get("txt").dtype, Some(DType::String));
        assert_eq!(get("txt").kind, FeatureKind::Var { rank: None });
        assert_eq!(get("bin").dtype, Some(DType::Bytes));
        assert_eq!(get("ключ").member, "feature");
        assert_eq!(get("ключ").kind, FeatureKind::Var { rank: None });
        let noted: Vec<&str> = out.notes.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(noted, ["", "mixed", "unset"]);
        assert_eq!(out.records, 2);
    }

    #[test]
    fn feature_lists() {
        let mut inf = Inferrer::new(RecordKind::SequenceExample);
        inf.add_sequence_example(
            [("id", int(1))],
            [
                ("fixed", vec![int(2), int(2)]),
                ("var", vec![int(1), int(3)]),
                ("never", vec![]),
            ],
        );
        inf.add_sequence_example([("id", int(1))], [("var", vec![])]);
        let out = inf.finish("S");
        let get = |k: &str| out.record.fields.iter().find(|f| f.key == k).unwrap();
        assert_eq!(
            get("fixed").kind,
            FeatureKind::FixedSequence {
                shape: vec![Some(2)],
                allow_missing: true
            }
        );
        assert_eq!(
            get("var").kind,
            FeatureKind::Steps {
                step: Box::new(FeatureKind::Var { rank: None })
            }
        );
        assert_eq!(get("id").presence, Presence::Required);
        assert_eq!(out.notes.len(), 1);
        // A list that records hold, even with no steps, would be lost by the spec.
        assert_eq!(out.lost, ["never"]);
        assert_eq!(
            get("fixed").doc,
            ["In 1 of 2 records; 2 steps of 2 values each."]
        );
        let mut inf = Inferrer::new(RecordKind::SequenceExample);
        inf.add_sequence_example([("id", int(1))], [("one", vec![int(1)])]);
        let out = inf.finish("S");
        let one = out.record.fields.iter().find(|f| f.key == "one").unwrap();
        assert_eq!(one.doc, ["In 1 of 1 records; 1 step of 1 value each."]);
    }
}
