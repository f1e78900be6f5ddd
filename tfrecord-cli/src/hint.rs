//! The flag that reads an input as an error says it looks: the library's hints ("read it
//! with gzip compression") in the command line's words, and a TFRecord file read as OFRecord
//! told apart, which OFRecord framing cannot do by itself (it has no checksum to fail).

use std::fs::File;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

use tfrecord_core::{Error, ErrorKind, Format};

/// Whether an input of this command is read as OFRecord.
static READ_AS_OFRECORD: AtomicBool = AtomicBool::new(false);

/// Whether this command's `--compression` is its output's (`convert`), so that its inputs'
/// is `--input-compression`.
static COMPRESSION_IS_OUTPUTS: AtomicBool = AtomicBool::new(false);

/// Notes that `--compression` is the output's in this command.
pub(crate) fn note_compression_is_outputs() {
    COMPRESSION_IS_OUTPUTS.store(true, Ordering::Relaxed);
}

/// The flag of the inputs' compression, as this command's `--help` lists it.
fn input_compression_flag() -> &'static str {
    if COMPRESSION_IS_OUTPUTS.load(Ordering::Relaxed) {
        "--input-compression"
    } else {
        "--compression"
    }
}

/// Notes the container an input is read as.
pub(crate) fn note_input_format(format: Format) {
    if format == Format::OfRecord {
        READ_AS_OFRECORD.store(true, Ordering::Relaxed);
    }
}

/// A line to print after the error `e`: the flag that reads the input as it looks, when the
/// error says how it looks or the input is a TFRecord file read as OFRecord.
pub(crate) fn flag_note(e: &Error) -> Option<String> {
    match e.kind() {
        ErrorKind::NotTfRecord { hint: Some(hint) } => {
            let flag = if hint.contains("gzip") {
                format!("{} gzip", input_compression_flag())
            } else if hint.contains("zlib") {
                format!("{} zlib", input_compression_flag())
            } else if hint.contains("OFRecord") {
                "--input-format ofrecord".into()
            } else {
                return None;
            };
            Some(format!("to read it so, pass {flag}"))
        }
        ErrorKind::Compressed { detail, .. } if detail.contains("read it without compression") => {
            Some(format!(
                "to read it so, pass {} none",
                input_compression_flag()
            ))
        }
        ErrorKind::Decode { .. }
        | ErrorKind::NegativeLength { .. }
        | ErrorKind::LengthTooLarge { .. }
        | ErrorKind::Truncated { .. }
            if READ_AS_OFRECORD.load(Ordering::Relaxed) =>
        {
            let path = e.path()?;
            let mut head = [0u8; 12];
            File::open(path).ok()?.read_exact(&mut head).ok()?;
            starts_like_tfrecord(&head).then(|| {
                format!(
                    "{} starts like a TFRecord file (a length and its checksum), not an \
                     OFRecord file: to read it so, leave out --input-format ofrecord",
                    path.display()
                )
            })
        }
        _ => None,
    }
}

/// Whether `head` is a TFRecord frame header: a length and its masked CRC-32C (odds of about
/// 2^-32 for other bytes).
fn starts_like_tfrecord(head: &[u8; 12]) -> bool {
    let (len, crc) = head.split_at(8);
    crc == tfrecord_core::crc::masked_crc32c(len).to_le_bytes()
}
