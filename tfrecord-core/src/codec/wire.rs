//! Protobuf wire primitives used by the derived codecs: varints, tags, and a cursor that walks
//! the fields of a message without allocating.

use crate::error::Error;

/// Malformed protobuf, found while walking wire bytes. Small and `Copy` so that the hot loops
/// that return it stay cheap; converted into an [`Error`] at the record boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireError(pub &'static str);

impl From<WireError> for Error {
    #[cold]
    fn from(e: WireError) -> Self {
        Error::decode("protobuf message", e.0)
    }
}

type Result<T> = std::result::Result<T, WireError>;

/// Wire type 0: varint.
pub const VARINT: u8 = 0;
/// Wire type 1: 64-bit.
pub const FIXED64: u8 = 1;
/// Wire type 2: length-delimited.
pub const LEN: u8 = 2;
/// Wire type 5: 32-bit.
pub const FIXED32: u8 = 5;

/// The number of bytes `v` takes as a varint.
#[inline]
pub fn varint_len(v: u64) -> usize {
    // 1 byte per 7 bits, at least one: with `b` the index of the highest set bit,
    // (9b + 73) / 64 equals b / 7 + 1 for every b in 0..64, without a division.
    let b = 63 - (v | 1).leading_zeros() as usize;
    (b * 9 + 73) / 64
}

/// Appends `v` as a varint, a byte at a time: for tags and lengths, whose byte counts repeat
/// from one call to the next, so that the loop's branch is predicted.
#[inline]
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends `v` as a varint built in one word: for the values of packed integer runs, whose
/// byte counts vary from one value to the next, so that a loop's branch per byte would be
/// mispredicted. The same bytes as [`put_varint`].
#[inline(always)]
pub fn put_varint_value(buf: &mut Vec<u8>, v: u64) {
    if v < 0x80 {
        buf.push(v as u8);
    } else if v < 1 << 56 {
        // Two to eight bytes, stored as one word, then the bytes past the varint cut off.
        let n = varint_len(v);
        // The high bit of every byte but the last.
        let more = 0x0080_8080_8080_8080 >> (64 - 8 * n);
        let at = buf.len();
        buf.extend_from_slice(&(groups_in_bytes(v) | more).to_le_bytes());
        buf.truncate(at + n);
    } else {
        put_varint_long(buf, v);
    }
}

/// A varint of nine or ten bytes (every negative `int64`): the low 56 bits as eight bytes that
/// all go on, then the top eight bits. Out of line, so that [`put_varint_value`] stays small
/// enough to inline into the loops over a run.
#[inline(never)]
fn put_varint_long(buf: &mut Vec<u8>, v: u64) {
    let low = groups_in_bytes(v & ((1 << 56) - 1)) | 0x8080_8080_8080_8080;
    buf.extend_from_slice(&low.to_le_bytes());
    let top = (v >> 56) as u8;
    if top < 0x80 {
        buf.push(top);
    } else {
        buf.extend_from_slice(&[top, 1]);
    }
}

/// The 7-bit groups of `v < 2^56`, low first, one to a byte (high bits clear): the inverse of
/// the closing-up in [`varint_in_word`].
#[inline(always)]
fn groups_in_bytes(v: u64) -> u64 {
    let x = (v & 0x0fff_ffff) | ((v & 0x00ff_ffff_f000_0000) << 4);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
    (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1)
}

/// The length of a length-delimited field with a one-byte tag and a body of `body` bytes.
#[inline]
pub fn len_field_len(body: usize) -> usize {
    1 + varint_len(body as u64) + body
}

/// Appends a one-byte tag for `field` (1..=15) and wire type.
#[inline]
pub fn put_tag(buf: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire));
}

/// The tag of length-delimited field `field` as one byte; `None` past field 15, whose tags
/// take two bytes.
#[inline]
pub fn len_tag_byte(field: u32) -> Option<u8> {
    u8::try_from(field)
        .ok()
        .filter(|&f| f < 16)
        .map(|f| f << 3 | LEN)
}

/// Appends the tag and length prefix of a length-delimited field.
#[inline]
pub fn put_len_prefix(buf: &mut Vec<u8>, field: u32, body: usize) {
    put_tag(buf, field, LEN);
    put_varint(buf, body as u64);
}

