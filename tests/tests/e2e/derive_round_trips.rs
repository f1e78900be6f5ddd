//! `#[derive(Example)]` and `#[derive(SequenceExample)]` round trips of every row of the type
//! mapping on proptest-generated values: against prost and the model in both containers, and
//! through every other valid encoding.

use std::borrow::Cow;

use proptest::prelude::*;
use tfrecord_core::{Decode, Encode, OfRecord, TfExample};

use crate::support::attr_types::{Borrowed, outer, seq};
use crate::support::checks::{cfg, check_both, check_of, check_seq, check_styled};
use crate::support::model::{Model, of_bytes, tf_bytes};
use crate::support::styled::style;
use crate::support::value_types::{
    Doubles, blob, enums, f64_bits, f64_no_nan, floats, int_lists, ints, opts, small_vec, texts,
};

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn prop_ints(v in ints(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_int_lists(v in int_lists(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_floats_bit_exact(v in floats(f64_no_nan()), s in style()) {
        let (tf, of) = check_both(&v);
        // OFRecord keeps the f64s exactly; tf.train.Example rounds them to f32.
        prop_assert_eq!(of.d.to_bits(), v.d.to_bits());
        prop_assert_eq!(of.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                        v.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>());
        #[allow(clippy::cast_possible_truncation)]
        let narrowed = f64::from(v.d as f32);
        prop_assert_eq!(tf.d.to_bits(), narrowed.to_bits());
        // The f32s are bit-exact in both.
        prop_assert_eq!(tf.f.to_bits(), v.f.to_bits());
        prop_assert_eq!(of.arr.map(f32::to_bits), v.arr.map(f32::to_bits));
        check_styled(&v, s);
    }

    #[test]
    fn prop_doubles_in_ofrecord(
        d in f64_bits(),
        dv in small_vec(f64_bits()),
        da in prop::array::uniform3(f64_bits()),
        od in proptest::option::of(f64_bits()),
        i in any::<i32>(),
        iv in small_vec(any::<i32>()),
    ) {
        let v = Doubles { d, dv, da, od, i, iv };
        let back = check_of(&v);
        prop_assert_eq!(back.d.to_bits(), v.d.to_bits());
        prop_assert_eq!(back.da.map(f64::to_bits), v.da.map(f64::to_bits));
        prop_assert_eq!(back.i, v.i);
        prop_assert_eq!(&back.iv, &v.iv);
    }

    #[test]
    fn prop_texts(v in texts(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_options(v in opts(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_enums(v in enums(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_flatten(v in outer(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_sequence(v in seq()) {
        let back = check_seq(&v);
        prop_assert_eq!(back.id, v.id);
        prop_assert_eq!(&back.tokens, &v.tokens);
        prop_assert_eq!(&back.words, &v.words);
        prop_assert_eq!(back.scores.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                        v.scores.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(&back.maybe, &v.maybe);
        prop_assert_eq!(&back.fruits, &v.fruits);
        prop_assert_eq!(&back.id_steps, &v.id_steps);
    }

    #[test]
    fn prop_borrowed(
        raw in blob(),
        text in any::<String>(),
        words in small_vec(any::<String>()),
        blobs in small_vec(blob()),
        opt in proptest::option::of(blob()),
        n in any::<i64>(),
    ) {
        let v = Borrowed {
            raw: &raw,
            text: &text,
            cow_b: Cow::Owned(raw.clone()),
            cow_s: Cow::Borrowed(&text),
            words: words.iter().map(String::as_str).collect(),
            blobs: blobs.iter().map(|b| Cow::Borrowed(&b[..])).collect(),
            pair: [&text, "x"],
            opt: opt.as_deref(),
            d: "d",
            db: b"",
            dc: Cow::Borrowed(b"c"),
            n,
        };
        check_borrowed(&v);
    }
}

/// The borrowed round trips: values equal, and every borrowed field points into the record.
fn check_borrowed(v: &Borrowed<'_>) {
    for of in [false, true] {
        let bytes = if of {
            Encode::<OfRecord>::encode_to_vec(v)
        } else {
            Encode::<TfExample>::encode_to_vec(v)
        };
        let want = v.feats(of);
        let back: Borrowed<'_> = if of {
            Decode::<OfRecord>::decode(&bytes).expect("decode OFRecord")
        } else {
            Decode::<TfExample>::decode(&bytes).expect("decode Example")
        };
        assert_eq!(&back, v);
        assert_eq!(back.feats(of), want);
        let range = bytes.as_ptr_range();
        let inside = |p: *const u8, len: usize| len == 0 || range.contains(&p);
        assert!(inside(back.raw.as_ptr(), back.raw.len()));
        assert!(inside(back.text.as_ptr(), back.text.len()));
        assert!(matches!(back.cow_b, Cow::Borrowed(_)));
        assert!(matches!(back.cow_s, Cow::Borrowed(_)));
        assert!(back.words.iter().all(|w| inside(w.as_ptr(), w.len())));
        assert!(back.blobs.iter().all(|b| matches!(b, Cow::Borrowed(_))));
        assert!(back.opt.is_none_or(|o| inside(o.as_ptr(), o.len())));
        // Prost's encoding of the same features decodes, borrowing from its bytes.
        let built = if of { of_bytes(&want) } else { tf_bytes(&want) };
        let from_prost: Borrowed<'_> = if of {
            Decode::<OfRecord>::decode(&built).expect("decode OFRecord")
        } else {
            Decode::<TfExample>::decode(&built).expect("decode Example")
        };
        assert_eq!(&from_prost, v);
        assert!(built.as_ptr_range().contains(&from_prost.text.as_ptr()) || v.text.is_empty());
    }
}
