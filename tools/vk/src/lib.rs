//! dmsh-vk: runs translated SPIR-V on a Vulkan device (compute dispatch and
//! offscreen rendering) for `dmsh exec` / `dmsh render` and the tests.
//!
//! ```no_run
//! use dmsh_vk::{ComputeJob, Error};
//! let job = ComputeJob::default(); // SPIR-V words, reflection, buffers, binds, pointers, grid
//! match dmsh_vk::run_compute(&job) {
//!     Ok(out) => println!("{} buffers back from {}", out.buffers.len(), out.device),
//!     Err(e) if e.is_skip() => println!("skipped: {e}"),
//!     Err(e) => panic!("{e}"),
//! }
//! ```
//!
//! One process-wide device ([`shared`]) is picked by `DMSH_VK_DEVICE` (a substring of the
//! device name), else the first Vulkan 1.2 device. Every feature the device supports among the
//! core 1.0–1.3 feature structs is enabled (int64/float64/int16, bufferDeviceAddress, 8/16-bit
//! storage, vulkanMemoryModel, subgroup size control, …); [`DeviceInfo`] says which.
//! Resources follow the binding table of docs/reflection.md.

#![warn(missing_docs)]

pub mod b64;
pub mod validate;
pub use validate::spirv_val;
mod bind;
pub mod compute;
pub mod device;
pub mod error;
pub mod image;
pub mod io_json;
pub mod job;
pub mod reflection;
pub mod render;
pub mod tessellator;

pub use compute::{
    run_compute, Bind, BufferSpec, ComputeJob, Outputs, PointerEncoding, PointerPatch, ResourceRef,
};
pub use device::{shared, Device, DeviceInfo};
pub use error::Error;
pub use image::{TexFormat, TextureSpec};
pub use reflection::{Reflection, Resource};
pub use render::{
    render, Image, LoweredGeometry, LoweredTessellation, MiddleStage, RenderJob, RenderOutputs,
    Stage, Tessellation, Topology, VertexAttribute, VertexBuffer,
};

/// Converts SPIR-V bytes to words (little-endian; the length must be a multiple of 4).
pub fn spirv_words(bytes: &[u8]) -> Result<Vec<u32>, Error> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(Error::Job(format!(
            "SPIR-V is {} bytes: not a whole number of words or too short",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}
