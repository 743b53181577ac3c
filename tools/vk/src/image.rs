//! Textures, storage images and render targets: creation, upload, sampler, read-back.

use ash::vk;

use crate::device::Scope;
use crate::error::{Error, VkCtx};

/// Texel formats a job can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TexFormat {
    /// 8-bit normalised RGBA.
    #[default]
    Rgba8Unorm,
    /// 8-bit unsigned integer RGBA.
    Rgba8Uint,
    /// 16-bit float RGBA.
    Rgba16Float,
    /// 32-bit float RGBA.
    Rgba32Float,
    /// 32-bit unsigned integer R.
    R32Uint,
    /// 32-bit signed integer R.
    R32Sint,
    /// 32-bit float R.
    R32Float,
    /// 32-bit unsigned integer RGBA.
    Rgba32Uint,
    /// 32-bit signed integer RGBA.
    Rgba32Sint,
    /// 16-bit float RG.
    Rg16Float,
    /// 32-bit float depth (sampled, e.g. with a compare sampler).
    Depth32Float,
}

impl TexFormat {
    /// Parses `rgba8`, `rgba8ui`, `rgba16f`, `rgba32f`, `r32ui`, `r32i`, `r32f`.
    pub fn parse(s: &str) -> Result<Self, Error> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "rgba8" | "rgba8unorm" | "rgba8_unorm" => TexFormat::Rgba8Unorm,
            "rgba8ui" | "rgba8u" | "rgba8uint" => TexFormat::Rgba8Uint,
            "rgba16f" => TexFormat::Rgba16Float,
            "rgba32f" => TexFormat::Rgba32Float,
            "r32ui" | "r32u" => TexFormat::R32Uint,
            "r32i" => TexFormat::R32Sint,
            "r32f" => TexFormat::R32Float,
            "rgba32ui" | "rgba32u" => TexFormat::Rgba32Uint,
            "rgba32i" => TexFormat::Rgba32Sint,
            "rg16f" => TexFormat::Rg16Float,
            "d32f" | "depth32f" => TexFormat::Depth32Float,
            _ => {
                return Err(Error::Job(format!(
                    "unknown texel format {s:?} (rgba8 rgba8ui rgba16f rgba32f r32ui r32i r32f rgba32ui rgba32i rg16f d32f)"
                )))
            }
        })
    }

    /// The Vulkan format.
    pub fn vk(self) -> vk::Format {
        match self {
            TexFormat::Rgba8Unorm => vk::Format::R8G8B8A8_UNORM,
            TexFormat::Rgba8Uint => vk::Format::R8G8B8A8_UINT,
            TexFormat::Rgba16Float => vk::Format::R16G16B16A16_SFLOAT,
            TexFormat::Rgba32Float => vk::Format::R32G32B32A32_SFLOAT,
            TexFormat::R32Uint => vk::Format::R32_UINT,
            TexFormat::R32Sint => vk::Format::R32_SINT,
            TexFormat::R32Float => vk::Format::R32_SFLOAT,
            TexFormat::Rgba32Uint => vk::Format::R32G32B32A32_UINT,
            TexFormat::Rgba32Sint => vk::Format::R32G32B32A32_SINT,
            TexFormat::Rg16Float => vk::Format::R16G16_SFLOAT,
            TexFormat::Depth32Float => vk::Format::D32_SFLOAT,
        }
    }

    /// Bytes per texel.
    pub fn texel_bytes(self) -> u64 {
        match self {
            TexFormat::Rgba8Unorm | TexFormat::Rgba8Uint => 4,
            TexFormat::Rgba16Float => 8,
            TexFormat::Rgba32Float => 16,
            TexFormat::R32Uint | TexFormat::R32Sint | TexFormat::R32Float => 4,
            TexFormat::Rgba32Uint | TexFormat::Rgba32Sint => 16,
            TexFormat::Rg16Float | TexFormat::Depth32Float => 4,
        }
    }

    /// The image aspect (depth for depth formats, else color).
    pub fn aspect(self) -> vk::ImageAspectFlags {
        if self == TexFormat::Depth32Float {
            vk::ImageAspectFlags::DEPTH
        } else {
            vk::ImageAspectFlags::COLOR
        }
    }
}

