//! Single values of a feature list: integers, floats, bytes and strings.

use std::borrow::Cow;

use super::dialect::{Dialect, Of, Tf, TfLossy};
use super::wire::{self, get_varint, put_varint_value, varint_in_word, varint_len};
use crate::feature::{FeatureProblem, ListKind};

/// One value as it appears on the wire, before conversion to a Rust type.
#[derive(Clone, Copy, Debug)]
pub enum RawValue<'de> {
    /// An int64 or int32 list value (the varint's 64 bits).
    Int(u64),
    /// A float list value (its bits).
    Float(u32),
    /// A double list value (its bits).
    Double(u64),
    /// A bytes list value.
    Bytes(&'de [u8]),
}

/// A Rust type that can be one value of a feature list in dialect `D`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a value of a {D} feature",
    label = "unsupported feature value type",
    note = "supported values: i64, i32, i16, i8, u64, u32, u16, bool (int64_list); f32 (float_list); \
            String, Vec<u8>, bytes::Bytes, &[u8], &str, Cow<[u8]>, Cow<str> (bytes_list); unit-only \
            enums deriving `Example`; in OFRecord also f64 (double_list); in tf.train.Example f64 \
            needs `#[example(lossy)]`"
)]
pub trait EncodeElem<D: Dialect> {
    /// The list kind values of this type go in.
    const KIND: ListKind;
    /// Bytes this value takes in a packed list, or the length of its bytes.
    fn wire_len(&self) -> usize;
    /// Appends the value: a varint, 4 or 8 little-endian bytes, or the raw bytes.
    fn put(&self, buf: &mut Vec<u8>);
}

/// A Rust type that can be decoded from one value of a feature list in dialect `D`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a value of a {D} feature",
    label = "unsupported feature value type",
    note = "supported values: i64, i32, i16, i8, u64, u32, u16, bool (int64_list); f32 (float_list); \
            String, Vec<u8>, bytes::Bytes, &[u8], &str, Cow<[u8]>, Cow<str> (bytes_list); unit-only \
            enums deriving `Example`; in OFRecord also f64 (double_list); in tf.train.Example f64 \
            needs `#[example(lossy)]`"
)]
pub trait DecodeElem<'de, D: Dialect>: Sized {
    /// The list kind values of this type come from.
    const KIND: ListKind;
    /// Converts one wire value.
    ///
    /// # Errors
    /// A value out of the type's range, invalid UTF-8, an unknown enum variant.
    fn from_raw(raw: RawValue<'de>) -> Result<Self, FeatureProblem>;

    /// Converts one wire value into `self`, reusing what `self` holds where it can (the
    /// buffer of a `String` or a `Vec<u8>`); the same value as [`from_raw`](Self::from_raw).
    /// On an error `self` holds some valid value.
    ///
    /// # Errors
    /// As [`from_raw`](Self::from_raw).
    #[inline]
    fn assign_raw(&mut self, raw: RawValue<'de>) -> Result<(), FeatureProblem> {
        *self = Self::from_raw(raw)?;
        Ok(())
    }

    /// Appends every value of a packed run (`KIND` is packed). The default decodes one value
    /// at a time; integers override it to read a word at a time, floats with a bulk
    /// conversion.
    ///
    /// # Errors
    /// As [`from_raw`](Self::from_raw), and malformed packed runs.
    fn extend_packed(run: &'de [u8], out: &mut Vec<Self>) -> Result<(), FeatureProblem> {
        for_each_packed(Self::KIND, run, |raw| {
            out.push(Self::from_raw(raw)?);
            Ok(())
        })
    }

    /// [`extend_packed`](Self::extend_packed) of the run `buf[..len]`, where the bytes of
    /// `buf` past `len` (the rest of the enclosing message) may be looked at but are not part
    /// of the run: integers are then read a word at a time up to the run's last byte.
    ///
    /// # Errors
    /// As [`extend_packed`](Self::extend_packed).
    #[inline]
    fn extend_packed_within(
        buf: &'de [u8],
        len: usize,
        out: &mut Vec<Self>,
    ) -> Result<(), FeatureProblem> {
        Self::extend_packed(buf.get(..len).ok_or_else(run_past_end)?, out)
    }

    /// Every value of the packed run `buf[..len]` (`KIND` is packed) in a new vector, as
    /// [`extend_packed_within`](Self::extend_packed_within) reads them. Integers and floats
    /// count their values first and allocate the vector once at its final size: a derived
    /// `Vec` field, or one step of a `Vec<Vec<_>>` feature list, is then one allocation with
    /// no slack.
    ///
    /// # Errors
    /// As [`extend_packed`](Self::extend_packed).
    #[inline]
    fn collect_packed_within(buf: &'de [u8], len: usize) -> Result<Vec<Self>, FeatureProblem> {
        let mut out = Vec::new();
        Self::extend_packed_within(buf, len, &mut out)?;
        Ok(out)
    }

    /// Decodes a packed run (`KIND` is packed) of exactly `N` values into an array without
    /// allocating. `None` when the run holds another number of values, or when the type has no
    /// such path: the caller then takes the general path, which reports the count.
    #[inline]
    fn array_packed<const N: usize>(run: &'de [u8]) -> Option<Result<[Self; N], FeatureProblem>> {
        let _ = run;
        None
    }
}

