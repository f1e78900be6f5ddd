//! Reading the input: JSON Lines or CSV records, each as its fields' scalars (nested JSON
//! objects flattened to `a/b` keys), read from a file or from memory, as often as needed.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::csv_quotes::{Quotes, csv_unclosed};
use super::json_lines::{json_without_duplicates, number_tokens};
use crate::error::{Error, Result};

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
    /// The format a file name suggests: `.csv` and `.tsv` are CSV, `.jsonl`, `.ndjson` and
    /// `.json` are JSON Lines; any other name suggests none. (A `.txt` file could be either:
    /// name the format.)
    pub fn from_path(path: impl AsRef<Path>) -> Option<Self> {
        let ext = path.as_ref().extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" | "tsv" => Some(RecordFormat::Csv),
            "jsonl" | "ndjson" | "json" => Some(RecordFormat::JsonLines),
            _ => None,
        }
    }
}

/// A scalar of a record field.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Scalar {
    Int(i64),
    /// An integer literal int64 cannot hold, as written (`18446744073709551616`): text or a
    /// float where the spec says so, else an error.
    BigInt(String),
    Float(f64),
    Bool(bool),
    Str(String),
}

impl Scalar {
    /// The scalar's kind with an article (`an integer`, ...), for messages.
    pub(super) fn word(&self) -> &'static str {
        match self {
            Scalar::Int(_) | Scalar::BigInt(_) => "an integer",
            Scalar::Float(_) => "a float",
            Scalar::Bool(_) => "a boolean",
            Scalar::Str(_) => "a string",
        }
    }
}

/// A field of one record: its scalars, or why it cannot be a feature.
pub(super) type Field = std::result::Result<Vec<Scalar>, String>;

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
            let field = json_scalars(v, &mut scalars).map(|()| scalars);
            out.push((prefix.to_string(), field));
        }
    }
}

/// The scalars of a JSON value (arrays flattened row-major).
fn json_scalars(v: &Json, out: &mut Vec<Scalar>) -> std::result::Result<(), String> {
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
                out.push(Scalar::BigInt(n.to_string()));
            } else {
                out.push(Scalar::Float(n.as_f64().unwrap_or(f64::NAN)));
            }
            Ok(())
        }
        Json::String(s) => {
            out.push(Scalar::Str(s.clone()));
            Ok(())
        }
        Json::Array(items) => {
            if tfrecord_schema::ir::nested_shape(v, |j| j.as_array().map(Vec::as_slice)).is_none() {
                return Err(
                    "a nested list whose rows differ in length or depth has no flat \
                            layout: its row boundaries would be lost"
                        .into(),
                );
            }
            items.iter().try_for_each(|i| json_scalars(i, out))
        }
        Json::Object(_) => Err(
            "a list of objects cannot be a feature (a feature holds one list of numbers or \
             strings)"
                .into(),
        ),
    }
}

/// Gives back their digits to the integer literals of a JSON line past the range of u64 (or
/// below that of i64), which JSON parsers read as floats ([`Scalar::BigInt`]): such an integer
/// is an integer (text where a spec says `string`, an error where the field is `int64`), where
/// a float would make its field a float list. A float is matched to its literal by value;
/// when the line also holds another number of that value (a float literal, or another integer
/// that rounds to it), which scalar was which is lost, and the fields holding that value are
/// errors saying so.
fn mark_out_of_range_integers(fields: &mut [(String, Field)], line: &[u8]) {
    /// What the numbers of one value (read as floats) were written as.
    enum Written<'a> {
        /// Float literals only.
        Floats,
        /// One integer literal, as often as it comes.
        Integer(&'a str),
        /// Both, or two integer literals: the first integer.
        Mixed(&'a str),
    }
    #[allow(clippy::cast_precision_loss)]
    let limit = i64::MAX as f64;
    let whole_and_large = |x: f64| x.fract() == 0.0 && x.abs() >= limit;
    let large = |s: &Scalar| matches!(s, Scalar::Float(x) if whole_and_large(*x));
    if !fields
        .iter()
        .any(|(_, f)| f.as_ref().is_ok_and(|v| v.iter().any(large)))
    {
        return;
    }
    let mut by_value: HashMap<u64, Written<'_>> = HashMap::new();
    for (start, end) in number_tokens(line) {
        let token = std::str::from_utf8(&line[start..end]).unwrap_or_default();
        // Integers of i64's and u64's range are read as such, not as floats.
        if token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok() {
            continue;
        }
        let Ok(value) = token.parse::<f64>() else {
            continue;
        };
        if !whole_and_large(value) {
            continue;
        }
        let digits = token.strip_prefix('-').unwrap_or(token);
        let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let seen = by_value.remove(&value.to_bits());
        let now = match (seen, integer) {
            (None, true) => Written::Integer(token),
            (None | Some(Written::Floats), false) => Written::Floats,
            (Some(Written::Integer(t)), true) if t == token => Written::Integer(t),
            (Some(Written::Integer(t) | Written::Mixed(t)), _) => Written::Mixed(t),
            (Some(Written::Floats), true) => Written::Mixed(token),
        };
        by_value.insert(value.to_bits(), now);
    }
    for (_, field) in fields.iter_mut() {
        let Ok(scalars) = field else { continue };
        let mut mixed = None;
        for s in scalars.iter_mut() {
            let Scalar::Float(x) = s else { continue };
            match by_value.get(&x.to_bits()) {
                Some(Written::Integer(t)) => *s = Scalar::BigInt((*t).to_owned()),
                Some(Written::Mixed(t)) => mixed = Some(*t),
                _ => {}
            }
        }
        if let Some(token) = mixed {
            *field = Err(format!(
                "the line holds the integer {token}, past int64, and another number of the \
                 same value, and which is which is lost in reading it: write the integer as a \
                 string"
            ));
        }
    }
}

/// The message of a JSON syntax error without serde_json's own position (the caller gives
/// the line), with the column; and what to do about `NaN` and `Infinity`, which Python's
/// `json.dumps` writes by default but JSON does not have.
fn json_error(e: &serde_json::Error, line: &[u8]) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    let what = text.strip_suffix(&position).unwrap_or(&text);
    let at = line.get(e.column().saturating_sub(1)..).unwrap_or_default();
    let at = at.strip_prefix(b"-").unwrap_or(at);
    let hint = if at.starts_with(b"NaN") || at.starts_with(b"Infinity") {
        "; `NaN` and `Infinity` are not JSON (Python's `json.dumps` writes them unless \
         `allow_nan=False`): write null for a missing value, or the value as a string \
         (\"nan\", \"inf\") with a spec giving the field the dtype float"
    } else {
        ""
    };
    format!("invalid JSON: {what} at column {}{hint}", e.column())
}

