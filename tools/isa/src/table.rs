//! Maxwell's encoding table: `maxwell.tbl` (data, not code), parsed once at first use by the
//! table language of [`crate::table_syntax`] (the build script checks it with the same parser,
//! so a table mistake fails the build) into forms with fixed opcode bits, named fields and a
//! printing template, plus a lookup index. The types are the engine's
//! ([`crate::engine`]) for [`Maxwell`].

use crate::engine::{self, Isa};
use crate::maxwell::Maxwell;

pub use crate::engine::{FieldDef, FIELDS_SOURCE, QUICK_ABSENT, QUICK_PIECES};
pub use crate::maxwell::TABLE_SOURCE;
pub use crate::table_syntax::{Kind, Style, Tok};

/// One Maxwell instruction form: an opcode with one operand-kind variant.
pub type Form = engine::Form<Maxwell>;

/// The parsed Maxwell table with its lookup index.
pub type Table = engine::Table<Maxwell>;

/// The table, parsed on first use (the build script has checked it: parsing cannot fail).
#[inline]
pub fn table() -> &'static Table {
    Maxwell::table()
}

/// Parses a Maxwell table source against the field vocabulary ([`FIELDS_SOURCE`]).
pub fn parse(src: &str) -> Result<Table, String> {
    Table::parse("maxwell.tbl", src)
}