/// A 1D, 2D or 3D (array, cube) image: sampled as a texture, or read/written as a storage image.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextureSpec {
    /// Name (messages, outputs).
    pub name: String,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Array layers (0 or 1: a plain 2D image; more: a 2D array).
    pub layers: u32,
    /// Depth (0 or 1: 2D; more: a 3D image, `layers` must then be 0 or 1).
    pub depth: u32,
    /// Texel format.
    pub format: TexFormat,
    /// Texels, tightly packed rows, layer after layer (shorter data is zero-padded).
    pub data: Vec<u8>,
    /// Linear filtering (else nearest).
    pub linear: bool,
    /// Repeat addressing (else clamp to edge).
    pub repeat: bool,
    /// A cube map: `layers` is 6 (cube) or a multiple of 6 (cube array); width == height.
    pub cube: bool,
    /// A depth-compare sampler (`LESS_OR_EQUAL`), for shadow samplers.
    pub compare: bool,
    /// Samples per texel (0 or 1: single-sampled). Multisampled images are only used as
    /// render targets; they are never uploaded or read back.
    pub samples: u32,
    /// A texel buffer (`samplerBuffer` / `imageBuffer`) of `width` texels instead of an image.
    pub buffer: bool,
    /// Mip levels (0 or 1: one); `data` holds level after level, each halved (at least 1).
    pub mips: u32,
    /// A 1D image (`height` 1; `layers` > 1: a 1D array), for `sampler1D` / `image1D`.
    pub one_d: bool,
}

impl TextureSpec {
    /// Bytes of all texels.
    pub fn byte_size(&self) -> u64 {
        if self.buffer {
            return self.width as u64 * self.format.texel_bytes();
        }
        (0..self.mips.clamp(1, 16))
            .map(|l| self.level_size(l))
            .sum()
    }

    /// Extent of mip level `l`.
    pub fn level_extent(&self, l: u32) -> [u32; 3] {
        let d = if self.depth > 1 { self.depth } else { 1 };
        [
            (self.width >> l).max(1),
            (self.height >> l).max(1),
            (d >> l).max(1),
        ]
    }

    /// Bytes of mip level `l` (all layers).
    pub fn level_size(&self, l: u32) -> u64 {
        let [w, h, d] = self.level_extent(l);
        w as u64 * h as u64 * d as u64 * self.layers.max(1) as u64 * self.format.texel_bytes()
    }
}

/// A created image with its view, sampler and staging buffer.
pub(crate) struct GpuImage {
    pub image: vk::Image,
    pub view: vk::ImageView,
    pub sampler: vk::Sampler,
    /// Index of the staging buffer in the scope (upload and read-back).
    pub staging: usize,
    pub extent: vk::Extent3D,
    pub layers: u32,
    pub bytes: u64,
    pub aspect: vk::ImageAspectFlags,
    /// Mip levels.
    pub mips: u32,
    /// Bytes per texel.
    pub texel: u64,
    /// Samples (>1: multisampled; filled with `fill` instead of an upload, never read back).
    pub samples: u32,
    /// Clear color that fills a multisampled image (its first texel).
    pub fill: vk::ClearColorValue,
    /// For texel buffers: the buffer view (then `image`, `view` and `sampler` are null).
    pub texel_view: Option<vk::BufferView>,
}

