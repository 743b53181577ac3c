//! Maxwell scheduling (control) words: one in front of every three instructions.
//!
//! The 64-bit word holds three 21-bit fields (bits 0-20 for the 1st instruction, 21-41 the
//! 2nd, 42-62 the 3rd) and a top bit 63 that is kept as is. Each field is stall (4 bits),
//! yield (1), write barrier (3), read barrier (3), wait-barrier mask (6), reuse flags (4).

/// Scheduling information of one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sched {
    /// Stall cycles (bits 0-3).
    pub stall: u8,
    /// Yield flag (bit 4).
    pub yield_flag: bool,
    /// Write barrier index, 7 = none (bits 5-7).
    pub write_barrier: u8,
    /// Read barrier index, 7 = none (bits 8-10).
    pub read_barrier: u8,
    /// Barriers to wait on, one bit each (bits 11-16).
    pub wait_mask: u8,
    /// Operand reuse flags (bits 17-20): bit 0 = operand A, 1 = B, 2 = C.
    pub reuse: u8,
}

impl Sched {
    /// Decodes a 21-bit field.
    pub fn from_bits(v: u32) -> Sched {
        Sched {
            stall: (v & 0xf) as u8,
            yield_flag: v >> 4 & 1 != 0,
            write_barrier: (v >> 5 & 7) as u8,
            read_barrier: (v >> 8 & 7) as u8,
            wait_mask: (v >> 11 & 0x3f) as u8,
            reuse: (v >> 17 & 0xf) as u8,
        }
    }

    /// Whether this instruction is dual-issued with the one after it (which may be the first
    /// of the next bundle), as nvdisasm shows with `{ A ; B }`: stall 0 with the yield bit
    /// set (true for all 1155 pairs of the corpus and for none of its other instructions).
    pub fn dual_issue(self) -> bool {
        self.stall == 0 && self.yield_flag
    }

    /// Encodes to a 21-bit field.
    pub fn to_bits(self) -> u32 {
        (self.stall as u32 & 0xf)
            | (self.yield_flag as u32) << 4
            | (self.write_barrier as u32 & 7) << 5
            | (self.read_barrier as u32 & 7) << 8
            | (self.wait_mask as u32 & 0x3f) << 11
            | (self.reuse as u32 & 0xf) << 17
    }
}

/// A decoded scheduling word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ctrl {
    /// The three instructions' fields, in order.
    pub slots: [Sched; 3],
    /// Bit 63 (not part of any field; kept for a bit-exact round trip).
    pub top: bool,
}

impl Ctrl {
    /// Decodes a scheduling word.
    pub fn decode(bits: u64) -> Ctrl {
        Ctrl {
            slots: [0, 21, 42].map(|s| Sched::from_bits((bits >> s) as u32 & 0x1f_ffff)),
            top: bits >> 63 != 0,
        }
    }

    /// Encodes back to the 64-bit word.
    pub fn encode(&self) -> u64 {
        let mut v = (self.top as u64) << 63;
        for (i, s) in self.slots.iter().enumerate() {
            v |= (s.to_bits() as u64) << (21 * i);
        }
        v
    }

    /// Whether instruction `i` (0..3) of the bundle is dual-issued with the next instruction
    /// (see [`Sched::dual_issue`]).
    pub fn dual_issue(&self, i: usize) -> bool {
        i < 3 && self.slots[i].dual_issue()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for w in [
            0x001cfc00e22007f6u64,
            0x001fd842fec20ff1,
            0x8000_0000_0000_0000,
            !0,
        ] {
            assert_eq!(Ctrl::decode(w).encode(), w);
        }
        let c = Ctrl::decode(0x001fd842fec20ff1);
        assert_eq!(c.slots[0].reuse, 1);
    }
}
