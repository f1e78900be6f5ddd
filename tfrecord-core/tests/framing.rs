//! Framing-level reading of whole files and parts of them: byte-range splits, the bad-record
//! policies and their reports, index files, and the threads a file is read on.

mod framing {
    pub(crate) mod common;
    mod index;
    mod parallel;
    mod policy;
    mod split;
}
