//! A folder of images to records: one record per image file, labels from sub-folder names.
//!
//! The layout is the flowers data set's (`flower_photos/<class>/*.jpg`), as
//! `tf.keras.utils.image_dataset_from_directory` reads it: every sub-folder of the directory is
//! a class, classes are numbered 0, 1, ... in name order, and every image below a class folder
//! (at any depth) gets that class. When the directory has no sub-folders, its own images are
//! written without labels; when it has, images directly in it are skipped (with a warning).
//! Image files are recognised by their extension (`jpg`, `jpeg`, `jpe`, `png`, `gif`, `bmp`,
//! `webp`); other files are left out (listed in [`ImageFolder::others`]) and hidden ones are
//! ignored. Class and image names are stored as text (`label/text`, `image/filename`), so a
//! folder or image whose name is not valid UTF-8 is an error naming it, rather than a name
//! changed (two such classes would otherwise share a label).
//!
//! Each record is a `tf.train.Example` (or `OFRecord`) with:
//!
//! | key | type | value |
//! | --- | --- | --- |
//! | `image/encoded` | bytes | the file's bytes, unchanged |
//! | `image/format` | bytes | `jpeg`, `png`, `gif`, `bmp` or `webp` (from the file's signature) |
//! | `image/filename` | bytes | the path below the directory, `/`-separated |
//! | `height`, `width`, `depth` | int64 | from the header ([`read_header`]): no pixel is decoded |
//! | `label` | int64 | the class index (labelled images only) |
//! | `label/text` | bytes | the class (sub-folder) name (labelled images only) |
//!
//! `height`, `width` and `depth` are the shape of what TensorFlow's
//! `tf.io.decode_image(image, expand_animations=False)` returns for the file (checked against
//! TensorFlow 2.21), so `depth` is the channel count TensorFlow decodes to, which is not always
//! the file's own, and a GIF's `width` and `height` are the largest width and the largest
//! height of its images (not its logical screen size, which TensorFlow ignores):
//!
//! | format | colour model | `depth` |
//! | --- | --- | --- |
//! | JPEG | grayscale (1 component) | 1 |
//! | JPEG | YCbCr or RGB (3 components) | 3 |
//! | JPEG | CMYK or YCCK (4 components): TensorFlow converts them to RGB | 3 |
//! | PNG | grayscale, any bit depth, with or without a `tRNS` chunk | 1 |
//! | PNG | grayscale + alpha | 2 |
//! | PNG | RGB, with or without a `tRNS` chunk | 3 |
//! | PNG | palette, any bit depth | 3 |
//! | PNG | palette with a `tRNS` chunk | 4 |
//! | PNG | RGBA | 4 |
//! | GIF | any (the first frame of an animation) | 3 |
//! | BMP | 8 bits per pixel (TensorFlow reads the palette indices as one channel) | 1 |
//! | BMP | 24 / 32 bits per pixel | 3 / 4 |
//! | WebP | without / with alpha (the `VP8L` alpha bit, the `VP8X` alpha flag) | 3 / 4 |
//!
//! 16-bit PNGs decode to 8 bits a channel, with the same count.
//!
//! An image that cannot be stored stops the import with an error naming the file (no output
//! file is left): an unreadable file, an unknown signature, a header that does not read, and a
//! header TensorFlow's decoder refuses, for which there is no `depth` to give (a JPEG of 2 or of
//! 5 and more components, of other than 8-bit samples, lossless or differential, or of 2^29
//! bytes of pixels or more; a PNG whose IHDR chunk has a bad CRC, a bit depth its colour type
//! does not allow, another field libpng refuses, a side above 1000000 or 2^29 pixels or more,
//! or a palette PNG without a PLTE chunk; a GIF without a whole image or whose first image has
//! no colour table; a BMP of other than 8, 24 or 32 bits per pixel, of negative width or with
//! the 12-byte OS/2 header), and a file cut short. The header alone does not show a file cut
//! inside its image data (a failed download, a copy stopped midway), which TensorFlow then
//! fails to decode, so every file's structure is followed to its end marker
//! ([`check_complete`]; no pixel is decoded): a JPEG must reach its end-of-image marker `FF D9`
//! with no second start-of-image marker before it, and a PNG a whole `IEND` chunk after image
//! data, every critical chunk's CRC matching its bytes (bytes after either end are allowed, as
//! TensorFlow allows them), a WebP must hold the size its RIFF header gives, and a BMP must be
//! exactly the size its header gives (TensorFlow refuses one byte more or less). The error says
//! `truncated JPEG: the file ends inside its scan data, ...`.
//! A GIF's blocks are walked by [`read_header`]: one cut before its first image is whole is
//! refused, and one cut later is taken, as TensorFlow decodes it (the images that are whole).
//! Image data is not decompressed, so a GIF whose first image's LZW data is corrupt is not
//! detected (TensorFlow refuses it), nor a later image whose corrupt data would make it the
//! largest (TensorFlow leaves it out of the size).
//!
//! Records are shuffled with a seeded generator by default (a training set should be shuffled;
//! the same seed gives the same order on every machine) and can be split into shards named
//! `prefix-00000-of-00004.tfrecord`, or written as OneFlow `part-00000` files.

