//! Named barriers (Ampere `BAR.SYNC n`, `BAR.ARV`, `BAR.RED` with ids 1–15 or thread counts)
//! in the barrier-synchronised dispatcher (`emit_sync_dispatcher`).
//!
//! Vulkan and Metal have one workgroup barrier, so the guest's 16 barriers are counted in
//! workgroup memory, as the hardware counts them:
//! - `arrivals[id]`: threads that arrived at barrier `id` in its current phase (a `BAR.ARV`
//!   in its case code, a waiting invocation once when it starts waiting);
//! - `expected[id]`: the thread count the last arrival gave (0: every thread of the workgroup
//!   that has not exited);
//! - `popc[id]`: the waiting `BAR.RED` invocations whose predicate is true.
//!
//! The counters change only between a dispatcher iteration's two workgroup barriers and are
//! read only after the second, so every invocation sees the same values: a `BAR.ARV` in case
//! code counts into the invocation's own arrays, added to the counters in that window; a
//! waiting invocation counts its arrival there once. After the second barrier a waiting
//! invocation passes when `arrivals[id]` has reached the expected count (and no invocation
//! waits at a warp operation of the warp emulation, which passes first). Invocation 0 takes a
//! completed phase's arrivals (and predicate count) off the counters in the next window, so
//! arrivals of the next phase that came meanwhile stay. When every invocation waits or has
//! exited and no barrier completes (the guest would hang), the waiting invocations pass, as
//! the plain dispatcher lets them.
//!
//! Not modelled: which invocations pass when more than the count wait at once (all of them
//! do; a correct program never has more waiters than its count), and a completed phase's
//! predicate count includes predicates of next-phase `BAR.RED` waiters that registered in
//! the same iteration.

use super::{berr, E, SCOPE_WORKGROUP};
use crate::Error;
use dmsh_ir::Type;
use rspirv::spirv::{self, Word};

/// Ids of barriers.
const IDS: u32 = 16;

/// The named-barrier state of one dispatcher.
#[derive(Clone, Copy)]
pub(crate) struct Named {
    /// Workgroup counters: arrivals `[0, 16)`, expected counts `[16, 32)`, predicate counts
    /// `[32, 48)`.
    ctr: Word,
    /// The invocation's barrier id and count (`SetBarId`).
    id: Word,
    cnt: Word,
    /// Whether the waiting invocation has counted its arrival.
    registered: Word,
    /// Invocation 0's subtractions for the next iteration (arrivals, predicate counts), per id:
    /// a `Function` array of 32 `u32`.
    pend: Word,
    /// This invocation's `BAR.ARV`s since the last window: arrivals `[0, 16)` and their counts
    /// `[16, 32)` per id (a `Function` array of 32 `u32`), and whether there are any.
    arv: Word,
    dirty: Word,
}

impl E {
    /// Makes the named-barrier state; invocation 0 zeroes the counters in the prologue (the
    /// caller's barrier follows).
    pub(crate) fn named_init(&mut self, zero_mask: Word) -> Named {
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let ctr = self.wg_counters(3 * IDS);
        let z = self.u32c(0);
        let f = self.c(Type::Bool, 0);
        let id = self.fn_var(u, Some(z));
        let cnt = self.fn_var(u, Some(z));
        let registered = self.fn_var(bo, Some(f));
        let n = self.u32c(2 * IDS);
        let at = self.arr(u, n);
        let pend = self.fn_var(at, None);
        let arv = self.fn_var(at, None);
        let dirty = self.fn_var(bo, Some(f));
        let sc = self.u32c(SCOPE_WORKGROUP);
        let sem = self.u32c(0);
        for k in 0..3 * IDS {
            let kc = self.u32c(k);
            let p = self.counter_ptr(ctr, kc);
            self.op(spirv::Op::AtomicAnd, u, &[p, sc, sem, zero_mask]);
        }
        let nm = Named {
            ctr,
            id,
            cnt,
            registered,
            pend,
            arv,
            dirty,
        };
        for k in 0..2 * IDS {
            let p = self.pend_ptr(nm, k);
            self.store(p, z);
            let kc = self.u32c(k);
            let p = self.fn_elem(nm.arv, kc);
            self.store(p, z);
        }
        nm
    }

    /// Element `k` (a value) of a `Function` `u32` array.
    fn fn_elem(&mut self, arr: Word, k: Word) -> Word {
        let u = self.ty(Type::U32);
        let pu = self.ptr(spirv::StorageClass::Function, u);
        self.b.access_chain(pu, None, arr, &[k]).expect("block")
    }

    fn pend_ptr(&mut self, nm: Named, k: u32) -> Word {
        let kc = self.u32c(k);
        self.fn_elem(nm.pend, kc)
    }

