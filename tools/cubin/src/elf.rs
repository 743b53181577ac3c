//! The ELF64 little-endian files ptxas writes, read with the `object` crate.
//!
//! Only what cubins need: section headers with names, section bytes, the symbol table and
//! `SHT_REL`/`SHT_RELA` relocation sections, as small owned records. `object` checks every
//! read; bad input is an [`Error`] naming the offset of the structure that failed.

use object::elf::{FileHeader64, Rel64, Rela64, SectionHeader64, ELFCLASS64, ELFDATA2LSB};
use object::read::elf::{FileHeader as _, SectionHeader as _, SectionTable, Sym as _};
use object::{pod, LittleEndian as LE, ReadRef as _};

use crate::Error;

pub use object::elf::{SHT_NOBITS, SHT_REL, SHT_RELA, SHT_SYMTAB};

/// One section header, with its name resolved.
#[derive(Debug, Clone)]
pub struct Section {
    /// Section name from `.shstrtab`.
    pub name: String,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`.
    pub info: u32,
    /// `sh_entsize`.
    pub entsize: u64,
}

/// One symbol table entry, with its name resolved.
#[derive(Debug, Clone)]
pub struct Symbol {
    /// Name from the linked string table.
    pub name: String,
    /// `st_info`.
    pub info: u8,
    /// `st_other`.
    pub other: u8,
    /// `st_shndx`.
    pub shndx: u16,
    /// `st_value`.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
}

/// One relocation entry (`Elf64_Rel` or `Elf64_Rela`).
#[derive(Debug, Clone, Copy)]
pub struct Rel {
    /// `r_offset`.
    pub offset: u64,
    /// Symbol index (`r_info >> 32`).
    pub sym: u32,
    /// Relocation type (`r_info & 0xffffffff`).
    pub kind: u32,
    /// `r_addend` (0 for `Elf64_Rel`).
    pub addend: i64,
}

/// A parsed ELF64 file borrowing its bytes.
#[derive(Debug)]
pub struct Elf<'a> {
    /// The whole file.
    pub data: &'a [u8],
    /// `e_machine` (190 = EM_CUDA).
    pub machine: u16,
    /// `e_flags` (cubins: the SM number in the low byte).
    pub flags: u32,
    /// All section headers in file order.
    pub sections: Vec<Section>,
    table: SectionTable<'a, FileHeader64<LE>>,
}

/// An `object` error while reading the structure at `offset`.
fn malformed(offset: u64, what: &str, e: object::read::Error) -> Error {
    Error::Malformed {
        offset,
        msg: format!("{what}: {e}"),
    }
}

impl<'a> Elf<'a> {
    /// Parses the ELF header and the section headers.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        if data.len() < 64 || &data[0..4] != b"\x7fELF" {
            return Err(Error::NotElf);
        }
        if data[4] != ELFCLASS64 || data[5] != ELFDATA2LSB {
            return Err(Error::Unsupported(format!(
                "ELF class {} / data encoding {} (only ELF64 little-endian)",
                data[4], data[5]
            )));
        }
        let header = FileHeader64::<LE>::parse(data).map_err(|e| malformed(0, "ELF header", e))?;
        let shoff = header.e_shoff(LE);
        let table = header
            .sections(LE, data)
            .map_err(|e| malformed(shoff, "section headers", e))?;
        let mut sections = Vec::with_capacity(table.len());
        for (i, s) in table.iter().enumerate() {
            let name = table.section_name(LE, s).map_err(|e| {
                let at = shoff + (i * std::mem::size_of::<SectionHeader64<LE>>()) as u64;
                malformed(at, &format!("section {i} name"), e)
            })?;
            sections.push(Section {
                name: String::from_utf8_lossy(name).into_owned(),
                kind: s.sh_type(LE),
                flags: s.sh_flags(LE),
                offset: s.sh_offset(LE),
                size: s.sh_size(LE),
                link: s.sh_link(LE),
                info: s.sh_info(LE),
                entsize: s.sh_entsize(LE),
            });
        }
        Ok(Elf {
            data,
            machine: header.e_machine(LE),
            flags: header.e_flags(LE),
            sections,
            table,
        })
    }

    /// The file bytes of a section (empty for `SHT_NOBITS`).
    pub fn bytes_of(&self, s: &Section) -> Result<&'a [u8], Error> {
        if s.kind == SHT_NOBITS {
            return Ok(&[]);
        }
        self.data
            .read_bytes_at(s.offset, s.size)
            .map_err(|()| Error::Malformed {
                offset: s.offset,
                msg: format!(
                    "section {} [{:#x}, +{:#x}) lies outside the file ({:#x} bytes)",
                    s.name,
                    s.offset,
                    s.size,
                    self.data.len()
                ),
            })
    }

    /// Finds a section by exact name.
    pub fn section(&self, name: &str) -> Option<(usize, &Section)> {
        self.sections
            .iter()
            .enumerate()
            .find(|(_, s)| s.name == name)
    }

    /// Reads the symbol table (empty when there is none).
    pub fn symbols(&self) -> Result<Vec<Symbol>, Error> {
        let at = self
            .sections
            .iter()
            .find(|s| s.kind == SHT_SYMTAB)
            .map_or(0, |s| s.offset);
        let table = self
            .table
            .symbols(LE, self.data, SHT_SYMTAB)
            .map_err(|e| malformed(at, "symbol table", e))?;
        table
            .iter()
            .enumerate()
            .map(|(i, y)| {
                let name = y
                    .name(LE, table.strings())
                    .map_err(|e| malformed(at + 24 * i as u64, &format!("symbol {i} name"), e))?;
                Ok(Symbol {
                    name: String::from_utf8_lossy(name).into_owned(),
                    info: y.st_info(),
                    other: y.st_other(),
                    shndx: y.st_shndx(LE),
                    value: y.st_value(LE),
                    size: y.st_size(LE),
                })
            })
            .collect()
    }

    /// Reads the entries of a `SHT_REL` or `SHT_RELA` section.
    pub fn relocations(&self, s: &Section) -> Result<Vec<Rel>, Error> {
        let bytes = self.bytes_of(s)?;
        let bad = |()| Error::Malformed {
            offset: s.offset,
            msg: format!(
                "relocation section {} ({:#x} bytes) is not a whole number of entries",
                s.name, s.size
            ),
        };
        Ok(if s.kind == SHT_RELA {
            pod::slice_from_all_bytes::<Rela64<LE>>(bytes)
                .map_err(bad)?
                .iter()
                .map(|r| Rel {
                    offset: r.r_offset.get(LE),
                    sym: r.r_sym(LE, false),
                    kind: r.r_type(LE, false),
                    addend: r.r_addend.get(LE),
                })
                .collect()
        } else {
            pod::slice_from_all_bytes::<Rel64<LE>>(bytes)
                .map_err(bad)?
                .iter()
                .map(|r| Rel {
                    offset: r.r_offset.get(LE),
                    sym: r.r_sym(LE),
                    kind: r.r_type(LE),
                    addend: 0,
                })
                .collect()
        })
    }
}
