//! Base64 and hex text of job and io.json files, decoded by the `base64` and `hex` crates.
//! This module only applies the job format's leniency (whitespace ignored, base64 padding
//! optional, an optional `0x` before hex) and turns their errors into [`Error::Job`].

use std::borrow::Cow;

use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

use crate::error::Error;

/// RFC 4648 base64, standard alphabet, with or without padding.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// `s` without its whitespace (borrowed when it has none).
fn compact(s: &str) -> Cow<'_, str> {
    if s.contains(char::is_whitespace) {
        Cow::Owned(s.chars().filter(|c| !c.is_whitespace()).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// Decodes base64 (standard alphabet); whitespace is ignored, padding optional.
pub fn decode(s: &str) -> Result<Vec<u8>, Error> {
    BASE64
        .decode(compact(s).as_bytes())
        .map_err(|e| Error::Job(format!("base64: {e}")))
}

/// Decodes hex (whitespace ignored, optional `0x` prefix).
pub fn hex(s: &str) -> Result<Vec<u8>, Error> {
    ::hex::decode(compact(s.trim_start_matches("0x")).as_bytes())
        .map_err(|e| Error::Job(format!("hex: {e}")))
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
    use base64::Engine as _;

    #[test]
    fn lenient_forms() {
        for n in 0..20usize {
            let v: Vec<u8> = (0..n as u8).map(|x| x.wrapping_mul(37)).collect();
            assert_eq!(super::decode(&STANDARD.encode(&v)).unwrap(), v);
            assert_eq!(super::decode(&STANDARD_NO_PAD.encode(&v)).unwrap(), v);
        }
        assert_eq!(super::decode(" TW\nFu\t").unwrap(), b"Man");
        assert_eq!(super::decode("TQ").unwrap(), b"M");
        assert_eq!(super::hex("0x0a ff").unwrap(), vec![10, 255]);
        assert_eq!(super::hex("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn bad_text_is_a_job_error() {
        let msg = |r: Result<Vec<u8>, crate::error::Error>| r.unwrap_err().to_string();
        assert!(msg(super::decode("a*")).starts_with("bad job: base64:"));
        assert!(msg(super::decode("TWFu=")).contains("base64"));
        assert!(msg(super::hex("é0")).starts_with("bad job: hex:"));
        assert!(msg(super::hex("abc")).contains("hex"));
    }
}
