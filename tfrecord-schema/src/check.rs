//! The rules every record must satisfy, whichever front end wrote it. Each rule is one
//! function; all of them run, and every violation is reported.
//!
//! Messages name things in the vocabulary both front ends share (`lossy`, `sequence`,
//! `default`, the dialect names), so a derive and a spec with the same mistake get the same
//! text; only the rendering of the location differs.

use std::collections::HashMap;

use crate::ir::{
    DType, Dialect, FeatureKind, Field, Literal, Origin, Presence, Record, RecordKind,
};

/// Which part of a field a diagnostic points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Part {
    /// The field (its name).
    Field,
    /// The field's type.
    Type,
    /// The feature key.
    Key,
    /// The default value.
    Default,
    /// The shape.
    Shape,
    /// The record itself.
    Record,
    /// The kind of the feature (`fixed`, `var`, `sparse`, `sequence`, `ragged`).
    Kind,
    /// The value of the named setting (`lossy`, `size`, `index_key`, `value_key`,
    /// `partitions`, `row_splits_dtype`, `dialect`, ...); front ends without a place for it
    /// point at the field.
    Setting(&'static str),
}

/// One problem found in a record.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Where.
    pub origin: Origin,
    /// Which part of it.
    pub part: Part,
    /// What is wrong, lower-case, no trailing period.
    pub message: String,
    /// Related places, e.g. the first definition of a duplicate.
    pub notes: Vec<(Origin, Part, String)>,
}

impl Diagnostic {
    /// A diagnostic without notes.
    pub fn new(origin: Origin, part: Part, message: impl Into<String>) -> Self {
        Diagnostic {
            origin,
            part,
            message: message.into(),
            notes: Vec::new(),
        }
    }
}

/// Runs every rule on `record`.
pub fn check(record: &Record) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check_duplicate_keys(record, &mut out);
    check_duplicate_members(record, &mut out);
    for f in record.fields.iter().filter(|f| !f.skip) {
        check_double_in_tf(record, f, &mut out);
        check_feature_lists(record, f, &mut out);
        check_shape(f, &mut out);
        check_default(f, &mut out);
        check_flatten(record, f, &mut out);
        check_sparse(record, f, &mut out);
        check_ragged(f, &mut out);
    }
    out
}

/// The part of `f` that names `key`, one of the keys it reads.
fn key_part(f: &Field, key: &str) -> Part {
    let kind = match &f.kind {
        FeatureKind::Steps { step } => step,
        k => k,
    };
    match kind {
        FeatureKind::Sparse { index_keys, .. } if index_keys.iter().any(|k| k == key) => {
            Part::Setting("index_key")
        }
        FeatureKind::Ragged { value_key, .. } if value_key == key => Part::Setting("value_key"),
        FeatureKind::Ragged { .. } => Part::Setting("partitions"),
        _ => Part::Key,
    }
}

/// Two features with one key would overwrite each other in the feature map. Context features
/// and feature lists live in different maps, so they are checked separately.
fn check_duplicate_keys(record: &Record, out: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<(bool, &str), &Field> = HashMap::new();
    for f in record.fields.iter().filter(|f| !f.skip && !f.flatten) {
        let is_list = f.kind.is_feature_list(record.kind);
        let mut own: Vec<&str> = Vec::new();
        for key in f.kind.keys(&f.key) {
            // A ragged feature may read one key twice (a partition of its own values is
            // meaningless, but two partitions on one key are TensorFlow's business).
            if own.contains(&key) {
                continue;
            }
            own.push(key);
            if let Some(first) = seen.get(&(is_list, key)) {
                let mut d = Diagnostic::new(
                    f.origin,
                    key_part(f, key),
                    format!("duplicate feature key `{key}`"),
                );
                d.notes.push((
                    first.origin,
                    key_part(first, key),
                    format!("`{key}` is first used by field `{}`", first.member),
                ));
                out.push(d);
            } else {
                seen.insert((is_list, key), f);
            }
        }
    }
}

