//! dmsh-scan: finds every shader container in a title's RomFS and ExeFS `main`,
//! keys each shader as the host does, and writes the split tables.
//!
//! The scan is a recursion: open bytes → detect the container → yield members (recursing, in
//! parallel) or shader records. Every reader is bounds-checked and returns typed errors that
//! become warnings naming the file, its archive path and the offset; the scan goes on.

#![warn(missing_docs)]

pub mod bytes;
pub mod containers;
pub mod cover;
pub mod error;
pub mod profile;
pub mod shader;
pub mod split;
pub mod tables;
pub mod walk;

// The shared binary formats (dmsh-formats), under the paths the scanner always used.
pub use dmsh_formats::{code, control, key, sph, stage};

pub use error::{ReadError, WarnKind, Warning};
pub use profile::Profile;
pub use shader::{ContainerKind, Shader};
pub use split::{split, Inputs, Outputs, Progress, Quiet, Summary};
pub use stage::Stage;
pub use walk::{Limits, Scan};
