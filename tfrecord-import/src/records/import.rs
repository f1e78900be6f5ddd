//! The import: two passes over the input (the kind of every field, then the conversion) and
//! one output record per input record.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use tfrecord_schema::ir::Presence;

use super::input::{Input, RecordFormat, Scalar, for_each_record};
use super::mapping::{
    ListKind, cell_kinds, convert_to_dtype, convert_to_kind, kind_word, list_kind, unify,
};
use super::spec::RecordSpec;
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::row::FeatureRow;

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

/// The most bytes of an input read into memory (standard input, a FIFO, a device): 1 GiB.
const MAX_IN_MEMORY: u64 = 1 << 30;

/// All of `r`, at most [`MAX_IN_MEMORY`] bytes.
fn read_bounded(r: impl Read) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(MAX_IN_MEMORY + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_IN_MEMORY {
        return Err(Error::new(format!(
            "the input is read twice, and one that is not a file (standard input, a FIFO) is \
             held in memory for it, at most {} MiB: write it to a file first",
            MAX_IN_MEMORY >> 20
        )));
    }
    Ok(buf)
}

/// Reads JSON Lines or CSV records (`-`: standard input) and calls `sink` with one output
/// record each, in order; `warn` gets every unmappable field or record that is skipped. The
/// input is read twice (the first pass decides each field's kind): standard input, a FIFO or
/// a device is read into memory first, at most 1 GiB. A JSON line, or a CSV record, may be at
/// most 1 GiB long.
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
    let (stdin, shown) = crate::input_name(input);
    let located = |e: Error| e.with_path(shown);
    // Read twice: standard input, a FIFO or a device is read into memory first (once), at
    // most MAX_IN_MEMORY bytes; a file is opened again.
    let source = if stdin {
        Input::Memory(read_bounded(io::stdin().lock()).map_err(located)?)
    } else if std::fs::metadata(input).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let file = File::open(input).map_err(|e| located(e.into()))?;
        Input::Memory(read_bounded(file).map_err(located)?)
    } else {
        if !input.is_file() {
            File::open(input).map_err(|e| located(e.into()))?;
        }
        Input::File(input.to_path_buf())
    };
    let named = opts.format.or_else(|| RecordFormat::from_path(input));
    let format = named.unwrap_or_default();
    // Read as JSON Lines for want of a format: a first record that is not JSON says so.
    let guessed = |msg: String, index: u64| {
        if named.is_none() && index == 0 && msg.starts_with("invalid JSON") {
            format!(
                "{msg}; read as JSON Lines, as neither --format nor the file's name says \
                 otherwise: pass --format csv for CSV"
            )
        } else {
            msg
        }
    };
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
    let mut kinds: BTreeMap<String, ListKind> = BTreeMap::new();
    // CSV: (every cell an integer, a number, a boolean) per column.
    let mut csv_kinds: BTreeMap<String, (bool, bool, bool)> = BTreeMap::new();
    // JSON fields met only as empty lists, with the first record that holds one.
    let mut empty: BTreeMap<String, u64> = BTreeMap::new();
    // The feature key each spec feature writes, and the field it is read from.
    let spec_keys: BTreeMap<&str, &str> = spec
        .rules
        .iter()
        .map(|(source, rule)| (rule.key.as_str(), source.as_str()))
        .collect();
    // Fields not in the spec whose own key a spec feature writes: with the first record that
    // holds one, and what it clashes with.
    let mut clashes: BTreeMap<String, (u64, String)> = BTreeMap::new();
    for_each_record(&source, format, delimiter, |raw, _| {
        let Ok(fields) = &raw.fields else {
            return Ok(());
        };
        for (key, field) in fields {
            if spec.rules.contains_key(key) {
                continue;
            }
            if let Some(from) = spec_keys.get(key.as_str())
                && !clashes.contains_key(key)
            {
                let msg = format!(
                    "is written as feature `{key}`, the key of the spec's feature read from field \
                     `{from}` (line {}): one of the two values would be lost; give this field a \
                     feature of its own in the spec (`source = \"{key}\"` under another key) to \
                     keep it",
                    raw.line
                );
                clashes.insert(key.clone(), (raw.index, msg));
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
                if scalars.is_empty() {
                    empty.entry(key.clone()).or_insert(raw.index);
                }
                continue;
            };
            let entry = kinds.entry(key.clone()).or_insert_with(|| k.clone());
            if let ListKind::Conflict(..) = entry {
                continue;
            }
            match unify(entry, &k) {
                Some(u) => *entry = u,
                None => {
                    *entry = ListKind::Conflict(
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
            ListKind::Int
        } else if f {
            ListKind::Float
        } else if b {
            ListKind::Bool
        } else {
            ListKind::Bytes
        };
        kinds.insert(key, k);
    }
    for (key, (record, msg)) in clashes {
        kinds.insert(key, ListKind::Conflict(record, msg));
    }
    // A field that is never more than an empty list has no kind to write it with: said, not
    // left out silently.
    for (key, record) in empty.iter().filter(|(k, _)| !kinds.contains_key(*k)) {
        warn(&located(
            Error::new(
                "holds only empty lists, in every record: with no value there is no list kind \
                 to write them as, so the field is left out (give it a dtype in a spec, --spec, \
                 to keep it)",
            )
            .with_record(*record)
            .with_field(key.clone()),
        ));
    }
    for (key, kind) in &kinds {
        if let ListKind::Conflict(record, msg) = kind {
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
    for_each_record(&source, format, delimiter, |raw, bytes| {
        progress.set(bytes);
        let at = |e: Error| located(e.with_record(raw.index));
        let fields = match raw.fields {
            Ok(f) => f,
            Err(msg) => {
                let msg = guessed(msg, raw.index);
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
                    let values = convert_to_dtype(&scalars, rule.dtype)?;
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
                        Some(ListKind::Conflict(..)) => Ok(None),
                        Some(k) => {
                            convert_to_kind(&scalars, k, csv).map(|v| Some((key.clone(), v)))
                        }
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
            match (&rule.presence, &rule.default) {
                (_, Some(v)) => {
                    row.insert(rule.key.clone(), v.clone());
                }
                (Presence::Required, None) => {
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
    use tfrecord_core::parse::Values;
    use tfrecord_schema::ir;

    use super::*;

    fn run(text: &str, opts: &RecordOptions) -> (Result<Vec<FeatureRow>>, Vec<String>) {
        run_bytes(text.as_bytes(), opts)
    }

    /// The spec of the only record of the TOML spec `toml`.
    fn spec(toml: &str) -> RecordSpec {
        let schema = ir::Schema::from_toml_str(toml, "r.toml").unwrap();
        RecordSpec::from_record(&schema.records[0]).unwrap()
    }

    fn run_bytes(text: &[u8], opts: &RecordOptions) -> (Result<Vec<FeatureRow>>, Vec<String>) {
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

    /// The integer literal `-0` is the integer 0, as Python's `json.loads` reads it (a float
    /// list would round every large integer of the field): `-0.0` and `-0e0` stay floats.
    #[test]
    fn the_integer_minus_zero_is_an_integer() {
        let (rows, _) = run(
            "{\"k\": 16777217, \"s\": \"-0\"}\n{\"k\": -0, \"l\": [1, -0], \"s\": \"-0\"}\n{\"f\": -0.0, \"g\": [-0e0, -0], \"k\": 2}\n",
            &RecordOptions::default(),
        );
        let rows = rows.unwrap();
        assert_eq!(rows[0].features["k"], Values::Int64(vec![16_777_217]));
        assert_eq!(rows[1].features["k"], Values::Int64(vec![0]));
        assert_eq!(rows[1].features["l"], Values::Int64(vec![1, 0]));
        assert_eq!(rows[1].features["s"], Values::from(&b"-0"[..]));
        let Values::Float32(f) = &rows[2].features["f"] else {
            panic!("{:?}", rows[2].features["f"]);
        };
        assert!(f[0] == 0.0 && f[0].is_sign_negative());
        let Values::Float32(g) = &rows[2].features["g"] else {
            panic!("{:?}", rows[2].features["g"]);
        };
        assert!(g[0].is_sign_negative() && g[1] == 0.0 && !g[1].is_sign_negative());
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
        // Past u64 and below i64, JSON parsers give floats: still an integer that does not
        // fit, not a float field. A float literal of that size, or digits in a string, are
        // what they say.
        for (text, big) in [
            (
                "{\"a\": 1}\n{\"a\": 18446744073709551616}\n",
                "18446744073709551616",
            ),
            (
                "{\"a\": [1, -9223372036854775809]}\n",
                "-9223372036854775809",
            ),
        ] {
            let (r, _) = run(text, &RecordOptions::default());
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "field \"a\": the integer {big} does not fit in int64"
                )),
                "{e}"
            );
        }
        // Python's `json.dumps` writes NaN and Infinity: not JSON, and the error says what to
        // write instead, at the line and column (without serde_json's own line).
        let (r, _) = run("{}\n{\"x\": NaN}\n", &RecordOptions::default());
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("invalid JSON: expected value at column 7; `NaN` and `Infinity` are not")
                && e.ends_with("(line 2)")
                && !e.contains("line 1"),
            "{e}"
        );
        let (r, _) = run("{\"x\": -Infinity}\n", &RecordOptions::default());
        assert!(r.unwrap_err().to_string().contains("allow_nan=False"));
        let (r, _) = run(
            "{\"a\": 1e19, \"s\": \"184467440737095516160\"}\n",
            &RecordOptions::default(),
        );
        let rows = r.unwrap();
        assert_eq!(rows[0].features.len(), 2);
    }

    /// A field that is only ever an empty list has no kind: left out with a warning; one that
    /// holds values elsewhere is an empty list of their kind.
    #[test]
    fn fields_of_empty_lists_only_are_left_out_with_a_warning() {
        let (rows, warnings) = run(
            "{\"a\": [], \"b\": []}\n{\"b\": [1]}\n",
            &RecordOptions::default(),
        );
        let rows = rows.unwrap();
        assert!(!rows[0].features.contains_key("a"));
        assert_eq!(rows[0].features["b"], Values::Int64(vec![]));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("record 0: field \"a\": holds only empty lists"),
            "{warnings:?}"
        );
    }

    /// An unclosed quote would make every row after it part of one cell: an error naming the
    /// line it opened on. Quotes closed, doubled or inside unquoted cells are not.
    #[test]
    fn an_unclosed_csv_quote_is_an_error() {
        let opts = RecordOptions {
            format: Some(RecordFormat::Csv),
            ..RecordOptions::default()
        };
        for (text, line) in [
            ("a,b\n1,\"abc\n2,3\n4,5\n", 2),
            // In the first column: the rest reads as a record of one field.
            ("a,b\n\"1,x\n2,3\n", 2),
            ("a,b\n1,2\n\"3\n", 3),
            // In the header.
            ("\"a,b\n1,2\n", 1),
        ] {
            let (r, _) = run(text, &opts);
            let e = r.expect_err(text).to_string();
            assert!(
                e.contains(&format!(
                    "line {line}): a quoted field opened on line {line} is never closed"
                )),
                "{text:?}: {e}"
            );
        }
        let (rows, _) = run(
            "\u{feff}\"a\",b\n1,\"x \"\"y\"\" \nz\"\r\n2,un\"quoted\n",
            &opts,
        );
        let rows = rows.expect("every quote closed");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].features["b"], Values::from(&b"x \"y\" \nz"[..]));
        assert_eq!(rows[1].features["b"], Values::from(&b"un\"quoted"[..]));
    }

    /// A number beyond the float's range is refused, whether written out or too large even for
    /// a double, in CSV and JSON alike; only `inf` and `nan` spelled out are those values.
    #[test]
    fn numbers_beyond_the_float_range_are_refused() {
        let csv = RecordOptions {
            format: Some(RecordFormat::Csv),
            ..RecordOptions::default()
        };
        for cell in ["3.5e38", "1e400", "-1e39"] {
            let (r, _) = run(&format!("x\n1.5\n{cell}\n"), &csv);
            let e = r.expect_err(cell).to_string();
            assert!(
                e.contains(&format!("{cell} is beyond the range of a float")),
                "{cell}: {e}"
            );
        }
        let (rows, _) = run("x\n1.5\ninf\n-Infinity\nnan\n", &csv);
        let rows = rows.expect("spelled out");
        assert_eq!(rows[1].features["x"], Values::Float32(vec![f32::INFINITY]));
        let (r, _) = run("{\"x\": 1.5}\n{\"x\": 1e39}\n", &RecordOptions::default());
        let e = r.expect_err("json").to_string();
        assert!(e.contains("1e39 is beyond the range of a float"), "{e}");
    }

    /// JSON Lines as protobuf's and Python's readers take them: a byte-order mark is not part of
    /// the first line; a key given twice is refused, not the last kept; nested lists are
    /// flattened only when rectangular (else their row boundaries would be lost).
    #[test]
    fn json_lines_refuse_what_would_be_lost() {
        let (rows, _) = run("\u{feff}{\"a\": 1}\n", &RecordOptions::default());
        assert_eq!(
            rows.expect("a BOM")[0].features["a"],
            Values::Int64(vec![1])
        );
        let (r, _) = run("{\"a\": 1, \"a\": 2}\n", &RecordOptions::default());
        let e = r.expect_err("duplicate").to_string();
        assert!(e.contains("duplicate key \"a\""), "{e}");
        for ragged in ["[[1, 2, 3], [4]]", "[1, [2, 3]]"] {
            let (r, _) = run(&format!("{{\"m\": {ragged}}}\n"), &RecordOptions::default());
            let e = r.expect_err(ragged).to_string();
            assert!(
                e.contains("rows differ in length or depth"),
                "{ragged}: {e}"
            );
        }
        let (rows, _) = run(
            "{\"m\": [[], []]}\n{\"m\": [[1]]}\n",
            &RecordOptions::default(),
        );
        assert_eq!(
            rows.expect("rectangular")[1].features["m"],
            Values::Int64(vec![1])
        );
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
        // Digits beyond int64 would be rounded by a float: the column stays text.
        let (rows, _) = run("big,f\n99999999999999999999,1e20\n1,-2\n", &opts);
        let rows = rows.unwrap();
        let big = &rows[0].features["big"];
        assert_eq!(big, &Values::from(&b"99999999999999999999"[..]));
        assert_eq!(rows[1].features["big"], Values::from(&b"1"[..]));
        assert_eq!(rows[0].features["f"], Values::Float32(vec![1e20]));
        // Read straight to the nearest float, as `tf.io.decode_csv` reads it: just past the
        // halfway point between 1 and the next float, which a double would round down to.
        let (rows, _) = run("x\n1.00000005960464477539062500001\n1.5\n", &opts);
        let rows = rows.unwrap();
        assert_eq!(
            rows[0].features["x"],
            Values::Float32(vec![f32::from_bits(0x3f80_0001)])
        );
        // Zero-padded codes keep their zeros: the column stays text. A lone 0 is a number.
        let (rows, _) = run("zip,n,x\n007,0,-01\n10,-0,0.5\n", &opts);
        let rows = rows.unwrap();
        assert_eq!(rows[0].features["zip"], Values::from(&b"007"[..]));
        assert_eq!(rows[1].features["zip"], Values::from(&b"10"[..]));
        assert_eq!(rows[1].features["n"], Values::Int64(vec![0]));
        assert_eq!(rows[0].features["x"], Values::from(&b"-01"[..]));
        let (r, _) = run("a,a\n1,2\n", &opts);
        assert!(r.unwrap_err().to_string().contains("both named"));
        let (r, _) = run("a,b\n1,2\n3\n", &opts);
        assert!(r.unwrap_err().to_string().contains("invalid CSV"));
        // A cell that is not UTF-8: its line and column, counted once (the csv crate's own
        // message counts records from the header).
        let (r, _) = run_bytes(b"a,b\n1,caf\xe9\n", &opts);
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("record 0: invalid CSV (line 2): the field of column \"b\" is not valid UTF-8 (after its first 3 bytes)")
                && !e.contains("record 1"),
            "{e}"
        );
    }

    #[test]
    fn a_spec_forces_dtypes_and_shapes() {
        let opts = RecordOptions {
            spec: Some(spec(
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
            )),
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

    /// The line of a record is the line it starts on, whatever the line ends (`\r\n`, a
    /// `\r` alone) and blank lines before it (the `csv` crate's own count is off there).
    #[test]
    fn csv_lines_are_counted_as_python_counts_them() {
        let opts = RecordOptions {
            spec: Some(spec("[records.R.features.b]\ndtype = \"int64\"\n")),
            format: Some(RecordFormat::Csv),
            ..RecordOptions::default()
        };
        for (text, line) in [
            (&b"a,b\r\n1,2\r\n3,x\r\n"[..], 3),
            (b"a,b\n1,2\n\n\n3,x\n", 5),
            (b"a,b\r\n1,2\r\n\r\n3,x\r\n", 4),
            (b"a,b\r1,2\r3,x\r", 3),
            (b"\xef\xbb\xbfa,b\n1,2\n\n3,x\n", 4),
            (b"a,b\n1,2\n\"q\n\nq\",x\n", 3),
        ] {
            let (r, _) = run_bytes(text, &opts);
            let e = r.unwrap_err().to_string();
            assert!(e.ends_with(&format!("(line {line})")), "{text:?}: {e}");
        }
        let (r, _) = run_bytes(b"a,b\r\n1,2\r\n\r\n3\r\n", &opts);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("invalid CSV (line 4): 1 field(s)"), "{e}");
        let (r, _) = run_bytes(b"a,b\r1,2\r3,\"x\r4,5\r", &opts);
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("a quoted field opened on line 3 is never closed"),
            "{e}"
        );
    }

    /// An integer past int64 is an integer, as Python's `json` reads it: its digits where the
    /// spec says `string`, its nearest float where `float`, an error naming it where `int64`.
    #[test]
    fn integers_past_int64_read_into_string_and_float() {
        let opts = RecordOptions {
            spec: Some(spec(
                r#"
[records.R.features.s]
dtype = "string"
kind = "var"
[records.R.features.f]
dtype = "float"
kind = "var"
[records.R.features.i]
dtype = "int64"
optional = true
"#,
            )),
            ..RecordOptions::default()
        };
        let (rows, _) = run(
            "{\"s\": [123456789012345678901234567890, 18446744073709551615], \"f\": [9223372036854775808, -9223372036854775809, 18446744073709551616]}\n",
            &opts,
        );
        let rows = rows.unwrap();
        assert_eq!(
            rows[0].features["s"],
            Values::Bytes(
                [
                    &b"123456789012345678901234567890"[..],
                    b"18446744073709551615"
                ]
                .into_iter()
                .collect()
            )
        );
        // Python: float(9223372036854775808) etc., as float32.
        assert_eq!(
            rows[0].features["f"],
            Values::Float32(vec![9.223_372e18, -9.223_372e18, 1.844_674_4e19])
        );
        for (line, big) in [
            (
                "{\"s\": [], \"f\": [], \"i\": 18446744073709551616}\n",
                "18446744073709551616",
            ),
            (
                "{\"s\": [], \"f\": [], \"i\": 9223372036854775808}\n",
                "9223372036854775808",
            ),
        ] {
            let (r, _) = run(line, &opts);
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "field \"i\": the integer {big} does not fit in int64"
                )),
                "{e}"
            );
        }
        // One integer given twice is that integer twice.
        let (rows, _) = run(
            "{\"s\": [18446744073709551616, 18446744073709551616], \"f\": []}\n",
            &opts,
        );
        assert_eq!(
            rows.unwrap()[0].features["s"],
            Values::Bytes([&b"18446744073709551616"[..]; 2].into_iter().collect())
        );
        // The same value as a float and as an integer past int64 in one line: which is which
        // is lost in reading, and said so.
        let (r, _) = run(
            "{\"s\": [], \"f\": [1e20], \"i\": 100000000000000000000}\n",
            &opts,
        );
        let e = r.unwrap_err().to_string();
        assert!(e.contains("which is which is lost"), "{e}");
    }

    /// A field the spec does not read, whose own key a spec feature writes (read from another
    /// field), would lose one of the two values: an error, or with `skip_unmappable` the field
    /// left out with a warning; never one value silently replacing the other.
    #[test]
    fn a_field_whose_key_a_spec_feature_writes_is_refused() {
        let schema = ir::Schema::from_toml_str(
            "[records.R.features]\nlabel = { source = \"id\", dtype = \"int64\" }\n",
            "r.toml",
        )
        .unwrap();
        let spec = RecordSpec::from_record(&schema.records[0]).unwrap();
        for (format, text) in [
            (RecordFormat::Csv, "id,label\n1,cat\n2,dog\n"),
            (
                RecordFormat::JsonLines,
                "{\"id\": 1, \"label\": \"cat\"}\n{\"label\": \"dog\", \"id\": 2}\n",
            ),
        ] {
            let opts = RecordOptions {
                spec: Some(spec.clone()),
                format: Some(format),
                ..RecordOptions::default()
            };
            let (r, _) = run(text, &opts);
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains("record 0: field \"label\": is written as feature `label`"),
                "{e}"
            );
            assert!(e.contains("read from field `id`"), "{e}");
            let opts = RecordOptions {
                skip_unmappable: true,
                ..opts
            };
            let (rows, w) = run(text, &opts);
            let rows = rows.unwrap();
            assert_eq!(rows[0].features["label"], Values::Int64(vec![1]));
            assert_eq!(rows[1].features["label"], Values::Int64(vec![2]));
            assert_eq!(w.len(), 1, "{w:?}");
            assert!(w[0].contains("left out of every record"), "{w:?}");
        }
    }
}
