//! One MSL file from several SPIRV-Cross compilations of the same module, one per entry point
//! (SPIRV-Cross writes one entry point per compilation; a vertex library holds `main0` and
//! `main0_z`, docs/build.md "vs_depth").
//!
//! SPIRV-Cross writes top-level items (the preamble, helper templates, structs, functions)
//! separated by blank lines, and two compilations of one module write the shared items
//! identically: they are the same SPIR-V with the same ids. The merge keeps the first file and
//! appends, in order, every item of the others that it does not already hold (their entry
//! points and the entry points' own `…_in` / `…_out` structs). Two items with one name and
//! different text would be a redefinition: that is an error, not a guess.

use std::collections::HashSet;

/// The top-level items of `msl`: the text between blank lines outside braces.
fn items(msl: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth: i64 = 0;
    for line in msl.lines() {
        if line.trim().is_empty() && depth == 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        cur.push_str(line);
        cur.push('\n');
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The name an item defines: the word before its first `(`, `{`, `;` or `=` on its first
/// line that is not a preprocessor or comment line (`struct main0_out`, `float4 spvFoo(`).
fn defined_name(item: &str) -> Option<&str> {
    let line = item
        .lines()
        .find(|l| !l.starts_with('#') && !l.starts_with("//") && !l.starts_with("template"))?;
    let head = line.split(['(', '{', ';', '=', '[']).next()?.trim();
    head.rsplit(' ').next().filter(|n| !n.is_empty())
}

/// `first` followed by every item of `others` it does not hold. Err names an item defined
/// twice with different text.
pub fn merge(first: &str, others: &[&str]) -> Result<String, String> {
    let mut out = items(first);
    let mut seen: HashSet<String> = out.iter().cloned().collect();
    for o in others {
        for it in items(o) {
            if seen.contains(&it) {
                continue;
            }
            if let Some(n) = defined_name(&it) {
                if out.iter().any(|x| defined_name(x) == Some(n)) {
                    return Err(format!("two entry points' MSL define {n} differently"));
                }
            }
            seen.insert(it.clone());
            out.push(it);
        }
    }
    Ok(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "#include <metal_stdlib>\nusing namespace metal;\n\nstruct main0_out\n{\n    float4 p [[position]];\n};\n\nvertex main0_out main0()\n{\n    main0_out out = {};\n\n    return out;\n}\n";

    #[test]
    fn shared_items_once_entry_points_each() {
        let b = A.replace("main0", "main0_z");
        let m = merge(A, &[&b]).unwrap();
        assert_eq!(m.matches("#include").count(), 1);
        assert_eq!(m.matches("struct main0_out").count(), 1);
        assert_eq!(m.matches("struct main0_z_out").count(), 1);
        assert!(m.contains("vertex main0_z_out main0_z()"));
        assert!(m.find("struct main0_z_out").unwrap() < m.find("main0_z()").unwrap());
        // The blank line inside the function body does not split it.
        assert_eq!(items(A).len(), 3);
    }

    #[test]
    fn one_name_two_texts_is_an_error() {
        let b = A.replace("float4 p", "float3 p");
        assert!(merge(A, &[&b]).unwrap_err().contains("main0_out"));
    }
}
