//! Reading Avro object container files: the header and block framing read here with every
//! length bounded by the file, each block decompressed and its records decoded (and resolved to
//! the reader schema) with the `apache-avro` crate.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::schema::ResolvedSchema;
use apache_avro::types::Value;
use apache_avro::{Codec, Schema};

use super::walk::{Walk, check_snappy_length, read_long};
use crate::error::{Error, Result};

/// Anything the container reader can read from.
trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// How many records are decoded from a block at a time.
const RECORDS_PER_DECODE: u64 = 256;

/// Values that take no bytes (`null`, a record of such fields, a zero-size `fixed`) a block may
/// hold in arrays beyond one per byte of the block: their count is the only thing that sizes
/// what decoding them allocates, and no byte of the input backs it.
pub(super) const EMPTY_VALUES_PER_BLOCK: u64 = 1 << 16;

/// The records of one Avro object container file, in file order, each resolved to the reader
/// schema when one is given (projection, promotions such as `int` to `long`, the reader's
/// aliases of types and fields, defaults of new fields), as Avro's schema resolution rules say.
///
/// Every codec of the Avro specification that the `apache-avro` crate implements is read:
/// `null`, `deflate`, `snappy`, `zstandard`, `bzip2` and `xz`. A compressed block may inflate
/// to 16 MiB, or to 1,100 times its size when that is more (deflate's greatest ratio is 1,032):
/// a block that would grow further is an error before the memory is taken, so a small file
/// cannot stand for gigabytes. Every length in the file (header
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
    /// The writer schema as resolution to the reader schema reads it (its aliases applied,
    /// [`aliases`](super::aliases)), when there is a reader schema.
    resolving: Option<Schema>,
    codec: Codec,
    marker: [u8; 16],
    block: Vec<u8>,
    block_pos: usize,
    block_left: u64,
    /// The number of records the current block's header declares.
    block_count: u64,
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
        let (stdin, path) = crate::input_name(path.as_ref());
        let located = |e: Error| e.with_path(path);
        let mut source: Box<dyn Source> = if stdin {
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
        if schema_json.len() > MAX_SCHEMA_BYTES {
            return Err(located(Error::new(format!(
                "the writer schema is {} bytes of JSON, more than the {} MiB read (parsed, a \
                 schema takes some 30 times its text)",
                schema_json.len(),
                MAX_SCHEMA_BYTES >> 20
            ))));
        }
        let writer = std::str::from_utf8(schema_json)
            .map_err(|_| Error::new("the writer schema is not UTF-8"))
            .and_then(|text| {
                Schema::parse_str(text)
                    .map_err(|e| Error::new(format!("invalid writer schema: {}", with_causes(&e))))
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
        let resolving = match reader_schema {
            Some(rs) if &writer != rs => {
                // A copy the crate cannot parse back (a schema it writes otherwise than it
                // reads) leaves resolution as the crate does it, without aliases.
                let resolving = super::aliases::resolving_writer(&writer, rs)
                    .unwrap_or_else(|_| writer.clone());
                if let Err(e) =
                    apache_avro::schema_compatibility::SchemaCompatibility::can_read(&resolving, rs)
                {
                    return Err(located(Error::new(format!(
                        "the reader schema cannot read this file's writer schema: {e}"
                    ))));
                }
                Some(resolving)
            }
            _ => None,
        };
        Ok(AvroFile {
            path: path.to_path_buf(),
            source,
            end,
            writer,
            reader_schema,
            resolving,
            codec,
            marker,
            block: Vec::new(),
            block_pos: 0,
            block_left: 0,
            block_count: 0,
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

    /// The file's path as given (`<stdin>` for `-`, as errors name it).
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
            let block = self.block_index.map_or(0, |i| i + 1);
            self.block_index = Some(block);
            self.block_start = start;
            let at = |e: Error| {
                Error::new(format!(
                    "{} (block {block}, at byte {start} of the file)",
                    e.message()
                ))
            };
            let count = u64::try_from(count).map_err(|_| {
                at(Error::new(format!(
                    "malformed Avro file: negative block record count {count}"
                )))
            })?;
            let size = need_long(&mut self.source, "block size").map_err(at)?;
            let size = bounded(&mut self.source, size, "data block", self.end).map_err(at)?;
            self.block.clear();
            self.block.resize(size, 0);
            self.source.read_exact(&mut self.block)?;
            let mut marker = [0u8; 16];
            bounded(&mut self.source, 16, "block sync marker", self.end).map_err(at)?;
            self.source.read_exact(&mut marker)?;
            self.read = self.source.stream_position().unwrap_or(self.read);
            if marker != self.marker {
                return Err(at(Error::new(
                    "corrupted Avro file: a block's sync marker differs from the header's",
                )));
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
            super::inflate::decompress(self.codec, &mut self.block).map_err(|e| {
                Error::new(format!(
                    "{} (block {}, at byte {start} of the file)",
                    e.message(),
                    self.block_index.unwrap_or(0)
                ))
            })?;
            self.block_pos = 0;
            self.block_left = count;
            self.block_count = count;
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
        let decoding = self.resolving.as_ref().unwrap_or(&self.writer);
        let decoding_names = ResolvedSchema::try_from(decoding)
            .map_err(|e| Error::new(format!("cannot resolve the writer schema: {e}")))?;
        let reader = GenericDatumReader::builder(decoding)
            .resolved_writer_schemata(decoding_names)
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
                // The block's header may declare more records than its data holds.
                let in_block = self.block_count - self.block_left;
                Error::new(format!(
                    "malformed Avro data in block {} (at byte {} of the file), its record {} of \
                     the {} its header declares: {e}",
                    self.block_index.unwrap_or(0),
                    self.block_start,
                    in_block,
                    self.block_count
                ))
                .with_record(index)
            })?;
            self.empty_left = empty_left;
            let mut datum = self.block.get(start..end).unwrap_or(&[]);
            // Where the record lies: a block's data may be compressed, so its place in the
            // block's decompressed data.
            let place = format!(
                "in block {} (at byte {} of the file), at byte {start} of the block's data",
                self.block_index.unwrap_or(0),
                self.block_start
            );
            let v = reader.read_value(&mut datum).map_err(|e| {
                Error::new(format!("cannot decode the record {place}: {e}")).with_record(index)
            })?;
            if !datum.is_empty() {
                return Err(Error::new(format!(
                    "cannot decode the record {place}: {} of its {} bytes were left unread",
                    datum.len(),
                    end - start
                ))
                .with_record(index));
            }
            self.buffered.push_back(v);
            self.block_left -= 1;
            self.block_pos = end;
        }
        let left = self.block.len().saturating_sub(self.block_pos);
        if self.block_left == 0 && left > 0 {
            return Err(Error::new(format!(
                "malformed Avro file: block {} (at byte {} of the file) holds {left} bytes \
                 after the records its count says it holds",
                self.block_index.unwrap_or(0),
                self.block_start
            ))
            .with_record(self.next_index + self.buffered.len() as u64));
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

/// An error's message followed by those of its causes (`Failed to parse schema from JSON:
/// recursion limit exceeded at line 1 column 2049`).
pub(crate) fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
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

/// The longest writer schema read: real schemas are kilobytes, and a parsed one takes some 30
/// times its JSON, so that a longer one would only exhaust memory.
const MAX_SCHEMA_BYTES: usize = 16 << 20;

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
        let at = r.stream_position()?;
        let count = need_long(r, "header map block")?;
        if count == 0 {
            break;
        }
        if count < 0 {
            need_long(r, "header map block size")?;
        }
        // An entry takes at least two bytes (its two lengths).
        let left = end.saturating_sub(r.stream_position()?);
        if count.unsigned_abs() > left / 2 {
            return Err(Error::new(format!(
                "malformed Avro file: the header's metadata block at byte {at} declares {} \
                 entries, more than the {left} bytes after it can hold",
                count.unsigned_abs()
            )));
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

    /// The error reading `bytes` as the Avro file `name` gives.
    fn read_error(name: &str, bytes: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        crate::avro::read_all(&[path], None)
            .unwrap_err()
            .to_string()
    }

    /// A zigzag varint, as Avro writes a `long`.
    fn long(n: i64) -> Vec<u8> {
        let mut z = ((n << 1) ^ (n >> 63)).cast_unsigned();
        let mut out = Vec::new();
        loop {
            let byte = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    /// A header's metadata count past what its bytes can hold, and a writer schema that is
    /// not JSON, say so (and why), with where.
    #[test]
    fn header_errors_say_where_and_why() {
        let mut bytes = b"Obj\x01".to_vec();
        bytes.extend(long(1 << 40));
        bytes.extend([0; 40]);
        let e = read_error("count.avro", &bytes);
        assert!(
            e.contains(
                "metadata block at byte 4 declares 1099511627776 entries, more than the \
                 40 bytes after it can hold"
            ),
            "{e}"
        );
        let mut bytes = b"Obj\x01".to_vec();
        bytes.extend(long(1));
        for text in [&b"avro.schema"[..], b"{\"type\": "] {
            bytes.extend(long(i64::try_from(text.len()).unwrap()));
            bytes.extend(text);
        }
        bytes.extend(long(0));
        bytes.extend([7; 16]);
        let e = read_error("schema.avro", &bytes);
        assert!(
            e.contains(
                "invalid writer schema: Failed to parse schema from JSON: EOF while parsing"
            ),
            "{e}"
        );
    }

    /// A reader schema's aliases name the writer's record and field, and the writer's `date`
    /// reads as the reader's `long` (Avro's resolution rules; fastavro reads both).
    #[test]
    fn a_reader_schema_applies_its_aliases_and_promotes_annotated_ints() {
        let writer = Schema::parse_str(
            r#"{"type": "record", "name": "P", "namespace": "ns.a", "fields": [
                {"name": "s", "type": "string"},
                {"name": "d", "type": {"type": "int", "logicalType": "date"}}]}"#,
        )
        .unwrap();
        let mut w = apache_avro::Writer::with_codec(&writer, Vec::new(), Codec::Null).unwrap();
        let mut r = apache_avro::types::Record::new(&writer).unwrap();
        r.put("s", "x");
        r.put("d", Value::Date(18262));
        w.append_value(r).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("al.avro");
        std::fs::write(&path, w.into_inner().unwrap()).unwrap();
        let reader = Schema::parse_str(
            r#"{"type": "record", "name": "Q", "namespace": "ns.a", "aliases": ["P"],
                "fields": [
                {"name": "s2", "aliases": ["s"], "type": "string"},
                {"name": "d", "type": "long"}]}"#,
        )
        .unwrap();
        let values = crate::avro::read_all(std::slice::from_ref(&path), Some(&reader)).unwrap();
        assert_eq!(
            values,
            [Value::Record(vec![
                ("s2".into(), Value::String("x".into())),
                ("d".into(), Value::Long(18262)),
            ])]
        );
        // Matched by unqualified name in another namespace, with a field alias.
        let other = Schema::parse_str(
            r#"{"type": "record", "name": "P", "namespace": "other", "fields": [
                {"name": "t", "aliases": ["s"], "type": "string"}]}"#,
        )
        .unwrap();
        let values = crate::avro::read_all(std::slice::from_ref(&path), Some(&other)).unwrap();
        assert_eq!(
            values,
            [Value::Record(vec![("t".into(), Value::String("x".into()))])]
        );
        // A reader schema saved with a byte-order mark.
        assert_eq!(
            crate::avro::parse_schema("\u{feff}\"long\"").unwrap(),
            Schema::Long
        );
        // A date read as a date stays one.
        let values = crate::avro::read_all(std::slice::from_ref(&path), Some(&writer)).unwrap();
        assert!(matches!(&values[0], Value::Record(f) if f[1].1 == Value::Date(18262)));
        // Without the alias, the names differ: refused, saying so.
        let unaliased = Schema::parse_str(
            r#"{"type": "record", "name": "Q", "namespace": "ns.a", "fields": [
                {"name": "s", "type": "string"}]}"#,
        )
        .unwrap();
        let e = crate::avro::read_all(&[path], Some(&unaliased))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the reader schema cannot read this file's writer schema"),
            "{e}"
        );
    }

    /// A block whose count says fewer records than it holds: the bytes after them are an
    /// error, not left unread.
    #[test]
    fn bytes_after_a_blocks_records_are_an_error() {
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]}"#,
        )
        .unwrap();
        let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), Codec::Null).unwrap();
        for a in [1i64, 2] {
            let mut r = apache_avro::types::Record::new(&schema).unwrap();
            r.put("a", a);
            w.append_value(r).unwrap();
        }
        let mut file = w.into_inner().unwrap();
        // The block follows the header, which ends with the sync marker: its count of 2
        // (zigzag 4) said as 1 (zigzag 2).
        let marker = file[file.len() - 16..].to_vec();
        let block = file.windows(16).position(|w| w == marker).unwrap() + 16;
        assert_eq!(file[block], 4);
        file[block] = 2;
        let e = read_error("trailing.avro", &file);
        assert!(
            e.contains("holds 1 bytes after the records its count says"),
            "{e}"
        );
    }

    /// A damaged sync marker, bytes after the last block and an enum index past the symbols
    /// are errors naming the block and its byte offset in the file.
    #[test]
    fn block_errors_name_the_block_and_its_offset() {
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "r", "fields": [
                {"name": "e", "type": {"type": "enum", "name": "ab", "symbols": ["a", "b"]}}]}"#,
        )
        .unwrap();
        let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), Codec::Null).unwrap();
        let mut r = apache_avro::types::Record::new(&schema).unwrap();
        r.put("e", Value::Enum(1, "b".into()));
        w.append_value(r).unwrap();
        let file = w.into_inner().unwrap();
        let marker = file[file.len() - 16..].to_vec();
        let block = file.windows(16).position(|w| w == marker).unwrap() + 16;
        // count 1 (zigzag 2), size 1 (zigzag 2), the enum index 1 (zigzag 2), the marker.
        assert_eq!(file[block..block + 3], [2, 2, 2]);
        let mut bad_marker = file.clone();
        *bad_marker.last_mut().unwrap() ^= 1;
        let e = read_error("marker.avro", &bad_marker);
        assert!(
            e.contains(&format!(
                "sync marker differs from the header's (block 0, at byte {block} of the file)"
            )),
            "{e}"
        );
        let mut trailing = file.clone();
        trailing.push(2);
        let e = read_error("trailing.avro", &trailing);
        assert!(
            e.contains(&format!(
                "no block size (block 1, at byte {} of the file)",
                file.len()
            )),
            "{e}"
        );
        // A header that declares more records than the block holds: the record past the
        // data is named with the count.
        let mut count = file.clone();
        count[block] = 6;
        let e = read_error("count.avro", &count);
        assert!(
            e.contains(&format!(
                "record 1: malformed Avro data in block 0 (at byte {block} of the file), its \
                 record 1 of the 3 its header declares: the block ends before"
            )),
            "{e}"
        );
        let mut index = file;
        index[block + 2] = 10;
        let e = read_error("enum.avro", &index);
        assert!(
            e.contains(&format!("record 0: cannot decode the record in block 0 (at byte {block} of the file), at byte 0 of the block's data")),
            "{e}"
        );
    }

    /// A writer schema of more than 16 MiB is an error naming its size, not gigabytes spent
    /// parsing it.
    #[test]
    fn a_writer_schema_past_16_mib_is_an_error() {
        let fields: Vec<String> = (0..700_000)
            .map(|i| format!(r#"{{"name": "field_{i:07}", "type": "long"}}"#))
            .collect();
        let schema = format!(
            r#"{{"type": "record", "name": "r", "fields": [{}]}}"#,
            fields.join(", ")
        );
        assert!(schema.len() > MAX_SCHEMA_BYTES);
        // The header: magic, one metadata entry (zigzag varints), no more, the sync marker.
        let zigzag = |n: i64, out: &mut Vec<u8>| {
            let mut v = ((n << 1) ^ (n >> 63)).cast_unsigned();
            while v >= 0x80 {
                out.push((v as u8) | 0x80);
                v >>= 7;
            }
            out.push(v as u8);
        };
        let mut file = b"Obj\x01".to_vec();
        zigzag(1, &mut file);
        zigzag(11, &mut file);
        file.extend_from_slice(b"avro.schema");
        zigzag(i64::try_from(schema.len()).unwrap(), &mut file);
        file.extend_from_slice(schema.as_bytes());
        zigzag(0, &mut file);
        file.extend_from_slice(&[7; 16]);
        let e = read_error("wide.avro", &file);
        assert!(e.contains("wide.avro"), "{e}");
        assert!(e.contains("more than the 16 MiB read"), "{e}");
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
