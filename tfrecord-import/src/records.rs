//! JSON Lines and CSV records to `tf.train.Example`s (or `OFRecord`s), one per record, with
//! the type mapping of seed `000`'s record writer:
//!
//! | record field | feature |
//! | --- | --- |
//! | integer (JSON integer; CSV column of integers) | `int64_list` |
//! | float (JSON number with a fraction or exponent; CSV column of numbers) | `float_list` |
//! | string (CSV: any other column) | `bytes_list` (UTF-8) |
//! | boolean (`true` / `false`) | `int64_list` of 0 / 1, as TensorFlow's guide coerces `bool` |
//! | array (also nested, row-major) of one of the above | a list of that kind |
//! | object | its fields, flattened to `parent/child` keys |
//! | `null`, empty CSV cell | no feature (absent) |
//!
//! A field's list kind is decided over the whole input (two passes; standard input is read
//! into memory): a field holding integers in some records and floats in others is a float
//! feature everywhere, so that one `tf.io.parse_example` spec reads every record. In CSV every
//! cell is text, so a column is `int64` when every non-empty cell is an integer, `float` when
//! every one is a number (`nan` and `inf` included), `int64` 0/1 when every one is `true` or
//! `false`, and bytes otherwise.
//!
//! What cannot be mapped is an error naming the input, the record and the field: a list of
//! objects, a list mixing strings with numbers, an integer beyond int64, a JSON field holding
//! strings in one record and numbers in another, a value a spec's dtype or shape does not
//! take. With [`RecordOptions::skip_unmappable`] the field is left out instead (of that record,
//! or of every record for a field whose kinds conflict) and a warning names it.
//!
//! An optional spec ([`RecordSpec::from_record`], a record of a TOML spec file) forces dtypes
//! and shapes: each of its features reads the field its `source` names (else its key), stored
//! under its key; `fixed` features need exactly `shape`'s count of values and take their
//! `default` when the field is absent (no default: an error; `optional`: left out), `var`
//! features take any count. Other fields are mapped by the table above (or are unmappable with
//! `deny_unknown_keys = true`).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use tfrecord_core::parse::{ByteStrings, Values};
use tfrecord_schema::ir::{self, DType, FeatureKind, Literal, Presence, RecordKind};

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::row::FeatureRow;

/// The input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RecordFormat {
    /// One JSON object per line; blank lines are skipped.
    #[default]
    JsonLines,
    /// Comma-separated values with a header row naming the fields (RFC 4180 quoting).
    Csv,
}

impl RecordFormat {
    /// The format a file name suggests: `.csv` (also `.tsv`, `.txt`) is CSV, `.jsonl`,
    /// `.ndjson` and `.json` are JSON Lines.
    pub fn from_path(path: impl AsRef<Path>) -> Option<Self> {
        let ext = path.as_ref().extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" | "tsv" | "txt" => Some(RecordFormat::Csv),
            "jsonl" | "ndjson" | "json" => Some(RecordFormat::JsonLines),
            _ => None,
        }
    }
}

/// How [`import_records`] reads its input.
#[derive(Clone, Debug, Default)]
pub struct RecordOptions {
    /// The input format [default: from the file name, else JSON Lines].
    pub format: Option<RecordFormat>,
    /// Forced dtypes and shapes.
    pub spec: Option<RecordSpec>,
    /// Leave unmappable fields out with a warning instead of failing.
    pub skip_unmappable: bool,
    /// The CSV field delimiter [default: `,`; `\t` for a `.tsv` file].
    pub delimiter: Option<u8>,
    /// Show a progress bar on standard error (only when it is a terminal).
    pub progress: bool,
}

/// One forced feature of a [`RecordSpec`].
#[derive(Clone, Debug, PartialEq)]
struct Rule {
    key: String,
    dtype: DType,
    /// `Some(n)`: exactly n values.
    count: Option<u64>,
    presence: Presence,
}

/// Dtypes and shapes forced on some fields, from a record of a TOML spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordSpec {
    /// Field path (the `source`, else the feature key) to rule.
    rules: BTreeMap<String, Rule>,
    deny_unknown: bool,
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

/// A scalar of a record field.
#[derive(Clone, Debug, PartialEq)]
enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
}

