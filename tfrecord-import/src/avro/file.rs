//! Reading Avro object container files: the header and block framing read here with every
//! length bounded by the file, each block decompressed and its records decoded (and resolved to
//! the reader schema) with the `apache-avro` crate.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::schema::{InnerDecimalSchema, NamesRef, NamespaceRef, ResolvedSchema, UuidSchema};
use apache_avro::types::Value;
use apache_avro::{Codec, Schema};

use crate::error::{Error, Result};

/// Anything the container reader can read from.
trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// How many records are decoded from a block at a time.
const RECORDS_PER_DECODE: u64 = 256;

/// Values that take no bytes (`null`, a record of such fields, a zero-size `fixed`) a block may
/// hold in arrays beyond one per byte of the block: their count is the only thing that sizes
/// what decoding them allocates, and no byte of the input backs it.
const EMPTY_VALUES_PER_BLOCK: u64 = 1 << 16;

/// How deeply values may nest (records, arrays, maps, unions), as `serde_json` limits JSON:
/// decoding recurses (with kilobytes of stack per level), and a recursive schema lets each
/// level take a byte or two, so that a small file could otherwise overflow the stack.
const MAX_DEPTH: usize = 128;

/// The records of one Avro object container file, in file order, each resolved to the reader
/// schema when one is given (projection, promotions such as `int` to `long`, defaults of new
/// fields), as Avro's schema resolution rules say.
///
/// Every codec of the Avro specification that the `apache-avro` crate implements is read:
/// `null`, `deflate`, `snappy`, `zstandard`, `bzip2` and `xz`. Every length in the file (header
/// entries, blocks, a snappy block's data size) is checked against the rest of the file or of
/// the block before anything is allocated for it, and each block's sync marker against the
/// header's. Each record is walked with the
/// writer schema before it is decoded: every string, bytes and `fixed` length and every array
/// and map item count in it is checked against the bytes left in its block (an item takes at
/// least a byte, unless its type takes none: a block may hold at most as many of those as it
/// has bytes, plus 65,536), values may nest at most 128 deep, and the record is decoded from
/// exactly its own bytes.
pub struct AvroFile<'s> {
    path: PathBuf,
    source: Box<dyn Source>,
    end: u64,
    writer: Schema,
    reader_schema: Option<&'s Schema>,
    codec: Codec,
    marker: [u8; 16],
    block: Vec<u8>,
    block_pos: usize,
    block_left: u64,
    /// The index of the current block in the file, and where it starts (its record count).
    block_index: Option<u64>,
    block_start: u64,
    /// Values that take no bytes the rest of the current block may still hold.
    empty_left: u64,
    buffered: VecDeque<Value>,
    next_index: u64,
    read: u64,
    done: bool,
}

impl std::fmt::Debug for AvroFile<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvroFile")
            .field("path", &self.path)
            .field("codec", &self.codec)
            .field("next_index", &self.next_index)
            .finish_non_exhaustive()
    }
}

impl<'s> AvroFile<'s> {
    /// Opens a file (`-`: standard input, read into memory first) and reads its header.
    ///
    /// # Errors
    /// An unreadable file, a file that is not an Avro object container, a header entry longer
    /// than the rest of the file, an invalid writer schema, a codec this build cannot read, or a
    /// reader schema that cannot read the writer schema. The error names the file.
    pub fn open(path: impl AsRef<Path>, reader_schema: Option<&'s Schema>) -> Result<Self> {
        let path = path.as_ref();
        let located = |e: Error| e.with_path(path);
        let mut source: Box<dyn Source> = if path.as_os_str() == "-" {
            let mut buf = Vec::new();
            io::stdin()
                .lock()
                .read_to_end(&mut buf)
                .map_err(Error::from)?;
            Box::new(Cursor::new(buf))
        } else {
            let file = File::open(path).map_err(|e| located(e.into()))?;
            Box::new(BufReader::new(file))
        };
        let (end, meta, marker) = read_header(&mut source).map_err(located)?;
        let schema_json = meta
            .get("avro.schema")
            .ok_or_else(|| located(Error::new("the Avro header has no `avro.schema`")))?;
        let writer = std::str::from_utf8(schema_json)
            .map_err(|_| Error::new("the writer schema is not UTF-8"))
            .and_then(|text| {
                Schema::parse_str(text)
                    .map_err(|e| Error::new(format!("invalid writer schema: {e}")))
            })
            .map_err(located)?;
        let codec_name = meta
            .get("avro.codec")
            .map_or("null", |c| std::str::from_utf8(c).unwrap_or("?"));
        let codec = Codec::from_str(codec_name).map_err(|_| {
            located(Error::new(format!(
                "the Avro codec `{codec_name}` is not supported (this build reads null, deflate, \
                 snappy, zstandard, bzip2 and xz)"
            )))
        })?;
        if let Some(rs) = reader_schema
            && &writer != rs
            && let Err(e) =
                apache_avro::schema_compatibility::SchemaCompatibility::can_read(&writer, rs)
        {
            return Err(located(Error::new(format!(
                "the reader schema cannot read this file's writer schema: {e}"
            ))));
        }
        Ok(AvroFile {
            path: path.to_path_buf(),
            source,
            end,
            writer,
            reader_schema,
            codec,
            marker,
            block: Vec::new(),
            block_pos: 0,
            block_left: 0,
            block_index: None,
            block_start: 0,
            empty_left: 0,
            buffered: VecDeque::new(),
            next_index: 0,
            read: 0,
            done: false,
        })
    }

