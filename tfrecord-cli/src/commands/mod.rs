//! The subcommands, one module each (the three importers share one). Each takes its flags
//! from [`crate::cli`] and returns the exit status; none depends on another.

pub(crate) mod cat;
pub(crate) mod convert;
pub(crate) mod count;
pub(crate) mod from_json;
pub(crate) mod generate;
pub(crate) mod import;
pub(crate) mod index;
pub(crate) mod infer;
pub(crate) mod parquet;
pub(crate) mod parse;
pub(crate) mod verify;