/// A list value said to be longer than the bytes that hold it (callers pass lengths they have
/// checked).
#[cold]
pub(crate) fn run_past_end() -> FeatureProblem {
    FeatureProblem::Malformed("a list value longer than its message")
}

#[cold]
fn bad_varint() -> FeatureProblem {
    FeatureProblem::Malformed("bad varint in a packed run")
}

#[cold]
fn out_of_range(v: i128, ty: &'static str) -> FeatureProblem {
    FeatureProblem::Range {
        value: v.to_string(),
        ty,
    }
}

/// The number of varints in a packed run: every varint ends in one byte below 0x80.
#[inline(always)]
fn varint_count(run: &[u8]) -> usize {
    run.iter().filter(|b| **b < 0x80).count()
}

/// Appends the varints of the run `buf[..len]` to `out`, each converted by `conv`; the bytes
/// of `buf` past `len` may be looked at (see [`DecodeElem::extend_packed_within`]).
#[inline(always)] // the hot loop of every packed run: keep it in its caller
fn push_varints<T>(
    buf: &[u8],
    len: usize,
    out: &mut Vec<T>,
    conv: fn(u64) -> Result<T, FeatureProblem>,
) -> Result<(), FeatureProblem> {
    let run = buf.get(..len).ok_or_else(run_past_end)?;
    let mut pos = 0;
    while pos < len {
        // Eight bytes at a time while the buffer has them; the run's end, and varints longer
        // than eight bytes, byte by byte.
        let word = buf.get(pos..).and_then(<[u8]>::first_chunk::<8>);
        let (v, n) = match word.and_then(|w| varint_in_word(u64::from_le_bytes(*w))) {
            Some((v, n)) if n <= len - pos => (v, n),
            _ => {
                let mut rest = run.get(pos..).unwrap_or_default();
                let v = get_varint(&mut rest).map_err(|_| bad_varint())?;
                (v, len - pos - rest.len())
            }
        };
        out.push(conv(v)?);
        pos += n;
    }
    Ok(())
}

