//! `#[example(schema = "specs/mnist.toml", record = "Mnist")]`: a hand-written struct checked
//! against a TOML spec at compile time.
//!
//! The spec is read when the derive expands, relative to the crate root (`CARGO_MANIFEST_DIR`,
//! as `Builder` paths in `build.rs` are), lowered with the spec front end, and compared with the
//! struct's own lowering on the wire contract: which features there are (by key, context
//! features and feature lists apart), their dtype, kind and shape, and whether an absent
//! feature is allowed. Rust names play no part: a field may be named anything as long as its
//! key matches. Every mismatch is a compile error at the place to fix: a missing feature at
//! the struct's name, an extra one at the field, a wrong dtype at the field's type, a wrong
//! kind or shape at the type or the `shape` attribute.
//!
//! The generated code includes the spec's bytes (`include_bytes!`), so editing the spec
//! rebuilds the crate.
//!
//! Not checked: the members of a `flatten` field (spec features under its key prefix are taken
//! as its), and `ragged` features, which no derived field can hold.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;

use super::attrs::{Ctxt, Lowered};
use crate::ir::{DType, FeatureKind, Field, Literal, Presence, Record, RecordKind, Schema};
use crate::symbol;

/// A spec file read for the check: the path as written, where it is, and its text.
struct SpecFile {
    shown: String,
    path: PathBuf,
    text: String,
}

/// Reads the spec a `schema = ".."` literal names, relative to `CARGO_MANIFEST_DIR` (the
/// current directory when that is unset, as outside Cargo). This is the one place the derive
/// touches the file system.
fn read_spec(lit: &syn::LitStr) -> Result<SpecFile, syn::Error> {
    let shown = lit.value();
    if shown.is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            "`schema` needs the path of a TOML spec, relative to the crate root",
        ));
    }
    let base = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
    let path = base.join(&shown);
    let text = crate::toml::read_spec_file(&path).map_err(|e| {
        syn::Error::new(
            lit.span(),
            format!(
                "cannot read the schema `{shown}`: {e}\n\
                 note: a schema path is relative to the crate root (the directory of its \
                 Cargo.toml)"
            ),
        )
    })?;
    let path = if path.is_absolute() {
        path
    } else {
        std::fs::canonicalize(&path).unwrap_or(path)
    };
    Ok(SpecFile { shown, path, text })
}

