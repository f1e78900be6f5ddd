//! Hygiene of the derives' generated code.
//!
//! `hygiene_inner` shadows the prelude names generated code might lean on (`Result`, `Option`,
//! `Vec`, `String`, `Box`, `Default`, `From`, `Ok`, `Err`, `Some`, `None`) and modules named
//! like the crates it must reach with a leading `::` (`core`, `std`, `tfrecord_core`), and
//! denies every warning, `unused_qualifications` and all of clippy's default lints. The types
//! in it derive `Example` and `SequenceExample` with every kind of field, so the module
//! compiles only if the generated code is fully qualified and lint-clean. The tests outside it
//! then run that code.
//!
//! `crate = "..."` is checked with a re-export of `tfrecord_core` under another name.

/// `tfrecord_core` under another name, for `#[example(crate = "...")]`.
pub(crate) mod reexport {
    pub(crate) use tfrecord_core as tfr;
}

#[deny(warnings, unused_qualifications, clippy::all)]
mod hygiene_inner {
    #![allow(non_snake_case, non_camel_case_types, dead_code)]

    use ::tfrecord_core::{Example, SequenceExample};

    // Prelude names, shadowed by things of the wrong kind.
    pub(super) struct Result;
    pub(super) struct Option;
    pub(super) struct Vec;
    pub(super) struct String;
    pub(super) struct Box;
    pub(super) struct None;
    pub(super) trait Default {}
    pub(super) trait From {}
    pub(super) fn Ok() {}
    pub(super) fn Err() {}
    pub(super) fn Some() {}
    // Crate-like names that only a leading `::` gets past.
    mod core {}
    mod std {}
    mod tfrecord_core {}

    /// A value enum stored by name.
    #[derive(Example, Debug, Clone, Copy, PartialEq, Eq, ::core::default::Default)]
    #[example(rename_all = "lowercase")]
    pub(super) enum Kind {
        #[default]
        Cat,
        Dog,
    }

    /// A value enum stored by discriminant.
    #[derive(Example, Debug, Clone, Copy, PartialEq, Eq)]
    #[example(repr = "int64")]
    pub(super) enum Level {
        Low = -1,
        High = 7,
    }

    /// A flattened member.
    #[derive(Example, Debug, PartialEq)]
    pub(super) struct Inner {
        pub(super) x: i32,
        pub(super) o: ::core::option::Option<::std::string::String>,
    }

    /// Every field form, spelled with fully qualified std types.
    #[derive(Example, Debug, PartialEq)]
    #[example(rename_all = "camelCase", deny_unknown_keys)]
    pub(super) struct Shadowed {
        pub(super) id: i64,
        pub(super) small: u8,
        pub(super) flag: bool,
        pub(super) data: ::std::vec::Vec<u8>,
        pub(super) blob: ::bytes::Bytes,
        pub(super) name: ::std::string::String,
        pub(super) tags: ::std::vec::Vec<::std::string::String>,
        pub(super) floats: [f32; 2],
        pub(super) maybe: ::core::option::Option<i32>,
        pub(super) maybe_list: ::core::option::Option<::std::vec::Vec<u64>>,
        #[example(default = 3)]
        pub(super) with_default: u16,
        #[example(default = ["a", "b"])]
        pub(super) default_list: ::std::vec::Vec<::std::string::String>,
        #[example(default)]
        pub(super) type_default: ::std::vec::Vec<f32>,
        #[example(shape = [2, 1])]
        pub(super) shaped: ::std::vec::Vec<i64>,
        #[example(lossy)]
        pub(super) lossy: f64,
        pub(super) kind: Kind,
        #[example(default)]
        pub(super) kind_default: Kind,
        pub(super) levels: ::std::vec::Vec<Level>,
        #[example(key = "image/encoded")]
        pub(super) keyed: ::std::vec::Vec<u8>,
        #[example(flatten)]
        pub(super) inner: Inner,
        #[example(skip)]
        pub(super) skipped: ::std::boxed::Box<u8>,
    }

