//! dmsh-cubin: reads CUDA cubin ELF files (kernel code, constant banks, shared and
//! local sizes, parameters) for the test corpus' CUDA ABI.
