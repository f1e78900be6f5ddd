//! Image headers: format, width, height and channel count of PNG, JPEG, GIF, BMP and WebP files,
//! read from the first bytes without decoding any pixels.
//!
//! The channel count (`depth`) is the last dimension of what TensorFlow's
//! `tf.io.decode_image(data, expand_animations=False)` returns for the file; the table of
//! colour models is in the [`images`](super) module docs. A header that TensorFlow's decoder
//! refuses is an error here too, rather than a record with a made-up depth.
//!
//! This is a few dozen lines per format rather than a dependency: `imagesize`, the header-only
//! crate made for this, reports width and height but not the channel count, which the records
//! need.

use std::fmt;

/// The container format of an image file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageFormat {
    /// JPEG (JFIF / Exif).
    Jpeg,
    /// PNG.
    Png,
    /// GIF (87a / 89a).
    Gif,
    /// Windows bitmap.
    Bmp,
    /// WebP (lossy, lossless or extended).
    Webp,
}

impl ImageFormat {
    /// The lower-case name stored in `image/format`: `jpeg`, `png`, `gif`, `bmp`, `webp`.
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Png => "png",
            ImageFormat::Gif => "gif",
            ImageFormat::Bmp => "bmp",
            ImageFormat::Webp => "webp",
        }
    }

    /// Whether a file name has an extension of an image format this module reads (`jpg`,
    /// `jpeg`, `png`, `gif`, `bmp`, `webp`, any case).
    pub fn is_image_name(name: &str) -> bool {
        let Some((_, ext)) = name.rsplit_once('.') else {
            return false;
        };
        matches!(
            ext.to_ascii_lowercase().as_str(),
            "jpg" | "jpeg" | "jpe" | "png" | "gif" | "bmp" | "webp"
        )
    }
}

impl fmt::Display for ImageFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an image's header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageInfo {
    /// The format, from the file's signature (not its name).
    pub format: ImageFormat,
    /// Width in pixels (of a GIF, the largest width of its images).
    pub width: u32,
    /// Height in pixels (of a GIF, the largest height of its images).
    pub height: u32,
    /// Channels: the last dimension of `tf.io.decode_image(data, expand_animations=False)`
    /// (a CMYK JPEG is 3, a palette PNG 3, or 4 with a `tRNS` chunk; see the
    /// [module](super) docs).
    pub depth: u32,
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Reads the header of an image file's bytes.
///
/// # Errors
/// A message saying what is wrong: an unknown signature, a truncated or malformed header,
/// a zero dimension, or a header TensorFlow's decoder refuses (see the [module](super) docs).
///
/// ```
/// use tfrecord_import::images::{read_header, ImageFormat};
///
/// // A GIF of a 5 x 5 logical screen, a two-colour global table and one image of 3 x 2.
/// let gif = b"GIF89a\x05\0\x05\0\x80\0\0\0\0\0\xff\xff\xff\
///             \x2c\0\0\0\0\x03\0\x02\0\0\x02\x05\x04\x41\x10\x04\x51\0\x3b";
/// let info = read_header(gif).unwrap();
/// assert_eq!((info.format, info.width, info.height, info.depth), (ImageFormat::Gif, 3, 2, 3));
/// assert!(read_header(b"hello").is_err());
/// ```
pub fn read_header(bytes: &[u8]) -> Result<ImageInfo, String> {
    let info = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        png(bytes)
    } else if bytes.starts_with(&[0xff, 0xd8]) {
        jpeg(bytes)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        gif(bytes)
    } else if bytes.starts_with(b"BM") {
        bmp(bytes)
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        webp(bytes)
    } else {
        return Err("not a PNG, JPEG, GIF, BMP or WebP image (unknown signature)".into());
    };
    let info = info?;
    if info.width == 0 || info.height == 0 {
        return Err(format!(
            "the {} header gives a size of {} x {}",
            info.format, info.width, info.height
        ));
    }
    Ok(info)
}

fn truncated(format: &str) -> String {
    format!("truncated or malformed {format} header")
}

/// The CRC-32 of `bytes` (ISO 3309, as a PNG chunk stores it over its type and data).
pub(super) fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// TensorFlow's limit on a decoded image: a PNG of this many pixels or more, and a JPEG of
/// this many bytes of pixels or more (width x height x channels), are refused.
const MAX_DECODED: u64 = 1 << 29;

/// libpng's default limit on a PNG's width and height, which TensorFlow keeps.
const PNG_MAX_SIDE: u32 = 1_000_000;

