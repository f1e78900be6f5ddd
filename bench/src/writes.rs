//! The writing ops: `write_prebuilt`, `write_example`, `write_build`, and `convert` (not a
//! protocol op: a file re-encoded as `tfrecord convert` does). Every output is read back and
//! compared with the source's records.

use std::path::Path;

use tfrecord_core::convert;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{
    Compression, Format, Message, ReaderOptions, RecordReader, RecordWriter, Writer, WriterOptions,
};

use crate::records::{Shape, decode};
use crate::timing::{measure, measure_setup};
use crate::workload::{Ctx, Loaded, PEER, check_records};

/// Reads a written file back (with `opts`) and checks each of its records against the source
/// record at the same index: `same(written, source)`.
fn read_back(
    path: &Path,
    opts: ReaderOptions,
    loaded: &Loaded,
    same: impl Fn(&[u8], &[u8]) -> Result<bool, String>,
) -> Result<(), String> {
    let mut r = RecordReader::open(path, opts).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let mut i = 0usize;
    while r.read_into(&mut buf).map_err(|e| e.to_string())? {
        let want = loaded
            .ranges
            .get(i)
            .map(|rg| &loaded.buf[rg.clone()])
            .ok_or("the written file holds more records than the source")?;
        if !same(&buf, want)? {
            return Err(format!(
                "{}: record {i} differs from the source",
                path.display()
            ));
        }
        i += 1;
    }
    if i != loaded.ranges.len() {
        return Err(format!("{}: {i} records written", path.display()));
    }
    Ok(())
}

/// Reads a written file back and compares it with the source records: byte for byte when
/// `exact`, else as decoded messages where the bytes differ.
fn verify_written(
    path: &Path,
    compression: Compression,
    loaded: &Loaded,
    exact: bool,
    is_seq: bool,
) -> Result<(), String> {
    let opts = ReaderOptions::new().compression(compression);
    read_back(path, opts, loaded, |buf, want| {
        Ok(if exact || buf == want {
            buf == want
        } else if is_seq {
            tensorflow::SequenceExample::decode(buf).ok()
                == tensorflow::SequenceExample::decode(want).ok()
        } else {
            tensorflow::Example::decode(buf).ok() == tensorflow::Example::decode(want).ok()
        })
    })
}

