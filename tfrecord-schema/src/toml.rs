//! The TOML front end: a spec file -> [IR](crate::ir), with every error collected and located.
//!
//! The spec format is described, with a reference table of every key, in the
//! [crate documentation](crate#the-spec-format).
//!
//! The document is read as spanned TOML values (`toml::de::DeTable`) and walked by hand rather
//! than deserialized with serde: serde stops at the first error, and the walk reports every
//! unknown key, bad value and broken rule of the file at once, each at the byte range it
//! comes from. The IR's [`Origin`]s index a table of those ranges, and a
//! [`Part`] of a [`check::Diagnostic`] picks the range to point at.

use std::ops::Range;

use ::toml::Spanned;
use ::toml::de::{DeString, DeTable, DeValue};

use crate::check::{self, Part};
use crate::diagnostics::{Diagnostics, SourceMap, SpecError};
use crate::ir::{
    DType, Dialect, FeatureKind, Field, Literal, Origin, Partition, Presence, Record, RecordKind,
    Schema,
};
use crate::symbol;

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

/// Where a record or feature was written: its table key, and the value of each of its
/// settings by key name.
#[derive(Clone, Debug)]
struct Site {
    name: Range<usize>,
    parts: Vec<(&'static str, Range<usize>)>,
}

impl Site {
    fn setting(&self, key: &str) -> Option<Range<usize>> {
        self.parts
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s.clone())
    }

    /// The range a diagnostic about `part` points at: the setting's value, else the table key.
    fn span(&self, part: Part) -> Range<usize> {
        let key = match part {
            Part::Field => "field",
            Part::Type => "dtype",
            Part::Key => "key",
            Part::Default => "default",
            Part::Shape => "shape",
            Part::Kind => "kind",
            Part::Setting(k) => k,
            _ => "",
        };
        self.setting(key).unwrap_or_else(|| self.name.clone())
    }
}

/// The byte ranges behind the IR's [`Origin`]s, to render [`check::Diagnostic`]s.
#[derive(Clone, Debug)]
pub(crate) struct SpanTable {
    map: SourceMap,
    sites: Vec<Site>,
}

impl SpanTable {
    fn span(&self, origin: Origin, part: Part) -> Range<usize> {
        self.sites
            .get(origin.0 as usize)
            .map_or(0..0, |s| s.span(part))
    }

    /// A located error for a diagnostic about this spec's IR.
    pub(crate) fn render(&self, d: &check::Diagnostic) -> SpecError {
        let mut e = self.map.error(&self.span(d.origin, d.part), &d.message);
        for (origin, part, note) in &d.notes {
            e = e.note_at(self.map.locate(&self.span(*origin, *part)), note);
        }
        e
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

type Key<'i> = Spanned<DeString<'i>>;
type Value<'i> = Spanned<DeValue<'i>>;

/// A table's entries in the order they were written (the parser's map is sorted by key).
fn ordered<'a, 'i>(t: &'a DeTable<'i>) -> Vec<(&'a Key<'i>, &'a Value<'i>)> {
    let mut v: Vec<_> = t.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// Where a feature table sits in its record.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    /// `features` of an example.
    Features,
    /// `context` of a sequence example.
    Context,
    /// `sequence` (feature lists) of a sequence example.
    Sequence,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Features => "features",
            Table::Context => "context",
            Table::Sequence => "sequence",
        }
    }
}

/// The settings of one table, by their vocabulary name.
struct Settings<'a, 'i> {
    entries: Vec<(&'static str, Range<usize>, &'a Value<'i>)>,
}

impl<'a, 'i> Settings<'a, 'i> {
    fn get(&self, key: &str) -> Option<&'a Value<'i>> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| *v)
    }
}

