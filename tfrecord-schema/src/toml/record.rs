//! Lowering one record table: its name, kind, dialect and settings, then each of its feature
//! tables.

use super::feature::Table;
use super::values::{Key, Lower, Value, ordered};
use crate::ir::{Dialect, Record, RecordKind};
use crate::symbol;

impl Lower<'_> {
    /// One record table, lowered with its features: `None` when it is not a table.
    pub(super) fn record(&mut self, name: &Key<'_>, value: &Value<'_>) -> Option<Record> {
        let record_name = name.get_ref().to_string();
        let t = self.table(value, &format!("records.{record_name}"))?;
        let s = self.settings(t, symbol::SPEC_RECORD, "record key");
        let origin = self.site(name.span(), &s);
        if !symbol::is_type_name(&record_name) {
            let mut e = self.map.error(
                &name.span(),
                format!("record name `{record_name}` is not a Rust type name"),
            );
            let suggestion = symbol::type_name(&record_name);
            e = if symbol::is_type_name(&suggestion) {
                e.help(format!(
                    "record names are UpperCamelCase identifiers, such as `{suggestion}`"
                ))
            } else {
                e.help("record names are UpperCamelCase identifiers, such as `Mnist`")
            };
            self.push(e);
        }
        let kind = match s.get("kind") {
            Some(v) => match self.choice(v, "record kind", symbol::SPEC_RECORD_KINDS) {
                Some("sequence_example") => RecordKind::SequenceExample,
                _ => RecordKind::Example,
            },
            None => RecordKind::Example,
        };
        let dialect = match s.get("dialect") {
            None => Dialect::Both,
            Some(v) => {
                let text = self.string(v, "dialect");
                match text.as_deref().map(Dialect::parse) {
                    Some(Some(d)) => d,
                    Some(None) => {
                        let e = self
                            .map
                            .error(
                                &v.span(),
                                format!("unknown dialect `{}`", text.unwrap_or_default()),
                            )
                            .note("expected \"tf\", \"ofrecord\" or \"both\"");
                        self.push(e);
                        Dialect::Both
                    }
                    None => Dialect::Both,
                }
            }
        };
        let deny_unknown_keys = self.flag(&s, "deny_unknown_keys");
        let doc = self.doc(s.get("doc"));
        let tables: &[Table] = match kind {
            RecordKind::SequenceExample => &[Table::Context, Table::Sequence],
            _ => &[Table::Features],
        };
        for (k, key_span, _) in &s.entries {
            let misplaced = match (kind, *k) {
                (RecordKind::SequenceExample, "features") => Some(
                    "a `sequence_example` record declares `context` and `sequence` tables, not \
                     `features`",
                ),
                (RecordKind::Example, "context" | "sequence") => Some(
                    "`context` and `sequence` tables belong to a record with \
                     `kind = \"sequence_example\"`; an example's features go in `features`",
                ),
                _ => None,
            };
            if let Some(msg) = misplaced {
                self.error(key_span, msg);
            }
        }
        let mut fields = Vec::new();
        for &table in tables {
            let Some(v) = s.get(table.name()) else {
                continue;
            };
            let Some(features) = self.table(v, table.name()) else {
                continue;
            };
            for (key, value) in ordered(features) {
                if let Some(f) = self.feature(table, key, value) {
                    fields.push(f);
                }
            }
        }
        Some(Record {
            name: record_name,
            kind,
            dialect,
            deny_unknown_keys,
            fields,
            doc,
            origin,
        })
    }
}
