//! Framing-level reading of whole files and parts of them: byte-range splits, the bad-record
//! policies and their reports, and index files.

mod framing {
    pub(crate) mod common;
    mod index;
    mod policy;
    mod split;
}
