//! Checking one Avro datum against the block it is in, with its writer schema, before
//! `apache-avro` decodes it: every length and item count it declares must be backed by the
//! block's bytes, so that nothing the decoder allocates is sized by a number the input does not
//! back.

use std::io::{self, Read};

use apache_avro::Schema;
use apache_avro::schema::{InnerDecimalSchema, NamesRef, NamespaceRef, UuidSchema};

use crate::error::{Error, Result};

/// How deeply values may nest (records, arrays, maps, unions), as `serde_json` limits JSON:
/// decoding recurses (with kilobytes of stack per level), and a recursive schema lets each
/// level take a byte or two, so that a small file could otherwise overflow the stack.
pub(super) const MAX_DEPTH: usize = 128;

/// A walk over one datum in a block with its writer schema, before `apache-avro` decodes it:
/// checks every length and count against the bytes left in the block, so that nothing the
/// decoder allocates is sized by a number the bytes do not back. Checks only what sizes
/// allocations and the datum's extent; the decoder checks the rest (UTF-8, enum symbols, ...).
pub(super) struct Walk<'a> {
    pub(super) names: &'a NamesRef<'a>,
    pub(super) block: &'a [u8],
    /// Where the walk is in the block.
    pub(super) pos: usize,
    /// Values that take no bytes the block may still hold.
    pub(super) empty_left: u64,
}

impl Walk<'_> {
    fn left(&self) -> u64 {
        self.block.len().saturating_sub(self.pos) as u64
    }

    /// Steps over `n` bytes.
    fn skip(&mut self, n: u64, what: &str) -> std::result::Result<(), String> {
        self.skip_from(self.pos, n, what)
    }

    /// Steps over the `n` bytes of a value that starts at `at`.
    fn skip_from(&mut self, at: usize, n: u64, what: &str) -> std::result::Result<(), String> {
        let left = self.left();
        if n > left {
            return Err(format!(
                "{what} of {n} bytes at byte {at} of the block, but only {left} bytes are left"
            ));
        }
        self.pos += usize::try_from(n).map_err(|_| format!("{what} too large"))?;
        Ok(())
    }

    /// Reads a zig-zag varint `long`.
    fn long(&mut self, what: &str) -> std::result::Result<i64, String> {
        let mut rest = self.block.get(self.pos..).unwrap_or(&[]);
        let before = rest.len();
        let n = read_long(&mut rest)
            .map_err(|e| e.message().to_string())?
            .ok_or_else(|| format!("the block ends before {what} at byte {}", self.pos))?;
        self.pos += before - rest.len();
        Ok(n)
    }

    /// Reads a length that must be backed by the bytes left, and steps over them.
    fn bytes(&mut self, what: &str) -> std::result::Result<(), String> {
        let at = self.pos;
        let n = self.long(what)?;
        let n = u64::try_from(n)
            .map_err(|_| format!("{what} at byte {at} of the block has length {n}"))?;
        self.skip_from(at, n, what)
    }

    /// How many values a datum of `schema` decodes to when it takes no bytes at all (`null`,
    /// a zero-size `fixed`, a record of only such fields); `None` when it takes at least one.
    fn empty_values(&self, schema: &Schema, ns: NamespaceRef, depth: usize) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        match schema {
            Schema::Null => Some(1),
            Schema::Fixed(f)
            | Schema::Decimal(apache_avro::schema::DecimalSchema {
                inner: InnerDecimalSchema::Fixed(f),
                ..
            }) if f.size == 0 => Some(1),
            Schema::Record(r) => {
                let inner = r.name.fully_qualified_name(ns);
                r.fields.iter().try_fold(1u64, |n, f| {
                    let v = self.empty_values(&f.schema, inner.namespace(), depth + 1)?;
                    Some(n.saturating_add(v))
                })
            }
            Schema::Ref { name } => {
                let name = name.fully_qualified_name(ns);
                let schema = self.names.get(name.as_ref())?;
                self.empty_values(schema, name.namespace(), depth)
            }
            _ => None,
        }
    }

    /// Walks one datum of `schema` (named types resolved in namespace `ns`).
    pub(super) fn datum(
        &mut self,
        schema: &Schema,
        ns: NamespaceRef,
        depth: usize,
    ) -> std::result::Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("values nest more than {MAX_DEPTH} deep"));
        }
        match schema {
            Schema::Null => Ok(()),
            Schema::Boolean => self.skip(1, "a boolean"),
            Schema::Int
            | Schema::Long
            | Schema::Date
            | Schema::TimeMillis
            | Schema::TimeMicros
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos
            | Schema::Enum(_) => self.long("a number").map(drop),
            Schema::Float => self.skip(4, "a float"),
            Schema::Double => self.skip(8, "a double"),
            Schema::Bytes
            | Schema::String
            | Schema::BigDecimal
            | Schema::Decimal(apache_avro::schema::DecimalSchema {
                inner: InnerDecimalSchema::Bytes,
                ..
            })
            | Schema::Uuid(UuidSchema::String | UuidSchema::Bytes) => {
                self.bytes("a string or bytes value")
            }
            Schema::Fixed(f)
            | Schema::Duration(f)
            | Schema::Decimal(apache_avro::schema::DecimalSchema {
                inner: InnerDecimalSchema::Fixed(f),
                ..
            })
            | Schema::Uuid(UuidSchema::Fixed(f)) => self.skip(f.size as u64, "a fixed value"),
            Schema::Union(u) => {
                let at = self.pos;
                let index = self.long("a union branch")?;
                let branch = usize::try_from(index)
                    .ok()
                    .and_then(|i| u.variants().get(i))
                    .ok_or_else(|| {
                        format!(
                            "union branch {index} at byte {at} of the block, but the union has {}",
                            u.variants().len()
                        )
                    })?;
                self.datum(branch, ns, depth + 1)
            }
            Schema::Array(a) => self.items(Items::Array(&a.items), ns, depth),
            Schema::Map(m) => self.items(Items::Map(&m.types), ns, depth),
            Schema::Record(r) => {
                let inner = r.name.fully_qualified_name(ns);
                for f in &r.fields {
                    self.datum(&f.schema, inner.namespace(), depth + 1)?;
                }
                Ok(())
            }
            Schema::Ref { name } => {
                let name = name.fully_qualified_name(ns);
                let schema = self
                    .names
                    .get(name.as_ref())
                    .ok_or_else(|| format!("the schema names an unknown type `{name}`"))?;
                self.datum(schema, name.namespace(), depth)
            }
        }
    }

    /// Walks the blocks of an array or a map: each block's item count (and byte size, when
    /// given) is checked against the bytes left before its items are walked.
    fn items(
        &mut self,
        of: Items<'_>,
        ns: NamespaceRef,
        depth: usize,
    ) -> std::result::Result<(), String> {
        let (what, empty) = match of {
            Items::Array(item) => ("an array", self.empty_values(item, ns, depth + 1)),
            // Keys are strings: every entry takes a byte.
            Items::Map(_) => ("a map", None),
        };
        loop {
            let at = self.pos;
            let count = self.long("an item count")?;
            if count == 0 {
                return Ok(());
            }
            if count < 0 {
                let size = self.long("a block size")?;
                let left = self.left();
                if !u64::try_from(size).is_ok_and(|size| size <= left) {
                    return Err(format!(
                        "{what} block of {size} bytes at byte {at} of the block, but only {left} \
                         bytes are left"
                    ));
                }
            }
            let count = count.unsigned_abs();
            if let Some(values) = empty {
                // No bytes to walk: only the values' count is checked.
                let needed = count.saturating_mul(values);
                if needed > self.empty_left {
                    return Err(format!(
                        "{what} block of {count} items at byte {at} of the block that take no \
                         bytes (nulls, empty records): more than this reader decodes in one block \
                         (it may still decode {} such values: a block may hold {} of them plus \
                         one per byte of its data, since no byte of the file backs what they \
                         allocate)",
                        self.empty_left,
                        super::file::EMPTY_VALUES_PER_BLOCK
                    ));
                }
                self.empty_left -= needed;
                continue;
            }
            let left = self.left();
            if count > left {
                return Err(format!(
                    "{what} block of {count} items at byte {at} of the block, but only {left} \
                     bytes are left"
                ));
            }
            for _ in 0..count {
                match of {
                    Items::Array(item) => self.datum(item, ns, depth + 1)?,
                    Items::Map(value) => {
                        self.bytes("a map key")?;
                        self.datum(value, ns, depth + 1)?;
                    }
                }
            }
        }
    }
}