#[cold]
fn malformed(what: &'static str) -> WireError {
    WireError(what)
}

/// A field read from the wire.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: the body.
    Len(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

impl Value<'_> {
    /// The protobuf wire type of this value.
    pub fn wire_type(&self) -> u8 {
        match self {
            Value::Varint(_) => VARINT,
            Value::Fixed64(_) => FIXED64,
            Value::Len(_) => LEN,
            Value::Fixed32(_) => FIXED32,
        }
    }
}

/// Reads a varint from the front of `buf`.
///
/// # Errors
/// When the varint is truncated or longer than ten bytes.
#[inline]
pub fn get_varint(buf: &mut &[u8]) -> Result<u64> {
    // Varints of up to three bytes (values below 2^21) unrolled; longer ones in the loop.
    let (v, rest) = match *buf {
        [b0, rest @ ..] if *b0 < 0x80 => (u64::from(*b0), rest),
        [b0, b1, rest @ ..] if *b1 < 0x80 => (u64::from(b0 & 0x7f) | (u64::from(*b1) << 7), rest),
        [b0, b1, b2, rest @ ..] if *b2 < 0x80 => (
            u64::from(b0 & 0x7f) | (u64::from(b1 & 0x7f) << 7) | (u64::from(*b2) << 14),
            rest,
        ),
        _ => return get_varint_slow(buf),
    };
    *buf = rest;
    Ok(v)
}

/// Decodes the varint at the front of `w`, the next eight bytes of a buffer read as one
/// little-endian word, without branching on the varint's length: `(value, length in bytes)`,
/// or `None` when the varint is longer than eight bytes. Packed runs of mixed-length numbers
/// decode faster this way than byte by byte, whose length branches the processor cannot
/// predict.
#[inline(always)]
pub fn varint_in_word(w: u64) -> Option<(u64, usize)> {
    // The last byte of a varint is the first without its high bit.
    let stop = !w & 0x8080_8080_8080_8080;
    if stop == 0 {
        return None;
    }
    let end = stop.trailing_zeros(); // 7, 15, .., 63: the last byte's high bit
    let x = w & (u64::MAX >> (63 - end));
    // Drop the continuation bits and close the 7-bit groups up: bytes into 14-bit pairs,
    // pairs into 28-bit quads, quads into the 56-bit value.
    let x = ((x & 0x7f00_7f00_7f00_7f00) >> 1) | (x & 0x007f_007f_007f_007f);
    let x = ((x & 0x3fff_0000_3fff_0000) >> 2) | (x & 0x0000_3fff_0000_3fff);
    let x = ((x & 0x0fff_ffff_0000_0000) >> 4) | (x & 0x0000_0000_0fff_ffff);
    Some((x, (end as usize + 1) / 8))
}

/// [`get_varint`] for varints of four bytes or more, and for errors.
#[cold]
fn get_varint_slow(buf: &mut &[u8]) -> Result<u64> {
    let bytes = *buf;
    let mut v: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            if i == 9 && b > 1 {
                return Err(malformed("varint overflows 64 bits"));
            }
            *buf = &bytes[i + 1..];
            return Ok(v);
        }
    }
    if bytes.len() < 10 {
        Err(malformed("truncated varint"))
    } else {
        Err(malformed("varint longer than 10 bytes"))
    }
}

/// Splits a length-delimited value off the front of `buf` (after its tag): `(body, rest)`.
/// `None` when the length is malformed or runs past the end.
#[inline]
pub fn split_len(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = match buf {
        [b, rest @ ..] if *b < 0x80 => (usize::from(*b), rest),
        _ => {
            let mut s = buf;
            let len = get_varint(&mut s).ok()?;
            (usize::try_from(len).ok()?, s)
        }
    };
    if len <= rest.len() {
        Some(rest.split_at(len))
    } else {
        None
    }
}

/// Iterates the fields of one message body: `(field number, value)`.
#[derive(Clone, Debug)]
pub struct Fields<'a> {
    buf: &'a [u8],
}

