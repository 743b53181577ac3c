//! The reflection JSON (docs/reflection.md) as the runner reads it. Unknown fields are ignored
//! and missing ones take defaults, so the translator can add fields without breaking runners.

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// One translated shader's reflection record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reflection {
    /// Format version (0 for the draft).
    pub version: u32,
    /// vertex | tess_control | tess_eval | geometry | fragment | compute.
    pub stage: String,
    /// SPIR-V entry point name.
    pub entry: String,
    /// Compute workgroup size.
    pub local_size: [u32; 3],
    /// The workgroup size is specialization constants 0, 1, 2 (a variable group size): the
    /// runner sets them to `local_size` (which the caller may set to the dispatch's size).
    pub local_size_spec: bool,
    /// Workgroup memory bytes the shader declares.
    pub shared_bytes: u32,
    /// Per-thread local memory bytes.
    pub local_bytes: u32,
    /// The shader uses 64-bit global addresses (PhysicalStorageBuffer64).
    pub uses_global_addresses: bool,
    /// exact | native.
    pub fma_mode: String,
    /// nvn | cuda | deko3d.
    pub abi: String,
    /// The translation maps 32-lane warp operations (SHFL, VOTE, lane masks) 1:1 onto
    /// subgroups: results are only right where the subgroup size is 32.
    pub warp_ops: bool,
    /// Bound resources.
    pub resources: Vec<Resource>,
}

/// One bound resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resource {
    /// cbuf | sbuf | sbuf_ubo | texture | sampler | image | tex_ubo | samp_ubo | samp_id |
    /// tex_dyn | samp_dyn.
    pub kind: String,
    /// Guest constant bank (cbuf).
    pub bank: Option<u32>,
    /// Guest slot (sbuf, texture, sampler, image).
    pub slot: Option<u32>,
    /// cbuf: guest byte offset that maps to byte 0 of the buffer.
    pub guest_offset: u32,
    /// Bytes, where known.
    pub size: Option<u64>,
    /// Vulkan descriptor set.
    pub set: u32,
    /// Vulkan binding; when absent, the fixed table of docs/reflection.md.
    pub binding: Option<u32>,
    /// Metal index.
    pub metal_index: Option<u32>,
    /// Array elements (`tex_dyn` / `samp_dyn`); 0 = a single resource.
    pub count: u32,
    /// `texture` / `tex_ubo`: a separate image (SAMPLED_IMAGE) combined with `sampler`
    /// resources in the code; false = a combined image sampler.
    pub separate: bool,
    /// `sbuf_ubo`: the uniform-buffer slot holding the storage buffer's 64-bit address.
    pub ubo: Option<u32>,
    /// `sbuf_ubo`: that address's byte offset in the uniform buffer.
    pub offset: Option<u32>,
}

impl Resource {
    /// The bank (cbuf) or slot (everything else).
    pub fn index(&self) -> u32 {
        self.bank.or(self.slot).unwrap_or(0)
    }

    /// `sbuf_ubo`: (uniform-buffer slot, byte offset) of the buffer's address (`ubo` /
    /// `offset`, else `bank` / `guest_offset`).
    pub fn sbuf_ubo(&self) -> (u32, u32) {
        (
            self.ubo.unwrap_or(self.index()),
            self.offset.unwrap_or(self.guest_offset),
        )
    }

    /// The Vulkan binding: explicit, else the table of docs/reflection.md.
    pub fn vk_binding(&self) -> u32 {
        self.binding.unwrap_or_else(|| {
            if self.kind == "sbuf_ubo" {
                let (u, o) = self.sbuf_ubo();
                return 32 + (0x4000 | (u << 10) | (o / 4));
            }
            let n = self.index();
            match self.kind.as_str() {
                "cbuf" => n,
                "sbuf" => 32 + n,
                "texture" => 64 + n,
                "sampler" => 96 + n,
                "image" => 128 + n,
                _ => n,
            }
        })
    }
}

impl Reflection {
    /// Parses reflection JSON.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        let r: Reflection =
            serde_json::from_str(text).map_err(|e| Error::Job(format!("reflection JSON: {e}")))?;
        Ok(r)
    }

    /// The entry point name, `main` when empty.
    pub fn entry_name(&self) -> &str {
        if self.entry.is_empty() {
            "main"
        } else {
            &self.entry
        }
    }

    /// Subgroup size the shader needs (32 with `warp_ops`), or 0 when any size works.
    pub fn required_subgroup_size(&self) -> u32 {
        if self.warp_ops {
            32
        } else {
            0
        }
    }

    /// The cbuf resource for guest bank `bank`, if any.
    pub fn cbuf(&self, bank: u32) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.kind == "cbuf" && r.bank == Some(bank))
    }
}
