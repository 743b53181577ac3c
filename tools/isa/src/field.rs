//! The `Field` enum: names of the operands and modifiers an instruction form can carry,
//! generated at build time from `src/fields.tbl` (the vocabulary every ISA's table shares).
//!
//! The same name means the same thing in every form (`Rd` is the destination register,
//! `Ftz` the flush-to-zero flag, ...); which fields a form has is in the table.

include!(concat!(env!("OUT_DIR"), "/field.rs"));
