//! Maxwell instructions: [`Instr`] is the engine's instruction ([`crate::engine::Instr`])
//! for [`Maxwell`], plus what is Maxwell's own (the constant-buffer operand rule).

use crate::engine;
use crate::error::Error;
use crate::field::Field;
use crate::maxwell::Maxwell;
use crate::opcode::Opcode;

pub use crate::engine::{FormId, Pred, Reg};

/// A decoded Maxwell instruction. Cheap to copy; operands are read on demand from the bits
/// through the form's field table.
pub type Instr = engine::Instr<Maxwell>;

/// A constant-buffer operand `c[bank][offset]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cbuf {
    /// Bank index.
    pub bank: u32,
    /// Byte offset (may be negative when indexed by a register).
    pub offset: i64,
    /// Index register, if the form has one (`LDC`), else `None`.
    pub index: Option<Reg>,
}

/// Decodes one 64-bit instruction word (not a scheduling word).
#[inline]
pub fn decode(bits: u64) -> Result<Instr, Error> {
    Instr::decode_at(bits, 0)
}

/// Decodes one instruction word found at byte `offset` of its stream (for the error).
#[inline]
pub fn decode_at(bits: u64, offset: u64) -> Result<Instr, Error> {
    Instr::decode_at(bits, offset)
}

/// Finds a form's id by its table name (e.g. `"FADD_R"`).
pub fn form_id(name: &str) -> Option<FormId> {
    Instr::form_id(name)
}

impl engine::Instr<Maxwell> {
    /// The constant-buffer operand, if the form has one (for `LDC` the offset is `Imm` and
    /// the index register `Ra`).
    pub fn cbuf(&self) -> Option<Cbuf> {
        let bank = self.get(Field::CbufBank)? as u32;
        let ldc = matches!(self.opcode(), Opcode::Ldc);
        let offset = if ldc {
            self.get(Field::Imm)?
        } else {
            self.get(Field::CbufOffset)?
        };
        let index = if ldc { self.reg(Field::Ra) } else { None };
        Some(Cbuf {
            bank,
            offset,
            index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mods;

    #[test]
    fn operands_of_known_words() {
        // MOV R1, c[0x0][0x20]
        let i = decode(0x4c98078000870001).unwrap();
        assert_eq!(i.opcode(), Opcode::Mov);
        assert_eq!(i.reg(Field::Rd), Some(Reg(1)));
        assert_eq!(
            i.cbuf(),
            Some(Cbuf {
                bank: 0,
                offset: 0x20,
                index: None
            })
        );
        // LDC.64 R2, c[0x0][R2+0x140]
        let i = decode(0xef95000014070202).unwrap();
        assert_eq!(
            i.cbuf(),
            Some(Cbuf {
                bank: 0,
                offset: 0x140,
                index: Some(Reg(2))
            })
        );
        // @!P0 BRA 0x170 at 0xd0
        let i = decode(0xe24000000988000f).unwrap();
        assert_eq!(i.guard(), (Pred(0), true));
        assert_eq!(i.target(0xd0), Some(0x170));
        // ISETP.EQ.U32.AND P0, PT, R4, -0x1, PT
        let i = decode(0x376403fffff70407).unwrap();
        assert_eq!(i.get(Field::Imm), Some(-1));
        assert_eq!(i.modifier(Field::Cmp), Some(".EQ"));
        assert_eq!(i.modifier_as(Field::Cmp), Some(mods::Icmp::Eq));
        assert_eq!(i.modifier_as(Field::Signed), Some(mods::U32::U32));
        assert_eq!(
            i.modifier_as::<mods::Fcmp>(Field::Cmp),
            None,
            "ISETP's Cmp is ICMP"
        );
        assert_eq!(
            i.modifier_as::<mods::Rnd>(Field::Rnd),
            None,
            "no such field"
        );
        assert_eq!(i.pred(Field::Pd2), Some(Pred::PT));
        // FMUL R15, R6, 0.25
        let i = decode(0x3868003e8007060f).unwrap();
        assert_eq!(i.float(Field::Imm), Some(0.25));
        assert_eq!(i.imm32(Field::Imm), Some(0.25f32.to_bits()));
    }

    /// The all-zero word (padding after a program's final self-branch) is what nvdisasm 12.4
    /// prints for it (`-b SM53`): a bare `NOP`, an ordinary no-op, re-encoding to zero.
    #[test]
    fn zero_word_is_nop() {
        let i = decode(0).expect("the zero word decodes");
        assert_eq!(i.opcode(), Opcode::Nop);
        assert_eq!(i.print(0x8, 0), "NOP");
        assert_eq!(i.guard(), (Pred::PT, false));
        assert_eq!(i.encode(), 0);
        // nvdisasm also prints NOP for bit 63 alone (which would otherwise be `@P0 LD.U8 R0,
        // [R0], P0`); the bit is kept for the round trip.
        let j = decode(1 << 63).expect("bit 63 alone decodes");
        assert_eq!(
            (j.opcode(), j.form(), j.print(0x8, 0)),
            (Opcode::Nop, i.form(), "NOP".into())
        );
        assert_eq!(j.encode(), 1 << 63);
        // Any other bit: nvdisasm rejects the word (0x1, 0x70000) or it is another instruction.
        assert!(decode(1).is_err());
        assert!(decode(0x7_0000).is_err());
        assert_eq!(decode((1 << 63) | 1).map(|i| i.opcode()), Ok(Opcode::Ld));
    }

    #[test]
    fn build_and_with() {
        let f = form_id("IADD_R").unwrap();
        let i = Instr::build(
            f,
            &[
                (Field::Rd, 3),
                (Field::Ra, 4),
                (Field::Rb, 5),
                (Field::Guard, 7),
            ],
        )
        .unwrap();
        assert_eq!(i.print(0, 0), "IADD R3, R4, R5");
        let j = i.with(Field::X, 1).unwrap();
        assert_eq!(j.print(0, 0), "IADD.X R3, R4, R5");
        assert_eq!(j.encode(), j.bits());
        assert!(matches!(
            i.with(Field::Rd, 256),
            Err(Error::FieldRange { .. })
        ));
        assert!(matches!(i.with(Field::Lut, 1), Err(Error::NoField { .. })));
        assert!(matches!(
            decode(0xffff_ffff_ffff_ffff),
            Err(Error::UnknownEncoding { .. })
        ));
    }
}
