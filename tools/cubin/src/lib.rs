//! dmsh-cubin: reads CUDA cubin ELF files (kernel code, constant banks, shared and
//! local sizes, parameters) for the test corpus' CUDA ABI.
//!
//! ```no_run
//! let cubin = dmsh_cubin::read("tests/corpus/sass/int_addsub.sm53.cubin".as_ref())?;
//! let k = cubin.kernel("int_addsub")?;
//! assert_eq!(k.param_base, 0x140);
//! # Ok::<(), dmsh_cubin::Error>(())
//! ```
//!
//! A kernel is a `.text.K` section. Its constant banks are the `.nv.constantN.K` sections,
//! its attributes the records of `.nv.info.K` plus the per-symbol records of the global
//! `.nv.info` (register count, frame and stack sizes). The code bytes are returned exactly as
//! stored (unrelocated); [`Kernel::relocations`] lists what a driver would patch.

#![warn(missing_docs)]

pub mod elf;
pub mod nvinfo;

use std::collections::BTreeMap;
use std::path::Path;

/// Errors reading a cubin. Offsets are file offsets.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bytes do not start with an ELF header.
    #[error("not an ELF file")]
    NotElf,
    /// An ELF variant this reader does not handle.
    #[error("unsupported ELF: {0}")]
    Unsupported(String),
    /// A structure runs past the end of the file or section.
    #[error("truncated {what} at offset {offset:#x}")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// File offset where it starts.
        offset: u64,
    },
    /// A structure is inconsistent.
    #[error("malformed cubin at offset {offset:#x}: {msg}")]
    Malformed {
        /// File offset of the bad structure.
        offset: u64,
        /// What is wrong.
        msg: String,
    },
    /// No kernel of that name.
    #[error("no kernel named {name:?} (kernels: {available})")]
    NoKernel {
        /// The name asked for.
        name: String,
        /// Comma-separated names that exist.
        available: String,
    },
    /// Reading the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Parsing a file failed (wraps the other variants with the path).
    #[error("{path}: {source}")]
    InFile {
        /// The file.
        path: String,
        /// The parse error.
        source: Box<Error>,
    },
}

/// One kernel parameter (from `EIATTR_KPARAM_INFO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// Position in the parameter list.
    pub ordinal: u16,
    /// Byte offset inside the parameter area.
    pub offset: u16,
    /// Size in bytes.
    pub size: u16,
    /// Raw flags word of the record (size in bits 18..32).
    pub flags: u32,
}

/// A relocation that applies to a kernel's `.text` or constant sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocation {
    /// The relocation section (`.rel.text.K`).
    pub section: String,
    /// The section it patches (`.text.K`, `.nv.constant2.K`).
    pub target: String,
    /// Byte offset inside the target section.
    pub offset: u64,
    /// Symbol name.
    pub symbol: String,
    /// Raw `R_CUDA_*` type number.
    pub kind: u32,
    /// `r_addend` (0 for REL).
    pub addend: i64,
}

impl Relocation {
    /// The type's name (`R_CUDA_<n>` when this reader does not know it).
    pub fn kind_name(&self) -> String {
        reloc_name(self.kind)
    }
}

/// The name of an `R_CUDA_*` relocation type (only those seen in the corpus are named).
pub fn reloc_name(kind: u32) -> String {
    match kind {
        0 => "R_CUDA_NONE".into(),
        1 => "R_CUDA_32".into(),
        2 => "R_CUDA_64".into(),
        0x2a => "R_CUDA_ABS32_20".into(),
        0x37 => "R_CUDA_ABS32_32".into(),
        n => format!("R_CUDA_{n}"),
    }
}

/// An indirect branch site and the `.text` offsets it may jump to
/// (`EIATTR_INDIRECT_BRANCH_TARGETS`): BRX through a jump table, and on sm_5x also SYNC/BRK/CONT
/// whose target comes from the CRS stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndirectBranch {
    /// `.text` offset of the branch instruction.
    pub offset: u32,
    /// Possible target offsets.
    pub targets: Vec<u32>,
}

