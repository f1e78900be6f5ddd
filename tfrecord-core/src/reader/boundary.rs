//! Where whole frames end in bytes cut from a record stream: a frame's length is trusted only
//! once it passes its CRC (TFRecord) and the options' `max_record_len`.

use super::options::ReaderOptions;
use crate::compression::Format;
use crate::crc::masked_crc32c;

/// The framing of `opts`' format: header and footer bytes around each payload.
fn framing(opts: &ReaderOptions) -> (usize, usize) {
    match opts.format {
        Format::TfRecord => (12, 4),
        Format::OfRecord => (8, 0),
    }
}

/// What starts at the front of `data`: a frame's length is trusted only once it passes its
/// CRC (TFRecord) and the options' `max_record_len`.
pub(super) fn frame_at(opts: &ReaderOptions, data: &[u8]) -> Frame {
    let (header, footer) = framing(opts);
    let Some(head) = data.get(..header) else {
        return Frame::Partial(header);
    };
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&head[..8]);
    if opts.format == Format::TfRecord {
        let stored = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if stored != masked_crc32c(&len_bytes) {
            return Frame::Bad;
        }
    }
    let len = u64::from_le_bytes(len_bytes);
    // An OFRecord length is signed: a negative one is above every limit here.
    if len > opts.max_record_len {
        return Frame::Bad;
    }
    match usize::try_from(len)
        .ok()
        .and_then(|l| l.checked_add(header + footer))
    {
        Some(total) if total <= data.len() => Frame::Whole(total),
        Some(total) => Frame::Partial(total),
        None => Frame::Bad,
    }
}

/// The frame at the front of some bytes.
pub(super) enum Frame {
    /// A whole frame of this many bytes, its length checked.
    Whole(usize),
    /// A frame that needs this many bytes, more than there are.
    Partial(usize),
    /// A length that fails its CRC or the limit.
    Bad,
}