    /// Borrowed fields with the record's lifetime.
    #[derive(Example, Debug, PartialEq)]
    #[example(dialect = "ofrecord")]
    pub(super) struct Borrowing<'a> {
        pub(super) text: &'a str,
        pub(super) raw: &'a [u8],
        pub(super) cow: ::std::borrow::Cow<'a, [u8]>,
        pub(super) words: ::std::vec::Vec<&'a str>,
        pub(super) double: f64,
        pub(super) int32: i32,
    }

    /// A SequenceExample with context features and feature lists.
    #[derive(SequenceExample, Debug, PartialEq)]
    #[example(deny_unknown_keys)]
    pub(super) struct SeqShadowed {
        pub(super) ctx: ::core::option::Option<::std::string::String>,
        #[example(default = 1)]
        pub(super) version: i64,
        #[example(sequence)]
        pub(super) steps: ::std::vec::Vec<::std::vec::Vec<i64>>,
        #[example(sequence)]
        pub(super) kinds: ::core::option::Option<::std::vec::Vec<Kind>>,
        #[example(sequence, default)]
        pub(super) sparse: ::std::vec::Vec<::core::option::Option<f32>>,
        #[example(skip)]
        pub(super) skipped: u8,
    }

    /// A SequenceExample with feature lists only (no context features).
    #[derive(SequenceExample, Debug, PartialEq)]
    pub(super) struct ListsOnly {
        #[example(sequence)]
        pub(super) steps: ::std::vec::Vec<i64>,
    }

    /// A SequenceExample with context features only, denying unknown keys.
    #[derive(SequenceExample, Debug, PartialEq)]
    #[example(deny_unknown_keys)]
    pub(super) struct ContextOnly {
        pub(super) id: i64,
    }

    /// The derive through a re-export of `tfrecord_core` (the local `tfrecord_core` module
    /// above would break any path the generated code wrote without a leading `::`).
    #[derive(Example, Debug, PartialEq)]
    #[example(crate = "crate::hygiene::reexport::tfr")]
    pub(super) struct ViaReexport {
        pub(super) a: i64,
        pub(super) k: Kind,
    }

    /// A value enum through the re-export.
    #[derive(Example, Debug, Clone, Copy, PartialEq, Eq)]
    #[example(crate = "crate::hygiene::reexport::tfr", repr = "int64")]
    pub(super) enum ViaReexportEnum {
        One = 1,
    }

    /// A SequenceExample through the re-export.
    #[derive(SequenceExample, Debug, PartialEq)]
    #[example(crate = "crate::hygiene::reexport::tfr")]
    pub(super) struct SeqViaReexport {
        pub(super) e: ViaReexportEnum,
        #[example(sequence)]
        pub(super) steps: ::std::vec::Vec<f32>,
    }
}

use std::borrow::Cow;

use hygiene_inner::{
    Borrowing, ContextOnly, Inner, Kind, Level, ListsOnly, SeqShadowed, SeqViaReexport, Shadowed,
    ViaReexport, ViaReexportEnum,
};
use tfrecord_core::proto::tensorflow;
use tfrecord_core::{Decode, Encode, Message, OfRecord, TfExample, TfSequenceExample};