/// Creates an image for `spec` with `usage` (plus transfer), its staging buffer holding
/// `spec.data`, a view and a sampler. The image starts in UNDEFINED layout: record
/// [`record_upload`] before use.
pub(crate) fn create(
    s: &mut Scope<'_>,
    spec: &TextureSpec,
    usage: vk::ImageUsageFlags,
) -> Result<GpuImage, Error> {
    if spec.width == 0 || spec.height == 0 || spec.width > 16384 || spec.height > 16384 {
        return Err(Error::Job(format!(
            "image {:?}: size {}x{} out of range",
            spec.name, spec.width, spec.height
        )));
    }
    if spec.byte_size() > 1 << 30 {
        return Err(Error::Job(format!(
            "image {:?}: {} bytes of texels; more than 1 GiB",
            spec.name,
            spec.byte_size()
        )));
    }
    if spec.data.len() as u64 > spec.byte_size() {
        return Err(Error::Job(format!(
            "image {:?}: {} bytes of data for {} bytes of texels",
            spec.name,
            spec.data.len(),
            spec.byte_size()
        )));
    }
    if spec.buffer {
        return create_texel_buffer(s, spec);
    }
    let d = &s.dev.device;
    let fmt = spec.format.vk();
    // SAFETY: valid instance/physical device.
    let props = unsafe {
        s.dev
            .instance
            .get_physical_device_format_properties(s.dev.physical, fmt)
    };
    let feats = props.optimal_tiling_features;
    let mut usage = usage | vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::TRANSFER_SRC;
    let need = [
        (
            vk::ImageUsageFlags::SAMPLED,
            vk::FormatFeatureFlags::SAMPLED_IMAGE,
        ),
        (
            vk::ImageUsageFlags::STORAGE,
            vk::FormatFeatureFlags::STORAGE_IMAGE,
        ),
        (
            vk::ImageUsageFlags::COLOR_ATTACHMENT,
            vk::FormatFeatureFlags::COLOR_ATTACHMENT,
        ),
    ];
    for (u, f) in need {
        if usage.contains(u) && !feats.contains(f) {
            return Err(s.dev.unsupported(format!(
                "format {fmt:?} lacks {f:?} (image {:?})",
                spec.name
            )));
        }
    }
    // Sampled-and-storage where the format allows both keeps one image usable either way.
    if feats.contains(vk::FormatFeatureFlags::SAMPLED_IMAGE) {
        usage |= vk::ImageUsageFlags::SAMPLED;
    }
    if feats.contains(vk::FormatFeatureFlags::STORAGE_IMAGE) && spec.samples <= 1 {
        usage |= vk::ImageUsageFlags::STORAGE;
    }
    let aspect = spec.format.aspect();
    let layers = spec.layers.max(1);
    let is3d = spec.depth > 1;
    if spec.one_d && (spec.height != 1 || is3d || spec.cube) {
        return Err(Error::Job(format!(
            "image {:?}: a 1D image has height 1 (and is no cube or 3D image)",
            spec.name
        )));
    }
    if spec.cube && (!layers.is_multiple_of(6) || spec.width != spec.height || is3d) {
        return Err(Error::Job(format!(
            "image {:?}: a cube needs square faces and a multiple of 6 layers",
            spec.name
        )));
    }
    if is3d && layers > 1 || spec.depth > 2048 || layers > 2048 {
        return Err(Error::Job(format!(
            "image {:?}: depth {} / layers {} not supported",
            spec.name, spec.depth, spec.layers
        )));
    }
    let extent = vk::Extent3D {
        width: spec.width,
        height: spec.height,
        depth: spec.depth.max(1),
    };
    let bytes = spec.byte_size();
    let staging = s.buffer(bytes, &spec.data, vk::BufferUsageFlags::empty())?;
    // SAFETY: handles recorded in the scope immediately after creation.
    unsafe {
        let image = d
            .create_image(
                &vk::ImageCreateInfo::default()
                    .image_type(if is3d {
                        vk::ImageType::TYPE_3D
                    } else if spec.one_d {
                        vk::ImageType::TYPE_1D
                    } else {
                        vk::ImageType::TYPE_2D
                    })
                    .format(fmt)
                    .extent(extent)
                    .mip_levels(spec.mips.clamp(1, 16))
                    .array_layers(layers)
                    .samples(sample_flags(spec.samples))
                    .tiling(vk::ImageTiling::OPTIMAL)
                    .usage(usage)
                    .sharing_mode(vk::SharingMode::EXCLUSIVE)
                    .initial_layout(vk::ImageLayout::UNDEFINED)
                    .flags(if spec.cube {
                        vk::ImageCreateFlags::CUBE_COMPATIBLE
                    } else {
                        vk::ImageCreateFlags::empty()
                    }),
                None,
            )
            .vk("vkCreateImage")?;
        s.images.push((image, vk::DeviceMemory::null()));
        let req = d.get_image_memory_requirements(image);
        let ty = s
            .dev
            .memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
            .or_else(|| {
                s.dev
                    .memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty())
            })
            .ok_or_else(|| s.dev.unsupported("no memory type for images"))?;
        let mem = d
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(ty),
                None,
            )
            .vk("vkAllocateMemory")?;
        if let Some(last) = s.images.last_mut() {
            last.1 = mem;
        }
        d.bind_image_memory(image, mem, 0).vk("vkBindImageMemory")?;
        let view = d
            .create_image_view(
                &vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(if spec.cube && layers > 6 {
                        vk::ImageViewType::CUBE_ARRAY
                    } else if spec.cube {
                        vk::ImageViewType::CUBE
                    } else if is3d {
                        vk::ImageViewType::TYPE_3D
                    } else if spec.one_d && spec.layers > 1 {
                        vk::ImageViewType::TYPE_1D_ARRAY
                    } else if spec.one_d {
                        vk::ImageViewType::TYPE_1D
                    } else if spec.layers > 1 {
                        vk::ImageViewType::TYPE_2D_ARRAY
                    } else {
                        vk::ImageViewType::TYPE_2D
                    })
                    .format(fmt)
                    .subresource_range(range(aspect, layers, spec.mips.clamp(1, 16))),
                None,
            )
            .vk("vkCreateImageView")?;
        s.views.push(view);
        let filter = if spec.linear {
            vk::Filter::LINEAR
        } else {
            vk::Filter::NEAREST
        };
        let mode = if spec.repeat {
            vk::SamplerAddressMode::REPEAT
        } else {
            vk::SamplerAddressMode::CLAMP_TO_EDGE
        };
        let sampler = d
            .create_sampler(
                &vk::SamplerCreateInfo::default()
                    .mag_filter(filter)
                    .min_filter(filter)
                    .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                    .address_mode_u(mode)
                    .address_mode_v(mode)
                    .address_mode_w(mode)
                    .max_lod(spec.mips.clamp(1, 16) as f32 - 1.0)
                    .compare_enable(spec.compare)
                    .compare_op(vk::CompareOp::LESS_OR_EQUAL),
                None,
            )
            .vk("vkCreateSampler")?;
        s.samplers.push(sampler);
        Ok(GpuImage {
            image,
            view,
            sampler,
            staging,
            extent,
            layers,
            bytes,
            aspect,
            mips: spec.mips.clamp(1, 16),
            texel: spec.format.texel_bytes(),
            samples: spec.samples.max(1),
            fill: first_texel(spec),
            texel_view: None,
        })
    }
}

