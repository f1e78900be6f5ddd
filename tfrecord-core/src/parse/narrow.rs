//! Features declared `int32` or `bool`: read from their `int64_list` as `int64`, and each value
//! checked against its type's range, with the same rule and error as the derived types.

use super::dtype::DType;
use super::tensor::{Tensor, Values};
use crate::error::{Error, Result};
use crate::feature::FeatureProblem;

/// Checks the values of output `name`, declared `dtype`; a value out of range is an error naming
/// the output, the record it came from, and the value.
pub(crate) fn check(name: &str, dtype: DType, tensor: &Tensor) -> Result<()> {
    let Values::Int64(values) = tensor.values() else {
        return Ok(());
    };
    let fits = |v: i64| match dtype {
        DType::Int32 => i32::try_from(v).is_ok(),
        DType::Bool => v == 0 || v == 1,
        _ => true,
    };
    let Some(at) = values.iter().position(|&v| !fits(v)) else {
        return Ok(());
    };
    let value = values[at];
    let problem = match dtype {
        DType::Bool => FeatureProblem::Bool(value),
        _ => FeatureProblem::Range {
            value: value.to_string(),
            ty: "int32",
        },
    };
    let detail = problem.to_string();
    let mut err = Error::feature_problem(problem, detail).with_key(name);
    if let Some(record) = record_of(tensor, at) {
        err = err.with_record(u64::try_from(record).unwrap_or(u64::MAX));
    }
    Err(err)
}

/// The record (index in the batch) value `i` of `tensor` came from.
fn record_of(tensor: &Tensor, i: usize) -> Option<usize> {
    match tensor {
        Tensor::Dense { shape, .. } => {
            let per: usize = shape.iter().skip(1).product();
            (per > 0).then(|| i / per)
        }
        Tensor::Sparse {
            indices,
            dense_shape,
            ..
        } => {
            let rank = dense_shape.len();
            indices.get(i * rank).and_then(|&r| usize::try_from(r).ok())
        }
        Tensor::Ragged {
            nested_row_splits, ..
        } => {
            let mut at = i64::try_from(i).ok()?;
            for splits in nested_row_splits.iter().rev() {
                let row = splits.windows(2).position(|w| w[0] <= at && at < w[1])?;
                at = i64::try_from(row).ok()?;
            }
            usize::try_from(at).ok()
        }
    }
}
