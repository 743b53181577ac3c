//! Descriptor planning shared by compute and render jobs: reflection resources + the job's
//! binds → one descriptor set layout and set.

use ash::vk;

use dmsh_reflect::{LoweredBuffer, LOWERED_BUFFER};

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
    /// Job texture index, sampled (combined image sampler, or a separate sampled image).
    Texture(usize),
    /// Job texture index, as a storage image.
    Image(usize),
    /// Job texture index whose sampler fills a SAMPLER descriptor.
    Sampler(usize),
    /// A combined image sampler: job texture index (the image), and the job texture index
    /// whose sampler it is combined with (`samp_id` / `samp_ubo`).
    Combined(usize, usize),
    /// A buffer between the passes of a lowered geometry pipeline, which the runner makes
    /// (not a job buffer).
    Geometry(LoweredBuffer),
}

/// One binding of the set: a single descriptor, or an array (`elems`, one target each).
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub target: Target,
    /// Array elements (`tex_dyn` / `samp_dyn`); empty for a single descriptor.
    pub elems: Vec<Target>,
}

impl Slot {
    /// The descriptors this binding holds.
    fn targets(&self) -> Vec<Target> {
        if self.elems.is_empty() {
            vec![self.target]
        } else {
            self.elems.clone()
        }
    }
}

/// An array resource's elements: element k from the bind `elem(k)` names; elements nothing is
/// bound to repeat the lowest bound one (each descriptor must be valid); none bound is an error.
fn array_elems(
    r: &crate::reflection::Resource,
    binds: &[Bind],
    elem: impl Fn(u32) -> ResourceRef,
    target: fn(usize) -> Target,
    ntex: usize,
    stage: &str,
) -> Result<Vec<Target>, Error> {
    let n = r.count.max(1);
    let found: Vec<Option<usize>> = (0..n)
        .map(|k| {
            binds
                .iter()
                .find(|b| b.resource == elem(k))
                .map(|b| b.buffer)
        })
        .collect();
    let Some(first) = found.iter().flatten().next().copied() else {
        return Err(Error::Job(format!(
            "{stage}: {} array (binding {}, {n} elements) has nothing bound in the job",
            r.kind,
            r.vk_binding()
        )));
    };
    found
        .iter()
        .map(|f| {
            let i = f.unwrap_or(first);
            if i >= ntex {
                return Err(Error::Job(format!(
                    "{stage}: {} element bound to #{i} but the job has {ntex} textures",
                    r.kind
                )));
            }
            Ok(target(i))
        })
        .collect()
}

/// The slot of a `geometry` resource ([`LOWERED_BUFFER`]): a STORAGE_BUFFER of the role its
/// bank names, at the role's binding (docs/reflection.md's table has no default for it).
fn geometry_slot(r: &crate::reflection::Resource, stage: &str) -> Result<Slot, Error> {
    let role = LoweredBuffer::from_bank(r.bank).ok_or_else(|| {
        Error::Job(format!(
            "{stage}: lowered buffer role {} does not exist (0 vertices_in … 8 domain_points)",
            r.bank
        ))
    })?;
    let binding = r.binding.unwrap_or(role.binding());
    if binding != role.binding() {
        return Err(Error::Job(format!(
            "{stage}: geometry buffer {} at binding {binding}; the lowering contract puts it \
             at {}",
            role.name(),
            role.binding()
        )));
    }
    Ok(Slot {
        binding,
        ty: vk::DescriptorType::STORAGE_BUFFER,
        target: Target::Geometry(role),
        elems: Vec::new(),
    })
}

