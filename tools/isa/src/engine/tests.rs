//! The engine on a second, synthetic ISA with 128-bit words: forms whose fields sit above bit
//! 64 or cross it decode, print and re-encode bit-exactly through the same code as Maxwell.

use super::{Instr, Isa, Table};
use crate::error::Error;
use crate::field::Field;
use crate::modifier::Modifier;
use std::sync::OnceLock;

/// A made-up 128-bit ISA: opcode in bits 0-11, guard in 12-15, registers 16-39 and 64-71.
const TINY: &str = "
isa tiny 128
index 0_12
guard 12_3 15
place Rd@16_8 Ra@24_8 Rb@32_8 Rc@64_8
enum RND _=Rn .RM .RP .RZ
enum CMPX .F .LT .EQ ?
FADD_W 0x001 FADD{Rnd@78_2#RND}{Ftz@80=.FTZ} {Rd}, {NegA@81=-}{Ra}{~0}, {Rb}, {Rc}
MOV_W  0x002 MOV32I {Rd}, {Imm@60_32:X}
BRA_W  0x003 noguard BRA {Target@90_24:T}
SETP_W 0x004 ISETP{Cmp@100_2#CMPX} {Pd@84:P}, {Rd}, {Imm@40_4+120_4:S}
";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Tiny;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum TinyOp {
    Fadd,
    Mov32i,
    Bra,
    Isetp,
}

impl Isa for Tiny {
    type Word = u128;
    type Opcode = TinyOp;
    const INDEX: (u32, u32) = (0, 12);

    fn table() -> &'static Table<Tiny> {
        static T: OnceLock<Table<Tiny>> = OnceLock::new();
        T.get_or_init(|| Table::parse("tiny.tbl", TINY).unwrap())
    }

    fn opcode(m: &str) -> Option<TinyOp> {
        Some(match m {
            "FADD" => TinyOp::Fadd,
            "MOV32I" => TinyOp::Mov32i,
            "BRA" => TinyOp::Bra,
            "ISETP" => TinyOp::Isetp,
            _ => return None,
        })
    }

    fn mnemonic(op: TinyOp) -> &'static str {
        match op {
            TinyOp::Fadd => "FADD",
            TinyOp::Mov32i => "MOV32I",
            TinyOp::Bra => "BRA",
            TinyOp::Isetp => "ISETP",
        }
    }
}

/// What build.rs would generate for `enum RND` of a table of its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rnd {
    Rn,
    Rm,
    Rp,
    Rz,
}

impl std::fmt::Display for Rnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Modifier for Rnd {
    type Isa = Tiny;
    const ENUM: u16 = 0;
    const TABLE_NAME: &'static str = "RND";
    fn from_value(v: u64) -> Option<Self> {
        [Rnd::Rn, Rnd::Rm, Rnd::Rp, Rnd::Rz]
            .get(v as usize)
            .copied()
    }
    fn name(self) -> &'static str {
        ["", ".RM", ".RP", ".RZ"][self as usize]
    }
}

type T = Instr<Tiny>;

/// Builds a form's instruction, unguarded (`PT`) unless `values` say otherwise.
fn build(form: &str, values: &[(Field, i64)]) -> T {
    let id = T::form_id(form).expect(form);
    let guarded = T::build(id, &[]).is_ok_and(|i| i.has(Field::Guard));
    let mut v = if guarded {
        vec![(Field::Guard, 7)]
    } else {
        vec![]
    };
    v.extend_from_slice(values);
    T::build(id, &v).expect(form)
}

#[test]
fn fields_above_bit_64_decode_print_and_reencode() {
    let i = build(
        "FADD_W",
        &[
            (Field::Guard, 2),
            (Field::GuardNeg, 1),
            (Field::Rd, 1),
            (Field::Ra, 2),
            (Field::Rb, 3),
            (Field::Rc, 4),
            (Field::Rnd, 1),
            (Field::Ftz, 1),
            (Field::NegA, 1),
        ],
    );
    let w = i.bits();
    assert_eq!(w & 0xfff, 1);
    assert_eq!(w >> 64 & 0xff, 4, "Rc at bits 64-71");
    assert_eq!(w >> 78 & 0x7, 0b101, "Rnd 78-79, Ftz 80");
    assert_eq!(i.opcode(), TinyOp::Fadd);
    assert_eq!(i.print(0, 1), "@!P2 FADD.RM.FTZ R1, -R2.reuse, R3, R4");
    assert_eq!(i.modifier(Field::Rnd), Some(".RM"));
    assert_eq!(i.modifier_as(Field::Rnd), Some(Rnd::Rm));
    assert_eq!(i.encode(), w);
    assert_eq!(T::decode(w), Ok(i));
}

#[test]
fn a_field_across_bit_64_and_pieces_on_both_halves() {
    let i = build("MOV_W", &[(Field::Rd, 5), (Field::Imm, 0xdead_beef)]);
    assert_eq!(i.bits() >> 60 & 0xffff_ffff, 0xdead_beef);
    assert_eq!(i.get(Field::Imm), Some(0xdead_beef));
    assert_eq!(i.print(0, 0), "MOV32I R5, 0xdeadbeef");
    assert_eq!(i.encode(), i.bits());

    // Imm: bits 40-43 (low piece) and 120-123 (high piece), signed.
    let s = build(
        "SETP_W",
        &[(Field::Cmp, 2), (Field::Pd, 3), (Field::Imm, -2)],
    );
    assert_eq!(s.bits() >> 40 & 0xf, 0xe);
    assert_eq!(s.bits() >> 120 & 0xf, 0xf);
    assert_eq!(s.print(0, 0), "ISETP.EQ P3, R0, -0x2");
    assert_eq!(s.encode(), s.bits());
}

#[test]
fn targets_count_from_the_next_16_byte_instruction() {
    let b = build("BRA_W", &[(Field::Target, -0x20)]);
    assert_eq!(b.target(0x40), Some(0x30));
    assert_eq!(b.print(0x40, 0), "BRA 0x30");
    assert_eq!(b.guard(), (super::Pred::PT, false));
}

#[test]
fn unknown_and_rejected_words_keep_all_128_bits() {
    let w = 1u128 << 127 | 0x001;
    assert_eq!(
        T::decode_at(w, 0x30),
        Err(Error::UnknownEncoding {
            offset: 0x30,
            bits: w
        })
    );
    // CMPX value 3 is `?`: rejected.
    let ok = build("SETP_W", &[(Field::Cmp, 2)]).bits();
    assert!(T::decode(ok | 1 << 100).is_err());
    assert!(T::decode(0xfff).is_err());
}

#[test]
fn random_words_round_trip() {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let forms = &Tiny::table().forms;
    let mut decoded = 0;
    for k in 0..20_000 {
        let f = &forms[k % forms.len()];
        let w = ((next() as u128) << 64 | next() as u128) & !f.mask | f.value;
        if let Ok(i) = T::decode(w) {
            decoded += 1;
            assert_eq!(i.encode(), w, "{}", f.name);
            assert!(!i.print(0, 0).is_empty());
        }
    }
    assert!(decoded > 15_000, "{decoded}");
}

#[test]
fn a_table_of_another_width_is_refused() {
    let e = Table::<Tiny>::parse("m.tbl", crate::maxwell::TABLE_SOURCE).unwrap_err();
    assert!(e.contains("64-bit words"), "{e}");
}