/// `const _: &[u8] = include_bytes!("/abs/spec.toml");`: makes rustc record the spec as an
/// input of the crate, so Cargo rebuilds it when the spec changes.
fn track(path: &Path) -> TokenStream {
    match path.to_str() {
        Some(p) => quote!(
            const _: &[u8] = ::core::include_bytes!(#p);
        ),
        None => quote!(),
    }
}

/// Checks the struct against the spec its `schema` attribute names, reporting every
/// mismatch into `cx`. Returns the tokens that track the spec file (empty when it could not be
/// read).
pub(crate) fn check(
    cx: &mut Ctxt,
    input: &syn::DeriveInput,
    lowered: &Lowered,
    schema: &syn::LitStr,
    record: Option<&syn::LitStr>,
) -> TokenStream {
    let file = match read_spec(schema) {
        Ok(f) => f,
        Err(e) => {
            cx.push(e);
            return quote!();
        }
    };
    let tracked = track(&file.path);
    let parsed = match Schema::from_toml_str(&file.text, &file.shown) {
        Ok(s) => s,
        Err(d) => {
            let text = d.to_string();
            cx.error(
                schema.span(),
                format!(
                    "the schema `{}` has errors:\n\n{}",
                    file.shown,
                    text.trim_end()
                ),
            );
            return tracked;
        }
    };
    let wanted = record.map_or_else(|| input.ident.to_string(), syn::LitStr::value);
    let Some(spec) = parsed.records.iter().find(|r| r.name == wanted) else {
        let names: Vec<&str> = parsed.records.iter().map(|r| r.name.as_str()).collect();
        let span = record.map_or(schema.span(), syn::LitStr::span);
        let mut msg = format!("the schema `{}` has no record `{wanted}`", file.shown);
        match symbol::did_you_mean(&wanted, &names) {
            Some(s) => msg.push_str(&format!("; did you mean `{s}`?")),
            None if names.is_empty() => msg.push_str(" (it has no records)"),
            None => msg.push_str(&format!("; it has: {}", names.join(", "))),
        }
        if record.is_none() {
            msg.push_str("\nnote: without `record = \"..\"` the record is named after the struct");
        }
        cx.error(span, msg);
        return tracked;
    };
    Checker {
        cx,
        input,
        lowered,
        spec,
        file: &file.shown,
    }
    .run();
    tracked
}

/// A feature's place: context features (all features of an Example) and feature lists live in
/// different maps, so one key may name one of each.
fn place(f: &Field, record: RecordKind) -> bool {
    f.kind.is_feature_list(record)
}

/// The layout of a feature as both front ends express it, for comparison: the spec's
/// `FixedSequence` and the derive's `Steps { Fixed }` are the same feature list.
#[derive(Clone, Debug, PartialEq)]
enum Layout<'a> {
    Fixed(&'a [u64]),
    Var,
    Sparse(&'a [String], &'a [u64]),
    SequenceFixed(Vec<Option<u64>>),
    /// A `sequence` feature of an Example: rows of a fixed shape, any number of them.
    Rows(Vec<Option<u64>>),
    SequenceVar,
    Ragged,
    Other,
}

impl Layout<'_> {
    fn of(kind: &FeatureKind, record: RecordKind) -> Layout<'_> {
        match kind {
            FeatureKind::Fixed { shape } => Layout::Fixed(shape),
            FeatureKind::Var { .. } => Layout::Var,
            FeatureKind::Sparse {
                index_keys, size, ..
            } => Layout::Sparse(index_keys, size),
            FeatureKind::FixedSequence { shape, .. } if record == RecordKind::Example => {
                Layout::Rows(shape.clone())
            }
            FeatureKind::FixedSequence { shape, .. } => Layout::SequenceFixed(shape.clone()),
            FeatureKind::Steps { step } => match &**step {
                FeatureKind::Fixed { shape } => {
                    Layout::SequenceFixed(shape.iter().copied().map(Some).collect())
                }
                FeatureKind::Var { .. } => Layout::SequenceVar,
                FeatureKind::Ragged { .. } => Layout::Ragged,
                _ => Layout::Other,
            },
            FeatureKind::Ragged { .. } => Layout::Ragged,
        }
    }

    /// The kind in the spec's words, with what it means.
    fn describe(&self) -> &'static str {
        match self {
            Layout::Fixed(_) => "a `fixed` feature (a fixed number of values)",
            Layout::Var => "a `var` feature (any number of values)",
            Layout::Sparse(..) => "a `sparse` feature (index and value features)",
            Layout::SequenceFixed(_) => "a `sequence` feature list (a fixed shape per step)",
            Layout::Rows(_) => "a `sequence` feature (any number of rows of a fixed shape)",
            Layout::SequenceVar => "a `var` feature list (any number of values per step)",
            Layout::Ragged => "a `ragged` feature",
            Layout::Other => "a feature of another kind",
        }
    }

    /// The kind and shape in a few words: `fixed`, shape [28, 28].
    fn summary(&self) -> String {
        match self {
            Layout::Fixed([]) => "`fixed`, one value".to_string(),
            Layout::Fixed(s) => format!("`fixed`, shape {}", dims(s)),
            Layout::Var => "`var`".to_string(),
            Layout::Sparse(_, size) if !size.is_empty() => format!("`sparse`, size {}", dims(size)),
            Layout::Sparse(..) => "`sparse`".to_string(),
            Layout::SequenceFixed(s) if s.is_empty() => {
                "`sequence`, one value per step".to_string()
            }
            Layout::SequenceFixed(s) => {
                format!("`sequence`, shape {} per step", crate::ir::shape_text(s))
            }
            Layout::Rows(s) => format!("`sequence`, rows of shape {}", crate::ir::shape_text(s)),
            Layout::SequenceVar => "`var` feature list".to_string(),
            Layout::Ragged => "`ragged`".to_string(),
            Layout::Other => "another kind".to_string(),
        }
    }

    fn same_kind(&self, other: &Layout<'_>) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

fn dims(shape: &[u64]) -> String {
    let d: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", d.join(", "))
}

/// Whether a field of dtype `field` reads the values of a spec feature of dtype `spec`: the
/// same dtype, or bytes read from a `string` feature (text is bytes).
fn dtype_fits(spec: DType, field: DType) -> bool {
    spec == field || (spec == DType::String && field == DType::Bytes)
}

/// The canonical Rust value type of a dtype, for hints.
fn rust_type(d: DType) -> &'static str {
    match d {
        DType::Int64 => "i64",
        DType::Int32 => "i32",
        DType::Bool => "bool",
        DType::Float => "f32",
        DType::Double => "f64",
        DType::Bytes => "Vec<u8>",
        DType::String => "String",
    }
}

