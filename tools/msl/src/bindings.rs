//! The Metal arguments a reflection promises: per resource, its (set, binding) and the
//! buffer / texture / sampler indices SPIRV-Cross must give it (docs/reflection.md, "Metal
//! argument indices").

use dmsh_reflect::{Reflection, Resource};

/// A Metal argument table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// `[[buffer(n)]]`, 31 entries.
    Buffer,
    /// `[[texture(n)]]`, 128 entries.
    Texture,
    /// `[[sampler(n)]]`, 16 entries.
    Sampler,
}

impl Table {
    /// The MSL attribute name (`buffer`, `texture`, `sampler`).
    pub fn attribute(self) -> &'static str {
        match self {
            Table::Buffer => "buffer",
            Table::Texture => "texture",
            Table::Sampler => "sampler",
        }
    }
}

/// The Metal arguments of one reflection resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetalBinding {
    /// Index of the resource in `Reflection::resources`.
    pub resource: usize,
    /// Vulkan descriptor set.
    pub set: u32,
    /// Vulkan binding.
    pub binding: u32,
    /// The arguments: (table, first index); a combined image sampler has a texture and a sampler.
    pub slots: Vec<(Table, u32)>,
    /// Array elements (1 for a single resource); each slot takes `count` consecutive indices.
    pub count: u32,
}

/// The descriptor set SPIRV-Cross gives a push constant block (its `kPushConstDescSet`);
/// with binding [`PUSH_BINDING`] it names the block in `add_resource_binding`.
pub const PUSH_SET: u32 = !0;
/// The binding SPIRV-Cross gives a push constant block (its `kPushConstBinding`).
pub const PUSH_BINDING: u32 = 0;

/// Whether a kind shares its texture's binding and indices (`samp_ubo`, `samp_id`).
fn is_companion(kind: &str) -> bool {
    matches!(kind, "samp_ubo" | "samp_id")
}

/// The Metal arguments of `r`, or None for a companion; Err for an unknown kind.
fn slots(r: &Resource) -> Result<Option<Vec<(Table, u32)>>, String> {
    let combined = |r: &Resource| -> Result<Vec<(Table, u32)>, String> {
        let mut v = vec![(Table::Texture, r.metal_index)];
        if !r.separate {
            let s = r.metal_sampler.ok_or_else(|| {
                format!(
                    "{} at binding {} is a combined image sampler without metal_sampler",
                    r.kind,
                    r.vk_binding()
                )
            })?;
            v.push((Table::Sampler, s));
        }
        Ok(v)
    };
    Ok(Some(match r.kind.as_str() {
        "cbuf" | "sbuf" | "sbuf_ubo" | dmsh_reflect::PUSH | dmsh_reflect::LOWERED_BUFFER => {
            vec![(Table::Buffer, r.metal_index)]
        }
        "texture" | "tex_ubo" => combined(r)?,
        "image" | "tex_dyn" => vec![(Table::Texture, r.metal_index)],
        "sampler" | "samp_dyn" => vec![(Table::Sampler, r.metal_index)],
        k if is_companion(k) => return Ok(None),
        k => {
            return Err(format!(
                "unknown resource kind {k:?} at binding {}",
                r.vk_binding()
            ))
        }
    }))
}

/// Every (set, binding) of `refl` with its Metal arguments, in resource order (a push
/// constant block at ([`PUSH_SET`], [`PUSH_BINDING`])). `samp_ubo` / `samp_id` add nothing
/// (they complete the texture at their binding) but must repeat its indices; two resources
/// at one (set, binding) with different arguments are an error.
pub fn metal_bindings(refl: &Reflection) -> Result<Vec<MetalBinding>, String> {
    let mut out: Vec<MetalBinding> = Vec::new();
    for (i, r) in refl.resources.iter().enumerate() {
        let Some(slots) = slots(r)? else {
            continue;
        };
        let (set, binding) = if r.kind == dmsh_reflect::PUSH {
            (PUSH_SET, PUSH_BINDING)
        } else {
            (r.set, r.vk_binding())
        };
        let b = MetalBinding {
            resource: i,
            set,
            binding,
            slots,
            count: r.count.max(1),
        };
        match out
            .iter()
            .find(|o| (o.set, o.binding) == (b.set, b.binding))
        {
            Some(o) if (&o.slots, o.count) != (&b.slots, b.count) => {
                return Err(format!(
                    "set {} binding {} has two Metal assignments: {:?} and {:?}",
                    b.set, b.binding, o.slots, b.slots
                ))
            }
            Some(_) => {}
            None => out.push(b),
        }
    }
    for r in refl.resources.iter().filter(|r| is_companion(&r.kind)) {
        let tex = out
            .iter()
            .find(|o| (o.set, o.binding) == (r.set, r.vk_binding()))
            .ok_or_else(|| format!("{} at binding {} has no texture", r.kind, r.vk_binding()))?;
        let want = [
            Some((Table::Texture, r.metal_index)),
            r.metal_sampler.map(|s| (Table::Sampler, s)),
        ];
        if want.iter().flatten().any(|s| !tex.slots.contains(s)) {
            return Err(format!(
                "{} at binding {} has indices {}/{:?}, its texture {:?}",
                r.kind,
                r.vk_binding(),
                r.metal_index,
                r.metal_sampler,
                tex.slots
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::resource as res;

    #[test]
    fn companions_share_their_texture() {
        let mut refl = crate::tests::reflection("fragment");
        refl.resources = vec![
            res("cbuf", 3, 0, None),
            res("tex_ubo", 64 + 0x8000, 0, Some(0)),
            res("samp_ubo", 64 + 0x8000, 0, Some(0)),
        ];
        let b = metal_bindings(&refl).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].slots, vec![(Table::Texture, 0), (Table::Sampler, 0)]);
        refl.resources[2].metal_sampler = Some(1);
        assert!(metal_bindings(&refl).is_err());
        refl.resources[2].kind = "mystery".into();
        assert!(metal_bindings(&refl).unwrap_err().contains("unknown"));
    }
}
