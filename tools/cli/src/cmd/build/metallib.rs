//! `xcrun metal` where it exists (macOS with Xcode): `<key>_b.metal` → `<key>_b.metallib`.
//! Kept small and apart because it cannot run on Linux; the build detects xcrun once per run
//! and, without it, stops after MSL and says so once.
//!
//! Flags (docs/build.md, "metallib"): MSL 3.1 (`-std=metal3.1`), `-fpreserve-invariance` on
//! every platform (seed 000: Super Mario Odyssey's depth pre-pass needs `[[invariant]]`
//! positions to hold), and for iOS `-fmetal-math-mode=relaxed` as the seeds' iOS builds used
//! (the translated shaders reproduce Maxwell's NaN behaviour with explicit `isnan` selects, so
//! they do not rely on IEEE NaN rules that relaxed mode drops). `DMSH_XCRUN` names another
//! xcrun (tests use a stand-in that records its arguments).

use std::path::Path;
use std::process::Command;

/// The xcrun to run: `$DMSH_XCRUN`, else `xcrun` on PATH.
pub fn xcrun() -> String {
    std::env::var("DMSH_XCRUN").unwrap_or_else(|_| "xcrun".into())
}

/// The Metal compiler of one platform.
#[derive(Clone, Debug)]
pub struct MetalCompiler {
    xcrun: String,
    sdk: &'static str,
    ios: bool,
}

impl MetalCompiler {
    /// The compiler of the platform (`iphoneos` with `ios`, else `macosx`), if xcrun finds one.
    pub fn detect(ios: bool) -> Option<MetalCompiler> {
        let sdk = if ios { "iphoneos" } else { "macosx" };
        let x = xcrun();
        let found = Command::new(&x)
            .args(["-sdk", sdk, "--find", "metal"])
            .output()
            .is_ok_and(|o| o.status.success());
        found.then_some(MetalCompiler { xcrun: x, sdk, ios })
    }

    /// The arguments after `xcrun` that compile `src` into `out`.
    pub fn args(&self, src: &Path, out: &Path) -> Vec<String> {
        let mut a: Vec<String> = ["-sdk", self.sdk, "metal", "-std=metal3.1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.push("-fpreserve-invariance".into());
        if self.ios {
            a.push("-fmetal-math-mode=relaxed".into());
        }
        a.extend(["-o".into(), out.display().to_string()]);
        a.push(src.display().to_string());
        a
    }

    /// Compiles `src` into `out`; Err with the compiler's messages (one line).
    pub fn compile(&self, src: &Path, out: &Path) -> Result<(), String> {
        let o = Command::new(&self.xcrun)
            .args(self.args(src, out))
            .output()
            .map_err(|e| format!("running {}: {e}", self.xcrun))?;
        if o.status.success() && out.is_file() {
            return Ok(());
        }
        let mut msg = String::from_utf8_lossy(&o.stderr).into_owned();
        msg.push_str(&String::from_utf8_lossy(&o.stdout));
        let msg: Vec<&str> = msg
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(4)
            .collect();
        Err(format!("xcrun metal: {}", msg.join(" | ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_the_platform() {
        let mac = MetalCompiler {
            xcrun: "xcrun".into(),
            sdk: "macosx",
            ios: false,
        };
        let a = mac.args(Path::new("k_b.metal"), Path::new("k_b.metallib"));
        assert_eq!(
            a.join(" "),
            "-sdk macosx metal -std=metal3.1 -fpreserve-invariance -o k_b.metallib k_b.metal"
        );
        let ios = MetalCompiler {
            sdk: "iphoneos",
            ios: true,
            ..mac
        };
        let a = ios.args(Path::new("k_b.metal"), Path::new("k_b.metallib"));
        assert!(a.contains(&"-fmetal-math-mode=relaxed".to_string()));
        assert!(a.contains(&"-fpreserve-invariance".to_string()));
        assert_eq!(a[1], "iphoneos");
    }
}