mod complete;
mod header;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use tfrecord_core::{Compression, Format, RecordWriter, WriterOptions};

pub use complete::check_complete;
pub use header::{ImageFormat, ImageInfo, read_header};

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::row::FeatureRow;

/// The largest image file stored (2 GiB): a protobuf message cannot be larger.
const MAX_IMAGE_BYTES: u64 = (1 << 31) - 1024;

/// How deep below a class folder images are looked for.
const MAX_DEPTH: usize = 32;

/// One image file of a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageEntry {
    /// The file.
    pub path: PathBuf,
    /// The path below the directory, `/`-separated (`daisy/1.jpg`).
    pub name: String,
    /// The class index and name, for an image in a class folder.
    pub label: Option<(i64, String)>,
}

impl ImageEntry {
    /// Reads the file and makes its record.
    ///
    /// # Errors
    /// An unreadable file, a file larger than 2 GiB, a header [`read_header`] does not read,
    /// or a file cut short ([`check_complete`]); the error names the file.
    pub fn read_row(&self) -> Result<FeatureRow> {
        let located = |e: Error| e.with_path(&self.path);
        let len = fs::metadata(&self.path)
            .map_err(|e| located(e.into()))?
            .len();
        if len > MAX_IMAGE_BYTES {
            return Err(located(Error::new(format!(
                "the image has {len} bytes; a tf.train.Example holds at most 2 GiB"
            ))));
        }
        let bytes = fs::read(&self.path).map_err(|e| located(e.into()))?;
        let info = read_header(&bytes).map_err(|m| located(Error::new(m)))?;
        check_complete(&bytes, &info).map_err(|m| located(Error::new(m)))?;
        Ok(image_row(bytes, &info, &self.name, self.label.as_ref()))
    }
}

/// The record of one image: its bytes, what its header says, its name and its label.
pub fn image_row(
    bytes: Vec<u8>,
    info: &ImageInfo,
    name: &str,
    label: Option<&(i64, String)>,
) -> FeatureRow {
    let mut row = FeatureRow::new();
    row.insert("image/encoded", vec![bytes]);
    row.insert("image/format", info.format.name());
    row.insert("image/filename", name);
    row.insert("height", i64::from(info.height));
    row.insert("width", i64::from(info.width));
    row.insert("depth", i64::from(info.depth));
    if let Some((index, text)) = label {
        row.insert("label", *index);
        row.insert("label/text", text.as_str());
    }
    row
}

/// The images of a folder, in name order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageFolder {
    /// The class names (sub-folders), in label order.
    pub classes: Vec<String>,
    /// The images, sorted by class then path.
    pub images: Vec<ImageEntry>,
    /// Image files left out: directly in a directory that has class folders.
    pub skipped: Vec<PathBuf>,
    /// Files left out because their extension is not an image's (nor hidden).
    pub others: Vec<PathBuf>,
}

/// The extensions of image files (any case), as messages list them.
pub const IMAGE_EXTENSIONS: &str = "jpg, jpeg, jpe, png, gif, bmp, webp";