/// A field declaration that reads a spec feature, for the "missing feature" hint.
fn suggest(f: &Field, record: RecordKind) -> String {
    let t = f.dtype.map_or("T", rust_type);
    let vec = |t: &str| format!("Vec<{t}>");
    let (attrs, ty) = match Layout::of(&f.kind, record) {
        Layout::Fixed([]) => (Vec::new(), t.to_string()),
        Layout::Fixed(shape) => (vec![format!("shape = {}", dims(shape))], vec(t)),
        Layout::Var => (Vec::new(), vec(t)),
        Layout::Sparse(index, _) => (
            vec![format!(
                "sparse(index = {}, value = \"{}\")",
                match index {
                    [one] => format!("\"{one}\""),
                    many => format!(
                        "[{}]",
                        many.iter()
                            .map(|k| format!("\"{k}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
                f.key
            )],
            format!("Sparse<{t}>"),
        ),
        Layout::SequenceFixed(shape) if shape.is_empty() => (vec!["sequence".to_string()], vec(t)),
        Layout::SequenceFixed(shape) => (
            vec![
                "sequence".to_string(),
                format!("shape = {}", crate::ir::shape_text(&shape)),
            ],
            vec(&vec(t)),
        ),
        Layout::Rows(shape) => {
            let rows: Vec<Option<u64>> = std::iter::once(None).chain(shape).collect();
            (
                vec![format!("shape = {}", crate::ir::shape_text(&rows))],
                vec(t),
            )
        }
        Layout::SequenceVar => (vec!["sequence".to_string()], vec(&vec(t))),
        Layout::Ragged | Layout::Other => (Vec::new(), t.to_string()),
    };
    let ty = if f.presence == Presence::Optional {
        format!("Option<{ty}>")
    } else {
        ty
    };
    let mut all = Vec::new();
    if !matches!(f.kind, FeatureKind::Sparse { .. }) {
        all.push(format!("key = \"{}\"", f.key));
    }
    all.extend(attrs);
    let member = symbol::field_name(&f.key).unwrap_or_else(|| "field".to_string());
    format!("#[example({})] {member}: {ty}", all.join(", "))
}

/// Whether the spec lets a record lack the feature (and the field must cope).
fn spec_allows_absent(f: &Field) -> Option<&'static str> {
    match &f.kind {
        FeatureKind::Fixed { .. } | FeatureKind::Var { .. } => match &f.presence {
            Presence::Optional => Some("it is `optional`"),
            Presence::Default(_) => Some("it has a `default`"),
            Presence::TypeDefault => Some("an absent `var` feature reads as empty"),
            Presence::Required => None,
        },
        FeatureKind::FixedSequence { allow_missing, .. } => {
            allow_missing.then_some("it has `allow_missing`")
        }
        FeatureKind::Steps { .. } => Some("an absent `var` feature list has zero steps"),
        FeatureKind::Sparse { .. } | FeatureKind::Ragged { .. } => None,
    }
}

/// A default's values as a record without the feature reads them: row-major, one value
/// repeated over a fixed shape, numbers of a float feature as the number they store (the
/// nearest float, unless the feature is a `double` kept exact).
fn default_values(f: &Field, lit: &Literal) -> Vec<Literal> {
    let mut out: Vec<Literal> = lit.scalars().into_iter().cloned().collect();
    if let ([one], Some(n)) = (&out[..], f.kind.fixed_count())
        && n > 1
    {
        out = vec![one.clone(); usize::try_from(n).unwrap_or(0)];
    }
    let narrow = f.dtype == Some(DType::Float) || (f.dtype == Some(DType::Double) && f.lossy);
    if matches!(f.dtype, Some(DType::Float | DType::Double)) {
        for v in &mut out {
            #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
            let x = match v {
                Literal::Int(i) => *i as f64,
                Literal::Float(x) => *x,
                _ => continue,
            };
            #[allow(clippy::cast_possible_truncation)] // the point: the float it stores
            let x = if narrow { f64::from(x as f32) } else { x };
            *v = Literal::Float(x);
        }
    }
    out
}

/// A spec's default as written (one value, or a list), for a hint.
fn spec_default_text(lit: &Literal) -> String {
    match lit {
        Literal::List(_) => format!(
            "[{}]",
            lit.scalars()
                .into_iter()
                .map(|v| default_text(std::slice::from_ref(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        one => default_text(std::slice::from_ref(one)),
    }
}

fn default_text(values: &[Literal]) -> String {
    let text = |v: &Literal| match v {
        Literal::Int(i) => i.to_string(),
        Literal::Float(x) => {
            // A float's value as it prints (`0.1`, not `0.10000000149011612`).
            #[allow(clippy::cast_possible_truncation)]
            let f = *x as f32;
            if f64::from(f) == *x || x.is_nan() {
                format!("{f:?}")
            } else {
                format!("{x:?}")
            }
        }
        Literal::Str(s) => format!("{s:?}"),
        Literal::Bool(b) => b.to_string(),
        Literal::List(_) => String::from("[..]"),
    };
    match values {
        [one] => text(one),
        many => format!("[{}]", many.iter().map(text).collect::<Vec<_>>().join(", ")),
    }
}

/// Whether the derived field fails on an absent feature.
fn field_requires(f: &Field) -> bool {
    f.presence == Presence::Required && !matches!(f.kind, FeatureKind::Sparse { .. })
}

struct Checker<'a> {
    cx: &'a mut Ctxt,
    input: &'a syn::DeriveInput,
    lowered: &'a Lowered,
    spec: &'a Record,
    file: &'a str,
}

impl Checker<'_> {
    fn spans(&self, f: &Field) -> Option<&super::attrs::Spans> {
        self.lowered.spans.get(f.origin.0 as usize)
    }

    fn at_field(&self, f: &Field) -> Span {
        self.spans(f).map_or(self.input.ident.span(), |s| s.field)
    }

    fn at_type(&self, f: &Field) -> Span {
        self.spans(f).map_or(self.input.ident.span(), |s| s.ty)
    }

    fn at_shape(&self, f: &Field) -> Span {
        self.spans(f)
            .map_or(self.input.ident.span(), |s| s.shape.unwrap_or(s.ty))
    }

    fn origin(&self) -> String {
        format!("record `{}` (`{}`)", self.spec.name, self.file)
    }

    fn run(mut self) {
        let spec = self.spec;
        let lowered = self.lowered;
        let ours = &lowered.record;
        if spec.kind != ours.kind {
            let (theirs, derive) = match spec.kind {
                RecordKind::SequenceExample => ("a SequenceExample", "SequenceExample"),
                _ => ("an Example", "Example"),
            };
            self.cx.error(
                self.input.ident.span(),
                format!(
                    "{} is {theirs}: derive `{derive}` to check the struct against it",
                    self.origin()
                ),
            );
            return;
        }
        let prefixes: Vec<String> = ours
            .fields
            .iter()
            .filter(|f| f.flatten && !f.skip)
            .map(|f| format!("{}/", f.key))
            .collect();
        let features: Vec<&Field> = ours
            .fields
            .iter()
            .filter(|f| !f.skip && !f.flatten)
            .collect();
        let mut missing = Vec::new();
        for s in &spec.fields {
            let found = features
                .iter()
                .find(|f| f.key == s.key && place(f, spec.kind) == place(s, spec.kind));
            match found {
                Some(f) => self.compare(s, f),
                None => {
                    let flattened =
                        !place(s, spec.kind) && prefixes.iter().any(|p| s.key.starts_with(p));
                    if !flattened && Layout::of(&s.kind, spec.kind) != Layout::Ragged {
                        missing.push(s);
                    }
                }
            }
        }
        for s in missing {
            let what = if place(s, spec.kind) {
                "feature list"
            } else if spec.kind == RecordKind::SequenceExample {
                "context feature"
            } else {
                "feature"
            };
            let msg = format!(
                "missing {what} `{}` (`{}`, {}) of {}\nhelp: add a field such as `{}`",
                s.key,
                s.dtype.map_or("?", DType::name),
                Layout::of(&s.kind, spec.kind).summary(),
                self.origin(),
                suggest(s, self.spec.kind)
            );
            self.cx.error(self.input.ident.span(), msg);
        }
        let keys: Vec<&str> = spec.fields.iter().map(|f| f.key.as_str()).collect();
        for f in &features {
            if spec
                .fields
                .iter()
                .any(|s| s.key == f.key && place(s, spec.kind) == place(f, spec.kind))
            {
                continue;
            }
            let mut msg = format!(
                "{} `{}` is not in {}",
                if place(f, spec.kind) {
                    "feature list"
                } else {
                    "feature"
                },
                f.key,
                self.origin()
            );
            if let Some(s) = spec.fields.iter().find(|s| s.key == f.key) {
                msg.push_str(&format!(
                    "; the spec has it as {}",
                    if place(s, spec.kind) {
                        "a feature list (add `#[example(sequence)]`)"
                    } else {
                        "a context feature (remove `#[example(sequence)]`)"
                    }
                ));
            } else if let Some(k) = symbol::did_you_mean(&f.key, &keys) {
                msg.push_str(&format!("; did you mean `{k}`?"));
            }
            let span = self
                .spans(f)
                .map_or(self.input.ident.span(), |s| s.key.unwrap_or(s.field));
            self.cx.error(span, msg);
        }
    }

    /// Compares one feature both sides have.
    fn compare(&mut self, s: &Field, f: &Field) {
        if let (Some(sd), Some(fd)) = (s.dtype, f.dtype)
            && !dtype_fits(sd, fd)
        {
            let span = self.at_type(f);
            self.cx.error(
                span,
                format!(
                    "wrong dtype: the field holds `{}` values, but `{}` is `{}` in {}\n\
                     help: use `{}` values",
                    fd.name(),
                    s.key,
                    sd.name(),
                    self.origin(),
                    rust_type(sd)
                ),
            );
        }
        let (sl, fl) = (
            Layout::of(&s.kind, self.spec.kind),
            Layout::of(&f.kind, self.spec.kind),
        );
        if !sl.same_kind(&fl) {
            let span = self.at_type(f);
            self.cx.error(
                span,
                format!(
                    "wrong kind: the field reads {}, but `{}` is {} in {}\n\
                     help: declare it as `{}`",
                    fl.describe(),
                    s.key,
                    sl.describe(),
                    self.origin(),
                    suggest(s, self.spec.kind)
                ),
            );
            return;
        }
        match (&sl, &fl) {
            (Layout::Fixed(a), Layout::Fixed(b)) if a != b => {
                let span = self.at_shape(f);
                self.cx.error(
                    span,
                    format!(
                        "wrong shape: the field has shape {}, but `{}` has shape {} in {}",
                        dims(b),
                        s.key,
                        dims(a),
                        self.origin()
                    ),
                );
            }
            (Layout::SequenceFixed(a), Layout::SequenceFixed(b))
            | (Layout::Rows(a), Layout::Rows(b))
                if a != b =>
            {
                let span = self.at_shape(f);
                self.cx.error(
                    span,
                    format!(
                        "wrong shape: the field has rows of shape {}, but `{}` has rows of shape \
                         {} in {}",
                        crate::ir::shape_text(b),
                        s.key,
                        crate::ir::shape_text(a),
                        self.origin()
                    ),
                );
            }
            (Layout::Sparse(ai, asz), Layout::Sparse(bi, bsz)) => {
                if ai != bi {
                    let span = self.at_type(f);
                    self.cx.error(
                        span,
                        format!(
                            "wrong index keys: the field reads [{}], but sparse feature `{}` has \
                             `index_key` [{}] in {}",
                            quoted(bi),
                            s.key,
                            quoted(ai),
                            self.origin()
                        ),
                    );
                }
                if asz != bsz {
                    let span = self.at_type(f);
                    self.cx.error(
                        span,
                        format!(
                            "wrong shape: the field has size {}, but sparse feature `{}` has \
                             size {} in {}",
                            dims(bsz),
                            s.key,
                            dims(asz),
                            self.origin()
                        ),
                    );
                }
            }
            _ => {}
        }
        // (Defaults of another dtype were reported as the wrong dtype.)
        let same_dtype = match (s.dtype, f.dtype) {
            (Some(sd), Some(fd)) => dtype_fits(sd, fd),
            _ => true,
        };
        if same_dtype
            && let (Presence::Default(sd), Presence::Default(fd)) = (&s.presence, &f.presence)
        {
            let (a, b) = (default_values(s, sd), default_values(f, fd));
            if a != b {
                let span = self
                    .spans(f)
                    .map_or(self.at_field(f), |x| x.default.unwrap_or(x.field));
                self.cx.error(
                    span,
                    format!(
                        "wrong default: an absent `{}` reads as {} here, but as {} in {}",
                        s.key,
                        default_text(&b),
                        default_text(&a),
                        self.origin()
                    ),
                );
            }
        }
        // `#[example(default)]`: the field type's `Default`, zeros and empty text for the value
        // types (unknown for a type of the user's), against the spec's default.
        // (A `[-1, ..]` feature's default pads rows in a batch: an absent one has no rows.)
        if same_dtype
            && matches!(s.kind, FeatureKind::Fixed { .. } | FeatureKind::Var { .. })
            && let (Presence::Default(sd), Presence::TypeDefault) = (&s.presence, &f.presence)
        {
            let zero = |v: &Literal| match v {
                Literal::Int(i) => *i == 0,
                Literal::Float(x) => x.to_bits() == 0,
                Literal::Bool(b) => !b,
                Literal::Str(t) => t.is_empty(),
                Literal::List(_) => false,
            };
            if f.dtype.is_none() || !default_values(s, sd).iter().all(zero) {
                let span = self.at_field(f);
                let spec_default = spec_default_text(sd);
                self.cx.error(
                    span,
                    format!(
                        "wrong default: an absent `{}` reads as the field type's `Default` here, \
                         but as {spec_default} in {}\nhelp: `#[example(default = \
                         {spec_default})]`",
                        s.key,
                        self.origin()
                    ),
                );
            }
        }
        if let Some(why) = spec_allows_absent(s)
            && field_requires(f)
        {
            let span = self.at_field(f);
            let help = if matches!(
                Layout::of(&f.kind, self.spec.kind),
                Layout::Var | Layout::SequenceVar
            ) {
                "remove `#[example(required)]`: a `Vec` is empty when absent".to_owned()
            } else if let Presence::Default(sd) = &s.presence {
                format!(
                    "add `#[example(default = {})]`, or make the field an `Option<_>`",
                    spec_default_text(sd)
                )
            } else {
                "make the field an `Option<_>`, or add `#[example(default)]`".to_owned()
            };
            self.cx.error(
                span,
                format!(
                    "the field requires `{}`, but {} lets records lack it: {why}\nhelp: {help}",
                    s.key,
                    self.origin()
                ),
            );
        }
    }
}

fn quoted(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ")
}