/// Resolves every resource of `refl` to what the job binds to it; errors name what is missing.
/// `geometry`: whether the stage is a pass of a lowered geometry pipeline, whose `geometry`
/// resources the runner fills with its own buffers (elsewhere they are an error).
pub(crate) fn plan(
    refl: &Reflection,
    binds: &[Bind],
    nbuf: usize,
    textures: &[TextureSpec],
    stage: &str,
    geometry: bool,
) -> Result<Vec<Slot>, Error> {
    let ntex = textures.len();
    let is_buf = |i: usize| textures.get(i).is_some_and(|t| t.buffer);
    let mut slots: Vec<Slot> = Vec::new();
    for r in &refl.resources {
        let n = r.index();
        if matches!(r.kind.as_str(), "samp_id" | "samp_ubo") {
            // The sampler half of a combined binding: bound with the texture on its binding
            // (below).
            continue;
        }
        if let Some(v) = &r.view {
            // An alias (docs/reflection.md "One declaration per slot") needs a second view of
            // the job's texture, of another type; binding the texture's own view there would
            // not match the shader's image type.
            return Err(Error::Job(format!(
                "{stage}: {} {n} alias at binding {} wants a {v} view of the texture, which \
                 dmsh-vk does not make yet",
                r.kind,
                r.vk_binding()
            )));
        }
        let push = |slots: &mut Vec<Slot>, slot: Slot| {
            if slots.iter().any(|s| s.binding == slot.binding) {
                return Err(Error::Job(format!(
                    "{stage}: two resources use binding {}",
                    slot.binding
                )));
            }
            slots.push(slot);
            Ok(())
        };
        if r.kind == LOWERED_BUFFER {
            if !geometry {
                return Err(Error::Job(format!(
                    "{stage}: a geometry buffer (role {}) outside a lowered geometry pipeline",
                    r.bank
                )));
            }
            push(&mut slots, geometry_slot(r, stage)?)?;
            continue;
        }
        let array = match r.kind.as_str() {
            "tex_dyn" => Some((
                vk::DescriptorType::SAMPLED_IMAGE,
                array_elems(r, binds, ResourceRef::TexDyn, Target::Texture, ntex, stage)?,
            )),
            "samp_dyn" => Some((
                vk::DescriptorType::SAMPLER,
                array_elems(r, binds, ResourceRef::SampDyn, Target::Sampler, ntex, stage)?,
            )),
            // A sampler array indexed at run time: element k is texture slot n + k.
            "texture" if r.count > 0 => Some((
                if r.separate {
                    vk::DescriptorType::SAMPLED_IMAGE
                } else {
                    vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                },
                array_elems(
                    r,
                    binds,
                    |k| ResourceRef::Texture(n + k),
                    Target::Texture,
                    ntex,
                    stage,
                )?,
            )),
            _ => None,
        };
        if let Some((ty, elems)) = array {
            push(
                &mut slots,
                Slot {
                    binding: r.vk_binding(),
                    ty,
                    target: elems[0],
                    elems,
                },
            )?;
            continue;
        }
        let res = match r.kind.as_str() {
            "cbuf" => ResourceRef::Cbuf(n),
            "sbuf" => ResourceRef::Sbuf(n),
            "sbuf_ubo" => {
                let (u, o) = r.sbuf_ubo();
                ResourceRef::SbufUbo(u, o)
            }
            "texture" => ResourceRef::Texture(n),
            "image" => ResourceRef::Image(n),
            "sampler" => ResourceRef::Sampler(n),
            "tex_ubo" => ResourceRef::TexUbo(n, r.guest_offset),
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
        let sampled = if r.separate {
            vk::DescriptorType::SAMPLED_IMAGE
        } else {
            vk::DescriptorType::COMBINED_IMAGE_SAMPLER
        };
        let (ty, target, count) = match res {
            ResourceRef::Cbuf(_) => (
                vk::DescriptorType::UNIFORM_BUFFER,
                Target::Buffer(b.buffer, r.size.unwrap_or(0)),
                nbuf,
            ),
            ResourceRef::Sbuf(_) | ResourceRef::SbufUbo(..) => (
                vk::DescriptorType::STORAGE_BUFFER,
                Target::Buffer(b.buffer, r.size.unwrap_or(0)),
                nbuf,
            ),
            ResourceRef::Texture(_) | ResourceRef::TexUbo(..) => (
                if is_buf(b.buffer) {
                    vk::DescriptorType::UNIFORM_TEXEL_BUFFER
                } else {
                    sampled
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
            ResourceRef::Sampler(_)
            | ResourceRef::TexDyn(_)
            | ResourceRef::SampDyn(_)
            | ResourceRef::SampId(_)
            | ResourceRef::SampUbo(..) => {
                (vk::DescriptorType::SAMPLER, Target::Sampler(b.buffer), ntex)
            }
        };
        if b.buffer >= count {
            return Err(Error::Job(format!(
                "{stage}: {res} is bound to #{} but the job has {count}",
                b.buffer
            )));
        }
        let target = match (target, sampler_half(refl, r, binds, ntex, stage)?) {
            (Target::Texture(t), Some(smp)) => Target::Combined(t, smp),
            (t, _) => t,
        };
        push(
            &mut slots,
            Slot {
                binding: r.vk_binding(),
                ty,
                target,
                elems: Vec::new(),
            },
        )?;
    }
    Ok(slots)
}

/// The job texture whose sampler a combined texture binding uses when the reflection puts a
/// sampler half (`samp_id` / `samp_ubo`) on the same binding: what the job binds to that
/// sampler ID / handle word (required); `None` when the binding has no sampler half.
fn sampler_half(
    refl: &Reflection,
    tex: &crate::reflection::Resource,
    binds: &[Bind],
    ntex: usize,
    stage: &str,
) -> Result<Option<usize>, Error> {
    if !matches!(tex.kind.as_str(), "texture" | "tex_ubo") || tex.separate {
        return Ok(None);
    }
    let Some(h) = refl.resources.iter().find(|h| {
        matches!(h.kind.as_str(), "samp_id" | "samp_ubo") && h.vk_binding() == tex.vk_binding()
    }) else {
        return Ok(None);
    };
    let res = if h.kind == "samp_id" {
        ResourceRef::SampId(h.index())
    } else {
        ResourceRef::SampUbo(h.index(), h.guest_offset)
    };
    let b = binds.iter().find(|b| b.resource == res).ok_or_else(|| {
        Error::Job(format!(
            "{stage}: {res} (the sampler of binding {}) has nothing bound in the job",
            tex.vk_binding()
        ))
    })?;
    if b.buffer >= ntex {
        return Err(Error::Job(format!(
            "{stage}: {res} is bound to #{} but the job has {ntex} textures",
            b.buffer
        )));
    }
    Ok(Some(b.buffer))
}

/// `f` of every target of every slot, slot by slot: a descriptor write's info array per slot.
fn per_target<T>(slots: &[Slot], f: impl Fn(&Slot, Target) -> T) -> Vec<Vec<T>> {
    slots
        .iter()
        .map(|sl| sl.targets().into_iter().map(|t| f(sl, t)).collect())
        .collect()
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

/// Points every binding of `slots` that holds lowered buffer `role` at scope buffer `buffer`
/// instead (a buffer made after the set was written: the lowered tessellation pipeline's
/// domain points). `set` must not be in use by a pending submission.
pub(crate) fn rebind_lowered(
    s: &Scope<'_>,
    set: vk::DescriptorSet,
    slots: &[Slot],
    role: LoweredBuffer,
    buffer: usize,
) {
    let hb = &s.buffers[buffer];
    let info = [vk::DescriptorBufferInfo::default()
        .buffer(hb.buffer)
        .offset(0)
        .range(
            hb.size
                .min(u64::from(s.dev.info().max_storage_buffer_range)),
        )];
    let writes: Vec<vk::WriteDescriptorSet> = slots
        .iter()
        .filter(|sl| matches!(sl.target, Target::Geometry(g) if g == role))
        .map(|sl| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(sl.binding)
                .descriptor_type(sl.ty)
                .buffer_info(&info)
        })
        .collect();
    if !writes.is_empty() && set != vk::DescriptorSet::null() {
        // SAFETY: the set and buffer come from this device; the caller guarantees the set is
        // not in use.
        unsafe { s.dev.device.update_descriptor_sets(&writes, &[]) };
    }
}

/// Creates the set layout and a written descriptor set for `slots`.
/// `bufs[i]` is the scope index of job buffer i; `imgs[i]` job texture i; `geometry[role]`
/// the scope index of a lowered geometry pipeline's buffer (empty outside one).
pub(crate) fn make_set(
    s: &mut Scope<'_>,
    slots: &[Slot],
    stages: vk::ShaderStageFlags,
    bufs: &[usize],
    imgs: &[GpuImage],
    geometry: &[usize],
) -> Result<(vk::DescriptorSetLayout, vk::DescriptorSet), Error> {
    if let Some(role) = slots.iter().find_map(|sl| match sl.target {
        Target::Geometry(g) if geometry.get(g as usize).is_none() => Some(g),
        _ => None,
    }) {
        return Err(Error::Job(format!(
            "geometry buffer {} has no buffer made for it",
            role.name()
        )));
    }
    let d = &s.dev.device;
    let lb: Vec<vk::DescriptorSetLayoutBinding> = slots
        .iter()
        .map(|sl| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(sl.binding)
                .descriptor_type(sl.ty)
                .descriptor_count(sl.targets().len() as u32)
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
            let k = sl.targets().len() as u32;
            match sizes.iter_mut().find(|p| p.ty == sl.ty) {
                Some(p) => p.descriptor_count += k,
                None => sizes.push(
                    vk::DescriptorPoolSize::default()
                        .ty(sl.ty)
                        .descriptor_count(k),
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
        let binfo = per_target(slots, |sl, t| match t {
            Target::Buffer(..) | Target::Geometry(_) => {
                // The range may not exceed the device's limit for the type.
                let limit = if sl.ty == vk::DescriptorType::UNIFORM_BUFFER {
                    info.max_uniform_buffer_range
                } else {
                    info.max_storage_buffer_range
                } as u64;
                let i = match t {
                    Target::Buffer(b, _) => bufs[b],
                    Target::Geometry(g) => geometry[g as usize],
                    _ => unreachable!("buffer targets only"),
                };
                let hb = &s.buffers[i];
                vk::DescriptorBufferInfo::default()
                    .buffer(hb.buffer)
                    .offset(0)
                    .range(hb.size.min(limit))
            }
            _ => vk::DescriptorBufferInfo::default(),
        });
        let iinfo = per_target(slots, |_, t| match t {
            Target::Texture(t) | Target::Image(t) => vk::DescriptorImageInfo::default()
                .sampler(imgs[t].sampler)
                .image_view(imgs[t].view)
                .image_layout(vk::ImageLayout::GENERAL),
            Target::Sampler(t) => vk::DescriptorImageInfo::default().sampler(imgs[t].sampler),
            Target::Combined(t, smp) => vk::DescriptorImageInfo::default()
                .sampler(imgs[smp].sampler)
                .image_view(imgs[t].view)
                .image_layout(vk::ImageLayout::GENERAL),
            Target::Buffer(..) | Target::Geometry(_) => vk::DescriptorImageInfo::default(),
        });
        let tinfo = per_target(slots, |_, t| match t {
            Target::Texture(t) | Target::Image(t) | Target::Combined(t, _) => {
                imgs[t].texel_view.unwrap_or(vk::BufferView::null())
            }
            _ => vk::BufferView::null(),
        });
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
    fn sampler_ids_pick_the_sampler_of_their_texture_binding() {
        let refl = Reflection::from_json(
            r#"{"stage":"fragment","resources":[
                {"kind":"texture","slot":135,"binding":199},
                {"kind":"samp_id","bank":261,"binding":199}]}"#,
        )
        .unwrap();
        let tex = Bind {
            resource: ResourceRef::Texture(135),
            buffer: 0,
        };
        let samp = Bind {
            resource: ResourceRef::SampId(0x105),
            buffer: 1,
        };
        let slots = plan(&refl, &[tex, samp], 0, &[spec(), spec()], "fragment", false).unwrap();
        assert_eq!(slots.len(), 1);
        assert!(
            matches!(slots[0].target, Target::Combined(0, 1)),
            "{slots:?}"
        );
        let e = plan(&refl, &[tex], 0, &[spec(), spec()], "fragment", false).unwrap_err();
        assert!(e.to_string().contains("samp_id 0x105"), "{e}");
    }

    #[test]
    fn aliases_with_a_view_are_refused() {
        let refl = Reflection::from_json(
            r#"{"stage":"compute","resources":[
                {"kind":"texture","bank":2,"binding":66},
                {"kind":"texture","bank":2,"binding":65602,"view":"2d_array"}]}"#,
        )
        .unwrap();
        let binds = [Bind {
            resource: ResourceRef::Texture(2),
            buffer: 0,
        }];
        let e = plan(&refl, &binds, 0, &[spec()], "compute", false).unwrap_err();
        assert!(e.to_string().contains("2d_array view"), "{e}");
        let own = Reflection::from_json(
            r#"{"stage":"compute","resources":[{"kind":"texture","bank":2,"binding":66}]}"#,
        )
        .unwrap();
        assert_eq!(
            plan(&own, &binds, 0, &[spec()], "compute", false)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn geometry_buffers_bind_to_the_runner_s_buffers_in_lowered_passes_only() {
        let refl = Reflection::from_json(
            r#"{"stage":"compute","resources":[
                {"kind":"lowered","bank":1,"binding":241},
                {"kind":"lowered","bank":3},
                {"kind":"cbuf","bank":2,"binding":2}]}"#,
        )
        .unwrap();
        let binds = [Bind {
            resource: ResourceRef::Cbuf(2),
            buffer: 0,
        }];
        let slots = plan(&refl, &binds, 1, &[], "geometry_kernel", true).unwrap();
        let got: Vec<_> = slots.iter().map(|s| (s.binding, s.ty)).collect();
        use vk::DescriptorType as D;
        assert_eq!(
            got,
            [
                (241, D::STORAGE_BUFFER),
                (243, D::STORAGE_BUFFER),
                (2, D::UNIFORM_BUFFER)
            ]
        );
        assert!(matches!(
            slots[1].target,
            Target::Geometry(LoweredBuffer::Params)
        ));
        assert_eq!(needed_sizes(&slots, 1), [0], "not a job buffer");
        let e = plan(&refl, &binds, 1, &[], "vertex", false).unwrap_err();
        assert!(e.to_string().contains("outside a lowered"), "{e}");
        let moved =
            Reflection::from_json(r#"{"resources":[{"kind":"lowered","bank":2,"binding":250}]}"#)
                .unwrap();
        let e = plan(&moved, &[], 0, &[], "geometry_draw", true).unwrap_err();
        assert!(e.to_string().contains("indices at binding 250"), "{e}");
        let unknown =
            Reflection::from_json(r#"{"resources":[{"kind":"lowered","bank":9}]}"#).unwrap();
        let e = plan(&unknown, &[], 0, &[], "geometry_draw", true).unwrap_err();
        assert!(e.to_string().contains("role 9"), "{e}");
    }

    /// A texture spec (an image, not a texel buffer).
    fn spec() -> TextureSpec {
        TextureSpec::default()
    }

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
        let slots = plan(&refl, &binds, 1, &[], "fragment", false).unwrap();
        assert_eq!(slots.len(), 1);
        assert_eq!(slots[0].binding, 3);
    }

    #[test]
    fn separate_and_array_kinds() {
        let refl = Reflection::from_json(
            r#"{"stage":"fragment","resources":[
                {"kind":"texture","bank":0,"binding":64,"separate":true},
                {"kind":"sampler","bank":1,"binding":97},
                {"kind":"tex_ubo","bank":4,"guest_offset":16,"binding":34884},
                {"kind":"tex_dyn","binding":32576,"count":4},
                {"kind":"texture","bank":4,"binding":68,"count":3},
                {"kind":"samp_dyn","binding":32608,"count":4}]}"#,
        )
        .unwrap();
        let b = |resource, buffer| Bind { resource, buffer };
        let binds = [
            b(ResourceRef::Texture(0), 0),
            b(ResourceRef::Sampler(1), 1),
            b(ResourceRef::TexUbo(4, 16), 1),
            b(ResourceRef::TexDyn(2), 1),
            b(ResourceRef::TexDyn(3), 0),
            b(ResourceRef::SampDyn(0), 1),
            b(ResourceRef::Texture(5), 1),
        ];
        let texs = vec![TextureSpec::default(); 2];
        let slots = plan(&refl, &binds, 0, &texs, "fragment", false).unwrap();
        let ty: Vec<_> = slots.iter().map(|s| (s.binding, s.ty)).collect();
        use vk::DescriptorType as D;
        assert_eq!(
            ty,
            [
                (64, D::SAMPLED_IMAGE),
                (97, D::SAMPLER),
                (34884, D::COMBINED_IMAGE_SAMPLER),
                (32576, D::SAMPLED_IMAGE),
                (68, D::COMBINED_IMAGE_SAMPLER),
                (32608, D::SAMPLER)
            ]
        );
        // Unbound elements repeat the lowest bound one.
        let el = |s: &Slot| -> Vec<usize> {
            s.targets()
                .iter()
                .map(|t| match *t {
                    Target::Texture(i) | Target::Sampler(i) => i,
                    _ => usize::MAX,
                })
                .collect()
        };
        assert_eq!(el(&slots[3]), [1, 1, 1, 0]);
        assert_eq!(el(&slots[4]), [1, 1, 1], "texture slots 4..7: only 5 bound");
        assert_eq!(el(&slots[5]), [1, 1, 1, 1]);
        // An array with nothing bound is an error naming it.
        let e = plan(&refl, &binds[..3], 0, &texs, "fragment", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("tex_dyn") && e.contains("nothing bound"), "{e}");
    }
}
