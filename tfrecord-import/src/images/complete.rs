//! Whether an image file is whole: a walk over its structure to its end marker, without
//! decoding any pixel.

use super::header::{ImageFormat, ImageInfo, crc32};

/// Checks that an image file is not cut short, for the format and size `info` (from
/// [`read_header`](super::header::read_header)) gives.
///
/// A file cut short keeps a good header, so [`read_header`](super::header::read_header) alone would
/// make a record of it that `tf.io.decode_image` then refuses. TensorFlow 2.21's decoders
/// refuse every file this refuses, and decode the bytes after the end this allows:
///
/// - JPEG: the segments are followed by their lengths, and the scan data to its next marker
///   (skipping stuffed `FF 00`, restart markers and fill bytes), up to the end-of-image marker
///   `FF D9`; bytes after it are allowed.
/// - PNG: the chunks are followed by their lengths up to a whole `IEND` chunk, its CRC
///   included; bytes after it are allowed. The CRC of every critical chunk (`IHDR`, `PLTE`,
///   `IDAT`, `IEND`) is checked, as libpng checks it (it passes over an ancillary chunk with
///   a bad CRC, and so does this), and an image without `IDAT` chunks is refused.
/// - WebP: the file holds at least the 8 + RIFF size bytes its header gives.
/// - BMP: the file is exactly the pixel-data offset plus |height| rows of depth x width bytes,
///   each padded to 4: TensorFlow refuses a BMP with bytes missing and one with bytes added.
/// - GIF: nothing more to check. [`read_header`](super::header::read_header) already walks
///   every block and refuses a GIF cut before its first image is whole; TensorFlow decodes
///   one cut after that (the images that are whole), trailer or not.
///
/// The walk reads each byte at most once, and only the scan data of a JPEG byte by byte.
/// A second JPEG start-of-image marker (`FF D8`) is refused, as libjpeg refuses it: a JPEG cut
/// short with another one after it does not pass for whole.
///
/// # Errors
/// A message that starts `truncated JPEG`, `truncated PNG`, ... and says where the file ends,
/// or, for a BMP longer than its header gives, by how much.
///
/// ```
/// use tfrecord_import::images::{check_complete, read_header};
///
/// // A PNG of one pixel whose IDAT chunk is cut short.
/// let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0\x3a\x7e\x9b\x55".to_vec();
/// png.extend(b"\0\0\0\x20IDAT\x78\x9c");
/// let info = read_header(&png).unwrap();
/// let e = check_complete(&png, &info).unwrap_err();
/// assert!(e.starts_with("truncated PNG: the file ends inside its IDAT chunk"), "{e}");
/// ```
pub fn check_complete(bytes: &[u8], info: &ImageInfo) -> Result<(), String> {
    match info.format {
        ImageFormat::Jpeg => jpeg(bytes),
        ImageFormat::Png => png(bytes),
        ImageFormat::Webp => webp(bytes),
        ImageFormat::Bmp => bmp(bytes, info),
        ImageFormat::Gif => Ok(()),
    }
}

fn be16(b: &[u8], at: usize) -> Option<usize> {
    Some(usize::from(u16::from_be_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn be32(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?)).ok()
}

fn le32(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from(u32::from_le_bytes(
        b.get(at..at + 4)?.try_into().ok()?,
    )))
}

