//! The dksh corpus' compute shaders (tests/corpus/dksh/*.comp.glsl) as runnable cases with
//! deterministic inputs. [`reference`] compiles the GLSL with glslang; [`job`] binds the same
//! inputs to *any* SPIR-V + reflection — glslang's, or our translation of uam's binary — so
//! the two can be run on identical data and compared with [`compare`].
//!
//! Binding model (docs/reflection.md, deko3d ABI): GLSL uniform block n = cbuf bank 2+n, GLSL
//! buffer block n = sbuf slot n. A translation that instead reads deko3d's compute driver
//! constant buffer (cbuf bank 0: block size at 0x0, grid size at 0xc, uniform-buffer addresses at
//! 0x20 + 8n, storage buffers at 0x140 + 16n as {u64 address, u32 size}) gets that bank filled
//! with the same buffers' device addresses. Inputs are chosen so that every float product and
//! sum is exact, so a fused and an unfused multiply-add agree (lavapipe's `Fma` is not fused).

use std::ops::Range;
use std::path::{Path, PathBuf};

use dmsh_vk::compute::{Bind, BufferSpec, ComputeJob, PointerPatch, ResourceRef};
use dmsh_vk::error::Error;
use dmsh_vk::image::{TexFormat, TextureSpec};
use dmsh_vk::io_json::{compare_bytes, Mismatch};
use dmsh_vk::reflection::{Reflection, Resource};

/// One dksh compute shader with its inputs.
#[derive(Debug, Clone)]
pub struct DkshCase {
    /// Shader name (`cs_ssbo_saxpy`); the files are `NAME.comp.*`.
    pub name: &'static str,
    /// The GLSL source.
    pub source: PathBuf,
    /// Workgroup size.
    pub local_size: [u32; 3],
    /// Workgroups.
    pub grid: [u32; 3],
    /// GLSL uniform blocks: (binding, bytes).
    pub ubos: Vec<(u32, Vec<u8>)>,
    /// GLSL buffer blocks: (binding, initial bytes).
    pub ssbos: Vec<(u32, Vec<u8>)>,
    /// GLSL samplers: (binding, texture). A translation binds them as texture slot n.
    pub textures: Vec<(u32, TextureSpec)>,
    /// GLSL images: (binding, initial image). A translation binds them as image slot n.
    pub images: Vec<(u32, TextureSpec)>,
    /// What to compare after the run: (buffer binding, byte range). Order-dependent parts
    /// (atomic return values) are left out.
    pub compare: Vec<(u32, Range<usize>)>,
    /// Images to compare: (image binding, byte range of its texels).
    pub compare_images: Vec<(u32, Range<usize>)>,
    /// Results depend on 32-lane subgroups (a Maxwell warp): only comparable where the device
    /// runs 32-lane subgroups.
    pub warp_ops: bool,
    /// Source rewrites glslang needs (`cs_variable_group`: variable group size → fixed size).
    pub glsl_patches: Vec<(&'static str, String)>,
    /// Why the case cannot run yet, if it cannot.
    pub unsupported: Option<&'static str>,
}

/// Deterministic xorshift32 stream.
struct Rng(u32);
impl Rng {
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
    /// A float k/8 with k in [-64, 64): exact products and short sums.
    fn eighth(&mut self) -> f32 {
        (self.next() % 128) as f32 / 8.0 - 8.0
    }
}

fn f32s(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(f32::to_le_bytes).collect()
}
fn u32s(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    v.into_iter().flat_map(u32::to_le_bytes).collect()
}

/// IEEE half bits of a float that is exactly representable as a half (small multiples of 1/8).
fn half_bits(f: f32) -> u16 {
    if f == 0.0 {
        return 0;
    }
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = ((b >> 13) & 0x3ff) as u16;
    sign | ((exp as u16) << 10) | man
}

/// The directory of the dksh corpus inside the repository.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/dksh")
}

