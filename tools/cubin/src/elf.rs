//! A small, bounds-checked reader for the ELF64 little-endian files ptxas writes.
//!
//! Only what cubins need: section headers with names, section bytes, the symbol table and
//! `SHT_REL`/`SHT_RELA` relocation sections. Every read is checked; bad input is an [`Error`].

use crate::Error;

/// `SHT_NOBITS`: a section with a size but no bytes in the file (`.nv.shared.K`).
pub const SHT_NOBITS: u32 = 8;
/// `SHT_SYMTAB`.
pub const SHT_SYMTAB: u32 = 2;
/// `SHT_REL`.
pub const SHT_REL: u32 = 9;
/// `SHT_RELA`.
pub const SHT_RELA: u32 = 4;

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
}

fn rd<const N: usize>(d: &[u8], off: u64, what: &'static str) -> Result<[u8; N], Error> {
    let start = usize::try_from(off).map_err(|_| Error::Truncated { what, offset: off })?;
    let end = start
        .checked_add(N)
        .ok_or(Error::Truncated { what, offset: off })?;
    let s = d
        .get(start..end)
        .ok_or(Error::Truncated { what, offset: off })?;
    let mut a = [0u8; N];
    a.copy_from_slice(s);
    Ok(a)
}

fn u16_at(d: &[u8], off: u64, what: &'static str) -> Result<u16, Error> {
    rd::<2>(d, off, what).map(u16::from_le_bytes)
}
fn u32_at(d: &[u8], off: u64, what: &'static str) -> Result<u32, Error> {
    rd::<4>(d, off, what).map(u32::from_le_bytes)
}
fn u64_at(d: &[u8], off: u64, what: &'static str) -> Result<u64, Error> {
    rd::<8>(d, off, what).map(u64::from_le_bytes)
}

/// Reads a NUL-terminated string at `off` inside `table`.
fn cstr(table: &[u8], off: u32) -> String {
    let s = table.get(off as usize..).unwrap_or(&[]);
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

impl<'a> Elf<'a> {
    /// Parses the ELF header and the section headers.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        if data.len() < 64 || &data[0..4] != b"\x7fELF" {
            return Err(Error::NotElf);
        }
        if data[4] != 2 || data[5] != 1 {
            return Err(Error::Unsupported(format!(
                "ELF class {} / data encoding {} (only ELF64 little-endian)",
                data[4], data[5]
            )));
        }
        let machine = u16_at(data, 18, "e_machine")?;
        let flags = u32_at(data, 48, "e_flags")?;
        let shoff = u64_at(data, 40, "e_shoff")?;
        let shentsize = u16_at(data, 58, "e_shentsize")? as u64;
        let shnum = u16_at(data, 60, "e_shnum")? as u64;
        let shstrndx = u16_at(data, 62, "e_shstrndx")? as u64;
        if shnum > 0 && shentsize < 64 {
            return Err(Error::Malformed {
                offset: 58,
                msg: format!("section header size {shentsize} < 64"),
            });
        }
        let mut raw = Vec::with_capacity(shnum.min(4096) as usize);
        let mut name_offs = Vec::with_capacity(shnum.min(4096) as usize);
        for i in 0..shnum {
            let h = shoff.checked_add(i * shentsize).ok_or(Error::Truncated {
                what: "section header",
                offset: shoff,
            })?;
            raw.push(Section {
                name: String::new(),
                kind: u32_at(data, h + 4, "sh_type")?,
                flags: u64_at(data, h + 8, "sh_flags")?,
                offset: u64_at(data, h + 24, "sh_offset")?,
                size: u64_at(data, h + 32, "sh_size")?,
                link: u32_at(data, h + 40, "sh_link")?,
                info: u32_at(data, h + 44, "sh_info")?,
                entsize: u64_at(data, h + 56, "sh_entsize")?,
            });
            name_offs.push(u32_at(data, h, "sh_name")?);
        }
        let mut elf = Elf {
            data,
            machine,
            flags,
            sections: raw,
        };
        let strtab = match elf.sections.get(shstrndx as usize) {
            Some(s) if s.kind != SHT_NOBITS => elf.bytes_of(s)?.to_vec(),
            _ => Vec::new(),
        };
        for (s, off) in elf.sections.iter_mut().zip(name_offs) {
            s.name = cstr(&strtab, off);
        }
        Ok(elf)
    }

    /// The file bytes of a section (empty for `SHT_NOBITS`).
    pub fn bytes_of(&self, s: &Section) -> Result<&'a [u8], Error> {
        if s.kind == SHT_NOBITS {
            return Ok(&[]);
        }
        let end = s.offset.checked_add(s.size).ok_or(Error::Malformed {
            offset: s.offset,
            msg: format!("section {} size overflows", s.name),
        })?;
        let (a, b) = (usize::try_from(s.offset), usize::try_from(end));
        match (a, b) {
            (Ok(a), Ok(b)) if b <= self.data.len() => Ok(&self.data[a..b]),
            _ => Err(Error::Malformed {
                offset: s.offset,
                msg: format!(
                    "section {} [{:#x}, +{:#x}) lies outside the file ({:#x} bytes)",
                    s.name,
                    s.offset,
                    s.size,
                    self.data.len()
                ),
            }),
        }
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
        let Some(st) = self.sections.iter().find(|s| s.kind == SHT_SYMTAB) else {
            return Ok(Vec::new());
        };
        let bytes = self.bytes_of(st)?;
        let strtab = match self.sections.get(st.link as usize) {
            Some(s) => self.bytes_of(s)?,
            None => &[],
        };
        let n = bytes.len() / 24;
        let mut out = Vec::with_capacity(n);
        for i in 0..n as u64 {
            let o = i * 24;
            out.push(Symbol {
                name: cstr(strtab, u32_at(bytes, o, "st_name")?),
                info: bytes[o as usize + 4],
                other: bytes[o as usize + 5],
                shndx: u16_at(bytes, o + 6, "st_shndx")?,
                value: u64_at(bytes, o + 8, "st_value")?,
                size: u64_at(bytes, o + 16, "st_size")?,
            });
        }
        Ok(out)
    }

    /// Reads the entries of a `SHT_REL` or `SHT_RELA` section.
    pub fn relocations(&self, s: &Section) -> Result<Vec<Rel>, Error> {
        let bytes = self.bytes_of(s)?;
        let rela = s.kind == SHT_RELA;
        let step = if rela { 24 } else { 16 };
        let n = bytes.len() / step;
        let mut out = Vec::with_capacity(n);
        for i in 0..n as u64 {
            let o = i * step as u64;
            let info = u64_at(bytes, o + 8, "r_info")?;
            out.push(Rel {
                offset: u64_at(bytes, o, "r_offset")?,
                sym: (info >> 32) as u32,
                kind: info as u32,
                addend: if rela {
                    u64_at(bytes, o + 16, "r_addend")? as i64
                } else {
                    0
                },
            });
        }
        Ok(out)
    }
}
