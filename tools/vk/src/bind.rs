//! Descriptor planning shared by compute and render jobs: reflection resources + the job's
//! binds → one descriptor set layout and set.

use ash::vk;

use crate::compute::{Bind, ResourceRef};
use crate::device::Scope;
use crate::error::{Error, VkCtx};
use crate::image::{GpuImage, TextureSpec};
use crate::reflection::Reflection;

/// What fills one binding.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    /// Job buffer index, and the byte size the shader declares.
    Buffer(usize, u64),
    /// Job texture index, sampled (combined image sampler).
    Texture(usize),
    /// Job texture index, as a storage image.
    Image(usize),
}

/// One binding of the set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub target: Target,
}

/// Resolves every resource of `refl` to what the job binds to it; errors name what is missing.
pub(crate) fn plan(
    refl: &Reflection,
    binds: &[Bind],
    nbuf: usize,
    textures: &[TextureSpec],
    stage: &str,
) -> Result<Vec<Slot>, Error> {
    let ntex = textures.len();
    let is_buf = |i: usize| textures.get(i).is_some_and(|t| t.buffer);
    let mut slots: Vec<Slot> = Vec::new();
    for r in &refl.resources {
        let n = r.index();
        if matches!(r.kind.as_str(), "samp_id" | "samp_ubo") {
            // The sampler half of a combined binding another entry binds (with the job's
            // sampler): nothing of its own to bind.
            continue;
        }
        let res = match r.kind.as_str() {
            "cbuf" => ResourceRef::Cbuf(n),
            "sbuf" => ResourceRef::Sbuf(n),
            "texture" => ResourceRef::Texture(n),
            "image" => ResourceRef::Image(n),
            k => {
                return Err(Error::Job(format!(
                    "{stage}: resource kind {k:?} (slot {n}) is not supported by dmsh-vk yet"
                )))
            }
        };
        let b = binds.iter().find(|b| b.resource == res).ok_or_else(|| {
            Error::Job(format!(
                "{stage}: {res} (set {}, binding {}) has nothing bound in the job",
                r.set,
                r.vk_binding()
            ))
        })?;
        let (ty, target, count) = match res {
            ResourceRef::Cbuf(_) => (
                vk::DescriptorType::UNIFORM_BUFFER,
                Target::Buffer(b.buffer, r.size.unwrap_or(0)),
                nbuf,
            ),
            ResourceRef::Sbuf(_) => (
                vk::DescriptorType::STORAGE_BUFFER,
                Target::Buffer(b.buffer, r.size.unwrap_or(0)),
                nbuf,
            ),
            ResourceRef::Texture(_) => (
                if is_buf(b.buffer) {
                    vk::DescriptorType::UNIFORM_TEXEL_BUFFER
                } else {
                    vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                },
                Target::Texture(b.buffer),
                ntex,
            ),
            ResourceRef::Image(_) => (
                if is_buf(b.buffer) {
                    vk::DescriptorType::STORAGE_TEXEL_BUFFER
                } else {
                    vk::DescriptorType::STORAGE_IMAGE
                },
                Target::Image(b.buffer),
                ntex,
            ),
        };
        if b.buffer >= count {
            return Err(Error::Job(format!(
                "{stage}: {res} is bound to #{} but the job has {count}",
                b.buffer
            )));
        }
        if slots.iter().any(|s| s.binding == r.vk_binding()) {
            return Err(Error::Job(format!(
                "{stage}: two resources use binding {}",
                r.vk_binding()
            )));
        }
        slots.push(Slot {
            binding: r.vk_binding(),
            ty,
            target,
        });
    }
    Ok(slots)
}

/// The largest declared size of each job buffer over all slots.
pub(crate) fn needed_sizes(slots: &[Slot], nbuf: usize) -> Vec<u64> {
    let mut v = vec![0u64; nbuf];
    for s in slots {
        if let Target::Buffer(b, n) = s.target {
            v[b] = v[b].max(n);
        }
    }
    v
}

