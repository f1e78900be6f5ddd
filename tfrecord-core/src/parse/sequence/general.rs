//! The general path of `tf.io.parse_sequence_example`: every record scanned in any valid
//! encoding, the kinds of the features checked, then the keys read in the passes TensorFlow runs
//! (context, then feature lists; dense, sparse, ragged), so that the first error is the one
//! TensorFlow reports.

use std::collections::BTreeMap;

use super::keys::{context_key, list_key};
use crate::codec::{FeatureBytes, scan_sequence};
use crate::error::{Error, Result};
use crate::feature::FeatureProblem;
use crate::parse::outputs::{RawBatch, RawOut};
use crate::parse::plan::{Plan, RawKey, RawKind};
use crate::parse::read::{
    check_kind, dtype_mismatch, field_error, for_each_step, problem_error, view, wrong_kind,
};
use crate::parse::tensor::{Tensor, Values};

/// Which of TensorFlow's passes a key belongs to, in the order it runs them.
fn pass(kind: &RawKind) -> u8 {
    match kind {
        RawKind::Dense { .. } | RawKind::DenseVar { .. } => 0,
        RawKind::Sparse => 1,
        RawKind::Ragged { .. } => 2,
    }
}

/// Parses a batch by the general path, which reads every valid encoding and words the errors
/// as TensorFlow orders them.
pub(super) fn general_batch<R: AsRef<[u8]>>(
    ctx: &Plan,
    seq: &Plan,
    records: &[R],
) -> Result<RawBatch> {
    let batch = records.len();
    let (nc, ns) = (ctx.raw.len(), seq.raw.len());
    let mut cslots: Vec<Option<FeatureBytes<'_>>> = vec![None; batch.saturating_mul(nc)];
    let mut sslots: Vec<Option<FeatureBytes<'_>>> = vec![None; batch.saturating_mul(ns)];
    for (e, record) in records.iter().enumerate() {
        let crow = cslots.get_mut(e * nc..(e + 1) * nc).unwrap_or_default();
        let srow = sslots.get_mut(e * ns..(e + 1) * ns).unwrap_or_default();
        // The last entry of a key wins, as in TensorFlow.
        scan_sequence(
            record.as_ref(),
            |key, msg| {
                if let Some(slot) = ctx.lookup(key).and_then(|i| crow.get_mut(i)) {
                    *slot = Some(msg);
                }
                Ok(())
            },
            |key, msg| {
                if let Some(slot) = seq.lookup(key).and_then(|i| srow.get_mut(i)) {
                    *slot = Some(msg);
                }
                Ok(())
            },
        )
        .map_err(|err| err.with_record(u64::try_from(e).unwrap_or(u64::MAX)))?;
    }
    let cslot = |e: usize, k: usize| cslots.get(e * nc + k).cloned().flatten();
    let sslot = |e: usize, k: usize| sslots.get(e * ns + k).cloned().flatten();

    // First TensorFlow checks the type of every feature present, context then feature lists.
    for (k, raw) in ctx.raw.iter().enumerate() {
        for e in 0..batch {
            if let Some(msg) = cslot(e, k) {
                let f = view(msg, &raw.key, e)?;
                if f.has_kind() {
                    check_kind(&f, raw.dtype).map_err(|err| kind_error(raw, e, None, err))?;
                }
            }
        }
    }
    for (k, raw) in seq.raw.iter().enumerate() {
        for e in 0..batch {
            if let Some(list) = sslot(e, k) {
                for_each_step(&list, &raw.key, e, |step, f| {
                    if f.has_kind() {
                        check_kind(&f, raw.dtype)
                            .map_err(|err| kind_error(raw, e, Some(step), err))?;
                    }
                    Ok(())
                })?;
            }
        }
    }

    // Then it builds the context's dense, sparse and ragged keys, then the feature lists'.
    let mut craws: Vec<Option<RawOut>> = vec![None; nc];
    for p in 0..3u8 {
        for (k, raw) in ctx.raw.iter().enumerate() {
            if pass(&raw.kind) != p {
                continue;
            }
            let slots: Vec<Option<FeatureBytes<'_>>> = (0..batch).map(|e| cslot(e, k)).collect();
            if let Some(out) = craws.get_mut(k) {
                *out = Some(context_key(raw, slots, ctx.max_filled)?);
            }
        }
    }
    let mut sraws: Vec<Option<RawOut>> = vec![None; ns];
    let mut lengths = BTreeMap::new();
    for p in 0..3u8 {
        for (k, raw) in seq.raw.iter().enumerate() {
            if pass(&raw.kind) != p {
                continue;
            }
            let slots: Vec<Option<FeatureBytes<'_>>> = (0..batch).map(|e| sslot(e, k)).collect();
            let (out, len) = list_key(raw, slots)?;
            if let Some(len) = len {
                lengths.insert(
                    raw.key.clone(),
                    Tensor::Dense {
                        shape: vec![batch],
                        values: Values::Int64(len),
                    },
                );
            }
            if let Some(o) = sraws.get_mut(k) {
                *o = Some(out);
            }
        }
    }
    let unwrap = |v: Vec<Option<RawOut>>| -> Vec<RawOut> {
        v.into_iter()
            .map(|o| {
                o.unwrap_or(RawOut::Var {
                    values: Values::Int64(Vec::new()),
                    ends: Vec::new(),
                })
            })
            .collect()
    };
    Ok((unwrap(craws), unwrap(sraws), lengths))
}

#[cold]
fn kind_error(raw: &RawKey, record: usize, step: Option<usize>, err: FeatureProblem) -> Error {
    match err {
        FeatureProblem::WrongKind { found, .. } => {
            let place = match step {
                None => "context feature".to_string(),
                Some(s) => format!("feature list step {s}"),
            };
            problem_error(
                &raw.key,
                record,
                wrong_kind(raw.dtype, found),
                format!("{place}: {}", dtype_mismatch(raw.dtype, found)),
            )
        }
        other => field_error(&raw.key, record, raw.dtype, other),
    }
}
