//! `tfrecord cat`: every record as protobuf text format or as JSON Lines.

use std::io::{self, Write};
use std::process::ExitCode;

use tfrecord_core::text::c_escape;

use crate::cli::CatArgs;
use crate::dataset;
use crate::error::CliResult;
use crate::input::{Decoded, Flow, Location, RecordType, resolve_all};
use crate::stdout::with_stdout;

/// Says on standard error, the first time a JSON record holds a feature key that is not UTF-8,
/// how that key is written: the proto3 JSON mapping has no way to carry it.
fn warn_key_once(warned: &mut bool, record: &Decoded, loc: &Location<'_>) {
    if *warned {
        return;
    }
    let Some(key) = record.non_utf8_key() else {
        return;
    };
    *warned = true;
    let shown = c_escape(key);
    let _ = writeln!(
        io::stderr().lock(),
        "tfrecord: warning: {loc}: feature key \"{shown}\" is not UTF-8, \
         which JSON cannot carry; it is written escaped as in the text format (`{shown}`), and \
         `from-json` would read that back as those characters, not the original bytes (said \
         once, for the first such key)",
    );
}

/// `tfrecord cat`.
pub(crate) fn run(args: &CatArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let sources = resolve_all(&args.files)?;
    let mut warned = false;
    let mut line = Vec::new();
    with_stdout(|out| {
        dataset::for_each(
            &sources,
            &args.read,
            !args.no_verify_data_crc,
            &args.dataset,
            |bytes, loc| {
                if args.json {
                    line.clear();
                    // An Example in the layout TensorFlow writes, straight from its bytes;
                    // any other record decoded (the same text).
                    let direct = matches!(ty, RecordType::Example)
                        && tfrecord_core::json::write_example_bytes(bytes, &mut line);
                    if !direct {
                        let record = ty.decode(bytes, loc)?;
                        record.write_json(&mut line).map_err(|e| loc.apply(e))?;
                        warn_key_once(&mut warned, &record, loc);
                    }
                    line.push(b'\n');
                    out.write_all(&line)?;
                } else {
                    writeln!(out, "{}", ty.decode(bytes, loc)?.to_text())?;
                }
                Ok(Flow::Continue)
            },
        )?;
        Ok(ExitCode::SUCCESS)
    })
}
