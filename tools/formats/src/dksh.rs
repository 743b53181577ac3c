//! The DKSH container (deko3d shader module; layout: `tests/corpus/dksh/README.md` §2): the
//! file header, the program headers and where each program's code and `c[1]` data lie. The one
//! reader of these bytes: every field is bounds-checked, and a bad file is an error naming the
//! offset of the field at fault.

use crate::bytes::u32le;
use crate::Stage;

/// `"DKSH"` as the little-endian u32 at offset 0.
pub const MAGIC: u32 = 0x4853_4B44;
/// Bytes of the file header (magic, header size, section sizes, program table).
pub const HEADER_SIZE: usize = 0x18;
/// Bytes of one program header.
pub const PROGRAM_HEADER_SIZE: usize = 64;
/// The most programs a file may list (deko3d's uam writes one).
pub const MAX_PROGRAMS: usize = 64;
/// Offset of the stage-specific fields in a program header.
const STAGE_FIELDS: usize = 0x18;

/// Whether the bytes start with the DKSH magic.
pub fn is_dksh(b: &[u8]) -> bool {
    b.starts_with(b"DKSH")
}

/// Why a DKSH file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DkshError {
    /// Byte offset in the file of the field at fault.
    pub offset: usize,
    /// What is wrong there.
    pub what: String,
}

impl std::fmt::Display for DkshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DKSH: offset {:#x}: {}", self.offset, self.what)
    }
}

impl std::error::Error for DkshError {}

fn bad(offset: usize, what: impl Into<String>) -> DkshError {
    DkshError {
        offset,
        what: what.into(),
    }
}

/// One program header (64 bytes in the control section).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramHeader {
    /// Byte offset of the header in the file.
    pub offset: usize,
    /// The program type word: 0 vertex, 1 fragment, 2 geometry, 3 tess-control,
    /// 4 tess-evaluation, 5 compute (see [`ProgramHeader::stage`]).
    pub kind: u32,
    /// Offset of the program in the code section (below its size): graphics, the SPH;
    /// compute, the first instruction.
    pub entry: usize,
    /// Registers per thread.
    pub num_gprs: u32,
    /// The `c[1]` data as (offset in the code section, bytes); `None` when the size is 0.
    /// Not range-checked here: [`Dksh::cbuf1`] checks it.
    pub cbuf1: Option<(usize, usize)>,
    /// The nine stage-specific words (header bytes 0x18..0x3c).
    pub stage_words: [u32; 9],
}

impl ProgramHeader {
    /// The stage the type word names (`None` for another value).
    pub fn stage(&self) -> Option<Stage> {
        Some(match self.kind {
            0 => Stage::Vertex,
            1 => Stage::Fragment,
            2 => Stage::Geometry,
            3 => Stage::TessControl,
            4 => Stage::TessEval,
            5 => Stage::Compute,
            _ => return None,
        })
    }

    /// Whether the program is compute (no SPH before its code).
    pub fn is_compute(&self) -> bool {
        self.kind == 5
    }

    /// Fragment: `early_fragment_tests` (the second stage-specific byte).
    pub fn early_fragment_tests(&self) -> bool {
        (self.stage_words[0] >> 8) & 0xff != 0
    }

    /// Tess-eval: `param_c8` = domain | spacing << 4 | output primitive << 8.
    pub fn tess_param(&self) -> u32 {
        self.stage_words[0]
    }

    /// Compute: `block_dims`, the workgroup size.
    pub fn block_dims(&self) -> [u32; 3] {
        [
            self.stage_words[0],
            self.stage_words[1],
            self.stage_words[2],
        ]
    }

    /// Compute: `shared_mem_sz`, shared bytes.
    pub fn shared_bytes(&self) -> u32 {
        self.stage_words[3]
    }

    /// Compute: `local_pos_mem_sz`, per-thread local bytes.
    pub fn local_bytes(&self) -> u32 {
        self.stage_words[4]
    }
}

/// A parsed DKSH file: its sections and program headers, borrowing the bytes.
#[derive(Clone, Debug)]
pub struct Dksh<'a> {
    bytes: &'a [u8],
    /// Bytes of the control section: the code section starts here.
    pub control_size: usize,
    /// Bytes of the code section.
    pub code_size: usize,
    /// The program headers, in file order.
    pub programs: Vec<ProgramHeader>,
}

