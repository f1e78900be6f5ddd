//! IR -> spec text: the inverse of the [TOML front end](crate::toml), for tools that make
//! specs (`tfrecord infer`).
//!
//! The output is deterministic (records and features in IR order, settings in the order of the
//! key reference table) and reads back with
//! [`Schema::from_toml_str`](crate::ir::Schema::from_toml_str) to the same IR, for every record
//! a spec can express. Settings equal to their defaults are left out: `kind = "fixed"` in
//! `features` and `context`, `kind = "sequence"` in `sequence`, `shape = []`, `field` when it is
//! the name derived from the key, `value_key` when it is the feature's own key.

use std::fmt::Write as _;

use crate::ir::{
    DType, Dialect, FeatureKind, Field, Literal, Partition, Presence, Record, RecordKind, Schema,
};
use crate::symbol;

impl Schema {
    /// The spec text of the schema, as a `[records.NAME]` table per record.
    ///
    /// What a spec cannot express is left out: `skip` and `flatten` fields (derive-only), and
    /// `required` on a variable-length list (a spec's `var` feature is empty when absent); the
    /// layout of a derive's feature list of fixed steps is written as a `sequence` feature.
    ///
    /// # Examples
    /// ```
    /// use tfrecord_schema::ir::Schema;
    ///
    /// let src = "[records.Mnist]\n\n[records.Mnist.features.label]\ndtype = \"int64\"\ndefault = 0\n";
    /// let schema = Schema::from_toml_str(src, "mnist.toml")?;
    /// assert_eq!(schema.to_toml(), src);
    /// assert_eq!(Schema::from_toml_str(&schema.to_toml(), "again.toml")?, schema);
    /// # Ok::<(), tfrecord_schema::Diagnostics>(())
    /// ```
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        for (i, record) in self.records.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            write_record(&mut out, record);
        }
        out
    }
}

/// A TOML key: bare when it can be, else a quoted basic string.
pub(crate) fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        string(k)
    }
}

