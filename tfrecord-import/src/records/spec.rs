//! The spec: dtypes and shapes forced on some fields, from a record of a TOML spec file.

use std::collections::BTreeMap;

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
        if record.kind != RecordKind::Example {
            return Err(Error::new(format!(
                "record `{}` is a sequence example; from-records writes examples",
                record.name
            )));
        }
        let mut rules = BTreeMap::new();
        for f in record.fields.iter().filter(|f| !f.skip) {
            let count = match &f.kind {
                FeatureKind::Fixed { .. } => f.kind.fixed_count(),
                FeatureKind::Var => None,
                k => {
                    return Err(Error::new(format!(
                        "a `{}` feature cannot be filled from JSON or CSV fields (use fixed or var)",
                        k.name()
                    ))
                    .with_feature(f.name.clone()));
                }
            };
            let Some(dtype) = f.dtype else {
                return Err(Error::new("the feature has no dtype").with_feature(f.name.clone()));
            };
            let source = f.source.clone().unwrap_or_else(|| f.key.clone());
            rules.insert(
                source,
                Rule {
                    key: f.key.clone(),
                    dtype,
                    count,
                    presence: match (&f.kind, &f.presence) {
                        (FeatureKind::Var, Presence::Required | Presence::TypeDefault) => {
                            Presence::Optional
                        }
                        (_, p) => p.clone(),
                    },
                },
            );
        }
        Ok(RecordSpec {
            rules,
            deny_unknown: record.deny_unknown_keys,
        })
    }
}
