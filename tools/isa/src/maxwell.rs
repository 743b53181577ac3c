//! Maxwell (sm_50–53, Tegra X1) as an instance of the shared [`crate::engine`]: 64-bit words,
//! the table `src/maxwell.tbl` and its generated [`Opcode`]. Scheduling words (one in front of
//! every three instructions) are not instructions: [`crate::stream`] handles them.

use crate::engine::{Isa, Table};
use crate::opcode::Opcode;
use std::sync::OnceLock;

/// The table source, kept as data next to the code.
pub const TABLE_SOURCE: &str = include_str!("maxwell.tbl");

/// The Maxwell ISA (a marker type: `Instr<Maxwell>` is [`crate::Instr`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Maxwell;

impl Isa for Maxwell {
    type Word = u64;
    type Opcode = Opcode;
    const INDEX: (u32, u32) = (52, 12);

    #[inline]
    fn table() -> &'static Table<Maxwell> {
        static T: OnceLock<Table<Maxwell>> = OnceLock::new();
        T.get_or_init(|| {
            Table::parse("maxwell.tbl", TABLE_SOURCE).unwrap_or_else(|e| panic!("{e}"))
        })
    }

    fn opcode(mnemonic: &str) -> Option<Opcode> {
        Opcode::from_name(mnemonic)
    }

    fn mnemonic(op: Opcode) -> &'static str {
        op.name()
    }
}