/// A TOML basic string, with `"`, `\` and control characters escaped.
/// One quoted key alone, or several as a list `["a", "b"]` (index keys in both the spec
/// text and the derive attributes), each quoted by `quote`.
pub(crate) fn one_or_list(keys: &[String], quote: fn(&str) -> String) -> String {
    match keys {
        [one] => quote(one),
        many => {
            let items: Vec<String> = many.iter().map(|k| quote(k)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

pub(crate) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML float: always with a `.` or an exponent, `nan` and `inf` spelled TOML's way.
fn float(x: f64) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        let s = format!("{x:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

fn literal(lit: &Literal) -> String {
    match lit {
        Literal::Int(v) => v.to_string(),
        Literal::Float(v) => float(*v),
        Literal::Str(s) => string(s),
        Literal::Bool(b) => b.to_string(),
        Literal::List(items) => format!(
            "[{}]",
            items.iter().map(literal).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn dims(shape: &[u64]) -> String {
    format!(
        "[{}]",
        shape
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn doc(lines: &[String]) -> String {
    string(&lines.join("\n"))
}

fn write_record(out: &mut String, r: &Record) {
    let name = key(&r.name);
    let _ = writeln!(out, "[records.{name}]");
    if r.kind == RecordKind::SequenceExample {
        out.push_str("kind = \"sequence_example\"\n");
    }
    match r.dialect {
        Dialect::Tf => out.push_str("dialect = \"tf\"\n"),
        Dialect::Of => out.push_str("dialect = \"ofrecord\"\n"),
        _ => {}
    }
    if r.deny_unknown_keys {
        out.push_str("deny_unknown_keys = true\n");
    }
    if !r.doc.is_empty() {
        let _ = writeln!(out, "doc = {}", doc(&r.doc));
    }
    for f in r.fields.iter().filter(|f| !f.skip && !f.flatten) {
        let table = match (r.kind, f.kind.is_feature_list(r.kind)) {
            (RecordKind::SequenceExample, true) => "sequence",
            (RecordKind::SequenceExample, false) => "context",
            _ => "features",
        };
        out.push('\n');
        let _ = writeln!(out, "[records.{name}.{table}.{}]", key(&f.name));
        write_feature(out, f, table == "sequence");
    }
}

fn write_feature(out: &mut String, f: &Field, in_sequence: bool) {
    let mut set = |k: &str, v: String| {
        let _ = writeln!(out, "{k} = {v}");
    };
    if let Some(d) = f.dtype {
        set("dtype", string(d.name()));
    }
    let kind = match &f.kind {
        FeatureKind::Steps { step } => step,
        k => k,
    };
    let kind_name = match (kind, in_sequence) {
        (FeatureKind::Fixed { .. } | FeatureKind::FixedSequence { .. }, true) => None,
        (FeatureKind::Fixed { .. }, false) => None,
        (k, _) => Some(k.name()),
    };
    if let Some(k) = kind_name {
        set("kind", string(k));
    }
    match kind {
        FeatureKind::Fixed { shape } if !shape.is_empty() => set("shape", dims(shape)),
        FeatureKind::FixedSequence { shape, .. } if !shape.is_empty() => {
            set("shape", crate::ir::shape_text(shape));
        }
        FeatureKind::Var { rank: Some(rank) } => set("rank", rank.to_string()),
        _ => {}
    }
    match &f.presence {
        Presence::Default(lit) => set("default", literal(lit)),
        Presence::Optional => set("optional", "true".to_string()),
        Presence::Required | Presence::TypeDefault => {}
    }
    if symbol::field_name(&f.name).as_deref() != Some(f.member.as_str()) {
        set("field", string(&f.member));
    }
    if !f.doc.is_empty() {
        set("doc", doc(&f.doc));
    }
    if f.lossy {
        set("lossy", "true".to_string());
    }
    if let Some(source) = &f.source {
        set("source", string(source));
    }
    match kind {
        FeatureKind::Sparse {
            index_keys,
            size,
            already_sorted,
        } => {
            let index = one_or_list(index_keys, string);
            set("index_key", index);
            if f.key != f.name {
                set("value_key", string(&f.key));
            }
            if !size.is_empty() {
                set("size", dims(size));
            }
            if *already_sorted {
                set("already_sorted", "true".to_string());
            }
        }
        FeatureKind::FixedSequence {
            allow_missing: true,
            ..
        } => set("allow_missing", "true".to_string()),
        FeatureKind::Ragged {
            value_key,
            partitions,
            row_splits_dtype,
        } => {
            if *value_key != f.name {
                set("value_key", string(value_key));
            }
            if !partitions.is_empty() {
                let parts: Vec<String> = partitions
                    .iter()
                    .map(|p| {
                        let v = match p {
                            Partition::UniformRowLength(n) => n.to_string(),
                            other => string(other.key().unwrap_or_default()),
                        };
                        format!("{{ {} = {v} }}", p.name())
                    })
                    .collect();
                set("partitions", format!("[{}]", parts.join(", ")));
            }
            if *row_splits_dtype != DType::Int32 {
                set("row_splits_dtype", string(row_splits_dtype.name()));
            }
        }
        _ => {}
    }
}

#[cfg(all(test, feature = "toml"))]
mod tests {
    use crate::ir::Schema;

    #[test]
    fn every_setting_reads_back() {
        let src = r#"
[records.Clip]
kind = "sequence_example"
dialect = "tf"
doc = "A clip.\nTwo lines."
[records.Clip.context.id]
dtype = "int64"
[records.Clip.context."a/b"]
dtype = "float"
kind = "var"
optional = true
[records.Clip.context.nums]
dtype = "double"
lossy = true
shape = [2]
default = [1.5, -inf]
[records.Clip.sequence.frames]
dtype = "bytes"
allow_missing = true
default = "x\"y"
[records.Clip.sequence.tokens]
dtype = "int64"
kind = "var"
[records.Clip.sequence.nested]
dtype = "int64"
kind = "ragged"
partitions = [{ row_lengths = "nested/len" }, { uniform_row_length = 2 }]
row_splits_dtype = "int64"

[records.Ex]
deny_unknown_keys = true
[records.Ex.features.idx]
dtype = "float"
kind = "sparse"
index_key = ["i", "j"]
value_key = "v"
size = [3, 4]
already_sorted = true
[records.Ex.features.label]
dtype = "int64"
shape = [2]
default = [1, 2]
field = "the_label"
doc = "Labels."
[records.Ex.features."\u0001 odd key"]
dtype = "string"
field = "odd"
[records.Ex.features.r]
dtype = "float"
kind = "ragged"
value_key = "vals"
partitions = [{ row_splits = "s" }, { value_rowids = "ids" }, { row_starts = "st" }, { row_limits = "li" }]
"#;
        let schema = Schema::from_toml_str(src, "t.toml").unwrap();
        let text = schema.to_toml();
        let again =
            Schema::from_toml_str(&text, "again.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again, schema, "{text}");
        assert_eq!(again.to_toml(), text);
        assert!(
            text.contains("[records.Ex.features.\"\\u0001 odd key\"]"),
            "{text}"
        );
        assert!(text.contains("default = [1.5, -inf]"), "{text}");
    }
}
