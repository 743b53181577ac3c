//! The deko3d compute shaders of tests/corpus/dksh: our translation of uam's binary and
//! glslang's SPIR-V of the same GLSL run on the same inputs (dmsh-vk's reference harness) and
//! must give identical results. Each shader runs in a child process (lavapipe has no fault
//! isolation); shaders relying on 32-lane subgroups are skipped on other devices, never passed.
//! Any failure not in `KNOWN_FAILURES` fails the test.

#[path = "../../spv/tests/common/mod.rs"]
mod common;

use dmsh_testsupport::child;

use dmsh_spv::{F64Mode, Options};
use dmsh_testsupport::corpus_text;
use dmsh_testsupport::reference::{dksh, glsl, translate};

/// Shaders that do not pass yet, with the cause.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

const ENV: &str = "DMSH_DKSH_EXEC_ONE";

/// Shaders that keep 64-bit global accesses by design, with the reason.
const GLOBAL_BY_DESIGN: &[(&str, &str)] = &[(
    "cs_ubo_emulated",
    "uniform binding 9 is emulated by uam: LDG through the address at c[0][0x68], a \
     uniform-buffer record (the GLSL buffer block 0 is a traced sbuf)",
)];

/// The GLSL `buffer` blocks' bindings of a corpus shader, sorted (the oracle for which `sbuf`
/// slots the translation must list).
fn glsl_buffer_bindings(name: &str) -> Result<Vec<u32>, String> {
    let path = dksh::corpus_dir().join(format!("{name}.comp.glsl"));
    let src = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(corpus_text::buffer_bindings(&src))
}

/// Every GLSL buffer block is an `sbuf` resource of the translation (the address trace found
/// its c0 record), and no 64-bit global access remains unless [`GLOBAL_BY_DESIGN`] says why.
fn check_sbufs(name: &str, r: &dmsh_spv::Reflection) -> Result<(), String> {
    let want = glsl_buffer_bindings(name)?;
    let got = common::sbuf_slots(r);
    if got != want {
        return Err(format!("sbuf slots {got:?}, GLSL buffer bindings {want:?}"));
    }
    let by_design = GLOBAL_BY_DESIGN.iter().any(|(n, _)| *n == name);
    if r.uses_global_addresses != by_design {
        return Err(format!(
            "uses_global_addresses {} (expected {by_design})",
            r.uses_global_addresses
        ));
    }
    Ok(())
}

/// The facts a porter supplies and the binary does not record: the formats of storage images
/// (GLSL `layout(binding = n, rgba16f)`), which raw `SULD.D`/`SUST.P` need to move a texel's
/// bits. They travel in the binding profile (`Gfx`), as for graphics stages (`--facts`); a
/// compute shader gets a neutral header there (no stage I/O).
fn image_facts(cfg: &mut dmsh_ir::lift::Config, name: &str) -> Result<(), String> {
    use dmsh_ir::lift::{layout::SphInfo, BindingLayout, Gfx};
    let path = dksh::corpus_dir().join(format!("{name}.comp.glsl"));
    let src = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let fmts = translate::image_formats(&src);
    if fmts.is_empty() {
        return Ok(());
    }
    let mut sph = [0u8; 0x50];
    sph[..4].copy_from_slice(&(1u32 | 1 << 10).to_le_bytes());
    let sph = SphInfo::parse(&sph).map_err(|e| e.to_string())?;
    let layout = BindingLayout::deko3d(dmsh_ir::Stage::Compute);
    let mut g = Gfx::new(sph, layout, name);
    for (b, f) in fmts {
        if let Some(x) = g.images.get_mut(b as usize) {
            *x = f;
        }
    }
    cfg.gfx = Some(g);
    Ok(())
}

/// Runs one shader (in the child; `name`, or `soft:name` for [`F64Mode::Soft`]).
fn run_one(spec: &str) -> String {
    let (soft, name) = match spec.strip_prefix("soft:") {
        Some(n) => (true, n),
        None => (false, spec),
    };
    let Some(case) = dksh::cases(&dksh::corpus_dir())
        .into_iter()
        .find(|c| c.name == name)
    else {
        return format!("error no case {name}");
    };
    let Some((_, code, ls, shared, local)) =
        common::dksh_compute().into_iter().find(|s| s.0 == name)
    else {
        return format!("error no code for {name}");
    };
    // The case's workgroup size; cs_variable_group has none in its binary (GLSL's variable
    // group size is a dispatch parameter): it is translated with the size as specialization
    // constants (local_size_spec) and run at the case's size.
    let variable = ls == [0, 0, 0];
    if name == "cs_variable_group" && !variable {
        return format!("error cs_variable_group: header size {ls:?}, expected variable");
    }
    let size = if variable { ls } else { case.local_size };
    let mut cfg = common::deko3d_config(size, shared, local);
    if let Err(e) = image_facts(&mut cfg, name) {
        return format!("error facts: {e}");
    }
    let opts = Options {
        f64: if soft { F64Mode::Soft } else { F64Mode::Native },
        ..Options::default()
    };
    let out = match dmsh_spv::translate(&code, &cfg, &opts) {
        Ok(o) => o,
        Err(e) => return format!("error translate: {e}"),
    };
    if soft && dmsh_msl::limits::uses_f64(&out.words) {
        return "fail soft f64: the module declares a 64-bit float type".into();
    }
    if let Err(e) = common::spirv_val(&out.words) {
        return format!("error spirv-val: {e}");
    }
    if let Err(e) = check_sbufs(name, &out.reflection) {
        return format!("error storage buffers: {e}");
    }
    let mut refl = match dmsh_vk::Reflection::from_json(&out.reflection.to_json()) {
        Ok(r) => r,
        Err(e) => return format!("error reflection: {e}"),
    };
    if variable {
        if !refl.local_size_spec {
            return "error reflection: no local_size_spec for a variable group size".into();
        }
        refl.local_size = case.local_size;
    }
    match dksh::check_translation(&case, out.words, refl) {
        Ok(m) => child::verdict(&m),
        Err(e) => child::run_failed(&e),
    }
}

