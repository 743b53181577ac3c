//! Which bytes of each constant bank a function reads (`LoadConst`): the byte ranges of the
//! reads at constant offsets, merged, and whether any offset is computed at run time. The
//! reflection records them per cbuf so a host knows which driver-segment (c[0]) words a shader
//! needs filled (seed 000: a scan that missed vertex and compute shaders' c[0] reads cost Link's
//! Awakening its tile lights and Odyssey its point sprites).

use crate::ir::{Function, Op};
use std::collections::BTreeMap;

/// The reads of one constant bank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BankReads {
    /// Byte ranges `[start, end)` read at constant offsets, sorted and merged.
    pub ranges: Vec<[u32; 2]>,
    /// Whether some read's offset is computed at run time (its range is not in `ranges`).
    pub dynamic: bool,
}

/// The reads of every constant bank `f` reads, by bank.
pub fn const_reads(f: &Function) -> BTreeMap<u8, BankReads> {
    let mut raw: BTreeMap<u8, (Vec<[u32; 2]>, bool)> = BTreeMap::new();
    for &v in f.blocks.iter().flat_map(|b| b.insts.iter()) {
        let i = f.inst(v);
        let Op::LoadConst(bank) = i.op else { continue };
        let e = raw.entry(bank).or_default();
        match f.const_of(i.args[0]) {
            Some(off) => {
                let off = off as u32;
                e.0.push([off, off.saturating_add(4)]);
            }
            None => e.1 = true,
        }
    }
    raw.into_iter()
        .map(|(bank, (mut r, dynamic))| {
            r.sort_unstable();
            let mut ranges: Vec<[u32; 2]> = Vec::with_capacity(r.len());
            for x in r {
                match ranges.last_mut() {
                    Some(last) if x[0] <= last[1] => last[1] = last[1].max(x[1]),
                    _ => ranges.push(x),
                }
            }
            (bank, BankReads { ranges, dynamic })
        })
        .collect()
}
