//! Errors in spec files, rendered the way rustc renders its own:
//!
//! ```text
//! error: duplicate feature key `label`
//!   --> specs/mnist.toml:14:7
//!    |
//! 14 | index_key = "label"
//!    |             ^^^^^^^
//!    |
//! note: `label` is first used by field `label`
//!   --> specs/mnist.toml:9:24
//!    |
//!  9 | [records.Mnist.features.label]
//!    |                         ^^^^^
//! ```
//!
//! Each error is self-contained (it keeps the source line it points at), so a [`Diagnostics`]
//! can be printed long after the spec text is gone.

use std::fmt;
use std::ops::Range;

/// A place in a spec file: file name as given, 1-based line and column (in characters).
#[derive(Clone, PartialEq, Eq)]
pub struct Location {
    file: String,
    line: usize,
    column: usize,
    /// The text of the line, without its line break.
    text: String,
    /// How many characters of the line the caret covers (at least 1).
    width: usize,
}

impl Location {
    /// The file name, as it was given to the front end.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The 1-based line.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The 1-based column, counted in characters.
    pub fn column(&self) -> usize {
        self.column
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A remark attached to an error: located (`note:` with its own snippet) or not
/// (`= note: ...` / `= help: ...`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Note {
    /// `note` or `help`.
    label: &'static str,
    message: String,
    location: Option<Location>,
}

/// One error in a spec file.
#[derive(Clone, PartialEq, Eq)]
pub struct SpecError {
    message: String,
    location: Option<Location>,
    notes: Vec<Note>,
    /// The byte offset of the primary span, for ordering errors as they appear in the file.
    offset: usize,
}

impl SpecError {
    /// An error without a location (a file that cannot be read, a bad option).
    #[cfg(feature = "builder")]
    pub(crate) fn bare(message: impl Into<String>) -> Self {
        SpecError {
            message: message.into(),
            location: None,
            notes: Vec::new(),
            offset: 0,
        }
    }

    /// What is wrong: lower-case, no trailing period.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where, when the error points into a file.
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// Adds a located note (`note:` with its own snippet).
    pub(crate) fn note_at(mut self, location: Location, message: impl Into<String>) -> Self {
        self.notes.push(Note {
            label: "note",
            message: message.into(),
            location: Some(location),
        });
        self
    }

    /// Adds an unlocated note (`= note: ...`).
    pub(crate) fn note(mut self, message: impl Into<String>) -> Self {
        self.notes.push(Note {
            label: "note",
            message: message.into(),
            location: None,
        });
        self
    }

    /// Adds a hint (`= help: ...`).
    pub(crate) fn help(mut self, message: impl Into<String>) -> Self {
        self.notes.push(Note {
            label: "help",
            message: message.into(),
            location: None,
        });
        self
    }

