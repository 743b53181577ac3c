//! Independent references for tests: SPIR-V compiled from GLSL by glslang (never by our
//! translator), and the dksh corpus' compute shaders with deterministic inputs, so a
//! translation of uam's binary can be run on exactly the same inputs and compared.

pub mod dksh;
pub mod dksh_render;
pub mod glsl;
pub mod translate;
pub mod vulkan_style;