/// All compute cases of the corpus at `dir` (11 shaders; the image and texture ones are
/// marked unsupported).
pub fn cases(dir: &Path) -> Vec<DkshCase> {
    let src = |n: &str| dir.join(format!("{n}.comp.glsl"));
    let mut r = Rng(0x1234_5678);
    let mut v = Vec::new();
    let base = |name: &'static str, local: [u32; 3], grid: [u32; 3]| DkshCase {
        name,
        source: src(name),
        local_size: local,
        grid,
        ubos: Vec::new(),
        ssbos: Vec::new(),
        textures: Vec::new(),
        images: Vec::new(),
        compare: Vec::new(),
        compare_images: Vec::new(),
        warp_ops: false,
        glsl_patches: Vec::new(),
        unsupported: None,
    };

    // y[i] = a * x[i] + y[i] for i < n (n = 100 of 128 threads).
    let mut c = base("cs_ssbo_saxpy", [64, 1, 1], [2, 1, 1]);
    c.ubos.push((0, [f32s([1.5]), u32s([100, 0, 0])].concat()));
    c.ssbos.push((0, f32s((0..128).map(|_| r.eighth()))));
    c.ssbos.push((1, f32s((0..128).map(|_| r.eighth()))));
    c.compare.push((1, 0..512));
    v.push(c);

    // Per-workgroup vec4 sums of 256 entries.
    let mut c = base("cs_shared_reduce", [256, 1, 1], [2, 1, 1]);
    c.ssbos.push((0, f32s((0..2048).map(|_| r.eighth()))));
    c.ssbos.push((1, vec![0; 32]));
    c.compare.push((1, 0..32));
    v.push(c);

    // Buffer and shared atomics; only the order-independent counters are compared.
    let mut c = base("cs_atomics", [32, 2, 1], [2, 1, 1]);
    let head = [
        0u32,
        0,
        u32::MAX,
        0,
        0x7fff_ffff,
        0x8000_0000,
        u32::MAX,
        0,
        0,
        0,
        0,
    ];
    c.ssbos
        .push((3, u32s(head.into_iter().chain(std::iter::repeat_n(0, 128)))));
    c.compare.push((3, 0..36));
    v.push(c);

    // Native UBO (binding 1) and emulated UBO (binding 9, read through its address).
    let mut c = base("cs_ubo_emulated", [32, 1, 1], [2, 1, 1]);
    c.ubos.push((
        1,
        [f32s([2.0, 0.5, 1.0, -1.0]), u32s([24, 0, 0, 0])].concat(),
    ));
    c.ubos.push((9, f32s((0..128).map(|_| r.eighth()))));
    c.ssbos.push((0, vec![0; 64 * 16]));
    c.compare.push((0, 0..64 * 16));
    v.push(c);

    // Ballot / votes / read-invocation: 32-lane semantics.
    let mut c = base("cs_subgroup_ballot", [128, 1, 1], [1, 1, 1]);
    c.ssbos.push((
        0,
        u32s((0..128).map(|i| if i % 37 == 5 { 3 } else { r.next() % 2000 })),
    ));
    c.ssbos.push((1, vec![0; 128 * 16]));
    c.compare.push((1, 0..128 * 16));
    c.warp_ops = true;
    v.push(c);

    // Doubles with exact products; 64-bit integer hashing.
    let mut c = base("cs_fp64_int64", [64, 1, 1], [2, 1, 1]);
    c.ssbos.push((
        0,
        (0..128)
            .flat_map(|_| ((r.next() % 256) as f64 / 16.0 - 8.0).to_le_bytes())
            .collect(),
    ));
    c.ssbos.push((
        1,
        (0..128)
            .flat_map(|_| ((r.next() as u64) << 32 | r.next() as u64).to_le_bytes())
            .collect(),
    ));
    c.compare.push((0, 0..1024));
    c.compare.push((1, 0..1024));
    v.push(c);

    // Insertion sort of 24 ints per thread in a private array.
    let mut c = base("cs_local_array", [64, 1, 1], [1, 1, 1]);
    c.ssbos.push((
        0,
        u32s(
            (0..64 * 24)
                .map(|_| r.next() % 1000)
                .map(|x| x.wrapping_sub(500)),
        ),
    ));
    c.compare.push((0, 0..64 * 24 * 4));
    v.push(c);

    // C[20x24] = A[20x40] * B[40x24], small integer values (exact).
    let mut c = base("cs_matmul_tiled", [16, 16, 1], [2, 2, 1]);
    c.ubos.push((0, u32s([20, 24, 40, 0])));
    c.ssbos
        .push((0, f32s((0..20 * 40).map(|_| (r.next() % 8) as f32))));
    c.ssbos
        .push((1, f32s((0..40 * 24).map(|_| (r.next() % 8) as f32 - 3.0))));
    c.ssbos.push((2, vec![0; 20 * 24 * 4]));
    c.compare.push((2, 0..20 * 24 * 4));
    v.push(c);

    // Variable group size: glslang gets a fixed 8x4x2 group instead; a translation of uam's
    // binary must be made with `--local-size 8,4,2` (its DKSH header says 1,1,1) and reads the
    // size from the driver cbuf (0x0), which `job` fills.
    let mut c = base("cs_variable_group", [8, 4, 2], [2, 2, 1]);
    c.ssbos.push((0, vec![0; 256 * 16]));
    c.compare.push((0, 0..256 * 16));
    c.glsl_patches = vec![
        (
            "#extension GL_ARB_compute_variable_group_size : require",
            String::new(),
        ),
        (
            "layout(local_size_variable) in;",
            "layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;".into(),
        ),
        ("gl_LocalGroupSizeARB", "gl_WorkGroupSize".into()),
    ];
    v.push(c);

    // Image load/store/size/atomics on 2D, 3D and 2D-array images.
    let img = |name: &str, w: u32, h: u32, format: TexFormat, data: Vec<u8>| TextureSpec {
        name: name.into(),
        width: w,
        height: h,
        format,
        data,
        ..Default::default()
    };
    let mut c = base("cs_image_ops", [8, 8, 1], [2, 2, 1]);
    c.images.push((
        0,
        img(
            "src",
            16,
            16,
            TexFormat::Rgba32Float,
            f32s((0..1024).map(|_| (r.next() % 16) as f32 / 16.0)),
        ),
    ));
    c.images
        .push((1, img("dst", 16, 16, TexFormat::Rgba8Unorm, vec![0; 1024])));
    c.images
        .push((2, img("counts", 16, 4, TexFormat::R32Uint, vec![0; 256])));
    let mut vol = img(
        "vol",
        16,
        16,
        TexFormat::R32Sint,
        u32s((0..512).map(|i| if i < 256 { 0x7fff_ffff } else { 0 })),
    );
    vol.depth = 2;
    c.images.push((3, vol));
    let mut layers = img(
        "layers",
        16,
        16,
        TexFormat::Rgba16Float,
        (0..2048)
            .map(|_| half_bits((r.next() % 64) as f32 / 8.0 - 4.0))
            .flat_map(u16::to_le_bytes)
            .collect(),
    );
    layers.layers = 2;
    c.images.push((4, layers));
    c.compare_images = vec![
        (1, 0..1024),
        (2, 0..128),   // rows 0 (add) and 1 (max); row 2 (exchange) is order-dependent
        (2, 192..256), // row 3 (compare-and-swap 0 -> 7)
        (3, 0..2048),
        (4, 0..4096),
    ];
    v.push(c);

    // Texture sampling from compute (nearest filtering, texel centres), written to an image.
    let mut c = base("cs_texture_sample", [16, 16, 1], [2, 2, 1]);
    c.textures.push((
        0,
        img(
            "srcTex",
            32,
            32,
            TexFormat::Rgba8Unorm,
            (0..4096).map(|_| r.next() as u8).collect(),
        ),
    ));
    c.textures.push((
        4,
        img(
            "maskTex",
            16,
            16,
            TexFormat::R32Uint,
            u32s((0..256).map(|_| r.next() % 2)),
        ),
    ));
    c.images.push((
        0,
        img("outImg", 32, 32, TexFormat::Rgba16Float, vec![0; 8192]),
    ));
    c.compare_images = vec![(0, 0..8192)];
    v.push(c);
    v
}

