//! Lowering one feature table to a field: its dtype, its kind and where that kind may stand,
//! the settings each kind takes, its default and presence, and what sparse, ragged and
//! fixed-per-step features add.

use ::toml::Spanned;
use ::toml::de::{DeTable, DeValue};

use super::values::{Key, Lower, Settings, Value, ordered, type_name};
use crate::ir::{DType, FeatureKind, Field, Literal, Partition, Presence};
use crate::symbol;

/// Where a feature table sits in its record.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Table {
    /// `features` of an example.
    Features,
    /// `context` of a sequence example.
    Context,
    /// `sequence` (feature lists) of a sequence example.
    Sequence,
}

impl Table {
    /// The table's name in the record.
    pub(super) fn name(self) -> &'static str {
        match self {
            Table::Features => "features",
            Table::Context => "context",
            Table::Sequence => "sequence",
        }
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
        "rank" => &["var"],
        "partitions" | "row_splits_dtype" => &["ragged"],
        _ => symbol::SPEC_KINDS,
    }
}

impl Lower<'_> {
    /// One feature table of a record, lowered to a field: `None` when it cannot be (the errors
    /// recorded say why).
    pub(super) fn feature(
        &mut self,
        table: Table,
        key: &Key<'_>,
        value: &Value<'_>,
    ) -> Option<Field> {
        let key_str = key.get_ref().to_string();
        let t = self.feature_table(table, key, &key_str, value)?;
        let s = self.settings(t, symbol::SPEC_FEATURE, "feature key");
        let origin = self.site(key.span(), &s);
        let dtype = self.dtype(&s, key, &key_str);
        let kind_name = self.kind_name(&s, table, key)?;
        self.check_settings_apply(&s, table, kind_name);

        let shape = s
            .get("shape")
            .and_then(|v| self.dims(v))
            .unwrap_or_default();
        let optional = self.flag(&s, "optional");
        let lossy = self.flag(&s, "lossy");
        let default = s.get("default").and_then(|v| self.literal(v));
        let source = s.get("source").and_then(|v| self.source(v));
        let doc = self.doc(s.get("doc"));
        let member = self.member(&s, key, &key_str);
        self.check_default(&s, default.as_ref(), dtype, optional, kind_name);

        let mut presence = presence(kind_name, table, default, optional);
        let (kind, feature_key) = match kind_name {
            "fixed" => (self.fixed(&s, table, shape)?, key_str.clone()),
            "var" => (self.var(&s), key_str.clone()),
            "sparse" => self.sparse(&s, &key_str),
            "sequence" => (self.fixed_sequence(&s, table, shape), key_str.clone()),
            _ => (self.ragged(&s, &key_str), key_str.clone()),
        };
        if matches!(kind, FeatureKind::FixedSequence { .. }) && presence == Presence::Required {
            // Rows pad with zeros (or empty strings) without a `default`.
            presence = Presence::TypeDefault;
        }
        Some(Field {
            name: key_str,
            member: member?,
            key: feature_key,
            source,
            dtype: Some(dtype?),
            kind: steps(table, kind),
            presence,
            skip: false,
            flatten: false,
            lossy,
            doc,
            origin,
        })
    }

    /// The feature's table of settings: `None` (after an error) for an empty key or a value
    /// that is not a table.
    fn feature_table<'a, 'i>(
        &mut self,
        table: Table,
        key: &Key<'_>,
        key_str: &str,
        value: &'a Value<'i>,
    ) -> Option<&'a DeTable<'i>> {
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
        Some(t)
    }

    /// `dtype`, which every feature must have.
    fn dtype(&mut self, s: &Settings<'_, '_>, key: &Key<'_>, key_str: &str) -> Option<DType> {
        match s.get("dtype") {
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
        }
    }

    /// `kind` (by default `sequence` in a `sequence` table, else `fixed`): `None` (after an
    /// error) when it is unknown or cannot stand in this table.
    fn kind_name(
        &mut self,
        s: &Settings<'_, '_>,
        table: Table,
        key: &Key<'_>,
    ) -> Option<&'static str> {
        let kind_name = match s.get("kind") {
            Some(v) => self.choice(v, "feature kind", symbol::SPEC_KINDS)?,
            None if table == Table::Sequence => "sequence",
            None => "fixed",
        };
        let kind_span = s.get("kind").map_or_else(|| key.span(), Spanned::span);
        let misplaced = match (table, kind_name) {
            (Table::Context, "sequence") => self
                .map
                .error(
                    &kind_span,
                    "a `sequence` feature (FixedLenSequenceFeature) is a feature list",
                )
                .help("declare it in the record's `sequence` table"),
            (Table::Sequence, "fixed") => self
                .map
                .error(&kind_span, "a `fixed` feature cannot be a feature list")
                .help(
                    "use `kind = \"sequence\"` (FixedLenSequenceFeature) for a fixed shape \
                     per step, or move the feature to the `context` table",
                ),
            (Table::Sequence, "sparse") => self
                .map
                .error(&kind_span, "a `sparse` feature cannot be a feature list")
                .help("use `kind = \"var\"` for a list of any length per step"),
            _ => return Some(kind_name),
        };
        self.push(misplaced);
        None
    }

    /// Reports each setting that a feature of this kind (in this table) does not take.
    fn check_settings_apply(&mut self, s: &Settings<'_, '_>, table: Table, kind_name: &str) {
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
    }

    /// The Rust field name: `field`, else made from the key.
    fn member(&mut self, s: &Settings<'_, '_>, key: &Key<'_>, key_str: &str) -> Option<String> {
        match s.get("field") {
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
                let name = symbol::field_name(key_str);
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
        }
    }

    /// Reports a `default` that does not fit the dtype, or that comes with `optional`.
    fn check_default(
        &mut self,
        s: &Settings<'_, '_>,
        default: Option<&Literal>,
        dtype: Option<DType>,
        optional: bool,
        kind_name: &str,
    ) {
        if let (Some(v), Some(lit), Some(d @ (DType::Int64 | DType::Int32))) =
            (s.get("default"), default, dtype)
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
        if let (Some(v), Some(lit), Some(DType::Float)) = (s.get("default"), default, dtype)
            && let Some(bad) = floats(lit).into_iter().find(|&x| crate::ir::beyond_f32(x))
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
    }

    /// A `sparse` feature (SparseFeature): its index keys, size and order, and its feature key,
    /// which is its `value_key`.
    fn sparse(&mut self, s: &Settings<'_, '_>, key_str: &str) -> (FeatureKind, String) {
        let index_keys = s
            .get("index_key")
            .and_then(|v| self.strings(v, "index_key"))
            .unwrap_or_default();
        let mut feature_key = key_str.to_string();
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
        let already_sorted = self.flag(s, "already_sorted");
        (
            FeatureKind::Sparse {
                index_keys,
                size,
                already_sorted,
            },
            feature_key,
        )
    }

    /// A `fixed` feature (FixedLenFeature). A shape whose first dimension is unknown (`-1`,
    /// TensorFlow's `None`: `[-1, 3]`) is read as TensorFlow reads it, as a
    /// FixedLenSequenceFeature of the other dimensions that may be missing; only an example's
    /// features can have one. `None` (after an error) for an unknown dimension elsewhere.
    fn fixed(
        &mut self,
        s: &Settings<'_, '_>,
        table: Table,
        shape: Vec<Option<u64>>,
    ) -> Option<FeatureKind> {
        if let Some(known) = shape.iter().copied().collect::<Option<Vec<u64>>>() {
            return Some(FeatureKind::Fixed { shape: known });
        }
        let span = s.get("shape").map(Spanned::span);
        let problem = if table != Table::Features {
            Some((
                "a context feature's shape must be known: only an example's features can have \
                 an unknown (`-1`) dimension",
                "for a list of rows per step, declare a `sequence` feature in the `sequence` \
                 table",
            ))
        } else if shape[0].is_some() {
            Some((
                "only the first dimensions of a shape can be unknown (`-1`): the data decides \
                 them and the batch pads them",
                "write the unknown dimensions first, as in `shape = [-1, 3]`",
            ))
        } else {
            None
        };
        if let (Some((message, help)), Some(span)) = (problem, span) {
            let e = self.map.error(&span, message).help(help);
            self.push(e);
            return None;
        }
        Some(FeatureKind::FixedSequence {
            shape: shape[1..].to_vec(),
            allow_missing: true,
        })
    }

    /// A `var` feature (VarLenFeature), with its declared `rank` if any.
    fn var(&mut self, s: &Settings<'_, '_>) -> FeatureKind {
        let rank = s.get("rank").and_then(|v| self.uint(v, "rank"));
        if let (Some(0), Some(v)) = (rank, s.get("rank")) {
            self.error(&v.span(), "a `var` feature's `rank` is at least 1");
        }
        FeatureKind::Var { rank }
    }

    /// A `sequence` feature (FixedLenSequenceFeature): a fixed shape per row. In an example's
    /// features TensorFlow requires `allow_missing`, so it is the default there and `false` is
    /// an error.
    fn fixed_sequence(
        &mut self,
        s: &Settings<'_, '_>,
        table: Table,
        shape: Vec<Option<u64>>,
    ) -> FeatureKind {
        let allow_missing = if table == Table::Features {
            if let Some(v) = s.get("allow_missing")
                && self.boolean(v, "allow_missing") == Some(false)
            {
                let e = self
                    .map
                    .error(
                        &v.span(),
                        "a `sequence` feature of an example must allow missing values",
                    )
                    .note(
                        "tf.io.parse_example reads a FixedLenSequenceFeature only with \
                         `allow_missing=True`: a record without the feature has zero rows",
                    );
                self.push(e);
            }
            true
        } else {
            self.flag(s, "allow_missing")
        };
        FeatureKind::FixedSequence {
            shape,
            allow_missing,
        }
    }

    /// A `ragged` feature (RaggedFeature): its value key, partitions and row-splits dtype.
    fn ragged(&mut self, s: &Settings<'_, '_>, key_str: &str) -> FeatureKind {
        let value_key = match s.get("value_key") {
            Some(v) => self
                .key(v, "value_key")
                .unwrap_or_else(|| key_str.to_string()),
            None => key_str.to_string(),
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
        FeatureKind::Ragged {
            value_key,
            partitions,
            row_splits_dtype,
        }
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

/// How an absent feature reads: from its kind, `default` and `optional`. A `var` feature list
/// takes no default (it is read as zero steps).
fn presence(kind_name: &str, table: Table, default: Option<Literal>, optional: bool) -> Presence {
    match (kind_name, default, optional) {
        ("fixed", Some(l), _) => Presence::Default(l),
        ("fixed", None, true) => Presence::Optional,
        ("fixed", None, false) => Presence::Required,
        ("var", Some(l), _) if table != Table::Sequence => Presence::Default(l),
        ("var", _, true) => Presence::Optional,
        ("var", _, false) => Presence::TypeDefault,
        ("sequence", Some(l), _) => Presence::Default(l),
        ("sequence", None, _) => Presence::TypeDefault,
        _ => Presence::Required,
    }
}

/// A `var` or `ragged` feature in a `sequence` table is a feature list: one such feature per
/// step.
fn steps(table: Table, kind: FeatureKind) -> FeatureKind {
    match (table, &kind) {
        (Table::Sequence, FeatureKind::Var { .. } | FeatureKind::Ragged { .. }) => {
            FeatureKind::Steps {
                step: Box::new(kind),
            }
        }
        _ => kind,
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
