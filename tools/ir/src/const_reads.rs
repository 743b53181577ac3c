//! Which bytes of each constant bank a function reads (`LoadConst`): the byte ranges of the
//! reads at constant offsets, merged, and whether any offset is computed at run time. The
//! reflection records them per cbuf so a host knows which driver-segment (c[0]) words a shader
//! needs filled (seed 000: a scan that missed vertex and compute shaders' c[0] reads cost Link's
//! Awakening its tile lights and Odyssey its point sprites). Reads at run-time offsets are
//! bounded by interval arithmetic ([`crate::interval`]): [`c1_check`] says whether every one
//! of NVN's c1 stays inside the span a shared bank gives the shader (seed 001's
//! `c1_full.tsv` rule).

use crate::ir::{Function, Op, Value};
use crate::shader::{BankSource, Shader};
use std::collections::BTreeMap;

/// The reads of one constant bank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BankReads {
    /// Byte ranges `[start, end)` read at constant offsets, sorted and merged.
    pub ranges: Vec<[u32; 2]>,
    /// Whether some read's offset is computed at run time (its range is not in `ranges`).
    pub dynamic: bool,
    /// One past the last byte a run-time-offset read may reach (whole words: a read at byte
    /// offset `o` reads word `o / 4`), by interval arithmetic over its offset; 0 when none.
    pub dynamic_end: u64,
}

/// The reads of every constant bank `f` reads, by bank.
pub fn const_reads(f: &Function) -> BTreeMap<u8, BankReads> {
    let live = f.blocks.iter().flat_map(|b| b.insts.iter().copied());
    const_reads_of(
        f,
        live.filter(|&v| matches!(f.inst(v).op, Op::LoadConst(_))),
    )
}

/// [`const_reads`] given the `LoadConst`s of `f`'s blocks in block order (found by a scan
/// the caller makes anyway); other instructions in `loads` are skipped.
pub fn const_reads_of(
    f: &Function,
    loads: impl IntoIterator<Item = Value>,
) -> BTreeMap<u8, BankReads> {
    let loads = loads.into_iter();
    // Reads at constant offsets, all banks in one list: (bank, byte range).
    let mut fixed: Vec<(u8, [u32; 2])> = Vec::with_capacity(loads.size_hint().0);
    // Reads at run-time offsets: (bank, offset), bounded once all are known.
    let mut dynamic: Vec<(u8, Value)> = Vec::new();
    for v in loads {
        let i = f.inst(v);
        let Op::LoadConst(bank) = i.op else { continue };
        match f.const_of(i.args[0]) {
            Some(off) => {
                let off = off as u32;
                fixed.push((bank, [off, off.saturating_add(4)]));
            }
            None => dynamic.push((bank, i.args[0])),
        }
    }
    fixed.sort_unstable();
    let mut out: BTreeMap<u8, BankReads> = BTreeMap::new();
    for bank in fixed.chunk_by(|a, b| a.0 == b.0) {
        let reads = BankReads {
            ranges: merged(bank.iter().map(|r| r.1)),
            ..BankReads::default()
        };
        out.insert(bank[0].0, reads);
    }
    if !dynamic.is_empty() {
        let ranges = crate::interval::intervals_of(f, dynamic.iter().map(|d| d.1));
        for (bank, off) in dynamic {
            let hi = ranges.range(off).hi;
            let reads = out.entry(bank).or_default();
            reads.dynamic_end = reads.dynamic_end.max((hi / 4 + 1) * 4);
            reads.dynamic = reads.dynamic_end > 0;
        }
    }
    out
}

/// Byte ranges `[start, end)` in order, with overlapping and touching ones merged.
fn merged(sorted: impl ExactSizeIterator<Item = [u32; 2]>) -> Vec<[u32; 2]> {
    let mut ranges: Vec<[u32; 2]> = Vec::with_capacity(sorted.len());
    for x in sorted {
        match ranges.last_mut() {
            Some(last) if x[0] <= last[1] => last[1] = last[1].max(x[1]),
            _ => ranges.push(x),
        }
    }
    ranges
}

/// The bank NVN keeps in the code area (the c1 segment, control +0x700 / +0x6fc).
pub const C1: u8 = 1;