/// Which kinds take a feature setting (the others reject it).
fn kinds_taking(setting: &str) -> &'static [&'static str] {
    match setting {
        "shape" => &["fixed", "sequence"],
        "default" => &["fixed", "var", "sequence"],
        "optional" => &["fixed", "var"],
        "index_key" | "size" | "already_sorted" => &["sparse"],
        "value_key" => &["sparse", "ragged"],
        "allow_missing" => &["sequence"],
        "partitions" | "row_splits_dtype" => &["ragged"],
        _ => symbol::SPEC_KINDS,
    }
}

struct Lower<'m> {
    map: &'m SourceMap,
    errors: Vec<SpecError>,
    sites: Vec<Site>,
}

impl Lower<'_> {
    fn push(&mut self, e: SpecError) {
        self.errors.push(e);
    }

    fn error(&mut self, span: &Range<usize>, msg: impl Into<String>) {
        let e = self.map.error(span, msg);
        self.push(e);
    }

    fn unknown(&mut self, key: &Key<'_>, known: &[&str], what: &str) {
        let name = key.get_ref();
        let mut e = self
            .map
            .error(&key.span(), format!("unknown {what} `{name}`"));
        e = match symbol::did_you_mean(name, known) {
            Some(s) => e.help(format!("did you mean `{s}`?")),
            None => e.note(format!("expected one of: {}", known.join(", "))),
        };
        self.push(e);
    }

    /// One of `known`, or an error with a suggestion.
    fn choice(
        &mut self,
        v: &Value<'_>,
        what: &str,
        known: &[&'static str],
    ) -> Option<&'static str> {
        let s = self.string(v, what)?;
        if let Some(k) = known.iter().find(|k| **k == s) {
            return Some(k);
        }
        let mut e = self.map.error(&v.span(), format!("unknown {what} `{s}`"));
        e = match symbol::did_you_mean(&s, known) {
            Some(h) => e.help(format!("did you mean `{h}`?")),
            None => e.note(format!("expected one of: {}", known.join(", "))),
        };
        self.push(e);
        None
    }

    fn mismatch(&mut self, v: &Value<'_>, what: &str, expected: &str) {
        let found = type_name(v.get_ref());
        self.error(
            &v.span(),
            format!("`{what}` must be {expected}, found {found}"),
        );
    }

    fn table<'a, 'i>(&mut self, v: &'a Value<'i>, what: &str) -> Option<&'a DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Some(t),
            _ => {
                self.mismatch(v, what, "a table");
                None
            }
        }
    }

    fn string(&mut self, v: &Value<'_>, what: &str) -> Option<String> {
        match v.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            _ => {
                self.mismatch(v, what, "a string");
                None
            }
        }
    }

    /// A feature key: a non-empty string.
    fn key(&mut self, v: &Value<'_>, what: &str) -> Option<String> {
        let k = self.string(v, what)?;
        if k.is_empty() {
            self.error(&v.span(), "a feature key cannot be empty");
            return None;
        }
        Some(k)
    }

    fn boolean(&mut self, v: &Value<'_>, what: &str) -> Option<bool> {
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.mismatch(v, what, "`true` or `false`");
                None
            }
        }
    }

    fn int(v: &DeValue<'_>) -> Option<i128> {
        match v {
            DeValue::Integer(i) => {
                i128::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok()
            }
            _ => None,
        }
    }

    /// A non-negative integer.
    fn uint(&mut self, v: &Value<'_>, what: &str) -> Option<u64> {
        match Self::int(v.get_ref()).map(u64::try_from) {
            Some(Ok(n)) => Some(n),
            Some(Err(_)) => {
                self.error(&v.span(), format!("`{what}` must not be negative"));
                None
            }
            None => {
                self.mismatch(v, what, "a non-negative integer");
                None
            }
        }
    }

    /// An array of non-negative integers (or, with `one`, a single one).
    fn uints(&mut self, v: &Value<'_>, what: &str, one: bool) -> Option<Vec<u64>> {
        match v.get_ref() {
            DeValue::Array(items) => {
                let mut out = Vec::new();
                let mut ok = true;
                for item in items.iter() {
                    match Self::int(item.get_ref()).map(u64::try_from) {
                        Some(Ok(n)) => out.push(n),
                        _ => {
                            self.error(
                                &item.span(),
                                format!(
                                    "`{what}` holds non-negative integers, found {}",
                                    match Self::int(item.get_ref()) {
                                        Some(_) => "a negative integer",
                                        None => type_name(item.get_ref()),
                                    }
                                ),
                            );
                            ok = false;
                        }
                    }
                }
                ok.then_some(out)
            }
            DeValue::Integer(_) if one => self.uint(v, what).map(|n| vec![n]),
            _ => {
                let expected = if one {
                    "a non-negative integer or an array of them"
                } else {
                    "an array of non-negative integers, such as `[28, 28]` (`[]` for a scalar)"
                };
                self.mismatch(v, what, expected);
                None
            }
        }
    }

    /// A feature key, or an array of them.
    fn strings(&mut self, v: &Value<'_>, what: &str) -> Option<Vec<String>> {
        match v.get_ref() {
            DeValue::String(_) => Some(vec![self.key(v, what)?]),
            DeValue::Array(items) => {
                let mut out = Vec::new();
                for item in items.iter() {
                    out.push(self.key(item, what)?);
                }
                Some(out)
            }
            _ => {
                self.mismatch(v, what, "a string or an array of strings");
                None
            }
        }
    }

    fn literal(&mut self, v: &Value<'_>) -> Option<Literal> {
        Some(match v.get_ref() {
            DeValue::Integer(_) => match Self::int(v.get_ref()) {
                Some(n) => Literal::Int(n),
                None => {
                    self.error(&v.span(), "integer out of range");
                    return None;
                }
            },
            DeValue::Float(f) => match f.as_str().replace('_', "").parse::<f64>() {
                Ok(x) => Literal::Float(x),
                Err(_) => {
                    self.error(&v.span(), "invalid float");
                    return None;
                }
            },
            DeValue::Boolean(b) => Literal::Bool(*b),
            DeValue::String(s) => Literal::Str(s.to_string()),
            DeValue::Array(items) => {
                let mut out = Vec::new();
                for item in items.iter() {
                    out.push(self.literal(item)?);
                }
                Literal::List(out)
            }
            _ => {
                self.mismatch(
                    v,
                    "default",
                    "a number, string, boolean, or an array of them",
                );
                return None;
            }
        })
    }

    /// Doc text as lines: trailing spaces and leading and trailing blank lines dropped.
    fn doc(&mut self, v: Option<&Value<'_>>) -> Vec<String> {
        let Some(text) = v.and_then(|v| self.string(v, "doc")) else {
            return Vec::new();
        };
        let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        let first = lines
            .iter()
            .position(|l| !l.is_empty())
            .unwrap_or(lines.len());
        lines.drain(..first);
        lines
    }

    /// Checks a table's keys against `known`, keeping the known ones.
    fn settings<'a, 'i>(
        &mut self,
        t: &'a DeTable<'i>,
        known: &[&'static str],
        what: &str,
    ) -> Settings<'a, 'i> {
        let mut entries = Vec::new();
        for (k, v) in ordered(t) {
            match known.iter().find(|n| **n == k.get_ref()) {
                Some(n) => entries.push((*n, k.span(), v)),
                None => self.unknown(k, known, what),
            }
        }
        Settings { entries }
    }

    fn site(&mut self, name: Range<usize>, settings: &Settings<'_, '_>) -> Origin {
        let origin = Origin(u32::try_from(self.sites.len()).unwrap_or(u32::MAX));
        self.sites.push(Site {
            name,
            parts: settings
                .entries
                .iter()
                .map(|(k, _, v)| (*k, v.span()))
                .collect(),
        });
        origin
    }

    fn record(&mut self, name: &Key<'_>, value: &Value<'_>) -> Option<Record> {
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
        let deny_unknown_keys = s
            .get("deny_unknown_keys")
            .and_then(|v| self.boolean(v, "deny_unknown_keys"))
            .unwrap_or(false);
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

    fn feature(&mut self, table: Table, key: &Key<'_>, value: &Value<'_>) -> Option<Field> {
        let key_str = key.get_ref().to_string();
        if key_str.is_empty() {
            self.error(&key.span(), "a feature key cannot be empty");
            return None;
        }
        let DeValue::Table(t) = value.get_ref() else {
            let e = self
                .map
                .error(
                    &value.span(),
                    format!(
                        "feature `{key_str}` must be a table of settings, found {}",
                        type_name(value.get_ref())
                    ),
                )
                .help(format!(
                    "write `[records.NAME.{}.\"{key_str}\"]` with `dtype = \"...\"` under it, or \
                     `\"{key_str}\" = {{ dtype = \"...\" }}`",
                    table.name()
                ));
            self.push(e);
            return None;
        };
        let s = self.settings(t, symbol::SPEC_FEATURE, "feature key");
        let origin = self.site(key.span(), &s);

        let dtype = match s.get("dtype") {
            Some(v) => self
                .choice(v, "dtype", symbol::SPEC_DTYPES)
                .and_then(DType::parse),
            None => {
                let e = self
                    .map
                    .error(&key.span(), format!("feature `{key_str}` has no `dtype`"))
                    .help(format!(
                        "add `dtype = \"...\"`, one of: {}",
                        symbol::SPEC_DTYPES.join(", ")
                    ));
                self.push(e);
                None
            }
        };
        let kind_name = match s.get("kind") {
            Some(v) => self.choice(v, "feature kind", symbol::SPEC_KINDS)?,
            None if table == Table::Sequence => "sequence",
            None => "fixed",
        };
        let kind_span = s.get("kind").map_or_else(|| key.span(), Spanned::span);
        match (table, kind_name) {
            (Table::Context, "sequence") => {
                let e = self
                    .map
                    .error(
                        &kind_span,
                        "a `sequence` feature (FixedLenSequenceFeature) is a feature list",
                    )
                    .help("declare it in the record's `sequence` table");
                self.push(e);
                return None;
            }
            (Table::Sequence, "fixed") => {
                let e = self
                    .map
                    .error(&kind_span, "a `fixed` feature cannot be a feature list")
                    .help(
                        "use `kind = \"sequence\"` (FixedLenSequenceFeature) for a fixed shape \
                         per step, or move the feature to the `context` table",
                    );
                self.push(e);
                return None;
            }
            (Table::Sequence, "sparse") => {
                let e = self
                    .map
                    .error(&kind_span, "a `sparse` feature cannot be a feature list")
                    .help("use `kind = \"var\"` for a list of any length per step");
                self.push(e);
                return None;
            }
            _ => {}
        }
        for (name, span, _) in &s.entries {
            let takes = kinds_taking(name);
            let applies = takes.contains(&kind_name)
                && !(table == Table::Sequence && kind_name == "var" && *name == "default");
            if !applies {
                let mut e = self.map.error(
                    span,
                    format!("`{name}` does not apply to a `{kind_name}` feature"),
                );
                e = if table == Table::Sequence && kind_name == "var" && *name == "default" {
                    e.note("an absent `var` feature list is read as zero steps")
                } else {
                    e.note(format!("`{name}` is a setting of {} features", list(takes)))
                };
                self.push(e);
            }
        }

        let shape = s
            .get("shape")
            .and_then(|v| self.uints(v, "shape", false))
            .unwrap_or_default();
        let optional = s
            .get("optional")
            .and_then(|v| self.boolean(v, "optional"))
            .unwrap_or(false);
        let lossy = s
            .get("lossy")
            .and_then(|v| self.boolean(v, "lossy"))
            .unwrap_or(false);
        let default = s.get("default").and_then(|v| self.literal(v));
        let source = s.get("source").and_then(|v| self.source(v));
        let doc = self.doc(s.get("doc"));
        let member = match s.get("field") {
            Some(v) => self.string(v, "field").and_then(|name| {
                let plain = name.strip_prefix("r#").unwrap_or(&name).to_string();
                if symbol::is_field_name(&plain) {
                    Some(plain)
                } else {
                    self.error(&v.span(), format!("`{name}` is not a Rust field name"));
                    None
                }
            }),
            None => {
                let name = symbol::field_name(&key_str);
                if name.is_none() {
                    let e = self
                        .map
                        .error(
                            &key.span(),
                            format!("cannot make a Rust field name from the key `{key_str}`"),
                        )
                        .help("name the field with `field = \"...\"`");
                    self.push(e);
                }
                name
            }
        };
        if let (Some(v), Some(lit), Some(d @ (DType::Int64 | DType::Int32))) =
            (s.get("default"), &default, dtype)
        {
            let (lo, hi): (i128, i128) = if d == DType::Int32 {
                (i32::MIN.into(), i32::MAX.into())
            } else {
                (i64::MIN.into(), i64::MAX.into())
            };
            if let Some(bad) = ints(lit).into_iter().find(|n| !(lo..=hi).contains(n)) {
                self.error(
                    &v.span(),
                    format!(
                        "default value {bad} does not fit in `{}` ({lo}..={hi})",
                        d.name()
                    ),
                );
            }
        }
        if let (Some(v), Some(lit), Some(DType::Float)) = (s.get("default"), &default, dtype)
            && let Some(bad) = floats(lit)
                .into_iter()
                .find(|x| x.is_finite() && x.abs() > f64::from(f32::MAX))
        {
            self.error(
                &v.span(),
                format!(
                    "default value {bad:e} is out of range for `float` (it would round to infinity)"
                ),
            );
        }
        if optional
            && matches!(kind_name, "fixed" | "var")
            && let Some(v) = s.get("default")
        {
            self.error(
                &v.span(),
                "an `optional` feature is absent as `None`; it cannot also have a `default`",
            );
        }

        let mut feature_key = key_str.clone();
        let (kind, presence) = match kind_name {
            "fixed" => (
                FeatureKind::Fixed { shape },
                match (&default, optional) {
                    (Some(l), _) => Presence::Default(l.clone()),
                    (None, true) => Presence::Optional,
                    (None, false) => Presence::Required,
                },
            ),
            "var" => (
                FeatureKind::Var,
                match (&default, optional) {
                    (Some(l), _) if table != Table::Sequence => Presence::Default(l.clone()),
                    (_, true) => Presence::Optional,
                    _ => Presence::TypeDefault,
                },
            ),
            "sparse" => {
                let index_keys = s
                    .get("index_key")
                    .and_then(|v| self.strings(v, "index_key"))
                    .unwrap_or_default();
                if let Some(v) = s.get("value_key") {
                    if let Some(k) = self.key(v, "value_key") {
                        feature_key = k;
                    }
                    // `Part::Key` of a sparse field is its value key.
                    if let Some(site) = self.sites.last_mut() {
                        site.parts.push(("key", v.span()));
                    }
                }
                let size = s
                    .get("size")
                    .and_then(|v| self.uints(v, "size", true))
                    .unwrap_or_default();
                let already_sorted = s
                    .get("already_sorted")
                    .and_then(|v| self.boolean(v, "already_sorted"))
                    .unwrap_or(false);
                (
                    FeatureKind::Sparse {
                        index_keys,
                        size,
                        already_sorted,
                    },
                    Presence::Required,
                )
            }
            "sequence" => {
                let allow_missing = s
                    .get("allow_missing")
                    .and_then(|v| self.boolean(v, "allow_missing"))
                    .unwrap_or(false);
                (
                    FeatureKind::FixedSequence {
                        shape,
                        allow_missing,
                    },
                    default.map_or(Presence::TypeDefault, Presence::Default),
                )
            }
            _ => {
                let value_key = match s.get("value_key") {
                    Some(v) => self.key(v, "value_key").unwrap_or_else(|| key_str.clone()),
                    None => key_str.clone(),
                };
                let partitions = s
                    .get("partitions")
                    .map(|v| self.partitions(v))
                    .unwrap_or_default();
                let row_splits_dtype = s
                    .get("row_splits_dtype")
                    .and_then(|v| self.choice(v, "row_splits_dtype", symbol::SPEC_DTYPES))
                    .and_then(DType::parse)
                    .unwrap_or(DType::Int32);
                (
                    FeatureKind::Ragged {
                        value_key,
                        partitions,
                        row_splits_dtype,
                    },
                    Presence::Required,
                )
            }
        };
        let kind = match (table, &kind) {
            (Table::Sequence, FeatureKind::Var | FeatureKind::Ragged { .. }) => {
                FeatureKind::Steps {
                    step: Box::new(kind),
                }
            }
            _ => kind,
        };
        Some(Field {
            name: key_str,
            member: member?,
            key: feature_key,
            source,
            dtype: Some(dtype?),
            kind,
            presence,
            skip: false,
            flatten: false,
            lossy,
            doc,
            origin,
        })
    }

    /// `source = "friends[*].name.first"`: a non-empty string, kept as written (its syntax
    /// belongs to the importer that reads it).
    fn source(&mut self, v: &Value<'_>) -> Option<String> {
        let text = self.string(v, "source")?;
        if text.trim().is_empty() {
            self.error(&v.span(), "`source` cannot be empty");
            return None;
        }
        Some(text)
    }

    /// `partitions = [{ row_lengths = "key" }, { uniform_row_length = 2 }]`.
    fn partitions(&mut self, v: &Value<'_>) -> Vec<Partition> {
        let DeValue::Array(items) = v.get_ref() else {
            self.mismatch(
                v,
                "partitions",
                "an array of tables such as `[{ row_lengths = \"lengths\" }]`",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items.iter() {
            let Some(t) = self.table(item, "a partition") else {
                continue;
            };
            let entries = ordered(t);
            if entries.len() != 1 {
                let e = self
                    .map
                    .error(
                        &item.span(),
                        format!(
                            "a partition is a table with one key, found {}",
                            entries.len()
                        ),
                    )
                    .note(format!(
                        "expected one of: {}",
                        symbol::SPEC_PARTITIONS.join(", ")
                    ));
                self.push(e);
                continue;
            }
            let (k, pv) = entries[0];
            let p = match k.get_ref().as_ref() {
                "uniform_row_length" => self
                    .uint(pv, "uniform_row_length")
                    .map(Partition::UniformRowLength),
                name @ ("row_splits" | "row_lengths" | "row_starts" | "row_limits"
                | "value_rowids") => self.key(pv, name).map(|key| match name {
                    "row_splits" => Partition::RowSplits(key),
                    "row_lengths" => Partition::RowLengths(key),
                    "row_starts" => Partition::RowStarts(key),
                    "row_limits" => Partition::RowLimits(key),
                    _ => Partition::ValueRowIds(key),
                }),
                _ => {
                    self.unknown(k, symbol::SPEC_PARTITIONS, "partition");
                    None
                }
            };
            out.extend(p);
        }
        out
    }
}

/// `a`, `a` and `b`, `a`, `b` and `c`.
fn list(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Every float of a literal.
fn floats(lit: &Literal) -> Vec<f64> {
    match lit {
        Literal::Float(x) => vec![*x],
        Literal::List(items) => items.iter().flat_map(floats).collect(),
        _ => Vec::new(),
    }
}

/// Every integer of a literal.
fn ints(lit: &Literal) -> Vec<i128> {
    match lit {
        Literal::Int(n) => vec![*n],
        Literal::List(items) => items.iter().flat_map(ints).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(src: &str) -> String {
        Schema::from_toml_str(src, "t.toml")
            .expect_err("spec has errors")
            .to_string()
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
                step: Box::new(FeatureKind::Var)
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
}