/// Creates the set layout and a written descriptor set for `slots`.
/// `bufs[i]` is the scope index of job buffer i; `imgs[i]` job texture i.
pub(crate) fn make_set(
    s: &mut Scope<'_>,
    slots: &[Slot],
    stages: vk::ShaderStageFlags,
    bufs: &[usize],
    imgs: &[GpuImage],
) -> Result<(vk::DescriptorSetLayout, vk::DescriptorSet), Error> {
    let d = &s.dev.device;
    let lb: Vec<vk::DescriptorSetLayoutBinding> = slots
        .iter()
        .map(|sl| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(sl.binding)
                .descriptor_type(sl.ty)
                .descriptor_count(1)
                .stage_flags(stages)
        })
        .collect();
    // SAFETY: handles recorded in the scope right after creation.
    unsafe {
        let dsl = d
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&lb),
                None,
            )
            .vk("vkCreateDescriptorSetLayout")?;
        s.set_layouts.push(dsl);
        if slots.is_empty() {
            return Ok((dsl, vk::DescriptorSet::null()));
        }
        let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for sl in slots {
            match sizes.iter_mut().find(|p| p.ty == sl.ty) {
                Some(p) => p.descriptor_count += 1,
                None => sizes.push(
                    vk::DescriptorPoolSize::default()
                        .ty(sl.ty)
                        .descriptor_count(1),
                ),
            }
        }
        let pool = d
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
            .vk("vkCreateDescriptorPool")?;
        s.pools.push(pool);
        let layouts = [dsl];
        let set = d
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
            .vk("vkAllocateDescriptorSets")?[0];
        let info = s.dev.info();
        let binfo: Vec<[vk::DescriptorBufferInfo; 1]> = slots
            .iter()
            .map(|sl| match sl.target {
                Target::Buffer(b, _) => {
                    // The range may not exceed the device's limit for the descriptor type.
                    let limit = if sl.ty == vk::DescriptorType::UNIFORM_BUFFER {
                        info.max_uniform_buffer_range
                    } else {
                        info.max_storage_buffer_range
                    } as u64;
                    let hb = &s.buffers[bufs[b]];
                    [vk::DescriptorBufferInfo::default()
                        .buffer(hb.buffer)
                        .offset(0)
                        .range(hb.size.min(limit))]
                }
                _ => [vk::DescriptorBufferInfo::default()],
            })
            .collect();
        let iinfo: Vec<[vk::DescriptorImageInfo; 1]> = slots
            .iter()
            .map(|sl| match sl.target {
                Target::Texture(t) | Target::Image(t) => [vk::DescriptorImageInfo::default()
                    .sampler(imgs[t].sampler)
                    .image_view(imgs[t].view)
                    .image_layout(vk::ImageLayout::GENERAL)],
                Target::Buffer(..) => [vk::DescriptorImageInfo::default()],
            })
            .collect();
        let tinfo: Vec<[vk::BufferView; 1]> = slots
            .iter()
            .map(|sl| match sl.target {
                Target::Texture(t) | Target::Image(t) => {
                    [imgs[t].texel_view.unwrap_or(vk::BufferView::null())]
                }
                Target::Buffer(..) => [vk::BufferView::null()],
            })
            .collect();
        let writes: Vec<vk::WriteDescriptorSet> = slots
            .iter()
            .enumerate()
            .map(|(i, sl)| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(sl.binding)
                    .descriptor_type(sl.ty);
                match sl.ty {
                    vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::STORAGE_BUFFER => {
                        w.buffer_info(&binfo[i])
                    }
                    vk::DescriptorType::UNIFORM_TEXEL_BUFFER
                    | vk::DescriptorType::STORAGE_TEXEL_BUFFER => w.texel_buffer_view(&tinfo[i]),
                    _ => w.image_info(&iinfo[i]),
                }
            })
            .collect();
        d.update_descriptor_sets(&writes, &[]);
        Ok((dsl, set))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampler_halves_bind_nothing_of_their_own() {
        let refl = Reflection::from_json(
            r#"{"stage":"fragment","resources":[
                {"kind":"cbuf","bank":3,"binding":3},
                {"kind":"samp_id","bank":772,"binding":65},
                {"kind":"samp_ubo","bank":4,"guest_offset":16,"binding":65}]}"#,
        )
        .unwrap();
        let binds = [Bind {
            resource: ResourceRef::Cbuf(3),
            buffer: 0,
        }];
        let slots = plan(&refl, &binds, 1, &[], "fragment").unwrap();
        assert_eq!(slots.len(), 1);
        assert_eq!(slots[0].binding, 3);
    }
}
