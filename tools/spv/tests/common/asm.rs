//! Maxwell instructions for hand-assembled test programs: dmsh-isa's encoder (maxwell.tbl)
//! and a few raw words. Instruction k of a program lies at byte [`at`]`(k)`: a scheduling
//! word comes before every three instructions.

#![allow(dead_code)]

use dmsh_isa::{form_id, Field, Instr};

/// Guard PT (bits 16-18).
pub const G: u64 = 7 << 16;

/// One instruction through the encoder (unguarded unless `Guard` is given).
pub fn ins(form: &str, f: &[(Field, i64)]) -> u64 {
    let mut v = vec![(Field::Guard, 7)];
    v.extend_from_slice(f);
    Instr::build(form_id(form).expect("form"), &v)
        .expect("encode")
        .bits()
}

/// `LDC.32 Rd, c[bank][off]`.
pub fn ldc(rd: u64, bank: u64, off: u64) -> u64 {
    0xef90_0000_0000_0000 | 4 << 48 | bank << 36 | off << 20 | 0xff << 8 | rd | G
}

/// `MOV32I Rd, imm`.
pub fn mov32i(rd: u64, imm: u64) -> u64 {
    0x0100_0000_0007_f000 | imm << 20 | rd
}

/// `MOV Rd, Rs`.
pub fn mov(rd: u64, rs: u64) -> u64 {
    0x5c98_0780_0007_0000 | rs << 20 | rd
}

/// `LOP.OR Rd, Ra, Rb`.
pub fn lop_or(rd: u64, ra: u64, rb: u64) -> u64 {
    0x5c40_0000_0000_0000 | 1 << 41 | rb << 20 | ra << 8 | rd | 7 << 48 | G
}

/// `ISETP.NE.AND Pd, PT, Ra, imm, PT`.
pub fn isetp_ne(pd: i64, ra: i64, imm: i64) -> u64 {
    ins(
        "ISETP_I",
        &[
            (Field::Pd, pd),
            (Field::Pd2, 7),
            (Field::Ra, ra),
            (Field::Imm, imm),
            (Field::Cmp, 5),
            (Field::Pc, 7),
        ],
    )
}

/// Byte offset of instruction k (a scheduling word before every three instructions).
pub fn at(k: usize) -> i64 {
    8 * (k + k / 3 + 1) as i64
}

/// `@Pp BRA` (or `@!Pp`) from instruction `from` to instruction `to`.
pub fn bra(p: i64, neg: bool, from: usize, to: usize) -> u64 {
    ins(
        "BRA",
        &[
            (Field::Guard, p),
            (Field::GuardNeg, neg as i64),
            (Field::Target, at(to) - at(from) - 8),
            (Field::CcTest, 15),
        ],
    )
}
