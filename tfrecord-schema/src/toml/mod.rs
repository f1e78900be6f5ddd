//! The TOML front end: a spec file -> [IR](crate::ir), with every error collected and located.
//!
//! The spec format is described, with a reference table of every key, in the
//! [crate documentation](crate#the-spec-format).
//!
//! The document is read as spanned TOML values (`toml::de::DeTable`) and walked by hand rather
//! than deserialized with serde: serde stops at the first error, and the walk reports every
//! unknown key, bad value and broken rule of the file at once, each at the byte range it
//! comes from. The IR's [`Origin`](crate::ir::Origin)s index a table of those ranges, and a
//! [`Part`](crate::check::Part) of a [`check::Diagnostic`] picks the range to point at.
//!
//! Here the file is parsed and its top level walked; `values` reads single values, `record`
//! and `feature` lower a record's and a feature's table, and `spans` keeps where each was
//! written.

mod feature;
mod record;
mod spans;
mod values;

use ::toml::de::DeTable;

use self::spans::SpanTable;
use self::values::{Lower, ordered};
use crate::check;
use crate::diagnostics::{Diagnostics, SourceMap};
use crate::ir::Schema;
use crate::symbol;

/// The longest spec file read (16 MiB): a spec is kilobytes, and a file past this (a wrong
/// path, `/dev/zero`) is an error rather than memory without bound.
pub const MAX_SPEC_BYTES: u64 = 16 << 20;

/// Reads a spec file's text, at most [`MAX_SPEC_BYTES`].
///
/// # Errors
/// An unreadable file, text that is not UTF-8, or a file longer than the bound.
pub fn read_spec_file(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_SPEC_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_SPEC_BYTES {
        return Err(std::io::Error::other(format!(
            "longer than {} MiB, more than a spec or schema file holds",
            MAX_SPEC_BYTES >> 20
        )));
    }
    Ok(text)
}

impl Schema {
    /// Reads a TOML spec. `file_name` is only used in messages (write it as the user should
    /// see it, e.g. relative to the crate).
    ///
    /// # Errors
    /// Every problem in the file at once: TOML syntax, unknown keys (with a suggestion), values
    /// of the wrong type, and every rule of [`check`], each with file, line, column and a caret
    /// under the value.
    ///
    /// # Examples
    /// ```
    /// use tfrecord_schema::ir::{DType, Schema};
    ///
    /// let spec = r#"
    /// [records.Mnist.features."image/encoded"]
    /// dtype = "bytes"
    /// field = "image"
    /// [records.Mnist.features.label]
    /// dtype = "int64"
    /// default = 0
    /// "#;
    /// let schema = Schema::from_toml_str(spec, "mnist.toml")?;
    /// let mnist = &schema.records[0];
    /// assert_eq!(mnist.fields[0].member, "image");
    /// assert_eq!(mnist.fields[1].dtype, Some(DType::Int64));
    ///
    /// let err = Schema::from_toml_str("[records.Mnist.features.label]\ndtype = \"int46\"\n", "mnist.toml")
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("did you mean `int64`?"));
    /// # Ok::<(), tfrecord_schema::Diagnostics>(())
    /// ```
    pub fn from_toml_str(src: &str, file_name: &str) -> Result<Schema, Diagnostics> {
        lower(src, file_name).map(|l| l.schema)
    }
}

/// A spec lowered to the IR, with the spans to report later problems (code generation) at.
pub(crate) struct Lowered {
    pub(crate) schema: Schema,
    #[cfg_attr(not(feature = "builder"), allow(dead_code))]
    pub(crate) spans: SpanTable,
}

