//! The clang stand-in check (`dmsh_msl::syntax`) on small hand-written MSL: what MSL accepts
//! and C++ alone would not (float literals, vector constructors, address-space overloads),
//! and what MSL refuses (double, wrong component counts, bad swizzles, implicit vector
//! conversions, texture calls without their sampler), each error on its MSL line. Skips with
//! a message without clang.

use dmsh_msl::syntax::{check, SyntaxError};

const HEAD: &str = "#include <metal_stdlib>\n#include <simd/simd.h>\n\nusing namespace metal;\n";

/// The MSL of a fragment function whose body is `body` (its first line is line 13).
fn fragment(body: &str) -> String {
    format!(
        "{HEAD}\nstruct main0_out\n{{\n    float4 c [[color(0)]];\n}};\n\
         fragment main0_out main0(texture2d<float> t [[texture(0)]], sampler s [[sampler(0)]], \
         float4 p [[position]])\n{{\n    main0_out out = {{}};\n{body}\n    return out;\n}}\n"
    )
}

fn clang_present() -> bool {
    match dmsh_msl::syntax::clang() {
        Ok(_) => true,
        Err(e) => {
            println!("skipped: {e}");
            false
        }
    }
}

#[test]
fn msl_that_cpp_alone_would_refuse_passes() {
    if !clang_present() {
        return;
    }
    let cases = [
        // Unsuffixed literals are float: no double → float/half ambiguity, no deduction clash.
        ("float literal", "    out.c = float4(max(p.x, 0.5), clamp(p.y, 0.0, 1.0), 1.0, 0.0);"),
        ("swizzles", "    out.c = float4(p.zw, p.yx) + p.wzyx * p.x;"),
        ("constructor forms", "    out.c = float4(float3(p.xy, 1.0), 2.0) + float4(1.0) + float4(int4(1));"),
        ("texture calls", "    out.c = t.sample(s, p.xy) + t.sample(s, p.xy, level(0.0), int2(1)) + t.read(uint2(p.xy), 0);"),
        ("matrices", "    float4x4 m = float4x4(p, p, p, p);\n    out.c = m * p + p * transpose(m)[0].x;"),
        ("comparisons", "    out.c = select(p, float4(0.0), p < float4(0.5));\n    if (any(p.xy > float2(1.0))) discard_fragment();"),
        ("as_type", "    out.c = as_type<float4>(as_type<uint4>(p) & uint4(0x7fffffffu));"),
    ];
    let mut failed = Vec::new();
    for (what, body) in cases {
        let r = check(&fragment(body));
        println!("{what}: {r:?}");
        if r.is_err() {
            failed.push(what);
        }
    }
    let array = format!(
        "{HEAD}\ntemplate<typename T, size_t Num>\nstruct spvUnsafeArray\n{{\n    T elements[Num ? Num : 1];\n\
         \n    thread T& operator [] (size_t pos) thread\n    {{\n        return elements[pos];\n    }}\n\
         \n    device T& operator [] (size_t pos) device\n    {{\n        return elements[pos];\n    }}\n}};\n\
         \nconstant int n [[function_constant(0)]];\n\
         kernel void main0(device float4* b [[buffer(0)]], uint3 id [[thread_position_in_grid]])\n{{\n\
         \x20   spvUnsafeArray<float4, 2> a;\n    a[0] = b[id.x];\n    b[id.x] = a[0] * 2.0;\n}}\n"
    );
    let r = check(&array);
    println!("address-space overloads, function constant: {r:?}");
    if r.is_err() {
        failed.push("address-space overloads");
    }
    assert!(failed.is_empty(), "refused: {failed:?}");
}

#[test]
fn what_msl_refuses_is_rejected_on_its_line() {
    if !clang_present() {
        return;
    }
    let cases = [
        (
            "double",
            "    double d = p.x;\n    out.c = float4(float(d));",
        ),
        ("double literal", "    out.c = float4(p.x * 0.5lf);"),
        ("too few components", "    out.c = float4(p.x, p.y);"),
        (
            "too many components",
            "    out.c = float4(p.xy, p.zw, 1.0);",
        ),
        ("bad swizzle", "    out.c = float4(p.xq, 0.0, 1.0);"),
        (
            "swizzle past the end",
            "    float2 q = p.xy;\n    out.c = float4(q.z);",
        ),
        (
            "narrowed vector",
            "    float2 q = p;\n    out.c = float4(q, q);",
        ),
        (
            "implicit vector conversion",
            "    int4 i = int4(1);\n    out.c = i;",
        ),
        ("sample without sampler", "    out.c = t.sample(p.xy);"),
        (
            "3D coordinate for a 2D texture",
            "    out.c = t.sample(s, p.xyz);",
        ),
        (
            "two LOD options",
            "    out.c = t.sample(s, p.xy, bias(0.0), level(0.0));",
        ),
        (
            "as_type of another size",
            "    out.c = float4(as_type<float>(p.xy));",
        ),
        ("wrong member", "    out.colour = p;"),
        ("write to a sampled texture", "    t.write(p, uint2(0));"),
        (
            "float to int",
            "    int i = p.x;\n    out.c = float4(float(i));",
        ),
        (
            "variable-length array",
            "    int n = int(p.x);\n    float a[n];\n    out.c = float4(a[0]);",
        ),
    ];
    let mut missed = Vec::new();
    for (what, body) in cases {
        match check(&fragment(body)) {
            Err(SyntaxError::Rejected(d)) => {
                println!("{what}: {d}");
                let line = d.errors[0].line;
                if !(13..13 + body.lines().count() as u32).contains(&line) {
                    missed.push(format!("{what}: error on line {line}"));
                }
            }
            r => {
                println!("{what}: {r:?}");
                missed.push(what.to_string());
            }
        }
    }
    assert!(missed.is_empty(), "not rejected on their line: {missed:?}");
}

#[test]
fn a_write_through_constant_is_rejected() {
    if !clang_present() {
        return;
    }
    let msl = format!(
        "{HEAD}\nstruct U\n{{\n    float4 v;\n}};\n\n\
         kernel void main0(constant U& u [[buffer(0)]], device U& d [[buffer(1)]])\n{{\n\
         \x20   d.v = u.v;\n    u.v = d.v;\n}}\n"
    );
    match check(&msl) {
        Err(SyntaxError::Rejected(d)) => {
            println!("{d}");
            assert_eq!(d.errors.len(), 1, "{d}");
            assert_eq!(d.errors[0].line, 14, "{d}");
        }
        r => panic!("accepted a write through constant: {r:?}"),
    }
}
