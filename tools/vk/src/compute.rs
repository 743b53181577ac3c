//! Compute jobs: buffers in, one dispatch, buffers out.

use std::time::Instant;

use ash::vk;
use serde::Serialize;

use crate::bind;
use crate::device::{Device, Scope};
use crate::error::Error;
use crate::image::{self, GpuImage, TextureSpec};
use crate::reflection::Reflection;

/// A buffer the job creates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BufferSpec {
    /// Name (for messages and outputs).
    pub name: String,
    /// Size in bytes (the buffer is at least as large as `init`; the allocation is rounded up
    /// to 16 bytes and the rest is zero).
    pub size: u64,
    /// Initial bytes.
    pub init: Vec<u8>,
}

/// Which guest resource a buffer fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceRef {
    /// Constant bank `n` (a uniform buffer).
    Cbuf(u32),
    /// Storage buffer slot `n`.
    Sbuf(u32),
    /// A storage buffer whose 64-bit address is at (uniform-buffer slot, byte offset)
    /// (`sbuf_ubo`).
    SbufUbo(u32, u32),
    /// Texture slot `n` (a combined image + sampler); the bind's index names a texture.
    Texture(u32),
    /// Image slot `n` (a storage image); the bind's index names a texture.
    Image(u32),
    /// Separate sampler slot `n`; the bind's index names a texture whose sampler (filtering,
    /// addressing, compare) it is.
    Sampler(u32),
    /// A texture whose handle is the uniform-buffer word at (bank, guest byte offset)
    /// (`tex_ubo`); the bind's index names the texture that handle selects.
    TexUbo(u32, u32),
    /// Element `k` of the `tex_dyn` texture array (texture ID k); the bind's index names a
    /// texture.
    TexDyn(u32),
    /// Element `k` of the `samp_dyn` sampler array (sampler ID k); the bind's index names a
    /// texture whose sampler it is.
    SampDyn(u32),
    /// The constant sampler ID `id` ORed into a texture's handle (`samp_id`); the bind's index
    /// names a texture whose sampler it is (it replaces that texture binding's own sampler).
    SampId(u32),
    /// The sampler half of the uniform-buffer handle word at (bank, guest byte offset)
    /// (`samp_ubo`); the bind's index names a texture whose sampler it is.
    SampUbo(u32, u32),
}

impl std::fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResourceRef::Cbuf(n) => write!(f, "cbuf bank {n}"),
            ResourceRef::Sbuf(n) => write!(f, "sbuf slot {n}"),
            ResourceRef::SbufUbo(u, o) => write!(f, "sbuf_ubo ubo {u} offset {o:#x}"),
            ResourceRef::Texture(n) => write!(f, "texture slot {n}"),
            ResourceRef::Image(n) => write!(f, "image slot {n}"),
            ResourceRef::Sampler(n) => write!(f, "sampler slot {n}"),
            ResourceRef::TexUbo(b, o) => write!(f, "tex_ubo c[{b}][{o:#x}]"),
            ResourceRef::TexDyn(k) => write!(f, "tex_dyn element {k}"),
            ResourceRef::SampDyn(k) => write!(f, "samp_dyn element {k}"),
            ResourceRef::SampId(id) => write!(f, "samp_id {id:#x}"),
            ResourceRef::SampUbo(b, o) => write!(f, "samp_ubo c[{b}][{o:#x}]"),
        }
    }
}

/// Binds buffer `buffer` (index into the job's buffers; for textures and images, into its
/// textures) to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bind {
    /// The resource.
    pub resource: ResourceRef,
    /// The buffer.
    pub buffer: usize,
}

/// Writes the 64-bit device address of buffer `target` (+ `add`) little-endian into buffer
/// `buffer` at byte `offset`, before the dispatch, in the form `encoding` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointerPatch {
    /// Buffer written to (e.g. the parameter block).
    pub buffer: usize,
    /// Byte offset in it.
    pub offset: u64,
    /// Buffer whose address is written.
    pub target: usize,
    /// Added to the address.
    pub add: u64,
    /// How the address is written.
    pub encoding: PointerEncoding,
}