/// One entry of a directory: its name, path, whether it is a directory (links followed), and
/// whether it is an image file by its extension.
#[derive(Clone)]
struct Listed {
    name: OsString,
    path: PathBuf,
    is_dir: bool,
    is_image: bool,
}

impl Listed {
    /// The name as text, for an entry whose name is stored: not valid UTF-8 is an error.
    fn text(&self) -> Result<String> {
        self.name
            .to_str()
            .map(str::to_owned)
            .ok_or_else(|| self.text_error())
    }

    /// The error of a name that is not valid UTF-8.
    fn text_error(&self) -> Error {
        let what = if self.is_dir { "folder" } else { "image" };
        Error::new(format!(
            "the {what}'s name is not valid UTF-8; class and image names are stored as text \
             (`label/text`, `image/filename`), so rename it"
        ))
        .with_path(&self.path)
    }
}

/// The entries of a directory, sorted by name (byte order), hidden ones left out.
fn list(dir: &Path) -> Result<Vec<Listed>> {
    let located = |e: std::io::Error| Error::from(e).with_path(dir);
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(located)? {
        let entry = entry.map_err(located)?;
        let name = entry.file_name();
        if name.as_encoded_bytes().first() == Some(&b'.') {
            continue;
        }
        let path = entry.path();
        // Follows symbolic links, as a user's folder of links should work.
        let is_dir = fs::metadata(&path).map(|m| m.is_dir()).unwrap_or(false);
        let is_image = !is_dir && ImageFormat::is_image_name(&name.to_string_lossy());
        out.push(Listed {
            name,
            path,
            is_dir,
            is_image,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Walks a folder below a class folder (or the top folder); `prefix` is the folder's path below
/// the top one (`daisy/`), or a folder on the way whose name is not UTF-8, which only an image
/// below it makes an error (the image's path is stored).
fn walk(
    dir: &Path,
    prefix: &std::result::Result<String, Listed>,
    depth: usize,
    label: Option<&(i64, String)>,
    folder: &mut ImageFolder,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::new(format!(
            "folders nested deeper than {MAX_DEPTH} levels (a symbolic link loop?)"
        ))
        .with_path(dir));
    }
    for entry in list(dir)? {
        if entry.is_dir {
            let inner = match prefix {
                Ok(p) => match entry.name.to_str() {
                    Some(name) => Ok(format!("{p}{name}/")),
                    None => Err(entry.clone()),
                },
                Err(on_the_way) => Err(on_the_way.clone()),
            };
            walk(&entry.path, &inner, depth + 1, label, folder)?;
        } else if entry.is_image {
            let prefix = prefix.as_ref().map_err(Listed::text_error)?;
            let rel = format!("{prefix}{}", entry.text()?);
            folder.images.push(ImageEntry {
                path: entry.path,
                name: rel,
                label: label.cloned(),
            });
        } else {
            folder.others.push(entry.path);
        }
    }
    Ok(())
}

/// Lists the images of a folder (see the [module](self) docs for the layout).
///
/// # Errors
/// An unreadable directory, folders nested too deep, or a class folder or image whose name is
/// not valid UTF-8.
pub fn scan(dir: &Path) -> Result<ImageFolder> {
    let entries = list(dir)?;
    let mut folder = ImageFolder::default();
    for entry in &entries {
        if entry.is_dir {
            folder.classes.push(entry.text()?);
        }
    }
    let labelled = !folder.classes.is_empty();
    let mut index = 0_i64;
    for entry in entries {
        if entry.is_dir {
            let name = entry.text()?;
            let label = (index, name.clone());
            index += 1;
            walk(
                &entry.path,
                &Ok(format!("{name}/")),
                1,
                Some(&label),
                &mut folder,
            )?;
        } else if !entry.is_image {
            folder.others.push(entry.path);
        } else if labelled {
            folder.skipped.push(entry.path);
        } else {
            folder.images.push(ImageEntry {
                name: entry.text()?,
                path: entry.path,
                label: None,
            });
        }
    }
    Ok(folder)
}

/// SplitMix64: a small, fast generator whose output is the same on every platform.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (n > 0), without modulo bias.
    fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// Shuffles `items` in place (Fisher-Yates) with a generator seeded by `seed`: the same seed
/// gives the same order on every machine and in every version of this crate.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = SplitMix64(seed);
    for i in (1..items.len()).rev() {
        let j = usize::try_from(rng.below(i as u64 + 1)).unwrap_or(0);
        items.swap(i, j);
    }
}

/// The file names of `n` shards of `out`: `out` itself for one shard;
/// `prefix-00000-of-00004.tfrecord` (the extension and a compression suffix such as `.gz`
/// kept) for TFRecord; `out/part-00000`, `out/part-00001`, ... (OneFlow's layout, `out` a
/// directory) for OFRecord.
pub fn shard_paths(out: &Path, n: usize, format: Format) -> Vec<PathBuf> {
    if format == Format::OfRecord {
        return (0..n).map(|i| out.join(format!("part-{i:05}"))).collect();
    }
    if n == 1 {
        return vec![out.to_path_buf()];
    }
    let name = out
        .file_name()
        .map_or_else(|| "shard".to_string(), |n| n.to_string_lossy().into_owned());
    let (rest, comp) = [".gz", ".zlib", ".zz"]
        .iter()
        .find_map(|s| name.strip_suffix(s).map(|r| (r.to_string(), *s)))
        .unwrap_or((name.clone(), ""));
    let (stem, ext) = match rest.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (rest.clone(), String::new()),
    };
    (0..n)
        .map(|i| out.with_file_name(format!("{stem}-{i:05}-of-{n:05}{ext}{comp}")))
        .collect()
}