macro_rules! int_elem {
    ($d:ty, $kind:expr, $($t:ty => $conv:expr, $to:expr;)*) => {$(
        impl EncodeElem<$d> for $t {
            const KIND: ListKind = $kind;
            #[inline]
            fn wire_len(&self) -> usize {
                let to: fn(&$t) -> u64 = $to;
                varint_len(to(self))
            }
            #[inline]
            fn put(&self, buf: &mut Vec<u8>) {
                let to: fn(&$t) -> u64 = $to;
                put_varint_value(buf, to(self));
            }
        }
        impl<'de> DecodeElem<'de, $d> for $t {
            const KIND: ListKind = $kind;
            #[inline]
            fn from_raw(raw: RawValue<'de>) -> Result<Self, FeatureProblem> {
                match raw {
                    RawValue::Int(v) => {
                        let conv: fn(u64) -> Result<$t, FeatureProblem> = $conv;
                        conv(v)
                    }
                    _ => Err(wrong_wire_type()),
                }
            }
            #[inline]
            fn extend_packed(run: &'de [u8], out: &mut Vec<Self>) -> Result<(), FeatureProblem> {
                <Self as DecodeElem<'de, $d>>::extend_packed_within(run, run.len(), out)
            }
            #[inline(always)] // the hot loop of every packed run: keep it in its caller
            fn extend_packed_within(
                buf: &'de [u8],
                len: usize,
                out: &mut Vec<Self>,
            ) -> Result<(), FeatureProblem> {
                let run = buf.get(..len).ok_or_else(run_past_end)?;
                // Unless there is room for one value per byte already, reserve the count
                // exactly.
                if out.capacity() - out.len() < len {
                    out.reserve(varint_count(run));
                }
                push_varints(buf, len, out, $conv)
            }
            #[inline(always)]
            fn collect_packed_within(buf: &'de [u8], len: usize) -> Result<Vec<Self>, FeatureProblem> {
                let run = buf.get(..len).ok_or_else(run_past_end)?;
                let mut out = Vec::with_capacity(varint_count(run));
                push_varints(buf, len, &mut out, $conv)?;
                Ok(out)
            }
            #[inline]
            fn array_packed<const N: usize>(mut run: &'de [u8]) -> Option<Result<[Self; N], FeatureProblem>> {
                let conv: fn(u64) -> Result<$t, FeatureProblem> = $conv;
                let mut a = [<$t>::default(); N];
                let mut n = 0;
                while !run.is_empty() {
                    let v = match get_varint(&mut run) {
                        Ok(v) => v,
                        Err(_) => return Some(Err(bad_varint())),
                    };
                    // More than `N` values: the general path counts them.
                    let slot = a.get_mut(n)?;
                    *slot = match conv(v) {
                        Ok(x) => x,
                        Err(e) => return Some(Err(e)),
                    };
                    n += 1;
                }
                (n == N).then_some(Ok(a))
            }
        }
    )*};
}

macro_rules! int64_elems {
    ($d:ty) => {
        int_elem! { $d, ListKind::Int64,
            i64 => |v| Ok(v.cast_signed()), |v| v.cast_unsigned();
            u64 => |v| Ok(v), |v| *v;
            i16 => |v| i16::try_from(v.cast_signed()).map_err(|_| out_of_range(i128::from(v.cast_signed()), "i16")), |v| i64::from(*v).cast_unsigned();
            i8 => |v| i8::try_from(v.cast_signed()).map_err(|_| out_of_range(i128::from(v.cast_signed()), "i8")), |v| i64::from(*v).cast_unsigned();
            u32 => |v| u32::try_from(v.cast_signed()).map_err(|_| out_of_range(i128::from(v.cast_signed()), "u32")), |v| u64::from(*v);
            u16 => |v| u16::try_from(v.cast_signed()).map_err(|_| out_of_range(i128::from(v.cast_signed()), "u16")), |v| u64::from(*v);
            bool => |v| match v { 0 => Ok(false), 1 => Ok(true), _ => Err(FeatureProblem::Bool(v.cast_signed())) }, |v| u64::from(*v);
        }
    };
}