/// The form of the 64-bit word a [`PointerPatch`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PointerEncoding {
    /// The address itself.
    #[default]
    Address,
    /// A Turing+ bindless constant-buffer handle, as `cx[URn][…]` reads it: bits 0–44 the
    /// address >> 4 (16-byte aligned), bits 45–63 `size` >> 4.
    CbufHandle {
        /// The buffer's size in bytes (a multiple of 16 is exact).
        size: u32,
    },
}

impl PointerEncoding {
    /// The word written for address `addr`.
    pub fn word(self, addr: u64) -> u64 {
        match self {
            PointerEncoding::Address => addr,
            PointerEncoding::CbufHandle { size } => {
                (addr >> 4) & ((1 << 45) - 1) | (u64::from(size >> 4) << 45)
            }
        }
    }
}

/// One compute dispatch.
#[derive(Debug, Clone, Default)]
pub struct ComputeJob {
    /// The SPIR-V module.
    pub spirv: Vec<u32>,
    /// Its reflection (entry point, resources, whether it needs 32-lane subgroups).
    pub reflection: Reflection,
    /// Buffers to create.
    pub buffers: Vec<BufferSpec>,
    /// Which buffer fills which resource of the reflection; every cbuf and sbuf resource must
    /// be bound.
    pub binds: Vec<Bind>,
    /// Device addresses to write into buffers.
    pub pointers: Vec<PointerPatch>,
    /// Workgroups in x, y, z.
    pub grid: [u32; 3],
    /// Textures and storage images (bound with [`ResourceRef::Texture`] / [`ResourceRef::Image`]).
    pub textures: Vec<TextureSpec>,
}

/// What a dispatch produced.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outputs {
    /// Final bytes of every buffer, in job order, each `BufferSpec::size` long.
    pub buffers: Vec<Vec<u8>>,
    /// Final texels of every texture / storage image, in job order.
    pub images: Vec<Vec<u8>>,
    /// Device name.
    pub device: String,
    /// Milliseconds to create the pipeline.
    pub pipeline_ms: f64,
    /// Milliseconds from submit to fence (includes lavapipe's first-use shader compile).
    pub dispatch_ms: f64,
}

