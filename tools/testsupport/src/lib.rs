//! dmsh-testsupport: what the test suites share and no library should ship — independent
//! reference cases (glslang's SPIR-V of the corpus GLSL with deterministic inputs, for the
//! exec and render comparisons), the child-process harness of the execution tests (lavapipe
//! has no fault isolation), what the corpus' text says (`corpus_text`) and known-failure lists
//! (`known`). Only dev-dependencies use it.

#![warn(missing_docs)]

pub mod child;
pub mod corpus_text;
pub mod known;
pub mod reference;

pub use dmsh_vk::spirv_val;
