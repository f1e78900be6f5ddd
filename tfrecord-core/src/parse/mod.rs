//! Batch parsing into tensors, bit for bit as `tf.io.parse_example` and
//! `tf.io.parse_sequence_example` (TensorFlow 2.x) return them.
//!
//! A [`Spec`] maps output names to [`FeatureSpec`]s, TensorFlow's feature configuration
//! types as plain data (`FixedLenFeature`, `VarLenFeature`, `SparseFeature`,
//! `FixedLenSequenceFeature`, `RaggedFeature` with every partition kind). Parsing a batch of
//! serialized records gives one [`Tensor`] per output, batch dimension first: dense tensors as a
//! flat row-major buffer with a shape, sparse tensors as COO (`indices`, `values`,
//! `dense_shape`), ragged tensors as flat values with their nested row splits.
//!
//! ```
//! use std::collections::BTreeMap;
//! use tfrecord_core::parse::{parse_example, tensors_to_json, DType, FeatureSpec, Tensor, Values};
//! use tfrecord_core::proto::tensorflow::{feature, Example, Feature, Features, Int64List};
//! use tfrecord_core::Message;
//!
//! let record = |ids: Vec<i64>| {
//!     let mut f = Features::default();
//!     let list = Int64List { value: ids };
//!     f.feature.insert("ids".into(), Feature { kind: Some(feature::Kind::Int64List(list)) });
//!     Example { features: Some(f) }.encode_to_vec()
//! };
//! let records = [record(vec![7, 8]), record(vec![9])];
//!
//! let mut spec = BTreeMap::new();
//! spec.insert("ids".to_string(), FeatureSpec::var_len(DType::Int64));
//! spec.insert("first".to_string(), FeatureSpec::fixed_len_with_default(DType::Int64, [], -1));
//! let out = parse_example(&spec, &records)?;
//!
//! assert_eq!(out["first"], Tensor::Dense { shape: vec![2], values: Values::Int64(vec![-1, -1]) });
//! assert_eq!(
//!     tensors_to_json(&out)["ids"].to_string(),
//!     r#"{"sparse":{"dense_shape":[2,2],"indices":[[0,0],[0,1],[1,0]],"values":[7,8,9]}}"#
//! );
//! # Ok::<(), tfrecord_core::Error>(())
//! ```
//!
//! # Semantics
//!
//! These follow TensorFlow's `FastParseExample` / `FastParseSequenceExample` kernels and the
//! Python layer above them (`parsing_config.py`), checked against outputs recorded from
//! TensorFlow 2.21:
//!
//! - **`FixedLen`**: each record holds exactly `prod(shape)` values of the type, or lacks the
//!   feature and the default is used (no default: an error). A `Feature` with no list set
//!   counts as missing.
//! - **`VarLen`**: `indices` are `[record, position]` in record order, `dense_shape` is
//!   `[batch, longest list]`.
//! - **`Sparse`** (`SparseFeature`): TensorFlow's `sparse_merge` of the index keys and the value
//!   key, then sorted by index (`tf.sparse.reorder`, a stable sort here: values under one
//!   repeated index keep their record order, where TensorFlow's sort, which is not stable,
//!   may put them in another once a batch holds more than 16 entries) unless
//!   `already_sorted`. Only the total counts are checked, as in TensorFlow; indices are not
//!   checked against `size`.
//! - **`FixedLenSequence`** in `parse_example`: rows of `shape`, padded with the default (or
//!   zero / `""`) to the record with the most rows.
//! - **`Ragged`**: the partitions are applied innermost first, exactly as
//!   `_add_batched_ragged_partition` does with `validate=False` (TensorFlow's default): the
//!   row partitions are used as given, not validated. Row splits are computed in the
//!   `row_splits_dtype` (TensorFlow's default is `int32`).
//! - Errors are [`Error`]s naming the record index (`Error::record`), the feature key
//!   (`Error::key`) and expected versus found, wherever TensorFlow fails (missing required
//!   feature, type mismatch, wrong value count, ...). Invalid specs (what TensorFlow's Python
//!   layer rejects with `ValueError`) are errors too.
//!
//! # Specs from a TOML spec file
//!
//! [`RecordSpec::from_record`] turns a record of a `tfrecord_schema` spec (the TOML spec format
//! of `tfrecord gen`, read with `tfrecord_schema::ir::Schema::from_toml_str`) into its runtime
//! form, the one the importers of `tfrecord-import` read too; its
//! [`example_spec`](RecordSpec::example_spec) and [`sequence_specs`](RecordSpec::sequence_specs)
//! are these feature specs, as `tfrecord parse --spec` runs them. Element types and partitions
//! are the spec's own ([`DType`], [`Partition`]), so a feature has one model from the spec to
//! the parsers.
//!
//! Decoding accepts every valid protobuf encoding, as the rest of this crate does (packed or
//! unpacked lists, split messages, map entries in either order, unknown fields), and reads it
//! as protobuf does. Where TensorFlow's fast parser departs from protobuf on such encodings, the
//! parsers here keep protobuf's rule: a packed list written as several runs is one list of all
//! their values (TensorFlow keeps the first run and silently drops the rest); a `Feature`
//! holding two lists is the last one; unknown fields are passed over wherever they are (TensorFlow
//! refuses one before the data of a list, feature or map entry); a map entry without a key or a
//! value has the empty default (TensorFlow refuses it). Bytes that are not a valid encoding are
//! an error even where TensorFlow's parser reads past them (a varint longer than ten bytes or with
//! bits beyond 64, a packed run longer than its list, a float run that is not a multiple of four
//! bytes). Records written by protobuf, TensorFlow or this crate never take these forms. Where a
//! key appears
//! twice in a record, the last entry wins, as in TensorFlow (for a dense feature, the last entry
//! that is not an empty `Feature`).
//!
//! Each record is walked once and its values are decoded straight into the output buffers.
//! Feature keys are matched against the spec by their bytes: first against the key at the
//! same position in the previous record (the records of one file nearly always share their key
//! order), then by binary search over the spec's sorted keys. Records in the layout every
//! writer produces (each key once, one list per feature, packed numbers) take a fast path;
//! anything else, and every error, is read by the general path, so results and errors are the
//! same either way. String tensors hold their values in one buffer ([`ByteStrings`]), and each
//! parser remembers how much the last batch held per record to size the next batch's buffers
//! at once; `parse_reusing` builds them in the buffers of earlier batches' tensors given back
//! to a [`Buffers`], so that a pipeline parsing batch after batch stops allocating (and
//! faulting in) megabytes per batch. [`ExampleParser::parse_parallel`] splits large batches over
//! threads with the same results.

