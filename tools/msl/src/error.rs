//! Why a shader did not reach MSL.

/// A failed SPIR-V → MSL conversion.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The stage has no direct Metal equivalent (geometry, tessellation): a later step lowers it.
    #[error("{stage} shader: {reason}")]
    Stage {
        /// The reflection's stage name.
        stage: String,
        /// Why Metal cannot take it as it is.
        reason: &'static str,
    },
    /// The reflection is inconsistent (an unknown kind, two indices for one binding).
    #[error("reflection: {0}")]
    Reflection(String),
    /// SPIRV-Cross refused the module or an option; its message is kept.
    #[error("SPIRV-Cross ({step}): {message}")]
    SpirvCross {
        /// What we asked SPIRV-Cross to do: `parse`, `entry point`, `binding` or `compile`.
        step: &'static str,
        /// SPIRV-Cross's error text.
        message: String,
    },
}

impl Error {
    /// Wraps a SPIRV-Cross error from `step`.
    pub(crate) fn cross(step: &'static str) -> impl FnOnce(spirv_cross2::SpirvCrossError) -> Error {
        move |e| Error::SpirvCross {
            step,
            message: e.to_string(),
        }
    }
}
