//! Decompressing one Avro data block with its size bounded before the memory is taken: a few
//! hundred bytes of bzip2, xz, zstd or deflate can stand for gigabytes, so the output may grow
//! only to [`block_limit`] of the compressed size (and to 1 GiB at most), and a block that would
//! grow past it is an error naming the limit.

use std::io::Read;

use apache_avro::Codec;

use crate::error::{Error, Result};

/// The most a block's data may grow to whatever its compressed size: 16 MiB.
pub(super) const BLOCK_FLOOR: usize = 16 << 20;

/// How many times its compressed size a larger block may grow to: a little above deflate's
/// greatest ratio (1032 to 1), which no real Avro block comes near with any codec.
pub(super) const BLOCK_RATIO: usize = 1100;

/// The most any block may decompress to: 1 GiB, as a record may be at most 1 GiB long by
/// default (Avro writers end a block every 16 KiB to a few MiB).
pub(super) const BLOCK_MAX: usize = 1 << 30;

/// The most a block of `compressed` bytes may decompress to: the larger of [`BLOCK_FLOOR`] and
/// [`BLOCK_RATIO`] times its size, and no more than [`BLOCK_MAX`].
pub(super) fn block_limit(compressed: usize) -> usize {
    BLOCK_FLOOR
        .max(compressed.saturating_mul(BLOCK_RATIO))
        .min(BLOCK_MAX)
}

/// Decompresses `block` in place with `codec`, its output bounded by [`block_limit`].
///
/// # Errors
/// Malformed compressed data, or data that would grow past the limit.
pub(super) fn decompress(codec: Codec, block: &mut Vec<u8>) -> Result<()> {
    let compressed = block.len();
    let limit = block_limit(compressed);
    let too_large = || {
        Error::new(format!(
            "a block of {} compressed bytes decompresses to more than {limit} bytes (blocks may \
             grow to {BLOCK_RATIO} times their size, or to {BLOCK_FLOOR} bytes, and to \
             {BLOCK_MAX} bytes at most): a decompression bomb, or a file this reader does not \
             take",
            compressed
        ))
    };
    let bad = |e: &dyn std::fmt::Display| Error::new(format!("cannot decompress a block: {e}"));
    let out = match codec {
        Codec::Null => return Ok(()),
        Codec::Deflate(_) => miniz_oxide::inflate::decompress_to_vec_with_limit(block, limit)
            .map_err(|e| {
                if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput {
                    too_large()
                } else {
                    bad(&format!("{:?}", e.status))
                }
            })?,
        Codec::Zstandard(_) => {
            let decoder = zstd::stream::read::Decoder::new(&block[..]).map_err(|e| bad(&e))?;
            bounded(decoder, limit)
                .map_err(|e| bad(&e))?
                .ok_or_else(too_large)?
        }
        Codec::Bzip2(_) => bounded(bzip2::read::BzDecoder::new(&block[..]), limit)
            .map_err(|e| bad(&e))?
            .ok_or_else(too_large)?,
        Codec::Xz(_) => bounded(liblzma::read::XzDecoder::new(&block[..]), limit)
            .map_err(|e| bad(&e))?
            .ok_or_else(too_large)?,
        // Snappy declares its size in the block, checked against the block's bytes before this
        // runs; apache-avro checks its CRC.
        other => {
            other.decompress(block).map_err(|e| bad(&e))?;
            if block.len() > limit {
                return Err(too_large());
            }
            return Ok(());
        }
    };
    if out.len() > limit {
        return Err(too_large());
    }
    *block = out;
    Ok(())
}

/// Reads `r` to its end, at most `limit` bytes, then one byte more to see whether there was
/// more: `None` then. The buffer never grows past what is allowed.
fn bounded(mut r: impl Read, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    r.by_ref()
        .take(u64::try_from(limit).unwrap_or(u64::MAX))
        .read_to_end(&mut out)?;
    let mut probe = [0u8; 1];
    Ok((r.read(&mut probe)? == 0).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::types::Record;
    use apache_avro::{Schema, Writer};

    /// A file whose one block holds a 20 MiB string of zeros: as bzip2, zstd or xz (a few
    /// hundred bytes) it is refused, naming the limit, before the memory is taken; as deflate
    /// (about 20 KB, within deflate's ratio) it reads.
    #[test]
    fn bombs_are_refused_before_they_grow() {
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}"#,
        )
        .unwrap();
        for (codec, refused) in [
            (Codec::Bzip2(Default::default()), true),
            (Codec::Zstandard(Default::default()), true),
            (Codec::Xz(Default::default()), true),
            (Codec::Deflate(Default::default()), false),
        ] {
            let mut w = Writer::with_codec(&schema, Vec::new(), codec).unwrap();
            let mut r = Record::new(&schema).unwrap();
            r.put("s", "\0".repeat(20 << 20));
            w.append_value(r).unwrap();
            let file = w.into_inner().unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("bomb.avro");
            std::fs::write(&path, &file).unwrap();
            match crate::avro::read_all(&[path], None) {
                Err(e) => {
                    let e = e.to_string();
                    assert!(refused, "{codec:?}: refused: {e}");
                    assert!(e.contains("decompresses to more than"), "{codec:?}: {e}");
                }
                Ok(records) => assert!(
                    !refused,
                    "{codec:?}: a {}-byte file read to {} records",
                    file.len(),
                    records.len()
                ),
            }
        }
    }

    /// However small its compressed size, a block may not grow past 1 GiB.
    #[test]
    fn blocks_grow_to_1_gib_at_most() {
        assert_eq!(block_limit(1000), BLOCK_FLOOR);
        assert_eq!(block_limit(100_000), 100_000 * BLOCK_RATIO);
        assert_eq!(block_limit(4 << 20), BLOCK_MAX);
    }

    #[test]
    fn ordinary_blocks_decompress() {
        let data = b"tfrecord ".repeat(1000);
        let mut block = miniz_oxide::deflate::compress_to_vec(&data, 6);
        decompress(Codec::Deflate(Default::default()), &mut block).unwrap();
        assert_eq!(block, data);
    }
}
