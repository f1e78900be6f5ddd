//! Feature lists: the `#[example(sequence)]` fields of a `SequenceExample`, one feature per
//! step, held as `Vec<S>` (one value per step) or flat as [`Ragged<T>`].

use super::dialect::Dialect;
use super::elem::{DecodeElem, EncodeElem};
use super::field::{DecodeField, EncodeField, FieldInfo, kind_tag, list_body_len, put_list_body};
use super::message::{FeatureBytes, malformed};
use super::view::{
    FeatureView, canonical_feature, extend_canonical, extend_canonical_within, same_kind,
};
use super::wire::{self, Fields as WireFields, Value, len_field_len, put_len_prefix};
use crate::error::{Error, Result};

/// A field type that encodes as a `tensorflow.FeatureList` of dialect `D`: `Vec<S>` of a
/// feature type `S`, or [`Ragged<T>`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a supported {D} feature list type",
    label = "unsupported `sequence` field type",
    note = "a `sequence` field is `Vec<S>` with one feature `S` per step (a value, `Vec<_>`, \
            `[_; N]` or `Option<_>` of those), or `Ragged<T>` for steps that are lists of `T`"
)]
pub trait EncodeSteps<D: Dialect> {
    /// The length of the `FeatureList` message body.
    fn list_len(&self) -> usize;
    /// Appends the `FeatureList` message body.
    fn put_list(&self, buf: &mut Vec<u8>);
}

/// A field type that decodes from a `tensorflow.FeatureList` of dialect `D`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a supported {D} feature list type",
    label = "unsupported `sequence` field type",
    note = "a `sequence` field is `Vec<S>` with one feature `S` per step (a value, `Vec<_>`, \
            `[_; N]` or `Option<_>` of those), or `Ragged<T>` for steps that are lists of `T`"
)]
pub trait DecodeSteps<'de, D: Dialect>: Sized {
    /// Decodes every step of a serialized `FeatureList`.
    ///
    /// # Errors
    /// Malformed protobuf, and as [`DecodeField::decode`] for each step; naming the field.
    fn decode_list(list: &FeatureBytes<'de>, info: &FieldInfo) -> Result<Self>;

    /// Decodes every step into `self`, reusing what it holds where it can (the steps' own
    /// buffers): the value [`decode_list`](Self::decode_list) returns. On an error `self`
    /// holds some valid value.
    ///
    /// # Errors
    /// As [`decode_list`](Self::decode_list).
    #[inline]
    fn decode_list_into(&mut self, list: &FeatureBytes<'de>, info: &FieldInfo) -> Result<()> {
        *self = Self::decode_list(list, info)?;
        Ok(())
    }
}

/// The `FeatureList` body length of steps whose feature bodies are `bodies` bytes long.
#[inline]
fn list_len_of(bodies: impl Iterator<Item = Option<usize>>) -> usize {
    // A present step is a `Feature` holding one list; an absent one an empty `Feature`.
    bodies
        .map(|b| len_field_len(b.map_or(0, len_field_len)))
        .sum()
}

impl<D: Dialect, S: EncodeField<D>> EncodeSteps<D> for Vec<S> {
    #[inline]
    fn list_len(&self) -> usize {
        list_len_of(self.iter().map(|s| s.present().then(|| s.body_len())))
    }

    #[inline]
    fn put_list(&self, buf: &mut Vec<u8>) {
        let list_tag = wire::len_tag_byte(kind_tag::<D, S>());
        for s in self {
            if s.present() {
                // Each step's body length once: the feature's length follows from it.
                let body = s.body_len();
                if let (Ok(short), Some(list_tag)) = (u8::try_from(body), list_tag)
                    && short < 0x7e
                {
                    // The canonical step: the feature's length (`body + 2`) and the list's take
                    // one byte each, so both headers are one fixed-size copy.
                    buf.extend_from_slice(&[1 << 3 | wire::LEN, short + 2, list_tag, short]);
                } else {
                    put_len_prefix(buf, 1, len_field_len(body));
                    put_len_prefix(buf, kind_tag::<D, S>(), body);
                }
                s.put_body(buf);
            } else {
                put_len_prefix(buf, 1, 0);
            }
        }
    }
}

