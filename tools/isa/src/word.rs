//! Instruction words: the [`Word`] trait the engine is generic over, for Maxwell's 64-bit and
//! Ampere's 128-bit instructions. Fields are read and written as bit pieces of at most 64
//! bits (a piece may cross bit 64 of a 128-bit word).

use std::fmt::{Debug, LowerHex};
use std::hash::Hash;
use std::ops::{BitAnd, BitOr, Not};

/// An instruction word of a fixed width.
pub trait Word:
    Copy
    + Eq
    + Ord
    + Hash
    + Debug
    + Default
    + LowerHex
    + Send
    + Sync
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + Not<Output = Self>
{
    /// Width in bits.
    const BITS: u32;
    /// Width in bytes (the distance from one instruction to the next in a plain stream).
    const BYTES: usize;
    /// The all-zero word.
    const ZERO: Self;

    /// `len` bits (1..=64) from bit `lo` on, as the low bits of a `u64`.
    fn bits(self, lo: u32, len: u32) -> u64;
    /// The word with `len` bits (1..=64) from bit `lo` on replaced by the low bits of `raw`.
    fn with_bits(self, lo: u32, len: u32, raw: u64) -> Self;
    /// Number of set bits.
    fn count_ones(self) -> u32;
    /// The word, zero-extended.
    fn to_u128(self) -> u128;
    /// The low `BITS` bits of `v`.
    fn from_u128(v: u128) -> Self;
    /// A little-endian word from exactly `BYTES` bytes (`None` for another length).
    fn from_le_slice(b: &[u8]) -> Option<Self>;
}

/// The low `len` bits set (`len` 1..=64): one shift, no branch (field extraction is on
/// the lifter's path for every operand).
#[inline(always)]
fn low(len: u32) -> u64 {
    debug_assert!((1..=64).contains(&len));
    !0u64 >> (64 - len)
}

/// `Word` for an unsigned integer type of `$bytes` bytes.
macro_rules! word {
    ($t:ty, $bytes:literal) => {
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            const BYTES: usize = $bytes;
            const ZERO: Self = 0;

            #[inline(always)]
            fn bits(self, lo: u32, len: u32) -> u64 {
                (self >> lo) as u64 & low(len)
            }

            #[inline(always)]
            fn with_bits(self, lo: u32, len: u32, raw: u64) -> Self {
                let m = low(len) as $t;
                (self & !(m << lo)) | ((raw as $t & m) << lo)
            }

            #[inline(always)]
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }

            #[inline(always)]
            fn to_u128(self) -> u128 {
                self as u128
            }

            #[inline(always)]
            fn from_u128(v: u128) -> Self {
                v as $t
            }

            #[inline]
            fn from_le_slice(b: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(b.try_into().ok()?))
            }
        }
    };
}

word!(u64, 8);
word!(u128, 16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_across_bit_64() {
        let w: u128 = 0xabcd << 56;
        assert_eq!(w.bits(56, 16), 0xabcd);
        assert_eq!(w.bits(64, 8), 0xab);
        let v = 0u128.with_bits(60, 16, 0x1234);
        assert_eq!(v, 0x1234 << 60);
        assert_eq!(v.with_bits(60, 16, 0), 0);
        assert_eq!((!0u128).bits(64, 64), !0);
        assert_eq!(0u64.with_bits(0, 64, !0), !0);
        assert_eq!(0xf0u64.bits(4, 4), 0xf);
        assert_eq!(
            u128::from_le_slice(&[1; 16]),
            Some(u128::from_le_bytes([1; 16]))
        );
        assert_eq!(u64::from_le_slice(&[1; 7]), None);
    }
}