/// How [`write_images`] writes.
#[derive(Clone, Debug)]
pub struct ImageOptions {
    /// Shuffle the images (with `seed`) [default: true].
    pub shuffle: bool,
    /// The shuffle seed [default: 0].
    pub seed: u64,
    /// The number of output files [default: 1].
    pub shards: usize,
    /// TFRecord files of `tf.train.Example`s, or OFRecord `part-NNNNN` files in a directory.
    pub format: Format,
    /// The output compression [default: from the output name for TFRecord, none for OFRecord].
    pub compression: Option<Compression>,
    /// The gzip / zlib level, 0 (store) to 9 (smallest) [default: 6].
    pub level: u32,
    /// Show a progress bar on standard error (only when it is a terminal).
    pub progress: bool,
}

impl Default for ImageOptions {
    fn default() -> Self {
        ImageOptions {
            shuffle: true,
            seed: 0,
            shards: 1,
            format: Format::TfRecord,
            compression: None,
            level: 6,
            progress: false,
        }
    }
}

/// What [`write_images`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageSummary {
    /// The class names, in label order.
    pub classes: Vec<String>,
    /// The files written and how many records each holds.
    pub files: Vec<(PathBuf, u64)>,
    /// Image files left out (directly in a directory with class folders).
    pub skipped: Vec<PathBuf>,
    /// Files left out because their extension is not an image's.
    pub others: Vec<PathBuf>,
}

impl ImageSummary {
    /// The number of records written.
    pub fn records(&self) -> u64 {
        self.files.iter().map(|f| f.1).sum()
    }
}

/// The images of `folder` in output order: shuffled with `seed`, or in name order.
pub fn ordered(folder: &ImageFolder, shuffled: bool, seed: u64) -> Vec<&ImageEntry> {
    let mut v: Vec<&ImageEntry> = folder.images.iter().collect();
    if shuffled {
        shuffle(&mut v, seed);
    }
    v
}