impl<'a> Dksh<'a> {
    /// Reads the header and the program table. Checked: the magic, the section sizes against
    /// the file, the program count and table, and each entry point inside the code section.
    pub fn parse(b: &'a [u8]) -> Result<Dksh<'a>, DkshError> {
        let word = |off: usize| {
            u32le(b, off).ok_or_else(|| {
                bad(
                    off,
                    format!(
                        "truncated: the field needs {:#x} bytes, the file has {:#x}",
                        off + 4,
                        b.len()
                    ),
                )
            })
        };
        if word(0)? != MAGIC {
            return Err(bad(0, "not a DKSH file (bad magic)"));
        }
        let control_size = word(8)? as usize;
        let code_size = word(12)? as usize;
        let table = word(16)? as usize;
        let num = word(20)? as usize;
        if num > MAX_PROGRAMS {
            return Err(bad(20, format!("{num} programs (at most {MAX_PROGRAMS})")));
        }
        match control_size.checked_add(code_size) {
            Some(end) if end <= b.len() => {}
            _ => {
                return Err(bad(
                    8,
                    format!(
                        "code section {control_size:#x}+{code_size:#x} past the end ({:#x})",
                        b.len()
                    ),
                ))
            }
        }
        if table + num * PROGRAM_HEADER_SIZE > b.len() {
            return Err(bad(
                16,
                format!(
                    "program table {table:#x} ({num} programs) past the end ({:#x})",
                    b.len()
                ),
            ));
        }
        let mut programs = Vec::with_capacity(num);
        for k in 0..num {
            let h = table + k * PROGRAM_HEADER_SIZE;
            let entry = word(h + 4)? as usize;
            if entry >= code_size {
                return Err(bad(
                    h + 4,
                    format!("program {k}: entry point {entry:#x} outside the code section ({code_size:#x} bytes)"),
                ));
            }
            let cbuf1_size = word(h + 16)? as usize;
            let mut stage_words = [0u32; 9];
            for (j, w) in stage_words.iter_mut().enumerate() {
                *w = word(h + STAGE_FIELDS + 4 * j)?;
            }
            programs.push(ProgramHeader {
                offset: h,
                kind: word(h)?,
                entry,
                num_gprs: word(h + 8)?,
                cbuf1: (cbuf1_size > 0).then_some((word(h + 12)? as usize, cbuf1_size)),
                stage_words,
            });
        }
        Ok(Dksh {
            bytes: b,
            control_size,
            code_size,
            programs,
        })
    }

    /// The code section.
    pub fn code_section(&self) -> &'a [u8] {
        &self.bytes[self.control_size..self.control_size + self.code_size]
    }

    /// Where program `k`'s bytes end in the code section: at the next program (graphics
    /// programs 0x30 bytes before its entry point, uam's filler) or at the program's own `c[1]`
    /// data, whichever comes first after its entry point, else at the end of the section.
    pub fn program_end(&self, k: usize) -> usize {
        let p = &self.programs[k];
        let mut end = self.code_size;
        for q in &self.programs {
            if q.entry > p.entry && q.entry < end {
                end = q
                    .entry
                    .saturating_sub(if p.is_compute() { 0 } else { 0x30 });
            }
        }
        if let Some((c, _)) = p.cbuf1 {
            if c > p.entry && c < end {
                end = c;
            }
        }
        end
    }