fn png(b: &[u8]) -> Result<ImageInfo, String> {
    let bad = || truncated("PNG");
    if b.get(12..16) != Some(b"IHDR") {
        return Err("malformed PNG: the first chunk is not IHDR".into());
    }
    let len = be32(b, 8).ok_or_else(bad)?;
    if len != 13 {
        return Err(format!(
            "malformed PNG: the IHDR chunk holds {len} bytes, expected 13"
        ));
    }
    let width = be32(b, 16).ok_or_else(bad)?;
    let height = be32(b, 20).ok_or_else(bad)?;
    let bits = *b.get(24).ok_or_else(bad)?;
    let color = *b.get(25).ok_or_else(bad)?;
    let compression = *b.get(26).ok_or_else(bad)?;
    let filter = *b.get(27).ok_or_else(bad)?;
    let interlace = *b.get(28).ok_or_else(bad)?;
    let stored = be32(b, 29).ok_or_else(bad)?;
    let computed = crc32(b.get(12..29).ok_or_else(bad)?);
    // libpng checks the CRC of a critical chunk, and TensorFlow's decoder then refuses the file.
    if stored != computed {
        return Err(format!(
            "malformed PNG: the IHDR chunk's CRC is {stored:08x}, its bytes give {computed:08x} \
             (a corrupted header, which tf.io.decode_image does not decode)"
        ));
    }
    if width > PNG_MAX_SIDE || height > PNG_MAX_SIDE {
        return Err(format!(
            "a PNG of {width} x {height}, which tf.io.decode_image does not decode (libpng \
             refuses a width or height above {PNG_MAX_SIDE})"
        ));
    }
    if u64::from(width) * u64::from(height) >= MAX_DECODED {
        return Err(format!(
            "a PNG of {width} x {height}, which tf.io.decode_image does not decode (it refuses \
             a PNG of 2^29 pixels or more: \"PNG size too large for int\")"
        ));
    }
    if compression != 0 || filter != 0 || interlace > 1 {
        return Err(format!(
            "malformed PNG: IHDR gives compression method {compression}, filter method \
             {filter} and interlace method {interlace}, expected 0, 0 and 0 or 1"
        ));
    }
    // The chunks before the image data: a palette image needs its PLTE chunk, and a tRNS
    // chunk gives it an alpha channel. A walk that runs off the end is left to
    // check_complete, which says where the file ends.
    let mut at = 8usize;
    let (mut plte, mut trns, mut image_data) = (false, false, false);
    while let (Some(len), Some(kind)) = (be32(b, at), b.get(at + 4..at + 8)) {
        match kind {
            b"PLTE" => plte = true,
            b"tRNS" => trns = true,
            b"IDAT" | b"IEND" => {
                image_data = true;
                break;
            }
            _ => {}
        }
        let Some(next) = usize::try_from(len)
            .ok()
            .and_then(|l| at.checked_add(12)?.checked_add(l))
        else {
            break;
        };
        at = next;
    }
    if color == 3 && image_data && !plte {
        return Err(
            "malformed PNG: a palette image without a PLTE chunk before its image data".into(),
        );
    }
    // TensorFlow decodes every PNG to 8 bits per channel (16-bit samples scaled, 1-, 2- and
    // 4-bit ones expanded) and keeps the channels of the colour type; only a palette turns
    // into RGB, or RGBA when a tRNS chunk gives it transparency (a tRNS chunk of a grayscale
    // or RGB image adds no channel).
    let (depth, allowed): (u32, &[u8]) = match color {
        0 => (1, &[1, 2, 4, 8, 16]),
        2 => (3, &[8, 16]),
        3 => (if trns { 4 } else { 3 }, &[1, 2, 4, 8]),
        4 => (2, &[8, 16]),
        6 => (4, &[8, 16]),
        other => return Err(format!("malformed PNG: unknown colour type {other}")),
    };
    if !allowed.contains(&bits) {
        return Err(format!(
            "malformed PNG: bit depth {bits} is not allowed for colour type {color}"
        ));
    }
    Ok(ImageInfo {
        format: ImageFormat::Png,
        width,
        height,
        depth,
    })
}

fn jpeg(b: &[u8]) -> Result<ImageInfo, String> {
    let bad = || truncated("JPEG");
    let mut at = 2usize;
    loop {
        // Each marker is 0xFF, optional 0xFF fill bytes, then the marker code.
        if *b.get(at).ok_or_else(bad)? != 0xff {
            return Err("malformed JPEG: expected a marker".into());
        }
        while b.get(at) == Some(&0xff) {
            at += 1;
        }
        let code = *b.get(at).ok_or_else(bad)?;
        at += 1;
        match code {
            // Markers without a length.
            0x01 | 0xd0..=0xd7 => continue,
            // libjpeg refuses a second start of image.
            0xd8 => {
                return Err(format!(
                    "malformed JPEG: a second start-of-image marker (FF D8) at offset {}",
                    at - 2
                ));
            }
            0xd9 | 0xda => {
                return Err("malformed JPEG: no frame header before the image data".into());
            }
            _ => {}
        }
        let len = usize::try_from(be16(b, at).ok_or_else(bad)?).map_err(|_| bad())?;
        let is_sof = matches!(code, 0xc0..=0xc3 | 0xc5..=0xc7 | 0xc9..=0xcb | 0xcd..=0xcf);
        if is_sof {
            // libjpeg-turbo, as TensorFlow builds it, decodes Huffman and arithmetic coded
            // baseline, extended and progressive frames of 8-bit samples.
            let process = match code {
                0xc0 | 0xc1 | 0xc2 | 0xc9 | 0xca => None,
                0xc3 | 0xcb => Some("lossless"),
                0xc5 | 0xcd => Some("differential sequential"),
                0xc6 | 0xce => Some("differential progressive"),
                _ => Some("differential lossless"),
            };
            if let Some(process) = process {
                return Err(format!(
                    "a {process} JPEG (frame marker FF {code:02X}), which tf.io.decode_image \
                     does not decode (it decodes baseline, extended and progressive JPEGs: \
                     FF C0, C1, C2, C9, CA)"
                ));
            }
            let precision = *b.get(at + 2).ok_or_else(bad)?;
            if precision != 8 {
                return Err(format!(
                    "a JPEG of {precision}-bit samples, which tf.io.decode_image does not \
                     decode (it decodes 8-bit samples)"
                ));
            }
            let height = be16(b, at + 3).ok_or_else(bad)?;
            let width = be16(b, at + 5).ok_or_else(bad)?;
            let components = *b.get(at + 7).ok_or_else(bad)?;
            // TensorFlow asks libjpeg for min(components, 3) channels: grayscale stays one
            // channel, YCbCr and RGB become RGB, and CMYK / YCCK (4 components) are
            // converted to RGB too. It refuses 2 components, and libjpeg cannot convert 5
            // or more to RGB.
            let depth = match components {
                1 => 1,
                3 | 4 => 3,
                n => {
                    return Err(format!(
                        "a JPEG of {n} colour components, which tf.io.decode_image does not \
                         decode (it decodes 1: grayscale, 3: YCbCr or RGB, 4: CMYK or YCCK)"
                    ));
                }
            };
            if u64::from(width) * u64::from(height) * u64::from(depth) >= MAX_DECODED {
                return Err(format!(
                    "a JPEG of {width} x {height} x {depth}, which tf.io.decode_image does not \
                     decode (it refuses a JPEG of 2^29 bytes of pixels or more: \"Image too \
                     large\")"
                ));
            }
            return Ok(ImageInfo {
                format: ImageFormat::Jpeg,
                width,
                height,
                depth,
            });
        }
        if len < 2 {
            return Err("malformed JPEG: a segment length below 2".into());
        }
        at = at.checked_add(len).ok_or_else(bad)?;
    }
}

