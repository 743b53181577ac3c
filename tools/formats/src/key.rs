//! The shader key: what the host hashes when the game hands it a program.

use sha2::{Digest, Sha256};

use crate::control::{Control, Gen, NVN2_KEY_CONTROL_LEN};

/// Computes the 16-hex-digit key of a control section (`control` starts at the section) and its
/// code area (`code`, exactly the bytes the key covers).
///
/// Switch 1: sha256(control[0 : min(0x880, control+0x20)] ‖ code).
/// NVN2: sha256(control[0 : 0x48] with +0x30..+0x34 zeroed ‖ code).
pub fn key(ctl: &Control, control: &[u8], code: &[u8]) -> String {
    hex16(&key_bytes(ctl, control, code))
}

/// The key as its 8 bytes (the first 8 of the digest; [`key`] prints them as hex), without
/// allocating: what the runtime loader computes when the game hands a program over.
pub fn key_bytes(ctl: &Control, control: &[u8], code: &[u8]) -> [u8; 8] {
    let mut h = Sha256::new();
    match ctl.gen {
        Gen::Nvn1 => h.update(&control[..ctl.hash_len]),
        Gen::Nvn2 => {
            let mut head = [0u8; NVN2_KEY_CONTROL_LEN];
            head.copy_from_slice(&control[..NVN2_KEY_CONTROL_LEN]);
            head[0x30..0x34].fill(0);
            h.update(head);
        }
    }
    h.update(code);
    let d = h.finalize();
    let mut k = [0u8; 8];
    k.copy_from_slice(&d[..8]);
    k
}

/// Why a control section and code area handed over at run time have no key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyError {
    /// The control section does not parse.
    Control(crate::control::NotControl),
    /// The code area is shorter than the code size the control section gives.
    ShortCode {
        /// Bytes given.
        have: usize,
        /// The control section's code size.
        need: usize,
    },
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyError::Control(e) => write!(f, "control section: {}", e.0),
            KeyError::ShortCode { have, need } => write!(
                f,
                "code area of {have:#x} bytes is shorter than the code size {need:#x} its control \
                 section gives"
            ),
        }
    }
}

impl std::error::Error for KeyError {}

/// The key of the program a game hands over: `control` from the control section's first byte
/// (at least its length), `code` from the code area's first byte (at least the code size the
/// section gives; what follows is not hashed). The same parse, code-size cut and hash as
/// `dmsh split` (dmsh-scan's `shader::extract_with`), without a container's size hint (an
/// NVN2 section whose +0x30 is 0 is then taken as 0xD8 bytes long).
pub fn key_of(control: &[u8], code: &[u8]) -> Result<[u8; 8], KeyError> {
    let ctl = crate::control::parse(control, None).map_err(KeyError::Control)?;
    // `parse` keeps `hash_len` (and NVN2's 0x48 key bytes, below its 0x64 minimum length)
    // within `control`.
    let code = code.get(..ctl.code_size).ok_or(KeyError::ShortCode {
        have: code.len(),
        need: ctl.code_size,
    })?;
    Ok(key_bytes(&ctl, control, code))
}

/// The key of a Vulkan module a capture folder holds without its host's key (docs/build.md,
/// "Vulkan modules"): the first 16 hex digits of the sha256 of the module's bytes, in the
/// style of [`key`].
pub fn spirv_key(module: &[u8]) -> String {
    hex16(&spirv_key_bytes(module))
}

/// [`spirv_key`] as the key's 8 bytes, most significant first (no allocation).
pub fn spirv_key_bytes(module: &[u8]) -> [u8; 8] {
    let d = Sha256::digest(module);
    let mut k = [0u8; 8];
    k.copy_from_slice(&d[..8]);
    k
}

/// The first 16 lower-case hex digits of a digest.
pub fn hex16(d: &[u8]) -> String {
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_lower_case_hex_digits() {
        let d = Sha256::digest(b"abc");
        assert_eq!(hex16(&d), "ba7816bf8f01cfea");
        assert_eq!(spirv_key(b"abc"), "ba7816bf8f01cfea");
    }

    #[test]
    fn key_of_cuts_the_code_and_refuses_short_code() {
        // Switch 1, SDK 10's 0x850-byte section, 16 bytes of code and 8 bytes after it.
        let mut control = vec![0u8; 0x850];
        control[0..4].copy_from_slice(&crate::control::CONTROL_MAGIC.to_le_bytes());
        control[0x20..0x24].copy_from_slice(&0x850u32.to_le_bytes());
        control[0x704..0x708].copy_from_slice(&16u32.to_le_bytes());
        let code: Vec<u8> = (0..24).collect();
        let mut h = Sha256::new();
        h.update(&control);
        h.update(&code[..16]);
        let k = key_of(&control, &code).unwrap();
        assert_eq!(hex16(&k), hex16(&h.finalize()));
        assert_eq!(
            key_of(&control, &code[..15]),
            Err(KeyError::ShortCode { have: 15, need: 16 })
        );
        assert!(matches!(
            key_of(&control[..0x800], &code),
            Err(KeyError::Control(_))
        ));
    }
}
