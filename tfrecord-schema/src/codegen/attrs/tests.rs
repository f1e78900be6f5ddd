//! What the lowering makes of a field's absence: a variable-length list is empty when absent
//! (TensorFlow's `VarLenFeature`) unless `required`; everything else keeps its presence.

use super::ctxt::Ctxt;
use super::lower::lower_struct;
use crate::ir::{FeatureKind, Presence, Record, RecordKind};

/// Lowers a struct, asserting it has no error.
fn lower(input: &syn::DeriveInput, kind: RecordKind) -> Record {
    let syn::Data::Struct(data) = &input.data else {
        panic!("a struct");
    };
    let mut cx = Ctxt::default();
    let lowered = lower_struct(&mut cx, input, data, kind);
    if let Err(e) = cx.finish() {
        panic!("lowering failed: {e}");
    }
    lowered.record
}

fn presence(record: &Record, member: &str) -> Presence {
    record
        .fields
        .iter()
        .find(|f| f.member == member)
        .unwrap_or_else(|| panic!("no field {member}"))
        .presence
        .clone()
}

#[test]
fn variable_length_lists_are_empty_when_absent_unless_required() {
    let input: syn::DeriveInput = syn::parse_quote! {
        struct R<'a> {
            ints: Vec<i64>,
            texts: Vec<String>,
            blobs: Vec<Vec<u8>>,
            words: Vec<&'a str>,
            levels: Vec<Level>,
            #[example(required)]
            must: Vec<i64>,
            #[example(default)]
            dflt: Vec<i64>,
            #[example(default = [1, 2])]
            lit: Vec<i64>,
            maybe: Option<Vec<i64>>,
            #[example(shape = [2])]
            pair: Vec<i64>,
            arr: [f32; 2],
            one: i64,
            image: Vec<u8>,
        }
    };
    let r = lower(&input, RecordKind::Example);
    for m in ["ints", "texts", "blobs", "words", "levels", "dflt"] {
        assert_eq!(presence(&r, m), Presence::TypeDefault, "{m}");
        let f = r.fields.iter().find(|f| f.member == m).unwrap();
        assert_eq!(f.kind, FeatureKind::Var { rank: None }, "{m}");
    }
    assert!(matches!(presence(&r, "lit"), Presence::Default(_)));
    assert_eq!(presence(&r, "maybe"), Presence::Optional);
    for m in ["must", "pair", "arr", "one", "image"] {
        assert_eq!(presence(&r, m), Presence::Required, "{m}");
    }
}

#[test]
fn feature_lists_of_lists_are_empty_when_absent_unless_required() {
    let input: syn::DeriveInput = syn::parse_quote! {
        struct S {
            ctx: Vec<String>,
            #[example(required)]
            ctx_must: Vec<String>,
            #[example(sequence)]
            tokens: Vec<Vec<i64>>,
            #[example(sequence)]
            flat: Ragged<i64>,
            #[example(sequence, required)]
            must: Vec<Vec<i64>>,
            #[example(sequence)]
            scores: Vec<f32>,
            #[example(sequence, shape = [4])]
            boxes: Vec<Vec<f32>>,
            #[example(sequence, default)]
            missing_ok: Vec<f32>,
        }
    };
    let r = lower(&input, RecordKind::SequenceExample);
    for m in ["ctx", "tokens", "flat", "missing_ok"] {
        assert_eq!(presence(&r, m), Presence::TypeDefault, "{m}");
    }
    for m in ["ctx_must", "must", "scores", "boxes"] {
        assert_eq!(presence(&r, m), Presence::Required, "{m}");
    }
}

/// The code generator writes `required` where the IR says a variable-length list is required,
/// and the derive reads the generated struct back to the same presence.
#[cfg(feature = "builder")]
#[test]
fn generated_code_keeps_a_required_list_required() {
    use crate::emit::{EmitOptions, emit_schema};
    use crate::ir::Schema;

    let src = "[records.R.features.ids]\ndtype = \"int64\"\nkind = \"var\"\n\
               [records.R.features.tags]\ndtype = \"string\"\nkind = \"var\"\n";
    let mut schema = Schema::from_toml_str(src, "r.toml").expect("valid spec");
    schema.records[0].fields[0].presence = Presence::Required;
    let opts = EmitOptions {
        crate_path: "::tfrecord_core".to_string(),
    };
    let code = emit_schema(&schema, &opts)
        .unwrap_or_else(|_| panic!("emits"))
        .format()
        .expect("formats");
    assert!(
        code.contains("#[example(key = \"ids\", required)]"),
        "{code}"
    );
    let file = syn::parse_file(&code).expect("parses");
    let item = file
        .items
        .into_iter()
        .find_map(|i| match i {
            syn::Item::Struct(s) => Some(s),
            _ => None,
        })
        .expect("a struct");
    let r = lower(&item.into(), RecordKind::Example);
    assert_eq!(presence(&r, "ids"), Presence::Required);
    assert_eq!(presence(&r, "tags"), Presence::TypeDefault);
    // The whole IR round-trips, but for the doc comments the generator writes.
    let undocumented = |fields: &[crate::ir::Field]| -> Vec<crate::ir::Field> {
        fields
            .iter()
            .cloned()
            .map(|mut f| {
                f.doc.clear();
                f
            })
            .collect()
    };
    assert_eq!(
        undocumented(&r.fields),
        undocumented(&schema.records[0].fields)
    );
}
