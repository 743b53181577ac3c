//! NVN2 (Switch 2, Ampere) keys in a build: before a key is translated (through the same
//! chain as Switch 1's, `--arch sm86`), its instructions are decoded so that the report names
//! what the decoder does not know (key, offset, word), and `<key>.sass` (the `dmsh disasm
//! --arch sm86` listing) sits in the build folder next to the other keys' outputs.

use super::convert::Failed;
use dmsh_formats::control;
use dmsh_formats::sph::header::SPH_V4_SIZE;
use dmsh_isa::ampere;
use std::path::Path;

/// The instruction range of an NVN2 code area: after the SPH for graphics stages, up to the
/// control section's instruction end (+0x38).
fn instructions<'a>(code: &'a [u8], ctl: &[u8], stage: &str) -> Result<&'a [u8], String> {
    let c = control::parse(ctl, Some(ctl.len())).map_err(|e| e.0)?;
    let start = if stage == "compute" { 0 } else { SPH_V4_SIZE };
    let end = c.instr_end.unwrap_or(c.code_size).min(code.len());
    if start > end {
        return Err(format!(
            "instructions end at {end:#x}, before the SPH's end {start:#x}"
        ));
    }
    let end = start + (end - start) / 16 * 16;
    Ok(&code[start..end])
}

/// Decodes key `key`'s code (from the split's `pkg/`): writes `<key>.sass` into `dir` and
/// fails at step `decode` naming the first unknown encodings (offsets relative to the
/// first instruction, as `dmsh disasm` and nvdisasm print them). `Ok(n)`: all `n`
/// instructions decode.
pub fn decode_key(split: &Path, key: &str, stage: &str, dir: &Path) -> Result<usize, Failed> {
    let fail = |m: String| ("decode", m);
    let pkg = split.join("pkg");
    let read = |ext: &str| {
        let p = pkg.join(format!("{key}.{ext}"));
        std::fs::read(&p).map_err(|e| fail(format!("reading {}: {e}", p.display())))
    };
    let (code, ctl) = (read("code")?, read("control")?);
    let instrs = instructions(&code, &ctl, stage).map_err(|e| fail(format!("{key}.code: {e}")))?;
    let listing = ampere::listing(instrs, false);
    super::convert::write_atomic(&dir.join(format!("{key}.sass")), listing.as_bytes())
        .map_err(|e| ("write", format!("{key}.sass: {e}")))?;
    let unknown: Vec<String> = ampere::instructions(instrs)
        .filter_map(|(_, r, _)| r.err())
        .map(|e| e.to_string())
        .collect();
    match unknown.first() {
        None => Ok(instrs.len() / 16),
        Some(first) => Err(fail(format!(
            "{key}.code: {} of {} instructions do not decode; first: {first} (listing: {key}.sass)",
            unknown.len(),
            instrs.len() / 16
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NVN2 control section (0xD8 bytes) for `instr` instruction bytes (SPH included).
    fn control(instr: usize) -> Vec<u8> {
        let mut c = vec![0u8; 0xD8];
        let mut put = |at: usize, v: u32| c[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put(0, control::CONTROL_MAGIC);
        put(4, control::NVN2_VERSION);
        put(0x30, 0xD8);
        put(0x38, instr as u32);
        let rounded = instr.div_ceil(0x100) * 0x100;
        put(0x40, rounded as u32);
        put(0x44, rounded as u32);
        c
    }

    /// A compute key with one word the decoder does not know fails at step `decode`,
    /// naming the key and the word's offset; the listing is written either way.
    #[test]
    fn unknown_encodings_are_named_with_key_and_offset() {
        let dir = std::env::temp_dir().join(format!("dmsh-nvn2-{}", std::process::id()));
        let pkg = dir.join("pkg");
        std::fs::create_dir_all(&pkg).unwrap();
        // NOP, then an all-ones word (nvdisasm 13.5 -b SM86 refuses it: "Illegal instruction
        // found" at its address), then NOP.
        let nop: u128 = 0x000fc200000000000000000000007918;
        let words = [nop, !0u128, nop];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(pkg.join("k.code"), &code).unwrap();
        std::fs::write(pkg.join("k.control"), control(code.len())).unwrap();
        let (step, msg) = decode_key(&dir, "k", "compute", &dir).unwrap_err();
        assert_eq!(step, "decode");
        assert!(msg.starts_with("k.code: 1 of 3 instructions"), "{msg}");
        assert!(msg.contains("at offset 0x10"), "{msg}");
        let sass = std::fs::read_to_string(dir.join("k.sass")).unwrap();
        assert_eq!(sass.lines().count(), 3);
        assert!(sass.lines().nth(1).unwrap().contains("UNKNOWN"), "{sass}");
        // Without the bad word every instruction decodes.
        std::fs::write(pkg.join("k.code"), &code[..16]).unwrap();
        std::fs::write(pkg.join("k.control"), control(16)).unwrap();
        assert_eq!(decode_key(&dir, "k", "compute", &dir), Ok(1));
        // A graphics key's instructions start after the 0x80-byte SPH.
        let mut gfx = vec![0u8; SPH_V4_SIZE];
        gfx.extend_from_slice(&code[..16]);
        std::fs::write(pkg.join("k.code"), &gfx).unwrap();
        std::fs::write(pkg.join("k.control"), control(gfx.len())).unwrap();
        assert_eq!(decode_key(&dir, "k", "vertex", &dir), Ok(1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
