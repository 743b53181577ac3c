//! The reflection JSON (docs/reflection.md) as the runner reads it: the schema is the
//! `dmsh-reflect` crate, shared with the translator, the build and the runtime. Unknown fields
//! are ignored and missing ones take defaults; another schema version is refused.

pub use dmsh_reflect::{ReadError, Reflection, Resource};

impl From<ReadError> for crate::error::Error {
    fn from(e: ReadError) -> Self {
        crate::error::Error::Job(e.to_string())
    }
}
