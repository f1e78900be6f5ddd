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
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
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
/// a zero dimension.
///
/// ```
/// use tfrecord_import::images::{read_header, ImageFormat};
///
/// // A GIF's logical screen: 3 x 2.
/// let gif = b"GIF89a\x03\x00\x02\x00\x00\x00\x00";
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

fn png(b: &[u8]) -> Result<ImageInfo, String> {
    let bad = || truncated("PNG");
    if b.get(12..16) != Some(b"IHDR") {
        return Err("malformed PNG: the first chunk is not IHDR".into());
    }
    let width = be32(b, 16).ok_or_else(bad)?;
    let height = be32(b, 20).ok_or_else(bad)?;
    let bits = *b.get(24).ok_or_else(bad)?;
    let color = *b.get(25).ok_or_else(bad)?;
    // A tRNS chunk before the image data gives a palette image an alpha channel.
    let mut at = 8usize;
    let mut trns = false;
    while let (Some(len), Some(kind)) = (be32(b, at), b.get(at + 4..at + 8)) {
        match kind {
            b"tRNS" => {
                trns = true;
                break;
            }
            b"IDAT" | b"IEND" => break,
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
            0x01 | 0xd0..=0xd8 => continue,
            0xd9 | 0xda => {
                return Err("malformed JPEG: no frame header before the image data".into());
            }
            _ => {}
        }
        let len = usize::try_from(be16(b, at).ok_or_else(bad)?).map_err(|_| bad())?;
        let is_sof = matches!(code, 0xc0..=0xc3 | 0xc5..=0xc7 | 0xc9..=0xcb | 0xcd..=0xcf);
        if is_sof {
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

fn gif(b: &[u8]) -> Result<ImageInfo, String> {
    let bad = || truncated("GIF");
    Ok(ImageInfo {
        format: ImageFormat::Gif,
        width: le16(b, 6).ok_or_else(bad)?,
        height: le16(b, 8).ok_or_else(bad)?,
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
mod tests {
    use super::*;

    fn png_bytes(color: u8, extra: &[u8]) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
        b.extend(13u32.to_be_bytes());
        b.extend(b"IHDR");
        b.extend(5u32.to_be_bytes());
        b.extend(7u32.to_be_bytes());
        b.extend([8, color, 0, 0, 0]);
        b.extend([0; 4]); // CRC (not checked)
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