/// The bytes of a serialized `FeatureList`: a bound on what it holds, to size buffers once
/// instead of growing them step by step.
fn list_bytes(list: &FeatureBytes<'_>) -> usize {
    list.slices().map(<[u8]>::len).sum()
}

/// The number of steps of a `FeatureList` made only of steps (field 1, length-delimited, each
/// within the bytes): `None` for anything else, which the step walk then words.
#[inline]
fn count_steps(bytes: &[u8]) -> Option<usize> {
    let mut n = 0;
    let mut rest = bytes;
    while let [t, tail @ ..] = rest {
        if *t != 0x0a {
            return None;
        }
        rest = wire::split_len(tail)?.1;
        n += 1;
    }
    Some(n)
}

/// Calls `fast` with the value of each leading step of a one-slice `FeatureList` that is a
/// feature in the canonical layout with one-byte lengths, `0a L [t L' [0a L'' value]]`, its list
/// of oneof member `tag` (so of the kind the field reads), until `fast` declines one; `fast`
/// also gets the list's bytes from the value on (see [`DecodeElem::extend_packed_within`]). Returns
/// the steps left, for the general walk: the same steps [`for_each_step`] and
/// [`canonical_feature`] would take, in one tight loop.
#[inline]
fn canonical_steps<'de>(
    list: &FeatureBytes<'de>,
    tag: Option<u32>,
    fast: impl FnMut(&'de [u8], &'de [u8]) -> bool,
) -> FeatureBytes<'de> {
    match (list.single(), tag) {
        (Some(bytes), Some(tag)) => FeatureBytes::new(canonical_step_values(bytes, tag, fast)),
        _ => list.clone(),
    }
}

/// [`canonical_steps`] over the bytes of a `FeatureList`: returns the bytes of the steps left.
#[inline]
pub(crate) fn canonical_step_values<'de>(
    bytes: &'de [u8],
    tag: u32,
    mut fast: impl FnMut(&'de [u8], &'de [u8]) -> bool,
) -> &'de [u8] {
    let Ok(tag) = u8::try_from((tag << 3) | 2) else {
        return bytes;
    };
    let mut rest = bytes;
    while let [0x0a, l1, t, l2, 0x0a, l3, tail @ ..] = rest
        && *t == tag
        && *l1 < 0x80
        && usize::from(*l1) == usize::from(*l3) + 4
        && usize::from(*l2) == usize::from(*l3) + 2
        && let Some((value, after)) = tail.split_at_checked(usize::from(*l3))
    {
        if !fast(value, tail) {
            break;
        }
        rest = after;
    }
    rest
}