    /// The counter `base + id` (`id` a value).
    fn named_ptr(&mut self, nm: Named, base: u32, id: Word) -> Word {
        let u = self.ty(Type::U32);
        let b = self.u32c(base);
        let idx = self.op(spirv::Op::IAdd, u, &[b, id]);
        self.counter_ptr(nm.ctr, idx)
    }

    /// `SetBarId`: the id (0–15) and count of the barrier this invocation is about to wait at.
    pub(crate) fn named_set_id(&mut self, id: Word, cnt: Word) {
        let Some(nm) = self.named else { return };
        let u = self.ty(Type::U32);
        let m = self.u32c(IDS - 1);
        let id = self.op(spirv::Op::BitwiseAnd, u, &[id, m]);
        self.store(nm.id, id);
        self.store(nm.cnt, cnt);
    }

    /// `BarrierArrive`: one arrival at barrier `id` with its count, no wait (counted into the
    /// invocation's own arrays until the next window).
    pub(crate) fn named_arrive(&mut self, id: Word, cnt: Word) {
        let Some(nm) = self.named else { return };
        let u = self.ty(Type::U32);
        let m = self.u32c(IDS - 1);
        let id = self.op(spirv::Op::BitwiseAnd, u, &[id, m]);
        let one = self.u32c(1);
        let p = self.fn_elem(nm.arv, id);
        let n = self.load(Type::U32, p);
        let n = self.op(spirv::Op::IAdd, u, &[n, one]);
        self.store(p, n);
        let base = self.u32c(IDS);
        let k = self.op(spirv::Op::IAdd, u, &[base, id]);
        let p = self.fn_elem(nm.arv, k);
        self.store(p, cnt);
        let t = self.c(Type::Bool, 1);
        self.store(nm.dirty, t);
    }

    /// After an invocation ran a case: it is no longer registered at a barrier.
    pub(crate) fn named_ran(&mut self, nm: Named) {
        let f = self.c(Type::Bool, 0);
        self.store(nm.registered, f);
    }

    /// Between the iteration's two barriers (the window): invocation 0 (`first`) takes the
    /// phases that completed in the last iteration off the counters; an invocation waiting at
    /// a (guest) barrier (`at_bar`) counts its arrival once, with its count and (`BAR.RED`,
    /// `popc`) predicate; the invocation's `BAR.ARV`s are added.
    pub(crate) fn named_window(
        &mut self,
        nm: Named,
        first: Word,
        at_bar: Word,
        popc: Word,
    ) -> Result<(), Error> {
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let sc = self.u32c(SCOPE_WORKGROUP);
        let sem = self.u32c(0);
        let z = self.u32c(0);
        let one = self.u32c(1);
        // Invocation 0: the completed phases.
        self.named_if(first, |e| {
            for k in 0..IDS {
                for (slot, base) in [(k, 0), (IDS + k, 2 * IDS)] {
                    let pp = e.pend_ptr(nm, slot);
                    let v = e.load(Type::U32, pp);
                    let kc = e.u32c(base + k);
                    let p = e.counter_ptr(nm.ctr, kc);
                    e.op(spirv::Op::AtomicISub, u, &[p, sc, sem, v]);
                    e.store(pp, z);
                }
            }
        })?;
        // A new wait.
        let reg = self.load(Type::Bool, nm.registered);
        let nreg = self.op(spirv::Op::LogicalNot, bo, &[reg]);
        let need = self.op(spirv::Op::LogicalAnd, bo, &[at_bar, nreg]);
        self.named_if(need, |e| {
            let id = e.load(Type::U32, nm.id);
            let cnt = e.load(Type::U32, nm.cnt);
            let p = e.named_ptr(nm, 0, id);
            e.op(spirv::Op::AtomicIAdd, u, &[p, sc, sem, one]);
            let p = e.named_ptr(nm, IDS, id);
            e.op(spirv::Op::AtomicExchange, u, &[p, sc, sem, cnt]);
            let add = e.select(Type::U32, popc, one, z);
            let p = e.named_ptr(nm, 2 * IDS, id);
            e.op(spirv::Op::AtomicIAdd, u, &[p, sc, sem, add]);
        })?;
        let r = self.op(spirv::Op::LogicalOr, bo, &[reg, at_bar]);
        self.store(nm.registered, r);
        // The arrivals of the case code.
        let dirty = self.load(Type::Bool, nm.dirty);
        self.named_if(dirty, |e| {
            for k in 0..IDS {
                let kc = e.u32c(k);
                let pa = e.fn_elem(nm.arv, kc);
                let n = e.load(Type::U32, pa);
                let some = e.op(spirv::Op::INotEqual, bo, &[n, z]);
                // Only where this invocation arrived: another one may set the count.
                let res = e.named_if(some, |e| {
                    let kc = e.u32c(k);
                    let p = e.counter_ptr(nm.ctr, kc);
                    e.op(spirv::Op::AtomicIAdd, u, &[p, sc, sem, n]);
                    let kc = e.u32c(IDS + k);
                    let pc = e.fn_elem(nm.arv, kc);
                    let c = e.load(Type::U32, pc);
                    let p = e.counter_ptr(nm.ctr, kc);
                    e.op(spirv::Op::AtomicExchange, u, &[p, sc, sem, c]);
                });
                if res.is_err() {
                    return;
                }
                e.store(pa, z);
            }
            let f = e.c(Type::Bool, 0);
            e.store(nm.dirty, f);
        })?;
        Ok(())
    }