/// A texel buffer: a host-visible buffer of `width` texels with a buffer view.
fn create_texel_buffer(s: &mut Scope<'_>, spec: &TextureSpec) -> Result<GpuImage, Error> {
    let fmt = spec.format.vk();
    // SAFETY: valid instance/physical device.
    let feats = unsafe {
        s.dev
            .instance
            .get_physical_device_format_properties(s.dev.physical, fmt)
    }
    .buffer_features;
    let mut usage = vk::BufferUsageFlags::empty();
    if feats.contains(vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER) {
        usage |= vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER;
    }
    if feats.contains(vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER) {
        usage |= vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER;
    }
    if usage.is_empty() {
        return Err(s.dev.unsupported(format!(
            "format {fmt:?} cannot be used in a texel buffer (texture {:?})",
            spec.name
        )));
    }
    let bytes = spec.width as u64 * spec.format.texel_bytes();
    let staging = s.buffer(bytes, &spec.data, usage)?;
    // SAFETY: the buffer was just created on this device; the view is recorded in the scope.
    let view = unsafe {
        s.dev.device.create_buffer_view(
            &vk::BufferViewCreateInfo::default()
                .buffer(s.buffers[staging].buffer)
                .format(fmt)
                .offset(0)
                .range(vk::WHOLE_SIZE),
            None,
        )
    }
    .vk("vkCreateBufferView")?;
    s.buffer_views.push(view);
    Ok(GpuImage {
        image: vk::Image::null(),
        view: vk::ImageView::null(),
        sampler: vk::Sampler::null(),
        staging,
        extent: vk::Extent3D {
            width: spec.width,
            height: 1,
            depth: 1,
        },
        layers: 1,
        bytes,
        aspect: vk::ImageAspectFlags::COLOR,
        mips: 1,
        texel: spec.format.texel_bytes(),
        samples: 1,
        fill: vk::ClearColorValue::default(),
        texel_view: Some(view),
    })
}

/// The Vulkan sample count for `n` samples (1, 2, 4, 8; anything else is 1).
pub(crate) fn sample_flags(n: u32) -> vk::SampleCountFlags {
    match n {
        2 => vk::SampleCountFlags::TYPE_2,
        4 => vk::SampleCountFlags::TYPE_4,
        8 => vk::SampleCountFlags::TYPE_8,
        _ => vk::SampleCountFlags::TYPE_1,
    }
}

/// The first texel of `spec.data` as a clear color (what fills a multisampled texture).
fn first_texel(spec: &TextureSpec) -> vk::ClearColorValue {
    let b = |i: usize| *spec.data.get(i).unwrap_or(&0);
    let w = |i: usize| u32::from_le_bytes([b(4 * i), b(4 * i + 1), b(4 * i + 2), b(4 * i + 3)]);
    match spec.format {
        TexFormat::Rgba8Unorm => vk::ClearColorValue {
            float32: [0, 1, 2, 3].map(|i| b(i) as f32 / 255.0),
        },
        TexFormat::Rgba8Uint => vk::ClearColorValue {
            uint32: [0, 1, 2, 3].map(|i| b(i) as u32),
        },
        TexFormat::Rgba32Float | TexFormat::R32Float | TexFormat::Depth32Float => {
            vk::ClearColorValue {
                float32: [0, 1, 2, 3].map(|i| f32::from_bits(w(i))),
            }
        }
        TexFormat::R32Sint | TexFormat::Rgba32Sint => vk::ClearColorValue {
            int32: [0, 1, 2, 3].map(|i| w(i) as i32),
        },
        _ => vk::ClearColorValue {
            uint32: [0, 1, 2, 3].map(w),
        },
    }
}

