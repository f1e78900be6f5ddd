//! Sparse features, as `tf.io.SparseFeature` stores them: one int64 feature of indices per
//! dimension and one feature of values.

use super::dialect::Dialect;
use super::elem::{DecodeElem, EncodeElem};
use super::field::{EncodeField, FieldInfo};
use super::message::FeatureBytes;
use super::record::{entry_len, put_entry};
use super::view::FeatureView;
use crate::error::Result;
use crate::feature::FeatureProblem;

/// A sparse tensor of one record, stored as `tf.io.SparseFeature` does it: for each dimension
/// `d`, an int64 feature holding `indices[d]`, and a feature holding `values`; all the lists have
/// one entry per value.
///
/// ```
/// use tfrecord_core::{Example, Sparse};
///
/// #[derive(Example)]
/// struct Clicks {
///     // Features "item_idx" (int64) and "item_weight" (float); indices below 1000.
///     #[example(sparse(index = "item_idx", value = "item_weight", size = [1000]))]
///     items: Sparse<f32>,
/// }
/// let c = Clicks { items: Sparse::new_1d(vec![3, 17], vec![0.5, 2.0]) };
/// assert_eq!(c.items.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sparse<T> {
    /// `indices[d][i]` is the index of `values[i]` in dimension `d`.
    pub indices: Vec<Vec<i64>>,
    /// The values.
    pub values: Vec<T>,
}