/// One kernel of a cubin.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// Kernel (entry function) name.
    pub name: String,
    /// SM number of the cubin the kernel is in (53, 86, …).
    pub sm: u32,
    /// The code: bytes of `.text.K`, unrelocated.
    pub code: Vec<u8>,
    /// File offset of `.text.K` (for error messages).
    pub code_file_offset: u64,
    /// Constant banks: N → bytes of `.nv.constantN.K` (bank 0 is usually all zero; its size is
    /// `param_base + param_size`).
    pub constant_banks: BTreeMap<u32, Vec<u8>>,
    /// Bank holding the parameters (`EIATTR_PARAM_CBANK`; 0 in practice).
    pub param_bank: u32,
    /// Byte offset of the first parameter in that bank (0x140 on sm_5x, 0x160 on sm_8x).
    pub param_base: u32,
    /// Bytes of parameters.
    pub param_size: u32,
    /// Parameters sorted by ordinal.
    pub params: Vec<Param>,
    /// Static shared memory bytes (size of `.nv.shared.K`, 0 if absent).
    pub shared_bytes: u64,
    /// Per-thread stack frame bytes (`EIATTR_FRAME_SIZE`); local arrays live here.
    pub frame_size: u32,
    /// `EIATTR_MIN_STACK_SIZE`.
    pub min_stack_size: u32,
    /// `EIATTR_MAX_STACK_SIZE` (0 when absent).
    pub max_stack_size: u32,
    /// `EIATTR_CRS_STACK_SIZE` (0 when absent).
    pub crs_stack_size: u32,
    /// Registers used (`EIATTR_REGCOUNT`), if recorded.
    pub registers: Option<u32>,
    /// Register limit (`EIATTR_MAXREG_COUNT`), if recorded.
    pub max_reg_count: Option<u32>,
    /// `.text` offsets of EXIT instructions.
    pub exit_offsets: Vec<u32>,
    /// Indirect branch sites (BRX, SYNC, …) with their targets.
    pub indirect_branches: Vec<IndirectBranch>,
    /// Relocations against `.text.K` and `.nv.constantN.K`.
    pub relocations: Vec<Relocation>,
    /// Every attribute record that concerns this kernel (`.nv.info.K` plus its global ones).
    pub attributes: Vec<nvinfo::Attr>,
}

impl Kernel {
    /// Per-thread local memory the kernel needs (the stack frame).
    pub fn local_bytes(&self) -> u32 {
        self.frame_size
    }

    /// Sorted, deduplicated names of this kernel's attribute records.
    pub fn attribute_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.attributes.iter().map(|a| a.name()).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// A parsed cubin.
#[derive(Debug, Clone)]
pub struct Cubin {
    /// SM number from `e_flags` (53, 86, …).
    pub sm: u32,
    /// Raw `e_flags`.
    pub elf_flags: u32,
    /// Kernels in section order.
    pub kernels: Vec<Kernel>,
    /// Constant banks not tied to a kernel (`.nv.constantN`).
    pub global_constant_banks: BTreeMap<u32, Vec<u8>>,
}

impl Cubin {
    /// The kernel with this name.
    pub fn kernel(&self, name: &str) -> Result<&Kernel, Error> {
        self.kernels
            .iter()
            .find(|k| k.name == name)
            .ok_or_else(|| Error::NoKernel {
                name: name.to_string(),
                available: self.kernel_names().join(", "),
            })
    }

    /// Names of all kernels.
    pub fn kernel_names(&self) -> Vec<&str> {
        self.kernels.iter().map(|k| k.name.as_str()).collect()
    }
}

/// Reads and parses a cubin file; errors name the file.
pub fn read(path: &Path) -> Result<Cubin, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse(&bytes).map_err(|e| Error::InFile {
        path: path.display().to_string(),
        source: Box::new(e),
    })
}

/// Splits `.nv.constantN[.K]` into (N, K).
fn constant_section(name: &str) -> Option<(u32, Option<&str>)> {
    let rest = name.strip_prefix(".nv.constant")?;
    let (num, kernel) = match rest.split_once('.') {
        Some((n, k)) => (n, Some(k)),
        None => (rest, None),
    };
    Some((num.parse().ok()?, kernel))
}

