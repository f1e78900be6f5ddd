//! The fast path of both parsers: feature keys predicted from the previous record's key order,
//! and features in the layout every writer produces (one list per feature, numbers packed)
//! decoded without a [`FeatureView`].
//!
//! Nothing here reports an error: each helper returns `None` (or `false`) when the input is
//! anything but the canonical case, and the caller then runs the general path, which decides what
//! the input means and words the errors.
//!
//! [`FeatureView`]: crate::codec::FeatureView

use super::dtype::{DType, list_kind};
use super::plan::Plan;
use super::strings::ByteStrings;
use super::tensor::Values;
use crate::codec::view::short_feature;
use crate::codec::wire::split_len;
use crate::codec::{DecodeElem, Dialect, Tf, key_prefix_word};

/// Whether two feature keys are equal; keys of up to eight bytes take one integer comparison.
#[inline]
pub(crate) fn same_key(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && if a.len() <= 8 {
            key_prefix_word(a) == key_prefix_word(b)
        } else {
            a == b
        }
}

/// Looks up the map entries of a record in a [`Plan`], guessing each entry's spec key from the
/// key at the same position in the previous record: the records of one file nearly always
/// share their key order, so most entries take one key comparison instead of a binary search.
pub(crate) struct KeyPredictor<'a> {
    /// `(key, raw key index)` of the entry at each position of the previous record.
    last: Vec<(&'a [u8], Option<usize>)>,
}

impl<'a> KeyPredictor<'a> {
    /// Positions remembered: enough for any spec, bounded whatever a record holds.
    const MAX_POSITIONS: usize = 4096;

    pub(crate) fn new() -> Self {
        KeyPredictor { last: Vec::new() }
    }

    /// The raw key index of `key`, the entry at position `pos` of its record.
    #[inline]
    pub(crate) fn lookup(&mut self, plan: &Plan, pos: usize, key: &'a [u8]) -> Option<usize> {
        if let Some(&(k, i)) = self.last.get(pos)
            && same_key(k, key)
        {
            return i;
        }
        let i = plan.lookup(key);
        if let Some(slot) = self.last.get_mut(pos) {
            *slot = (key, i);
        } else if pos == self.last.len() && pos < Self::MAX_POSITIONS {
            self.last.push((key, i));
        }
        i
    }
}

/// The oneof member of a `tf.train.Feature` holding values of `dtype` (1 bytes, 2 float,
/// 3 int64).
pub(crate) fn list_tag(dtype: DType) -> u32 {
    Tf::tag(list_kind(dtype)).unwrap_or(0)
}

/// The body of the list of a serialized `Feature` (one slice) in the canonical layout: nothing
/// but one list, of oneof member `tag`. An empty `Feature` (no list set) reads as an empty
/// body. `None` for every other layout or kind.
#[inline(always)]
fn canonical_list(tag: u32, bytes: &[u8]) -> Option<&[u8]> {
    match bytes {
        [] => Some(&[]),
        // `tag << 3 | 2` is one byte for the three list kinds.
        [t, rest @ ..] if u32::from(*t) == (tag << 3 | 2) => match split_len(rest)? {
            (body, []) => Some(body),
            _ => None,
        },
        _ => None,
    }
}

/// A values buffer of one list kind, which the fast path decodes into.
pub(crate) trait Sink {
    /// The number of values.
    fn count(&self) -> usize;

    /// Appends the values of `value`, one `value` field of a list (a packed run of numbers, or
    /// one string); `None` when the run is malformed.
    fn push_value(&mut self, value: &[u8]) -> Option<()>;

    /// [`push_value`](Self::push_value) of `within[..len]`, where `within` runs on past the
    /// value to the end of the enclosing message, so that a packed run can be read a word at
    /// a time up to its last value (see [`DecodeElem::extend_packed_within`]).
    #[inline]
    fn push_within(&mut self, within: &[u8], len: usize) -> Option<()> {
        self.push_value(within.get(..len)?)
    }

