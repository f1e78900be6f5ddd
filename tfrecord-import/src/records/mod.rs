//! JSON Lines and CSV records to `tf.train.Example`s (or `OFRecord`s), one per record, with
//! the type mapping of TensorFlow's record writers, in which every feature is an `int64_list`,
//! a `float_list` or a `bytes_list`:
//!
//! | record field | feature |
//! | --- | --- |
//! | integer (JSON integer, `-0` included, as Python's `json` reads it; CSV column of integers) | `int64_list` |
//! | float (JSON number with a fraction or exponent; CSV column of numbers) | `float_list` |
//! | string (CSV: any other column) | `bytes_list` (UTF-8) |
//! | boolean (`true` / `false`) | `int64_list` of 0 / 1, as [TensorFlow's guide][guide] maps `bool` |
//! | array (also nested and rectangular, row-major) of one of the above | a list of that kind |
//! | object | its fields, flattened to `parent/child` keys |
//! | `null`, empty CSV cell | no feature (absent) |
//! | empty array | an empty list of the field's kind in other records; when no record holds a value for it, no feature, with a warning |
//!
//! A field's list kind is decided over the whole input (two passes; standard input is read
//! into memory): a field holding integers in some records and floats in others is a float
//! feature everywhere, so that one `tf.io.parse_example` spec reads every record. In CSV every
//! cell is text, so a column is `int64` when every non-empty cell is an integer, `float` when
//! every one is a number (`nan` and `inf` included; digits beyond int64 are not, as a float
//! would round them, nor zero-padded digits such as `007`, whose zeros a number would drop),
//! `int64` 0/1 when every one is `true` or `false`, and bytes otherwise.
//!
//! What cannot be mapped is an error naming the input, the record and the field: a list of
//! objects, a list mixing strings with numbers, nested lists whose rows differ in length or
//! depth (their row boundaries would be lost), an integer beyond int64 (past u64 too, which
//! JSON parsers read as a float), a number beyond the
//! float's range (only `inf` and `nan` spelled out are those values), a JSON field holding
//! strings in one record and numbers in another, a value a spec's dtype or shape does not
//! take. A JSON object with a key given twice, and a CSV quote never closed, are invalid
//! input. With [`RecordOptions::skip_unmappable`] the field is left out instead (of that record,
//! or of every record for a field whose kinds conflict) and a warning names it.
//!
//! An optional spec ([`RecordSpec::from_record`], a record of a TOML spec file) forces dtypes
//! and shapes: each of its features reads the field its `source` names (else its key), stored
//! under its key; `fixed` features need exactly `shape`'s count of values and take their
//! `default` when the field is absent (no default: an error; `optional`: left out), `var`
//! features take any count. Other fields are mapped by the table above (or are unmappable with
//! `deny_unknown_keys = true`); one whose name is the key of a spec feature read from another
//! field is unmappable too, since one of the two values would be lost. Text read into a `float`
//! (a CSV cell, a JSON string) is rounded once, straight to the nearest float, as
//! `tf.io.decode_csv` reads it. A JSON number read into `string` is its text as Python's `str`
//! writes it (`7`, `0.5`, `1e+300`, `1e-07`), and a whole float (`9.1e18`) reads into `int64`.
//!
//! [guide]: https://www.tensorflow.org/tutorials/load_data/tfrecord

mod csv_quotes;
mod import;
mod input;
mod json_lines;
mod mapping;
mod spec;

pub use import::{RecordOptions, RecordSummary, import_records};
pub use input::RecordFormat;
pub use spec::RecordSpec;
