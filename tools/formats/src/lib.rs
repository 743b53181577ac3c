//! dmsh-formats: the binary formats every stage shares, parsed in one place — NVN and NVN2
//! control sections ([`control`]), code areas and their layouts ([`code`]; where the
//! instructions start in NVN, uam and DKSH files: [`code_area`]), the DKSH container ([`dksh`]), the shader
//! program header ([`sph`]: its raw words, the typed `SphInfo` decode and the I/O masks), the shader key the host computes ([`key`]) and the
//! stage names of the tables ([`stage`]). The scanner, the translator's CLI and the runtime
//! loader use these; nothing else parses these bytes. Dependencies: `sha2` only (no
//! compression, parallelism or file system), so the runtime can link it.

#![warn(missing_docs)]

pub mod bytes;
pub mod code;
pub mod code_area;
pub mod control;
pub mod dksh;
pub mod key;
pub mod sph;
pub mod stage;

pub use stage::Stage;
