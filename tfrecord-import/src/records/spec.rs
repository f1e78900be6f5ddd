//! The spec: dtypes and shapes forced on some fields, from a record of a TOML spec file.

use std::collections::BTreeMap;

use tfrecord_core::parse::{self, Values};
use tfrecord_schema::ir::{self, DType, FeatureKind, Presence, RecordKind};

use crate::error::{Error, Result};

/// One forced feature of a [`RecordSpec`].
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Rule {
    pub(super) key: String,
    pub(super) dtype: DType,
    /// `Some(n)`: exactly n values.
    pub(super) count: Option<u64>,
    pub(super) presence: Presence,
    /// The values of an absent field, when the spec gives a `default`.
    pub(super) default: Option<Values>,
}

/// Dtypes and shapes forced on some fields, from a record of a TOML spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordSpec {
    /// Field path (the `source`, else the feature key) to rule.
    pub(super) rules: BTreeMap<String, Rule>,
    pub(super) deny_unknown: bool,
}

impl RecordSpec {
    /// The spec of a TOML spec record: its `fixed` and `var` features (`source` = the field
    /// path, `a/b` for nested objects; the key is the output feature key).
    ///
    /// # Errors
    /// A `sequence_example` record, or a `sparse`, `sequence` or `ragged` feature.
    pub fn from_record(record: &ir::Record) -> Result<Self> {
        RecordSpec::from_spec(&parse::RecordSpec::from_record(record)?)
    }

    /// The spec of a record's runtime form (`tfrecord_core::parse::RecordSpec`, the one form
    /// every consumer of a TOML spec reads), with the mapping of
    /// [`from_record`](RecordSpec::from_record).
    ///
    /// # Errors
    /// As [`from_record`](RecordSpec::from_record).
    pub fn from_spec(spec: &parse::RecordSpec) -> Result<Self> {
        if spec.kind != RecordKind::Example {
            return Err(Error::new(format!(
                "record `{}` is a sequence example; from-records writes examples",
                spec.name
            )));
        }
        let mut rules = BTreeMap::new();
        for f in &spec.features {
            let count = match &f.kind {
                FeatureKind::Fixed { .. } => f.kind.fixed_count(),
                FeatureKind::Var { .. } => None,
                k => {
                    return Err(Error::new(format!(
                        "a `{}` feature cannot be filled from JSON or CSV fields (use fixed or var)",
                        k.name()
                    ))
                    .with_feature(f.name.clone()));
                }
            };
            let source = f.source.clone().unwrap_or_else(|| f.key.clone());
            let presence = match (&f.kind, &f.presence) {
                (FeatureKind::Var { .. }, Presence::Required | Presence::TypeDefault) => {
                    Presence::Optional
                }
                (_, p) => p.clone(),
            };
            let default = match presence {
                Presence::Default(_) => f.default.clone(),
                _ => None,
            };
            rules.insert(
                source,
                Rule {
                    key: f.key.clone(),
                    dtype: f.dtype,
                    count,
                    presence,
                    default,
                },
            );
        }
        Ok(RecordSpec {
            rules,
            deny_unknown: spec.deny_unknown_keys,
        })
    }
}
