//! Code generation for `build.rs`, in the style of `prost-build`: spec files in, Rust files of
//! `#[derive(Example)]` structs out.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::diagnostics::{Diagnostics, SpecError};
use crate::emit::{self, EmitOptions};
use crate::symbol;

/// Compiles spec files into Rust code in `OUT_DIR`, with the default settings; the common case
/// of [`Builder`].
///
/// # Errors
/// As [`Builder::compile`].
///
/// # Examples
/// In `build.rs`:
/// ```no_run
/// fn main() -> Result<(), tfrecord_schema::Error> {
///     tfrecord_schema::compile(&["specs/mnist.toml"])
/// }
/// ```
pub fn compile(specs: &[impl AsRef<Path>]) -> Result<(), Error> {
    let mut b = Builder::new();
    for s in specs {
        b.schema(s.as_ref());
    }
    b.compile()
}

/// Generates Rust code from spec files.
///
/// Each spec file becomes one Rust file named after it (`specs/mnist.toml` -> `mnist.rs`)
/// holding one `#[derive(Example)]` (or `SequenceExample`) struct per record. The output is
/// deterministic: no timestamps, no paths, records and fields in the order written, formatted
/// with prettyplease, starting with an `@generated` header.
///
/// Setters take `&mut self`, so they chain or stand alone:
///
/// ```no_run
/// // build.rs
/// fn main() -> Result<(), tfrecord_schema::Error> {
///     tfrecord_schema::Builder::new()
///         .schema("specs/mnist.toml")
///         .include_file("_includes.rs")
///         .compile()
/// }
/// ```
///
/// and in the crate, either every file through the include file:
///
/// ```ignore
/// include!(concat!(env!("OUT_DIR"), "/_includes.rs")); // `pub mod mnist { ... }`
/// ```
///
/// or one file directly: `include!(concat!(env!("OUT_DIR"), "/mnist.rs"));`.
#[derive(Clone, Debug)]
pub struct Builder {
    specs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    crate_path: String,
    include_file: Option<PathBuf>,
    emit_rerun_if_changed: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            specs: Vec::new(),
            out_dir: None,
            crate_path: "::tfrecord_core".to_string(),
            include_file: None,
            emit_rerun_if_changed: true,
        }
    }
}

/// One generated file: its name in the output directory and its contents.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GeneratedFile {
    /// The file name, relative to the output directory (`mnist.rs`).
    pub name: String,
    /// The Rust source.
    pub contents: String,
}

impl Builder {
    /// A builder with no specs, writing to `OUT_DIR`, for types in `::tfrecord_core`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a spec file. Paths are used as given, also in messages: write them relative to
    /// the crate (Cargo runs `build.rs` in the crate's directory).
    pub fn schema(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.specs.push(path.into());
        self
    }