/// Two features cannot become one Rust field. A derive cannot write this (rustc rejects the
/// struct), but a spec derives field names from keys: `image/encoded` and `image_encoded`
/// both become `image_encoded`.
fn check_duplicate_members(record: &Record, out: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, &Field> = HashMap::new();
    for f in &record.fields {
        if let Some(first) = seen.get(f.member.as_str()) {
            let mut d = Diagnostic::new(
                f.origin,
                Part::Field,
                format!(
                    "features `{}` and `{}` both become the Rust field `{}`",
                    first.key, f.key, f.member
                ),
            );
            d.notes.push((
                first.origin,
                Part::Field,
                format!("`{}` is first used by feature `{}`", f.member, first.key),
            ));
            out.push(d);
        } else {
            seen.insert(&f.member, f);
        }
    }
}

/// `tf.train.Example` has no double list: storing an `f64` there loses precision, so it needs an
/// explicit opt-in.
fn check_double_in_tf(record: &Record, f: &Field, out: &mut Vec<Diagnostic>) {
    if f.dtype == Some(DType::Double) && record.dialect.has_tf() && !f.lossy {
        out.push(Diagnostic::new(
            f.origin,
            Part::Type,
            "`f64` (`double`) cannot be stored in tf.train.Example without loss: mark the field \
             `lossy` to store it as a float, or use the `ofrecord` dialect for OFRecord's \
             double_list",
        ));
    }
    if f.lossy && f.dtype.is_some() && f.dtype != Some(DType::Double) {
        out.push(Diagnostic::new(
            f.origin,
            Part::Setting("lossy"),
            "`lossy` applies only to `f64` (`double`) fields",
        ));
    }
}

/// Feature lists exist only in `tf.train.SequenceExample`.
fn check_feature_lists(record: &Record, f: &Field, out: &mut Vec<Diagnostic>) {
    if let FeatureKind::FixedSequence {
        shape,
        allow_missing,
    } = &f.kind
    {
        if record.kind == RecordKind::Example && !allow_missing {
            out.push(Diagnostic::new(
                f.origin,
                Part::Setting("allow_missing"),
                "a `sequence` feature of an example must allow missing values, as \
                 tf.io.parse_example requires: a record without it has zero rows",
            ));
        }
        if record.kind == RecordKind::SequenceExample && shape.contains(&None) {
            out.push(Diagnostic::new(
                f.origin,
                Part::Shape,
                "a step's shape must be known: each step of a feature list is one flat list",
            ));
        }
    }
    if !f.kind.is_feature_list(record.kind) {
        return;
    }
    if record.kind != RecordKind::SequenceExample {
        out.push(Diagnostic::new(
            f.origin,
            Part::Kind,
            "feature lists (`sequence` fields) exist only in a SequenceExample \
             (`#[derive(SequenceExample)]`, or `kind = \"sequence_example\"` in a spec)",
        ));
    } else if record.dialect == Dialect::Of {
        out.push(Diagnostic::new(
            f.origin,
            Part::Kind,
            "OFRecord has no feature lists (sequences)",
        ));
    }
    if let FeatureKind::FixedSequence { .. } = f.kind
        && f.presence == Presence::Optional
    {
        out.push(Diagnostic::new(
            f.origin,
            Part::Field,
            "a `sequence` feature cannot be optional: use `allow_missing` to read an absent \
             feature list as zero steps",
        ));
    }
}

/// The most values a fixed shape may hold: a record is at most 1 GiB (the readers' default
/// length limit) and a value takes at least a byte, so no record holds more, and a default
/// of more would only exhaust memory.
const MAX_SHAPE_VALUES: u64 = 1 << 30;

/// The most dimensions a fixed shape may have (each is a level of nested lists in Arrow).
const MAX_SHAPE_RANK: usize = 32;

