//! dmsh-spv: SPIR-V emission from dmsh IR, plus the reflection record.
