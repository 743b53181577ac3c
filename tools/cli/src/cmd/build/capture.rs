//! A capture folder (`dmsh build --spirv DIR`; docs/build.md, "Vulkan modules"): the SPIR-V
//! modules a Vulkan title generated at run time (seed 000: Super Mario Galaxy's
//! `DM_VK_CAPTURE=<dir>`), read like a RomFS: every `*.spv` file under the folder, in path
//! order. A module's key is its file stem when that is 16 lowercase hex digits (the host's
//! key, as the capture wrote it), else `dmsh_formats::key::spirv_key` of its bytes; its stage
//! is its entry point's. A file that is not a whole SPIR-V module (magic, word count, an
//! instruction running past the end, no single entry point) is read as the error naming the
//! file and the byte offset, and the build goes on.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// SPIR-V's magic number.
const MAGIC: u32 = 0x0723_0203;

/// One `*.spv` file of the folder.
#[derive(Debug, Clone)]
pub struct Module {
    /// Its key: the file stem when that is 16 lowercase hex digits, else
    /// `dmsh_formats::key::spirv_key` of its bytes.
    pub key: String,
    /// The file.
    pub file: PathBuf,
    /// Its stage and words, or what is wrong (naming the file and the byte offset).
    pub read: Result<(&'static str, Vec<u32>), String>,
}

/// Whether `s` is a key as the host writes it: 16 lowercase hex digits.
fn is_key(s: &str) -> bool {
    s.len() == 16
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Every `*.spv` file under `dir`, sorted.
fn spv_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let rd = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for e in rd {
        let p = e
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        if p.is_dir() {
            spv_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "spv") {
            out.push(p);
        }
    }
    Ok(())
}

/// The stage name of an execution model (SPIR-V's numbering).
fn stage_name(model: u32) -> Option<&'static str> {
    Some(match model {
        0 => "vertex",
        1 => "tess_control",
        2 => "tess_eval",
        3 => "geometry",
        4 => "fragment",
        5 => "compute",
        _ => return None,
    })
}

/// Checks the words of a module: the header, every instruction's word count, one
/// `OpEntryPoint`; returns the stage. Errors name the byte offset.
fn check(bytes: &[u8]) -> Result<(Vec<u32>, &'static str), String> {
    if bytes.len() < 4 || u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) != MAGIC {
        let got: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
        return Err(format!(
            "offset 0x0: not SPIR-V (magic {}, expected 03 02 23 07)",
            got.join(" ")
        ));
    }
    if bytes.len() < 20 {
        return Err(format!(
            "offset {:#x}: the 20-byte header is cut short",
            bytes.len()
        ));
    }
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "offset {:#x}: the file ends inside a word ({} bytes)",
            bytes.len() / 4 * 4,
            bytes.len()
        ));
    }
    let words = dmsh_vk::spirv_words(bytes).map_err(|e| e.to_string())?;
    let (mut at, mut stages) = (5, Vec::new());
    while at < words.len() {
        let n = (words[at] >> 16) as usize;
        let op = words[at] & 0xffff;
        if n == 0 {
            return Err(format!(
                "offset {:#x}: instruction with word count 0",
                at * 4
            ));
        }
        if at + n > words.len() {
            return Err(format!(
                "offset {:#x}: instruction (opcode {op}) of {n} words runs past the end of \
                 the file ({} bytes): truncated",
                at * 4,
                bytes.len()
            ));
        }
        // OpEntryPoint model %f "name" …
        if op == 15 && n >= 3 {
            stages.push(stage_name(words[at + 1]).ok_or_else(|| {
                format!(
                    "offset {:#x}: execution model {} has no Metal stage",
                    at * 4,
                    words[at + 1]
                )
            })?);
        }
        at += n;
    }
    match stages.as_slice() {
        [s] => Ok((words, s)),
        s => Err(format!(
            "offset {:#x}: {} entry points; a captured module has one",
            bytes.len(),
            s.len()
        )),
    }
}

/// Reads every `*.spv` file of capture folder `dir`, in path order (a second file with a key
/// already taken is not read).
pub fn read(dir: &Path) -> anyhow::Result<Vec<Module>> {
    let mut files = Vec::new();
    spv_files(dir, &mut files)?;
    files.sort();
    let mut modules: Vec<Module> = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let key = if is_key(stem) {
            stem.to_string()
        } else {
            dmsh_formats::key::spirv_key(&bytes)
        };
        let read = match modules.iter().find(|m| m.key == key) {
            Some(m) => Err(format!("key {key} is also {}'s", m.file.display())),
            None => check(&bytes).map(|(words, stage)| (stage, words)),
        };
        let read = read.map_err(|e| format!("{}: {e}", file.display()));
        modules.push(Module { key, file, read });
    }
    Ok(modules)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u32> {
        vec![MAGIC, 0x0001_0000, 0, 10, 0]
    }

    fn bytes(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn bad_words_name_their_offset() {
        assert!(check(b"random bytes, not spirv")
            .unwrap_err()
            .contains("offset 0x0: not SPIR-V"));
        assert!(check(&bytes(&header())[..14])
            .unwrap_err()
            .contains("header"));
        let mut w = header();
        // OpEntryPoint Fragment %1 "m" then a 9-word instruction cut short.
        w.extend([(4 << 16) | 15, 4, 1, u32::from_le_bytes(*b"m\0\0\0")]);
        assert_eq!(check(&bytes(&w)).unwrap().1, "fragment");
        w.push((9 << 16) | 71);
        let e = check(&bytes(&w)).unwrap_err();
        assert!(
            e.starts_with("offset 0x24: instruction (opcode 71) of 9 words"),
            "{e}"
        );
        let mut b = bytes(&w);
        b.pop();
        assert!(check(&b).unwrap_err().contains("ends inside a word"));
    }

    #[test]
    fn keys_are_stems_or_the_bytes_digest() {
        assert!(is_key("0123456789abcdef"));
        assert!(!is_key("0123456789ABCDEF"));
        assert!(!is_key("vs_main"));
    }
}