    /// Appends the values of a serialized `Feature` (one slice) holding a list of oneof member
    /// `tag` whose values are packed (numbers) or length-delimited (strings), and returns how
    /// many there were. `None` for every other layout or kind, and for malformed values;
    /// `self` may then hold some of the values already, and the caller truncates it.
    #[inline]
    fn extend_canonical(&mut self, tag: u32, bytes: &[u8]) -> Option<usize> {
        let before = self.count();
        // One `value` field in a list of under 126 bytes, the most common case.
        if let Some((t, value)) = short_feature(bytes)
            && t == tag
        {
            self.push_value(value)?;
            return Some(self.count() - before);
        }
        let body = canonical_list(tag, bytes)?;
        for_each_field_1(body, |v| self.push_value(v).is_some()).then(|| self.count() - before)
    }
}

impl Sink for Vec<i64> {
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn push_value(&mut self, run: &[u8]) -> Option<()> {
        <i64 as DecodeElem<'_, Tf>>::extend_packed(run, self).ok()
    }

    #[inline]
    fn push_within(&mut self, within: &[u8], len: usize) -> Option<()> {
        <i64 as DecodeElem<'_, Tf>>::extend_packed_within(within, len, self).ok()
    }
}

impl Sink for Vec<f32> {
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn push_value(&mut self, run: &[u8]) -> Option<()> {
        // One value (a scalar step, a scalar feature) without the call and copy of a run.
        if let Ok(bits) = <[u8; 4]>::try_from(run) {
            self.push(f32::from_le_bytes(bits));
            return Some(());
        }
        <f32 as DecodeElem<'_, Tf>>::extend_packed(run, self).ok()
    }
}

impl Sink for ByteStrings {
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn push_value(&mut self, value: &[u8]) -> Option<()> {
        self.push(value);
        Some(())
    }
}

/// [`Sink::extend_canonical`] on a values buffer of a feature type; `None` for the other types.
#[inline]
pub(crate) fn extend_canonical(out: &mut Values, tag: u32, bytes: &[u8]) -> Option<usize> {
    match out {
        Values::Int64(v) => v.extend_canonical(tag, bytes),
        Values::Float32(v) => v.extend_canonical(tag, bytes),
        Values::Bytes(v) => v.extend_canonical(tag, bytes),
        Values::Bool(_) | Values::Int32(_) | Values::Float64(_) => None,
    }
}

/// Calls `f` with each field 1 of a message made of nothing else, all length-delimited: the
/// steps of a `FeatureList`, the values of a `BytesList`, the packed runs of a number list.
/// `false` for any other content, or when `f` returns `false`.
#[inline]
pub(crate) fn for_each_field_1(msg: &[u8], mut f: impl FnMut(&[u8]) -> bool) -> bool {
    let mut rest = msg;
    while let [t, tail @ ..] = rest {
        if *t != 0x0a {
            return false;
        }
        let Some((field, after)) = split_len(tail) else {
            return false;
        };
        if !f(field) {
            return false;
        }
        rest = after;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{Sink, canonical_list, for_each_field_1};
    use crate::parse::strings::ByteStrings;

    /// `extend_canonical` against the general walk of the same bytes (the list body, then each
    /// `value` field), on features around the one-byte length limit.
    fn agrees<S: Sink + Default>(tag: u32, values: impl Fn(&S) -> Vec<Vec<u8>>) -> usize {
        let mut taken = 0;
        for b in crate::codec::view::tests::features() {
            let (mut fast, mut walked) = (S::default(), S::default());
            let got = fast.extend_canonical(tag, &b);
            let want = canonical_list(tag, &b).and_then(|body| {
                for_each_field_1(body, |v| walked.push_value(v).is_some()).then(|| walked.count())
            });
            assert_eq!(got, want, "tag {tag}: {b:02x?}");
            if got.is_some() {
                assert_eq!(values(&fast), values(&walked), "tag {tag}: {b:02x?}");
                taken += 1;
            }
        }
        taken
    }

    #[test]
    fn extend_canonical_reads_one_byte_lengths_as_the_general_walk_does() {
        let ints = agrees::<Vec<i64>>(3, |s| s.iter().map(|x| x.to_le_bytes().to_vec()).collect());
        let floats =
            agrees::<Vec<f32>>(2, |s| s.iter().map(|x| x.to_le_bytes().to_vec()).collect());
        let strings = agrees::<ByteStrings>(1, |s| s.iter().map(<[u8]>::to_vec).collect());
        assert!(
            ints >= 10 && floats >= 4 && strings >= 10,
            "{ints} {floats} {strings}"
        );
    }
}
