//! Glob patterns over the file system: each component of the pattern matched against the
//! names in a directory, with the `glob` crate's [`Pattern`](glob::Pattern) for the matching
//! only. Walking directories here rather than with `glob::glob` keeps two things right that
//! its walker does not: a name that is not UTF-8 (the walker panics on one anywhere in a
//! directory it lists; here it is matched by its lossy text and kept as it is), and a symbolic
//! link back to a parent under `**` (listed once, not followed round and round).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// How deep `**` goes.
const MAX_DEPTH: usize = 64;

fn options() -> glob::MatchOptions {
    glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    }
}

/// Whether a path component holds a wildcard.
fn is_wild(component: &OsStr) -> bool {
    component.to_string_lossy().contains(['*', '?', '['])
}

/// The paths a glob pattern matches (`*`, `?`, `[...]` within a name, `**` for any number of
/// directories), sorted by their bytes (as TensorFlow's `MatchingFiles`, behind
/// `tf.data.Dataset.list_files`, sorts them). Names starting with `.` are matched only by a
/// pattern component that starts with `.`. A name that is not UTF-8 is matched by its text with
/// the bad bytes replaced, and returned as it is.
///
/// # Errors
/// A pattern that does not parse; a directory that cannot be listed.
pub fn glob_paths(pattern: &Path) -> Result<Vec<PathBuf>> {
    let bad = |detail: String| Error::Pattern {
        pattern: pattern.to_string_lossy().into_owned(),
        detail,
    };
    let components: Vec<Component<'_>> = pattern.components().collect();
    let mut found = vec![PathBuf::new()];
    for (i, component) in components.iter().enumerate() {
        let last = i + 1 == components.len();
        let name = component.as_os_str();
        if !matches!(component, Component::Normal(_)) || !is_wild(name) {
            for p in &mut found {
                p.push(name);
            }
            continue;
        }
        let text = name.to_string_lossy();
        let mut next = Vec::new();
        if text == "**" {
            for base in &found {
                below(base, &mut next, &mut HashSet::new(), 0)?;
            }
        } else {
            let matcher = glob::Pattern::new(&text).map_err(|e| bad(e.to_string()))?;
            for base in &found {
                matching(base, &matcher, text.starts_with('.'), last, &mut next)?;
            }
        }
        found = next;
    }
    found.retain(|p| fs::symlink_metadata(p).is_ok());
    // By the path's bytes, as TensorFlow's `MatchingFiles` sorts (component by component, `x/`
    // would come before `x-1/`, and shards would be dealt differently from tf.data's).
    found.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    found.dedup();
    Ok(found)
}

/// The directory to list for a base: `.` for the empty one.
fn dir_of(base: &Path) -> &Path {
    if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    }
}

/// Adds the entries of directory `base` whose names `matcher` matches (only directories,
/// unless the component is the pattern's `last`).
fn matching(
    base: &Path,
    matcher: &glob::Pattern,
    dotted: bool,
    last: bool,
    out: &mut Vec<PathBuf>,
) -> Result<()> {
    let dir = dir_of(base);
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in fs::read_dir(dir).map_err(|e| Error::io(e, dir))? {
        let entry = entry.map_err(|e| Error::io(e, dir))?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.starts_with('.') && !dotted {
            continue;
        }
        if matcher.matches_with(&text, options()) {
            let path = base.join(&name);
            if last || path.is_dir() {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// Adds `base` and every directory below it (hidden ones left out), each directory once even
/// when symbolic links lead back to it.
fn below(
    base: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
    depth: usize,
) -> Result<()> {
    let dir = dir_of(base);
    if !dir.is_dir() || depth > MAX_DEPTH {
        return Ok(());
    }
    if let Ok(real) = fs::canonicalize(dir)
        && !seen.insert(real)
    {
        return Ok(());
    }
    out.push(base.to_path_buf());
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| Error::io(e, dir))? {
        let entry = entry.map_err(|e| Error::io(e, dir))?;
        let name = entry.file_name();
        let path = base.join(&name);
        if !name.to_string_lossy().starts_with('.') && path.is_dir() {
            subdirs.push(path);
        }
    }
    subdirs.sort();
    for sub in subdirs {
        below(&sub, out, seen, depth + 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, b"").expect("write");
    }

    fn rel(dir: &Path, found: Vec<PathBuf>) -> Vec<String> {
        found
            .iter()
            .map(|p| {
                p.strip_prefix(dir)
                    .expect("under dir")
                    .display()
                    .to_string()
            })
            .collect()
    }

    /// A temporary directory holding empty files at `files`.
    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in files {
            touch(&dir.path().join(f));
        }
        dir
    }

    #[test]
    fn components_match_names_and_double_stars_any_directories() {
        let dir = tree(&[
            "a/x.tfrecord",
            "a/y.gz",
            "a/.h.tfrecord",
            "b/c/z.tfrecord",
            "b/.d/w.tfrecord",
        ]);
        let d = dir.path();
        let g = |p: &str| rel(d, glob_paths(&d.join(p)).expect("globs"));
        assert_eq!(g("a/*.tfrecord"), ["a/x.tfrecord"]);
        assert_eq!(g("a/.*"), ["a/.h.tfrecord"]);
        assert_eq!(g("*/x.tfrecord"), ["a/x.tfrecord"]);
        assert_eq!(g("**/*.tfrecord"), ["a/x.tfrecord", "b/c/z.tfrecord"]);
        assert_eq!(g("[ab]"), ["a", "b"]);
        assert_eq!(g("a/?.gz"), ["a/y.gz"]);
        assert!(g("nothing/*").is_empty());
        assert!(matches!(
            glob_paths(&d.join("a/[x")),
            Err(Error::Pattern { .. })
        ));
    }

    /// Matches come in the order of their bytes, as TensorFlow's `MatchingFiles` gives them
    /// (`-` and `.` sort before `/`), so that shards are dealt as tf.data's
    /// `list_files().shard()` deals them.
    #[test]
    fn matches_are_sorted_by_their_bytes() {
        let dir = tree(&[
            "x/a.tfrecord",
            "x-1/a.tfrecord",
            "x.a/a.tfrecord",
            "a/b/c.tfrecord",
            "a-b/c.tfrecord",
        ]);
        let d = dir.path();
        let g = |p: &str| rel(d, glob_paths(&d.join(p)).expect("globs"));
        assert_eq!(
            g("*/a.tfrecord"),
            ["x-1/a.tfrecord", "x.a/a.tfrecord", "x/a.tfrecord"]
        );
        assert_eq!(g("a*/**/*.tfrecord"), ["a-b/c.tfrecord", "a/b/c.tfrecord"]);
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_and_links_to_a_parent_do_no_harm() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        touch(&d.join("g/y.tfrecord"));
        let odd = d.join("g").join(OsStr::from_bytes(b"x\xfe.tfrecord"));
        fs::write(&odd, b"").expect("write");
        let found = glob_paths(&d.join("g/*.tfrecord")).expect("globs");
        assert_eq!(found, [odd, d.join("g/y.tfrecord")]);
        assert_eq!(
            glob_paths(&d.join("g/y*")).expect("globs"),
            [d.join("g/y.tfrecord")]
        );

        std::os::unix::fs::symlink(d.join("g"), d.join("g/loop")).expect("link");
        let found = glob_paths(&d.join("g/**/y.tfrecord")).expect("globs");
        assert_eq!(found, [d.join("g/y.tfrecord")]);
    }
}