/// Writes one record per image of `dir` to `out` (see the [module](self) docs), split into
/// `opts.shards` files of consecutive records (sizes differ by at most one). Files are written
/// under temporary names and renamed into place when all are complete.
///
/// # Errors
/// An unreadable directory or image, an image header that does not read, an image cut short,
/// no images at all, or an output that cannot be written; errors name the file.
///
/// ```no_run
/// use tfrecord_import::images::{write_images, ImageOptions};
///
/// let opts = ImageOptions { shards: 4, seed: 7, ..ImageOptions::default() };
/// let summary = write_images("flower_photos".as_ref(), "flowers.tfrecord".as_ref(), &opts)?;
/// println!("{} images in {} classes", summary.records(), summary.classes.len());
/// # Ok::<(), tfrecord_import::Error>(())
/// ```
pub fn write_images(dir: &Path, out: &Path, opts: &ImageOptions) -> Result<ImageSummary> {
    let folder = scan(dir)?;
    if folder.images.is_empty() {
        return Err(Error::new(format!(
            "no image files ({IMAGE_EXTENSIONS}) found in the folder or its class sub-folders"
        ))
        .with_path(dir));
    }
    let shards = opts.shards.max(1);
    let order = ordered(&folder, opts.shuffle, opts.seed);
    let paths = shard_paths(out, shards, opts.format);
    if opts.format == Format::OfRecord {
        fs::create_dir_all(out).map_err(|e| Error::from(e).with_path(out))?;
    }
    let progress = Progress::new(opts.progress, Some(order.len() as u64), "images");
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let cleanup = |staged: &[(PathBuf, PathBuf)]| {
        for (tmp, _) in staged {
            let _ = fs::remove_file(tmp);
        }
    };
    let mut files = Vec::new();
    let n = order.len();
    for (i, dest) in paths.iter().enumerate() {
        let (lo, hi) = (i * n / shards, (i + 1) * n / shards);
        let compression = opts.compression.unwrap_or_else(|| match opts.format {
            Format::OfRecord => Compression::None,
            _ => Compression::from_path(dest),
        });
        let wopts = WriterOptions::new()
            .format(opts.format)
            .compression(compression)
            .level(opts.level);
        let tmp = dest.with_file_name(format!(
            ".{}.tmp-{}",
            dest.file_name()
                .map_or_else(|| "shard".into(), |n| n.to_string_lossy()),
            std::process::id()
        ));
        let result = (|| -> Result<u64> {
            let mut w = RecordWriter::create(&tmp, wopts)?.with_path(dest);
            for entry in order.get(lo..hi).unwrap_or(&[]) {
                let row = entry.read_row()?;
                w.write(&row.encode(opts.format)?)?;
                progress.inc(1);
            }
            let count = w.records_written();
            w.finish()?.sync_all()?;
            Ok(count)
        })();
        staged.push((tmp, dest.clone()));
        match result {
            Ok(count) => files.push((dest.clone(), count)),
            Err(e) => {
                cleanup(&staged);
                return Err(e);
            }
        }
    }
    for (tmp, dest) in &staged {
        if let Err(e) = fs::rename(tmp, dest) {
            cleanup(&staged);
            return Err(Error::from(e).with_path(dest));
        }
    }
    progress.finish();
    Ok(ImageSummary {
        classes: folder.classes,
        files,
        skipped: folder.skipped,
        others: folder.others,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        shuffle(&mut a, 3);
        shuffle(&mut b, 3);
        assert_eq!(a, b);
        let mut c: Vec<u32> = (0..50).collect();
        shuffle(&mut c, 4);
        assert_ne!(a, c);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        // Pinned: the order must not change between versions.
        let mut p: Vec<u32> = (0..8).collect();
        shuffle(&mut p, 0);
        assert_eq!(p, PINNED);
    }

    const PINNED: [u32; 8] = [2, 5, 0, 3, 4, 6, 1, 7];

    #[test]
    fn shard_names() {
        let names = |out: &str, n, f| {
            shard_paths(Path::new(out), n, f)
                .into_iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("d/x.tfrecord", 1, Format::TfRecord), ["d/x.tfrecord"]);
        assert_eq!(
            names("d/x.tfrecord", 2, Format::TfRecord),
            ["d/x-00000-of-00002.tfrecord", "d/x-00001-of-00002.tfrecord"]
        );
        assert_eq!(
            names("x.tfrecord.gz", 2, Format::TfRecord)[1],
            "x-00001-of-00002.tfrecord.gz"
        );
        assert_eq!(names("out", 2, Format::TfRecord)[0], "out-00000-of-00002");
        assert_eq!(
            names("o", 2, Format::OfRecord),
            ["o/part-00000", "o/part-00001"]
        );
    }
}