/// Compiles the case's GLSL with glslang (bindings shifted onto docs/reflection.md's table)
/// and returns the SPIR-V with a reflection describing it.
pub fn reference(case: &DkshCase) -> Result<(Vec<u32>, Reflection), Error> {
    if let Some(u) = case.unsupported {
        return Err(Error::Job(format!("{}: {u}", case.name)));
    }
    let mut text = std::fs::read_to_string(&case.source)
        .map_err(|e| Error::Job(format!("{}: {e}", case.source.display())))?;
    for (from, to) in &case.glsl_patches {
        text = text.replace(from, to);
    }
    let spirv = super::glsl::compile_source(&text, "comp", super::glsl::DEKO3D_SHIFTS)?;
    let mut resources = Vec::new();
    for (n, b) in &case.ubos {
        resources.push(Resource {
            kind: "cbuf".into(),
            bank: 2 + n,
            size: Some(b.len() as u64),
            binding: Some(2 + n),
            ..Default::default()
        });
    }
    // Slot n of `kind` at binding `first + n` (the shifts of DEKO3D_SHIFTS).
    let slot = |kind: &str, first: u32, n: u32| Resource {
        kind: kind.into(),
        bank: n,
        binding: Some(first + n),
        ..Default::default()
    };
    resources.extend(case.ssbos.iter().map(|(n, _)| slot("sbuf", 32, *n)));
    resources.extend(case.textures.iter().map(|(n, _)| slot("texture", 64, *n)));
    resources.extend(case.images.iter().map(|(n, _)| slot("image", 128, *n)));
    let refl = Reflection {
        stage: "compute".into(),
        entry: "main".into(),
        local_size: case.local_size,
        abi: "deko3d".into(),
        warp_ops: false, // glslang's SPIR-V is right for any subgroup size
        resources,
        ..Default::default()
    };
    Ok((spirv, refl))
}

