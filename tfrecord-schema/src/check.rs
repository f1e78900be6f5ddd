//! The rules every record must satisfy, whichever front end wrote it. Each rule is one
//! function; all of them run, and every violation is reported.

use std::collections::HashMap;

use crate::ir::{DType, Dialect, FeatureKind, Field, Origin, Presence, Record, RecordKind};

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
    fn new(origin: Origin, part: Part, message: impl Into<String>) -> Self {
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
    for f in record.fields.iter().filter(|f| !f.skip) {
        check_double_in_tf(record, f, &mut out);
        check_steps(record, f, &mut out);
        check_default(f, &mut out);
        check_flatten(record, f, &mut out);
        check_sparse(record, f, &mut out);
    }
    out
}

/// Two features with one key would overwrite each other in the feature map. Context features
/// and feature lists live in different maps, so they are checked separately.
fn check_duplicate_keys(record: &Record, out: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<(bool, &str), &Field> = HashMap::new();
    for f in record.fields.iter().filter(|f| !f.skip && !f.flatten) {
        let is_steps = matches!(f.kind, FeatureKind::Steps { .. });
        for key in f.kind.keys(&f.key) {
            if let Some(first) = seen.get(&(is_steps, key)) {
                let mut d = Diagnostic::new(
                    f.origin,
                    Part::Key,
                    format!("duplicate feature key `{key}`"),
                );
                d.notes.push((
                    first.origin,
                    Part::Key,
                    format!("`{key}` is first used by field `{}`", first.member),
                ));
                out.push(d);
            } else {
                seen.insert((is_steps, key), f);
            }
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
            "`f64` cannot be stored in tf.train.Example without loss: add `#[example(lossy)]` to store it \
             as a float, or `#[example(dialect = \"ofrecord\")]` on the type to use OFRecord's double_list",
        ));
    }
    if f.lossy && f.dtype.is_some() && f.dtype != Some(DType::Double) {
        out.push(Diagnostic::new(
            f.origin,
            Part::Field,
            "`lossy` applies only to `f64` fields",
        ));
    }
}

/// Feature lists exist only in `tf.train.SequenceExample`.
fn check_steps(record: &Record, f: &Field, out: &mut Vec<Diagnostic>) {
    if !matches!(f.kind, FeatureKind::Steps { .. }) {
        return;
    }
    if record.kind != RecordKind::SequenceExample {
        out.push(Diagnostic::new(
            f.origin,
            Part::Field,
            "`sequence` fields (feature lists) need `#[derive(SequenceExample)]`",
        ));
    } else if record.dialect == Dialect::Of {
        out.push(Diagnostic::new(
            f.origin,
            Part::Field,
            "OFRecord has no feature lists (sequences)",
        ));
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
    if let Some(n) = f.kind.fixed_count() {
        let found = lit.count() as u64;
        // A scalar default for a scalar feature is always one value.
        let is_list = matches!(lit, crate::ir::Literal::List(_));
        if found != n && is_list {
            out.push(Diagnostic::new(
                f.origin,
                Part::Default,
                format!("default has {found} values, but the feature's shape holds {n}"),
            ));
        }
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
            Part::Field,
            "a sparse field needs at least one index key",
        ));
    }
    if !size.is_empty() && size.len() != index_keys.len() {
        out.push(Diagnostic::new(
            f.origin,
            Part::Field,
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
            Part::Field,
            "sparse fields are not supported in a SequenceExample",
        ));
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
            member: member.into(),
            key: key.into(),
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
}