/// Reads a spec: parse, lower, check. Every error of every phase that ran is returned.
pub(crate) fn lower(src: &str, file_name: &str) -> Result<Lowered, Diagnostics> {
    let map = SourceMap::new(file_name, src);
    let (root, parse_errors) = DeTable::parse_recoverable(src);
    if !parse_errors.is_empty() {
        let errors = parse_errors
            .iter()
            .map(|e| {
                let span = e.span().unwrap_or(0..0);
                let msg = e.message().trim_end().trim_end_matches('.').to_string();
                let mut lines = msg.lines();
                let first = lines.next().unwrap_or("invalid TOML").to_string();
                let mut err = map.error(&span, format!("invalid TOML: {first}"));
                for l in lines.filter(|l| !l.trim().is_empty()) {
                    err = err.note(l.trim());
                }
                err
            })
            .collect();
        return Err(Diagnostics::new(errors));
    }
    let mut cx = Lower {
        map: &map,
        errors: Vec::new(),
        sites: Vec::new(),
    };
    let mut schema = Schema::default();
    for (key, value) in ordered(root.get_ref()) {
        if key.get_ref() == "records" {
            let Some(records) = cx.table(value, "records") else {
                continue;
            };
            for (name, record) in ordered(records) {
                if let Some(r) = cx.record(name, record) {
                    schema.records.push(r);
                }
            }
        } else {
            cx.unknown(key, symbol::SPEC_TOP, "top-level key");
        }
    }
    let spans = SpanTable {
        map: map.clone(),
        sites: cx.sites,
    };
    let mut errors = cx.errors;
    for record in &schema.records {
        errors.extend(check::check(record).iter().map(|d| spans.render(d)));
    }
    if errors.is_empty() {
        Ok(Lowered { schema, spans })
    } else {
        Err(Diagnostics::new(errors))
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{
        DType, Dialect, FeatureKind, Literal, Partition, Presence, RecordKind, Schema,
    };

    fn errors(src: &str) -> String {
        Schema::from_toml_str(src, "t.toml")
            .expect_err("spec has errors")
            .to_string()
    }

    /// A spec file is read up to its bound: a longer one (a wrong path, `/dev/zero`) is an
    /// error, not memory without bound.
    #[test]
    fn a_spec_file_past_the_bound_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        let len = usize::try_from(super::MAX_SPEC_BYTES).unwrap();
        std::fs::write(&path, vec![b'#'; len]).unwrap();
        assert_eq!(super::read_spec_file(&path).unwrap().len(), len);
        std::fs::write(&path, vec![b'#'; len + 1]).unwrap();
        let e = super::read_spec_file(&path).unwrap_err().to_string();
        assert!(e.contains("longer than 16 MiB"), "{e}");
    }

    #[test]
    fn lowers_every_kind() {
        let src = r#"
[records.Clip]
kind = "sequence_example"
dialect = "tf"
doc = "A clip."
[records.Clip.context.id]
dtype = "int64"
[records.Clip.context."a/b"]
dtype = "float"
kind = "var"
optional = true
[records.Clip.sequence.frames]
dtype = "bytes"
allow_missing = true
[records.Clip.sequence.tokens]
dtype = "int64"
kind = "var"
[records.Clip.sequence.nested]
dtype = "int64"
kind = "ragged"
partitions = [{ row_lengths = "nested/len" }, { uniform_row_length = 2 }]

[records.Ex.features.idx]
dtype = "float"
kind = "sparse"
index_key = ["i", "j"]
value_key = "v"
size = [3, 4]
[records.Ex.features.label]
dtype = "int64"
shape = [2]
default = [1, 2]
"#;
        let schema = Schema::from_toml_str(src, "t.toml").unwrap();
        let clip = &schema.records[0];
        assert_eq!(clip.kind, RecordKind::SequenceExample);
        assert_eq!(clip.dialect, Dialect::Tf);
        assert_eq!(clip.doc, ["A clip."]);
        let members: Vec<&str> = clip.fields.iter().map(|f| f.member.as_str()).collect();
        assert_eq!(members, ["id", "a_b", "frames", "tokens", "nested"]);
        assert_eq!(clip.fields[1].presence, Presence::Optional);
        assert_eq!(
            clip.fields[2].kind,
            FeatureKind::FixedSequence {
                shape: vec![],
                allow_missing: true
            }
        );
        assert_eq!(
            clip.fields[3].kind,
            FeatureKind::Steps {
                step: Box::new(FeatureKind::Var { rank: None })
            }
        );
        assert_eq!(
            clip.fields[4].kind,
            FeatureKind::Steps {
                step: Box::new(FeatureKind::Ragged {
                    value_key: "nested".into(),
                    partitions: vec![
                        Partition::RowLengths("nested/len".into()),
                        Partition::UniformRowLength(2)
                    ],
                    row_splits_dtype: DType::Int32,
                })
            }
        );
        let ex = &schema.records[1];
        assert_eq!(ex.fields[0].key, "v");
        assert_eq!(ex.fields[0].member, "idx");
        assert_eq!(
            ex.fields[1].presence,
            Presence::Default(Literal::List(vec![Literal::Int(1), Literal::Int(2)]))
        );
    }

    #[test]
    fn reports_every_error_with_a_caret() {
        let out = errors(
            r#"[records.Mnist]
dialekt = "tf"
[records.Mnist.features.label]
dtype = "int46"
[records.Mnist.features.x]
dtype = "int32"
default = 3000000000
"#,
        );
        assert!(out.contains("error: unknown record key `dialekt`"), "{out}");
        assert!(out.contains("= help: did you mean `dialect`?"), "{out}");
        assert!(out.contains("--> t.toml:4:9"), "{out}");
        assert!(out.contains("^^^^^^^"), "{out}");
        assert!(out.contains("does not fit in `int32`"), "{out}");
    }

    #[test]
    fn a_float_default_is_refused_only_beyond_the_float_range() {
        let spec = |default: &str| {
            format!("[records.R.features.x]\ndtype = \"float\"\ndefault = {default}\n")
        };
        // The largest float, as it prints (TensorFlow 2.21 takes it as f32::MAX).
        assert!(Schema::from_toml_str(&spec("3.4028235e38"), "t.toml").is_ok());
        assert!(Schema::from_toml_str(&spec("-3.4028235e38"), "t.toml").is_ok());
        let out = errors(&spec("3.4028236e38"));
        assert!(out.contains("out of range for `float`"), "{out}");
    }

    #[test]
    fn member_collisions_name_both_features() {
        let out = errors(
            r#"[records.R.features."image/encoded"]
dtype = "bytes"
[records.R.features.image_encoded]
dtype = "bytes"
"#,
        );
        assert!(
            out.contains("both become the Rust field `image_encoded`"),
            "{out}"
        );
        assert!(out.contains("--> t.toml:3:21"), "{out}");
        assert!(out.contains("--> t.toml:1:21"), "{out}");
    }

    #[test]
    fn rows_unknown_dims_and_ranks() {
        let src = r#"
[records.Ex.features.boxes]
dtype = "float"
kind = "sequence"
shape = [4]
default = -1.0
[records.Ex.features.points]
dtype = "float"
shape = [-1, 3]
[records.Ex.features.nested]
dtype = "int64"
shape = [-1, -1]
default = 0
[records.Ex.features.ones]
dtype = "int64"
shape = [3]
default = 1
[records.Ex.features.tags]
dtype = "string"
kind = "var"
rank = 1
"#;
        let schema = Schema::from_toml_str(src, "t.toml").unwrap();
        let kind = |name: &str| {
            let r = &schema.records[0];
            r.fields.iter().find(|f| f.name == name).unwrap().clone()
        };
        // In an example, a `sequence` feature and a fixed shape with an unknown first
        // dimension are one feature: rows that may be missing.
        assert_eq!(
            kind("boxes").kind,
            FeatureKind::FixedSequence {
                shape: vec![Some(4)],
                allow_missing: true
            }
        );
        assert_eq!(
            kind("boxes").presence,
            Presence::Default(Literal::Float(-1.0))
        );
        assert_eq!(
            kind("points").kind,
            FeatureKind::FixedSequence {
                shape: vec![Some(3)],
                allow_missing: true
            }
        );
        assert_eq!(
            kind("nested").kind,
            FeatureKind::FixedSequence {
                shape: vec![None],
                allow_missing: true
            }
        );
        assert_eq!(kind("ones").kind, FeatureKind::Fixed { shape: vec![3] });
        assert_eq!(kind("ones").presence, Presence::Default(Literal::Int(1)));
        assert_eq!(kind("tags").kind, FeatureKind::Var { rank: Some(1) });
        assert!(!kind("boxes").kind.is_feature_list(RecordKind::Example));

        // The spec written back reads as the same schema.
        let again = Schema::from_toml_str(&schema.to_toml(), "again.toml").unwrap();
        assert_eq!(again, schema);
    }

    #[test]
    fn unknown_dims_and_rows_are_refused_where_they_cannot_be_read() {
        let out = errors(
            r#"[records.S]
kind = "sequence_example"
[records.S.context.c]
dtype = "int64"
shape = [-1]
[records.S.sequence.s]
dtype = "int64"
shape = [-1]
[records.E.features.a]
dtype = "int64"
kind = "sequence"
allow_missing = false
[records.E.features.b]
dtype = "int64"
shape = [2, -1]
[records.E.features.v]
dtype = "int64"
kind = "var"
rank = 0
"#,
        );
        for expected in [
            "a context feature's shape must be known",
            "a step's shape must be known",
            "a `sequence` feature of an example must allow missing values",
            "only the first dimensions of a shape can be unknown",
            "a `var` feature's `rank` is at least 1",
        ] {
            assert!(out.contains(expected), "missing {expected:?} in {out}");
        }
    }
}
