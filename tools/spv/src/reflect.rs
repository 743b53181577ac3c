//! The reflection record written next to every translated shader: the schema is the
//! `dmsh-reflect` crate (one definition for the translator, the runner, the build and the
//! runtime); this module re-exports it.

pub use dmsh_reflect::*;
