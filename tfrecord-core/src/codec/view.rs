//! Reading one feature's values out of the wire bytes: the `Feature` message's winning list,
//! its values across packed runs, unpacked values and merged messages, and the fast paths for
//! the layout every writer produces.

use super::dialect::Dialect;
use super::elem::{DecodeElem, RawValue, for_each_packed};
use super::message::FeatureBytes;
use super::wire::{Fields, Value};
use crate::feature::{FeatureProblem, ListKind};

/// A decoded view of one `Feature` message (possibly split over several slices, which protobuf
/// merges): which oneof member wins, and where its list bodies are.
#[derive(Clone, Debug)]
pub struct FeatureView<'de> {
    msg: FeatureBytes<'de>,
    tag: Option<u32>,
    /// The only list body of the winning member, when there is exactly one (the common case).
    single: Option<&'de [u8]>,
    /// Where the winning member's bodies start: (slice index, byte offset).
    start: (usize, usize),
}

impl<'de> FeatureView<'de> {
    /// Reads the oneof of a `Feature` message of dialect `D`: the last member set wins; the
    /// same member set several times in a row is merged (its lists concatenate). Fields that
    /// are not members in `D` are unknown fields and skipped, as protobuf does.
    ///
    /// # Errors
    /// Malformed protobuf.
    pub fn new<D: Dialect>(msg: FeatureBytes<'de>) -> Result<Self, FeatureProblem> {
        // The layout every writer produces: one list message and nothing else (or nothing).
        if let Some(bytes) = msg.single() {
            if bytes.is_empty() {
                return Ok(FeatureView {
                    msg,
                    tag: None,
                    single: None,
                    start: (0, 0),
                });
            }
            if let [t, rest @ ..] = bytes
                && t & 7 == 2
                && *t < 0x80
                && D::kind(u32::from(t >> 3)).is_some()
                && let Some((body, rest)) = super::wire::split_len(rest)
                && rest.is_empty()
            {
                let tag = Some(u32::from(t >> 3));
                return Ok(FeatureView {
                    msg,
                    tag,
                    single: Some(body),
                    start: (0, 0),
                });
            }
        }
        let mut tag: Option<u32> = None;
        let mut count = 0usize;
        let mut single = None;
        let mut start = (0, 0);
        for (i, slice) in msg.slices().enumerate() {
            let mut fields = Fields::new(slice);
            loop {
                let before = slice.len() - fields_remaining(&fields);
                let Some((num, value)) = next(&mut fields)? else {
                    break;
                };
                // The oneof members are the dialect's list kinds (1..=3 in tf.train.Feature,
                // 1..=5 in oneflow.Feature); anything else is an unknown field, which protobuf
                // skips.
                if D::kind(num).is_none() {
                    continue;
                }
                let Value::Len(body) = value else {
                    return Err(FeatureProblem::Malformed(
                        "a feature list that is not a message",
                    ));
                };
                if tag != Some(num) {
                    tag = Some(num);
                    count = 0;
                    start = (i, before);
                }
                count += 1;
                single = Some(body);
            }
        }
        if count != 1 {
            single = None;
        }
        Ok(FeatureView {
            msg,
            tag,
            single,
            start,
        })
    }

    /// Whether a oneof member (a list kind) is set. A `Feature` with none set is what an
    /// absent optional step of a feature list is written as.
    pub fn has_kind(&self) -> bool {
        self.tag.is_some()
    }

    /// The values of the list, checked to be of `expected` kind. A feature with no kind set
    /// reads as an empty list of any kind.
    ///
    /// # Errors
    /// A list of another kind, or an oneof member the dialect does not know.
    pub fn values<D: Dialect>(&self, expected: ListKind) -> Result<Values<'de>, FeatureProblem> {
        let Some(tag) = self.tag else {
            return Ok(Values::empty(expected));
        };
        let Some(found) = D::kind(tag) else {
            return Err(FeatureProblem::UnknownKind(tag));
        };
        if found != expected {
            return Err(FeatureProblem::WrongKind { expected, found });
        }
        Ok(Values {
            kind: expected,
            tag,
            msg: self.msg.clone(),
            single: self.single,
            next_slice: self.start.0,
            outer: None,
            outer_start: self.start.1,
            body: self.single.map(Fields::new),
            done_single: false,
        })
    }
}