mod buffers;
mod dtype;
mod example;
pub(crate) mod fast;
mod json;
mod narrow;
mod outputs;
mod plan;
mod ragged;
mod read;
mod schema;
mod sequence;
mod spec;
mod strings;
mod tensor;

/// The most memory one key's values of a batch may take once defaults (or an Arrow column's
/// null rows) are filled in: 2 GiB. A record's own values are bounded by its bytes; a fill is
/// not, as every record lacking the feature takes it.
pub(crate) const MAX_FILLED_BYTES: usize = 2 << 30;

#[cfg(test)]
mod tests;

pub use buffers::Buffers;
pub use dtype::{DType, Partition};
pub use schema::{RecordFeature, RecordSpec};
pub use spec::{FeatureSpec, Spec, SplitsDType};
pub use strings::{ByteStrings, ByteStringsIter};
pub use tensor::{Tensor, Tensors, Values, tensors_to_json};

use crate::error::{Error, Result};
use example::total_bytes;
use plan::{Mode, Plan};

/// How many rows value row ids may imply per batch: 8 per input byte, plus 64 Ki. A larger
/// count (a huge id in a small record) is an error instead of a huge allocation.
fn row_budget(total_bytes: usize) -> usize {
    total_bytes.saturating_mul(8).saturating_add(1 << 16)
}

