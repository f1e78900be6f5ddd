//! The derived decoders on damaged input (an error or a value, never a panic), and the one-pass
//! decode of an Example against the general path.

use std::fmt::Debug;

use proptest::prelude::*;
use tfrecord_core::{Decode, Encode, Example, Message, OfRecord, TfExample, TfSequenceExample};

use crate::support::attr_types::{Borrowed, Outer, Seq, Sparsey, seq};
use crate::support::checks::{cfg, feature_error};
use crate::support::model::{Feat, Model, tf_bytes, tf_feature};
use crate::support::styled::{put_len, style, styled_of, styled_tf};
use crate::support::value_types::{
    Defaults, Enums, IntLists, Ints, Opts, Texts, enums, int_lists, opts, texts,
};

/// Calls `f` with every strict prefix of `bytes`, and with `bytes` where the byte at `at` is
/// overwritten with `byte`.
fn cuts_and_overwrite(bytes: &[u8], at: prop::sample::Index, byte: u8, f: impl Fn(&[u8])) {
    for cut in 0..bytes.len() {
        f(&bytes[..cut]);
    }
    if !bytes.is_empty() {
        let mut damaged = bytes.to_vec();
        damaged[at.index(bytes.len())] = byte;
        f(&damaged);
    }
}

/// Decodes `bytes` with every derived type and container; only a panic fails.
fn decode_everything(bytes: &[u8]) {
    let _ = <Texts as Decode<TfExample>>::decode(bytes);
    let _ = <Texts as Decode<OfRecord>>::decode(bytes);
    let _ = <IntLists as Decode<TfExample>>::decode(bytes);
    let _ = <IntLists as Decode<OfRecord>>::decode(bytes);
    let _ = <Outer as Decode<TfExample>>::decode(bytes);
    let _ = <Opts as Decode<OfRecord>>::decode(bytes);
    let _ = <Sparsey as Decode<TfExample>>::decode(bytes);
    let _ = <Borrowed<'_> as Decode<TfExample>>::decode(bytes);
    let _ = <Seq as Decode<TfSequenceExample>>::decode(bytes);
}

