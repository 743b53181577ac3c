//! The binding ABI (a profile, not a code path): how constant-bank reads map to resources,
//! built-ins and constants.

use crate::ir::Sys;
use crate::shader::Stage;
use std::collections::BTreeMap;

/// A binding ABI.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Abi {
    /// Nintendo's NVN: uniform buffer r = c[3+r], storage buffer addresses in c0, c1 = the
    /// code area's constant segment.
    Nvn,
    /// deko3d / uam: uniform buffer n = c[2+n], storage buffers and handles in c0.
    Deko3d,
    /// CUDA (the sass test corpus): parameters in c[0x0] from `param_base`; block and grid
    /// size and the stack pointer read from c[0x0] are resolved by the translator.
    Cuda,
    /// Mesa's NVK (NAK-compiled code, tests/corpus/nak): c[0x0] is the root descriptor
    /// table (data), other banks are chosen per shader (`Config::layout`).
    Nvk,
}

impl Abi {
    /// The reflection name.
    pub fn name(self) -> &'static str {
        match self {
            Abi::Nvn => "nvn",
            Abi::Deko3d => "deko3d",
            Abi::Cuda => "cuda",
            Abi::Nvk => "nvk",
        }
    }

    /// The binding layout of textures and images when no graphics profile gives one
    /// (compute): CUDA's parameter handles, deko3d's compute handles; none for NVN.
    pub fn compute_layout(self, cfg: &Config) -> Option<super::layout::BindingLayout> {
        match self {
            Abi::Cuda => Some(super::layout::BindingLayout::cuda(cfg.param_base)),
            Abi::Deko3d => Some(super::layout::BindingLayout::deko3d(Stage::Compute)),
            Abi::Nvn => None,
            Abi::Nvk => cfg.layout.clone(),
        }
    }

    /// Resolves a static constant-bank read the ABI defines (CUDA's driver words).
    pub fn resolve_static(self, cfg: &Config, bank: u8, off: u32) -> Option<Resolved> {
        match self {
            Abi::Cuda if bank == 0 && off < cfg.param_base => {
                let words = cuda_driver_words(cfg.arch);
                Some(match words.iter().find(|w| w.0 == off).map(|w| w.1) {
                    Some(DriverWord::Ntid(k)) => Resolved::Sys(Sys::Ntid(k)),
                    Some(DriverWord::Nctaid(k)) => Resolved::Sys(Sys::Nctaid(k)),
                    Some(DriverWord::Stack) => Resolved::Const(cfg.stack_bytes()),
                    Some(DriverWord::SharedWindow) => Resolved::Const(SHARED_WINDOW),
                    Some(DriverWord::LocalWindow) => Resolved::Const(LOCAL_WINDOW),
                    None => Resolved::Const(0),
                })
            }
            Abi::Deko3d if bank == 0 && cfg.stage == Stage::Compute => match off {
                0x0 | 0x4 | 0x8 => Some(Resolved::Sys(Sys::Ntid((off / 4) as u8))),
                0xc | 0x10 | 0x14 => Some(Resolved::Sys(Sys::Nctaid(((off - 0xc) / 4) as u8))),
                _ => None,
            },
            _ => None,
        }
    }
}

/// What a word of CUDA's driver area (c[0x0] below the parameters) holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DriverWord {
    /// `ntid.{x,y,z}` (the block size).
    Ntid(u8),
    /// `nctaid.{x,y,z}` (the grid size).
    Nctaid(u8),
    /// The initial stack pointer: the top of local memory ([`Config::stack_bytes`]).
    Stack,
    /// The shared-memory window's base in the generic address space ([`SHARED_WINDOW`]).
    SharedWindow,
    /// The local-memory window's base in the generic address space ([`LOCAL_WINDOW`]).
    LocalWindow,
}

/// ptxas's driver area for sm_5x (the sass corpus's sm53 code): every other word reads 0.
pub const CUDA_SM5X: &[(u32, DriverWord)] = &[
    (0x0, DriverWord::SharedWindow),
    (0x4, DriverWord::LocalWindow),
    (0x8, DriverWord::Ntid(0)),
    (0xc, DriverWord::Ntid(1)),
    (0x10, DriverWord::Ntid(2)),
    (0x14, DriverWord::Nctaid(0)),
    (0x18, DriverWord::Nctaid(1)),
    (0x1c, DriverWord::Nctaid(2)),
    (0x20, DriverWord::Stack),
];

/// ptxas's driver area for sm_8x (the sass corpus's sm86 code: `IMAD R2, R2, c[0x0][0x0],
/// R3` is `ctaid.x * ntid.x + tid.x`, `c[0x0][0x28]` seeds R1, the stack pointer; the
/// windows' high words and `c[0x0][0x118]`, the memory descriptor of `.E` accesses, read 0).
pub const CUDA_SM8X: &[(u32, DriverWord)] = &[
    (0x0, DriverWord::Ntid(0)),
    (0x4, DriverWord::Ntid(1)),
    (0x8, DriverWord::Ntid(2)),
    (0xc, DriverWord::Nctaid(0)),
    (0x10, DriverWord::Nctaid(1)),
    (0x14, DriverWord::Nctaid(2)),
    (0x18, DriverWord::SharedWindow),
    (0x20, DriverWord::LocalWindow),
    (0x28, DriverWord::Stack),
];