impl<'de, D: Dialect, S: DecodeField<'de, D>> DecodeSteps<'de, D> for Vec<S> {
    fn decode_list(list: &FeatureBytes<'de>, info: &FieldInfo) -> Result<Self> {
        // The steps counted in one walk over their headers, so that the vector is allocated
        // once at its final size; a list in several pieces, or malformed, reserves no more
        // memory than its own bytes and grows as the steps are read.
        let steps = match list.single().and_then(count_steps) {
            Some(n) => n,
            None => list_bytes(list) / std::mem::size_of::<S>().max(8),
        };
        let mut out = Vec::with_capacity(steps);
        let rest = canonical_steps(list, D::tag(S::KIND), |value, within| {
            match S::decode_canonical_within(S::KIND, within, value.len()) {
                Some(Ok(v)) => {
                    out.push(v);
                    true
                }
                // Errors and non-canonical values are the general walk's to word.
                _ => false,
            }
        });
        for_each_step(&rest, |feature| {
            if let Some((tag, value)) = canonical_feature(feature)
                && let Some(found) = D::kind(tag)
                && let Some(r) = S::decode_canonical(found, value)
            {
                out.push(r.map_err(|e| info.error(e))?);
                return Ok(());
            }
            let view =
                FeatureView::new::<D>(FeatureBytes::new(feature)).map_err(|e| info.error(e))?;
            // An optional step that is `None` is written as a feature with no kind set.
            if !view.has_kind()
                && let Some(absent) = S::absent()
            {
                out.push(absent);
                return Ok(());
            }
            out.push(S::decode(&view).map_err(|e| info.error(e))?);
            Ok(())
        })?;
        Ok(out)
    }

    fn decode_list_into(&mut self, list: &FeatureBytes<'de>, info: &FieldInfo) -> Result<()> {
        // Canonical steps are decoded into the steps already held, new ones pushed; a list
        // with any other step is decoded anew by `decode_list`, which reads every layout and
        // words the errors.
        let mut n = 0;
        let rest = canonical_steps(list, D::tag(S::KIND), |value, within| {
            let r = match self.get_mut(n) {
                Some(step) => step.decode_canonical_into(S::KIND, within, value.len()),
                None => S::decode_canonical_within(S::KIND, within, value.len())
                    .map(|r| r.map(|v| self.push(v))),
            };
            let ok = matches!(r, Some(Ok(())));
            n += usize::from(ok);
            ok
        });
        if rest.slices().any(|s| !s.is_empty()) {
            *self = Self::decode_list(list, info)?;
        } else {
            self.truncate(n);
        }
        Ok(())
    }
}

/// A feature list whose steps are lists of values, held flat as `tf.RaggedTensor` holds them:
/// every step's values back to back, and `row_splits`, where step `i` is
/// `values[row_splits[i]..row_splits[i + 1]]`.
///
/// As a `#[example(sequence)]` field it reads and writes the same `FeatureList` as
/// `Vec<Vec<T>>` (one `T` list per step), with two growing buffers per record instead of one
/// allocation per step.
///
/// ```
/// use tfrecord_core::{Ragged, SequenceExample};
///
/// #[derive(SequenceExample)]
/// struct Sentence {
///     #[example(sequence)]
///     tokens: Ragged<i64>,
/// }
/// let s = Sentence { tokens: Ragged::from_iter([vec![7, 8], vec![], vec![9]]) };
/// assert_eq!(s.tokens.len(), 3);
/// assert_eq!(s.tokens.step(0), Some(&[7, 8][..]));
/// assert_eq!(s.tokens.values(), &[7, 8, 9]);
/// assert_eq!(s.tokens.row_splits(), &[0, 2, 2, 3]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ragged<T> {
    values: Vec<T>,
    row_splits: Vec<usize>,
}

impl<T> Default for Ragged<T> {
    fn default() -> Self {
        Ragged::new()
    }
}

impl<T> Ragged<T> {
    /// No steps.
    pub fn new() -> Self {
        Ragged {
            values: Vec::new(),
            row_splits: vec![0],
        }
    }

    /// Builds from flat values and row splits, as `tf.RaggedTensor.from_row_splits` does;
    /// `None` unless `row_splits` starts at 0, never decreases and ends at `values.len()`.
    pub fn from_row_splits(values: Vec<T>, row_splits: Vec<usize>) -> Option<Self> {
        let valid = row_splits.first() == Some(&0)
            && row_splits.last() == Some(&values.len())
            && row_splits.windows(2).all(|w| w[0] <= w[1]);
        valid.then_some(Ragged { values, row_splits })
    }

    /// Appends a step.
    pub fn push_step(&mut self, step: impl IntoIterator<Item = T>) {
        self.values.extend(step);
        self.row_splits.push(self.values.len());
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.row_splits.len() - 1
    }

    /// Whether there are no steps.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Step `i`'s values.
    pub fn step(&self, i: usize) -> Option<&[T]> {
        let start = *self.row_splits.get(i)?;
        let end = *self.row_splits.get(i + 1)?;
        self.values.get(start..end)
    }