proptest! {
    #![proptest_config(cfg())]

    /// Every truncation and a random byte overwrite of valid records, in each container.
    #[test]
    fn damaged_records_never_panic(
        t in texts(),
        l in int_lists(),
        s in seq(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        for bytes in [
            Encode::<TfExample>::encode_to_vec(&t),
            Encode::<OfRecord>::encode_to_vec(&t),
            Encode::<TfExample>::encode_to_vec(&l),
            Encode::<TfSequenceExample>::encode_to_vec(&s),
        ] {
            cuts_and_overwrite(&bytes, at, byte, decode_everything);
        }
    }

    /// Arbitrary bytes.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        decode_everything(&bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// The one-pass decode and the general path.
// ---------------------------------------------------------------------------------------------

/// Rejects keys it does not read; all its features are plain, so it decodes in one pass.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(deny_unknown_keys)]
struct StrictPlain {
    a: i64,
    o: Option<i64>,
}

/// Decodes `bytes` as `T` through `Decode` (the one-pass walk, falling back to the general
/// path) and through the general path alone: both give the same value or the same error.
fn agree<'a, C, T>(bytes: &'a [u8], deny: Option<&'static str>)
where
    C: tfrecord_core::Container,
    T: Decode<'a, C>
        + tfrecord_core::__private::FieldTable
        + tfrecord_core::__private::DecodeFields<'a, C::Dialect>
        + Debug,
{
    let one_pass = <T as Decode<'a, C>>::decode(bytes);
    let general = tfrecord_core::__private::decode_record::<C, T>(bytes, deny);
    match (&one_pass, &general) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{bytes:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{bytes:?}"),
        _ => panic!("one pass {one_pass:?}, general path {general:?}, bytes {bytes:?}"),
    }
}

/// [`agree`] for every plain derived type, in each container it supports.
fn one_pass_agrees(bytes: &[u8]) {
    agree::<TfExample, Texts>(bytes, None);
    agree::<OfRecord, Texts>(bytes, None);
    agree::<TfExample, IntLists>(bytes, None);
    agree::<OfRecord, IntLists>(bytes, None);
    agree::<TfExample, Ints>(bytes, None);
    agree::<TfExample, Opts>(bytes, None);
    agree::<OfRecord, Opts>(bytes, None);
    agree::<TfExample, Enums>(bytes, None);
    agree::<TfExample, Defaults>(bytes, None);
    agree::<TfExample, Borrowed<'_>>(bytes, None);
    agree::<TfExample, StrictPlain>(bytes, Some("StrictPlain"));
    agree::<OfRecord, StrictPlain>(bytes, Some("StrictPlain"));
}

/// Decodes `bytes` into the value of `prev` (`Decode::decode_into`, which reuses its buffers)
/// and anew: both give the same value or the same error.
fn into_agrees<'a, C, T>(prev: &'a [u8], bytes: &'a [u8])
where
    C: tfrecord_core::Container,
    T: Decode<'a, C> + Debug,
{
    let Ok(mut into) = <T as Decode<'a, C>>::decode(prev) else {
        return;
    };
    let into_result = into.decode_into(bytes).map(|()| into);
    let fresh = <T as Decode<'a, C>>::decode(bytes);
    match (&into_result, &fresh) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{bytes:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{bytes:?}"),
        _ => panic!("decode_into {into_result:?}, decode {fresh:?}, bytes {bytes:?}"),
    }
}

/// [`into_agrees`] for every derived type, in each container it supports.
fn decode_into_agrees(prev: &[u8], bytes: &[u8]) {
    into_agrees::<TfExample, Texts>(prev, bytes);
    into_agrees::<OfRecord, Texts>(prev, bytes);
    into_agrees::<TfExample, IntLists>(prev, bytes);
    into_agrees::<OfRecord, IntLists>(prev, bytes);
    into_agrees::<TfExample, Ints>(prev, bytes);
    into_agrees::<TfExample, Opts>(prev, bytes);
    into_agrees::<OfRecord, Opts>(prev, bytes);
    into_agrees::<TfExample, Enums>(prev, bytes);
    into_agrees::<TfExample, Defaults>(prev, bytes);
    into_agrees::<TfExample, Borrowed<'_>>(prev, bytes);
    into_agrees::<TfExample, StrictPlain>(prev, bytes);
    into_agrees::<TfExample, Outer>(prev, bytes);
    into_agrees::<TfExample, Sparsey>(prev, bytes);
    into_agrees::<TfSequenceExample, Seq>(prev, bytes);
}

/// An Example holding the map entries `entries` (key, serialized `Feature`), in wire order.
fn example_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut map = Vec::new();
    for (k, f) in entries {
        let mut entry = Vec::new();
        put_len(&mut entry, 1, k.as_bytes());
        put_len(&mut entry, 2, f);
        put_len(&mut map, 1, &entry);
    }
    let mut out = Vec::new();
    put_len(&mut out, 1, &map);
    out
}

