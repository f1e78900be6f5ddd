//! Which record files an input path stands for.

use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Lists the record files a path stands for: the path itself when it is a file; for a
/// directory, its `part-*` files in name order, as OneFlow reads an OFRecord data set, leaving
/// out index files (`part-00000.idx`, see [`crate::index`]).
///
/// # Errors
/// When the path does not exist, the directory cannot be listed, or it holds no `part-*` file.
pub fn expand_path(path: impl AsRef<Path>) -> Result<Vec<PathBuf>> {
    let path = path.as_ref();
    let meta = std::fs::metadata(path).map_err(|e| Error::from(e).with_path(path))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut parts = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| Error::from(e).with_path(path))? {
        let entry = entry.map_err(|e| Error::from(e).with_path(path))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("part-") && !name.ends_with(".idx") && entry.path().is_file() {
            parts.push(entry.path());
        }
    }
    if parts.is_empty() {
        let e = io::Error::new(io::ErrorKind::NotFound, "directory holds no part-* files");
        return Err(Error::from(e).with_path(path));
    }
    parts.sort();
    Ok(parts)
}
