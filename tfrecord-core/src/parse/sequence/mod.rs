//! `tf.io.parse_sequence_example`: a batch of serialized `tf.train.SequenceExample`s to
//! context tensors, feature-list tensors and feature-list lengths, following TensorFlow's
//! `FastParseSequenceExample`.
//!
//! This file is the entry: the [`fast`] path takes the batch when every record is in the
//! canonical form, the [`general`] path (with the per-key reading of [`keys`]) otherwise; the
//! outputs are then put together in [`outputs`](super::outputs), as for `parse_example`.

mod fast;
mod general;
mod keys;

use std::collections::BTreeMap;

use super::buffers::Buffers;
use super::outputs::build_outputs;
use super::plan::Plan;
use super::tensor::Tensor;
use crate::error::Result;
use fast::fast_batch;
use general::general_batch;

/// The parsed batch: context tensors, feature-list tensors, feature-list lengths.
pub(crate) type SequenceOutput = (
    BTreeMap<String, Tensor>,
    BTreeMap<String, Tensor>,
    BTreeMap<String, Tensor>,
);

/// Parses a batch of `SequenceExample`s: by the fast path, or when that declines the batch (or
/// `fast` is false, as tests ask) by the general path. The fast path builds its outputs in
/// buffers from `spare`.
pub(crate) fn parse_batch<R: AsRef<[u8]>>(
    ctx: &Plan,
    seq: &Plan,
    records: &[R],
    row_budget: usize,
    fast: bool,
    spare: &mut Buffers,
) -> Result<SequenceOutput> {
    let raws = if fast {
        fast_batch(ctx, seq, records, spare)
    } else {
        None
    };
    let (craws, sraws, lengths) = match raws {
        Some(raws) => raws,
        None => general_batch(ctx, seq, records)?,
    };
    let context = build_outputs(ctx, craws, row_budget, spare)?;
    let lists = build_outputs(seq, sraws, row_budget, spare)?;
    Ok((context, lists, lengths))
}
