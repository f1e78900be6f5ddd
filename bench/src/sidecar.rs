//! The JSON sidecar the peer harness's `gen_data.py` writes beside each workload file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tfrecord_core::Compression;

/// One entry of a feature spec: `{"kind": "fixed"|"varlen"|"fixed_seq", "dtype": ..., "shape": [...]}`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub(crate) struct Feat {
    /// `fixed` (FixedLenFeature), `varlen` (VarLenFeature), `fixed_seq` (FixedLenSequenceFeature).
    pub(crate) kind: String,
    /// `int64`, `float32` or `string`.
    pub(crate) dtype: String,
    /// The shape of `fixed` and `fixed_seq` features.
    #[serde(default)]
    pub(crate) shape: Vec<u64>,
}

/// The fields of `<workload>.json` this benchmark uses.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Sidecar {
    /// The file name, relative to the data directory.
    file: String,
    /// `example` or `sequence_example`.
    pub(crate) record_kind: String,
    /// `null` or `"GZIP"`.
    compression: Option<String>,
    /// Records in the file.
    pub(crate) num_records: u64,
    /// Sum of the payload lengths.
    pub(crate) payload_bytes: u64,
    /// Uncompressed TFRecord stream bytes: payload + 16 per record (the protocol's `bytes`).
    pub(crate) stream_bytes: u64,
    /// The size of the file on disk.
    pub(crate) file_bytes: u64,
    /// Example features.
    #[serde(default)]
    pub(crate) features: BTreeMap<String, Feat>,
    /// SequenceExample context features.
    #[serde(default)]
    pub(crate) context_features: BTreeMap<String, Feat>,
    /// SequenceExample feature lists.
    #[serde(default)]
    pub(crate) sequence_features: BTreeMap<String, Feat>,
    /// Where the workload file is (set after loading).
    #[serde(skip)]
    pub(crate) path: PathBuf,
    /// The workload name (set after loading).
    #[serde(skip)]
    pub(crate) name: String,
}

impl Sidecar {
    /// Reads `<dir>/<name>.json`.
    pub(crate) fn load(dir: &Path, name: &str) -> Result<Sidecar, String> {
        let p = dir.join(format!("{name}.json"));
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mut sc: Sidecar =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        sc.path = dir.join(&sc.file);
        sc.name = name.to_string();
        if sc.stream_bytes != sc.payload_bytes + 16 * sc.num_records {
            return Err(format!(
                "{}: stream_bytes != payload + 16 * records",
                p.display()
            ));
        }
        Ok(sc)
    }

    /// The stream compression.
    pub(crate) fn compression(&self) -> Result<Compression, String> {
        match self.compression.as_deref() {
            None => Ok(Compression::None),
            Some(c) => Compression::parse(c).ok_or_else(|| format!("unknown compression {c}")),
        }
    }

    /// A sidecar for records made in memory (unit tests).
    #[cfg(test)]
    pub(crate) fn for_spec(
        name: &str,
        is_sequence: bool,
        spec: (BTreeMap<String, Feat>, BTreeMap<String, Feat>),
        num_records: u64,
    ) -> Sidecar {
        let (a, b) = spec;
        let (features, context_features) = if is_sequence {
            (BTreeMap::new(), a)
        } else {
            (a, BTreeMap::new())
        };
        Sidecar {
            file: format!("{name}.tfrecord"),
            record_kind: if is_sequence {
                "sequence_example"
            } else {
                "example"
            }
            .into(),
            compression: None,
            num_records,
            payload_bytes: 0,
            stream_bytes: 0,
            file_bytes: 0,
            features,
            context_features,
            sequence_features: b,
            path: PathBuf::new(),
            name: name.into(),
        }
    }

    /// Whether the records are `SequenceExample`s.
    pub(crate) fn is_sequence(&self) -> bool {
        self.record_kind == "sequence_example"
    }
}
