//! The `tfrecord` command: read, check and write TensorFlow TFRecord and OneFlow OFRecord files.
//!
//! ```text
//! tfrecord cat [--json] [--sequence] [-n N] FILE...      print every record (text or JSON Lines)
//! tfrecord count FILE...                                 number of records (total on the last line)
//! tfrecord verify [--decode] FILE...                     check framing and both CRCs of every record
//! tfrecord from-json [--sequence] -o OUT [IN|-]...       JSON Lines to records
//! tfrecord convert [--allow-lossy-double] IN... -o OUT   re-encode between containers / compressions
//! tfrecord gen [--check] SPEC... -o DIR                  Rust code from TOML feature specs
//! tfrecord parse --spec SPEC [--batch-size N] FILE...    tensors as tf.io.parse_example gives them
//! tfrecord infer [--sequence] FILE...                    a TOML spec describing the records
//! tfrecord from-avro --spec SPEC IN... -o OUT             Avro to records (or --tensors)
//! tfrecord from-records [--spec SPEC] IN -o OUT           JSON Lines / CSV to records
//! tfrecord from-images DIR -o OUT [--shards N]           one record per image, labels from folders
//! tfrecord index IN... [-o OUT]                          `offset size` per record to IN.idx (DALI, PyPI tfrecord)
//! ```
//!
//! Common flags: `--input-format` / `--output-format` `tfrecord|ofrecord` (default `tfrecord`);
//! `--compression none|gzip|zlib` (else from the file name: `.gz` gzip, `.zlib` / `.zz` zlib,
//! else none), which for `from-json` and `convert` applies to the output while `convert` takes
//! `--input-compression` for its inputs; `--level 0..9` for compressed output. File arguments
//! are paths, `-` is standard input / output, and a directory input stands for its `part-*`
//! files (a OneFlow data set).
//!
//! Errors go to standard error as `tfrecord: error: <message>`, naming file, byte offset, record
//! index and feature key where they apply; the exit status is 1 (2 for a misused command line).
//! A closed standard output (`tfrecord cat x | head`) ends the command quietly with status 0.

mod batch;
mod cli;
mod commands;
mod dataset;
mod error;
mod hint;
mod input;
mod interrupt;
mod output;
mod sharded;
mod spec;
mod stdio;
mod stdout;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::commands::{
    cat, convert, count, from_json, generate, import, index, infer, parquet, parse, verify,
};
use crate::error::{CliResult, report};

/// Runs the subcommand the command line names.
fn run(cli: &Cli) -> CliResult<ExitCode> {
    match &cli.command {
        Command::Cat(a) => cat::run(a),
        Command::Count(a) => count::run(a),
        Command::Verify(a) => verify::run(a),
        Command::FromJson(a) => from_json::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Gen(a) => generate::run(a),
        Command::Parse(a) => parse::run(a),
        Command::ToParquet(a) => parquet::to_parquet(a),
        Command::FromParquet(a) => parquet::from_parquet(a),
        Command::Infer(a) => infer::run(a),
        Command::FromAvro(a) => import::from_avro(a),
        Command::FromRecords(a) => import::from_records(a),
        Command::FromImages(a) => import::from_images(a),
        Command::Index(a) => index::run(a),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version: printed as asked, exit status 0.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // No command: the help, on standard error, as a misuse.
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            // A misused command line, worded by clap, in the tool's own error form.
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("tfrecord: error: {text}");
            return ExitCode::from(2);
        }
    };
    interrupt::install();
    let outcome = run(&cli);
    interrupt::wait_if_interrupted();
    match outcome {
        Ok(code) => code,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            report(&e);
            e.exit_code()
        }
    }
}
