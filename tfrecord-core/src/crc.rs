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
    mask(crc32c::crc32c(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_check_value() {
        // The standard CRC-32C check value (RFC 3720, B.4).
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        // 32 bytes of zeros, from RFC 3720 B.4.
        assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8a91_36aa);
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
