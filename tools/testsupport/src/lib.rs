//! dmsh-testsupport: what the test suites share and no library should ship — independent
//! reference cases (glslang's SPIR-V of the corpus GLSL with deterministic inputs, for the
//! exec and render comparisons) and the child-process harness of the execution tests
//! (lavapipe has no fault isolation). Only dev-dependencies use it.

#![warn(missing_docs)]

pub mod child;
pub mod reference;

pub use dmsh_vk::spirv_val;
