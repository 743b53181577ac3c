//! Facts read from the corpus' own text, independently of our decoder and translator: what a
//! GLSL source declares (its buffer blocks' bindings, its clip / cull distance counts) and the
//! local memory an nvdisasm listing touches.
//!
//! Std only: dmsh-spv's tests cannot depend on this crate (it depends on dmsh-spv), so
//! tools/spv/tests/common includes this file by path.

/// The bindings of a GLSL source's `buffer` blocks, sorted.
pub fn buffer_bindings(src: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for line in src.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("layout(") else {
            continue;
        };
        let Some((inner, decl)) = rest.split_once(')') else {
            continue;
        };
        if !decl.split_whitespace().any(|w| w == "buffer") {
            continue;
        }
        for p in inner.split(',').map(str::trim) {
            if let Some(b) = p.strip_prefix("binding") {
                if let Ok(n) = b.trim_start_matches([' ', '=']).trim().parse() {
                    v.push(n);
                }
            }
        }
    }
    v.sort_unstable();
    v
}

/// (clip, cull) distance counts a GLSL source declares (`float gl_ClipDistance[C]`,
/// `float gl_CullDistance[K]`), when it declares cull distances: what a shader's facts
/// would give (the binary does not separate them).
pub fn clip_cull(src: &str) -> Option<(u32, u32)> {
    let count = |name: &str| -> u32 {
        src.lines()
            .filter_map(|l| {
                let l = l.trim();
                let rest = l.strip_prefix("out ").or_else(|| l.strip_prefix("in "))?;
                let rest = rest.trim_start().strip_prefix("float ")?.trim_start();
                let n = rest.strip_prefix(name)?.trim_start().strip_prefix('[')?;
                n.split(']').next()?.trim().parse().ok()
            })
            .max()
            .unwrap_or(0)
    };
    let k = count("gl_CullDistance");
    (k > 0).then(|| (count("gl_ClipDistance"), k))
}

/// The highest byte a constant-offset `LDL`/`STL` of an nvdisasm listing touches (0: none):
/// the constant offset inside the brackets (`[R3+0x170]` or `[0x170]`) plus the access width.
pub fn listing_local_bound(listing: &str) -> u32 {
    let mut need = 0u32;
    for line in listing.lines() {
        let Some(pos) = line.find("STL").or_else(|| line.find("LDL")) else {
            continue;
        };
        let text = &line[pos..];
        let width = if text.contains(".128") {
            16
        } else if text.contains(".64") {
            8
        } else {
            4
        };
        let (Some(a), Some(b)) = (text.find('['), text.find(']')) else {
            continue;
        };
        let off = text[a + 1..b].rsplit(['+', ' ']).next().unwrap_or("");
        if let Some(hex) = off.strip_prefix("0x") {
            if let Ok(v) = u32::from_str_radix(hex, 16) {
                need = need.max(v + width);
            }
        }
    }
    need
}