    /// `if (c) { body }` as a structured selection.
    fn named_if(&mut self, c: Word, body: impl FnOnce(&mut E)) -> Result<(), Error> {
        let then = self.b.id();
        let merge = self.b.id();
        berr(self.b.selection_merge(merge, spirv::SelectionControl::NONE))?;
        berr(self.b.branch_conditional(c, then, merge, []))?;
        berr(self.b.begin_block(Some(then)))?;
        body(self);
        berr(self.b.branch(merge))?;
        berr(self.b.begin_block(Some(merge)))?;
        Ok(())
    }

    /// After the iteration's second barrier: whether this invocation, waiting at a guest
    /// barrier (`at_bar`), passes, and the predicate count it reads (`BAR.RED`). `all`: every
    /// invocation waits or has exited; `no_warp`: none waits at a warp operation; `first`:
    /// invocation 0, which records the completed phases for [`E::named_window`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn named_release(
        &mut self,
        nm: Named,
        at_bar: Word,
        all: Word,
        no_warp: Word,
        n_exited: Word,
        first: Word,
    ) -> (Word, Word) {
        let u = self.ty(Type::U32);
        let bo = self.ty(Type::Bool);
        let sc = self.u32c(SCOPE_WORKGROUP);
        let sem = self.u32c(0);
        let z = self.u32c(0);
        let tot = self.ls_total();
        let live = self.op(spirv::Op::ISub, u, &[tot, n_exited]);
        // Phase `id` is complete: arrivals reached the expected count.
        let complete = |e: &mut E, n: Word, c: Word| -> (Word, Word) {
            let given = e.op(spirv::Op::INotEqual, bo, &[c, z]);
            let exp = e.select(Type::U32, given, c, live);
            let reached = e.op(spirv::Op::UGreaterThanEqual, bo, &[n, exp]);
            let some = e.op(spirv::Op::INotEqual, bo, &[n, z]);
            let r = e.op(spirv::Op::LogicalAnd, bo, &[reached, some]);
            (e.op(spirv::Op::LogicalAnd, bo, &[r, no_warp]), exp)
        };
        let mut any = self.c(Type::Bool, 0);
        for k in 0..IDS {
            let kc = self.u32c(k);
            let p = self.counter_ptr(nm.ctr, kc);
            let n = self.op(spirv::Op::AtomicLoad, u, &[p, sc, sem]);
            let kc = self.u32c(IDS + k);
            let p = self.counter_ptr(nm.ctr, kc);
            let c = self.op(spirv::Op::AtomicLoad, u, &[p, sc, sem]);
            let kc = self.u32c(2 * IDS + k);
            let p = self.counter_ptr(nm.ctr, kc);
            let pc = self.op(spirv::Op::AtomicLoad, u, &[p, sc, sem]);
            let (done, exp) = complete(self, n, c);
            any = self.op(spirv::Op::LogicalOr, bo, &[any, done]);
            let take = self.op(spirv::Op::LogicalAnd, bo, &[first, done]);
            let a = self.select(Type::U32, take, exp, z);
            let pp = self.pend_ptr(nm, k);
            self.store(pp, a);
            let b = self.select(Type::U32, take, pc, z);
            let pp = self.pend_ptr(nm, IDS + k);
            self.store(pp, b);
        }
        let id = self.load(Type::U32, nm.id);
        let p = self.named_ptr(nm, 0, id);
        let n = self.op(spirv::Op::AtomicLoad, u, &[p, sc, sem]);
        let p = self.named_ptr(nm, IDS, id);
        let c = self.op(spirv::Op::AtomicLoad, u, &[p, sc, sem]);
        let p = self.named_ptr(nm, 2 * IDS, id);
        let popc = self.op(spirv::Op::AtomicLoad, u, &[p, sc, sem]);
        let (mine, _) = complete(self, n, c);
        // Nobody can move and no barrier completes: the guest would hang; pass.
        let none = self.op(spirv::Op::LogicalNot, bo, &[any]);
        let stuck = self.op(spirv::Op::LogicalAnd, bo, &[all, no_warp]);
        let stuck = self.op(spirv::Op::LogicalAnd, bo, &[stuck, none]);
        let go = self.op(spirv::Op::LogicalOr, bo, &[mine, stuck]);
        (self.op(spirv::Op::LogicalAnd, bo, &[at_bar, go]), popc)
    }
}