/// A compiled [`Spec`] for `tf.train.Example` batches: check the spec once, parse many
/// batches.
#[derive(Clone, Debug)]
pub struct ExampleParser {
    plan: Plan,
}

impl ExampleParser {
    /// Checks `spec` as TensorFlow does when building the parse op.
    ///
    /// # Errors
    /// What `tf.io.parse_example` rejects with `ValueError`: an empty spec, a key used with
    /// conflicting types or as both a dense and a sparse / ragged key, a default that does not
    /// fit the shape or type, a `FixedLenSequence` without `allow_missing`, a `SparseFeature`
    /// whose sizes do not match its index keys, a zero uniform row length.
    pub fn new(spec: &Spec) -> Result<Self> {
        if spec.is_empty() {
            return Err(Error::feature(
                "invalid feature spec: at least one feature is needed",
            ));
        }
        Ok(ExampleParser {
            plan: Plan::compile(spec, Mode::Example)?,
        })
    }

    /// Parses a batch of serialized `tf.train.Example`s, as `tf.io.parse_example`.
    ///
    /// # Errors
    /// Malformed records, and every case where TensorFlow fails (see the [module](self) docs);
    /// the error names the record index and the feature key.
    pub fn parse<R: AsRef<[u8]>>(&self, records: &[R]) -> Result<Tensors> {
        self.parse_reusing(records, &mut Buffers::new())
    }

    /// As [`parse`](Self::parse), building the tensors in the buffers of earlier batches'
    /// tensors, given back to `buffers` (see [`Buffers`]), where it has them.
    ///
    /// # Errors
    /// As [`parse`](Self::parse).
    pub fn parse_reusing<R: AsRef<[u8]>>(
        &self,
        records: &[R],
        buffers: &mut Buffers,
    ) -> Result<Tensors> {
        buffers.begin();
        let bufs = example::parse_run(&self.plan, records, 0, true, buffers)?;
        self.finish(bufs, records.len(), total_bytes(records), buffers)
    }

    /// As [`parse`](Self::parse), with the records split over `threads` threads (`0`: as many as
    /// the machine has). Small batches are parsed on the calling thread. The result, and the
    /// error when there is one, are the same as `parse`'s.
    ///
    /// # Errors
    /// As [`parse`](Self::parse).
    pub fn parse_parallel<R: AsRef<[u8]> + Sync>(
        &self,
        records: &[R],
        threads: usize,
    ) -> Result<Tensors> {
        const MIN_PER_THREAD: usize = 64;
        let threads = if threads == 0 {
            crate::cores()
        } else {
            threads
        };
        let threads = threads.min(records.len() / MIN_PER_THREAD).max(1);
        if threads == 1 {
            return self.parse(records);
        }
        let per = records.len().div_ceil(threads);
        let plan = &self.plan;
        let runs: Vec<Result<Vec<example::KeyBuf>>> = std::thread::scope(|s| {
            let handles: Vec<_> = records
                .chunks(per)
                .enumerate()
                .map(|(i, chunk)| {
                    s.spawn(move || {
                        example::parse_run(plan, chunk, i * per, true, &mut Buffers::new())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::feature("internal error: a parsing thread panicked"))
                    })
                })
                .collect()
        });
        // The first failing run holds the first failing record: the same error as `parse`.
        let runs = runs.into_iter().collect::<Result<Vec<_>>>()?;
        self.finish(
            example::merge_runs(runs),
            records.len(),
            total_bytes(records),
            &mut Buffers::new(),
        )
    }

    fn finish(
        &self,
        bufs: Vec<example::KeyBuf>,
        batch: usize,
        bytes: usize,
        spare: &mut Buffers,
    ) -> Result<Tensors> {
        let raws = outputs::finish_keys(&self.plan, bufs, batch, spare)?;
        outputs::build_outputs(&self.plan, raws, row_budget(bytes), spare)
    }
}

