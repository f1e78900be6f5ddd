//! Spec files for the commands that take `--spec`: reading one, and choosing its record.

use std::path::Path;

use tfrecord_schema::ir::{Record, Schema};

use crate::error::{CliError, CliResult};

/// Reads a TOML spec file.
///
/// # Errors
/// An unreadable file, or every error in the spec (rustc-style).
pub(crate) fn read_spec(path: &Path) -> CliResult<Schema> {
    let text = tfrecord_schema::toml::read_spec_file(path)
        .map_err(|e| CliError::Failed(format!("{}: cannot read the spec: {e}", path.display())))?;
    Schema::from_toml_str(&text, &path.display().to_string())
        .map_err(|d| CliError::SpecFile(path.to_path_buf(), d))
}

/// The record to use: the one named, else the spec's only record.
///
/// # Errors
/// An unknown name, or several records and no name; the message lists the names.
pub(crate) fn pick_record<'a>(
    schema: &'a Schema,
    path: &Path,
    name: Option<&str>,
) -> CliResult<&'a Record> {
    let names: Vec<&str> = schema.records.iter().map(|r| r.name.as_str()).collect();
    let list = || names.join(", ");
    match name {
        Some(n) => schema.records.iter().find(|r| r.name == n).ok_or_else(|| {
            CliError::Usage(format!(
                "{}: no record `{n}` (the spec has: {})",
                path.display(),
                list()
            ))
        }),
        None => match schema.records.as_slice() {
            [one] => Ok(one),
            [] => Err(CliError::Failed(format!(
                "{}: the spec has no records",
                path.display()
            ))),
            _ => Err(CliError::Usage(format!(
                "{}: the spec has several records ({}): choose one with --record",
                path.display(),
                list()
            ))),
        },
    }
}
