//! spirv-val, the Khronos validator, on a module in memory (what the runner's callers and the
//! tests check translated SPIR-V with before running it).

/// Runs `spirv-val --target-env vulkan1.2` on `words`; `Err` with its first lines when it
/// rejects the module (or cannot be run). `DMSH_SPIRV_VAL` names another validator binary
/// (a newer SPIRV-Tools than the distribution's, e.g. for SPV_KHR_cooperative_matrix).
pub fn spirv_val(words: &[u32]) -> Result<(), String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let p = std::env::temp_dir().join(format!(
        "dmsh-val-{}-{}.spv",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&p, bytes).map_err(|e| e.to_string())?;
    let exe = std::env::var("DMSH_SPIRV_VAL").unwrap_or_else(|_| "spirv-val".into());
    let out = std::process::Command::new(exe)
        .args(["--target-env", "vulkan1.2"])
        .arg(&p)
        .output()
        .map_err(|e| format!("spirv-val: {e}"));
    let _ = std::fs::remove_file(&p);
    let out = out?;
    if out.status.success() {
        Ok(())
    } else {
        let mut s = String::from_utf8_lossy(&out.stderr).to_string();
        s.push_str(&String::from_utf8_lossy(&out.stdout));
        Err(s.lines().take(3).collect::<Vec<_>>().join(" | "))
    }
}