fn fields_remaining(f: &Fields<'_>) -> usize {
    f.remaining()
}

fn next<'a>(f: &mut Fields<'a>) -> Result<Option<(u32, Value<'a>)>, FeatureProblem> {
    f.next_field()
        .map_err(|_| FeatureProblem::Malformed("invalid protobuf in a feature"))
}

/// An iterator over the raw values of one feature's list, across packed runs, unpacked values
/// and merged list messages.
#[derive(Clone, Debug)]
pub struct Values<'de> {
    kind: ListKind,
    tag: u32,
    msg: FeatureBytes<'de>,
    single: Option<&'de [u8]>,
    next_slice: usize,
    outer: Option<Fields<'de>>,
    outer_start: usize,
    body: Option<Fields<'de>>,
    done_single: bool,
}

/// A piece of a list: a packed run, or one value.
#[derive(Clone, Copy, Debug)]
pub enum ListPiece<'de> {
    /// A packed run of values of the list's kind.
    Packed(&'de [u8]),
    /// One value.
    One(RawValue<'de>),
}

impl<'de> Values<'de> {
    fn empty(kind: ListKind) -> Self {
        Values {
            kind,
            tag: 0,
            msg: FeatureBytes::default(),
            single: None,
            next_slice: usize::MAX,
            outer: None,
            outer_start: 0,
            body: None,
            done_single: true,
        }
    }

    /// The next list body of the winning oneof member.
    fn next_body(&mut self) -> Result<Option<Fields<'de>>, FeatureProblem> {
        if self.single.is_some() {
            // The one body was installed at construction.
            return Ok(None);
        }
        loop {
            if self.outer.is_none() {
                let Some(slice) = self.msg.slice(self.next_slice) else {
                    return Ok(None);
                };
                let off = std::mem::take(&mut self.outer_start).min(slice.len());
                self.outer = Some(Fields::new(&slice[off..]));
                self.next_slice += 1;
            }
            let Some(outer) = self.outer.as_mut() else {
                return Ok(None);
            };
            match next(outer)? {
                None => self.outer = None,
                Some((num, Value::Len(body))) if num == self.tag => {
                    return Ok(Some(Fields::new(body)));
                }
                Some(_) => {}
            }
        }
    }

    /// The next chunk: a packed run or one value.
    ///
    /// # Errors
    /// Malformed protobuf, or a value of the wrong wire type.
    pub fn next_chunk(&mut self) -> Result<Option<ListPiece<'de>>, FeatureProblem> {
        loop {
            if self.body.is_none() {
                if self.done_single {
                    return Ok(None);
                }
                match self.next_body()? {
                    Some(b) => self.body = Some(b),
                    None => {
                        self.done_single = true;
                        return Ok(None);
                    }
                }
            }
            let Some(body) = self.body.as_mut() else {
                continue;
            };
            let Some((num, value)) = next(body)? else {
                self.body = None;
                if self.single.is_some() {
                    self.done_single = true;
                }
                continue;
            };
            if num != 1 {
                continue; // unknown field inside the list message
            }
            let chunk = match (self.kind, value) {
                (ListKind::Bytes, Value::Len(b)) => ListPiece::One(RawValue::Bytes(b)),
                (ListKind::Int64 | ListKind::Int32, Value::Varint(v)) => {
                    ListPiece::One(RawValue::Int(v))
                }
                (ListKind::Float, Value::Fixed32(v)) => ListPiece::One(RawValue::Float(v)),
                (ListKind::Double, Value::Fixed64(v)) => ListPiece::One(RawValue::Double(v)),
                (
                    ListKind::Int64 | ListKind::Int32 | ListKind::Float | ListKind::Double,
                    Value::Len(run),
                ) => ListPiece::Packed(run),
                _ => {
                    return Err(FeatureProblem::Malformed(
                        "a list value of the wrong wire type",
                    ));
                }
            };
            return Ok(Some(chunk));
        }
    }

    /// Appends every value to `out`.
    ///
    /// # Errors
    /// As [`next_chunk`](Self::next_chunk) and the element conversion.
    pub fn extend_into<D: Dialect, T: DecodeElem<'de, D>>(
        mut self,
        out: &mut Vec<T>,
    ) -> Result<(), FeatureProblem> {
        while let Some(chunk) = self.next_chunk()? {
            match chunk {
                ListPiece::Packed(run) => T::extend_packed(run, out)?,
                ListPiece::One(raw) => out.push(T::from_raw(raw)?),
            }
        }
        Ok(())
    }

    /// Counts the values without converting them.
    ///
    /// # Errors
    /// As [`next_chunk`](Self::next_chunk).
    pub fn count_values(mut self) -> Result<usize, FeatureProblem> {
        let mut n = 0usize;
        let kind = self.kind;
        while let Some(chunk) = self.next_chunk()? {
            match chunk {
                ListPiece::Packed(run) => for_each_packed(kind, run, |_| {
                    n += 1;
                    Ok(())
                })?,
                ListPiece::One(_) => n += 1,
            }
        }
        Ok(n)
    }

    /// Decodes exactly one value.
    ///
    /// # Errors
    /// A count other than one, and as [`extend_into`](Self::extend_into).
    #[inline]
    pub fn one<D: Dialect, T: DecodeElem<'de, D>>(mut self) -> Result<T, FeatureProblem> {
        let mut first: Option<T> = None;
        let mut found = 0usize;
        while let Some(chunk) = self.next_chunk()? {
            match chunk {
                ListPiece::One(raw) => {
                    found += 1;
                    if found > 1 {
                        break;
                    }
                    first = Some(T::from_raw(raw)?);
                }
                ListPiece::Packed(run) => {
                    let mut err = None;
                    for_each_packed(T::KIND, run, |raw| {
                        found += 1;
                        if found == 1 {
                            match T::from_raw(raw) {
                                Ok(v) => first = Some(v),
                                Err(e) => err = Some(e),
                            }
                        }
                        Ok(())
                    })?;
                    if let Some(e) = err {
                        return Err(e);
                    }
                    if found > 1 {
                        break;
                    }
                }
            }
        }
        match (found, first) {
            (1, Some(v)) => Ok(v),
            (0, _) => Err(FeatureProblem::Count {
                expected: 1,
                found: 0,
            }),
            // More than one: the caller recounts from the view for the message.
            _ => Err(FeatureProblem::Count {
                expected: 1,
                found: usize::MAX,
            }),
        }
    }
}