    /// Program `k`'s bytes: from its entry point (graphics: the SPH, then the instructions)
    /// to [`Dksh::program_end`].
    pub fn program_code(&self, k: usize) -> &'a [u8] {
        let p = &self.programs[k];
        &self.code_section()[p.entry..self.program_end(k).max(p.entry)]
    }

    /// Program `k`'s `c[1]` data (empty when it has none); an error when it lies outside the
    /// code section.
    pub fn cbuf1(&self, k: usize) -> Result<&'a [u8], DkshError> {
        let p = &self.programs[k];
        let Some((off, size)) = p.cbuf1 else {
            return Ok(&[]);
        };
        off.checked_add(size)
            .and_then(|end| self.code_section().get(off..end))
            .ok_or_else(|| {
                bad(
                    p.offset + 12,
                    format!("program {k}: c[1] data {off:#x}+{size:#x} outside the code section"),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-program file: 0x100-byte control section, `code` as the code section.
    fn file(kind: u32, entry: u32, cbuf1: (u32, u32), stage: [u32; 9], code: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 0x100];
        let put =
            |b: &mut Vec<u8>, off: usize, v: u32| b[off..off + 4].copy_from_slice(&v.to_le_bytes());
        put(&mut b, 0, MAGIC);
        put(&mut b, 4, HEADER_SIZE as u32);
        put(&mut b, 8, 0x100);
        put(&mut b, 12, code.len() as u32);
        put(&mut b, 16, HEADER_SIZE as u32);
        put(&mut b, 20, 1);
        let h = HEADER_SIZE;
        put(&mut b, h, kind);
        put(&mut b, h + 4, entry);
        put(&mut b, h + 8, 24);
        put(&mut b, h + 12, cbuf1.0);
        put(&mut b, h + 16, cbuf1.1);
        for (j, w) in stage.iter().enumerate() {
            put(&mut b, h + STAGE_FIELDS + 4 * j, *w);
        }
        b.extend_from_slice(code);
        b
    }

    #[test]
    fn reads_a_compute_program_and_its_constants() {
        let code: Vec<u8> = (0..0x100u32).map(|x| x as u8).collect();
        let f = file(
            5,
            0,
            (0x80, 8),
            [64, 2, 1, 0x400, 0x10, 0, 0x800, 0, 0],
            &code,
        );
        let d = Dksh::parse(&f).unwrap();
        let p = &d.programs[0];
        assert_eq!(p.stage(), Some(Stage::Compute));
        assert_eq!(
            (p.block_dims(), p.shared_bytes(), p.local_bytes()),
            ([64, 2, 1], 0x400, 0x10)
        );
        assert_eq!(p.num_gprs, 24);
        assert_eq!(d.program_end(0), 0x80, "the code stops at the c[1] data");
        assert_eq!(d.program_code(0), &code[..0x80]);
        assert_eq!(d.cbuf1(0).unwrap(), &code[0x80..0x88]);
    }

    #[test]
    fn reads_the_fragment_and_tess_eval_fields() {
        let code = [0u8; 0x100];
        let f = file(1, 0x30, (0, 0), [0x0100, 0, 0, 0, 0, 0, 0, 0, 0], &code);
        let d = Dksh::parse(&f).unwrap();
        assert!(d.programs[0].early_fragment_tests());
        assert_eq!(d.cbuf1(0).unwrap(), &[] as &[u8]);
        assert_eq!(d.program_code(0).len(), 0x100 - 0x30);
        let f = file(4, 0x30, (0, 0), [0x211, 0, 0, 0, 0, 0, 0, 0, 0], &code);
        let p = &Dksh::parse(&f).unwrap().programs[0];
        assert_eq!((p.stage(), p.tess_param()), (Some(Stage::TessEval), 0x211));
    }

    #[test]
    fn bad_files_name_the_offset() {
        let code = [0u8; 0x100];
        let good = file(5, 0, (0, 0), [1; 9], &code);
        let err = |b: &[u8]| Dksh::parse(b).unwrap_err().offset;
        assert_eq!(err(&good[..0x10]), 0x10, "truncated header");
        let mut f = good.clone();
        f[0] = b'X';
        assert_eq!(err(&f), 0, "magic");
        assert_eq!(err(&good[..0x180]), 8, "code section past the end");
        let mut f = good.clone();
        f[20] = 65;
        assert_eq!(err(&f), 20, "too many programs");
        let mut f = good.clone();
        f[HEADER_SIZE + 4..HEADER_SIZE + 8].copy_from_slice(&0x100u32.to_le_bytes());
        assert_eq!(err(&f), HEADER_SIZE + 4, "entry point outside the code");
        let f = file(5, 0, (0xf0, 0x20), [1; 9], &code);
        let d = Dksh::parse(&f).unwrap();
        assert_eq!(
            d.cbuf1(0).unwrap_err().offset,
            HEADER_SIZE + 12,
            "c[1] past the code"
        );
        let mut f = good.clone();
        f[16..20].copy_from_slice(&0xfff0u32.to_le_bytes());
        assert_eq!(err(&f), 16, "program table past the end");
    }
}
