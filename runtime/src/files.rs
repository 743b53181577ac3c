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

/// Replaces `path` with `bytes` crash-safely: a killed process or a lost power leaves the old
/// file or the new one, never a mix. It writes `.<name>.tmp` in the same folder, syncs it,
/// renames it over `path` and syncs the folder (so the rename itself is durable).
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(".tmp");
    let tmp = dir.join(tmp_name);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)?;
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}