#[test]
fn one_pass_keeps_the_last_of_repeated_keys_and_words_errors_as_the_general_path() {
    let int = |v: i64| tf_feature(&Feat::Int(vec![v])).encode_to_vec();
    let text = |s: &str| tf_feature(&Feat::Bytes(vec![s.into()])).encode_to_vec();
    // A bad first entry shadowed by a good one decodes; the reverse is an error naming `a`.
    let good_last = example_of(&[("a", text("x")), ("a", int(5))]);
    let bad_last = example_of(&[("a", int(5)), ("a", text("x"))]);
    let v = <StrictPlain as Decode<TfExample>>::decode(&good_last).expect("last entry wins");
    assert_eq!(v, StrictPlain { a: 5, o: None });
    let (key, msg) = feature_error(<StrictPlain as Decode<TfExample>>::decode(&bad_last));
    assert_eq!(key.as_deref(), Some("a"), "{msg}");
    // An unknown key, a missing feature, and two errors (the first field's is reported).
    let unknown = example_of(&[("a", int(1)), ("zz", int(2))]);
    let err = <StrictPlain as Decode<TfExample>>::decode(&unknown).expect_err("unknown key");
    assert!(err.to_string().contains("zz"), "{err}");
    let missing = example_of(&[("o", int(1))]);
    let (key, _) = feature_error(<StrictPlain as Decode<TfExample>>::decode(&missing));
    assert_eq!(key.as_deref(), Some("a"));
    let both = example_of(&[("o", text("x")), ("a", text("y"))]);
    let (key, _) = feature_error(<StrictPlain as Decode<TfExample>>::decode(&both));
    assert_eq!(key.as_deref(), Some("a"));
    for bytes in [good_last, bad_last, unknown, missing, both] {
        one_pass_agrees(&bytes);
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// Each style of encoding, two records' entries in one map, and every truncation and a
    /// random byte overwrite: the one-pass decode agrees with the general path.
    #[test]
    fn one_pass_agrees_with_the_general_path(
        t in texts(),
        o in opts(),
        l in int_lists(),
        e in enums(),
        s in style(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut records = vec![
            Encode::<TfExample>::encode_to_vec(&t),
            Encode::<OfRecord>::encode_to_vec(&t),
            Encode::<TfExample>::encode_to_vec(&o),
            Encode::<OfRecord>::encode_to_vec(&l),
            Encode::<TfExample>::encode_to_vec(&e),
            styled_tf(&t.feats(false), s),
            styled_of(&o.feats(true), s),
            styled_tf(&e.feats(false), s),
        ];
        // One map holding both records' entries: `o`'s keys shadow nothing, `t`'s come first.
        let mut merged = t.feats(false);
        merged.extend(o.feats(false));
        records.push(tf_bytes(&merged));
        for bytes in &records {
            one_pass_agrees(bytes);
            cuts_and_overwrite(bytes, at, byte, one_pass_agrees);
        }
        // Each record decoded into the value of every record before it (other lengths,
        // other keys present), and its damaged versions into its own value.
        for (i, bytes) in records.iter().enumerate() {
            for prev in &records[..=i] {
                decode_into_agrees(prev, bytes);
            }
            cuts_and_overwrite(bytes, at, byte, |b| decode_into_agrees(bytes, b));
        }
    }

    /// Sequence records, in each style and damaged, decoded into the value of another.
    #[test]
    fn decode_into_agrees_for_sequences(
        a in seq(),
        b in seq(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let (a, b) = (
            Encode::<TfSequenceExample>::encode_to_vec(&a),
            Encode::<TfSequenceExample>::encode_to_vec(&b),
        );
        decode_into_agrees(&a, &b);
        decode_into_agrees(&b, &a);
        cuts_and_overwrite(&b, at, byte, |d| decode_into_agrees(&a, d));
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// `Reader::read_batch`, refilling one `Vec` in batches of every size, reads the values
    /// the iterator reads, of records of other lengths from batch to batch.
    #[test]
    fn read_batch_reads_what_the_iterator_reads(
        values in proptest::collection::vec(texts(), 0..12),
        n in 1usize..5,
    ) {
        use tfrecord_core::{Reader, ReaderOptions, Writer, WriterOptions};
        let mut w = Writer::<Texts, TfExample, Vec<u8>>::new(Vec::new(), WriterOptions::new());
        for v in &values {
            w.write(v).unwrap();
        }
        let bytes = w.finish().unwrap();
        let open = || Reader::<Texts, TfExample, &[u8]>::new(&bytes[..], ReaderOptions::new());
        let all: Vec<Texts> = open().collect::<Result<_, _>>().unwrap();
        let mut reader = open();
        let mut batch = Vec::new();
        let mut batched = Vec::new();
        while reader.read_batch(&mut batch, n).unwrap() > 0 {
            prop_assert!(batch.len() <= n);
            batched.extend(batch.iter().map(|v| format!("{v:?}")));
        }
        prop_assert!(batch.is_empty());
        let expected: Vec<String> = all.iter().map(|v| format!("{v:?}")).collect();
        prop_assert_eq!(batched, expected);
    }
}
