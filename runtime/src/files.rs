//! Bounded reads of the title's files (a hostile file never makes an unbounded allocation).

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Status};

/// Reads `path` as UTF-8 text of at most `max` bytes; failures (a missing file among them)
/// are `status` errors naming the file.
pub fn read_text(path: &Path, max: u64, status: Status) -> Result<String, Error> {
    match read_text_opt(path, max, status)? {
        Some(t) => Ok(t),
        None => Err(Error::new(
            status,
            format!("{}: no such file", path.display()),
        )),
    }
}

/// [`read_text`], with `Ok(None)` when the file does not exist.
pub fn read_text_opt(path: &Path, max: u64, status: Status) -> Result<Option<String>, Error> {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::new(status, format!("{}: {e}", path.display()))),
    };
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::new(status, format!("{}: {e}", path.display())))?;
    if bytes.len() as u64 > max {
        return Err(Error::new(
            status,
            format!("{}: larger than {max} bytes", path.display()),
        ));
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        Error::new(
            status,
            format!(
                "{}: not UTF-8 text (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })
}