/// The CUDA driver area of an instruction set's code.
pub fn cuda_driver_words(arch: super::Arch) -> &'static [(u32, DriverWord)] {
    match arch {
        super::Arch::Maxwell => CUDA_SM5X,
        super::Arch::Ampere => CUDA_SM8X,
    }
}

/// Base of the shared-memory window in CUDA's generic address space (as c[0x0][0x0] says).
pub const SHARED_WINDOW: u32 = 0x0100_0000;
/// Base of the local-memory window in CUDA's generic address space (as c[0x0][0x4] says).
pub const LOCAL_WINDOW: u32 = 0x0200_0000;

/// What a statically known constant-bank word stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Resolved {
    /// A constant.
    Const(u32),
    /// A system value.
    Sys(Sys),
}

/// Everything lifting needs besides the code.
#[derive(Clone, Debug)]
pub struct Config {
    /// The instruction set of the code (which [`super::Lifter`] lifts it).
    pub arch: super::Arch,
    /// The binding ABI.
    pub abi: Abi,
    /// The stage.
    pub stage: Stage,
    /// Compute workgroup size.
    pub local_size: [u32; 3],
    /// Workgroup-shared bytes.
    pub shared_bytes: u32,
    /// Per-thread local bytes (the cubin ELF's size, or `--local-bytes`): declared even
    /// when the code does not use local memory.
    pub local_bytes: u32,
    /// Per-thread local bytes a shader container declares (the SPH's local-memory sizes,
    /// DKSH's `local_pos_mem_sz`, NVN control +0x710): counted only when the code uses local
    /// memory, as the lower bound next to the highest constant-offset `LDL`/`STL`.
    pub declared_local_bytes: u32,
    /// Banks known at translation time (CUDA compiler banks, NVN's c1): bank → words.
    pub embedded_banks: BTreeMap<u8, Vec<u32>>,
    /// Banks bound at run time: bank → (guest offset of buffer byte 0, size in bytes).
    pub buffer_banks: BTreeMap<u8, (u32, u32)>,
    /// More block leaders (indirect-branch targets known from the container).
    pub extra_targets: Vec<u32>,
    /// CUDA: byte offset of the first parameter in c[0x0].
    pub param_base: u32,
    /// Graphics stages: SPH, binding layout and I/O types (None for compute).
    pub gfx: Option<super::layout::Gfx>,
    /// A compute program's binding layout where the ABI fixes none (NVK picks its banks
    /// per shader); graphics stages use `gfx`'s.
    pub layout: Option<super::layout::BindingLayout>,
    /// Keep the `Set`s of guest state no block reads at its entry, which lifting otherwise
    /// drops as `ssa` would (`lift::drive`): for looking at the lifted IR of a register
    /// write that nothing reads, as the lifting tests do.
    pub keep_unread_sets: bool,
}

impl Config {
    /// A compute configuration for an ABI with no banks.
    pub fn compute(abi: Abi, local_size: [u32; 3]) -> Self {
        Config {
            arch: super::Arch::Maxwell,
            abi,
            stage: Stage::Compute,
            local_size,
            shared_bytes: 0,
            local_bytes: 0,
            declared_local_bytes: 0,
            embedded_banks: BTreeMap::new(),
            buffer_banks: BTreeMap::new(),
            extra_targets: Vec::new(),
            param_base: 0x140,
            gfx: None,
            layout: None,
            keep_unread_sets: false,
        }
    }

    /// The CUDA-ABI configuration of a cubin kernel: shared and local sizes, the parameter area
    /// of its parameter bank as the one run-time buffer, every other constant bank (compiler
    /// constants, jump tables) embedded, and the indirect-branch targets the ELF lists.
    pub fn cuda_kernel(k: &dmsh_cubin::Kernel, local_size: [u32; 3]) -> Self {
        let mut cfg = Config::compute(Abi::Cuda, local_size);
        cfg.arch = super::Arch::from_sm(k.sm).unwrap_or_default();
        cfg.shared_bytes = k.shared_bytes as u32;
        cfg.local_bytes = k.local_bytes();
        cfg.param_base = k.param_base;
        for (&bank, bytes) in &k.constant_banks {
            if bank == k.param_bank {
                continue;
            }
            let words = bytes.chunks(4).map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            });
            cfg.embedded_banks.insert(bank as u8, words.collect());
        }
        cfg.buffer_banks
            .insert(k.param_bank as u8, (k.param_base, k.param_size.max(4)));
        cfg.extra_targets = k
            .indirect_branches
            .iter()
            .flat_map(|b| b.targets.iter().copied())
            .collect();
        cfg
    }

    /// Where storage buffers' {address, size} records live in c0 under this ABI and stage
    /// (the graphics layout's, deko3d compute 0x140, NVN compute 0x310); `None` under CUDA,
    /// whose pointers stay 64-bit global addresses.
    pub fn sbuf_table(&self) -> Option<crate::ir::SbufTable> {
        if let Some(g) = &self.gfx {
            return g.layout.sbuf_table();
        }
        match self.abi {
            Abi::Cuda | Abi::Nvk => None,
            Abi::Deko3d => super::layout::BindingLayout::deko3d(self.stage).sbuf_table(),
            Abi::Nvn => super::layout::BindingLayout::nvn(self.stage, 0x20).sbuf_table(),
        }
    }

    /// The initial stack pointer (top of local memory) CUDA code reads from c[0x0][0x20].
    pub fn stack_bytes(&self) -> u32 {
        self.local_bytes.div_ceil(16) * 16
    }
}
