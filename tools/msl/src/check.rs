//! Criterion (b) of the Metal build: the MSL's entry point and its argument, attribute, colour
//! and varying indices agree with the reflection (docs/build.md, "What check_bindings catches").

use crate::bindings::{metal_bindings, Table};
use crate::options::ENTRY_POINT;
use crate::signature::{functions, struct_members, Decl, Function};
use dmsh_reflect::Reflection;
use std::collections::BTreeSet;

/// The MSL function qualifier of a reflection stage that Metal runs directly.
pub(crate) fn qualifier(stage: &str) -> Option<&'static str> {
    match stage {
        "compute" => Some("kernel"),
        "vertex" | "tess_eval" => Some("vertex"),
        "fragment" => Some("fragment"),
        _ => None,
    }
}

/// One Metal argument the MSL declares: table, first index, elements, name.
type Arg = (Table, u32, u32, String);

/// The Metal entry points `refl` expects: [`ENTRY_POINT`], and `metal_entry_z` for a
/// vertex shader with the depth variant.
pub(crate) fn expected_entry_points(refl: &Reflection) -> Vec<&str> {
    let mut v = vec![ENTRY_POINT];
    v.extend(refl.metal_entry_z.as_deref());
    v
}

/// Every disagreement between `msl`'s entry points and `refl`, one sentence each; empty when
/// they agree. Checks that the functions are exactly the expected entry points (`main0`, and
/// `main0_z` where the reflection names it) of the reflection's stage, and for each one
/// that every reflection resource has its `[[buffer/texture/sampler(n)]]` with its element
/// count and nothing else takes an index (SPIRV-Cross's own `spv…` buffers only above the
/// reflection's buffers), and that vertex `[[attribute(n)]]`, varying `[[user(locnN)]]` and
/// fragment `[[color(n)]]` locations are the reflection's inputs and outputs.
pub fn check_bindings(msl: &str, refl: &Reflection) -> Vec<String> {
    let mut bad = Vec::new();
    let want_q = qualifier(&refl.stage);
    let fns = functions(msl);
    let want = expected_entry_points(refl);
    let names: Vec<&str> = fns.iter().map(|f| f.name.as_str()).collect();
    for f in &fns {
        if !want.contains(&f.name.as_str()) {
            bad.push(format!(
                "entry point {} is not in the reflection (expected {want:?})",
                f.name
            ));
        }
    }
    for name in &want {
        let Some(f) = fns.iter().find(|f| f.name == *name) else {
            bad.push(format!("no entry point {name} (functions: {names:?})"));
            continue;
        };
        if want_q != Some(f.qualifier.as_str()) {
            bad.push(format!(
                "{name} is a {} function; the reflection's stage is {}",
                f.qualifier, refl.stage
            ));
        }
        let before = bad.len();
        check_resources(f, refl, &mut bad);
        check_io(msl, f, refl, &mut bad);
        if want.len() > 1 {
            for b in &mut bad[before..] {
                *b = format!("{name}: {b}");
            }
        }
    }
    bad
}

/// The `[[buffer/texture/sampler(n)]]` arguments of `f`.
fn arguments(f: &Function, bad: &mut Vec<String>) -> Vec<Arg> {
    let mut args = Vec::new();
    for p in &f.params {
        for t in [Table::Buffer, Table::Texture, Table::Sampler] {
            if let Some(n) = p.attr(t.attribute()) {
                match n.parse() {
                    Ok(n) => args.push((t, n, p.count(), p.name.clone())),
                    Err(_) => bad.push(format!(
                        "{} [[{}({n})]]: not an index",
                        p.name,
                        t.attribute()
                    )),
                }
            }
        }
    }
    args.sort();
    args
}