/// The bytes a shared c1 bank gives a shader whose c1 data is `bytes` long: the data rounded
/// up to 256 bytes, then the 256-byte zero gap before the next shader's data (seed 001).
pub fn c1_span(bytes: u64) -> u64 {
    bytes.div_ceil(256) * 256 + 256
}

/// Whether a shader's run-time-offset c1 reads stay inside its span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum C1Status {
    /// No c1 read has a run-time offset.
    None,
    /// Every one is proven inside the span.
    Proven,
    /// Some offset is not proven inside the span.
    Unproven,
}

impl C1Status {
    /// The reflection's name (`none`, `proven`, `unproven`).
    pub fn name(self) -> &'static str {
        match self {
            C1Status::None => "none",
            C1Status::Proven => "proven",
            C1Status::Unproven => "unproven",
        }
    }
}

/// What [`c1_check`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct C1Check {
    /// The verdict.
    pub status: C1Status,
    /// One past the last byte a run-time-offset read may reach (0: none).
    pub end: u64,
    /// The span a shared bank gives the shader ([`c1_span`] of its c1 data).
    pub span: u64,
}

/// Checks `sh`'s run-time-offset c1 reads against its span; `None` when c1 is a bank bound
/// at run time (CUDA's parameter bank), not embedded data. `reads`: [`const_reads`] of the
/// shader's function.
pub fn c1_check(sh: &Shader, reads: &BTreeMap<u8, BankReads>) -> Option<C1Check> {
    let bytes = match sh.banks.iter().find(|b| b.bank == C1).map(|b| &b.source) {
        Some(BankSource::Embedded(w)) => 4 * w.len() as u64,
        Some(BankSource::Buffer { .. }) => return None,
        None => 0,
    };
    let span = c1_span(bytes);
    let end = reads.get(&C1).map_or(0, |r| r.dynamic_end);
    let status = if end == 0 {
        C1Status::None
    } else if end <= span {
        C1Status::Proven
    } else {
        C1Status::Unproven
    };
    Some(C1Check { status, end, span })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    #[test]
    fn ranges_merge_when_they_overlap_or_touch() {
        let mut r = vec![
            [8, 12],
            [0, 4],
            [20, 24],
            [4, 8],
            [22, 30],
            [40, 44],
            [21, 23],
        ];
        r.sort_unstable();
        assert_eq!(merged(r.into_iter()), vec![[0, 12], [20, 30], [40, 44]]);
        assert_eq!(merged(std::iter::empty()), Vec::<[u32; 2]>::new());
    }

    #[test]
    fn masked_offsets_are_proven_and_raw_ones_are_not() {
        use crate::interval::tests::{bin, one_block};
        let (mut f, b, x) = one_block();
        let off = bin(&mut f, b, Op::And, x, 0x3c);
        let k = f.make(Op::Const(0x40), Type::U32, &[]);
        for o in [off, k] {
            f.push(b, Op::LoadConst(C1), Type::U32, &[o]);
        }
        let mut sh = Shader {
            func: f,
            stage: crate::Stage::Compute,
            local_size: [1; 3],
            shared_bytes: 0,
            local_bytes: 0,
            banks: vec![crate::Bank {
                bank: C1,
                source: BankSource::Embedded(vec![0; 3]),
            }],
            abi: "nvn",
            guest_insts: 0,
            gfx: None,
        };
        let r = const_reads(&sh.func);
        assert_eq!(r[&C1].ranges, vec![[0x40, 0x44]]);
        assert_eq!((r[&C1].dynamic, r[&C1].dynamic_end), (true, 0x40));
        let c = c1_check(&sh, &r).unwrap();
        assert_eq!((c.status, c.end, c.span), (C1Status::Proven, 0x40, 512));
        // The raw register: unproven.
        sh.func.push(b, Op::LoadConst(C1), Type::U32, &[x]);
        let r = const_reads(&sh.func);
        let c = c1_check(&sh, &r).unwrap();
        assert_eq!((c.status, c.end), (C1Status::Unproven, 1 << 32));
        assert_eq!(c1_span(0), 256);
        assert_eq!(c1_span(256), 512);
        assert_eq!(c1_span(257), 768);
    }
}