    /// The schema the file was written with.
    pub fn writer_schema(&self) -> &Schema {
        &self.writer
    }

    /// The file's path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many bytes of the file have been read so far (whole blocks).
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// Reads the next block into `self.block`; `false` at the end of the file.
    fn next_block(&mut self) -> Result<bool> {
        loop {
            let start = self.source.stream_position()?;
            let Some(count) = read_long(&mut self.source)? else {
                return Ok(false);
            };
            self.block_index = Some(self.block_index.map_or(0, |i| i + 1));
            self.block_start = start;
            let count = u64::try_from(count).map_err(|_| {
                Error::new(format!(
                    "malformed Avro file: negative block record count {count}"
                ))
            })?;
            let size = need_long(&mut self.source, "block size")?;
            let size = bounded(&mut self.source, size, "data block", self.end)?;
            self.block.clear();
            self.block.resize(size, 0);
            self.source.read_exact(&mut self.block)?;
            let mut marker = [0u8; 16];
            bounded(&mut self.source, 16, "block sync marker", self.end)?;
            self.source.read_exact(&mut marker)?;
            self.read = self.source.stream_position().unwrap_or(self.read);
            if marker != self.marker {
                return Err(Error::new(
                    "corrupted Avro file: a block's sync marker differs from the header's",
                ));
            }
            if matches!(self.codec, Codec::Snappy) {
                check_snappy_length(&self.block).map_err(|e| {
                    Error::new(format!(
                        "{} (block {}, at byte {start} of the file)",
                        e.message(),
                        self.block_index.unwrap_or(0)
                    ))
                })?;
            }
            self.codec
                .decompress(&mut self.block)
                .map_err(|e| Error::new(format!("cannot decompress a block: {e}")))?;
            self.block_pos = 0;
            self.block_left = count;
            self.empty_left = EMPTY_VALUES_PER_BLOCK.saturating_add(self.block.len() as u64);
            if count > 0 {
                return Ok(true);
            }
        }
    }

    /// Decodes up to [`RECORDS_PER_DECODE`] records of the current block into `self.buffered`,
    /// each walked first ([`Walk`]) and decoded from exactly its own bytes.
    fn decode_chunk(&mut self) -> Result<()> {
        let resolved = ResolvedSchema::try_from(&self.writer)
            .map_err(|e| Error::new(format!("cannot resolve the writer schema: {e}")))?;
        let reader = GenericDatumReader::builder(&self.writer)
            .resolved_writer_schemata(resolved.clone())
            .maybe_reader_schema(self.reader_schema)
            .build()
            .map_err(|e| Error::new(format!("cannot resolve the schemas: {e}")))?;
        for _ in 0..self.block_left.min(RECORDS_PER_DECODE) {
            let index = self.next_index + self.buffered.len() as u64;
            let start = self.block_pos;
            let mut walk = Walk {
                names: resolved.get_names(),
                block: &self.block,
                pos: start,
                empty_left: self.empty_left,
            };
            let walked = walk.datum(&self.writer, None, 0);
            let (end, empty_left) = (walk.pos, walk.empty_left);
            walked.map_err(|e| {
                Error::new(format!(
                    "malformed Avro data in block {} (at byte {} of the file): {e}",
                    self.block_index.unwrap_or(0),
                    self.block_start
                ))
                .with_record(index)
            })?;
            self.empty_left = empty_left;
            let mut datum = self.block.get(start..end).unwrap_or(&[]);
            let v = reader.read_value(&mut datum).map_err(|e| {
                Error::new(format!("cannot decode the record: {e}")).with_record(index)
            })?;
            if !datum.is_empty() {
                return Err(Error::new(format!(
                    "cannot decode the record: {} of its {} bytes were left unread",
                    datum.len(),
                    end - start
                ))
                .with_record(index));
            }
            self.buffered.push_back(v);
            self.block_left -= 1;
            self.block_pos = end;
        }
        Ok(())
    }