fn jpeg(b: &[u8]) -> Result<(), String> {
    let cut = |where_: &str| {
        format!(
            "truncated JPEG: the file ends {where_}, before the end-of-image marker (FF D9), \
             after {} bytes",
            b.len()
        )
    };
    let mut at = 2usize;
    loop {
        // The next marker: 0xFF, any fill 0xFF bytes, then a code other than 0x00 (libjpeg
        // skips stray bytes before a marker with a warning, and so does this).
        let Some(ff) = b.get(at..).and_then(|r| r.iter().position(|&x| x == 0xff)) else {
            return Err(cut("between segments"));
        };
        at += ff;
        while b.get(at) == Some(&0xff) {
            at += 1;
        }
        let Some(&code) = b.get(at) else {
            return Err(cut("inside a marker"));
        };
        at += 1;
        match code {
            0xd9 => return Ok(()),
            0x00 | 0x01 | 0xd0..=0xd7 => continue,
            0xd8 => {
                return Err(format!(
                    "malformed JPEG: a second start-of-image marker (FF D8) at offset {}, before \
                     the end-of-image marker (FF D9): the file is cut short and another JPEG \
                     follows",
                    at - 2
                ));
            }
            _ => {}
        }
        let Some(len) = be16(b, at) else {
            return Err(cut("inside a segment header"));
        };
        let end = at + len;
        if end > b.len() {
            return Err(cut(if code == 0xda {
                "inside a scan header"
            } else {
                "inside a segment"
            }));
        }
        at = end.max(at + 2);
        if code == 0xda {
            // Entropy-coded data: FF 00 is a stuffed byte, FF D0..D7 a restart marker, FF FF
            // fill; any other FF xx is the next marker.
            loop {
                let Some(ff) = b.get(at..).and_then(|r| r.iter().position(|&x| x == 0xff)) else {
                    return Err(cut("inside its scan data"));
                };
                at += ff;
                match b.get(at + 1) {
                    None => return Err(cut("inside its scan data")),
                    Some(0x00 | 0xd0..=0xd7) => at += 2,
                    Some(0xff) => at += 1,
                    Some(_) => break,
                }
            }
        }
    }
}

fn png(b: &[u8]) -> Result<(), String> {
    let mut at = 8usize;
    let mut image_data = false;
    loop {
        let (Some(len), Some(kind)) = (be32(b, at), b.get(at + 4..at + 8)) else {
            let where_ = if at >= b.len() {
                "after its last chunk".to_string()
            } else {
                "inside a chunk header".to_string()
            };
            return Err(format!(
                "truncated PNG: the file ends {where_}, before the IEND chunk, after {} bytes",
                b.len()
            ));
        };
        let end = at.checked_add(12).and_then(|x| x.checked_add(len));
        if end.is_none_or(|end| end > b.len()) {
            let name: String = kind
                .iter()
                .map(|&c| {
                    if c.is_ascii_alphabetic() {
                        char::from(c)
                    } else {
                        '?'
                    }
                })
                .collect();
            return Err(format!(
                "truncated PNG: the file ends inside its {name} chunk (of {len} bytes at \
                 offset {at}), before the IEND chunk, after {} bytes",
                b.len()
            ));
        }
        let end = end.unwrap_or(b.len());
        // A critical chunk's type starts with a capital letter.
        if kind[0].is_ascii_uppercase() {
            let stored = be32(b, end - 4).unwrap_or(0);
            let computed = crc32(&b[at + 4..end - 4]);
            if u32::try_from(stored).ok() != Some(computed) {
                return Err(format!(
                    "malformed PNG: the {} chunk at offset {at} has the CRC {stored:08x}, its \
                     bytes give {computed:08x} (damaged data, which tf.io.decode_image does not \
                     decode)",
                    String::from_utf8_lossy(kind)
                ));
            }
        }
        match kind {
            b"IDAT" => image_data = true,
            b"IEND" if image_data => return Ok(()),
            b"IEND" => {
                return Err(
                    "malformed PNG: no IDAT chunk before IEND (no image data, which \
                     tf.io.decode_image does not decode)"
                        .into(),
                );
            }
            _ => {}
        }
        at = end;
    }
}

fn webp(b: &[u8]) -> Result<(), String> {
    let riff = le32(b, 4).unwrap_or(0);
    let want = riff + 8;
    let have = b.len() as u64;
    if have < want {
        return Err(format!(
            "truncated WebP: the RIFF header gives {want} bytes, the file has {have}"
        ));
    }
    Ok(())
}