/// A fixed shape's value count must be a number a record can hold (the decoder checks counts
/// against it), of at most [`MAX_SHAPE_RANK`] dimensions.
fn check_shape(f: &Field, out: &mut Vec<Diagnostic>) {
    let shape: Vec<u64> = match &f.kind {
        FeatureKind::Fixed { shape } => shape.clone(),
        FeatureKind::FixedSequence { shape, .. } => shape.iter().flatten().copied().collect(),
        FeatureKind::Steps { step } => match &**step {
            FeatureKind::Fixed { shape } => shape.clone(),
            _ => return,
        },
        _ => return,
    };
    if shape.len() > MAX_SHAPE_RANK {
        out.push(Diagnostic::new(
            f.origin,
            Part::Shape,
            format!(
                "a shape of {} dimensions: at most {MAX_SHAPE_RANK} are supported",
                shape.len()
            ),
        ));
        return;
    }
    match shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)) {
        None => out.push(Diagnostic::new(
            f.origin,
            Part::Shape,
            "the shape's value count overflows a 64-bit integer",
        )),
        Some(n) if n > MAX_SHAPE_VALUES => out.push(Diagnostic::new(
            f.origin,
            Part::Shape,
            format!(
                "the shape holds {n} values: more than a record can hold (at most \
                 {MAX_SHAPE_VALUES}, 2^30)"
            ),
        )),
        // An absent optional feature is a null row of the shape's zeros in Arrow (a
        // fixed-size list holds a slot for every value), as a default fills it.
        Some(n)
            if f.presence == Presence::Optional
                && matches!(f.kind, FeatureKind::Fixed { .. })
                && n.saturating_mul(8) > MAX_DEFAULT_BYTES =>
        {
            out.push(Diagnostic::new(
                f.origin,
                Part::Shape,
                format!(
                    "an optional feature of {n} values: each record lacking it is a null row \
                     of that many zeros in Arrow, more than the {} MiB a default may take; \
                     make it required, or its shape smaller",
                    MAX_DEFAULT_BYTES >> 20
                ),
            ));
        }
        Some(_) => {}
    }
}

/// The most memory one value filling a fixed shape may make a default take: a record lacking
/// the feature holds the whole default, so that a default of more would turn small records
/// into more memory than a record of the readers' length limit (1 GiB) takes.
const MAX_DEFAULT_BYTES: u64 = 1 << 30;

/// The memory one value of a default takes once filled out: 8 bytes for a number, and a
/// string's bytes beside the 8 of its place.
fn fill_bytes(lit: &Literal) -> u64 {
    match lit {
        Literal::Str(s) => 8 + s.len() as u64,
        _ => 8,
    }
}

/// A default must have the feature's type and, for a fixed shape, its value count.
fn check_default(f: &Field, out: &mut Vec<Diagnostic>) {
    let Presence::Default(lit) = &f.presence else {
        return;
    };
    if let Some(dtype) = f.dtype
        && !dtype.accepts(lit)
    {
        out.push(Diagnostic::new(
            f.origin,
            Part::Default,
            format!(
                "default of the wrong type: the feature is `{}`, the default is {}",
                dtype.name(),
                lit.kind_name()
            ),
        ));
        return;
    }
    let is_list = matches!(lit, Literal::List(_));
    match &f.kind {
        FeatureKind::FixedSequence { .. } if is_list => out.push(Diagnostic::new(
            f.origin,
            Part::Default,
            "the default of a `sequence` feature is one value, used to pad steps",
        )),
        FeatureKind::Fixed { shape } if shape.is_empty() && is_list => {
            out.push(Diagnostic::new(
                f.origin,
                Part::Default,
                "a scalar feature takes a scalar default, not a list",
            ));
        }
        FeatureKind::Fixed { .. } if is_list && lit.shape().is_none() => {
            // TensorFlow: "Can't convert non-rectangular Python sequence to Tensor".
            out.push(Diagnostic::new(
                f.origin,
                Part::Default,
                "the default's nested lists are not rectangular (rows of different lengths or \
                 depths): write it flat, row-major, or as nested lists of one shape",
            ));
        }
        FeatureKind::Fixed { .. } => {
            if let Some(n) = f.kind.fixed_count() {
                // One value fills the whole shape (`default = 0` with `shape = [3]` is
                // `[0, 0, 0]`); a list must fill it exactly.
                let found = lit.count() as u64;
                if is_list && found != n {
                    out.push(Diagnostic::new(
                        f.origin,
                        Part::Default,
                        format!("default has {found} values, but the feature's shape holds {n}"),
                    ));
                } else if !is_list
                    && n <= MAX_SHAPE_VALUES
                    && n.saturating_mul(fill_bytes(lit)) > MAX_DEFAULT_BYTES
                {
                    out.push(Diagnostic::new(
                        f.origin,
                        Part::Default,
                        format!(
                            "one value filling the feature's shape makes a default of {n} \
                             values, more than the {} MiB a default may take (each record \
                             lacking the feature holds it all): give the feature no default, \
                             or a smaller shape",
                            MAX_DEFAULT_BYTES >> 20
                        ),
                    ));
                }
            }
        }
        _ => {}
    }
}