/// A compiled pair of specs for `tf.train.SequenceExample` batches.
#[derive(Clone, Debug)]
pub struct SequenceExampleParser {
    context: Plan,
    lists: Plan,
}

impl SequenceExampleParser {
    /// Checks the specs as TensorFlow does: the context takes `FixedLen`, `VarLen` and
    /// `Ragged` features; the feature lists take `VarLen`, `FixedLenSequence` (without a
    /// default) and `Ragged`.
    ///
    /// # Errors
    /// Both specs empty, an unsupported feature type, and what [`ExampleParser::new`] rejects.
    pub fn new(context: &Spec, feature_lists: &Spec) -> Result<Self> {
        if context.is_empty() && feature_lists.is_empty() {
            return Err(Error::feature(
                "invalid feature spec: at least one context feature or feature list is needed",
            ));
        }
        Ok(SequenceExampleParser {
            context: Plan::compile(context, Mode::Context)?,
            lists: Plan::compile(feature_lists, Mode::FeatureLists)?,
        })
    }

    /// Parses a batch of serialized `tf.train.SequenceExample`s, as
    /// `tf.io.parse_sequence_example`: the context tensors, the feature-list tensors, and for
    /// each `FixedLenSequence` feature list the number of steps of each record (a dense
    /// `int64` tensor of shape `[batch]`).
    ///
    /// Feature lists come out with two batch dimensions: a `FixedLenSequence` as
    /// `[batch, max_steps] + shape` padded with zeros / `""`, a `VarLen` as a sparse
    /// `[batch, max_steps, max_values]` tensor, a `Ragged` as `[batch, (steps), (values)]`.
    ///
    /// # Errors
    /// Malformed records, and every case where TensorFlow fails; the error names the record
    /// index and the feature key.
    pub fn parse<R: AsRef<[u8]>>(&self, records: &[R]) -> Result<(Tensors, Tensors, Tensors)> {
        self.parse_reusing(records, &mut Buffers::new())
    }

    /// As [`parse`](Self::parse), building the tensors in the buffers of earlier batches'
    /// tensors, given back to `buffers` (all three maps of a batch: see [`Buffers`]), where it
    /// has them.
    ///
    /// # Errors
    /// As [`parse`](Self::parse).
    pub fn parse_reusing<R: AsRef<[u8]>>(
        &self,
        records: &[R],
        buffers: &mut Buffers,
    ) -> Result<(Tensors, Tensors, Tensors)> {
        buffers.begin();
        sequence::parse_batch(
            &self.context,
            &self.lists,
            records,
            row_budget(total_bytes(records)),
            true,
            buffers,
        )
    }
}

/// Parses a batch of serialized `tf.train.Example`s into one tensor per output of `spec`,
/// exactly as `tf.io.parse_example(records, spec)` does.
///
/// # Errors
/// An invalid spec ([`ExampleParser::new`]), malformed records, and every case where TensorFlow
/// fails: a required feature missing, a value list of another type, a `FixedLen` feature with
/// the wrong number of values, ... The error names the record index and the feature key.
pub fn parse_example<R: AsRef<[u8]>>(spec: &Spec, records: &[R]) -> Result<Tensors> {
    ExampleParser::new(spec)?.parse(records)
}

/// Parses a batch of serialized `tf.train.SequenceExample`s, exactly as
/// `tf.io.parse_sequence_example(records, context_spec, sequence_spec)` does: the context
/// tensors, the feature-list tensors, and the feature-list lengths (see
/// [`SequenceExampleParser::parse`]).
///
/// # Errors
/// As [`SequenceExampleParser::new`] and [`SequenceExampleParser::parse`].
pub fn parse_sequence_example<R: AsRef<[u8]>>(
    context_spec: &Spec,
    sequence_spec: &Spec,
    records: &[R],
) -> Result<(Tensors, Tensors, Tensors)> {
    SequenceExampleParser::new(context_spec, sequence_spec)?.parse(records)
}
