//! The typed modifier enums of `src/maxwell.tbl`, one per `enum` line, generated at build time
//! (see [`crate::modifier`] for the naming rule): `mods::Ftype::F32`, `mods::Rnd::Rm`,
//! `mods::Sreg::SrTidX`. `Display` and `name()` give nvdisasm's text.

include!(concat!(env!("OUT_DIR"), "/maxwell_mods.rs"));