#[test]
fn shadowed_names_generated_code_runs() {
    let v = Shadowed {
        id: -1,
        small: 255,
        flag: true,
        data: vec![0, 1],
        blob: bytes::Bytes::from_static(b"blob"),
        name: "n".into(),
        tags: vec!["t".into()],
        floats: [0.5, -0.0],
        maybe: Some(-7),
        maybe_list: None,
        with_default: 9,
        default_list: vec![],
        type_default: vec![1.0],
        shaped: vec![1, 2],
        lossy: 0.25,
        kind: Kind::Dog,
        kind_default: Kind::Dog,
        levels: vec![Level::High, Level::Low],
        keyed: vec![9],
        inner: Inner {
            x: 3,
            o: Some("o".into()),
        },
        skipped: Box::new(0),
    };
    for of in [false, true] {
        let bytes = if of {
            Encode::<OfRecord>::encode_to_vec(&v)
        } else {
            Encode::<TfExample>::encode_to_vec(&v)
        };
        let back: Shadowed = if of {
            Decode::<OfRecord>::decode(&bytes).unwrap()
        } else {
            Decode::<TfExample>::decode(&bytes).unwrap()
        };
        assert_eq!(back, v);
    }
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&v)[..]).unwrap();
    let keys: Vec<&str> = e
        .features
        .as_ref()
        .unwrap()
        .feature
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "blob",
            "data",
            "defaultList",
            "flag",
            "floats",
            "id",
            "image/encoded",
            "inner/o",
            "inner/x",
            "kind",
            "kindDefault",
            "levels",
            "lossy",
            "maybe",
            "name",
            "shaped",
            "small",
            "tags",
            "typeDefault",
            "withDefault",
        ]
    );
    // The defaults and deny_unknown_keys are live in the shadowed module too.
    let mut e = e;
    let feats = &mut e.features.as_mut().unwrap().feature;
    feats.remove("withDefault");
    feats.remove("defaultList");
    feats.remove("kindDefault");
    let d: Shadowed = Decode::<TfExample>::decode(&e.encode_to_vec()).unwrap();
    assert_eq!(
        (d.with_default, d.default_list, d.kind_default),
        (3, vec!["a".to_string(), "b".to_string()], Kind::Cat)
    );
    e.features
        .as_mut()
        .unwrap()
        .feature
        .insert("unknown".into(), tensorflow::Feature { kind: None });
    let err = <Shadowed as Decode<TfExample>>::decode(&e.encode_to_vec()).unwrap_err();
    assert_eq!(err.key(), Some("unknown"));

    let text = String::from("text");
    let b = Borrowing {
        text: &text,
        raw: b"raw",
        cow: Cow::Borrowed(b"cow"),
        words: vec!["a", "b"],
        double: 0.1,
        int32: i32::MIN,
    };
    let bytes = Encode::<OfRecord>::encode_to_vec(&b);
    let back: Borrowing<'_> = Decode::<OfRecord>::decode(&bytes).unwrap();
    assert_eq!(back, b);
    assert!(bytes.as_ptr_range().contains(&back.text.as_ptr()));

    let s = SeqShadowed {
        ctx: Some("c".into()),
        version: 4,
        steps: vec![vec![1], vec![]],
        kinds: Some(vec![Kind::Cat]),
        sparse: vec![Some(1.5), None],
        skipped: 0,
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&s);
    let back: SeqShadowed = Decode::<TfSequenceExample>::decode(&bytes).unwrap();
    assert_eq!(back, s);

    let l = ListsOnly {
        steps: vec![1, 2, 3],
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&l);
    assert_eq!(
        <ListsOnly as Decode<TfSequenceExample>>::decode(&bytes).unwrap(),
        l
    );
    let c = ContextOnly { id: 5 };
    let mut msg =
        tensorflow::SequenceExample::decode(&Encode::<TfSequenceExample>::encode_to_vec(&c)[..])
            .unwrap();
    assert_eq!(
        <ContextOnly as Decode<TfSequenceExample>>::decode(&msg.encode_to_vec()).unwrap(),
        c
    );
    msg.feature_lists
        .get_or_insert_default()
        .feature_list
        .insert("steps".into(), tensorflow::FeatureList::default());
    let err = <ContextOnly as Decode<TfSequenceExample>>::decode(&msg.encode_to_vec()).unwrap_err();
    assert_eq!(err.key(), Some("steps"));
}

#[test]
fn crate_override_through_a_reexport() {
    let v = ViaReexport { a: 5, k: Kind::Dog };
    let bytes = Encode::<TfExample>::encode_to_vec(&v);
    assert_eq!(Decode::<TfExample>::decode(&bytes).ok(), Some(v));
    let s = SeqViaReexport {
        e: ViaReexportEnum::One,
        steps: vec![0.5],
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&s);
    let msg = tensorflow::SequenceExample::decode(&bytes[..]).unwrap();
    let ctx = &msg.context.as_ref().unwrap().feature["e"];
    assert_eq!(
        ctx.kind,
        Some(tensorflow::feature::Kind::Int64List(
            tensorflow::Int64List { value: vec![1] }
        ))
    );
    assert_eq!(Decode::<TfSequenceExample>::decode(&bytes).ok(), Some(s));
}
