//! The crate's error type.

use ash::vk;

/// Errors of the Vulkan runner. Clone-able so a shared device can report its init failure to
/// every caller.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// No Vulkan loader, no instance or no physical device: tests treat this as "skipped".
    #[error("no Vulkan device: {0}")]
    NoDevice(String),
    /// The device cannot run this job (missing feature, wrong subgroup size): a skip, not a failure.
    #[error("unsupported on {device}: {reason}")]
    Unsupported {
        /// Device name.
        device: String,
        /// What is missing.
        reason: String,
    },
    /// A Vulkan call failed.
    #[error("{call} failed: {result:?}")]
    Vk {
        /// The Vulkan function.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
    /// The job is inconsistent (unbound resource, patch out of range, bad SPIR-V header, …).
    #[error("bad job: {0}")]
    Job(String),
    /// An external tool (glslangValidator) failed or is missing.
    #[error("{0}")]
    Tool(String),
    /// The dispatch or draw did not finish in time (a hung shader).
    #[error("GPU work did not finish within {0} s (hung shader?)")]
    Timeout(u64),
}

impl Error {
    /// True when the error means "cannot run here" (no device, missing feature) rather than a
    /// wrong result or a broken job: tests report these as skipped.
    pub fn is_skip(&self) -> bool {
        matches!(self, Error::NoDevice(_) | Error::Unsupported { .. })
    }
}

/// Wraps a `VkResult` with the call's name.
pub(crate) trait VkCtx<T> {
    /// Names the failed call.
    fn vk(self, call: &'static str) -> Result<T, Error>;
}

impl<T> VkCtx<T> for Result<T, vk::Result> {
    fn vk(self, call: &'static str) -> Result<T, Error> {
        self.map_err(|result| Error::Vk { call, result })
    }
}