    /// The next record, decoding the next chunk or block when the buffer is empty.
    fn step(&mut self) -> Result<Option<Value>> {
        if self.buffered.is_empty() {
            if self.block_left == 0 && !self.next_block()? {
                return Ok(None);
            }
            self.decode_chunk()?;
        }
        Ok(self.buffered.pop_front().inspect(|_| self.next_index += 1))
    }
}

impl Iterator for AvroFile<'_> {
    type Item = Result<Value>;

    fn next(&mut self) -> Option<Result<Value>> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(v)) => Some(Ok(v)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e.with_record(self.next_index).with_path(&self.path)))
            }
        }
    }
}

/// A walk over one datum in a block with its writer schema, before `apache-avro` decodes it:
/// checks every length and count against the bytes left in the block, so that nothing the
/// decoder allocates is sized by a number the bytes do not back. Checks only what sizes
/// allocations and the datum's extent; the decoder checks the rest (UTF-8, enum symbols, ...).
struct Walk<'a> {
    names: &'a NamesRef<'a>,
    block: &'a [u8],
    /// Where the walk is in the block.
    pos: usize,
    /// Values that take no bytes the block may still hold.
    empty_left: u64,
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
    fn datum(
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
                         bytes: more than the block may hold ({} more)",
                        self.empty_left
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
fn check_snappy_length(block: &[u8]) -> Result<()> {
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
fn read_long(r: &mut impl Read) -> Result<Option<i64>> {
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

/// Reads a `long` that must be there: the end of the stream is a truncated file.
fn need_long(r: &mut impl Read, what: &str) -> Result<i64> {
    read_long(r)?.ok_or_else(|| Error::new(format!("truncated Avro file: no {what}")))
}

/// Checks that `n` bytes lie within the stream before `end`, and returns `n`.
fn bounded(r: &mut (impl Read + Seek), n: i64, what: &str, end: u64) -> Result<usize> {
    let here = r.stream_position()?;
    let n = u64::try_from(n)
        .map_err(|_| Error::new(format!("malformed Avro file: negative {what} length {n}")))?;
    let left = end.saturating_sub(here);
    if n > left {
        return Err(Error::new(format!(
            "truncated Avro file: {what} of {n} bytes at byte {here}, but only {left} bytes are left"
        )));
    }
    usize::try_from(n).map_err(|_| Error::new(format!("{what} too large")))
}

/// Reads `n` bytes that must lie within the stream.
fn read_bytes(r: &mut (impl Read + Seek), n: i64, what: &str, end: u64) -> Result<Vec<u8>> {
    let n = bounded(r, n, what, end)?;
    let mut buf = vec![0u8; n];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

/// An object container file's header: the stream length, the metadata and the sync marker.
type Header = (u64, HashMap<String, Vec<u8>>, [u8; 16]);

/// Reads the header: the magic, the metadata map (string to bytes, in blocks; a negative count
/// is followed by the block's byte size) and the sync marker. Returns the stream length, the
/// metadata and the marker.
fn read_header(r: &mut (impl Read + Seek)) -> Result<Header> {
    let end = r.seek(SeekFrom::End(0))?;
    r.seek(SeekFrom::Start(0))?;
    let mut magic = [0u8; 4];
    if end < 4 || r.read_exact(&mut magic).is_err() || &magic != b"Obj\x01" {
        return Err(Error::new(
            "not an Avro object container file (it does not start with `Obj\\x01`)",
        ));
    }
    let mut meta = HashMap::new();
    loop {
        let count = need_long(r, "header map block")?;
        if count == 0 {
            break;
        }
        if count < 0 {
            need_long(r, "header map block size")?;
        }
        for _ in 0..count.unsigned_abs() {
            let k = need_long(r, "header key length")?;
            let key = read_bytes(r, k, "header key", end)?;
            let v = need_long(r, "header value length")?;
            let value = read_bytes(r, v, "header value", end)?;
            meta.insert(String::from_utf8_lossy(&key).into_owned(), value);
        }
    }
    bounded(r, 16, "sync marker", end)?;
    let mut marker = [0u8; 16];
    r.read_exact(&mut marker)?;
    Ok((end, meta, marker))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn records_of_every_shape_read_back_walked() {
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "r", "namespace": "n", "fields": [
                {"name": "nulls", "type": {"type": "array", "items": "null"}},
                {"name": "list", "type": {"type": "record", "name": "node", "fields": [
                    {"name": "v", "type": "long"},
                    {"name": "next", "type": ["null", "node"]}]}},
                {"name": "m", "type": {"type": "map", "values": {"type": "array",
                    "items": "double"}}},
                {"name": "f", "type": {"type": "fixed", "name": "f4", "size": 4}},
                {"name": "e", "type": {"type": "enum", "name": "abc", "symbols": ["a", "b"]}},
                {"name": "d", "type": {"type": "bytes", "logicalType": "decimal",
                    "precision": 5, "scale": 2}}]}"#,
        )
        .unwrap();
        let node = |depth: i64| {
            let mut v = Value::Union(0, Box::new(Value::Null));
            for i in (0..depth).rev() {
                v = Value::Record(vec![("v".into(), Value::Long(i)), ("next".into(), v)]);
                if i > 0 {
                    v = Value::Union(1, Box::new(v));
                }
            }
            v
        };
        let mut w = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
        let mut want = Vec::new();
        for i in 0..300i64 {
            let record = Value::Record(vec![
                (
                    "nulls".into(),
                    Value::Array(vec![Value::Null; usize::try_from(i % 7).unwrap()]),
                ),
                // Not much deeper: a debug build's decoder takes ~20 KiB of stack a level.
                ("list".into(), node(i % 12 + 1)),
                (
                    "m".into(),
                    Value::Map(
                        [("k".to_string(), Value::Array(vec![Value::Double(0.5); 3]))].into(),
                    ),
                ),
                ("f".into(), Value::Fixed(4, vec![1, 2, 3, 4])),
                ("e".into(), Value::Enum(1, "b".into())),
                (
                    "d".into(),
                    Value::Decimal(apache_avro::Decimal::from(vec![1, 2])),
                ),
            ]);
            w.append_value_ref(&record).unwrap();
            want.push(record);
        }
        let bytes = w.into_inner().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("shapes.avro");
        std::fs::write(&p, &bytes).unwrap();
        let got: Vec<Value> = AvroFile::open(&p, None)
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn header_lengths_are_bounded_by_the_file() {
        let mut bad = b"Obj\x01".to_vec();
        bad.extend([2, 2, b'a', 0xfe, 0xff, 0xff, 0xff, 0x0f]); // value length ~2^31
        let e = read_header(&mut Cursor::new(bad)).unwrap_err().to_string();
        assert!(e.contains("truncated Avro file: header value"), "{e}");
        let e = read_header(&mut Cursor::new(b"PK\x03\x04".to_vec()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an Avro object container"), "{e}");
        let mut ok = b"Obj\x01".to_vec();
        ok.push(0);
        ok.extend([7u8; 16]);
        let (_, meta, marker) = read_header(&mut Cursor::new(ok)).unwrap();
        assert!(meta.is_empty());
        assert_eq!(marker, [7u8; 16]);
    }

    #[test]
    fn reads_every_codec_and_checks_markers() {
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "r", "fields": [{"name": "x", "type": "long"},
                {"name": "s", "type": "string"}]}"#,
        )
        .unwrap();
        for name in ["null", "deflate", "snappy", "zstandard", "bzip2", "xz"] {
            let codec = Codec::from_str(name).unwrap();
            let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), codec).unwrap();
            for i in 0..600i64 {
                let mut r = apache_avro::types::Record::new(&schema).unwrap();
                r.put("x", i);
                r.put("s", format!("v{i}"));
                w.append_value(r).unwrap();
                if i == 300 {
                    w.flush().unwrap();
                }
            }
            let bytes = w.into_inner().unwrap();
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join(format!("{name}.avro"));
            std::fs::write(&p, &bytes).unwrap();
            let values: Vec<Value> = AvroFile::open(&p, None)
                .unwrap()
                .collect::<Result<_>>()
                .unwrap();
            assert_eq!(values.len(), 600, "{name}");
            assert_eq!(
                values[599],
                Value::Record(vec![
                    ("x".into(), Value::Long(599)),
                    ("s".into(), "v599".into())
                ]),
                "{name}"
            );
            // A damaged copy: errors, never a panic.
            for cut in (0..bytes.len()).step_by(bytes.len() / 40 + 1) {
                std::fs::write(&p, &bytes[..cut]).unwrap();
                if let Ok(f) = AvroFile::open(&p, None) {
                    for v in f {
                        if v.is_err() {
                            break;
                        }
                    }
                }
                let mut flipped = bytes.clone();
                flipped[cut] ^= 0x5a;
                std::fs::write(&p, &flipped).unwrap();
                if let Ok(f) = AvroFile::open(&p, None) {
                    let _ = f.count();
                }
            }
        }
    }
}
