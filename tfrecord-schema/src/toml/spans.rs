//! Where each record and feature of a spec was written, so that a diagnostic about the IR
//! points at the bytes it is about.

use std::ops::Range;

use crate::check::{self, Part};
use crate::diagnostics::{SourceMap, SpecError};
use crate::ir::Origin;

/// Where a record or feature was written: its table key, and the value of each of its
/// settings by key name.
#[derive(Clone, Debug)]
pub(super) struct Site {
    /// The table key.
    pub(super) name: Range<usize>,
    /// Each setting's value, by key name.
    pub(super) parts: Vec<(&'static str, Range<usize>)>,
}

impl Site {
    /// The range of a setting's value.
    fn setting(&self, key: &str) -> Option<Range<usize>> {
        self.parts
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s.clone())
    }

    /// The range a diagnostic about `part` points at: the setting's value, else the table key.
    fn span(&self, part: Part) -> Range<usize> {
        let key = match part {
            Part::Field => "field",
            Part::Type => "dtype",
            Part::Key => "key",
            Part::Default => "default",
            Part::Shape => "shape",
            Part::Kind => "kind",
            Part::Setting(k) => k,
            _ => "",
        };
        self.setting(key).unwrap_or_else(|| self.name.clone())
    }
}

/// The byte ranges behind the IR's [`Origin`]s, to render [`check::Diagnostic`]s.
#[derive(Clone, Debug)]
pub(crate) struct SpanTable {
    /// The spec file's text and name.
    pub(super) map: SourceMap,
    /// One site per [`Origin`], in order.
    pub(super) sites: Vec<Site>,
}

impl SpanTable {
    /// The range a diagnostic about `part` of the record or feature at `origin` points at.
    fn span(&self, origin: Origin, part: Part) -> Range<usize> {
        self.sites
            .get(origin.0 as usize)
            .map_or(0..0, |s| s.span(part))
    }

    /// A located error for a diagnostic about this spec's IR.
    pub(crate) fn render(&self, d: &check::Diagnostic) -> SpecError {
        let mut e = self.map.error(&self.span(d.origin, d.part), &d.message);
        for (origin, part, note) in &d.notes {
            e = e.note_at(self.map.locate(&self.span(*origin, *part)), note);
        }
        e
    }
}
