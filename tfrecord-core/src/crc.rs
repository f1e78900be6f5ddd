//! TFRecord's masked CRC32C.

/// The constant TFRecord adds after rotating a CRC32C.
const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC32C the way TFRecord stores it: `((crc >> 15) | (crc << 17)) + 0xa282ead8`.
#[inline]
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// The inverse of [`mask`].
#[inline]
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// The masked CRC32C (Castagnoli, hardware-accelerated where the CPU has it) of `data`.
#[inline]
pub fn masked_crc32c(data: &[u8]) -> u32 {
    mask(crc32c(data))
}

/// The CRC32C (Castagnoli) of `data`.
#[inline]
fn crc32c(data: &[u8]) -> u32 {
    // A 32-bit CRC, returned widened to 64 bits: the cast drops only zeros.
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, data) as u32
}

/// The masked CRC32C of bytes given in pieces, for data too large to hold at once.
pub(crate) struct MaskedCrc32c(crc_fast::Digest);

impl MaskedCrc32c {
    pub(crate) fn new() -> Self {
        MaskedCrc32c(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi))
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    /// The masked CRC32C of every piece so far.
    pub(crate) fn finish(&self) -> u32 {
        // A 32-bit CRC, returned widened to 64 bits: the cast drops only zeros.
        mask(self.0.finalize() as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_give_the_checksum_of_the_whole() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        for cut in [0, 1, 17, 2500, 4999, 5000] {
            let mut crc = MaskedCrc32c::new();
            crc.update(&data[..cut]);
            crc.update(&data[cut..]);
            assert_eq!(crc.finish(), masked_crc32c(&data), "cut at {cut}");
        }
    }

    #[test]
    fn crc32c_check_value() {
        // The standard CRC-32C check value (RFC 3720, B.4).
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        // 32 bytes of zeros, from RFC 3720 B.4.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
    }

    /// CRC-32C bit by bit (reflected polynomial 0x82F63B78, RFC 3720), the definition the
    /// fast one must agree with at every length and alignment.
    fn crc32c_bitwise(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in data {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0x82F6_3B78
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn crc32c_agrees_with_the_definition_at_every_length_and_offset() {
        let data: Vec<u8> = (0..6000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let lengths = (0..300).chain([511, 512, 513, 1023, 1024, 1025, 4095, 4096, 4097, 5000]);
        for len in lengths {
            for offset in [0, 1, 3, 7, 13, 64] {
                let bytes = &data[offset..offset + len];
                assert_eq!(
                    crc32c(bytes),
                    crc32c_bitwise(bytes),
                    "length {len} at {offset}"
                );
            }
        }
    }

    #[test]
    fn mask_roundtrip_and_known_value() {
        for crc in [0u32, 1, 0xffff_ffff, 0x1234_5678, 0xe306_9283] {
            assert_eq!(unmask(mask(crc)), crc);
        }
        // ((c >> 15) | (c << 17)) + 0xa282ead8, computed by hand for c = 1.
        assert_eq!(mask(1), (1u32 << 17).wrapping_add(MASK_DELTA));
    }
}