impl<'a> Fields<'a> {
    /// Walks `buf`, a serialized message.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Fields { buf }
    }

    /// How many bytes are left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// The bytes not yet walked.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    /// The next field, `Ok(None)` at the end.
    ///
    /// # Errors
    /// Malformed tags, truncated values, groups and reserved wire types.
    #[inline]
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = get_varint(&mut self.buf)?;
        let field = key >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return Err(malformed("invalid field number"));
        }
        let field = field as u32;
        let value = match (key & 7) as u8 {
            VARINT => Value::Varint(get_varint(&mut self.buf)?),
            FIXED64 => {
                let Some((head, rest)) = self.buf.split_first_chunk::<8>() else {
                    return Err(malformed("truncated fixed64"));
                };
                self.buf = rest;
                Value::Fixed64(u64::from_le_bytes(*head))
            }
            LEN => {
                let len = get_varint(&mut self.buf)?;
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                if len > self.buf.len() {
                    return Err(malformed(
                        "length-delimited field runs past the end of its message",
                    ));
                }
                let (body, rest) = self.buf.split_at(len);
                self.buf = rest;
                Value::Len(body)
            }
            FIXED32 => {
                let Some((head, rest)) = self.buf.split_first_chunk::<4>() else {
                    return Err(malformed("truncated fixed32"));
                };
                self.buf = rest;
                Value::Fixed32(u32::from_le_bytes(*head))
            }
            _ => {
                return Err(malformed(
                    "unsupported wire type (groups are not used by these messages)",
                ));
            }
        };
        Ok(Some((field, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_varint_writers_write_what_prost_writes() {
        // Every width, both sides of each byte boundary, appended after earlier bytes.
        let mut values = vec![
            0u64,
            u64::MAX,
            i64::MIN.cast_unsigned(),
            (-1i64).cast_unsigned(),
        ];
        for bits in 0..64u32 {
            values.extend([1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 1]);
            values.push(u64::MAX >> bits);
        }
        let (mut ours, mut theirs) = (vec![0xee], vec![0xee]);
        for &v in &values {
            put_varint(&mut ours, v);
            prost::encoding::encode_varint(v, &mut theirs);
            assert_eq!(ours, theirs, "{v:#x}");
        }
        let mut words = vec![0xee];
        for &v in &values {
            put_varint_value(&mut words, v);
        }
        assert_eq!(words, theirs);
    }

    #[test]
    fn varint_len_at_every_width() {
        for bits in 0..64u32 {
            for v in [1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 1] {
                let mut buf = Vec::new();
                put_varint(&mut buf, v);
                assert_eq!(varint_len(v), buf.len(), "{v}");
            }
        }
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(u64::MAX), 10);
    }

    #[test]
    fn varint_roundtrip() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            u64::from(u32::MAX),
            u64::MAX,
            1 << 63,
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v));
            let mut s = &buf[..];
            assert_eq!(get_varint(&mut s).unwrap(), v);
            assert!(s.is_empty());
            // Every strict prefix is an error, never a panic.
            for cut in 0..buf.len() {
                let mut s = &buf[..cut];
                assert!(get_varint(&mut s).is_err());
            }
        }
        let mut s: &[u8] = &[0xff; 11];
        assert!(get_varint(&mut s).is_err());
    }

    #[test]
    fn varint_in_word_reads_what_get_varint_reads() {
        // Every width, each followed by bytes that must not be read into the value.
        for bits in 0..64u32 {
            for v in [1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 1] {
                for pad in [0x00u8, 0x7f, 0x80, 0xff] {
                    let mut buf = Vec::new();
                    put_varint(&mut buf, v);
                    let len = buf.len();
                    buf.resize(len.max(8), pad);
                    let w = u64::from_le_bytes(buf[..8].try_into().unwrap());
                    if len <= 8 {
                        assert_eq!(varint_in_word(w), Some((v, len)), "{v} pad {pad:#x}");
                    } else {
                        assert_eq!(varint_in_word(w), None, "{v}");
                    }
                }
            }
        }
        // Eight continuation bytes: longer than the word.
        assert_eq!(varint_in_word(u64::MAX), None);
        assert_eq!(varint_in_word(0), Some((0, 1)));
    }
}
