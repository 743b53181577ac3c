//! Shader keys as the host holds them: 64-bit numbers whose 16 hex digits are the key
//! `dmsh split` writes (most significant digit first), computed by `dmsh_formats::key`.

use crate::error::{Error, Status};

/// The key of the program the game hands to `nvnProgramSetShaders`: `control` from the
/// control section's first byte (at least its length), `code` from the code area's first byte
/// (at least the code size the section gives). The rule is `dmsh_formats::key::key_of`, the
/// one `dmsh split` uses; no allocation.
pub fn of(control: &[u8], code: &[u8]) -> Result<u64, Error> {
    dmsh_formats::key::key_of(control, code)
        .map(u64::from_be_bytes)
        .map_err(|e| Error::new(Status::Key, e.to_string()))
}

/// The key of a Vulkan module captured without its host's key (`dmsh build --spirv` names
/// such a module by the first 16 hex digits of the sha256 of its bytes,
/// `dmsh_formats::key::spirv_key`); no allocation.
pub fn of_spirv(module: &[u8]) -> u64 {
    u64::from_be_bytes(dmsh_formats::key::spirv_key_bytes(module))
}

/// Parses the 16 lower-case hex digits of a key.
pub fn parse(hex: &str) -> Option<u64> {
    let b = hex.as_bytes();
    if b.len() != 16 {
        return None;
    }
    let mut k = 0u64;
    for &c in b {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        k = k << 4 | u64::from(d);
    }
    Some(k)
}

/// The 16 lower-case hex digits of a key.
pub fn format(key: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        let d = (key >> (60 - 4 * i)) as u8 & 0xf;
        *o = if d < 10 { b'0' + d } else { b'a' + d - 10 };
    }
    out
}

/// [`format`] as a `String`.
pub fn to_string(key: u64) -> String {
    String::from_utf8_lossy(&format(key)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_other_text() {
        let k = parse("ba7816bf8f01cfea").unwrap();
        assert_eq!(k, 0xba78_16bf_8f01_cfea);
        assert_eq!(to_string(k), "ba7816bf8f01cfea");
        for bad in [
            "BA7816BF8F01CFEA",
            "ba7816bf8f01cfe",
            "ba7816bf8f01cfeaa",
            "ba7816bf8f01cfeg",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(to_string(0), "0000000000000000");
    }

    #[test]
    fn a_modules_key_is_the_first_eight_bytes_of_its_sha256() {
        // sha256("abc") = ba7816bf 8f01cfea 414140de … (FIPS 180-2's example).
        assert_eq!(of_spirv(b"abc"), 0xba78_16bf_8f01_cfea);
    }
}
