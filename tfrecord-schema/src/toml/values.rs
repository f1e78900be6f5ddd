//! Reading the spanned TOML values of a spec: each reader checks one value's type and range
//! and records a located error (with a suggestion where one helps) instead of stopping.

use std::ops::Range;

use ::toml::Spanned;
use ::toml::de::{DeString, DeTable, DeValue};

use super::spans::Site;
use crate::diagnostics::{SourceMap, SpecError};
use crate::ir::{Literal, Origin};
use crate::symbol;

/// A table key with its span.
pub(super) type Key<'i> = Spanned<DeString<'i>>;
/// A value with its span.
pub(super) type Value<'i> = Spanned<DeValue<'i>>;

/// A table's entries in the order they were written (the parser's map is sorted by key).
pub(super) fn ordered<'a, 'i>(t: &'a DeTable<'i>) -> Vec<(&'a Key<'i>, &'a Value<'i>)> {
    let mut v: Vec<_> = t.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

/// The kind of a value, as messages name it (`a string`, `an array`, ...).
pub(super) fn type_name(v: &DeValue<'_>) -> &'static str {
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

/// The settings of one table, by their vocabulary name.
pub(super) struct Settings<'a, 'i> {
    /// Each setting: its name, the span of its key, and its value.
    pub(super) entries: Vec<(&'static str, Range<usize>, &'a Value<'i>)>,
}

impl<'a, 'i> Settings<'a, 'i> {
    /// A setting's value, if it was written.
    pub(super) fn get(&self, key: &str) -> Option<&'a Value<'i>> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| *v)
    }
}

/// The walk over one spec file: the errors found so far and where each record and feature
/// was written.
pub(super) struct Lower<'m> {
    /// The spec file's text and name.
    pub(super) map: &'m SourceMap,
    /// Every error found so far.
    pub(super) errors: Vec<SpecError>,
    /// One site per [`Origin`] handed out.
    pub(super) sites: Vec<Site>,
}

impl Lower<'_> {
    /// Records an error.
    pub(super) fn push(&mut self, e: SpecError) {
        self.errors.push(e);
    }

    /// Records an error at `span`.
    pub(super) fn error(&mut self, span: &Range<usize>, msg: impl Into<String>) {
        let e = self.map.error(span, msg);
        self.push(e);
    }

    /// Records an unknown key, with the nearest of `known` as a suggestion.
    pub(super) fn unknown(&mut self, key: &Key<'_>, known: &[&str], what: &str) {
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
    pub(super) fn choice(
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

    /// Records a value of the wrong type: `what` must be `expected`.
    pub(super) fn mismatch(&mut self, v: &Value<'_>, what: &str, expected: &str) {
        let found = type_name(v.get_ref());
        self.error(
            &v.span(),
            format!("`{what}` must be {expected}, found {found}"),
        );
    }

    /// A table.
    pub(super) fn table<'a, 'i>(
        &mut self,
        v: &'a Value<'i>,
        what: &str,
    ) -> Option<&'a DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Some(t),
            _ => {
                self.mismatch(v, what, "a table");
                None
            }
        }
    }

    /// A string.
    pub(super) fn string(&mut self, v: &Value<'_>, what: &str) -> Option<String> {
        match v.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            _ => {
                self.mismatch(v, what, "a string");
                None
            }
        }
    }

    /// A feature key: a non-empty string.
    pub(super) fn key(&mut self, v: &Value<'_>, what: &str) -> Option<String> {
        let k = self.string(v, what)?;
        if k.is_empty() {
            self.error(&v.span(), "a feature key cannot be empty");
            return None;
        }
        Some(k)
    }

    /// `true` or `false`.
    pub(super) fn boolean(&mut self, v: &Value<'_>, what: &str) -> Option<bool> {
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.mismatch(v, what, "`true` or `false`");
                None
            }
        }
    }

    /// An integer value (of any radix, `_` separators allowed) as an `i128`.
    fn int(v: &DeValue<'_>) -> Option<i128> {
        match v {
            DeValue::Integer(i) => {
                i128::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok()
            }
            _ => None,
        }
    }

    /// A non-negative integer.
    pub(super) fn uint(&mut self, v: &Value<'_>, what: &str) -> Option<u64> {
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
    pub(super) fn uints(&mut self, v: &Value<'_>, what: &str, one: bool) -> Option<Vec<u64>> {
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

    /// A shape: an array of non-negative integers, where `-1` is a dimension the data decides
    /// (`None` in TensorFlow's Python, -1 in its `TensorShapeProto`).
    pub(super) fn dims(&mut self, v: &Value<'_>) -> Option<Vec<Option<u64>>> {
        let DeValue::Array(items) = v.get_ref() else {
            self.mismatch(
                v,
                "shape",
                "an array of non-negative integers, such as `[28, 28]` (`[]` for a scalar, `-1` \
                 for a dimension the data decides)",
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for item in items.iter() {
            let n = Self::int(item.get_ref());
            match n.map(u64::try_from) {
                Some(Ok(d)) => out.push(Some(d)),
                _ if n == Some(-1) => out.push(None),
                _ => {
                    let found = match n {
                        Some(n) if n < 0 => "a negative integer other than -1".to_string(),
                        Some(_) => "an integer above 2^64 - 1".to_string(),
                        None => type_name(item.get_ref()).to_string(),
                    };
                    self.error(
                        &item.span(),
                        format!(
                            "`shape` holds non-negative integers and -1 (unknown), found {found}"
                        ),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// A feature key, or an array of them.
    pub(super) fn strings(&mut self, v: &Value<'_>, what: &str) -> Option<Vec<String>> {
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

    /// A `default` value: a number, string or boolean, or a (nested) array of them.
    pub(super) fn literal(&mut self, v: &Value<'_>) -> Option<Literal> {
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
    pub(super) fn doc(&mut self, v: Option<&Value<'_>>) -> Vec<String> {
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
    pub(super) fn settings<'a, 'i>(
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

    /// Records where a record or feature was written, returning its [`Origin`].
    pub(super) fn site(&mut self, name: Range<usize>, settings: &Settings<'_, '_>) -> Origin {
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

    /// A boolean setting, `false` when not written.
    pub(super) fn flag(&mut self, s: &Settings<'_, '_>, name: &str) -> bool {
        s.get(name)
            .and_then(|v| self.boolean(v, name))
            .unwrap_or(false)
    }
}
