//! Run-time indexed texture arrays sized by what their index can reach.
//!
//! The lifter sizes a sampler array indexed at run time (a handle loaded from the handle bank
//! at `first + x`) from its first slot to the end of the layout's texture table: it cannot
//! see how far `x` goes. Declared that way the array also spans the slots after it, which may
//! hold other kinds of textures (NAK's fs_sampler_array_dyn: `layersTex[vMat & 3]` at slots
//! 0–3, then a texel buffer, a 1D and a 2D texture), and a host must bind them all as
//! elements of the array. After `ssa` and `const_fold` the index's interval
//! ([`crate::interval`]) bounds it: an array whose index is at most `k` has `k + 1` elements,
//! the slots the guest can reach. Arrays of `tex_dyn_slots` handles and pending handles are
//! left alone (their index is a handle, not an element number).

use crate::gfx::{TEX_DYN, TEX_PENDING};
use crate::interval::intervals_of;
use crate::ir::{Function, Op};

/// Runs the pass.
pub fn run(f: &mut Function) {
    let sized = |op: &Op| matches!(op, Op::Tex(d) if d.dyn_count > 1 && d.slot != TEX_DYN && d.slot != TEX_PENDING);
    if !f.tex_arrays || !f.insts.iter().any(|i| sized(&i.op)) {
        return;
    }
    let ranges = intervals_of(
        f,
        f.insts.iter().filter(|i| sized(&i.op)).map(|i| i.args[3]),
    );
    for i in &mut f.insts {
        if !sized(&i.op) {
            continue;
        }
        let Op::Tex(d) = &mut i.op else { continue };
        let hi = ranges.range(i.args[3]).hi;
        if hi < u64::from(d.dyn_count) - 1 {
            d.dyn_count = hi as u8 + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx::{TexDesc, TexDim, TexKind};
    use crate::interval::tests::{bin, one_block};
    use crate::ir::{Type, Value};

    fn tex(f: &mut Function, b: crate::ir::BlockId, idx: Value, count: u8) -> Value {
        let d = TexDesc {
            dyn_count: count,
            ..crate::lift::tex::desc(TexKind::Sample, TexDim::D2, false, 4)
        };
        let z = f.push(b, Op::Const(0), Type::U32, &[]);
        f.tex_arrays = true;
        f.push(b, Op::Tex(d), Type::Void, &[z, z, z, idx])
    }

    fn count(f: &Function, v: Value) -> u8 {
        match f.inst(v).op {
            Op::Tex(d) => d.dyn_count,
            _ => unreachable!(),
        }
    }

    #[test]
    fn an_index_masked_to_two_bits_reaches_four_elements() {
        let (mut f, b, x) = one_block();
        let m = bin(&mut f, b, Op::And, x, 3);
        let t = tex(&mut f, b, m, 8);
        let u = tex(&mut f, b, x, 8);
        run(&mut f);
        assert_eq!(count(&f, t), 4);
        // An unbounded index keeps the whole table.
        assert_eq!(count(&f, u), 8);
    }
}