    /// The steps in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[T]> + '_ {
        self.row_splits
            .windows(2)
            .map(|w| self.values.get(w[0]..w[1]).unwrap_or_default())
    }

    /// Every step's values, back to back.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Where each step starts, then where the last one ends: `len() + 1` offsets into
    /// [`values`](Self::values), the first 0.
    pub fn row_splits(&self) -> &[usize] {
        &self.row_splits
    }

    /// The values and the row splits.
    pub fn into_parts(self) -> (Vec<T>, Vec<usize>) {
        (self.values, self.row_splits)
    }
}

impl<T, S: IntoIterator<Item = T>> FromIterator<S> for Ragged<T> {
    fn from_iter<I: IntoIterator<Item = S>>(steps: I) -> Self {
        let mut r = Ragged::new();
        for s in steps {
            r.push_step(s);
        }
        r
    }
}

impl<T> From<Vec<Vec<T>>> for Ragged<T> {
    fn from(steps: Vec<Vec<T>>) -> Self {
        steps.into_iter().collect()
    }
}

/// A packed step of 1 to `SHORT_STEP` values takes under 0x7c bytes (a packed value takes at
/// most 10), so each length in its headers, `0a L t L' 0a L''`, takes one byte.
const SHORT_STEP: usize = 12;

impl<T> Ragged<T> {
    /// Whether every step holds 1 to [`SHORT_STEP`] values.
    #[inline]
    fn all_steps_short(&self) -> bool {
        self.row_splits
            .windows(2)
            .all(|w| w[1].wrapping_sub(w[0]).wrapping_sub(1) < SHORT_STEP)
    }
}

impl<D: Dialect, T: EncodeElem<D>> EncodeSteps<D> for Ragged<T> {
    #[inline]
    fn list_len(&self) -> usize {
        let tag = D::tag(T::KIND).unwrap_or(1);
        if T::KIND.is_packed() && wire::len_tag_byte(tag).is_some() && self.all_steps_short() {
            // Six header bytes per step, then its values: the values' lengths summed in one
            // run over all of them.
            let payload: usize = self.values.iter().map(EncodeElem::wire_len).sum();
            return 6 * self.len() + payload;
        }
        list_len_of(self.iter().map(|s| Some(list_body_len::<D, T>(s))))
    }

    #[inline]
    fn put_list(&self, buf: &mut Vec<u8>) {
        let tag = D::tag(T::KIND).unwrap_or(1);
        let list_tag = wire::len_tag_byte(tag);
        for s in self.iter() {
            if T::KIND.is_packed()
                && let Some(list_tag) = list_tag
                && (1..=SHORT_STEP).contains(&s.len())
            {
                // The canonical step. Its headers go in with the lengths of an empty payload, and
                // the payload's length is added once its values are in: no pass over the
                // values only to measure them.
                let at = buf.len();
                buf.extend_from_slice(&[1 << 3 | wire::LEN, 4, list_tag, 2, 1 << 3 | wire::LEN, 0]);
                for e in s {
                    e.put(buf);
                }
                if let Ok(payload) = u8::try_from(buf.len() - at - 6)
                    && payload < 0x7c
                    && let [_, l1, _, l2, _, l3, ..] = &mut buf[at..]
                {
                    *l1 += payload;
                    *l2 += payload;
                    *l3 = payload;
                    continue;
                }
                // Not reached with this crate's value types (a packed value takes at most 10
                // bytes); if a value ran longer, the step is written again the general way.
                buf.truncate(at);
            }
            let body = list_body_len::<D, T>(s);
            put_len_prefix(buf, 1, len_field_len(body));
            put_len_prefix(buf, tag, body);
            put_list_body::<D, T>(s, buf);
        }
    }
}