/// Binds the case's inputs to a shader's resources (see the module doc). Buffers: the SSBOs
/// in case order, then the UBOs, then (if the reflection asks for cbuf bank 0) the driver
/// constant buffer.
pub fn job(case: &DkshCase, spirv: Vec<u32>, reflection: Reflection) -> Result<ComputeJob, Error> {
    if let Some(u) = case.unsupported {
        return Err(Error::Job(format!("{}: {u}", case.name)));
    }
    let textures: Vec<TextureSpec> = case
        .textures
        .iter()
        .chain(&case.images)
        .map(|(_, t)| t.clone())
        .collect();
    let tex = |n: u32| position(&case.textures, n);
    let image = |n: u32| position(&case.images, n).map(|i| i + case.textures.len());
    let ls = reflection.local_size;
    if ls != [0, 0, 0] && ls != case.local_size {
        return Err(Error::Job(format!(
            "{}: the shader's local size {ls:?} is not the case's {:?}",
            case.name, case.local_size
        )));
    }
    let mut buffers: Vec<BufferSpec> = binding_buffers("ssbo", &case.ssbos).collect();
    buffers.extend(binding_buffers("ubo", &case.ubos));
    let ssbo = |n: u32| position(&case.ssbos, n);
    let ubo = |n: u32| position(&case.ubos, n).map(|i| i + case.ssbos.len());
    // `resource` bound to the case's input at `index`; `missing` says what the shader uses
    // when the case has no such input.
    let bind = |resource, index: Option<usize>, missing: String| {
        let e = || Error::Job(format!("{}: shader {missing}", case.name));
        index.map(|buffer| Bind { resource, buffer }).ok_or_else(e)
    };
    let mut binds = Vec::new();
    let mut pointers = Vec::new();
    for r in &reflection.resources {
        let n = r.index();
        match r.kind.as_str() {
            "sbuf" => binds.push(bind(
                ResourceRef::Sbuf(n),
                ssbo(n),
                format!("uses buffer binding {n}, the case has none"),
            )?),
            "cbuf" if n >= 2 => binds.push(bind(
                ResourceRef::Cbuf(n),
                ubo(n - 2),
                format!(
                    "uses uniform binding {} (cbuf {n}), the case has none",
                    n - 2
                ),
            )?),
            "cbuf" if n == 0 => {
                // deko3d ComputeDriverCbuf, seen from guest offset `guest_offset`.
                let g = r.guest_offset as u64;
                let full = 0x240u64.max(g + r.size.unwrap_or(0));
                let mut bytes = vec![0u8; full as usize];
                for (i, w) in case.local_size.iter().chain(&case.grid).enumerate() {
                    bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
                }
                for (k, (_, b)) in case.ssbos.iter().enumerate() {
                    let at = 0x140 + 16 * case.ssbos[k].0 as usize + 8;
                    if at + 4 <= bytes.len() {
                        bytes[at..at + 4].copy_from_slice(&(b.len() as u32).to_le_bytes());
                    }
                }
                let init = bytes[g.min(full) as usize..].to_vec();
                let idx = buffers.len();
                buffers.push(BufferSpec {
                    name: "driver_cbuf".into(),
                    size: init.len() as u64,
                    init,
                });
                let mut patch = |guest: u64, target: usize| {
                    if guest >= g && guest + 8 <= full {
                        pointers.push(PointerPatch {
                            buffer: idx,
                            offset: guest - g,
                            target,
                            add: 0,
                            encoding: Default::default(),
                        });
                    }
                };
                for (n, _) in &case.ubos {
                    patch(0x20 + 8 * *n as u64, ubo(*n).unwrap_or(0));
                }
                for (n, _) in &case.ssbos {
                    patch(0x140 + 16 * *n as u64, ssbo(*n).unwrap_or(0));
                }
                binds.push(Bind {
                    resource: ResourceRef::Cbuf(0),
                    buffer: idx,
                });
            }
            "texture" => binds.push(bind(
                ResourceRef::Texture(n),
                tex(n),
                format!("samples binding {n}, the case has no texture there"),
            )?),
            "image" => binds.push(bind(
                ResourceRef::Image(n),
                image(n),
                format!("uses image binding {n}, the case has none"),
            )?),
            k => {
                return Err(Error::Job(format!(
                    "{}: resource {k} {n} has no input in this harness",
                    case.name
                )))
            }
        }
    }
    Ok(ComputeJob {
        spirv,
        reflection,
        buffers,
        binds,
        pointers,
        grid: case.grid,
        textures,
    })
}

