//! One module per subcommand.

pub mod build;
pub mod c1_guard;
pub mod chain;
pub mod demo;
pub mod disasm;
pub mod exec;
pub mod facts;
pub mod render;
pub mod report;
pub mod split;
pub mod title;
pub mod translate;
pub mod translate_gfx;