fn bmp(b: &[u8], info: &ImageInfo) -> Result<(), String> {
    // TensorFlow's rule: the size is the pixel-data offset plus |height| rows of
    // depth * width bytes, each rounded up to 4.
    let offset = le32(b, 10).unwrap_or(0);
    let row = (u64::from(info.depth) * u64::from(info.width)).div_ceil(4) * 4;
    let want = row
        .saturating_mul(u64::from(info.height))
        .saturating_add(offset);
    let have = b.len() as u64;
    if have < want {
        Err(format!(
            "truncated BMP: the header gives {want} bytes (pixel data at offset {offset}, {} \
             rows of {row} bytes), the file has {have}",
            info.height
        ))
    } else if have > want {
        Err(format!(
            "a BMP of {have} bytes, {} more than its header gives ({want}: pixel data at offset \
             {offset}, {} rows of {row} bytes); tf.io.decode_image decodes only a BMP of \
             exactly that size",
            have - want,
            info.height
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::images::header::tests::png_chunk as chunk;
    use crate::images::read_header;

    fn check(b: &[u8]) -> Result<(), String> {
        check_complete(b, &read_header(b).map_err(|e| format!("header: {e}"))?)
    }

    /// A whole baseline JPEG of `n` components, 16 x 8, every block zero: an SOF0, a
    /// one-code Huffman table for each class, a scan of 2 bits a block (all zero), EOI.
    fn tiny_jpeg(n: u8) -> Vec<u8> {
        let seg = |code: u8, body: &[u8]| {
            let mut s = vec![0xff, code];
            s.extend(u16::try_from(body.len() + 2).unwrap().to_be_bytes());
            s.extend(body);
            s
        };
        let mut b = vec![0xff, 0xd8];
        b.extend(seg(0xe1, b"Exif\0\0\xff\xd9 thumbnail-like bytes"));
        let mut dqt = vec![0];
        dqt.extend([1; 64]);
        b.extend(seg(0xdb, &dqt));
        let mut sof = vec![8, 0, 8, 0, 16, n];
        for c in 1..=n {
            sof.extend([c, 0x11, 0]);
        }
        b.extend(seg(0xc0, &sof));
        for class in [0x00, 0x10] {
            let mut dht = vec![class, 1];
            dht.extend([0; 15]);
            dht.push(0);
            b.extend(seg(0xc4, &dht));
        }
        let mut sos = vec![n];
        for c in 1..=n {
            sos.extend([c, 0]);
        }
        sos.extend([0, 63, 0]);
        b.extend(seg(0xda, &sos));
        // 2 blocks a component, 2 bits a block, padded with ones.
        let bits = 4 * usize::from(n);
        let mut data = vec![0u8; bits.div_ceil(8)];
        let pad = data.len() * 8 - bits;
        if pad > 0 {
            *data.last_mut().unwrap() = (1u8 << pad) - 1;
        }
        b.extend(data);
        b.extend([0xff, 0xd9]);
        b
    }

    #[test]
    fn jpeg_needs_its_end_marker() {
        let j = tiny_jpeg(3);
        assert_eq!(check(&j), Ok(()));
        // Bytes after the end marker are fine, as for TensorFlow.
        let mut more = j.clone();
        more.extend(b"trailing\0\0");
        assert_eq!(check(&more), Ok(()));
        // Restart markers, stuffed bytes and fill bytes in scan data.
        let mut stuffed = j[..j.len() - 3].to_vec();
        stuffed.extend([0xff, 0x00, 0xff, 0xd3, 0x00, 0xff, 0xff, 0xd9]);
        assert_eq!(check(&stuffed), Ok(()));
        // An FF D9 inside a skipped segment (the APP1 above) is not the end.
        let cut_scan = &j[..j.len() - 3];
        let e = check(cut_scan).unwrap_err();
        assert!(
            e.starts_with("truncated JPEG") && e.contains("inside its scan data"),
            "{e}"
        );
        for n in j.len() - 2..j.len() {
            let e = check(&j[..n]).unwrap_err();
            assert!(e.starts_with("truncated JPEG"), "{n}: {e}");
        }
        // Cut anywhere after the frame header: truncated, never a panic.
        let sof = j.windows(2).position(|w| w == [0xff, 0xc0]).unwrap();
        for n in sof + 19..j.len() {
            let e = check(&j[..n]).unwrap_err();
            assert!(e.starts_with("truncated JPEG"), "{n}: {e}");
        }
        // Cut inside its scan data with another JPEG after it: the second start of image is
        // refused (TensorFlow 2.21: "jpeg::Uncompress failed"), not its end marker taken.
        let mut two = j[..j.len() - 3].to_vec();
        two.extend(&j);
        let e = check(&two).unwrap_err();
        assert!(e.contains("a second start-of-image marker (FF D8)"), "{e}");
        // Stray bytes between segments (after the frame header) are skipped, as libjpeg does.
        let mut stray = j[..sof + 19].to_vec();
        stray.extend([0x00, 0x12]);
        stray.extend(&j[sof + 19..]);
        assert_eq!(check(&stray), Ok(()));
    }

    #[test]
    fn png_needs_a_whole_iend_chunk() {
        let mut p = b"\x89PNG\r\n\x1a\n".to_vec();
        p.extend(chunk(b"IHDR", &[0, 0, 0, 2, 0, 0, 0, 1, 8, 0, 0, 0, 0]));
        p.extend(chunk(b"IDAT", &[1; 20]));
        p.extend(chunk(b"IEND", &[]));
        assert_eq!(check(&p), Ok(()));
        let mut more = p.clone();
        more.extend(b"junk");
        assert_eq!(check(&more), Ok(()));
        let e = check(&p[..p.len() - 12]).unwrap_err();
        assert!(
            e.contains("truncated PNG: the file ends after its last chunk, before the IEND"),
            "{e}"
        );
        let e = check(&p[..p.len() - 20]).unwrap_err();
        assert!(
            e.contains("truncated PNG: the file ends inside its IDAT chunk"),
            "{e}"
        );
        for n in 33..p.len() {
            let e = check(&p[..n]).unwrap_err();
            assert!(e.starts_with("truncated PNG"), "{n}: {e}");
        }
        // A critical chunk whose CRC does not match its bytes (TensorFlow 2.21: "Invalid PNG
        // data" for IDAT and IEND, "Failed to initialize decoder" for PLTE); an ancillary
        // chunk's is passed over, as libpng does (TensorFlow decoded such a file).
        for kind in [&b"IDAT"[..], b"IEND", b"PLTE"] {
            let mut bad = p[..33].to_vec();
            for (k, data) in [
                (&b"PLTE"[..], &[0u8; 3][..]),
                (b"IDAT", &[1; 20]),
                (b"IEND", &[]),
            ] {
                let mut c = chunk(k, data);
                if k == kind {
                    *c.last_mut().unwrap() ^= 1;
                }
                bad.extend(c);
            }
            let e = check(&bad).unwrap_err();
            let name = String::from_utf8_lossy(kind);
            assert!(e.contains(&format!("the {name} chunk at offset")), "{e}");
        }
        let mut ancillary = p[..33].to_vec();
        let mut text = chunk(b"tEXt", b"k\0v");
        *text.last_mut().unwrap() ^= 1;
        ancillary.extend(text);
        ancillary.extend(&p[33..]);
        assert_eq!(check(&ancillary), Ok(()));
        // No image data (TensorFlow 2.21: "Failed to initialize decoder").
        let mut empty = p[..33].to_vec();
        empty.extend(chunk(b"IEND", &[]));
        let e = check(&empty).unwrap_err();
        assert!(e.contains("no IDAT chunk before IEND"), "{e}");
        // A chunk length beyond the file (4 GiB) is a cut too, not an overflow.
        let mut huge = p[..33].to_vec();
        huge.extend([0xff, 0xff, 0xff, 0xff]);
        huge.extend(b"IDAT");
        assert!(check(&huge).unwrap_err().contains("inside its IDAT chunk"));
    }

    #[test]
    fn webp_and_bmp_sizes() {
        let mut w = b"RIFF".to_vec();
        w.extend(20u32.to_le_bytes());
        w.extend(b"WEBPVP8L");
        w.extend(8u32.to_le_bytes());
        w.extend([0x2f, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(w.len(), 28);
        assert_eq!(check(&w), Ok(()));
        let mut more = w.clone();
        more.push(0);
        assert_eq!(check(&more), Ok(()));
        let e = check(&w[..27]).unwrap_err();
        assert!(e.contains("truncated WebP") && e.contains("27"), "{e}");

        // 3 x 2, 24 bits: rows of 9 bytes padded to 12, pixel data at 54.
        let mut b = b"BM".to_vec();
        b.extend(0u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend(54u32.to_le_bytes());
        b.extend(40u32.to_le_bytes());
        b.extend(3i32.to_le_bytes());
        b.extend(2i32.to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend(24u16.to_le_bytes());
        b.resize(54 + 24, 0);
        assert_eq!(check(&b), Ok(()));
        let e = check(&b[..b.len() - 1]).unwrap_err();
        assert!(e.starts_with("truncated BMP"), "{e}");
        b.extend([0; 2]);
        let e = check(&b).unwrap_err();
        assert!(e.contains("2 more than its header gives (78"), "{e}");
    }
}