/// Buffers `{prefix}{n}` holding the bytes of each (GLSL binding n, bytes) of `list`.
pub(crate) fn binding_buffers<'a>(
    prefix: &'a str,
    list: &'a [(u32, Vec<u8>)],
) -> impl Iterator<Item = BufferSpec> + 'a {
    list.iter().map(move |(n, b)| BufferSpec {
        name: format!("{prefix}{n}"),
        size: b.len() as u64,
        init: b.clone(),
    })
}

/// Where GLSL binding `n` stands in a case's (binding, input) list.
fn position<T>(list: &[(u32, T)], n: u32) -> Option<usize> {
    list.iter().position(|(b, _)| *b == n)
}

/// Final contents of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Results {
    /// Storage buffers: (binding, bytes), in case order.
    pub ssbos: Vec<(u32, Vec<u8>)>,
    /// Images: (binding, texels), in case order.
    pub images: Vec<(u32, Vec<u8>)>,
}

/// Runs a shader on the case's inputs on the shared device.
pub fn run(case: &DkshCase, spirv: Vec<u32>, reflection: Reflection) -> Result<Results, Error> {
    let j = job(case, spirv, reflection)?;
    let out = dmsh_vk::compute::run_compute(&j)?;
    let nt = case.textures.len();
    Ok(Results {
        ssbos: case
            .ssbos
            .iter()
            .zip(out.buffers)
            .map(|((n, _), b)| (*n, b))
            .collect(),
        images: case
            .images
            .iter()
            .zip(out.images.into_iter().skip(nt))
            .map(|((n, _), b)| (*n, b))
            .collect(),
    })
}