/// What an array's or a map's blocks hold: the schema of the items, or of the values.
#[derive(Clone, Copy)]
enum Items<'a> {
    Array(&'a Schema),
    Map(&'a Schema),
}

/// Checks the length a snappy block declares for its data against what its bytes can hold:
/// `apache-avro` allocates the declared length before it decompresses. Snappy turns at most
/// 3 bytes into 64 (a copy with a two-byte offset), so a larger length is corrupt. A block is
/// the length (a varint), the compressed data and a CRC-32; a malformed varint is left to the
/// decoder.
pub(super) fn check_snappy_length(block: &[u8]) -> Result<()> {
    let data = &block[..block.len().saturating_sub(4)];
    let mut declared = 0u64;
    for (i, &b) in data.iter().take(5).enumerate() {
        declared |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let most = (data.len() as u64).saturating_mul(64) / 3;
            if declared > most {
                return Err(Error::new(format!(
                    "corrupted Avro file: a snappy block of {} bytes declares {declared} bytes \
                     of data, more than it can hold ({most})",
                    block.len()
                )));
            }
            break;
        }
    }
    Ok(())
}

/// Reads a zig-zag varint `long`, `None` at the end of the stream.
pub(super) fn read_long(r: &mut impl Read) -> Result<Option<i64>> {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    let mut buf = [0u8; 1];
    loop {
        match r.read(&mut buf) {
            Ok(0) if shift == 0 => return Ok(None),
            Ok(0) => {
                return Err(Error::new(
                    "truncated Avro file: the stream ends inside a number",
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
        let b = buf[0];
        if shift >= 64 {
            return Err(Error::new(
                "malformed Avro file: a number is longer than 10 bytes",
            ));
        }
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    #[allow(clippy::cast_possible_wrap)]
    Ok(Some(((value >> 1) as i64) ^ -((value & 1) as i64)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::schema::ResolvedSchema;

    /// Walks one datum of `schema` in `bytes` (an empty-value allowance of `empty`): where it
    /// ends, or the error.
    fn walk(schema: &str, bytes: &[u8], empty: u64) -> std::result::Result<usize, String> {
        let schema = Schema::parse_str(schema).unwrap();
        let resolved = ResolvedSchema::try_from(&schema).unwrap();
        let mut w = Walk {
            names: resolved.get_names(),
            block: bytes,
            pos: 0,
            empty_left: empty,
        };
        w.datum(&schema, None, 0).map(|()| w.pos)
    }

    #[test]
    fn counts_and_lengths_are_checked_against_the_bytes_left() {
        let longs = r#"{"type": "array", "items": "long"}"#;
        assert_eq!(walk(longs, &[6, 2, 4, 6, 0, 99], 0), Ok(5));
        // A negative count is followed by the block's byte size.
        assert_eq!(walk(longs, &[5, 6, 2, 4, 6, 0], 0), Ok(6));
        let e = walk(longs, &[5, 10, 2, 4, 6, 0], 0).unwrap_err();
        assert!(e.contains("block of 5 bytes at byte 0"), "{e}");
        assert!(e.contains("only 4 bytes are left"), "{e}");
        let e = walk(longs, &[0xd0, 0x0f, 2, 4, 0], 0).unwrap_err();
        assert!(e.contains("array block of 1000 items at byte 0"), "{e}");
        assert!(e.contains("only 3 bytes are left"), "{e}");
        let e = walk(longs, &[6, 2, 4], 0).unwrap_err();
        assert!(
            e.contains("3 items at byte 0 of the block, but only 2 bytes"),
            "{e}"
        );
        let e = walk(longs, &[6, 2, 4, 6], 0).unwrap_err();
        assert!(
            e.contains("the block ends before an item count at byte 4"),
            "{e}"
        );

        let map = r#"{"type": "map", "values": "string"}"#;
        assert_eq!(walk(map, &[2, 2, b'k', 2, b'v', 0], 0), Ok(6));
        let e = walk(map, &[0xd0, 0x0f, 2, b'k', 0], 0).unwrap_err();
        assert!(e.contains("map block of 1000 items"), "{e}");

        let e = walk(r#""string""#, &[0x80, 0x80, 0x80, 0x80, 0x02, b'a'], 0).unwrap_err();
        assert!(e.contains("of 268435456 bytes at byte 0"), "{e}");
        assert!(
            walk(r#""bytes""#, &[1], 0)
                .unwrap_err()
                .contains("length -1")
        );
        let fixed = r#"{"type": "fixed", "name": "f", "size": 1000000}"#;
        assert!(
            walk(fixed, &[0; 10], 0)
                .unwrap_err()
                .contains("1000000 bytes")
        );

        let union = r#"["null", "long"]"#;
        assert_eq!(walk(union, &[2, 8], 0), Ok(2));
        let e = walk(union, &[4, 8], 0).unwrap_err();
        assert!(e.contains("union branch 2 at byte 0 of the block"), "{e}");
    }

    #[test]
    fn values_that_take_no_bytes_have_an_allowance() {
        let nulls = r#"{"type": "array", "items": "null"}"#;
        assert_eq!(walk(nulls, &[0xd0, 0x0f, 0], 1000), Ok(3));
        let e = walk(nulls, &[0xd0, 0x0f, 0], 999).unwrap_err();
        assert!(
            e.contains("1000 items at byte 0 of the block that take no bytes"),
            "{e}"
        );
        // An empty record is one value, and so is each of its null fields.
        let empty = r#"{"type": "array", "items": {"type": "record", "name": "e", "fields": [
            {"name": "a", "type": "null"}, {"name": "b", "type": "null"}]}}"#;
        assert_eq!(walk(empty, &[20, 0], 30), Ok(2));
        assert!(walk(empty, &[20, 0], 29).is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let list = r#"{"type": "record", "name": "node", "fields": [
            {"name": "next", "type": ["null", "node"]}]}"#;
        // Each node is two levels: the record and the union of its `next`.
        let mut deep = vec![2u8; MAX_DEPTH / 2 - 1];
        deep.push(0);
        assert_eq!(walk(list, &deep, 0), Ok(MAX_DEPTH / 2));
        deep.insert(0, 2);
        let e = walk(list, &deep, 0).unwrap_err();
        assert!(e.contains("nest more than 128 deep"), "{e}");
        // A record that holds itself has no finite value.
        let endless = r#"{"type": "record", "name": "loop", "fields": [
            {"name": "again", "type": "loop"}]}"#;
        if Schema::parse_str(endless).is_ok() {
            assert!(walk(endless, &[], 0).unwrap_err().contains("nest"));
        }
    }
}