    /// Adds several spec files.
    pub fn schemas<I>(&mut self, paths: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: Into<PathBuf>,
    {
        self.specs.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Where [`compile`](Builder::compile) writes (default: the `OUT_DIR` environment variable
    /// Cargo sets for build scripts). A directory in `src/` is the way to check generated code
    /// in; `tfrecord gen --check` then tells whether it is stale.
    pub fn out_dir(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.out_dir = Some(path.into());
        self
    }

    /// The path of `tfrecord_core` in the generated code (default `::tfrecord_core`), for crates
    /// that reach it through a re-export. It becomes the derive's `#[example(crate = "...")]`.
    pub fn crate_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.crate_path = path.into();
        self
    }

    /// Also writes a file with one `pub mod NAME { include!("NAME.rs"); }` per spec, so one
    /// `include!` brings in everything.
    pub fn include_file(&mut self, name: impl Into<PathBuf>) -> &mut Self {
        self.include_file = Some(name.into());
        self
    }

    /// Whether [`compile`](Builder::compile) prints `cargo:rerun-if-changed=SPEC` for every
    /// spec (default `true`). Cargo then reruns the build script only when a spec changes;
    /// note that any such line replaces Cargo's default of rerunning it when *any* file of the
    /// package changes (rust-lang/cargo#4587), so a build script that also depends on other
    /// files must print lines for them too, or turn this off.
    pub fn emit_rerun_if_changed(&mut self, on: bool) -> &mut Self {
        self.emit_rerun_if_changed = on;
        self
    }

    /// Generates the files without writing them: the only I/O is reading the specs.
    ///
    /// # Errors
    /// Every problem of every spec at once: unreadable files, and each spec's
    /// [`Diagnostics`] (including features that cannot be generated, such as `ragged`).
    pub fn generate(&self) -> Result<Vec<GeneratedFile>, Error> {
        let mut problems = Vec::new();
        let mut files = Vec::new();
        let mut modules: Vec<(String, String, String)> = Vec::new();
        let opts = EmitOptions {
            crate_path: self.crate_path.trim().to_string(),
        };
        if syn::parse_str::<syn::Path>(&opts.crate_path).is_err() {
            problems.push(Problem::Config(format!(
                "`{}` is not a path (Builder::crate_path)",
                self.crate_path
            )));
        }
        if self.specs.is_empty() {
            problems.push(Problem::Config(
                "no spec files: add one with Builder::schema".to_string(),
            ));
        }
        for spec in &self.specs {
            let shown = spec.display().to_string();
            let stem = spec
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Some(module) = symbol::field_name(&stem) else {
                problems.push(Problem::Config(format!(
                    "cannot make a module name from the spec file name `{shown}`"
                )));
                continue;
            };
            let file_name = format!("{module}.rs");
            if let Some((_, _, other)) = modules.iter().find(|(m, _, _)| *m == module) {
                problems.push(Problem::Config(format!(
                    "`{shown}` and `{other}` would both generate `{file_name}`: rename one"
                )));
                continue;
            }
            let text = match crate::toml::read_spec_file(spec) {
                Ok(t) => t,
                Err(e) => {
                    problems.push(Problem::Io {
                        action: "cannot read",
                        path: spec.clone(),
                        source: e,
                    });
                    continue;
                }
            };
            let spec_name = spec
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            modules.push((module, file_name.clone(), spec_name));
            let lowered = match crate::toml::lower(&text, &shown) {
                Ok(l) => l,
                Err(d) => {
                    problems.push(Problem::Spec(d));
                    continue;
                }
            };
            let contents = emit::emit_schema(&lowered.schema, &opts)
                .map_err(|ds| {
                    Diagnostics::new(ds.iter().map(|d| lowered.spans.render(d)).collect())
                })
                .and_then(|output| {
                    output
                        .format()
                        .map_err(|e| Diagnostics::new(vec![SpecError::bare(e)]))
                });
            match contents {
                Ok(contents) => files.push(GeneratedFile {
                    name: file_name,
                    contents,
                }),
                Err(d) => problems.push(Problem::Spec(d)),
            }
        }
        if let Some(include) = &self.include_file {
            match emit::include_file(&modules) {
                Ok(contents) => files.push(GeneratedFile {
                    name: include.display().to_string(),
                    contents,
                }),
                Err(e) => problems.push(Problem::Config(e)),
            }
        }
        if problems.is_empty() {
            Ok(files)
        } else {
            Err(Error { problems })
        }
    }

    /// The output directory: [`out_dir`](Builder::out_dir), else `OUT_DIR`.
    ///
    /// # Errors
    /// Neither is set.
    fn output_dir(&self) -> Result<PathBuf, Error> {
        match &self.out_dir {
            Some(d) => Ok(d.clone()),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| Error {
                    problems: vec![Problem::Config(
                        "OUT_DIR environment variable is not set: run from a build script, or \
                         set a directory with Builder::out_dir"
                            .to_string(),
                    )],
                }),
        }
    }

    /// Generates the files and writes them to the output directory, touching only files whose
    /// contents changed (so unchanged output triggers no rebuild), and prints
    /// `cargo:rerun-if-changed` for every spec unless turned off.
    ///
    /// # Errors
    /// As [`generate`](Builder::generate), plus a missing output directory and write errors.
    pub fn compile(&self) -> Result<(), Error> {
        if self.emit_rerun_if_changed {
            for spec in &self.specs {
                println!("cargo:rerun-if-changed={}", spec.display());
            }
        }
        let dir = self.output_dir()?;
        let files = self.generate()?;
        let io = |action, path: &Path, source| Error {
            problems: vec![Problem::Io {
                action,
                path: path.to_path_buf(),
                source,
            }],
        };
        std::fs::create_dir_all(&dir).map_err(|e| io("cannot create", &dir, e))?;
        for file in &files {
            let path = dir.join(&file.name);
            if std::fs::read(&path).is_ok_and(|old| old == file.contents.as_bytes()) {
                continue;
            }
            std::fs::write(&path, &file.contents).map_err(|e| io("cannot write", &path, e))?;
        }
        Ok(())
    }
}

/// Why code could not be generated: every spec's [`Diagnostics`], unreadable or unwritable
/// files, and bad settings, all reported at once.
///
/// `Debug` prints the same report as `Display`, so a `build.rs` whose `main` returns
/// `Result<(), tfrecord_schema::Error>` shows the rustc-style messages.
pub struct Error {
    problems: Vec<Problem>,
}

enum Problem {
    Spec(Diagnostics),
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    Config(String),
}

impl Error {
    /// Every located error in the specs, in order.
    pub fn diagnostics(&self) -> impl Iterator<Item = &SpecError> {
        self.problems.iter().flat_map(|p| match p {
            Problem::Spec(d) => d.iter().collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    }

    /// The number of problems (each spec error, each I/O error, each bad setting).
    pub fn count(&self) -> usize {
        self.problems
            .iter()
            .map(|p| match p {
                Problem::Spec(d) => d.len(),
                _ => 1,
            })
            .sum()
    }
}

/// Every problem, rustc-style, each followed by a blank line.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.problems {
            match p {
                Problem::Spec(d) => write!(f, "{d}")?,
                Problem::Io {
                    action,
                    path,
                    source,
                } => writeln!(f, "error: {action} `{}`: {source}\n", path.display())?,
                Problem::Config(msg) => writeln!(f, "error: {msg}\n")?,
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.problems.iter().find_map(|p| match p {
            Problem::Io { source, .. } => Some(source as &(dyn std::error::Error + 'static)),
            _ => None,
        })
    }
}