/// Skips the data sub-blocks that start at `at` (a length byte, that many bytes, ... up to a
/// zero length): the offset after the terminator, or `None` when the file ends first.
fn skip_sub_blocks(b: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let n = usize::from(*b.get(at)?);
        at = at.checked_add(1 + n)?;
        if n == 0 {
            return Some(at);
        }
    }
}

/// The bytes of a GIF colour table whose packed-fields byte is `packed` (0 when it has none).
fn gif_color_table(packed: u8) -> usize {
    if packed & 0x80 == 0 {
        0
    } else {
        3 << (usize::from(packed & 7) + 1)
    }
}

/// The size of a GIF: that of its largest image, as TensorFlow 2.21 gives it.
///
/// TensorFlow reads the blocks with giflib up to the trailer, and stops early (without an
/// error) at a block it cannot read once one image is whole: a cut, an unknown block type, an
/// image of zero width or height, an LZW minimum code size above 8. Its width is then the
/// largest width of the whole images, its height the largest height (image offsets and the
/// logical screen size are ignored). With no whole image, or a first image without a colour
/// table, it refuses the file.
fn gif(b: &[u8]) -> Result<ImageInfo, String> {
    let cut = |where_: &str| {
        format!(
            "truncated GIF: the file ends {where_}, before its first image is whole, after {} \
             bytes",
            b.len()
        )
    };
    let screen = *b
        .get(10)
        .ok_or_else(|| cut("inside its logical screen descriptor"))?;
    let has_global = screen & 0x80 != 0;
    let mut at = 13 + gif_color_table(screen);
    if at > b.len() {
        return Err(cut("inside its global colour table"));
    }
    let (mut images, mut width, mut height) = (0u32, 0u32, 0u32);
    let mut first_has_colors = false;
    // Why the walk stopped before a trailer, when it did.
    let stopped: Option<String> = loop {
        let Some(&kind) = b.get(at) else {
            break Some(cut("between blocks"));
        };
        match kind {
            0x3b => break None,
            0x21 => match skip_sub_blocks(b, at + 2) {
                Some(next) => at = next,
                None => break Some(cut("inside an extension block")),
            },
            0x2c => {
                let (Some(w), Some(h), Some(&packed)) =
                    (le16(b, at + 5), le16(b, at + 7), b.get(at + 9))
                else {
                    break Some(cut("inside an image descriptor"));
                };
                let code = at + 10 + gif_color_table(packed);
                let Some(&min_code) = b.get(code) else {
                    break Some(cut("inside an image's colour table"));
                };
                if w == 0 || h == 0 {
                    break Some(format!(
                        "a GIF whose first image is {w} x {h} (at offset {at}), which \
                         tf.io.decode_image does not decode"
                    ));
                }
                if min_code > 8 {
                    break Some(format!(
                        "malformed GIF: its first image (at offset {at}) gives an LZW minimum \
                         code size of {min_code}, expected at most 8"
                    ));
                }
                let Some(next) = skip_sub_blocks(b, code + 1) else {
                    break Some(cut("inside the image data of its first image"));
                };
                if images == 0 {
                    first_has_colors = has_global || packed & 0x80 != 0;
                }
                images += 1;
                width = width.max(w);
                height = height.max(h);
                at = next;
            }
            other => {
                break Some(format!(
                    "malformed GIF: an unknown block type 0x{other:02X} at offset {at}, before \
                     its first image"
                ));
            }
        }
    };
    if images == 0 {
        return Err(stopped.unwrap_or_else(|| {
            "a GIF without images (its trailer comes before any image descriptor), which \
             tf.io.decode_image does not decode"
                .into()
        }));
    }
    if !first_has_colors {
        return Err(
            "a GIF whose first image has no colour table, local or global, which \
             tf.io.decode_image does not decode"
                .into(),
        );
    }
    Ok(ImageInfo {
        format: ImageFormat::Gif,
        width,
        height,
        depth: 3,
    })
}