/// Compares the case's compared ranges of two runs (`reference` first).
pub fn compare(case: &DkshCase, reference: &Results, ours: &Results) -> Vec<Mismatch> {
    fn get(r: &[(u32, Vec<u8>)], n: u32, range: &Range<usize>) -> Vec<u8> {
        r.iter()
            .find(|(b, _)| *b == n)
            .and_then(|(_, v)| v.get(range.clone()))
            .unwrap_or(&[])
            .to_vec()
    }
    let sides = [
        ("ssbo", &case.compare, &reference.ssbos, &ours.ssbos),
        (
            "image",
            &case.compare_images,
            &reference.images,
            &ours.images,
        ),
    ];
    let mut v = Vec::new();
    for (what, ranges, theirs, mine) in sides {
        for (n, range) in ranges {
            let name = format!("{} {what}{n}[{range:?}]", case.name);
            v.extend(compare_bytes(
                &name,
                &get(theirs, *n, range),
                &get(mine, *n, range),
            ));
        }
    }
    v
}

/// Runs a translation of the case's uam binary and glslang's SPIR-V of its GLSL on the same
/// inputs and returns the differences (empty: identical). Cases whose results depend on
/// 32-lane subgroups are an `Unsupported` error (a skip) on devices that cannot run them.
pub fn check_translation(
    case: &DkshCase,
    spirv: Vec<u32>,
    reflection: Reflection,
) -> Result<Vec<Mismatch>, Error> {
    let dev = dmsh_vk::device::shared()?;
    if case.warp_ops && !dev.info().can_run_warp32() {
        return Err(Error::Unsupported {
            device: dev.info().name.clone(),
            reason: format!("{} depends on 32-lane subgroups", case.name),
        });
    }
    let (rs, rr) = reference(case)?;
    let want = run(case, rs, rr)?;
    let got = run(case, spirv, reflection)?;
    Ok(compare(case, &want, &got))
}

/// `cs_subgroup_ballot.comp.glsl` with 32-lane subgroups (NVIDIA's `gl_SubGroupSizeARB`, what
/// uam and NAK compile it for), computed on the CPU from the GLSL: per invocation the uvec4 (ballot
/// of `v & 1`, `readFirstInvocationARB(v) + readInvocationARB(v, 7)`, rank of the invocation
/// among the ballot's lanes + its lane, the any / all / all-equal flags). The oracle for the
/// workgroup-memory warp emulation on devices whose subgroups are not 32 lanes wide (where
/// glslang's own SPIR-V cannot serve as one).
pub fn subgroup_ballot_model(values: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 16);
    for i in 0..values.len() {
        let w = &values[i & !31..((i & !31) + 32).min(values.len())];
        let lane = (i & 31) as u32;
        let ballot = w
            .iter()
            .enumerate()
            .fold(0u32, |m, (l, &x)| m | (x & 1) << l);
        let any_big = w.iter().any(|&x| x > 1000);
        let all_small = w.iter().all(|&x| x < 10);
        let eq = w.iter().all(|&x| x == 3) || w.iter().all(|&x| x != 3);
        let lt = (1u32 << lane) - 1;
        let words = [
            ballot,
            w[0].wrapping_add(w[7]),
            (ballot & lt).count_ones() + lane,
            any_big as u32 | (all_small as u32) << 1 | (eq as u32) << 2,
        ];
        out.extend(words.iter().flat_map(|x| x.to_le_bytes()));
    }
    out
}