fn check_resources(f: &Function, refl: &Reflection, bad: &mut Vec<String>) {
    let args = arguments(f, bad);
    let bindings = match metal_bindings(refl) {
        Ok(b) => b,
        Err(e) => {
            bad.push(format!("reflection: {e}"));
            Vec::new()
        }
    };
    let mut expected = BTreeSet::new();
    for b in &bindings {
        let r = &refl.resources[b.resource];
        for &(t, i) in &b.slots {
            expected.insert((t, i));
            let at = format!("[[{}({i})]]", t.attribute());
            let what = format!(
                "{} {} (set {}, binding {})",
                r.kind,
                r.bank,
                r.set,
                r.vk_binding()
            );
            match args.iter().find(|a| (a.0, a.1) == (t, i)) {
                None => bad.push(format!("{what}: no {at} argument in the MSL")),
                Some(a) if a.2 != b.count => {
                    // SPIRV-Cross writes an array of buffers as one argument per element,
                    // element k at index i + k.
                    let elems: Vec<(Table, u32)> = (1..b.count).map(|k| (t, i + k)).collect();
                    let split = t == Table::Buffer
                        && a.2 == 1
                        && elems
                            .iter()
                            .all(|e| args.iter().any(|x| (x.0, x.1, x.2) == (e.0, e.1, 1)));
                    if split {
                        expected.extend(elems);
                    } else {
                        bad.push(format!(
                            "{what}: {at} {} has {} elements, the reflection {}",
                            a.3, a.2, b.count
                        ))
                    }
                }
                Some(_) => {}
            }
        }
    }
    for (k, a) in args.iter().enumerate() {
        let at = format!("{} [[{}({})]]", a.3, a.0.attribute(), a.1);
        if let Some(next) = args.get(k + 1).filter(|n| n.0 == a.0 && n.1 < a.1 + a.2) {
            bad.push(format!("{at} overlaps {} at index {}", next.3, next.1));
        }
        if expected.contains(&(a.0, a.1)) {
            continue;
        }
        // SPIRV-Cross's own buffers (spvBufferSizeConstants, spvSwizzleConstants, …) sit at
        // the top of the buffer table, above what the reflection takes.
        if a.3.starts_with("spv") && a.0 == Table::Buffer {
            if a.1 < refl.metal.buffers {
                bad.push(format!(
                    "{at}: SPIRV-Cross's buffer is inside the reflection's {} buffers",
                    refl.metal.buffers
                ));
            }
            continue;
        }
        bad.push(format!("{at}: no reflection resource has this index"));
    }
}

/// The (location, dual-source index) of `members` carrying attribute `attr` (`attribute`,
/// `color` with its `index(n)`, or `user` with `locnN` / `locnN_C`; the index is 0 but for
/// `[[color(n), index(1)]]`).
fn locations(members: &[Decl], attr: &str, bad: &mut Vec<String>) -> BTreeSet<(u32, u32)> {
    let mut out = BTreeSet::new();
    for m in members {
        let Some(a) = m.attr(attr) else { continue };
        let n = if attr == "user" {
            match a.strip_prefix("locn") {
                Some(n) => n.split('_').next().unwrap_or(""),
                None => continue, // user(clip0) etc.: SPIRV-Cross's own varyings
            }
        } else {
            a
        };
        let index = match (attr, m.attr("index")) {
            ("color", Some(i)) => i.parse().ok(),
            _ => Some(0),
        };
        match (n.parse(), index) {
            (Ok(n), Some(i)) => {
                out.insert((n, i));
            }
            _ => bad.push(format!("{} [[{attr}({a})]]: not a location", m.name)),
        }
    }
    out
}

/// `location l` (and `index i` when not 0), for messages.
fn at_location((l, i): (u32, u32)) -> String {
    match i {
        0 => format!("location {l}"),
        i => format!("location {l} index {i}"),
    }
}

