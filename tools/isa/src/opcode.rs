//! The `Opcode` enum: one variant per Maxwell mnemonic (the leading word of a form's template
//! in `src/maxwell.tbl`), generated at build time. Variant names: the mnemonic with its first
//! letter upper case and the rest lower case (`HADD2_32I` → `Hadd2_32i`).

include!(concat!(env!("OUT_DIR"), "/maxwell_opcode.rs"));