    pub(crate) fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Debug for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}

/// Writes `--> file:line:col`, the line, and a caret line under the span.
fn snippet(f: &mut fmt::Formatter<'_>, loc: &Location, gutter: usize) -> fmt::Result {
    let pad = " ".repeat(gutter);
    writeln!(f, "{pad}--> {loc}")?;
    writeln!(f, "{pad} |")?;
    writeln!(f, "{:>gutter$} | {}", loc.line, loc.text)?;
    let lead: String = loc
        .text
        .chars()
        .take(loc.column - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    writeln!(f, "{pad} | {lead}{}", "^".repeat(loc.width))
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        let gutter = self
            .location
            .iter()
            .chain(self.notes.iter().filter_map(|n| n.location.as_ref()))
            .map(|l| digits(l.line))
            .max()
            .unwrap_or(0);
        let pad = " ".repeat(gutter);
        if let Some(loc) = &self.location {
            snippet(f, loc, gutter)?;
        }
        for n in self.notes.iter().filter(|n| n.location.is_none()) {
            writeln!(f, "{pad} = {}: {}", n.label, n.message)?;
        }
        for n in &self.notes {
            if let Some(loc) = &n.location {
                writeln!(f, "{pad} |")?;
                writeln!(f, "{}: {}", n.label, n.message)?;
                snippet(f, loc, gutter)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

/// Every error found in one spec file, in the order they appear in it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Diagnostics {
    errors: Vec<SpecError>,
}

impl Diagnostics {
    pub(crate) fn new(mut errors: Vec<SpecError>) -> Self {
        errors.sort_by_key(SpecError::offset);
        Diagnostics { errors }
    }

    /// The number of errors.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Whether there are no errors.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The errors, in the order they appear in the file.
    pub fn iter(&self) -> impl Iterator<Item = &SpecError> {
        self.errors.iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a SpecError;
    type IntoIter = std::slice::Iter<'a, SpecError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

/// The same text as `Display`, so that `fn main() -> Result<..>` and `unwrap` print the
/// report a person can read.
impl fmt::Debug for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Every error, each followed by a blank line.
impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.errors {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// A spec's text and name, to turn byte ranges into [`Location`]s.
#[derive(Clone, Debug)]
pub(crate) struct SourceMap {
    file: String,
    src: String,
}

impl SourceMap {
    pub(crate) fn new(file: &str, src: &str) -> Self {
        SourceMap {
            file: file.to_string(),
            src: src.to_string(),
        }
    }

    /// The location of a byte range (clamped to the text).
    pub(crate) fn locate(&self, span: &Range<usize>) -> Location {
        let mut start = span.start.min(self.src.len());
        while !self.src.is_char_boundary(start) {
            start -= 1;
        }
        let line_start = self.src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.src[start..]
            .find('\n')
            .map_or(self.src.len(), |i| start + i);
        let text = self.src[line_start..line_end].trim_end_matches('\r');
        let line = self.src[..start].matches('\n').count() + 1;
        let column = self.src[line_start..start].chars().count() + 1;
        // A span may start past the line's text: on the `\r` of a CRLF line end.
        let end = span.end.clamp(start, (line_start + text.len()).max(start));
        let width = self
            .src
            .get(start..end)
            .map_or(1, |s| s.chars().count())
            .max(1);
        Location {
            file: self.file.clone(),
            line,
            column,
            text: text.to_string(),
            width,
        }
    }

    /// An error pointing at `span`.
    pub(crate) fn error(&self, span: &Range<usize>, message: impl Into<String>) -> SpecError {
        SpecError {
            message: message.into(),
            location: Some(self.locate(span)),
            notes: Vec::new(),
            offset: span.start,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A span on the `\r` of a CRLF line end (where TOML reports an unterminated string)
    /// locates on its line instead of panicking, and a broken CRLF spec gets the usual error.
    #[test]
    fn crlf_line_ends_locate() {
        let src = "[records.R.features.x]\r\ndtype = \"int64\r\n";
        let map = SourceMap::new("crlf.toml", src);
        let at = src.rfind('\r').unwrap();
        let loc = map.locate(&(at..at + 1));
        assert_eq!((loc.line, loc.text.as_str()), (2, "dtype = \"int64"));
        let e = crate::ir::Schema::from_toml_str(src, "crlf.toml").unwrap_err();
        assert!(e.to_string().contains("crlf.toml:2:"), "{e}");
        let good = "[records.R.features.x]\r\ndtype = \"int64\"\r\n";
        assert!(crate::ir::Schema::from_toml_str(good, "crlf.toml").is_ok());
    }

    #[test]
    fn renders_like_rustc() {
        let src = "a = 1\n\n\n\n\n\n\n\n\n[t]\nkey = \"label\"\n";
        let map = SourceMap::new("specs/x.toml", src);
        let at = src.find("\"label\"").unwrap();
        let e = map
            .error(&(at..at + 7), "duplicate feature key `label`")
            .note_at(map.locate(&(0..1)), "first here")
            .help("rename one");
        assert_eq!(
            e.to_string(),
            "error: duplicate feature key `label`
  --> specs/x.toml:11:7
   |
11 | key = \"label\"
   |       ^^^^^^^
   = help: rename one
   |
note: first here
  --> specs/x.toml:1:1
   |
 1 | a = 1
   | ^
"
        );
    }
}
