//! `tfrecord index`: the text index (`offset size` per record) of each record file.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tfrecord_core::RecordReader;
use tfrecord_core::index::write_index;

use crate::cli::IndexArgs;
use crate::error::{CliError, CliResult, report};
use crate::input::{Source, reader_options, resolve_all};
use crate::output::write_text_file;
use crate::stdio::{STDIN_NAME, STDOUT_NAME, is_dash};

/// `tfrecord index`.
pub(crate) fn run(args: &IndexArgs) -> CliResult<ExitCode> {
    let sources = resolve_all(&args.inputs)?;
    if args.output.is_some() && sources.len() != 1 {
        return Err(CliError::Usage(format!(
            "-o names the index of one input, and there are {} (without -o each input's index \
             goes to IN.idx)",
            sources.len()
        )));
    }
    if let [one] = &sources[..] {
        return index_one(args, one).map(|()| ExitCode::SUCCESS);
    }
    // Each input is indexed on its own: one that fails is reported, and the others are still
    // indexed (as `verify` goes on after a bad file); the command then fails.
    let mut failed = 0usize;
    for source in &sources {
        match index_one(args, source) {
            Ok(()) => {}
            Err(e @ (CliError::Usage(_) | CliError::Output(_))) => return Err(e),
            Err(e) => {
                report(&e);
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(CliError::Failed(format!(
            "{failed} of {} inputs not indexed (each error above); no index was written for them",
            sources.len()
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the index of one input.
fn index_one(args: &IndexArgs, source: &Source) -> CliResult<()> {
    let dest = destination(args.output.as_deref(), source)?;
    let opts = reader_options(&args.read, source, true);
    let out_name = if is_dash(&dest) {
        PathBuf::from(STDOUT_NAME)
    } else {
        dest.clone()
    };
    write_text_file(&dest, |out| {
        match source {
            Source::Stdin => {
                let stdin = io::stdin().lock();
                let mut records = RecordReader::new(stdin, opts).with_path(STDIN_NAME);
                write_index(&mut records, out, &out_name)?;
            }
            Source::File(path) => {
                let mut records = RecordReader::open(path, opts)?;
                write_index(&mut records, out, &out_name)?;
            }
        }
        Ok(())
    })
}

/// Where the index of `source` goes: `-o`, else the input's name with `.idx` added.
fn destination(output: Option<&Path>, source: &Source) -> CliResult<PathBuf> {
    let dest = match (output, source) {
        (Some(out), _) => out.to_path_buf(),
        (None, Source::File(path)) => {
            let mut name = OsString::from(path.as_os_str());
            name.push(".idx");
            PathBuf::from(name)
        }
        (None, Source::Stdin) => {
            return Err(CliError::Usage(
                "standard input has no file name to add .idx to: name the index with -o".into(),
            ));
        }
    };
    if !is_dash(&dest) && dest.is_dir() {
        return Err(CliError::Usage(format!(
            "{}: a directory: the index is one file, so give a file name",
            dest.display()
        )));
    }
    if let Source::File(path) = source
        && let (Ok(a), Ok(b)) = (dest.canonicalize(), path.canonicalize())
        && a == b
    {
        return Err(CliError::Usage(format!(
            "{}: the index would replace the records it indexes; name another file with -o",
            dest.display()
        )));
    }
    Ok(dest)
}
