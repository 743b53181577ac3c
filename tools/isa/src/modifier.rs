//! Typed modifiers: every `enum` line of a table is a Rust enum (generated at build time into
//! [`crate::mods`]) implementing [`Modifier`], read with [`crate::Instr::modifier_as`].
//!
//! Variant names come from nvdisasm's text (see [`crate::table_syntax::variant_name`]): the
//! runs of letters and digits, each capitalised, joined (`.F16` → `F16`, `SR_TID.X` →
//! `SrTidX`, `.U32.U32` → `U32U32`); `N` in front of a leading digit (`.64` → `N64`, `2D` →
//! `N2d`); `_` (prints nothing) is `Default` unless the table names it (`_=Rn`: `RND`'s
//! default is round-to-nearest); entries without letters or digits are named in the table
//! (`-=Neg`); `?` (a value nvdisasm rejects) has no variant. Entries that print the same text
//! are one variant ([`Modifier::from_value`] maps every value that prints it).

use std::fmt::{Debug, Display};

/// A modifier enum of a table: its variants are the texts nvdisasm prints for a field.
pub trait Modifier: Copy + Eq + Debug + Display + 'static {
    /// The ISA whose table defines the enum.
    type Isa: crate::engine::Isa;
    /// Index of the enum in its table ([`crate::engine::Table::enums`]).
    const ENUM: u16;
    /// The enum's name in the table (`FTYPE`).
    const TABLE_NAME: &'static str;
    /// The variant a field value selects (`None`: a value nvdisasm rejects).
    fn from_value(value: u64) -> Option<Self>;
    /// nvdisasm's text (`""` when it prints nothing).
    fn name(self) -> &'static str;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, mods, table::table, Field};

    #[test]
    fn generated_enums_follow_the_table() {
        let t = table();
        assert_eq!(
            t.enums[mods::Ftype::ENUM as usize].0,
            mods::Ftype::TABLE_NAME
        );
        assert_eq!(t.enums[mods::Sreg::ENUM as usize].0, "SREG");
        assert_eq!(
            mods::Ftype::ALL,
            [mods::Ftype::F16, mods::Ftype::F32, mods::Ftype::F64]
        );
        assert_eq!(mods::Ftype::from_value(0), None, "`?`: rejected");
        assert_eq!(mods::Ldsz::N64.name(), ".64");
        assert_eq!(mods::Rnd::Rn.to_string(), "");
        // F2IRND prints `.FLOOR` for values 1 and 5: one variant.
        assert_eq!(mods::F2irnd::from_value(5), Some(mods::F2irnd::Floor));
        assert_eq!(mods::F2irnd::Floor.value(), 1);
    }

    #[test]
    fn typed_and_text_modifiers_agree() {
        // FADD.RM R0, R1, R2 and S2R R0, SR_TID.X
        let i = decode(0x5c58_1000_0217_0100 | 1 << 39).unwrap();
        assert_eq!(i.modifier_as(Field::Rnd), Some(mods::Rnd::Rm));
        assert_eq!(i.modifier(Field::Rnd), Some(".RM"));
        let s2r = decode(0xf0c8000002170000).unwrap();
        let sr: mods::Sreg = s2r.modifier_as(Field::Sreg).unwrap();
        assert_eq!((sr, sr.name()), (mods::Sreg::SrTidX, "SR_TID.X"));
    }
}
