//! One reader per container kind: compression layers, archives, executables, shader containers.

pub mod bahs;
pub mod bnsh;
pub mod elf;
pub mod glslc;
pub mod mshd;
pub mod ndsr;
pub mod nro;
pub mod nso;
pub mod sarc;
pub mod yaz0;
pub mod zstd;
