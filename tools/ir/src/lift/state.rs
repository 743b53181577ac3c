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
//!
//! A known value may be an `F32` (a float written or read as one: `Cx::set_reg`,
//! `Cx::reg_f32`); `Cx::finish` gives the written ones their bits before the flush, so every
//! `Set` takes its register's type.
//!
//! The tables have an entry per state slot; filling them was a noticeable part of lifting a
//! small shader, so a thread keeps its tables from one lifting to the next ([`State::take`],
//! [`State::give_back`]): entries are keyed by block plus a base that moves past every block
//! of the previous lifting, so nothing is refilled.

use crate::ir::{BlockId, Function, Op, Reg, Type, Value, STATE_SLOTS};
use std::cell::Cell;

thread_local! {
    /// The tables of this thread's last lifting, for the next ([`State::take`]).
    static SPARE: Cell<Option<State>> = const { Cell::new(None) };
}

/// Words of [`State::got`] (a bit per state slot).
const GOT_WORDS: usize = STATE_SLOTS.div_ceil(64);

/// Per state slot ([`Reg::slot`]): the block and its known value there; the slots written
/// since the block's last flush; the slots some block of the lifting reads at its entry. `State::default()` is an empty placeholder (no allocation,
/// for `std::mem::take`); [`State::for_all_slots`] and [`State::take`] give usable ones.
#[derive(Default)]
pub(crate) struct State {
    /// (`base` + block, value) of each slot's last read or write; a key that is not the
    /// current block's means unknown.
    known: Vec<(u32, Value)>,
    /// Added to block ids in `known`: past every key of the liftings these tables served.
    base: u32,
    /// Whether a slot is in `dirty`.
    pending: Vec<bool>,
    /// Slots written and not yet flushed, in order of first write.
    dirty: Vec<u16>,
    /// A bit per slot with a `Get` in this lifting ([`State::entry_read`]).
    got: [u64; GOT_WORDS],
}

impl State {
    /// Tables for every state slot, nothing known or written.
    pub fn for_all_slots() -> Self {
        State {
            known: vec![(u32::MAX, Value::NONE); STATE_SLOTS],
            base: 0,
            pending: vec![false; STATE_SLOTS],
            dirty: Vec::with_capacity(32),
            got: [0; GOT_WORDS],
        }
    }

    /// Tables for a lifting: the ones this thread's last lifting gave back, else new ones.
    pub fn take() -> Self {
        SPARE.take().unwrap_or_else(State::for_all_slots)
    }

    /// Gives the tables of a lifting whose function has `blocks` blocks back to this thread
    /// for its next lifting: its keys move past this lifting's (refilled only when they would
    /// run out), and unflushed writes (a lifting that stopped early) are forgotten.
    pub fn give_back(mut self, blocks: usize) {
        if self.known.is_empty() {
            return;
        }
        for &s in &self.dirty {
            self.pending[s as usize] = false;
        }
        self.dirty.clear();
        self.got = [0; GOT_WORDS];
        match u32::try_from(blocks)
            .ok()
            .and_then(|n| self.base.checked_add(n))
            .filter(|&b| b < u32::MAX / 2)
        {
            Some(b) => self.base = b,
            None => {
                self.known.fill((u32::MAX, Value::NONE));
                self.base = 0;
            }
        }
        SPARE.set(Some(self));
    }

    /// The key of block `b` in `known`.
    #[inline]
    fn key(&self, b: BlockId) -> u32 {
        self.base + b.0
    }

    /// The value of `r` in block `b` if the block read or wrote it.
    #[inline]
    pub fn known(&self, b: BlockId, r: Reg) -> Option<Value> {
        let (kb, v) = self.known[r.slot()];
        (kb == self.key(b)).then_some(v)
    }

    /// Notes a read of `r` in block `b` (its `Get`, `v`).
    #[inline]
    pub fn read(&mut self, b: BlockId, r: Reg, v: Value) {
        self.known[r.slot()] = (self.key(b), v);
    }

    /// Notes the `Get` of `r` in block `b` (its value `v`): a read, and a slot some block
    /// reads at its entry ([`State::got`]).
    #[inline]
    pub fn entry_read(&mut self, b: BlockId, r: Reg, v: Value) {
        self.read(b, r, v);
        let s = r.slot();
        self.got[s / 64] |= 1 << (s % 64);
    }

    /// Whether a block of this lifting reads `r` at its entry (made a `Get` of it): where
    /// none does, no `Set` of it is ever read.
    #[inline]
    pub fn got(&self, r: Reg) -> bool {
        let s = r.slot();
        self.got[s / 64] >> (s % 64) & 1 != 0
    }

    /// Notes a write of `v` to `r` in block `b`; its `Set` is placed by [`State::flush`].
    #[inline]
    pub fn write(&mut self, b: BlockId, r: Reg, v: Value) {
        let s = r.slot();
        self.known[s] = (self.key(b), v);
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

    /// How many slots were written since the last flush.
    #[inline]
    pub fn written_count(&self) -> usize {
        self.dirty.len()
    }

    /// The value of the `k`th slot written since the last flush (in order of first write).
    #[inline]
    pub fn written_value(&self, k: usize) -> Value {
        self.known[self.dirty[k] as usize].1
    }

    /// Replaces the value of the `k`th slot written since the last flush by `v` (the same
    /// value in another type).
    #[inline]
    pub fn rewrite(&mut self, k: usize, v: Value) {
        self.known[self.dirty[k] as usize].1 = v;
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
            debug_assert_eq!(f.ty(v), r.ty(), "the Set of {r:?} takes its type");
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
    fn tables_given_back_know_nothing_of_the_last_lifting() {
        let b = BlockId(0);
        let mut st = State::take();
        st.write(b, Reg::gpr(3), Value(7));
        st.read(BlockId(1), Reg::gpr(4), Value(8));
        st.give_back(2);
        let st = State::take();
        assert_eq!(st.known(b, Reg::gpr(3)), None);
        assert_eq!(st.known(BlockId(1), Reg::gpr(4)), None);
        assert!(!st.any_written() && !st.written(Reg::gpr(3)));
    }

    #[test]
    fn one_set_per_slot_with_the_last_value_in_order_of_first_write() {
        let (mut f, [b]) = Function::with_blocks([0]);
        let x = f.push(b, Op::Const(1), Type::U32, &[]);
        let y = f.push(b, Op::Const(2), Type::U32, &[]);
        let mut st = State::for_all_slots();
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