#[test]
#[ignore = "child process of dksh_compute_exec"]
fn dksh_exec_one() {
    child::run_named(ENV, run_one);
}

#[test]
fn dksh_compute_exec() {
    if !glsl::available() {
        println!("skipped: no glslangValidator");
        return;
    }
    let names: Vec<String> = common::dksh_compute().into_iter().map(|s| s.0).collect();
    let child::ChildRuns { pass, skip, bad } = child::run_children("dksh_exec_one", ENV, &names);
    println!(
        "dksh compute exec vs glslang: {pass} pass, {skip} skipped, {} fail of {}",
        bad.len(),
        names.len()
    );
    child::assert_only_known(&bad, KNOWN_FAILURES);
}

/// The warp-dependent deko3d shader (`cs_subgroup_ballot`) translated with the
/// workgroup-memory warp emulation and run on the device, against `dksh::subgroup_ballot_model`.
fn run_warp_emulated(name: &str) -> String {
    let Some(case) = dksh::cases(&dksh::corpus_dir())
        .into_iter()
        .find(|c| c.name == name)
    else {
        return format!("error no case {name}");
    };
    let Some((_, code, _, shared, local)) =
        common::dksh_compute().into_iter().find(|s| s.0 == name)
    else {
        return format!("error no code for {name}");
    };
    let cfg = common::deko3d_config(case.local_size, shared, local);
    let opts = Options {
        warp: dmsh_spv::WarpMode::Workgroup,
        ..Default::default()
    };
    let out = match dmsh_spv::translate(&code, &cfg, &opts) {
        Ok(o) => o,
        Err(e) => return format!("error translate: {e}"),
    };
    if let Err(e) = common::spirv_val(&out.words) {
        return format!("error spirv-val: {e}");
    }
    if out.reflection.warp_ops || !out.reflection.warp_emulated {
        return "error reflection: warp operations not emulated".into();
    }
    let refl = match dmsh_vk::Reflection::from_json(&out.reflection.to_json()) {
        Ok(r) => r,
        Err(e) => return format!("error reflection: {e}"),
    };
    let got = match dksh::run(&case, out.words, refl) {
        Ok(r) => r,
        Err(e) => return child::run_failed(&e),
    };
    let Some((_, input)) = case.ssbos.iter().find(|s| s.0 == 0) else {
        return "error no input buffer".into();
    };
    let values: Vec<u32> = input
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let want = dksh::subgroup_ballot_model(&values);
    let Some((_, ours)) = got.ssbos.iter().find(|s| s.0 == 1) else {
        return "error no output buffer".into();
    };
    let bad: Vec<String> = (0..want.len() / 16)
        .filter(|&i| ours.get(16 * i..16 * i + 16) != Some(&want[16 * i..16 * i + 16]))
        .take(4)
        .map(|i| format!("invocation {i}"))
        .collect();
    child::verdict(&bad)
}

const ENV_WARP: &str = "DMSH_DKSH_WARP_ONE";

#[test]
#[ignore = "child process of dksh_warp_emulated_exec"]
fn dksh_warp_one() {
    child::run_named(ENV_WARP, run_warp_emulated);
}

/// The deko3d shader that relies on 32-lane subgroups, through the workgroup-memory warp
/// emulation, against a CPU model of its GLSL (counted apart from the glslang comparison).
#[test]
fn dksh_warp_emulated_exec() {
    let names = vec!["cs_subgroup_ballot".to_string()];
    let child::ChildRuns { pass, skip, bad } =
        child::run_children("dksh_warp_one", ENV_WARP, &names);
    println!(
        "dksh warp-emulated exec vs CPU model: {pass} pass, {skip} skipped, {} fail of {}",
        bad.len(),
        names.len()
    );
    child::assert_only_known(&bad, &[]);
}

/// Every shader of `dksh_compute_exec` in soft-f64 mode (`cs_fp64_int64` computes in f64; the
/// others round through f64 in the native translation wherever they use the exact FMA or
/// directed rounding): no 64-bit float type, and glslang's results (native f64 on the
/// device) bit for bit.
#[test]
fn dksh_compute_soft_f64_exec() {
    if !glsl::available() {
        println!("skipped: no glslangValidator");
        return;
    }
    let names: Vec<String> = common::dksh_compute()
        .into_iter()
        .map(|s| format!("soft:{}", s.0))
        .collect();
    let child::ChildRuns { pass, skip, bad } = child::run_children("dksh_exec_one", ENV, &names);
    println!(
        "dksh compute soft-f64 exec vs glslang: {pass} pass, {skip} skipped, {} fail of {}",
        bad.len(),
        names.len()
    );
    child::assert_only_known(&bad, KNOWN_FAILURES);
}
