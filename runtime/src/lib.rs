//! dmsh-runtime: the lean loader a game's host links (docs/runtime.md). It computes the key of
//! the program the game hands to `nvnProgramSetShaders` (through `dmsh_formats::key`), finds
//! the shader in the shader map and the versioned `b-<V>/` folder `dmsh build` writes, checks
//! the chain version, and hands out the reflection as fixed-size C records, so the host's draw
//! path only walks arrays. It links `dmsh-formats` and `dmsh-reflect` only, never the
//! translation toolchain.
//!
//! Stages Metal lacks come as lowered passes (docs/runtime.md, "Lowered geometry and
//! tessellation"): a geometry key's `_b` is its compute kernel, its draw `_p`; a vertex key's
//! capture form `_g`, a fragment key's primitive-ID variant `_q`. Each record says its pass
//! ([`abi::Lowering`], `DmshShader.lowering`); [`Title::lookup_pass`] (`dmsh_lookup_pass`)
//! finds the variants and [`shader::Loaded::check_topology`] (`dmsh_check_topology`) refuses
//! a draw topology a geometry kernel does not assemble.
//!
//! The C ABI is [`ffi`] (declared by `include/dmsh_runtime.h`); Rust hosts use [`Title`].

#![warn(missing_docs)]

pub mod abi;
pub mod c1;
pub mod chain;
pub mod error;
pub mod ffi;
mod files;
pub mod key;
pub mod map;
#[cfg(all(feature = "metal", target_os = "macos"))]
pub mod metal;
pub mod prewarm;
pub mod shader;
pub mod title;
pub mod warm;

pub use error::{Error, Status};
pub use prewarm::WarmRow;
pub use title::{Found, OpenOptions, Title};
