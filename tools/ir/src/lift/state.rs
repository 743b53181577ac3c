//! Guest state in the block being lifted: the last value of every register, predicate and
//! flag the block read or wrote, and the writes not yet placed.
//!
//! A read after a read or write of a slot in the same block is that value (no `Get`); the
//! first read is a `Get`. A write only records its value: the block's `Set`s are placed when
//! it ends ([`State::flush`], called by `Cx::finish`), one per slot written — the last value —
//! in the order the slots were first written. That is exact: within a block code runs in the
//! order it is filled, every read after a write is forwarded, and only the value at the end
//! of the block is visible to other blocks. The `ssa` pass saw every earlier `Set` of a slot
//! replaced by the last one anyway; now they are not made at all (about half of all the `Set`s
//! the lifter used to make).

use crate::ir::{BlockId, Function, Op, Reg, Type, Value, STATE_SLOTS};

/// Per state slot ([`Reg::slot`]): the block and its known value there; the slots written
/// since the block's last flush. `State::default()` is an empty placeholder (no allocation,
/// for `std::mem::take`); [`State::new`] is the usable one.
#[derive(Default)]
pub(crate) struct State {
    /// (block, value) of each slot's last read or write; a block id that is not the current
    /// block's means unknown.
    known: Vec<(u32, Value)>,
    /// Whether a slot is in `dirty`.
    pending: Vec<bool>,
    /// Slots written and not yet flushed, in order of first write.
    dirty: Vec<u16>,
}

impl State {
    /// Tables for every state slot, nothing known or written.
    pub fn new() -> Self {
        State {
            known: vec![(u32::MAX, Value::NONE); STATE_SLOTS],
            pending: vec![false; STATE_SLOTS],
            dirty: Vec::with_capacity(32),
        }
    }

    /// The value of `r` in block `b` if the block read or wrote it.
    #[inline]
    pub fn known(&self, b: BlockId, r: Reg) -> Option<Value> {
        let (kb, v) = self.known[r.slot()];
        (kb == b.0).then_some(v)
    }

    /// Notes a read of `r` in block `b` (its `Get`, `v`).
    #[inline]
    pub fn read(&mut self, b: BlockId, r: Reg, v: Value) {
        self.known[r.slot()] = (b.0, v);
    }

    /// Notes a write of `v` to `r` in block `b`; its `Set` is placed by [`State::flush`].
    #[inline]
    pub fn write(&mut self, b: BlockId, r: Reg, v: Value) {
        let s = r.slot();
        self.known[s] = (b.0, v);
        if !self.pending[s] {
            self.pending[s] = true;
            self.dirty.push(s as u16);
        }
    }

    /// Whether `r` was written since the last flush.
    #[inline]
    pub fn written(&self, r: Reg) -> bool {
        self.pending[r.slot()]
    }

    /// Whether any write waits for its `Set`.
    #[inline]
    pub fn any_written(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Places the `Set` of every slot written since the last flush at the end of block `b`
    /// (the block the writes were made in).
    pub fn flush(&mut self, f: &mut Function, b: BlockId) {
        for &s in &self.dirty {
            let s = s as usize;
            self.pending[s] = false;
            let r = reg_of_slot(s);
            let v = self.known[s].1;
            f.push(b, Op::Set(r), Type::Void, &[v]);
        }
        self.dirty.clear();
    }
}

/// The register of state slot `s` (the inverse of [`Reg::slot`]).
fn reg_of_slot(s: usize) -> Reg {
    let file = crate::ir::RegFile::of_slot(s);
    Reg {
        file,
        index: (s - file.base()) as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Flag;

    #[test]
    fn slots_round_trip() {
        for r in [
            Reg::gpr(0),
            Reg::gpr(254),
            Reg::pred(6),
            Reg::ugpr(62),
            Reg::upred(3),
            Reg::flag(Flag::Overflow),
        ] {
            assert_eq!(reg_of_slot(r.slot()), r);
        }
    }

    #[test]
    fn one_set_per_slot_with_the_last_value_in_order_of_first_write() {
        let (mut f, [b]) = Function::with_blocks([0]);
        let x = f.push(b, Op::Const(1), Type::U32, &[]);
        let y = f.push(b, Op::Const(2), Type::U32, &[]);
        let mut st = State::new();
        st.write(b, Reg::gpr(3), x);
        st.write(b, Reg::gpr(1), x);
        st.write(b, Reg::gpr(3), y);
        assert_eq!(st.known(b, Reg::gpr(3)), Some(y));
        assert!(st.written(Reg::gpr(1)) && st.any_written());
        st.flush(&mut f, b);
        assert!(!st.any_written() && !st.written(Reg::gpr(3)));
        let sets: Vec<(Op, Value)> = f.blocks[0].insts[2..]
            .iter()
            .map(|&v| (f.inst(v).op, f.inst(v).args[0]))
            .collect();
        assert_eq!(
            sets,
            vec![(Op::Set(Reg::gpr(3)), y), (Op::Set(Reg::gpr(1)), x)]
        );
    }
}