fn bmp(b: &[u8]) -> Result<ImageInfo, String> {
    let bad = || truncated("BMP");
    let header = le32(b, 14).ok_or_else(bad)?;
    if header < 40 {
        // TensorFlow reads the 40-byte BITMAPINFOHEADER's fields at fixed offsets, so the
        // 12-byte OS/2 header (16-bit sizes) does not decode.
        return Err(format!(
            "a BMP with a {header}-byte info header, which tf.io.decode_image does not decode \
             (it reads the 40-byte BITMAPINFOHEADER and its later versions)"
        ));
    }
    #[allow(clippy::cast_possible_wrap)]
    let w = le32(b, 18).ok_or_else(bad)? as i32;
    #[allow(clippy::cast_possible_wrap)]
    let h = le32(b, 22).ok_or_else(bad)? as i32;
    let bpp = le16(b, 28).ok_or_else(bad)?;
    if w < 0 {
        return Err(format!(
            "a BMP of negative width {w}, which tf.io.decode_image does not decode"
        ));
    }
    // TensorFlow takes bits per pixel / 8 as the channel count and decodes 1, 3 or 4 of them
    // (the bytes of an 8-bit image are its palette indices, as one channel).
    let depth = match bpp / 8 {
        d @ (1 | 3 | 4) => d,
        _ => {
            return Err(format!(
                "a BMP of {bpp} bits per pixel, which tf.io.decode_image does not decode (it \
                 decodes 8, 24 and 32)"
            ));
        }
    };
    Ok(ImageInfo {
        format: ImageFormat::Bmp,
        width: w.unsigned_abs(),
        height: h.unsigned_abs(),
        depth,
    })
}