/// `write_prebuilt`, and for uncompressed workloads `write_example` and `write_build`.
pub(crate) fn writes<S: Shape>(c: &Ctx<'_>, loaded: &Loaded) -> Result<(), String> {
    let sc = c.sc;
    let reps = c.args.reps;
    let compression = c.opts.get_compression();
    let gz = compression != Compression::None;
    std::fs::create_dir_all(&c.args.out).map_err(|e| format!("{}: {e}", c.args.out.display()))?;
    let out = c.args.out.join(format!(
        "{PEER}_{}.tfrecord{}",
        sc.name,
        if gz { ".gz" } else { "" }
    ));
    let wopts = WriterOptions::new().compression(compression);
    let recs = loaded.records();
    let size_check = |r: &Result<u64, String>| -> Result<(), String> {
        let n = r.clone()?;
        if n != sc.num_records {
            return Err(format!("{}: {n} records written", sc.name));
        }
        if !gz {
            let len = std::fs::metadata(&out).map_err(|e| e.to_string())?.len();
            if len != sc.file_bytes {
                return Err(format!(
                    "{}: wrote {len} bytes, the source file has {}",
                    out.display(),
                    sc.file_bytes
                ));
            }
        }
        Ok(())
    };
    if c.args.want("write_prebuilt", "st") {
        let t = measure(
            reps,
            || -> Result<u64, String> {
                let mut w = RecordWriter::create(&out, wopts.clone()).map_err(|e| e.to_string())?;
                for r in &recs {
                    w.write(r).map_err(|e| e.to_string())?;
                }
                let n = w.records_written();
                w.finish().map_err(|e| e.to_string())?;
                Ok(n)
            },
            size_check,
        )?;
        verify_written(&out, compression, loaded, true, sc.is_sequence())?;
        let note = if gz {
            "RecordWriter::create(gzip level 6) + write(&[u8]) + finish; page cache, no fsync"
        } else {
            "RecordWriter::create + write(&[u8]) per record (framing + CRCs, 1 MiB buffer) + finish; page cache, no fsync; output byte-identical"
        };
        c.emit("st", "write_prebuilt", note, &t);
    }
    let want_example = c.args.want("write_example", "st");
    let want_build = c.args.want("write_build", "st");
    if !gz && (want_example || want_build) {
        let values: Vec<S::Values> = recs
            .iter()
            .map(|r| decode::<S>(r).map(|rec| S::values(&rec)))
            .collect::<tfrecord_core::Result<_>>()
            .map_err(|e| e.to_string())?;
        let write_all = |it: &mut dyn Iterator<Item = S::Owned>| {
            let mut w = Writer::<S::Owned, S::C>::create_with(&out, WriterOptions::new())
                .map_err(|e| e.to_string())?;
            let mut n = 0u64;
            for v in it {
                w.write(&v).map_err(|e| e.to_string())?;
                n += 1;
            }
            w.finish().map_err(|e| e.to_string())?;
            Ok(n)
        };
        if want_example {
            let built: Vec<S::Owned> = values.iter().cloned().map(S::build).collect();
            let t = measure(
                reps,
                || -> Result<u64, String> {
                    let mut w = Writer::<S::Owned, S::C>::create_with(&out, WriterOptions::new())
                        .map_err(|e| e.to_string())?;
                    let mut n = 0u64;
                    for v in &built {
                        w.write(v).map_err(|e| e.to_string())?;
                        n += 1;
                    }
                    w.finish().map_err(|e| e.to_string())?;
                    Ok(n)
                },
                size_check,
            )?;
            verify_written(&out, compression, loaded, false, sc.is_sequence())?;
            c.emit(
                "st",
                "write_example",
                "Writer::write(&T) of pre-built derived values: derived encode + framing + CRCs + finish",
                &t,
            );
        }
        if want_build {
            let t = measure_setup(
                reps,
                || values.clone(),
                |vals| write_all(&mut vals.into_iter().map(S::build)),
                size_check,
            )?;
            verify_written(&out, compression, loaded, false, sc.is_sequence())?;
            c.emit(
                "st",
                "write_build",
                "build derived values from owned typed values (moved in) + Writer::write + finish (values cloned before each rep, untimed)",
                &t,
            );
        }
    }
    let _ = std::fs::remove_file(&out);
    Ok(())
}

/// Re-encodes `src` into `to` record by record, as `tfrecord convert` does: with `ofrecord`
/// each `tf.train.Example` decoded, converted (`convert::example_to_ofrecord`) and written as
/// an OFRecord; else each record's bytes copied. Returns the records written.
fn convert_file(
    src: &Path,
    ropts: ReaderOptions,
    to: &Path,
    wopts: WriterOptions,
    ofrecord: bool,
) -> Result<u64, String> {
    let mut r = RecordReader::open(src, ropts).map_err(|e| e.to_string())?;
    let mut w = RecordWriter::create(to, wopts).map_err(|e| e.to_string())?;
    let (mut rec, mut out) = (Vec::new(), Vec::new());
    while r.read_into(&mut rec).map_err(|e| e.to_string())? {
        if ofrecord {
            out.clear();
            convert::example_to_ofrecord_bytes(&rec, &mut out)
                .map_err(|e| format!("{}: record {}: {e}", src.display(), w.records_written()))?;
            w.write(&out)
        } else {
            w.write(&rec)
        }
        .map_err(|e| e.to_string())?;
    }
    let n = w.records_written();
    w.finish().map_err(|e| e.to_string())?;
    Ok(n)
}