/// A sparse field has one index feature per dimension of its size.
fn check_sparse(record: &Record, f: &Field, out: &mut Vec<Diagnostic>) {
    let FeatureKind::Sparse {
        index_keys, size, ..
    } = &f.kind
    else {
        return;
    };
    if index_keys.is_empty() {
        out.push(Diagnostic::new(
            f.origin,
            Part::Setting("index_key"),
            "a sparse field needs at least one index key",
        ));
    }
    // Each list is written to a feature of its own: two lists under one key would be one map
    // entry, and one of them lost.
    for (i, key) in index_keys.iter().enumerate() {
        if *key == f.key {
            out.push(Diagnostic::new(
                f.origin,
                Part::Setting("index_key"),
                format!(
                    "the index key `{key}` is also the sparse feature's value key: the indices \
                     and the values would be written to one feature, and one of them lost"
                ),
            ));
        } else if index_keys[..i].contains(key) {
            out.push(Diagnostic::new(
                f.origin,
                Part::Setting("index_key"),
                format!(
                    "the index key `{key}` is named twice: each dimension's indices are written \
                     to a feature of their own"
                ),
            ));
        }
    }
    if !size.is_empty() && size.len() != index_keys.len() {
        out.push(Diagnostic::new(
            f.origin,
            Part::Setting("size"),
            format!(
                "`size` has {} dimensions but there are {} index keys",
                size.len(),
                index_keys.len()
            ),
        ));
    }
    if record.kind == RecordKind::SequenceExample {
        out.push(Diagnostic::new(
            f.origin,
            Part::Kind,
            "sparse fields are not supported in a SequenceExample",
        ));
    }
}

/// A ragged feature reads its values and one int64 feature per keyed partition; absent, it is
/// empty (TensorFlow has no default for it), and its row splits are int32 or int64.
fn check_ragged(f: &Field, out: &mut Vec<Diagnostic>) {
    let kind = match &f.kind {
        FeatureKind::Steps { step } => &**step,
        k => k,
    };
    let FeatureKind::Ragged {
        value_key,
        partitions,
        row_splits_dtype,
    } = kind
    else {
        return;
    };
    if value_key.is_empty() {
        out.push(Diagnostic::new(
            f.origin,
            Part::Setting("value_key"),
            "a feature key cannot be empty",
        ));
    }
    for p in partitions {
        if p.key().is_some_and(str::is_empty) {
            out.push(Diagnostic::new(
                f.origin,
                Part::Setting("partitions"),
                format!("the `{}` partition needs a feature key", p.name()),
            ));
        }
        if p.key() == Some(value_key.as_str()) {
            out.push(Diagnostic::new(
                f.origin,
                Part::Setting("partitions"),
                format!(
                    "the `{}` partition reads the value feature `{value_key}`: partitions read \
                     their own int64 features",
                    p.name()
                ),
            ));
        }
    }
    if !matches!(row_splits_dtype, DType::Int32 | DType::Int64) {
        out.push(Diagnostic::new(
            f.origin,
            Part::Setting("row_splits_dtype"),
            format!(
                "`row_splits_dtype` must be `int32` or `int64`, not `{}`",
                row_splits_dtype.name()
            ),
        ));
    }
    match &f.presence {
        Presence::Default(_) => out.push(Diagnostic::new(
            f.origin,
            Part::Default,
            "a ragged feature is empty when absent: it takes no `default`",
        )),
        Presence::Optional => out.push(Diagnostic::new(
            f.origin,
            Part::Field,
            "a ragged feature is empty when absent: it cannot be optional",
        )),
        _ => {}
    }
}

