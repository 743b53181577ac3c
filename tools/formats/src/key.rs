//! The shader key: what the host hashes when the game hands it a program.

use sha2::{Digest, Sha256};

use crate::control::{Control, Gen, NVN2_KEY_CONTROL_LEN};

/// Computes the 16-hex-digit key of a control section (`control` starts at the section) and its
/// code area (`code`, exactly the bytes the key covers).
///
/// Switch 1: sha256(control[0 : min(0x880, control+0x20)] ‖ code).
/// NVN2: sha256(control[0 : 0x48] with +0x30..+0x34 zeroed ‖ code).
pub fn key(ctl: &Control, control: &[u8], code: &[u8]) -> String {
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
    hex16(&h.finalize())
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
    }
}
