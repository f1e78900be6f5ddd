//! The one error type of the importers: a message with its location.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An import error: what went wrong, and where, as far as known: the input file, the 0-based
/// record (row, line, image) index in it, the output feature and the input field.
///
/// The `Display` form reads like
/// `persons.avro: record 2: feature "cars['nickname'].color": Unable to find key 'nickname'.`
#[derive(Debug)]
pub struct Error(Box<Inner>);

#[derive(Debug)]
struct Inner {
    message: String,
    path: Option<PathBuf>,
    record: Option<u64>,
    feature: Option<String>,
    field: Option<String>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with a message and no location yet.
    #[cold]
    pub fn new(message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            message: message.into(),
            path: None,
            record: None,
            feature: None,
            field: None,
            source: None,
        }))
    }

    /// An error caused by another one, whose text becomes the message.
    #[cold]
    pub fn wrap(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        let mut e = Error::new(source.to_string());
        e.0.source = Some(Box::new(source));
        e
    }

    /// What went wrong, without the location.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The input file, if known.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// The 0-based index of the record (Avro record, JSON line, CSV row, image) in its input.
    pub fn record(&self) -> Option<u64> {
        self.0.record
    }

    /// The output feature the error is about.
    pub fn feature(&self) -> Option<&str> {
        self.0.feature.as_deref()
    }

    /// The input field the error is about (a JSON / CSV field path).
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// Sets the input file unless one is set.
    #[must_use]
    pub fn with_path(mut self, path: impl AsRef<Path>) -> Self {
        if self.0.path.is_none() {
            self.0.path = Some(path.as_ref().to_path_buf());
        }
        self
    }

    /// Sets the record index unless one is set.
    #[must_use]
    pub fn with_record(mut self, record: u64) -> Self {
        if self.0.record.is_none() {
            self.0.record = Some(record);
        }
        self
    }

    /// Sets the output feature unless one is set.
    #[must_use]
    pub fn with_feature(mut self, feature: impl Into<String>) -> Self {
        if self.0.feature.is_none() {
            self.0.feature = Some(feature.into());
        }
        self
    }

    /// Sets the input field unless one is set.
    #[must_use]
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        if self.0.field.is_none() {
            self.0.field = Some(field.into());
        }
        self
    }

    /// Replaces a record index relative to a batch with `f(index)`; used by batch drivers to turn
    /// an index within the batch into a location in the input.
    #[must_use]
    pub fn map_record(mut self, f: impl FnOnce(u64) -> (Option<PathBuf>, u64)) -> Self {
        if let Some(r) = self.0.record {
            let (path, record) = f(r);
            self.0.record = Some(record);
            if let Some(p) = path {
                self.0.path = Some(p);
            }
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.0.path {
            write!(f, "{}: ", p.display())?;
        }
        if let Some(r) = self.0.record {
            write!(f, "record {r}: ")?;
        }
        if let Some(k) = &self.0.feature {
            write!(f, "feature {k:?}: ")?;
        }
        if let Some(k) = &self.0.field {
            write!(f, "field {k:?}: ")?;
        }
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::wrap(e)
    }
}

impl From<tfrecord_core::Error> for Error {
    fn from(e: tfrecord_core::Error) -> Self {
        Error::wrap(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_every_location() {
        let e = Error::new("bad")
            .with_feature("f")
            .with_record(3)
            .with_path("a.avro")
            .with_field("x/y");
        assert_eq!(
            e.to_string(),
            "a.avro: record 3: feature \"f\": field \"x/y\": bad"
        );
        let e = Error::new("m")
            .with_record(1)
            .map_record(|r| (Some("b.avro".into()), r + 10));
        assert_eq!(e.to_string(), "b.avro: record 11: m");
        assert_eq!(e.record(), Some(11));
    }
}