impl Scalar {
    fn word(&self) -> &'static str {
        match self {
            Scalar::Int(_) => "an integer",
            Scalar::Float(_) => "a float",
            Scalar::Bool(_) => "a boolean",
            Scalar::Str(_) => "a string",
        }
    }
}

/// A field of one record: its scalars, or why it cannot be a feature.
type Field = std::result::Result<Vec<Scalar>, String>;

/// The list kind inferred for a field over all records.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Int,
    Float,
    Bool,
    Bytes,
    /// Kinds that do not unify: (record, message).
    Conflict(u64, String),
}

fn scalar_kind(s: &Scalar) -> Kind {
    match s {
        Scalar::Int(_) => Kind::Int,
        Scalar::Float(_) => Kind::Float,
        Scalar::Bool(_) => Kind::Bool,
        Scalar::Str(_) => Kind::Bytes,
    }
}

fn kind_word(k: &Kind) -> &'static str {
    match k {
        Kind::Int => "integers",
        Kind::Float => "floats",
        Kind::Bool => "booleans",
        Kind::Bytes => "strings",
        Kind::Conflict(..) => "conflicting values",
    }
}

/// The kind holding both, if any: integers widen to floats, booleans (0/1) to integers.
fn unify(a: &Kind, b: &Kind) -> Option<Kind> {
    Some(match (a, b) {
        (x, y) if x == y => x.clone(),
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        (Kind::Bool, Kind::Int) | (Kind::Int, Kind::Bool) => Kind::Int,
        (Kind::Bool, Kind::Float) | (Kind::Float, Kind::Bool) => Kind::Float,
        _ => return None,
    })
}

/// The CSV kind of a cell's text: the narrowest kind it parses as.
fn cell_kinds(text: &str) -> (bool, bool, bool) {
    let t = text.trim();
    let int = t.parse::<i64>().is_ok();
    let float = int || t.parse::<f64>().is_ok();
    let boolean = t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false");
    (int, float, boolean)
}

/// Flattens a JSON value into `out` as `prefix/key` fields; `null` adds nothing.
fn flatten_json(v: &Json, prefix: &str, out: &mut Vec<(String, Field)>) {
    match v {
        Json::Null => {}
        Json::Object(map) => {
            for (k, inner) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}/{k}")
                };
                flatten_json(inner, &key, out);
            }
        }
        _ => {
            let mut scalars = Vec::new();
            let field = collect(v, &mut scalars).map(|()| scalars);
            out.push((prefix.to_string(), field));
        }
    }
}

/// The scalars of a JSON value (arrays flattened row-major).
fn collect(v: &Json, out: &mut Vec<Scalar>) -> std::result::Result<(), String> {
    match v {
        Json::Null => Err("a list holding null cannot be a feature".into()),
        Json::Bool(b) => {
            out.push(Scalar::Bool(*b));
            Ok(())
        }
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push(Scalar::Int(i));
            } else if n.is_u64() {
                return Err(format!("the integer {n} does not fit in int64"));
            } else {
                out.push(Scalar::Float(n.as_f64().unwrap_or(f64::NAN)));
            }
            Ok(())
        }
        Json::String(s) => {
            out.push(Scalar::Str(s.clone()));
            Ok(())
        }
        Json::Array(items) => items.iter().try_for_each(|i| collect(i, out)),
        Json::Object(_) => Err(
            "a list of objects cannot be a feature (a feature holds one list of numbers or \
             strings)"
                .into(),
        ),
    }
}

/// A list's kind: its scalars' kinds unified, or why they do not unify.
fn list_kind(scalars: &[Scalar]) -> std::result::Result<Option<Kind>, String> {
    let mut kind: Option<Kind> = None;
    for s in scalars {
        let k = scalar_kind(s);
        kind = Some(match &kind {
            None => k,
            Some(prev) => unify(prev, &k).ok_or_else(|| {
                format!(
                    "a list mixing {} and {} cannot be a feature",
                    kind_word(prev),
                    kind_word(&k)
                )
            })?,
        });
    }
    Ok(kind)
}

/// The input, readable twice.
enum Input {
    File(PathBuf),
    Memory(Vec<u8>),
}

impl Input {
    fn open(&self) -> Result<Box<dyn BufRead>> {
        Ok(match self {
            Input::File(p) => Box::new(BufReader::new(File::open(p)?)),
            Input::Memory(b) => Box::new(Cursor::new(b.clone())),
        })
    }

