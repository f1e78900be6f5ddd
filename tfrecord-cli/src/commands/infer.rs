//! `tfrecord infer`: a TOML spec from the records themselves. The rules live in
//! `tfrecord_schema::infer`; this module decodes records with the generic protobuf types and
//! reports what each feature holds.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use tfrecord_core::Error;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::text::c_escape;
use tfrecord_schema::infer::{Inferred, Inferrer, ListType, Observed};
use tfrecord_schema::ir::{Dialect, RecordKind, Schema};
use tfrecord_schema::symbol;

use crate::cli::{InferArgs, ReadOpts};
use crate::dataset::{self, DatasetArgs};
use crate::error::{CliError, CliResult};
use crate::input::{Decoded, Flow, RecordType, Source, resolve_all};
use crate::stdout::with_stdout;

fn tf_observed(f: &tensorflow::Feature) -> Observed {
    use tensorflow::feature::Kind;
    match &f.kind {
        Some(Kind::Int64List(l)) => Observed::numbers(ListType::Int64, l.value.len()),
        Some(Kind::FloatList(l)) => Observed::numbers(ListType::Float, l.value.len()),
        Some(Kind::BytesList(l)) => Observed::bytes(&l.value),
        None => Observed::no_kind(),
    }
}

fn of_observed(f: &oneflow::Feature) -> Observed {
    use oneflow::feature::Kind;
    match &f.kind {
        Some(Kind::Int64List(l)) => Observed::numbers(ListType::Int64, l.value.len()),
        Some(Kind::Int32List(l)) => Observed::numbers(ListType::Int32, l.value.len()),
        Some(Kind::FloatList(l)) => Observed::numbers(ListType::Float, l.value.len()),
        Some(Kind::DoubleList(l)) => Observed::numbers(ListType::Double, l.value.len()),
        Some(Kind::BytesList(l)) => Observed::bytes(&l.value),
        None => Observed::no_kind(),
    }
}

/// The default record name: the first file's name without its record and compression
/// extensions, in UpperCamelCase (`train.tfrecord.gz` -> `Train`), else `Record`.
pub(crate) fn default_name(first: Option<&Path>) -> String {
    let Some(name) = first.and_then(Path::file_name).and_then(|n| n.to_str()) else {
        return "Record".to_string();
    };
    let mut stem = name;
    loop {
        let lower = stem.to_ascii_lowercase();
        let cut = [
            ".gz",
            ".gzip",
            ".zlib",
            ".zz",
            ".tfrecord",
            ".tfrecords",
            ".tfrec",
            ".ofrecord",
            ".record",
            ".records",
        ]
        .iter()
        .find(|ext| lower.ends_with(*ext));
        match cut {
            Some(ext) => stem = &stem[..stem.len() - ext.len()],
            None => break,
        }
    }
    let candidate = symbol::type_name(stem);
    if symbol::is_type_name(&candidate) {
        candidate
    } else {
        "Record".to_string()
    }
}

/// A feature key as a spec key: the key when it is UTF-8; else `None`, the key noted in
/// `skipped` (a spec key is text, so no spec can name it).
fn spec_key<'a>(key: &'a [u8], skipped: &mut BTreeSet<Vec<u8>>) -> Option<&'a str> {
    let text = std::str::from_utf8(key).ok();
    if text.is_none() {
        skipped.insert(key.to_vec());
    }
    text
}