impl Outputs {
    /// Buffer `i` as little-endian u32 words.
    pub fn u32s(&self, i: usize) -> Vec<u32> {
        self.buffers
            .get(i)
            .map(|b| {
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Runs a compute job on the shared device ([`crate::shared`]).
pub fn run_compute(job: &ComputeJob) -> Result<Outputs, Error> {
    crate::device::shared()?.run_compute(job)
}

impl Device {
    /// Runs a compute job on this device.
    pub fn run_compute(&self, job: &ComputeJob) -> Result<Outputs, Error> {
        let refl = &job.reflection;
        if !refl.stage.is_empty() && refl.stage != "compute" {
            return Err(Error::Job(format!(
                "reflection stage is {:?}, not compute",
                refl.stage
            )));
        }
        let info = self.info();
        self.check_kernel(refl)?;
        if !job.pointers.is_empty() && !self.bda {
            return Err(self.unsupported("bufferDeviceAddress is not supported"));
        }
        let slots = bind::plan(
            refl,
            &job.binds,
            job.buffers.len(),
            &job.textures,
            "compute",
            false,
        )?;
        if refl.resources.iter().any(|r| r.set != 0) {
            return Err(Error::Job(
                "resources outside descriptor set 0 are not supported in compute jobs".into(),
            ));
        }
        for p in &job.pointers {
            let (Some(dst), true) = (job.buffers.get(p.buffer), p.target < job.buffers.len())
            else {
                return Err(Error::Job(format!(
                    "pointer patch names buffer #{} / #{} but the job has {}",
                    p.buffer,
                    p.target,
                    job.buffers.len()
                )));
            };
            if p.offset
                .checked_add(8)
                .is_none_or(|e| e > dst.size.max(dst.init.len() as u64))
            {
                return Err(Error::Job(format!(
                    "pointer patch at byte {} does not fit buffer {:?} ({} bytes)",
                    p.offset, dst.name, dst.size
                )));
            }
        }
        for (i, b) in job.buffers.iter().enumerate() {
            if b.size.max(b.init.len() as u64) > 1 << 30 {
                return Err(Error::Job(format!(
                    "buffer #{i} {:?} is {} bytes; more than 1 GiB",
                    b.name, b.size
                )));
            }
        }
        let max = info.max_workgroup_count;
        if (0..3).any(|k| job.grid[k] == 0 || job.grid[k] > max[k]) {
            return Err(Error::Job(format!(
                "grid {:?} is empty or exceeds the device's maximum {max:?}",
                job.grid
            )));
        }

        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.check_alive()?;
        let mut s = Scope::new(self);
        let need = bind::needed_sizes(&slots, job.buffers.len());
        let (idx, imgs) =
            create_resources(&mut s, &job.buffers, &need, &job.pointers, &job.textures)?;
        let t0 = Instant::now();
        let module = s.module(&job.spirv)?;
        let (dsl, set) = bind::make_set(
            &mut s,
            &slots,
            vk::ShaderStageFlags::COMPUTE,
            &idx,
            &imgs,
            &[],
        )?;
        let pl = s.pipeline_layout(&[dsl])?;
        let pipeline = (compute_pipeline(&mut s, module, pl, refl)?, pl, set);
        let pipeline_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        let grid = job.grid;
        let scope = &s;
        let images = &imgs;
        let record = |d: &ash::Device, cb: vk::CommandBuffer| {
            for img in images {
                image::record_upload(scope, d, cb, img, vk::ImageLayout::GENERAL);
            }
            // SAFETY: recording into a command buffer in the recording state.
            unsafe {
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline.0);
                if pipeline.2 != vk::DescriptorSet::null() {
                    d.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        pipeline.1,
                        0,
                        &[pipeline.2],
                        &[],
                    );
                }
                d.cmd_dispatch(cb, grid[0], grid[1], grid[2]);
            }
            image::host_read_barrier(
                d,
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::AccessFlags::SHADER_WRITE,
            );
            for img in images {
                image::record_readback(scope, d, cb, img, vk::ImageLayout::GENERAL);
            }
        };
        s.submit(record)?;
        let dispatch_ms = t1.elapsed().as_secs_f64() * 1e3;
        let (buffers, images) = read_back(&s, &job.buffers, &idx, &imgs);
        Ok(Outputs {
            buffers,
            images,
            device: info.name.clone(),
            pipeline_ms,
            dispatch_ms,
        })
    }
}

impl Device {
    /// Whether this device can run the compute module `refl` describes (subgroup size,
    /// buffer device addresses, shared memory, workgroup size): a skip error when not.
    pub(crate) fn check_kernel(&self, refl: &Reflection) -> Result<(), Error> {
        let info = self.info();
        let warp = refl.required_subgroup_size();
        if warp != 0 && warp != info.subgroup_size && !info.can_run_warp32() {
            return Err(self.unsupported(format!(
                "shader relies on {warp}-lane subgroups (warp_ops), device has {} and cannot \
                 require {warp}",
                info.subgroup_size
            )));
        }
        if refl.uses_global_addresses && !self.bda {
            return Err(self.unsupported("bufferDeviceAddress is not supported"));
        }
        if refl.shared_bytes > info.max_shared_bytes {
            return Err(self.unsupported(format!(
                "shader needs {} shared bytes, device allows {}",
                refl.shared_bytes, info.max_shared_bytes
            )));
        }
        let ls = refl.local_size;
        let lmax = info.max_workgroup_size;
        if (0..3).any(|k| ls[k] > lmax[k])
            || ls.iter().map(|&x| x.max(1) as u64).product::<u64>()
                > info.max_workgroup_invocations as u64
        {
            return Err(self.unsupported(format!(
                "local size {ls:?} exceeds the device's limits {lmax:?} / {} invocations",
                info.max_workgroup_invocations
            )));
        }
        Ok(())
    }
}

/// Creates the compute pipeline of `module` (reflection `refl`, checked by
/// [`Device::check_kernel`]) with layout `pl`: 32-lane subgroups required when the shader
/// relies on them, a variable workgroup size specialised to `refl.local_size`.
pub(crate) fn compute_pipeline(
    s: &mut Scope<'_>,
    module: vk::ShaderModule,
    pl: vk::PipelineLayout,
    refl: &Reflection,
) -> Result<vk::Pipeline, Error> {
    let info = s.dev.info();
    let warp = refl.required_subgroup_size();
    let ls = refl.local_size;
    let entry = std::ffi::CString::new(refl.entry_name())
        .map_err(|_| Error::Job("entry point name contains NUL".into()))?;
    let mut req = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
        .required_subgroup_size(warp);
    let mut stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(&entry);
    if warp != 0 && warp != info.subgroup_size {
        stage = stage.push_next(&mut req);
    }
    // A variable workgroup size: spec constants 0, 1, 2 = the local size.
    let spec_map: Vec<vk::SpecializationMapEntry> = (0..3u32)
        .map(|k| {
            vk::SpecializationMapEntry::default()
                .constant_id(k)
                .offset(4 * k)
                .size(4)
        })
        .collect();
    let spec_data: Vec<u8> = ls.iter().flat_map(|x| x.max(&1).to_le_bytes()).collect();
    let spec = vk::SpecializationInfo::default()
        .map_entries(&spec_map)
        .data(&spec_data);
    if refl.local_size_spec {
        stage = stage.specialization_info(&spec);
    }
    let ci = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(pl)];
    // SAFETY: the module and layout come from this device; the pipeline is recorded in the
    // scope.
    let made = unsafe {
        s.dev
            .device
            .create_compute_pipelines(vk::PipelineCache::null(), &ci, None)
    };
    s.pipeline("vkCreateComputePipelines", made)
}

/// Creates a job's buffers (storage and uniform; buffer `i` at least `need[i]` bytes), writes
/// the device addresses of `pointers` into them and creates the sampled `textures`: the
/// buffers' indices in the scope, and the images.
pub(crate) fn create_resources(
    s: &mut Scope<'_>,
    buffers: &[BufferSpec],
    need: &[u64],
    pointers: &[PointerPatch],
    textures: &[TextureSpec],
) -> Result<(Vec<usize>, Vec<GpuImage>), Error> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::UNIFORM_BUFFER;
    let mut idx = Vec::with_capacity(buffers.len());
    for (i, b) in buffers.iter().enumerate() {
        idx.push(s.buffer(b.size.max(need[i]), &b.init, usage)?);
    }
    for p in pointers {
        let addr = s.buffers[idx[p.target]].address.wrapping_add(p.add);
        s.write(
            idx[p.buffer],
            p.offset,
            &p.encoding.word(addr).to_le_bytes(),
        );
    }
    let mut imgs = Vec::with_capacity(textures.len());
    for t in textures {
        imgs.push(image::create(s, t, vk::ImageUsageFlags::SAMPLED)?);
    }
    Ok((idx, imgs))
}

/// After the submission: the final bytes of the buffers [`create_resources`] made (each as
/// long as its spec says, or its initial bytes) and of the images.
pub(crate) fn read_back(
    s: &Scope<'_>,
    buffers: &[BufferSpec],
    idx: &[usize],
    imgs: &[GpuImage],
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let bytes = buffers
        .iter()
        .zip(idx)
        .map(|(b, &i)| s.read(i, b.size.max(b.init.len() as u64)))
        .collect();
    let images = imgs.iter().map(|g| s.read(g.staging, g.bytes)).collect();
    (bytes, images)
}

#[cfg(test)]
mod tests {
    use super::PointerEncoding;

    #[test]
    fn cbuf_handles_pack_address_and_size_in_16_byte_units() {
        assert_eq!(PointerEncoding::Address.word(0x1234_5670), 0x1234_5670);
        let h = PointerEncoding::CbufHandle { size: 0x210 }.word(0x0012_3456_7890);
        assert_eq!(h & ((1 << 45) - 1), 0x0012_3456_7890 >> 4);
        assert_eq!(h >> 45, 0x21);
    }
}