fn webp(b: &[u8]) -> Result<ImageInfo, String> {
    let bad = || truncated("WebP");
    let chunk = b.get(12..16).ok_or_else(bad)?;
    let (width, height, alpha) = match chunk {
        b"VP8 " => {
            // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height.
            if b.get(23..26) != Some(&[0x9d, 0x01, 0x2a]) {
                return Err("malformed WebP: no VP8 start code".into());
            }
            (
                le16(b, 26).ok_or_else(bad)? & 0x3fff,
                le16(b, 28).ok_or_else(bad)? & 0x3fff,
                false,
            )
        }
        b"VP8L" => {
            if b.get(20) != Some(&0x2f) {
                return Err("malformed WebP: no VP8L signature".into());
            }
            let bits = le32(b, 21).ok_or_else(bad)?;
            (
                (bits & 0x3fff) + 1,
                ((bits >> 14) & 0x3fff) + 1,
                bits >> 28 & 1 == 1,
            )
        }
        b"VP8X" => {
            let flags = *b.get(20).ok_or_else(bad)?;
            (
                le24(b, 24).ok_or_else(bad)? + 1,
                le24(b, 27).ok_or_else(bad)? + 1,
                flags & 0x10 != 0,
            )
        }
        _ => return Err("malformed WebP: unknown first chunk".into()),
    };
    Ok(ImageInfo {
        format: ImageFormat::Webp,
        width,
        height,
        depth: if alpha { 4 } else { 3 },
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn png_bytes(color: u8, extra: &[u8]) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
        b.extend(13u32.to_be_bytes());
        b.extend(b"IHDR");
        b.extend(5u32.to_be_bytes());
        b.extend(7u32.to_be_bytes());
        b.extend([8, color, 0, 0, 0]);
        b.extend(crc32(&b[12..29]).to_be_bytes());
        b.extend(extra);
        b
    }

    #[test]
    fn png_colour_types() {
        for (color, depth) in [(0, 1), (2, 3), (3, 3), (4, 2), (6, 4)] {
            let i = read_header(&png_bytes(color, &[])).unwrap();
            assert_eq!((i.width, i.height, i.depth), (5, 7, depth));
        }
        let mut plte = Vec::new();
        plte.extend(3u32.to_be_bytes());
        plte.extend(b"PLTE\0\0\0\0\0\0\0");
        plte.extend(1u32.to_be_bytes());
        plte.extend(b"tRNS\0\0\0\0\0");
        assert_eq!(read_header(&png_bytes(3, &plte)).unwrap().depth, 4);
        assert!(read_header(&png_bytes(7, &[])).is_err());
        assert!(read_header(&png_bytes(2, &[])[..20]).is_err());
    }

    #[test]
    fn jpeg_frames() {
        // SOI, APP0 (length 4), fill byte, SOF0 of 3 components 640 x 480.
        let mut b = vec![
            0xff, 0xd8, 0xff, 0xe0, 0, 4, 1, 2, 0xff, 0xff, 0xc0, 0, 17, 8,
        ];
        b.extend(480u16.to_be_bytes());
        b.extend(640u16.to_be_bytes());
        b.push(3);
        let i = read_header(&b).unwrap();
        assert_eq!(
            (i.format, i.width, i.height, i.depth),
            (ImageFormat::Jpeg, 640, 480, 3)
        );
        assert!(read_header(&b[..12]).is_err());
        assert!(read_header(&[0xff, 0xd8, 0xff, 0xda, 0, 2]).is_err());
        assert!(read_header(&[0xff, 0xd8, 0xff, 0xe0, 0, 0]).is_err());
    }

    fn png_bits(color: u8, bits: u8) -> Vec<u8> {
        let mut b = png_bytes(color, &[]);
        b[24] = bits;
        let crc = crc32(&b[12..29]);
        b[29..33].copy_from_slice(&crc.to_be_bytes());
        b
    }

    #[test]
    fn png_bit_depths() {
        // Every bit depth a colour type allows keeps its channel count.
        for (color, bits, depth) in [
            (0, 1, 1),
            (0, 2, 1),
            (0, 4, 1),
            (0, 16, 1),
            (2, 16, 3),
            (3, 1, 3),
            (3, 4, 3),
            (4, 16, 2),
            (6, 16, 4),
        ] {
            let i = read_header(&png_bits(color, bits)).unwrap();
            assert_eq!(i.depth, depth, "colour type {color}, {bits} bits");
        }
        // libpng refuses the others, and so does TensorFlow.
        for (color, bits) in [(0, 3), (2, 4), (3, 16), (4, 1), (6, 4), (2, 0)] {
            let e = read_header(&png_bits(color, bits)).unwrap_err();
            assert!(e.contains("bit depth"), "{e}");
        }
        // tRNS adds no channel to grayscale or RGB.
        let mut trns = Vec::new();
        trns.extend(6u32.to_be_bytes());
        trns.extend(b"tRNS\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(read_header(&png_bytes(2, &trns)).unwrap().depth, 3);
        assert_eq!(read_header(&png_bytes(0, &trns)).unwrap().depth, 1);
    }

    /// A JPEG header up to its frame: SOI, an optional Adobe APP14 with `transform`, SOF0 of
    /// `n` components, 9 x 5.
    fn jpeg_sof(n: u8, adobe: Option<u8>) -> Vec<u8> {
        let mut b = vec![0xff, 0xd8];
        if let Some(t) = adobe {
            b.extend([0xff, 0xee, 0, 14]);
            b.extend(b"Adobe\0\x64\0\0\0\0");
            b.push(t);
        }
        b.extend([0xff, 0xc0]);
        b.extend((8 + 3 * u16::from(n)).to_be_bytes());
        b.extend([8, 0, 5, 0, 9, n]);
        for c in 1..=n {
            b.extend([c, 0x11, 0]);
        }
        b
    }

    /// 2^29 bytes of pixels or more (width x height x channels): TensorFlow 2.21 refused an
    /// RGB JPEG of 13378 x 13378 and a grayscale one of 23171 x 23171 ("Image too large"), and
    /// went on past the header for 13377 x 13377 and 23170 x 23170.
    #[test]
    fn jpeg_of_too_many_bytes_of_pixels() {
        let sized = |n: u8, w: u16, h: u16| {
            let mut b = jpeg_sof(n, None);
            b[7..9].copy_from_slice(&h.to_be_bytes());
            b[9..11].copy_from_slice(&w.to_be_bytes());
            b
        };
        for (n, side) in [(3, 13_378), (1, 23_171)] {
            let e = read_header(&sized(n, side, side)).unwrap_err();
            assert!(e.contains("2^29 bytes of pixels or more"), "{e}");
        }
        for (n, side) in [(3, 13_377), (1, 23_170)] {
            let info = read_header(&sized(n, side, side)).unwrap();
            assert_eq!(
                (info.width, info.height),
                (u32::from(side), u32::from(side))
            );
        }
        // A second start of image before the frame header: libjpeg refuses it.
        let mut twice = vec![0xff, 0xd8];
        twice.extend(jpeg_sof(3, None));
        let e = read_header(&twice).unwrap_err();
        assert!(
            e.contains("a second start-of-image marker (FF D8) at offset 2"),
            "{e}"
        );
    }

    #[test]
    fn jpeg_components_are_decode_image_channels() {
        // What tf.io.decode_image returned for such files (TensorFlow 2.21): CMYK and YCCK
        // come out as RGB.
        for (n, adobe, depth) in [
            (1, None, 1),
            (3, None, 3),
            (3, Some(0), 3),
            (4, None, 3),
            (4, Some(0), 3),
            (4, Some(2), 3),
        ] {
            let i = read_header(&jpeg_sof(n, adobe)).unwrap();
            assert_eq!(
                (i.width, i.height, i.depth),
                (9, 5, depth),
                "{n} components"
            );
        }
        for n in [2, 5] {
            let e = read_header(&jpeg_sof(n, None)).unwrap_err();
            assert!(e.contains(&format!("{n} colour components")), "{e}");
        }
    }

    fn bmp_header(size: u32, width: i32, height: i32, bpp: u16) -> Vec<u8> {
        let mut b = b"BM".to_vec();
        b.extend([0u8; 12]);
        b.extend(size.to_le_bytes());
        b.extend(width.to_le_bytes());
        b.extend(height.to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend(bpp.to_le_bytes());
        b
    }

    #[test]
    fn bmp_bits_per_pixel() {
        for (bpp, depth) in [(8, 1), (24, 3), (32, 4)] {
            let i = read_header(&bmp_header(40, 4, -3, bpp)).unwrap();
            assert_eq!((i.width, i.height, i.depth), (4, 3, depth), "{bpp} bits");
        }
        assert_eq!(read_header(&bmp_header(124, 4, 3, 24)).unwrap().depth, 3);
        for bpp in [1, 4, 16] {
            let e = read_header(&bmp_header(40, 4, 3, bpp)).unwrap_err();
            assert!(e.contains(&format!("{bpp} bits per pixel")), "{e}");
        }
        let e = read_header(&bmp_header(40, -4, 3, 24)).unwrap_err();
        assert!(e.contains("negative width"), "{e}");
        // The OS/2 header: 16-bit width and height.
        let mut os2 = b"BM".to_vec();
        os2.extend([0u8; 12]);
        os2.extend(12u32.to_le_bytes());
        os2.extend([4, 0, 3, 0, 1, 0, 24, 0]);
        let e = read_header(&os2).unwrap_err();
        assert!(e.contains("12-byte info header"), "{e}");
    }

    #[test]
    fn bmp_and_webp() {
        let mut b = b"BM".to_vec();
        b.extend([0u8; 12]);
        b.extend(40u32.to_le_bytes());
        b.extend(4i32.to_le_bytes());
        b.extend((-3i32).to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend(32u16.to_le_bytes());
        let i = read_header(&b).unwrap();
        assert_eq!((i.width, i.height, i.depth), (4, 3, 4));

        let mut w = b"RIFF\0\0\0\0WEBPVP8X".to_vec();
        w.extend([10, 0, 0, 0, 0x10, 0, 0, 0]);
        w.extend([99, 0, 0, 49, 0, 0]);
        let i = read_header(&w).unwrap();
        assert_eq!(
            (i.format, i.width, i.height, i.depth),
            (ImageFormat::Webp, 100, 50, 4)
        );
        let mut l = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
        let bits: u32 = 9 | (19 << 14);
        l.extend(bits.to_le_bytes());
        let i = read_header(&l).unwrap();
        assert_eq!((i.width, i.height, i.depth), (10, 20, 3));
        assert!(read_header(b"RIFF\0\0\0\0WEBPXXXX").is_err());
    }

    #[test]
    fn crc32_check_values() {
        // The CRC-32 check value, and zlib.crc32 of a 1 x 1 8-bit grayscale IHDR chunk.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b"IHDR\0\0\0\x01\0\0\0\x01\x08\0\0\0\0"), 0x3a7e_9b55);
    }

    /// A PNG header of 7 x 5 whose IHDR fields (width, height, bit depth, colour type,
    /// compression, filter, interlace) are `f`, with its CRC, then `rest`.
    fn png_ihdr(f: (u32, u32, u8, u8, u8, u8, u8), rest: &[u8]) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(f.0.to_be_bytes());
        b.extend(f.1.to_be_bytes());
        b.extend([f.2, f.3, f.4, f.5, f.6]);
        b.extend(crc32(&b[12..29]).to_be_bytes());
        b.extend(rest);
        b
    }

    /// A PNG chunk: length, type, data and CRC.
    pub(in crate::images) fn png_chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
        let mut c = u32::try_from(data.len()).unwrap().to_be_bytes().to_vec();
        c.extend(kind);
        c.extend(data);
        c.extend(crc32(&c[4..]).to_be_bytes());
        c
    }

    #[test]
    fn png_ihdr_as_libpng_checks_it() {
        let ok = (7, 5, 8, 2, 0, 0, 0);
        assert_eq!(read_header(&png_ihdr(ok, &[])).unwrap().depth, 3);
        // TensorFlow 2.21 refused each of these ("Invalid PNG. Failed to initialize
        // decoder"): a CRC of 0 or one bit off, and the fields libpng refuses.
        let mut zero = png_ihdr(ok, &[]);
        zero[29..33].fill(0);
        let mut flipped = png_ihdr(ok, &[]);
        flipped[32] ^= 1;
        for b in [&zero, &flipped] {
            let e = read_header(b).unwrap_err();
            assert!(e.contains("the IHDR chunk's CRC is"), "{e}");
        }
        for f in [(1_000_001, 5, 8, 2, 0, 0, 0), (7, 1_000_001, 8, 2, 0, 0, 0)] {
            let e = read_header(&png_ihdr(f, &[])).unwrap_err();
            assert!(e.contains("above 1000000"), "{e}");
        }
        for f in [(0, 5, 8, 2, 0, 0, 0), (7, 0, 8, 2, 0, 0, 0)] {
            let e = read_header(&png_ihdr(f, &[])).unwrap_err();
            assert!(e.contains("size of"), "{e}");
        }
        // 2^29 pixels or more, whatever the channels: TensorFlow 2.21 refused 16384 x 32768
        // and 23171 x 23171 ("PNG size too large for int"), and went on past the header for
        // 16384 x 32767 and 23170 x 23170.
        for (w, h) in [(16_384, 32_768), (23_171, 23_171)] {
            for color in [0, 2, 6] {
                let e = read_header(&png_ihdr((w, h, 8, color, 0, 0, 0), &[])).unwrap_err();
                assert!(e.contains("2^29 pixels or more"), "{e}");
            }
        }
        for (w, h) in [(16_384, 32_767), (23_170, 23_170)] {
            let info = read_header(&png_ihdr((w, h, 8, 6, 0, 0, 0), &[])).unwrap();
            assert_eq!((info.width, info.height), (w, h));
        }
        for f in [
            (7, 5, 8, 2, 1, 0, 0),
            (7, 5, 8, 2, 0, 1, 0),
            (7, 5, 8, 2, 0, 64, 0),
            (7, 5, 8, 2, 0, 0, 2),
        ] {
            let e = read_header(&png_ihdr(f, &[])).unwrap_err();
            assert!(e.contains("compression method"), "{e}");
        }
        // TensorFlow 2.21 got past the header of these (1000000 wide, Adam7 interlaced).
        for f in [(1_000_000, 5, 8, 2, 0, 0, 0), (7, 5, 8, 2, 0, 0, 1)] {
            assert!(read_header(&png_ihdr(f, &[])).is_ok(), "{f:?}");
        }
        // An IHDR of 14 bytes: refused by TensorFlow 2.21.
        let mut long = b"\x89PNG\r\n\x1a\n\0\0\0\x0eIHDR".to_vec();
        long.extend([0, 0, 0, 7, 0, 0, 0, 5, 8, 2, 0, 0, 0, 0]);
        long.extend(crc32(&long[12..30]).to_be_bytes());
        let e = read_header(&long).unwrap_err();
        assert!(e.contains("holds 14 bytes, expected 13"), "{e}");
        // A palette image: (5, 7, 3) with a PLTE chunk before IDAT, refused without one
        // (TensorFlow 2.21).
        let pal = (7, 5, 8, 3, 0, 0, 0);
        let idat = png_chunk(b"IDAT", &[0x78, 0x9c]);
        let mut with = png_chunk(b"PLTE", &[0; 6]);
        with.extend(&idat);
        assert_eq!(read_header(&png_ihdr(pal, &with)).unwrap().depth, 3);
        let e = read_header(&png_ihdr(pal, &idat)).unwrap_err();
        assert!(e.contains("without a PLTE chunk"), "{e}");
    }

    /// `jpeg_sof(3, None)` with another frame marker and sample precision.
    fn jpeg_frame(code: u8, precision: u8) -> Vec<u8> {
        let mut b = jpeg_sof(3, None);
        b[3] = code;
        b[6] = precision;
        b
    }

    #[test]
    fn jpeg_processes_as_tensorflow_decodes_them() {
        // TensorFlow 2.21 on a 7 x 5 baseline JPEG with its frame marker changed: FF C0, C1
        // and C9 decoded; C2 and CA got past the frame header (and refused the baseline
        // scan as progressive parameters); the others: "Unsupported JPEG process: SOF type".
        for code in [0xc0, 0xc1, 0xc2, 0xc9, 0xca] {
            let i = read_header(&jpeg_frame(code, 8)).unwrap();
            assert_eq!((i.width, i.height, i.depth), (9, 5, 3), "{code:02X}");
        }
        for code in [0xc3, 0xc5, 0xc6, 0xc7, 0xcb, 0xcd, 0xce, 0xcf] {
            let e = read_header(&jpeg_frame(code, 8)).unwrap_err();
            assert!(e.contains(&format!("frame marker FF {code:02X}")), "{e}");
        }
        assert!(
            read_header(&jpeg_frame(0xc3, 8))
                .unwrap_err()
                .contains("a lossless JPEG")
        );
        // "Unsupported JPEG data precision N" (TensorFlow 2.21), in SOF0 and SOF1 alike.
        for code in [0xc0, 0xc1, 0xc2] {
            for precision in [0, 1, 7, 9, 12, 16] {
                let e = read_header(&jpeg_frame(code, precision)).unwrap_err();
                assert!(e.contains(&format!("{precision}-bit samples")), "{e}");
            }
        }
    }

    /// The LZW data of `n` pixels of colour 0, minimum code size 2: a clear code before every
    /// second literal, so every code is 3 bits.
    fn lzw(n: usize) -> Vec<u8> {
        let mut codes = Vec::new();
        for i in 0..n {
            if i % 2 == 0 {
                codes.push(4u32);
            }
            codes.push(0);
        }
        codes.push(5);
        let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0);
        for c in codes {
            acc |= c << bits;
            bits += 3;
            while bits >= 8 {
                out.push(acc.to_le_bytes()[0]);
                acc >>= 8;
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(acc.to_le_bytes()[0]);
        }
        out
    }

    /// An image descriptor at (`left`, `top`) of `w` x `h` pixels, with a local colour table
    /// of 4 entries or none, then its whole LZW data in sub-blocks.
    fn gif_image(w: u16, h: u16, left: u16, top: u16, local: bool) -> Vec<u8> {
        let mut b = vec![0x2c];
        for v in [left, top, w, h] {
            b.extend(v.to_le_bytes());
        }
        b.push(if local { 0x81 } else { 0 });
        if local {
            b.extend([0; 12]);
        }
        b.push(2);
        for block in lzw(usize::from(w) * usize::from(h)).chunks(255) {
            b.push(u8::try_from(block.len()).unwrap());
            b.extend(block);
        }
        b.push(0);
        b
    }

    /// A GIF89a of a `sw` x `sh` screen, a global colour table of 4 entries or none, a
    /// NETSCAPE looping extension, each image after a graphic control extension, and a
    /// trailer or none. The files measured with TensorFlow 2.21 were made the same way.
    fn gif_file(sw: u16, sh: u16, images: &[Vec<u8>], global: bool, trailer: bool) -> Vec<u8> {
        let mut b = b"GIF89a".to_vec();
        b.extend(sw.to_le_bytes());
        b.extend(sh.to_le_bytes());
        b.extend([if global { 0x81 } else { 0 }, 0, 0]);
        if global {
            b.extend([0, 0, 0, 255, 255, 255, 0, 0, 0, 0, 0, 0]);
        }
        b.extend(b"\x21\xff\x0bNETSCAPE2.0\x03\x01\0\0\0");
        for image in images {
            b.extend(b"\x21\xf9\x04\0\0\0\0\0");
            b.extend(image);
        }
        if trailer {
            b.push(0x3b);
        }
        b
    }

    fn gif_size(b: &[u8]) -> Result<(u32, u32, u32), String> {
        read_header(b).map(|i| (i.height, i.width, i.depth))
    }

    #[test]
    fn gif_size_is_the_largest_image() {
        let img = |w, h| gif_image(w, h, 0, 0, false);
        // (height, width, channels) of tf.io.decode_image(data, expand_animations=False),
        // TensorFlow 2.21.
        for (screen, images, shape) in [
            ((50, 40), vec![img(10, 5)], (5, 10, 3)),
            ((10, 5), vec![img(20, 8)], (8, 20, 3)),
            ((50, 40), vec![img(10, 5), img(20, 8)], (8, 20, 3)),
            ((50, 40), vec![img(20, 8), img(10, 5)], (8, 20, 3)),
            ((10, 10), vec![img(20, 3), img(3, 20)], (20, 20, 3)),
            ((10, 5), vec![gif_image(10, 5, 30, 30, false)], (5, 10, 3)),
            ((0, 0), vec![img(10, 5)], (5, 10, 3)),
        ] {
            let b = gif_file(screen.0, screen.1, &images, true, true);
            assert_eq!(gif_size(&b), Ok(shape), "{screen:?}");
        }
        // Without a trailer, with bytes or another image after it: (5, 10, 3).
        let one = [img(10, 5)];
        assert_eq!(
            gif_size(&gif_file(10, 5, &one, true, false)),
            Ok((5, 10, 3))
        );
        let mut after = gif_file(10, 5, &one, true, true);
        after.extend(img(20, 8));
        after.push(0x3b);
        assert_eq!(gif_size(&after), Ok((5, 10, 3)));
        // Colour tables: a local one is enough; the first image needs one (TensorFlow 2.21:
        // "missing color map for frame 0"), later ones do not.
        let local = gif_image(10, 5, 0, 0, true);
        assert_eq!(
            gif_size(&gif_file(10, 5, std::slice::from_ref(&local), false, true)),
            Ok((5, 10, 3))
        );
        assert_eq!(
            gif_size(&gif_file(10, 5, &[local.clone(), img(10, 5)], false, true)),
            Ok((5, 10, 3))
        );
        for images in [vec![img(10, 5)], vec![img(10, 5), local]] {
            let e = gif_size(&gif_file(10, 5, &images, false, true)).unwrap_err();
            assert!(e.contains("first image has no colour table"), "{e}");
        }
        // No image: TensorFlow 2.21 refused ("No Image Descriptor detected").
        for global in [true, false] {
            let e = gif_size(&gif_file(10, 5, &[], global, true)).unwrap_err();
            assert!(e.contains("a GIF without images"), "{e}");
        }
    }

    #[test]
    fn gif_blocks_stop_where_giflib_stops() {
        let img = |w, h| gif_image(w, h, 0, 0, false);
        // A first image of zero width: refused by TensorFlow 2.21; a later one ends the walk
        // (the images after it are not read): (5, 10, 3).
        for images in [vec![img(0, 5)], vec![img(0, 5), img(10, 5)]] {
            let e = gif_size(&gif_file(10, 5, &images, true, true)).unwrap_err();
            assert!(e.contains("first image is 0 x 5"), "{e}");
        }
        for images in [
            vec![img(10, 5), img(0, 5)],
            vec![img(10, 5), img(0, 30), img(20, 8)],
        ] {
            assert_eq!(
                gif_size(&gif_file(10, 5, &images, true, true)),
                Ok((5, 10, 3))
            );
        }
        // An unknown block type: refused before the first image ("Wrong record type
        // detected"), the end of the walk after it (TensorFlow 2.21).
        let mut before = gif_file(10, 5, &[], true, false);
        before.push(0x99);
        before.extend(img(10, 5));
        before.push(0x3b);
        let e = gif_size(&before).unwrap_err();
        assert!(e.contains("unknown block type 0x99 at offset 44"), "{e}");
        let mut later = gif_file(10, 5, &[img(10, 5)], true, false);
        later.extend([0x99, 0x3b]);
        assert_eq!(gif_size(&later), Ok((5, 10, 3)));
        // An LZW minimum code size above 8: refused in the first image, the end of the walk
        // in a later one (TensorFlow 2.21, for 9 to 12).
        for size in [9, 12] {
            let mut first = img(10, 5);
            first[10] = size;
            let e = gif_size(&gif_file(10, 5, &[first], true, true)).unwrap_err();
            assert!(
                e.contains(&format!("LZW minimum code size of {size}")),
                "{e}"
            );
            let mut second = img(20, 8);
            second[10] = size;
            let b = gif_file(10, 5, &[img(10, 5), second], true, true);
            assert_eq!(gif_size(&b), Ok((5, 10, 3)));
        }
    }

    #[test]
    fn gif_cut_anywhere() {
        // TensorFlow 2.21 on every prefix of this 219-byte file (screen 50 x 40, an image of
        // 10 x 5 at bytes 52..94, one of 20 x 8 with a local colour table at 102..218, the
        // trailer): refused below 94 bytes, (5, 10, 3) from 94 to 217, (8, 20, 3) from 218.
        let b = gif_file(
            50,
            40,
            &[gif_image(10, 5, 0, 0, false), gif_image(20, 8, 0, 0, true)],
            true,
            true,
        );
        assert_eq!(b.len(), 219);
        for n in 0..=b.len() {
            let want = match n {
                0..94 => None,
                94..218 => Some((5, 10, 3)),
                _ => Some((8, 20, 3)),
            };
            let got = gif_size(&b[..n]);
            assert_eq!(got.as_ref().ok(), want.as_ref(), "{n} bytes: {got:?}");
            if (6..94).contains(&n) {
                let e = got.unwrap_err();
                assert!(e.starts_with("truncated GIF"), "{n} bytes: {e}");
            }
        }
    }

    #[test]
    fn never_panics_on_prefixes() {
        let gif = b"GIF89a\x03\x00\x02\x00";
        for n in 0..gif.len() {
            let _ = read_header(&gif[..n]);
        }
        let mut jpeg = vec![0xff, 0xd8];
        jpeg.extend([0xff; 100]);
        assert!(read_header(&jpeg).is_err());
        assert!(ImageFormat::is_image_name("a/B.JPG"));
        assert!(!ImageFormat::is_image_name("notes.txt"));
    }
}