int64_elems!(Tf);
int64_elems!(TfLossy);
int64_elems!(Of);
int_elem! { Tf, ListKind::Int64,
    i32 => |v| i32::try_from(v.cast_signed()).map_err(|_| out_of_range(i128::from(v.cast_signed()), "i32")), |v| i64::from(*v).cast_unsigned();
}
int_elem! { TfLossy, ListKind::Int64,
    i32 => |v| i32::try_from(v.cast_signed()).map_err(|_| out_of_range(i128::from(v.cast_signed()), "i32")), |v| i64::from(*v).cast_unsigned();
}
int_elem! { Of, ListKind::Int32,
    // protobuf reads an int32 from the low 32 bits of the varint.
    i32 => |v| Ok((v as u32).cast_signed()), |v| i64::from(*v).cast_unsigned();
}

fn extend_f32(run: &[u8], out: &mut Vec<f32>) -> Result<(), FeatureProblem> {
    if !run.len().is_multiple_of(4) {
        return Err(FeatureProblem::Malformed(
            "packed float run is not a multiple of 4 bytes",
        ));
    }
    out.extend(
        run.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    Ok(())
}

fn extend_f64(run: &[u8], out: &mut Vec<f64>) -> Result<(), FeatureProblem> {
    if !run.len().is_multiple_of(8) {
        return Err(FeatureProblem::Malformed(
            "packed double run is not a multiple of 8 bytes",
        ));
    }
    out.extend(
        run.chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
    );
    Ok(())
}

/// Floating-point elements: `$t` stored as `$kind` (`$n` little-endian bytes, `RawValue::$raw`),
/// packed runs converted in bulk by `$extend`, in each dialect listed.
macro_rules! float_elem {
    ($t:ty, $kind:expr, $raw:ident, $n:literal, $extend:ident; $($d:ty),*) => {$(
        impl EncodeElem<$d> for $t {
            const KIND: ListKind = $kind;
            #[inline]
            fn wire_len(&self) -> usize { $n }
            #[inline]
            fn put(&self, buf: &mut Vec<u8>) { buf.extend_from_slice(&self.to_le_bytes()); }
        }
        impl<'de> DecodeElem<'de, $d> for $t {
            const KIND: ListKind = $kind;
            #[inline]
            fn from_raw(raw: RawValue<'de>) -> Result<Self, FeatureProblem> {
                match raw {
                    RawValue::$raw(bits) => Ok(<$t>::from_bits(bits)),
                    _ => Err(wrong_wire_type()),
                }
            }
            fn extend_packed(run: &'de [u8], out: &mut Vec<Self>) -> Result<(), FeatureProblem> {
                $extend(run, out)
            }
            #[inline]
            fn collect_packed_within(buf: &'de [u8], len: usize) -> Result<Vec<Self>, FeatureProblem> {
                let run = buf.get(..len).ok_or_else(run_past_end)?;
                let mut out = Vec::with_capacity(run.len() / $n);
                $extend(run, &mut out)?;
                Ok(out)
            }
            #[inline]
            fn array_packed<const N: usize>(run: &'de [u8]) -> Option<Result<[Self; N], FeatureProblem>> {
                if run.len() != N * $n {
                    return None;
                }
                let mut chunks = run.chunks_exact($n);
                Some(Ok(std::array::from_fn(|_| {
                    chunks.next().and_then(|c| <[u8; $n]>::try_from(c).ok()).map_or(0.0, <$t>::from_le_bytes)
                })))
            }
        }
    )*};
}
float_elem!(f32, ListKind::Float, Float, 4, extend_f32; Tf, TfLossy, Of);
float_elem!(f64, ListKind::Double, Double, 8, extend_f64; Of);

/// In `tf.train.Example`, an `f64` field that opted in with `#[example(lossy)]` is stored as a
/// float (rounded to the nearest `f32`, as a cast rounds: a finite value beyond the float's
/// range becomes infinity, since encoding a value cannot fail; check with
/// [`narrow_f64`](crate::narrow_f64) first where that matters) and read back widened.
impl EncodeElem<TfLossy> for f64 {
    const KIND: ListKind = ListKind::Float;
    #[inline]
    fn wire_len(&self) -> usize {
        4
    }
    #[inline]
    fn put(&self, buf: &mut Vec<u8>) {
        let narrowed = crate::feature::to_f32(*self);
        buf.extend_from_slice(&narrowed.to_le_bytes());
    }
}

impl<'de> DecodeElem<'de, TfLossy> for f64 {
    const KIND: ListKind = ListKind::Float;
    #[inline]
    fn from_raw(raw: RawValue<'de>) -> Result<Self, FeatureProblem> {
        match raw {
            RawValue::Float(bits) => Ok(crate::feature::widen_f32(f32::from_bits(bits))),
            _ => Err(wrong_wire_type()),
        }
    }
}

#[cold]
fn wrong_wire_type() -> FeatureProblem {
    FeatureProblem::Malformed("value of the wrong wire type")
}

/// `EncodeElem` for bytes-like types: `$t => |s| <the bytes of s>`.
macro_rules! bytes_encode {
    ($d:ty; $($t:ty => |$s:ident| $bytes:expr;)*) => {$(
        impl EncodeElem<$d> for $t {
            const KIND: ListKind = ListKind::Bytes;
            #[inline]
            fn wire_len(&self) -> usize {
                let $s = self;
                <[u8]>::len($bytes)
            }
            #[inline]
            fn put(&self, buf: &mut Vec<u8>) {
                let $s = self;
                buf.extend_from_slice($bytes);
            }
        }
    )*};
}

/// `DecodeElem` for bytes-like types: `$t => |b| <Result<$t, FeatureProblem> from b: &'de [u8]>`.
/// `=> |b| value, into |s| reuse` also overrides `assign_raw` with `reuse`, an expression of
/// `s: &mut $t` and `b`.
macro_rules! bytes_decode {
    ($d:ty; $($t:ty => |$b:ident| $value:expr $(, into |$s:ident| $into:expr)?;)*) => {$(
        impl<'de> DecodeElem<'de, $d> for $t {
            const KIND: ListKind = ListKind::Bytes;
            #[inline]
            fn from_raw(raw: RawValue<'de>) -> Result<Self, FeatureProblem> {
                match raw {
                    RawValue::Bytes($b) => $value,
                    _ => Err(wrong_wire_type()),
                }
            }
            $(
            #[inline]
            fn assign_raw(&mut self, raw: RawValue<'de>) -> Result<(), FeatureProblem> {
                match raw {
                    RawValue::Bytes($b) => {
                        let $s = self;
                        $into
                    }
                    _ => Err(wrong_wire_type()),
                }
            }
            )?
        }
    )*};
}

/// Replaces `s` with the bytes `b` as a string, reusing its buffer; the copy is validated, as
/// in `from_raw`. On invalid UTF-8 `s` is left empty.
#[inline]
fn assign_string(s: &mut String, b: &[u8]) -> Result<(), FeatureProblem> {
    let mut buf = std::mem::take(s).into_bytes();
    buf.clear();
    buf.extend_from_slice(b);
    *s = String::from_utf8(buf).map_err(|_| FeatureProblem::Utf8)?;
    Ok(())
}

fn utf8(b: &[u8]) -> Result<&str, FeatureProblem> {
    std::str::from_utf8(b).map_err(|_| FeatureProblem::Utf8)
}

macro_rules! bytes_elem {
    ($d:ty) => {
        bytes_encode! { $d;
            Vec<u8> => |s| &s[..];
            String => |s| s.as_bytes();
            bytes::Bytes => |s| &s[..];
            &[u8] => |s| s;
            &str => |s| s.as_bytes();
            Cow<'_, [u8]> => |s| &s[..];
            Cow<'_, str> => |s| s.as_bytes();
        }
        bytes_decode! { $d;
            Vec<u8> => |b| Ok(b.to_vec()), into |s| {
                s.clear();
                s.extend_from_slice(b);
                Ok(())
            };
            // The copy is validated rather than the record's bytes: a new allocation is
            // word-aligned, which the standard library's ASCII check runs faster on.
            String => |b| String::from_utf8(b.to_vec()).map_err(|_| FeatureProblem::Utf8),
                into |s| assign_string(s, b);
            bytes::Bytes => |b| Ok(bytes::Bytes::copy_from_slice(b));
            &'de [u8] => |b| Ok(b);
            &'de str => |b| utf8(b);
            Cow<'de, [u8]> => |b| Ok(Cow::Borrowed(b));
            Cow<'de, str> => |b| utf8(b).map(Cow::Borrowed);
        }
    };
}
bytes_elem!(Tf);
bytes_elem!(TfLossy);
bytes_elem!(Of);

/// Calls `f` for each value of a packed run of `kind`.
pub(crate) fn for_each_packed<'de>(
    kind: ListKind,
    mut run: &'de [u8],
    mut f: impl FnMut(RawValue<'de>) -> Result<(), FeatureProblem>,
) -> Result<(), FeatureProblem> {
    match kind {
        ListKind::Int64 | ListKind::Int32 => {
            while !run.is_empty() {
                let v = wire::get_varint(&mut run)
                    .map_err(|_| FeatureProblem::Malformed("bad varint in a packed run"))?;
                f(RawValue::Int(v))?;
            }
        }
        ListKind::Float => {
            if !run.len().is_multiple_of(4) {
                return Err(FeatureProblem::Malformed(
                    "packed float run is not a multiple of 4 bytes",
                ));
            }
            for c in run.chunks_exact(4) {
                f(RawValue::Float(u32::from_le_bytes([
                    c[0], c[1], c[2], c[3],
                ])))?;
            }
        }
        ListKind::Double => {
            if !run.len().is_multiple_of(8) {
                return Err(FeatureProblem::Malformed(
                    "packed double run is not a multiple of 8 bytes",
                ));
            }
            for c in run.chunks_exact(8) {
                let b = [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
                f(RawValue::Double(u64::from_le_bytes(b)))?;
            }
        }
        ListKind::Bytes => f(RawValue::Bytes(run))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::wire::put_varint;

    /// Values of every varint width, negative ones (ten bytes) included.
    fn values() -> Vec<i64> {
        let mut v = vec![0, 1, -1, i64::MIN, i64::MAX];
        for bits in 0..63 {
            v.extend([1i64 << bits, (1i64 << bits) - 1, -(1i64 << bits)]);
        }
        v
    }

    #[test]
    fn packed_ints_read_a_word_at_a_time_stop_at_the_run_end() {
        let all = values();
        // Runs of every length from every start, each followed by bytes that are not part
        // of it (continuation bytes, which would lengthen a varint read past the end).
        for start in 0..all.len() {
            for n in 0..12.min(all.len() - start) {
                let want = &all[start..start + n];
                let mut buf = Vec::new();
                for v in want {
                    put_varint(&mut buf, v.cast_unsigned());
                }
                let len = buf.len();
                for tail in [&[][..], &[0x80; 3], &[0xff; 12], &[0x01]] {
                    let mut within = buf.clone();
                    within.extend_from_slice(tail);
                    let mut out = Vec::new();
                    <i64 as DecodeElem<'_, Tf>>::extend_packed_within(&within, len, &mut out)
                        .unwrap();
                    assert_eq!(out, want, "tail {tail:?}");
                    // A run cut inside its last varint is an error, whatever follows.
                    if let Some(last) = want.last() {
                        let cut = len - 1;
                        if varint_len(last.cast_unsigned()) > 1 {
                            let mut out = Vec::new();
                            let r = <i64 as DecodeElem<'_, Tf>>::extend_packed_within(
                                &within, cut, &mut out,
                            );
                            assert!(r.is_err(), "{want:?} cut to {cut} of {len}");
                        }
                    }
                }
            }
        }
    }
}