/// The input, readable twice.
pub(super) enum Input {
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

    pub(super) fn len(&self) -> Option<u64> {
        match self {
            Input::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            Input::Memory(b) => Some(b.len() as u64),
        }
    }
}

/// The longest JSON line, and CSV record, read (1 GiB): a line is held whole, so a longer one
/// (a file of no line ends, `/dev/zero`) is an error rather than memory without bound.
pub(super) const MAX_LINE: u64 = 1 << 30;

/// One record of the input: its index, its 1-based line, and its fields (or why the whole
/// record cannot be read).
pub(super) struct RawRecord {
    pub(super) index: u64,
    pub(super) line: u64,
    pub(super) fields: std::result::Result<Vec<(String, Field)>, String>,
}

/// Calls `f` with each record of the input.
pub(super) fn for_each_record(
    input: &Input,
    format: RecordFormat,
    delimiter: u8,
    mut f: impl FnMut(RawRecord, u64) -> Result<()>,
) -> Result<()> {
    let reader = input.open()?;
    match format {
        RecordFormat::Csv => {
            let mut csv = csv::ReaderBuilder::new()
                .delimiter(delimiter)
                .flexible(false)
                .from_reader(Quotes::new(reader, delimiter));
            let headers: Vec<String> = match csv.headers() {
                Ok(h) => h.iter().map(str::to_string).collect(),
                Err(e) => {
                    let why = csv_unclosed(csv.get_ref()).unwrap_or_else(|| e.to_string());
                    return Err(Error::new(format!("cannot read the CSV header: {why}")));
                }
            };
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
                    // A quote never closed swallows the rest of the input into one field,
                    // which then reads as a record of the wrong length: say why.
                    let why = csv_unclosed(csv.get_ref()).unwrap_or_else(|| {
                        let line = e.position().map_or(0, |p| csv.get_ref().line_at(p.byte()));
                        match e.kind() {
                            // The csv crate's own message counts records from the header.
                            csv::ErrorKind::UnequalLengths {
                                expected_len, len, ..
                            } => format!(
                                "invalid CSV (line {line}): {len} field(s) where the header has \
                                 {expected_len}"
                            ),
                            csv::ErrorKind::Utf8 { err, .. } => format!(
                                "invalid CSV (line {line}): the field of column {:?} is not \
                                 valid UTF-8 (after its first {} bytes)",
                                headers.get(err.field()).map_or("?", String::as_str),
                                err.valid_up_to()
                            ),
                            _ => format!("invalid CSV (line {line}): {e}"),
                        }
                    });
                    Error::new(why).with_record(index)
                })?;
                if !more {
                    break;
                }
                let bytes = record.position().map_or(0, csv::Position::byte);
                let line = csv.get_ref().line_at(bytes);
                csv.get_mut().forget_before(bytes);
                let fields = headers
                    .iter()
                    .zip(record.iter())
                    .filter(|(_, cell)| !cell.is_empty())
                    .map(|(h, cell)| (h.clone(), Ok(vec![Scalar::Str(cell.to_string())])))
                    .collect();
                f(
                    RawRecord {
                        index,
                        line,
                        fields: Ok(fields),
                    },
                    bytes,
                )?;
                index += 1;
            }
            // The CSV reader ends a quoted field at the end of the input as if it were closed:
            // the rows after an unclosed quote would become part of one cell.
            if let Some(why) = csv_unclosed(csv.get_ref()) {
                // In the last record read, or in the header when there was none.
                let e = Error::new(why);
                return Err(match index.checked_sub(1) {
                    Some(last) => e.with_record(last),
                    None => e,
                });
            }
        }
        _ => {
            let mut index = 0u64;
            let mut bytes = 0u64;
            let mut reader = reader;
            let mut buf = Vec::new();
            for n in 0u64.. {
                buf.clear();
                let read = (&mut reader)
                    .take(MAX_LINE + 1)
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| Error::from(e).with_record(index))?;
                if read == 0 {
                    break;
                }
                if buf.len() as u64 > MAX_LINE {
                    return Err(Error::new(format!(
                        "line {} is longer than {} MiB, the most a JSON line may hold",
                        n + 1,
                        MAX_LINE >> 20
                    ))
                    .with_record(index));
                }
                let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
                bytes += line.len() as u64 + 1;
                // A byte-order mark before the first line is not part of it.
                let line = match (n, line) {
                    (0, [0xef, 0xbb, 0xbf, rest @ ..]) => rest,
                    (_, all) => all,
                };
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let fields = match json_without_duplicates(line) {
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
                        mark_out_of_range_integers(&mut out, line);
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
                    Err(e) => Err(json_error(&e, line)),
                };
                f(
                    RawRecord {
                        index,
                        line: n + 1,
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
