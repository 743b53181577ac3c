//! dmsh-isa: NVIDIA Maxwell (sm_50–53) instruction set described as data:
//! decoder, encoder and nvdisasm-compatible printer.