fn range(aspect: vk::ImageAspectFlags, layers: u32, mips: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: mips,
        base_array_layer: 0,
        layer_count: layers,
    }
}

fn layers_of(aspect: vk::ImageAspectFlags, layers: u32, level: u32) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: aspect,
        mip_level: level,
        base_array_layer: 0,
        layer_count: layers,
    }
}

/// Buffer ↔ image copy regions, one per mip level, packed level after level.
fn regions(img: &GpuImage) -> Vec<vk::BufferImageCopy> {
    let mut off = 0u64;
    (0..img.mips)
        .map(|l| {
            let e = vk::Extent3D {
                width: (img.extent.width >> l).max(1),
                height: (img.extent.height >> l).max(1),
                depth: (img.extent.depth >> l).max(1),
            };
            let r = vk::BufferImageCopy::default()
                .buffer_offset(off)
                .image_subresource(layers_of(img.aspect, img.layers, l))
                .image_extent(e);
            off +=
                e.width as u64 * e.height as u64 * e.depth as u64 * img.layers as u64 * img.texel;
            r
        })
        .collect()
}

/// Records a layout transition of the whole image.
pub(crate) fn barrier(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    img: &GpuImage,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
) {
    let b = [vk::ImageMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
        .old_layout(from)
        .new_layout(to)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(img.image)
        .subresource_range(range(img.aspect, img.layers, img.mips))];
    // SAFETY: recording into a command buffer in the recording state.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &b,
        )
    };
}

/// Records a memory barrier that makes the `access` writes of `stage` visible to host reads
/// (before the results are mapped after the submission).
pub(crate) fn host_read_barrier(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    stage: vk::PipelineStageFlags,
    access: vk::AccessFlags,
) {
    let mb = [vk::MemoryBarrier::default()
        .src_access_mask(access)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    // SAFETY: recording into a command buffer in the recording state.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            stage,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &mb,
            &[],
            &[],
        )
    };
}

/// Records the upload of the staging buffer into the image, leaving it in `final_layout`.
pub(crate) fn record_upload(
    s: &Scope<'_>,
    d: &ash::Device,
    cb: vk::CommandBuffer,
    img: &GpuImage,
    final_layout: vk::ImageLayout,
) {
    if img.texel_view.is_some() {
        return; // host-visible texel buffer: the data is already there
    }
    barrier(
        d,
        cb,
        img,
        vk::ImageLayout::UNDEFINED,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
    );
    if img.samples > 1 {
        // A multisampled image cannot be copied to: fill it with its first texel.
        let r = [range(img.aspect, img.layers, img.mips)];
        // SAFETY: recording; the image is in TRANSFER_DST_OPTIMAL.
        unsafe {
            d.cmd_clear_color_image(
                cb,
                img.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &img.fill,
                &r,
            )
        };
        barrier(
            d,
            cb,
            img,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            final_layout,
        );
        return;
    }
    let region = regions(img);
    // SAFETY: recording; the staging buffer holds `bytes` bytes.
    unsafe {
        d.cmd_copy_buffer_to_image(
            cb,
            s.buffers[img.staging].buffer,
            img.image,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &region,
        )
    };
    barrier(
        d,
        cb,
        img,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        final_layout,
    );
}

/// Records a copy of the image (in `layout`) back into its staging buffer.
pub(crate) fn record_readback(
    s: &Scope<'_>,
    d: &ash::Device,
    cb: vk::CommandBuffer,
    img: &GpuImage,
    layout: vk::ImageLayout,
) {
    if img.texel_view.is_some() || img.samples > 1 {
        return; // texel buffers are read directly; multisampled images are not read back
    }
    barrier(d, cb, img, layout, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
    let region = regions(img);
    // SAFETY: recording.
    unsafe {
        d.cmd_copy_image_to_buffer(
            cb,
            img.image,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            s.buffers[img.staging].buffer,
            &region,
        );
    }
    host_read_barrier(
        d,
        cb,
        vk::PipelineStageFlags::TRANSFER,
        vk::AccessFlags::TRANSFER_WRITE,
    );
}
