//! Standard base64 (RFC 4648, with padding) and hex, for job and io.json files.

use crate::error::Error;

const ALPHA: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Decodes base64; whitespace is ignored, padding optional.
pub fn decode(s: &str) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (i, c) in s.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => {
                return Err(Error::Job(format!(
                    "base64: bad character {:?} at {i}",
                    c as char
                )))
            }
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Encodes base64 with padding.
pub fn encode(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len().div_ceil(3) * 4);
    for ch in b.chunks(3) {
        let n = (ch[0] as u32) << 16
            | (*ch.get(1).unwrap_or(&0) as u32) << 8
            | *ch.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= ch.len() {
                s.push(ALPHA[(n >> (18 - 6 * k)) as usize & 63] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Decodes hex (whitespace ignored, optional `0x` prefix).
pub fn hex(s: &str) -> Result<Vec<u8>, Error> {
    let s: String = s
        .trim_start_matches("0x")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if let Some(c) = s.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(Error::Job(format!("hex string contains {c:?}")));
    }
    if !s.len().is_multiple_of(2) {
        return Err(Error::Job("hex string has an odd number of digits".into()));
    }
    (0..s.len() / 2)
        .map(|i| {
            u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
                .map_err(|_| Error::Job(format!("bad hex digits {:?}", &s[2 * i..2 * i + 2])))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip() {
        for n in 0..20usize {
            let v: Vec<u8> = (0..n as u8).map(|x| x.wrapping_mul(37)).collect();
            assert_eq!(super::decode(&super::encode(&v)).unwrap(), v);
        }
        assert_eq!(super::encode(b"Man"), "TWFu");
        assert_eq!(super::hex("0x0a ff").unwrap(), vec![10, 255]);
        assert!(super::decode("a*").is_err());
        assert!(super::hex("é0").is_err());
    }
}