impl<'de, D: Dialect, T: DecodeElem<'de, D>> DecodeSteps<'de, D> for Ragged<T> {
    fn decode_list(list: &FeatureBytes<'de>, info: &FieldInfo) -> Result<Self> {
        // A step takes 6 bytes or more, a number 1 byte or more: at most about 3x the list's
        // bytes reserved (the values' 8 bytes per 4 input bytes, and the row splits). Both
        // buffers are allocated at their size once: growing the one-element splits of
        // `Ragged::new` would `realloc` a small block, and glibc reallocs a block in the
        // arena it came from, which on a worker thread can be the main thread's (small freed
        // blocks pass between threads through each thread's cache), so that two workers
        // decoding side by side would take turns at the main arena's lock for every record.
        let mut out = Ragged {
            values: Vec::new(),
            row_splits: Vec::new(),
        };
        out.fill(list, info)?;
        Ok(out)
    }

    fn decode_list_into(&mut self, list: &FeatureBytes<'de>, info: &FieldInfo) -> Result<()> {
        self.fill(list, info)
    }
}

impl<T> Ragged<T> {
    /// Replaces the steps with those of a `FeatureList`, keeping the buffers.
    fn fill<'de, D: Dialect>(&mut self, list: &FeatureBytes<'de>, info: &FieldInfo) -> Result<()>
    where
        T: DecodeElem<'de, D>,
    {
        let out = self;
        let bytes = list_bytes(list);
        out.values.clear();
        out.row_splits.clear();
        out.row_splits.reserve(bytes / 6 + 1);
        out.row_splits.push(0);
        if T::KIND.is_packed() {
            out.values.reserve(bytes / 4);
        }
        let rest = canonical_steps(list, D::tag(T::KIND), |value, within| {
            let before = out.values.len();
            if extend_canonical_within::<D, T>(within, value.len(), &mut out.values).is_ok() {
                out.row_splits.push(out.values.len());
                true
            } else {
                // Errors are the general walk's to word, from the start of the step.
                out.values.truncate(before);
                false
            }
        });
        for_each_step(&rest, |feature| {
            let step = if let Some((tag, value)) = canonical_feature(feature)
                && let Some(found) = D::kind(tag)
            {
                same_kind(T::KIND, found)
                    .and_then(|()| extend_canonical::<D, T>(value, &mut out.values))
            } else {
                FeatureView::new::<D>(FeatureBytes::new(feature))
                    .and_then(|view| view.extend_into::<D, T>(&mut out.values))
            };
            step.map_err(|e| info.error(e))?;
            out.row_splits.push(out.values.len());
            Ok(())
        })?;
        Ok(())
    }
}

/// Calls `f` with each step (one `Feature` message, field 1) of a `tensorflow.FeatureList`, in
/// order, skipping unknown fields. The one walk over feature lists that both the derived
/// decoders and the runtime parser use.
///
/// # Errors
/// Malformed protobuf, a step that is not a message, or an error from `f`.
pub(crate) fn for_each_step<'de>(
    list: &FeatureBytes<'de>,
    mut f: impl FnMut(&'de [u8]) -> Result<()>,
) -> Result<()> {
    for slice in list.slices() {
        let mut rest = slice;
        while let [t, tail @ ..] = rest {
            // The canonical step: tag 0x0a (field 1, length-delimited) and a length that fits.
            if *t == 0x0a
                && let Some((feature, after)) = super::wire::split_len(tail)
            {
                rest = after;
                f(feature)?;
                continue;
            }
            let mut fields = WireFields::new(rest);
            let Some((num, v)) = fields
                .next_field()
                .map_err(|e| malformed("tensorflow.FeatureList", &Error::from(e)))?
            else {
                break;
            };
            rest = fields.rest();
            if num != 1 {
                continue;
            }
            let Value::Len(feature) = v else {
                return Err(Error::decode(
                    "tensorflow.FeatureList",
                    "a feature list step that is not a message",
                ));
            };
            f(feature)?;
        }
    }
    Ok(())
}
