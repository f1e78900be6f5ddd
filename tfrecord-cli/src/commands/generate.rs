//! `tfrecord gen`: Rust code from TOML feature specs, through the same `Builder` a build
//! script uses.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use tfrecord_schema::Builder;

use crate::cli::GenArgs;
use crate::error::{CliError, CliResult};

/// `tfrecord gen`.
pub(crate) fn run(args: &GenArgs) -> CliResult<ExitCode> {
    let mut builder = Builder::new();
    builder
        .schemas(&args.specs)
        .out_dir(&args.out_dir)
        .crate_path(&args.crate_path)
        .emit_rerun_if_changed(false);
    if let Some(name) = &args.include_file {
        builder.include_file(name);
    }
    let files = builder.generate().map_err(CliError::Spec)?;
    let dir = &args.out_dir;
    let failed = |action: &str, path: &Path, e: io::Error| {
        CliError::Failed(format!("{}: cannot {action}: {e}", path.display()))
    };
    let mut out = io::stdout().lock();
    if args.check {
        let mut stale = Vec::new();
        for file in &files {
            let path = dir.join(&file.name);
            match std::fs::read(&path) {
                Ok(old) if old == file.contents.as_bytes() => {}
                Ok(_) => stale.push(format!("{} (differs)", path.display())),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    stale.push(format!("{} (missing)", path.display()));
                }
                Err(e) => return Err(failed("read", &path, e)),
            }
        }
        if !stale.is_empty() {
            return Err(CliError::Failed(format!(
                "generated code is out of date: {}; run `tfrecord gen` without `--check` to \
                 update it",
                stale.join(", ")
            )));
        }
        writeln!(out, "{} generated files up to date", files.len())?;
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::create_dir_all(dir).map_err(|e| failed("create the directory", dir, e))?;
    for file in &files {
        let path = dir.join(&file.name);
        if std::fs::read(&path).is_ok_and(|old| old == file.contents.as_bytes()) {
            writeln!(out, "unchanged\t{}", path.display())?;
            continue;
        }
        // Beside it, then renamed into place: a failure (a full disk) leaves the old file.
        crate::output::write_text_file(&path, |w| {
            w.write_all(file.contents.as_bytes())
                .map_err(|e| failed("write", &path, e))
        })?;
        writeln!(out, "wrote\t{}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