/// Parses cubin bytes.
pub fn parse(bytes: &[u8]) -> Result<Cubin, Error> {
    let elf = elf::Elf::parse(bytes)?;
    let symbols = elf.symbols()?;

    // Global .nv.info: records keyed by symbol index.
    let mut global: Vec<nvinfo::Attr> = Vec::new();
    if let Some((_, s)) = elf.section(".nv.info") {
        global = nvinfo::parse(elf.bytes_of(s)?, s.offset)?;
    }

    let mut kernels = Vec::new();
    let mut global_banks = BTreeMap::new();
    for (idx, s) in elf.sections.iter().enumerate() {
        if let Some((n, None)) = constant_section(&s.name) {
            global_banks.insert(n, elf.bytes_of(s)?.to_vec());
        }
        let Some(name) = s.name.strip_prefix(".text.") else {
            continue;
        };
        let mut k = Kernel {
            name: name.to_string(),
            sm: elf.flags & 0xff,
            code: elf.bytes_of(s)?.to_vec(),
            code_file_offset: s.offset,
            constant_banks: BTreeMap::new(),
            param_bank: 0,
            param_base: 0,
            param_size: 0,
            params: Vec::new(),
            shared_bytes: 0,
            frame_size: 0,
            min_stack_size: 0,
            max_stack_size: 0,
            crs_stack_size: 0,
            registers: None,
            max_reg_count: None,
            exit_offsets: Vec::new(),
            indirect_branches: Vec::new(),
            relocations: Vec::new(),
            attributes: Vec::new(),
        };
        // Sections that belong to this kernel.
        let mut own: Vec<usize> = vec![idx];
        for (j, t) in elf.sections.iter().enumerate() {
            if let Some((n, Some(kn))) = constant_section(&t.name) {
                if kn == name {
                    k.constant_banks.insert(n, elf.bytes_of(t)?.to_vec());
                    own.push(j);
                }
            }
            if t.name.strip_prefix(".nv.shared.") == Some(name) {
                k.shared_bytes = t.size;
            }
        }
        // Kernel's own info section.
        let info_name = format!(".nv.info.{name}");
        let mut info = Vec::new();
        if let Some((_, t)) = elf.section(&info_name) {
            info = nvinfo::parse(elf.bytes_of(t)?, t.offset)?;
        }
        // Global records that name this kernel's symbol.
        let sym_ids: Vec<u32> = symbols
            .iter()
            .enumerate()
            .filter(|(_, y)| y.name == name && y.info & 0xf == 2)
            .map(|(i, _)| i as u32)
            .collect();
        for a in &global {
            if a.format == 4 && a.u32_at(0).is_some_and(|id| sym_ids.contains(&id)) {
                let v = a.u32_at(4).unwrap_or(0);
                match a.code {
                    nvinfo::REGCOUNT => k.registers = Some(v),
                    nvinfo::FRAME_SIZE => k.frame_size = v,
                    nvinfo::MIN_STACK_SIZE => k.min_stack_size = v,
                    nvinfo::MAX_STACK_SIZE => k.max_stack_size = v,
                    nvinfo::CRS_STACK_SIZE => k.crs_stack_size = v,
                    _ => {}
                }
                k.attributes.push(a.clone());
            }
        }
        for a in &info {
            match a.code {
                nvinfo::PARAM_CBANK => {
                    let v = a.u32_at(4).ok_or(Error::Malformed {
                        offset: a.file_offset,
                        msg: "EIATTR_PARAM_CBANK shorter than 8 bytes".into(),
                    })?;
                    k.param_base = v & 0xffff;
                    k.param_size = v >> 16;
                    // The symbol names the bank's section (.nv.constantN.K).
                    if let Some(sym) = a.u32_at(0).and_then(|i| symbols.get(i as usize)) {
                        if let Some((n, _)) = elf
                            .sections
                            .get(sym.shndx as usize)
                            .and_then(|sec| constant_section(&sec.name))
                        {
                            k.param_bank = n;
                        }
                    }
                }
                nvinfo::CBANK_PARAM_SIZE if k.param_size == 0 => k.param_size = a.value as u32,
                nvinfo::KPARAM_INFO => {
                    let (Some(w1), Some(flags)) = (a.u32_at(4), a.u32_at(8)) else {
                        return Err(Error::Malformed {
                            offset: a.file_offset,
                            msg: "EIATTR_KPARAM_INFO shorter than 12 bytes".into(),
                        });
                    };
                    k.params.push(Param {
                        ordinal: w1 as u16,
                        offset: (w1 >> 16) as u16,
                        size: ((flags >> 18) & 0x3fff) as u16,
                        flags,
                    });
                }
                nvinfo::MAXREG_COUNT => k.max_reg_count = Some(a.value as u32),
                nvinfo::CRS_STACK_SIZE => k.crs_stack_size = a.u32_at(0).unwrap_or(0),
                nvinfo::EXIT_INSTR_OFFSETS => k.exit_offsets = a.words(),
                nvinfo::INDIRECT_BRANCH_TARGETS => {
                    k.indirect_branches = indirect_branches(a)?;
                }
                _ => {}
            }
            k.attributes.push(a.clone());
        }
        k.params.sort_by_key(|p| p.ordinal);
        // Relocations whose target is one of this kernel's sections.
        for r in elf.sections.iter() {
            if r.kind != elf::SHT_REL && r.kind != elf::SHT_RELA {
                continue;
            }
            let tgt = r.info as usize;
            if !own.contains(&tgt) {
                continue;
            }
            let target = elf.sections[tgt].name.clone();
            for e in elf.relocations(r)? {
                k.relocations.push(Relocation {
                    section: r.name.clone(),
                    target: target.clone(),
                    offset: e.offset,
                    symbol: symbols
                        .get(e.sym as usize)
                        .map(|y| y.name.clone())
                        .unwrap_or_default(),
                    kind: e.kind,
                    addend: e.addend,
                });
            }
        }
        kernels.push(k);
    }
    Ok(Cubin {
        sm: elf.flags & 0xff,
        elf_flags: elf.flags,
        kernels,
        global_constant_banks: global_banks,
    })
}

/// Decodes `EIATTR_INDIRECT_BRANCH_TARGETS`: records of (offset u32, u32, count u32, targets).
fn indirect_branches(a: &nvinfo::Attr) -> Result<Vec<IndirectBranch>, Error> {
    let mut out = Vec::new();
    let mut i = 0usize;
    let bad = || Error::Malformed {
        offset: a.file_offset,
        msg: "EIATTR_INDIRECT_BRANCH_TARGETS record runs past its payload".into(),
    };
    while i < a.data.len() {
        let offset = a.u32_at(i).ok_or_else(bad)?;
        let count = a.u32_at(i + 8).ok_or_else(bad)? as usize;
        if count > a.data.len() / 4 {
            return Err(bad());
        }
        let mut targets = Vec::with_capacity(count);
        for t in 0..count {
            targets.push(a.u32_at(i + 12 + 4 * t).ok_or_else(bad)?);
        }
        out.push(IndirectBranch { offset, targets });
        i += 12 + 4 * count;
    }
    Ok(out)
}
