//! The error collector of the derive front end: every error is kept, so that one run reports
//! all of them.

use proc_macro2::Span;

/// Collects errors so that one run reports all of them.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    pub(crate) fn push(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        let mut it = self.errors.into_iter();
        let Some(mut first) = it.next() else {
            return Ok(());
        };
        for e in it {
            first.combine(e);
        }
        Err(first)
    }
}