    fn len(&self) -> Option<u64> {
        match self {
            Input::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            Input::Memory(b) => Some(b.len() as u64),
        }
    }
}

/// One record of the input: its index, its 1-based line, and its fields (or why the whole
/// record cannot be read).
struct Raw {
    index: u64,
    line: u64,
    fields: std::result::Result<Vec<(String, Field)>, String>,
}

/// Calls `f` with each record of the input.
fn for_each_raw(
    input: &Input,
    format: RecordFormat,
    delimiter: u8,
    mut f: impl FnMut(Raw, u64) -> Result<()>,
) -> Result<()> {
    let reader = input.open()?;
    match format {
        RecordFormat::Csv => {
            let mut csv = csv::ReaderBuilder::new()
                .delimiter(delimiter)
                .flexible(false)
                .from_reader(reader);
            let headers: Vec<String> = csv
                .headers()
                .map_err(|e| Error::new(format!("cannot read the CSV header: {e}")))?
                .iter()
                .map(str::to_string)
                .collect();
            let mut seen = HashMap::new();
            for (i, h) in headers.iter().enumerate() {
                if h.is_empty() {
                    return Err(Error::new(format!("CSV column {} has no name", i + 1)));
                }
                if let Some(first) = seen.insert(h.clone(), i) {
                    return Err(Error::new(format!(
                        "CSV columns {} and {} are both named {h:?}",
                        first + 1,
                        i + 1
                    )));
                }
            }
            let mut record = csv::StringRecord::new();
            let mut index = 0u64;
            loop {
                let more = csv.read_record(&mut record).map_err(|e| {
                    let line = e.position().map_or(0, csv::Position::line);
                    Error::new(format!("invalid CSV (line {line}): {e}")).with_record(index)
                })?;
                if !more {
                    break;
                }
                let line = record.position().map_or(0, csv::Position::line);
                let fields = headers
                    .iter()
                    .zip(record.iter())
                    .filter(|(_, cell)| !cell.is_empty())
                    .map(|(h, cell)| (h.clone(), Ok(vec![Scalar::Str(cell.to_string())])))
                    .collect();
                let bytes = record.position().map_or(0, csv::Position::byte);
                f(
                    Raw {
                        index,
                        line,
                        fields: Ok(fields),
                    },
                    bytes,
                )?;
                index += 1;
            }
        }
        _ => {
            let mut index = 0u64;
            let mut bytes = 0u64;
            for (n, line) in reader.split(b'\n').enumerate() {
                let line = line.map_err(|e| Error::from(e).with_record(index))?;
                bytes += line.len() as u64 + 1;
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let fields = match serde_json::from_slice::<Json>(&line) {
                    Ok(Json::Object(map)) => {
                        let mut out = Vec::new();
                        flatten_json(&Json::Object(map), "", &mut out);
                        // Keys that flatten to the same path.
                        let mut seen = HashMap::new();
                        for (i, (k, _)) in out.iter().enumerate() {
                            seen.entry(k.clone()).or_insert_with(Vec::new).push(i);
                        }
                        for (k, at) in seen {
                            if at.len() > 1 {
                                for i in at {
                                    out[i].1 = Err(format!(
                                        "two fields flatten to the key {k:?} (a nested object \
                                         and a key with `/`)"
                                    ));
                                }
                            }
                        }
                        Ok(out)
                    }
                    Ok(other) => Err(format!(
                        "a record must be a JSON object, found {}",
                        match other {
                            Json::Array(_) => "an array",
                            Json::String(_) => "a string",
                            Json::Number(_) => "a number",
                            Json::Bool(_) => "a boolean",
                            _ => "null",
                        }
                    )),
                    Err(e) => Err(format!("invalid JSON: {e}")),
                };
                f(
                    Raw {
                        index,
                        line: n as u64 + 1,
                        fields,
                    },
                    bytes,
                )?;
                index += 1;
            }
        }
    }
    Ok(())
}