/// Flattened members inline their own features; sequences cannot hold them.
fn check_flatten(record: &Record, f: &Field, out: &mut Vec<Diagnostic>) {
    if f.flatten && record.kind == RecordKind::SequenceExample {
        out.push(Diagnostic::new(
            f.origin,
            Part::Field,
            "`flatten` is not supported in a SequenceExample",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Literal;

    fn field(member: &str, key: &str, dtype: DType) -> Field {
        Field {
            name: member.into(),
            member: member.into(),
            key: key.into(),
            source: None,
            dtype: Some(dtype),
            kind: FeatureKind::Fixed { shape: vec![] },
            presence: Presence::Required,
            skip: false,
            flatten: false,
            lossy: false,
            doc: vec![],
            origin: Origin(0),
        }
    }

    fn record(fields: Vec<Field>) -> Record {
        Record {
            name: "R".into(),
            kind: RecordKind::Example,
            dialect: Dialect::Both,
            deny_unknown_keys: false,
            fields,
            doc: vec![],
            origin: Origin(0),
        }
    }

    #[test]
    fn every_rule_reports() {
        let mut a = field("a", "k", DType::Int64);
        a.presence = Presence::Default(Literal::Str("x".into()));
        let b = field("b", "k", DType::Double);
        let mut c = field("c", "c", DType::Float);
        c.kind = FeatureKind::Fixed { shape: vec![2, 3] };
        c.presence = Presence::Default(Literal::List(vec![Literal::Float(1.0); 4]));
        let diags = check(&record(vec![a, b, c]));
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(diags.len(), 4, "{messages:?}");
        assert!(messages[0].contains("duplicate feature key `k`"));
        assert!(
            messages
                .iter()
                .any(|m| m.contains("default of the wrong type"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("cannot be stored in tf.train.Example"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("default has 4 values, but the feature's shape holds 6"))
        );
    }

    #[test]
    fn a_sparse_feature_writes_each_list_to_its_own_key() {
        let sparse = |index: &[&str]| {
            let mut f = field("s", "v", DType::Int64);
            f.kind = FeatureKind::Sparse {
                index_keys: index.iter().map(|k| (*k).to_string()).collect(),
                size: vec![],
                already_sorted: false,
            };
            f.presence = Presence::Optional;
            f
        };
        let messages = |f: Field| -> Vec<String> {
            check(&record(vec![f]))
                .into_iter()
                .map(|d| d.message)
                .collect()
        };
        assert!(messages(sparse(&["i", "j"])).is_empty());
        let m = messages(sparse(&["v"]));
        assert!(
            m.len() == 1
                && m[0].contains("the index key `v` is also the sparse feature's value key"),
            "{m:?}"
        );
        let m = messages(sparse(&["r", "r"]));
        assert!(
            m.len() == 1 && m[0].contains("the index key `r` is named twice"),
            "{m:?}"
        );
    }

    #[test]
    fn feature_lists_ragged_and_members() {
        let mut seq = field("frames", "frames", DType::Float);
        seq.kind = FeatureKind::FixedSequence {
            shape: vec![Some(2)],
            allow_missing: false,
        };
        seq.presence = Presence::Default(Literal::List(vec![Literal::Float(0.0); 2]));
        let mut rag = field("words", "words", DType::String);
        rag.kind = FeatureKind::Ragged {
            value_key: "words".into(),
            partitions: vec![
                crate::ir::Partition::RowLengths(String::new()),
                crate::ir::Partition::RowSplits("words".into()),
            ],
            row_splits_dtype: DType::Float,
        };
        rag.presence = Presence::Optional;
        let twin = field("words", "other", DType::Int64);
        let diags = check(&record(vec![seq, rag, twin]));
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        for expected in [
            "both become the Rust field `words`",
            "a `sequence` feature of an example must allow missing values",
            "the default of a `sequence` feature is one value",
            "the `row_lengths` partition needs a feature key",
            "the `row_splits` partition reads the value feature `words`",
            "`row_splits_dtype` must be `int32` or `int64`, not `float`",
            "a ragged feature is empty when absent: it cannot be optional",
        ] {
            assert!(
                messages.iter().any(|m| m.contains(expected)),
                "missing {expected:?} in {messages:?}"
            );
        }
        assert_eq!(diags.len(), 7, "{messages:?}");
    }
}