impl<T> Sparse<T> {
    /// A one-dimensional sparse vector.
    pub fn new_1d(indices: Vec<i64>, values: Vec<T>) -> Self {
        Sparse {
            indices: vec![indices],
            values,
        }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The length of a sparse field's map entries: one per index key, then the value key.
#[inline]
pub fn sparse_entries_len<D: Dialect, T: EncodeElem<D>>(
    prefix_len: usize,
    index_keys: &[&[u8]],
    value_key: &[u8],
    s: &Sparse<T>,
) -> usize
where
    Vec<i64>: EncodeField<D>,
    Vec<T>: EncodeField<D>,
{
    let empty = Vec::new();
    let idx: usize = index_keys
        .iter()
        .enumerate()
        .map(|(d, k)| {
            entry_len::<D, Vec<i64>>(prefix_len + k.len(), s.indices.get(d).unwrap_or(&empty))
        })
        .sum();
    idx + entry_len::<D, Vec<T>>(prefix_len + value_key.len(), &s.values)
}

/// Appends a sparse field's map entries.
#[inline]
pub fn put_sparse<D: Dialect, T: EncodeElem<D>>(
    buf: &mut Vec<u8>,
    prefix: &[u8],
    index_keys: &[&[u8]],
    value_key: &[u8],
    s: &Sparse<T>,
) where
    Vec<i64>: EncodeField<D>,
    Vec<T>: EncodeField<D>,
{
    let empty = Vec::new();
    for (d, k) in index_keys.iter().enumerate() {
        put_entry::<D, Vec<i64>>(buf, prefix, k, s.indices.get(d).unwrap_or(&empty));
    }
    put_entry::<D, Vec<T>>(buf, prefix, value_key, &s.values);
}

/// Checks a sparse field about to be written as [`sparse`] checks what it reads, so that a
/// writer never writes one that this crate's readers or `tf.io.SparseFeature` would refuse:
/// one index list per index key, each with one entry per value, each index in `0..size[d]`
/// when a size is given. An empty value with no index lists (`Sparse::default()`) is written
/// as empty lists, and passes.
///
/// # Errors
/// The first list that does not fit, naming its key.
pub fn check_sparse<T>(
    s: &Sparse<T>,
    index_infos: &[FieldInfo],
    value_info: &FieldInfo,
    size: &[u64],
) -> Result<()> {
    if s.indices.is_empty() && s.values.is_empty() {
        return Ok(());
    }
    if s.indices.len() != index_infos.len() {
        let detail = format!(
            "the sparse value holds indices of {} dimension(s), but the field stores {} index \
             feature(s) ({}) (field `{}::{}`)",
            s.indices.len(),
            index_infos.len(),
            index_infos
                .iter()
                .map(|i| format!("{:?}", i.key))
                .collect::<Vec<_>>()
                .join(", "),
            value_info.record,
            value_info.member
        );
        return Err(
            crate::Error::feature_problem(FeatureProblem::Other, detail).with_key(value_info.key)
        );
    }
    for (d, (idx, info)) in s.indices.iter().zip(index_infos).enumerate() {
        if idx.len() != s.values.len() {
            return Err(info.error(FeatureProblem::Count {
                expected: s.values.len(),
                found: idx.len(),
            }));
        }
        within(idx, size.get(d), info)?;
    }
    Ok(())
}

/// Checks that every index of dimension list `idx` lies in `0..bound`, when a bound is given.
///
/// # Errors
/// The first index outside, naming `info`'s key.
fn within(idx: &[i64], bound: Option<&u64>, info: &FieldInfo) -> Result<()> {
    let Some(&size) = bound else {
        return Ok(());
    };
    match idx.iter().find(|&&i| i < 0 || i.cast_unsigned() >= size) {
        Some(&index) => Err(info.error(FeatureProblem::IndexOutOfRange { index, size })),
        None => Ok(()),
    }
}

fn list<'de, D: Dialect, T: DecodeElem<'de, D>>(
    slot: Option<FeatureBytes<'de>>,
    info: &FieldInfo,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    if let Some(m) = slot {
        let view = FeatureView::new::<D>(m).map_err(|e| info.error(e))?;
        view.values::<D>(T::KIND)
            .and_then(|v| v.extend_into::<D, T>(&mut out))
            .map_err(|e| info.error(e))?;
    }
    Ok(out)
}

/// Decodes a sparse field from its index slots and value slot. Absent features are empty lists
/// (as `tf.io.SparseFeature` reads them); every index list must have one entry per value, and
/// each index must lie in `0..size[d]` when a size is given. Unless `already_sorted`, the
/// entries are put in the order of their indices (row-major, a stable sort), as
/// `tf.io.SparseFeature` without `already_sorted` gives them (`tf.sparse.reorder`).
///
/// # Errors
/// Wrong kinds, lists of different lengths, indices out of range; naming the key.
pub fn sparse<'de, D: Dialect, T: DecodeElem<'de, D>>(
    index_slots: &mut [Option<FeatureBytes<'de>>],
    index_infos: &[FieldInfo],
    value_slot: Option<FeatureBytes<'de>>,
    value_info: &FieldInfo,
    size: &[u64],
    already_sorted: bool,
) -> Result<Sparse<T>>
where
    i64: DecodeElem<'de, D>,
{
    let values: Vec<T> = list::<D, T>(value_slot, value_info)?;
    let mut indices = Vec::with_capacity(index_infos.len());
    for (d, info) in index_infos.iter().enumerate() {
        let slot = index_slots.get_mut(d).and_then(Option::take);
        let absent = slot.is_none();
        let idx: Vec<i64> = list::<D, i64>(slot, info)?;
        if idx.len() != values.len() {
            let problem = FeatureProblem::Count {
                expected: values.len(),
                found: idx.len(),
            };
            if absent {
                // Values without their indices: say which list is missing.
                let detail = format!(
                    "the index feature is absent, but the value feature {:?} holds {} value(s) \
                     (field `{}::{}`)",
                    value_info.key,
                    values.len(),
                    info.record,
                    info.member
                );
                return Err(crate::Error::feature_problem(problem, detail).with_key(info.key));
            }
            return Err(info.error(problem));
        }
        within(&idx, size.get(d), info)?;
        indices.push(idx);
    }
    let mut s = Sparse { indices, values };
    if !already_sorted {
        s.reorder();
    }
    Ok(s)
}

impl<T> Sparse<T> {
    /// Puts the entries in the order of their indices (row-major; entries with equal indices
    /// keep their order).
    fn reorder(&mut self) {
        let key = |i: usize| self.indices.iter().map(move |dim| dim.get(i).copied());
        let n = self.values.len();
        if (1..n).all(|i| key(i - 1).le(key(i))) {
            return;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| key(a).cmp(key(b)));
        for dim in &mut self.indices {
            *dim = order.iter().filter_map(|&i| dim.get(i).copied()).collect();
        }
        let mut values: Vec<Option<T>> = std::mem::take(&mut self.values)
            .into_iter()
            .map(Some)
            .collect();
        self.values = order
            .iter()
            .filter_map(|&i| values.get_mut(i).and_then(Option::take))
            .collect();
    }
}