/// A key or file name in a comment: as Rust would quote it, so no control character or line
/// break gets through.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// Infers the spec of the records of `sources` (read as `read` and `ds` say): the record, and
/// the keys left out for not being UTF-8. A record that takes the distinct keys past
/// `max_features` is an error naming it.
pub(crate) fn infer_record(
    sources: &[Source],
    read: &ReadOpts,
    verify: bool,
    ds: &DatasetArgs,
    (ty, max_features): (RecordType, u64),
    name: &str,
) -> CliResult<(Inferred, BTreeSet<Vec<u8>>)> {
    let (kind, dialect) = match ty {
        RecordType::SequenceExample => (RecordKind::SequenceExample, Dialect::Both),
        RecordType::OfRecord => (RecordKind::Example, Dialect::Of),
        RecordType::Example => (RecordKind::Example, Dialect::Both),
    };
    let mut inferrer = Inferrer::new(kind).dialect(dialect);
    let mut not_utf8: BTreeSet<Vec<u8>> = BTreeSet::new();
    {
        dataset::for_each(sources, read, verify, ds, |bytes, loc| {
            let skip = &mut not_utf8;
            let at = || loc.to_string();
            match ty.decode(bytes, loc)? {
                Decoded::Example(e) => {
                    let features = e.features.unwrap_or_default().feature;
                    inferrer.add_example_at(
                        features
                            .iter()
                            .filter_map(|(k, f)| Some((spec_key(k, skip)?, tf_observed(f)))),
                        at,
                    );
                }
                Decoded::OfRecord(r) => {
                    inferrer.add_example_at(
                        r.feature
                            .iter()
                            .filter_map(|(k, f)| Some((spec_key(k, skip)?, of_observed(f)))),
                        at,
                    );
                }
                Decoded::SequenceExample(s) => {
                    let context = s.context.unwrap_or_default().feature;
                    let lists = s.feature_lists.unwrap_or_default().feature_list;
                    let mut lists_skipped = BTreeSet::new();
                    inferrer.add_sequence_example_at(
                        context
                            .iter()
                            .filter_map(|(k, f)| Some((spec_key(k, skip)?, tf_observed(f)))),
                        lists.iter().filter_map(|(k, l)| {
                            Some((
                                spec_key(k, &mut lists_skipped)?,
                                l.feature.iter().map(tf_observed),
                            ))
                        }),
                        at,
                    );
                    skip.append(&mut lists_skipped);
                }
            }
            let keys = inferrer.keys() + skip.len();
            if u64::try_from(keys).unwrap_or(u64::MAX) > max_features {
                return Err(CliError::Core(loc.apply(Error::feature(format!(
                    "the records hold more than {max_features} distinct feature keys ({keys} \
                     by this record), too many for a spec: pass --max-features to raise the \
                     limit, or a spec (--spec) naming the features to read"
                )))));
            }
            Ok(Flow::Continue)
        })?;
    }
    Ok((inferrer.finish(name), not_utf8))
}

/// `tfrecord infer`.
pub(crate) fn run(args: &InferArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let sources = resolve_all(&args.files)?;
    let name = match &args.record {
        Some(n) if symbol::is_type_name(n) => n.clone(),
        Some(n) => {
            // A keyword (`Self`) stays one in UpperCamelCase: suggested with a `_` after it.
            let mut suggestion = symbol::type_name(n);
            if !symbol::is_type_name(&suggestion) {
                suggestion.push('_');
            }
            if !symbol::is_type_name(&suggestion) {
                suggestion = "Record".into();
            }
            return Err(CliError::Usage(format!(
                "--record `{n}` is not a Rust type name (UpperCamelCase, such as `{suggestion}`)"
            )));
        }
        None => default_name(args.files.first().map(std::path::PathBuf::as_path)),
    };
    let verify = !args.no_verify_data_crc;
    let (inferred, not_utf8) = infer_record(
        &sources,
        &args.read,
        verify,
        &args.dataset,
        (ty, args.max_features),
        &name,
    )?;
    let shown: Vec<String> = sources
        .iter()
        .map(|s| s.name().display().to_string())
        .collect();
    let what = match ty {
        RecordType::SequenceExample => "tf.train.SequenceExample",
        RecordType::OfRecord => "OFRecord",
        RecordType::Example => "tf.train.Example",
    };
    let mut header = format!(
        "# Inferred by `tfrecord infer` from {} {what} record{} of {}.\n\
         # It says what these records hold, not what others will: review the dtypes, shapes and\n\
         # presence before relying on it.\n",
        inferred.records,
        if inferred.records == 1 { "" } else { "s" },
        shown.join(", ")
    );
    for (key, why) in &inferred.notes {
        header.push_str(&format!("# Left out: {}: {why}.\n", quoted(key)));
    }
    for key in &not_utf8 {
        header.push_str(&format!(
            "# Left out: \"{}\" (escaped as in the text format): the key is not UTF-8, and a \
             spec key is text; types and parsers of this spec skip it.\n",
            c_escape(key)
        ));
    }
    let schema = Schema {
        records: vec![inferred.record],
    };
    let text = format!("{header}\n{}", schema.to_toml());
    // The output must read back; a failure here is a bug, reported rather than printed.
    if let Err(d) = Schema::from_toml_str(&text, "<inferred>") {
        return Err(CliError::Failed(format!(
            "internal error: the inferred spec does not read back:\n{d}"
        )));
    }
    with_stdout(|out| {
        out.write_all(text.as_bytes())?;
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names() {
        let name = |s: &str| default_name(Some(Path::new(s)));
        assert_eq!(name("data/train.tfrecord.gz"), "Train");
        assert_eq!(name("examples.TFRecord"), "Examples");
        assert_eq!(name("part-00000"), "Part00000");
        assert_eq!(name("-"), "Record");
        assert_eq!(name("42.tfrecord"), "Record");
        assert_eq!(default_name(None), "Record");
    }
}
