//! The chain version V the runtime loads: supplied at open, or compiled in from `DMSH_CHAIN`.

use crate::error::{Error, Status};

/// The chain version compiled in (`DMSH_CHAIN` when the library was built), if any.
pub const COMPILED: Option<&str> = option_env!("DMSH_CHAIN");

/// The compiled-in version as a C string, if any.
pub fn compiled_c() -> Option<&'static std::ffi::CStr> {
    static C: std::sync::OnceLock<Option<std::ffi::CString>> = std::sync::OnceLock::new();
    C.get_or_init(|| COMPILED.and_then(|v| std::ffi::CString::new(v).ok()))
        .as_deref()
}

/// Chooses V: `supplied`, else the compiled-in one; refuses anything but 12 lower-case hex
/// digits (what `dmsh build` names its `b-<V>` folder with).
pub fn choose(supplied: Option<&str>) -> Result<String, Error> {
    let v = match (supplied, COMPILED) {
        (Some(v), _) => v,
        (None, Some(v)) => v,
        (None, None) => {
            return Err(Error::new(
                Status::Chain,
                "no chain version: none was supplied and this runtime was built without \
                 DMSH_CHAIN",
            ))
        }
    };
    if !is_version(v) {
        return Err(Error::new(
            Status::Chain,
            format!("chain version {v:?} is not 12 lower-case hex digits"),
        ));
    }
    Ok(v.to_string())
}

/// Whether `v` has the form of a chain version (12 lower-case hex digits).
pub fn is_version(v: &str) -> bool {
    v.len() == 12 && v.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_twelve_hex_digits_are_versions() {
        assert_eq!(choose(Some("0123456789ab")).unwrap(), "0123456789ab");
        for bad in [
            "0123456789AB",
            "0123456789a",
            "0123456789abc",
            "",
            "0123456789ag",
        ] {
            assert_eq!(
                choose(Some(bad)).unwrap_err().status,
                Status::Chain,
                "{bad}"
            );
        }
        if COMPILED.is_none() {
            let e = choose(None).unwrap_err();
            assert!(e.text().contains("DMSH_CHAIN"), "{e}");
            assert!(compiled_c().is_none());
        }
    }
}
