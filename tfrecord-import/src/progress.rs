//! A progress bar on standard error for long imports, drawn only when standard error is a
//! terminal (never into logs or pipes).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar, or nothing.
#[derive(Debug)]
pub(crate) struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar over `len` units (`"records"` counts bytes of input, anything else counts items of
    /// that name), when `enabled` and standard error is a terminal.
    pub(crate) fn new(enabled: bool, len: Option<u64>, unit: &str) -> Self {
        if !enabled || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = match len {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let template = if unit == "records" {
            "{spinner} {wide_bar} {bytes}/{total_bytes} ({eta})".to_string()
        } else {
            format!("{{spinner}} {{wide_bar}} {{pos}}/{{len}} {unit} ({{eta}})")
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        Progress(Some(bar))
    }

    /// Moves the bar to `pos`.
    pub(crate) fn set(&self, pos: u64) {
        if let Some(b) = &self.0 {
            b.set_position(pos);
        }
    }

    /// Advances the bar by `n`.
    pub(crate) fn inc(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