/// Converts scalars to values of a forced dtype; `None` with the reason when one does not fit.
fn force(scalars: &[Scalar], dtype: DType) -> std::result::Result<Values, String> {
    let bad = |s: &Scalar| {
        format!(
            "{} ({}) does not convert to {}",
            s.word(),
            match s {
                Scalar::Int(i) => i.to_string(),
                Scalar::Float(x) => x.to_string(),
                Scalar::Bool(b) => b.to_string(),
                Scalar::Str(t) => format!("{t:?}"),
            },
            dtype.name()
        )
    };
    let as_i64 = |s: &Scalar| -> Option<i64> {
        match s {
            Scalar::Int(i) => Some(*i),
            Scalar::Bool(b) => Some(i64::from(*b)),
            #[allow(clippy::cast_possible_truncation)]
            Scalar::Float(x) if x.fract() == 0.0 && x.abs() < 9.0e18 => Some(*x as i64),
            Scalar::Str(t) => {
                let t = t.trim();
                t.parse::<i64>().ok().or_else(|| {
                    if t.eq_ignore_ascii_case("true") {
                        Some(1)
                    } else if t.eq_ignore_ascii_case("false") {
                        Some(0)
                    } else {
                        None
                    }
                })
            }
            Scalar::Float(_) => None,
        }
    };
    let as_f64 = |s: &Scalar| -> Option<f64> {
        match s {
            #[allow(clippy::cast_precision_loss)]
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(x) => Some(*x),
            Scalar::Bool(b) => Some(f64::from(u8::from(*b))),
            Scalar::Str(t) => t.trim().parse::<f64>().ok(),
        }
    };
    Ok(match dtype {
        DType::Int64 => Values::Int64(
            scalars
                .iter()
                .map(|s| as_i64(s).ok_or_else(|| bad(s)))
                .collect::<std::result::Result<_, _>>()?,
        ),
        DType::Int32 => Values::Int32(
            scalars
                .iter()
                .map(|s| {
                    as_i64(s)
                        .and_then(|i| i32::try_from(i).ok())
                        .ok_or_else(|| bad(s))
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        DType::Bool => Values::Bool(
            scalars
                .iter()
                .map(|s| match as_i64(s) {
                    Some(0) => Ok(false),
                    Some(1) => Ok(true),
                    _ => Err(bad(s)),
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        #[allow(clippy::cast_possible_truncation)]
        DType::Float => Values::Float32(
            scalars
                .iter()
                .map(|s| as_f64(s).map(|x| x as f32).ok_or_else(|| bad(s)))
                .collect::<std::result::Result<_, _>>()?,
        ),
        DType::Double => Values::Float64(
            scalars
                .iter()
                .map(|s| as_f64(s).ok_or_else(|| bad(s)))
                .collect::<std::result::Result<_, _>>()?,
        ),
        _ => Values::Bytes(
            scalars
                .iter()
                .map(|s| match s {
                    Scalar::Str(t) => t.as_bytes().to_vec(),
                    Scalar::Int(i) => i.to_string().into_bytes(),
                    Scalar::Float(x) => x.to_string().into_bytes(),
                    Scalar::Bool(b) => b.to_string().into_bytes(),
                })
                .collect::<ByteStrings>(),
        ),
    })
}

/// A default literal as values of `dtype`.
fn literal(lit: &Literal, dtype: DType) -> std::result::Result<Values, String> {
    fn flat(l: &Literal, out: &mut Vec<Scalar>) {
        match l {
            Literal::List(items) => items.iter().for_each(|i| flat(i, out)),
            Literal::Int(n) => {
                out.push(i64::try_from(*n).map_or_else(|_| Scalar::Str(n.to_string()), Scalar::Int))
            }
            Literal::Float(x) => out.push(Scalar::Float(*x)),
            Literal::Str(s) => out.push(Scalar::Str(s.clone())),
            Literal::Bool(b) => out.push(Scalar::Bool(*b)),
            _ => {}
        }
    }
    let mut s = Vec::new();
    flat(lit, &mut s);
    force(&s, dtype)
}

/// Values of an inferred kind.
fn by_kind(scalars: &[Scalar], kind: &Kind, csv: bool) -> std::result::Result<Values, String> {
    match kind {
        Kind::Int | Kind::Bool => force(scalars, DType::Int64),
        Kind::Float => force(scalars, DType::Float),
        _ if csv => force(scalars, DType::Bytes),
        _ => {
            // JSON: only strings are bytes.
            if let Some(s) = scalars.iter().find(|s| !matches!(s, Scalar::Str(_))) {
                return Err(format!("{} where other records hold strings", s.word()));
            }
            force(scalars, DType::Bytes)
        }
    }
}

/// What [`import_records`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordSummary {
    /// Records written.
    pub records: u64,
    /// Fields left out (with `skip_unmappable`), counted per record.
    pub skipped_fields: u64,
    /// Records left out (with `skip_unmappable`).
    pub skipped_records: u64,
}

/// Reads JSON Lines or CSV records (`-`: standard input) and calls `sink` with one output
/// record each, in order; `warn` gets every unmappable field or record that is skipped.
///
/// # Errors
/// An unreadable input, invalid JSON or CSV, and (without `skip_unmappable`) every field that
/// cannot be mapped; errors name the input, the record and the field.
pub fn import_records(
    input: &Path,
    opts: &RecordOptions,
    mut warn: impl FnMut(&Error),
    mut sink: impl FnMut(FeatureRow) -> Result<()>,
) -> Result<RecordSummary> {
    let located = |e: Error| e.with_path(input);
    let source = if input.as_os_str() == "-" {
        let mut buf = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| located(e.into()))?;
        Input::Memory(buf)
    } else {
        if !input.is_file() {
            File::open(input).map_err(|e| located(e.into()))?;
        }
        Input::File(input.to_path_buf())
    };
    let format = opts
        .format
        .or_else(|| RecordFormat::from_path(input))
        .unwrap_or_default();
    let csv = format == RecordFormat::Csv;
    let delimiter = opts.delimiter.unwrap_or_else(|| {
        let tsv = input
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("tsv"));
        if tsv { b'\t' } else { b',' }
    });
    let empty = RecordSpec::default();
    let spec = opts.spec.as_ref().unwrap_or(&empty);
    let skip = opts.skip_unmappable;
    let mut summary = RecordSummary::default();

    // Pass 1: the kind of every field not in the spec.
    let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
    // CSV: (every cell an integer, a number, a boolean) per column.
    let mut csv_kinds: BTreeMap<String, (bool, bool, bool)> = BTreeMap::new();
    for_each_raw(&source, format, delimiter, |raw, _| {
        let Ok(fields) = &raw.fields else {
            return Ok(());
        };
        for (key, field) in fields {
            if spec.rules.contains_key(key) {
                continue;
            }
            let Ok(scalars) = field else { continue };
            if csv {
                if let Some(Scalar::Str(t)) = scalars.first() {
                    let (i, f, b) = cell_kinds(t);
                    let e = csv_kinds.entry(key.clone()).or_insert((true, true, true));
                    *e = (e.0 && i, e.1 && f, e.2 && b);
                }
                continue;
            }
            let Ok(Some(k)) = list_kind(scalars) else {
                continue;
            };
            let entry = kinds.entry(key.clone()).or_insert_with(|| k.clone());
            if let Kind::Conflict(..) = entry {
                continue;
            }
            match unify(entry, &k) {
                Some(u) => *entry = u,
                None => {
                    *entry = Kind::Conflict(
                        raw.index,
                        format!(
                            "holds {} here but {} in earlier records (line {}); give it a dtype \
                             in a spec (--spec) to convert",
                            kind_word(&k),
                            kind_word(entry),
                            raw.line
                        ),
                    );
                }
            }
        }
        Ok(())
    })
    .map_err(located)?;
    for (key, (i, f, b)) in csv_kinds {
        let k = if i {
            Kind::Int
        } else if f {
            Kind::Float
        } else if b {
            Kind::Bool
        } else {
            Kind::Bytes
        };
        kinds.insert(key, k);
    }
    for (key, kind) in &kinds {
        if let Kind::Conflict(record, msg) = kind {
            let e = located(
                Error::new(msg.clone())
                    .with_record(*record)
                    .with_field(key.clone()),
            );
            if skip {
                warn(&Error::new(format!("{e}; left out of every record")));
            } else {
                return Err(e);
            }
        }
    }

    // Pass 2: convert and write.
    let progress = Progress::new(opts.progress, source.len(), "records");
    for_each_raw(&source, format, delimiter, |raw, bytes| {
        progress.set(bytes);
        let at = |e: Error| located(e.with_record(raw.index));
        let fields = match raw.fields {
            Ok(f) => f,
            Err(msg) => {
                let e = at(Error::new(format!("{msg} (line {})", raw.line)));
                if skip {
                    warn(&e);
                    summary.skipped_records += 1;
                    return Ok(());
                }
                return Err(e);
            }
        };
        let mut row = FeatureRow::new();
        let mut present: Vec<&str> = Vec::new();
        for (key, field) in &fields {
            let converted = field.clone().and_then(|scalars| {
                if let Some(rule) = spec.rules.get(key) {
                    let values = force(&scalars, rule.dtype)?;
                    if let Some(n) = rule.count
                        && values.len() as u64 != n
                    {
                        return Err(format!(
                            "the spec wants exactly {n} values, found {}",
                            values.len()
                        ));
                    }
                    Ok(Some((rule.key.clone(), values)))
                } else if spec.deny_unknown {
                    Err("the spec does not list this field (deny_unknown_keys)".into())
                } else {
                    if !csv {
                        list_kind(&scalars)?;
                    }
                    match kinds.get(key) {
                        Some(Kind::Conflict(..)) => Ok(None),
                        Some(k) => by_kind(&scalars, k, csv).map(|v| Some((key.clone(), v))),
                        // Only empty lists ever: no kind to give it.
                        None => Ok(None),
                    }
                }
            });
            match converted {
                Ok(Some((k, v))) => {
                    present.push(key);
                    row.insert(k, v);
                }
                Ok(None) => {}
                Err(msg) => {
                    let e = at(Error::new(format!("{msg} (line {})", raw.line)).with_field(key));
                    if skip {
                        warn(&e);
                        summary.skipped_fields += 1;
                    } else {
                        return Err(e);
                    }
                }
            }
        }
        for (source, rule) in &spec.rules {
            if present.contains(&source.as_str()) {
                continue;
            }
            match &rule.presence {
                Presence::Default(lit) => {
                    let v = literal(lit, rule.dtype).map_err(|m| {
                        at(Error::new(format!("bad default: {m}")).with_field(source.clone()))
                    })?;
                    row.insert(rule.key.clone(), v);
                }
                Presence::Required => {
                    let e = at(Error::new(format!(
                        "the field is absent and the spec's feature `{}` has no default (line {})",
                        rule.key, raw.line
                    ))
                    .with_field(source.clone()));
                    if skip {
                        warn(&e);
                        summary.skipped_fields += 1;
                    } else {
                        return Err(e);
                    }
                }
                _ => {}
            }
        }
        sink(row).map_err(at)?;
        summary.records += 1;
        Ok(())
    })
    .map_err(located)?;
    progress.finish();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, opts: &RecordOptions) -> (Result<Vec<FeatureRow>>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let name = if opts.format == Some(RecordFormat::Csv) {
            "in.csv"
        } else {
            "in.jsonl"
        };
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let mut rows = Vec::new();
        let mut warnings = Vec::new();
        let r = import_records(
            &p,
            opts,
            |w| warnings.push(w.to_string()),
            |row| {
                rows.push(row);
                Ok(())
            },
        );
        (r.map(|_| rows), warnings)
    }

    #[test]
    fn json_maps_by_the_table() {
        let (rows, _) = run(
            "{\"i\": 1, \"f\": 1.5, \"s\": \"x\", \"b\": true, \"n\": null, \"o\": {\"p\": [1, 2]}, \"m\": [[1, 2], [3, 4]]}\n\n{\"i\": 2, \"f\": 2}\n",
            &RecordOptions::default(),
        );
        let rows = rows.unwrap();
        let r = &rows[0].features;
        assert_eq!(r["i"], Values::Int64(vec![1]));
        assert_eq!(r["f"], Values::Float32(vec![1.5]));
        assert_eq!(r["s"], Values::from(&b"x"[..]));
        assert_eq!(r["b"], Values::Int64(vec![1]));
        assert_eq!(r["o/p"], Values::Int64(vec![1, 2]));
        assert_eq!(r["m"], Values::Int64(vec![1, 2, 3, 4]));
        assert!(!r.contains_key("n"));
        // An integer where other records hold floats is a float.
        assert_eq!(rows[1].features["f"], Values::Float32(vec![2.0]));
    }

    #[test]
    fn unmappable_fields_fail_or_are_skipped() {
        let text = "{\"a\": [{\"x\": 1}], \"ok\": 1}\n{\"a\": [1, \"x\"], \"ok\": 2}\n";
        let (r, _) = run(text, &RecordOptions::default());
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("in.jsonl: record 0: field \"a\": a list of objects cannot be a feature"),
            "{e}"
        );
        let opts = RecordOptions {
            skip_unmappable: true,
            ..RecordOptions::default()
        };
        let (r, w) = run(text, &opts);
        let rows = r.unwrap();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.features.keys().eq(["ok"])));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[1].contains("record 1: field \"a\": a list mixing integers and strings"));
        // Conflicting kinds across records.
        let (r, _) = run("{\"a\": 1}\n{\"a\": \"x\"}\n", &RecordOptions::default());
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("record 1: field \"a\": holds strings here but integers"),
            "{e}"
        );
        let (r, _) = run("[1]\n", &RecordOptions::default());
        assert!(r.unwrap_err().to_string().contains("must be a JSON object"));
        let (r, _) = run("{\"a\": 18446744073709551615}\n", &RecordOptions::default());
        assert!(r.unwrap_err().to_string().contains("does not fit in int64"));
    }

    #[test]
    fn csv_columns_take_one_kind() {
        let opts = RecordOptions {
            format: Some(RecordFormat::Csv),
            ..RecordOptions::default()
        };
        let (rows, _) = run(
            "id,score,name,ok,mixed\n1,0.5,a,true,1\n2,nan,\"b, c\",FALSE,x\n3,,d,true,2\n",
            &opts,
        );
        let rows = rows.unwrap();
        assert_eq!(rows[0].features["id"], Values::Int64(vec![1]));
        assert_eq!(rows[0].features["score"], Values::Float32(vec![0.5]));
        assert_eq!(rows[1].features["name"], Values::from(&b"b, c"[..]));
        assert_eq!(rows[1].features["ok"], Values::Int64(vec![0]));
        assert_eq!(rows[0].features["mixed"], Values::from(&b"1"[..]));
        assert!(!rows[2].features.contains_key("score"));
        let (r, _) = run("a,a\n1,2\n", &opts);
        assert!(r.unwrap_err().to_string().contains("both named"));
        let (r, _) = run("a,b\n1,2\n3\n", &opts);
        assert!(r.unwrap_err().to_string().contains("invalid CSV"));
    }

    #[test]
    fn a_spec_forces_dtypes_and_shapes() {
        let schema = ir::Schema::from_toml_str(
            r#"
[records.R.features.label]
dtype = "int64"
default = -1
[records.R.features."pos"]
dtype = "float"
shape = [2]
source = "p/xy"
[records.R.features.flag]
dtype = "bool"
optional = true
[records.R.features.id]
dtype = "string"
"#,
            "r.toml",
        )
        .unwrap();
        let opts = RecordOptions {
            spec: Some(RecordSpec::from_record(&schema.records[0]).unwrap()),
            ..RecordOptions::default()
        };
        let (rows, _) = run(
            "{\"label\": 3.0, \"p\": {\"xy\": [1, 2]}, \"id\": 7, \"extra\": \"e\"}\n{\"p\": {\"xy\": [\"0.5\", 1]}, \"id\": \"x\", \"flag\": 1}\n",
            &opts,
        );
        let rows = rows.unwrap();
        assert_eq!(rows[0].features["label"], Values::Int64(vec![3]));
        assert_eq!(rows[0].features["pos"], Values::Float32(vec![1.0, 2.0]));
        assert_eq!(rows[0].features["id"], Values::from(&b"7"[..]));
        assert_eq!(rows[0].features["extra"], Values::from(&b"e"[..]));
        assert!(!rows[0].features.contains_key("flag"));
        assert_eq!(rows[1].features["label"], Values::Int64(vec![-1]));
        assert_eq!(rows[1].features["flag"], Values::Bool(vec![true]));
        let (r, _) = run("{\"p\": {\"xy\": [1]}, \"id\": \"x\"}\n", &opts);
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("field \"p/xy\": the spec wants exactly 2 values, found 1"),
            "{e}"
        );
        let (r, _) = run("{\"p\": {\"xy\": [1, 2]}}\n", &opts);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("field \"id\": the field is absent"), "{e}");
        let (r, _) = run(
            "{\"label\": 1.5, \"p\": {\"xy\": [1, 2]}, \"id\": \"x\"}\n",
            &opts,
        );
        let e = r.unwrap_err().to_string();
        assert!(e.contains("a float (1.5) does not convert to int64"), "{e}");
    }
}