/// `convert`: the file re-encoded as `tfrecord convert` does, `ofrecord` into an OFRecord file
/// (`Example` workloads) and `gzip` into a gzip TFRecord (level 6). Each output is read back
/// and compared with the source's records when they are loaded.
pub(crate) fn converts(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    for (variant, format, compression) in [
        ("ofrecord", Format::OfRecord, Compression::None),
        ("gzip", Format::TfRecord, Compression::Gzip),
    ] {
        let ofrecord = format == Format::OfRecord;
        if !c.args.want("convert", variant) || (ofrecord && sc.is_sequence()) {
            continue;
        }
        std::fs::create_dir_all(&c.args.out)
            .map_err(|e| format!("{}: {e}", c.args.out.display()))?;
        let to = c
            .args
            .out
            .join(format!("{PEER}_{}.convert.{variant}", sc.name));
        let wopts = WriterOptions::new().format(format).compression(compression);
        let t = measure(
            c.args.reps,
            || convert_file(&sc.path, c.opts.clone(), &to, wopts.clone(), ofrecord),
            |r| check_records(sc, r),
        )?;
        if let Some(loaded) = c.loaded {
            verify_converted(&to, format, compression, loaded)?;
        }
        let note = format!(
            "not a protocol op: as `tfrecord convert`, RecordReader::read_into + {} + RecordWriter{}; page cache, no fsync",
            if ofrecord {
                "convert::example_to_ofrecord_bytes (each record rewritten on the wire), OFRecord framing"
            } else {
                "the record's bytes copied into a gzip TFRecord (level 6)"
            },
            c.gz_note()
        );
        c.emit(variant, "convert", &note, &t);
    }
    Ok(())
}

/// Reads a converted file back and compares each record with the source's, converted the same
/// way in memory.
fn verify_converted(
    path: &Path,
    format: Format,
    compression: Compression,
    loaded: &Loaded,
) -> Result<(), String> {
    let opts = ReaderOptions::new().format(format).compression(compression);
    read_back(path, opts, loaded, |buf, src| {
        if format != Format::OfRecord {
            return Ok(buf == src);
        }
        let e = tensorflow::Example::decode(src).map_err(|e| e.to_string())?;
        Ok(oneflow::OfRecord::decode(buf).ok() == Some(convert::example_to_ofrecord(&e)))
    })
}

#[cfg(test)]
mod tests {
    use tfrecord_core::{Compression, Encode, Format, ReaderOptions, RecordWriter, WriterOptions};

    use super::{convert_file, verify_converted};
    use crate::records::{CtrShape, Shape};
    use crate::workload::Loaded;

    fn records(n: u64) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                Encode::<<CtrShape as Shape>::C>::encode_to_vec(&CtrShape::build(CtrShape::sample(
                    i,
                )))
            })
            .collect()
    }

    #[test]
    fn conversions_read_back_as_the_source() {
        let dir = tempfile::tempdir().expect("temp dir");
        let src = dir.path().join("ctr.tfrecord");
        let recs = records(40);
        let mut w = RecordWriter::create(&src, WriterOptions::new()).expect("create");
        for r in &recs {
            w.write(r).expect("write");
        }
        w.finish().expect("finish");
        let loaded = |recs: &[Vec<u8>]| {
            let mut l = Loaded {
                buf: Vec::new(),
                ranges: Vec::new(),
                values: 0,
            };
            for r in recs {
                l.ranges.push(l.buf.len()..l.buf.len() + r.len());
                l.buf.extend_from_slice(r);
            }
            l
        };
        let (same, other) = (loaded(&recs), loaded(&records(41)[1..]));
        for (format, compression) in [
            (Format::OfRecord, Compression::None),
            (Format::TfRecord, Compression::Gzip),
        ] {
            let to = dir.path().join("out");
            let wopts = WriterOptions::new().format(format).compression(compression);
            let n = convert_file(
                &src,
                ReaderOptions::new(),
                &to,
                wopts,
                format == Format::OfRecord,
            );
            assert_eq!(n, Ok(40));
            verify_converted(&to, format, compression, &same).expect("the source's records");
            let err = verify_converted(&to, format, compression, &other).expect_err("others");
            assert!(err.ends_with("record 0 differs from the source"), "{err}");
        }
    }
}