fn check_io(msl: &str, f: &Function, refl: &Reflection, bad: &mut Vec<String>) {
    let (in_attr, out_attr) = match refl.stage.as_str() {
        "vertex" => ("attribute", "user"),
        "fragment" => ("user", "color"),
        _ => return,
    };
    let stage_in = f
        .params
        .iter()
        .find(|p| p.attr("stage_in").is_some())
        .map(|p| {
            p.ty.trim_end_matches(['&', ' '])
                .rsplit(' ')
                .next()
                .unwrap_or("")
        });
    let members = |ty: Option<&str>| -> Vec<Decl> {
        ty.and_then(|t| struct_members(msl, t)).unwrap_or_default()
    };
    let sides = [
        ("input", in_attr, members(stage_in), &refl.inputs),
        (
            "output",
            out_attr,
            members(Some(f.ret.as_str())),
            &refl.outputs,
        ),
    ];
    for (side, attr, decls, vars) in sides {
        let got = locations(&decls, attr, bad);
        let want: BTreeSet<(u32, u32)> = vars.iter().map(|v| (v.location, v.index)).collect();
        for l in want.difference(&got) {
            bad.push(format!(
                "{side} {}: no [[{attr}]] member in the MSL",
                at_location(*l)
            ));
        }
        for l in got.difference(&want) {
            bad.push(format!(
                "{side} {}: in the MSL ([[{attr}]]), not in the reflection",
                at_location(*l)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::resource;
    use dmsh_reflect::IoVar;

    const MSL: &str = "\
struct main0_out
{
    float4 m_0 [[color(0)]];
};

struct main0_in
{
    float4 m_1 [[user(locn1)]];
};

fragment main0_out main0(main0_in in [[stage_in]], constant uint4* c2 [[buffer(0)]], \
texture2d<float> t [[texture(0)]], sampler tSmplr [[sampler(0)]], \
constant uint* spvBufferSizeConstants [[buffer(25)]])
{
}
";

    fn reflection() -> Reflection {
        let mut r = crate::tests::reflection("fragment");
        r.resources = vec![
            resource("cbuf", 2, 0, None),
            resource("texture", 64, 0, Some(0)),
        ];
        r.metal.buffers = 1;
        r.inputs = vec![IoVar {
            location: 1,
            component_type: "float".into(),
            ..Default::default()
        }];
        r.outputs = vec![IoVar {
            location: 0,
            component_type: "float".into(),
            ..Default::default()
        }];
        r
    }

    #[test]
    fn agreeing_msl_passes() {
        assert_eq!(check_bindings(MSL, &reflection()), Vec::<String>::new());
    }

    #[test]
    fn a_changed_metal_index_is_caught() {
        let mut r = reflection();
        r.resources[1].metal_index = 3;
        let bad = check_bindings(MSL, &r);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[0].contains("no [[texture(3)]]"), "{bad:?}");
        assert!(bad[1].contains("t [[texture(0)]]"), "{bad:?}");
    }

    #[test]
    fn spirv_cross_buffers_must_stay_above_the_reflections() {
        let mut r = reflection();
        r.metal.buffers = 26;
        let bad = check_bindings(MSL, &r);
        assert!(
            bad.iter().any(|b| b.contains("spvBufferSizeConstants")),
            "{bad:?}"
        );
    }

    #[test]
    fn two_arguments_at_one_index_are_caught() {
        let msl = MSL.replace(
            "sampler tSmplr",
            "texture2d<float> u [[texture(0)]], sampler tSmplr",
        );
        let bad = check_bindings(&msl, &reflection());
        assert!(bad.iter().any(|b| b.contains("overlaps")), "{bad:?}");
    }

    #[test]
    fn a_missing_entry_point_is_reported() {
        let bad = check_bindings(&MSL.replace("main0(", "main1("), &reflection());
        assert!(
            bad.iter().any(|b| b.contains("no entry point main0")),
            "{bad:?}"
        );
    }

    #[test]
    fn dual_source_outputs_are_checked_by_index() {
        let mut r = reflection();
        r.outputs.push(IoVar {
            location: 0,
            index: 1,
            ..Default::default()
        });
        let two = MSL.replace(
            "[[color(0)]];",
            "[[color(0)]];\n    float4 m_2 [[color(0), index(1)]];",
        );
        assert_eq!(check_bindings(&two, &r), Vec::<String>::new());
        let bad = check_bindings(MSL, &r);
        assert!(
            bad.iter().any(|b| b.contains("output location 0 index 1")),
            "{bad:?}"
        );
        let bad = check_bindings(&two.replace("color(0), index(1)", "color(1)"), &r);
        assert_eq!(bad.len(), 2, "{bad:?}");
    }

    #[test]
    fn a_buffer_array_may_be_one_argument_per_element() {
        let mut r = reflection();
        r.resources[0].count = 3;
        let split = MSL.replace(
            "constant uint4* c2 [[buffer(0)]],",
            "constant uint4* c2_0 [[buffer(0)]], constant uint4* c2_1 [[buffer(1)]], \
             constant uint4* c2_2 [[buffer(2)]],",
        );
        assert_eq!(check_bindings(&split, &r), Vec::<String>::new());
        let short = MSL.replace(
            "constant uint4* c2 [[buffer(0)]],",
            "constant uint4* c2_0 [[buffer(0)]], constant uint4* c2_1 [[buffer(1)]],",
        );
        let bad = check_bindings(&short, &r);
        assert!(bad.iter().any(|b| b.contains("has 1 elements")), "{bad:?}");
    }

    #[test]
    fn the_depth_entry_point_is_checked_too() {
        let mut r = reflection();
        r.metal_entry_z = Some("main0_z".into());
        let bad = check_bindings(MSL, &r);
        assert!(
            bad.iter().any(|b| b.contains("no entry point main0_z")),
            "{bad:?}"
        );
        let both = format!("{MSL}\n{}", MSL.replace("main0(", "main0_z("));
        assert_eq!(check_bindings(&both, &r), Vec::<String>::new());
        let wrong = format!(
            "{MSL}\n{}",
            MSL.replace("main0(", "main0_z(")
                .replace("[[texture(0)]]", "[[texture(1)]]")
        );
        let bad = check_bindings(&wrong, &r);
        assert!(bad.iter().any(|b| b.starts_with("main0_z: ")), "{bad:?}");
    }
}