/// The list body of a single-body feature in its canonical layout: one `value` field (field 1)
/// that is a packed run (numbers) or one bytes value. `None` for anything else.
#[inline]
fn only_value(body: &[u8]) -> Option<&[u8]> {
    match body {
        [0x0a, rest @ ..] => match super::wire::split_len(rest) {
            Some((v, [])) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// Decodes the only value of a canonical-layout list (see [`canonical_feature`]) of `T`'s kind; `None`
/// when the run does not hold exactly one value (the general path counts them).
#[inline]
fn one_value<'de, D: Dialect, T: DecodeElem<'de, D>>(
    v: &'de [u8],
) -> Option<Result<T, FeatureProblem>> {
    match T::KIND {
        ListKind::Bytes => Some(T::from_raw(RawValue::Bytes(v))),
        ListKind::Float => {
            let b = <[u8; 4]>::try_from(v).ok()?;
            Some(T::from_raw(RawValue::Float(u32::from_le_bytes(b))))
        }
        ListKind::Double => {
            let b = <[u8; 8]>::try_from(v).ok()?;
            Some(T::from_raw(RawValue::Double(u64::from_le_bytes(b))))
        }
        ListKind::Int64 | ListKind::Int32 => {
            let mut run = v;
            match super::wire::get_varint(&mut run) {
                Ok(x) if run.is_empty() => Some(T::from_raw(RawValue::Int(x))),
                _ => None,
            }
        }
    }
}

/// Appends the values of a canonical-layout list (see [`canonical_feature`]) of `T`'s kind.
#[inline]
pub(crate) fn extend_canonical<'de, D: Dialect, T: DecodeElem<'de, D>>(
    v: &'de [u8],
    out: &mut Vec<T>,
) -> Result<(), FeatureProblem> {
    extend_canonical_within::<D, T>(v, v.len(), out)
}

/// [`extend_canonical`] of the value `within[..len]`, where `within` runs on past it to the end of
/// the enclosing message (see [`DecodeElem::extend_packed_within`]). Always inlined: a feature
/// list's step loop calls it once per step, and a call there costs the derived SequenceExample
/// decoders about a tenth of their instructions.
#[inline(always)]
pub(crate) fn extend_canonical_within<'de, D: Dialect, T: DecodeElem<'de, D>>(
    within: &'de [u8],
    len: usize,
    out: &mut Vec<T>,
) -> Result<(), FeatureProblem> {
    if T::KIND.is_packed() {
        T::extend_packed_within(within, len, out)
    } else {
        let v = within.get(..len).ok_or_else(super::elem::run_past_end)?;
        out.push(T::from_raw(RawValue::Bytes(v))?);
        Ok(())
    }
}

/// The values of the canonical value `within[..len]` in a new vector of their exact count
/// (see [`extend_canonical_within`] for `within`).
#[inline(always)]
pub(crate) fn collect_canonical_within<'de, D: Dialect, T: DecodeElem<'de, D>>(
    within: &'de [u8],
    len: usize,
) -> Result<Vec<T>, FeatureProblem> {
    if T::KIND.is_packed() {
        T::collect_packed_within(within, len)
    } else {
        let v = within.get(..len).ok_or_else(super::elem::run_past_end)?;
        Ok(vec![T::from_raw(RawValue::Bytes(v))?])
    }
}

/// Checks that a canonical-layout list of kind `found` suits a field of kind `expected`.
#[inline]
pub(crate) fn same_kind(expected: ListKind, found: ListKind) -> Result<(), FeatureProblem> {
    if expected == found {
        Ok(())
    } else {
        Err(FeatureProblem::WrongKind { expected, found })
    }
}

/// `DecodeField::decode_canonical` of a field that holds one value of `T`: the value of a list of
/// kind `found` in the canonical layout (its one `value` field is `v`).
#[inline]
pub fn one_canonical<'de, D: Dialect, T: DecodeElem<'de, D>>(
    found: ListKind,
    v: &'de [u8],
) -> Option<Result<T, FeatureProblem>> {
    if let Err(e) = same_kind(T::KIND, found) {
        return Some(Err(e));
    }
    one_value::<D, T>(v)
}

/// A serialized `Feature` message in the layout every writer produces: one list (oneof member
/// `tag`) whose body is one `value` field, a packed run of numbers or one bytes value.
/// Returns `(tag, value)`, or `None` for any other layout (an empty list, several lists,
/// unpacked numbers, several strings, unknown fields), which the general path
/// ([`FeatureView`]) reads.
#[inline(always)]
pub(crate) fn canonical_feature(bytes: &[u8]) -> Option<(u32, &[u8])> {
    match short_feature(bytes) {
        Some(found) => Some(found),
        None => canonical_feature_long(bytes),
    }
}

/// [`canonical_feature`] of a list under 126 bytes, the most common case, checked at once: `t L 0a
/// L' value` with both lengths in one byte. `None` for anything else, longer lists included.
#[inline(always)]
pub(crate) fn short_feature(bytes: &[u8]) -> Option<(u32, &[u8])> {
    match bytes {
        [t, l, 0x0a, l2, value @ ..]
            if t & 0x87 == 2
                && (l | l2) < 0x80
                && usize::from(*l2) == value.len()
                && usize::from(*l) == value.len() + 2 =>
        {
            Some((u32::from(t >> 3), value))
        }
        _ => None,
    }
}

/// [`canonical_feature`] for lists of 126 bytes or more, and for what is not in the canonical layout.
#[inline(never)]
fn canonical_feature_long(bytes: &[u8]) -> Option<(u32, &[u8])> {
    match bytes {
        [t, rest @ ..] if t & 7 == 2 && *t < 0x80 => match super::wire::split_len(rest) {
            Some((body, [])) => Some((u32::from(t >> 3), only_value(body)?)),
            _ => None,
        },
        _ => None,
    }
}

impl<'de> FeatureView<'de> {
    /// The single list body, when the feature's kind is `expected` and its layout is the usual
    /// one; `Err` for a kind mismatch, `Ok(None)` when the general path must decide.
    #[inline]
    fn fast_body<D: Dialect>(
        &self,
        expected: ListKind,
    ) -> Result<Option<&'de [u8]>, FeatureProblem> {
        match (self.tag, self.single) {
            (Some(tag), Some(body)) => match D::kind(tag) {
                Some(found) if found == expected => Ok(Some(body)),
                Some(found) => Err(FeatureProblem::WrongKind { expected, found }),
                None => Err(FeatureProblem::UnknownKind(tag)),
            },
            _ => Ok(None),
        }
    }

    /// Appends every value of the list to `out`, checking the kind.
    ///
    /// # Errors
    /// Wrong kind, malformed lists, values out of range.
    #[inline]
    pub fn extend_into<D: Dialect, T: DecodeElem<'de, D>>(
        &self,
        out: &mut Vec<T>,
    ) -> Result<(), FeatureProblem> {
        if let Some(body) = self.fast_body::<D>(T::KIND)? {
            if body.is_empty() {
                return Ok(());
            }
            if let Some(v) = only_value(body) {
                return extend_canonical::<D, T>(v, out);
            }
        }
        self.values::<D>(T::KIND)?.extend_into::<D, T>(out)
    }

    /// Decodes a feature that must hold exactly one value of `T`.
    ///
    /// # Errors
    /// Wrong kind, a count other than one, a value out of range.
    #[inline]
    pub fn one<D: Dialect, T: DecodeElem<'de, D>>(&self) -> Result<T, FeatureProblem> {
        if let Some(body) = self.fast_body::<D>(T::KIND)?
            && let Some(v) = only_value(body)
            && let Some(r) = one_value::<D, T>(v)
        {
            return r;
        }
        match self.values::<D>(T::KIND)?.one::<D, T>() {
            Err(FeatureProblem::Count {
                expected: 1,
                found: usize::MAX,
            }) => {
                let found = self.values::<D>(T::KIND)?.count_values()?;
                Err(FeatureProblem::Count { expected: 1, found })
            }
            other => other,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{canonical_feature, canonical_feature_long};

    /// `t L 0a L' value` for stated lengths and actual sizes on both sides of the one-byte
    /// varint limit (value bytes of 1, so that a stated byte of 0x80 or more reads as the
    /// start of a longer varint), with other tags and other first fields.
    pub(crate) fn features() -> Vec<Vec<u8>> {
        const LENS: [usize; 11] = [0, 1, 2, 3, 4, 0x7c, 0x7d, 0x7e, 0x7f, 0x80, 0x81];
        const STATED: [usize; 6] = [0, 1, 0x7f, 0x80, 0x81, 0xff];
        let byte = |x: usize| u8::try_from(x & 0xff).unwrap_or(0);
        let mut all = Vec::new();
        for (t, inner, n) in [0x0a, 0x12, 0x1a, 0x22, 0x0b, 0x8a]
            .into_iter()
            .flat_map(|t| [(t, 0x0a), (t, 0x12)])
            .flat_map(|(t, inner)| LENS.map(|n| (t, inner, n)))
        {
            // The lengths that fit the value, those one off, and some that do not.
            let ls = [n + 1, n + 2, n + 3].into_iter().chain(STATED).map(byte);
            for l in ls {
                let l2s = [n.wrapping_sub(1), n, n + 1]
                    .into_iter()
                    .chain(STATED)
                    .map(byte);
                for l2 in l2s {
                    let mut b = vec![t, l, inner, l2];
                    b.extend(std::iter::repeat_n(1u8, n));
                    all.push(b);
                }
            }
        }
        all.extend([vec![], vec![0x1a], vec![0x1a, 0x00], vec![0x1a, 0x01, 0x0a]]);
        all
    }

    #[test]
    fn canonical_feature_takes_one_byte_lengths_as_the_general_walk_does() {
        let mut fast = 0;
        for b in features() {
            let got = canonical_feature(&b);
            assert_eq!(got, canonical_feature_long(&b), "{b:02x?}");
            fast += usize::from(got.is_some() && b[1] < 0x80 && b[3] < 0x80);
        }
        assert!(fast > 20, "the one-byte layout was met {fast} times");
    }
}
