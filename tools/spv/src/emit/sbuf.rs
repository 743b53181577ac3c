//! Storage buffers (`Space::Storage(slot)`, binding 32 + slot): a `StorageBuffer` block holding
//! a runtime array of 32-bit words, indexed by the access's byte offset / 4. Slots from
//! `SBUF_UBO_SLOT` on are buffers whose address is in a uniform buffer (`sbuf_ubo`, binding
//! 32 + (0x4000 | ubo << 10 | offset / 4)).
//!
//! * 8/16-bit loads read the containing word and extract the bits (`BitField[SU]Extract`).
//! * 8/16-bit stores clear and set their bits of the containing word with `AtomicAnd` and
//!   `AtomicOr` (device scope), so bytes of one word written by different invocations never
//!   overwrite each other (a plain read-modify-write would). Two invocations writing the *same*
//!   byte at once — a data race under the Vulkan memory model — may leave the OR of both values.
//!   This needs no 8/16-bit storage capabilities and maps onto Metal's `atomic_uint`.
//! * 64-bit accesses are two word accesses (Maxwell requires 8-byte alignment; the halves are
//!   not one atomic access, as on the guest).
//! * 32-bit atomics use the word; 64-bit atomics and compare-and-swap a second view of the same
//!   binding as a runtime array of `u64` (`Int64Atomics`), float add a view of `f32`
//!   (`AtomicFloat32AddEXT`, as for global memory). A slot with more than one view decorates
//!   every view `Aliased`.
//! * Bounds: an access past the buffer is whatever the device's robustness gives
//!   (`robustBufferAccess`: loads return 0 or buffer data, stores may be dropped); Maxwell code
//!   from uam has no bounds checks either.

use super::{E, SCOPE_DEVICE};
use crate::reflect::Resource;
use dmsh_ir::{AtomOp, Function, Op, SbufUbo, Space, Type, Width, SBUF_UBO_SLOT};
use rspirv::dr::Operand;
use rspirv::spirv::{self, Capability, Decoration, StorageClass, Word};
use std::collections::BTreeMap;

/// The word view of a slot (always used).
const WORDS: u8 = 1;
/// The `u64` view (64-bit atomics).
const WIDE: u8 = 2;
/// The `f32` view (float add).
const FLOAT: u8 = 4;

/// Storage-buffer emission state.
pub(crate) struct SbufState {
    /// Variables by (slot, view bit).
    vars: BTreeMap<(u8, u8), Word>,
    /// Views each slot uses (from [`E::sbuf_note`]).
    views: [u8; 256],
    /// A 64-bit atomic on a storage buffer was emitted.
    int64_atomics: bool,
    /// The function's `sbuf_ubo` table (slot `SBUF_UBO_SLOT + k` = entry k).
    ubo: Vec<SbufUbo>,
}

/// First binding (after the 32 added to every storage buffer) of the `sbuf_ubo` range.
const UBO_RANGE: u32 = 0x4000;

impl Default for SbufState {
    fn default() -> Self {
        SbufState {
            vars: BTreeMap::new(),
            views: [0; 256],
            int64_atomics: false,
            ubo: Vec::new(),
        }
    }
}

/// The view an access to a slot needs.
fn view_of(op: &Op) -> Option<(u8, u8)> {
    Some(match *op {
        Op::Atomic(Space::Storage(s), AtomOp::FAdd, _) => (s, FLOAT),
        Op::Atomic(Space::Storage(s), _, Width::B64)
        | Op::AtomicCas(Space::Storage(s), Width::B64) => (s, WIDE),
        Op::Load(Space::Storage(s), _)
        | Op::Store(Space::Storage(s), _)
        | Op::Atomic(Space::Storage(s), ..)
        | Op::AtomicCas(Space::Storage(s), _) => (s, WORDS),
        _ => return None,
    })
}

impl E {
    /// Takes the function's `sbuf_ubo` table.
    pub(crate) fn sbuf_ubo_table(&mut self, f: &Function) {
        self.sb.ubo = f.sbuf_ubo.clone();
    }

    /// Records the views of storage-buffer slots one live instruction's operation uses (the
    /// emitter's scan notes them all before emission, so a slot with several views can mark
    /// them `Aliased` from the start).
    #[inline]
    pub(crate) fn sbuf_note(&mut self, op: &Op) {
        if let Some((s, view)) = view_of(op) {
            self.sb.views[s as usize] |= view;
        }
    }

    /// The uniform-buffer address of slot `slot`, if it is an `sbuf_ubo`.
    fn sbuf_ubo_of(&self, slot: u8) -> Option<SbufUbo> {
        let k = slot.checked_sub(SBUF_UBO_SLOT)?;
        self.sb.ubo.get(k as usize).copied()
    }

    /// The binding (and Metal buffer index) of a slot: 32 + r for a c0 record,
    /// 32 + (0x4000 | ubo << 10 | offset / 4) for an `sbuf_ubo`.
    fn sbuf_binding(&self, slot: u8) -> u32 {
        match self.sbuf_ubo_of(slot) {
            Some(u) => 32 + (UBO_RANGE | ((u.ubo as u32) << 10) | (u.offset / 4)),
            None => 32 + slot as u32,
        }
    }

    /// The block `struct { elem w[]; }` (array stride `stride`) of storage-buffer variables
    /// (cached).
    pub(crate) fn runtime_block(&mut self, elem: Word, stride: u32) -> Word {
        if let Some(st) = self.tcache.get(&(0x5b, elem, 0)) {
            return st;
        }
        let rt = self.b.type_runtime_array(elem);
        self.b
            .decorate(rt, Decoration::ArrayStride, [Operand::LiteralBit32(stride)]);
        let st = self.b.type_struct([rt]);
        self.b.decorate(st, Decoration::Block, []);
        self.b
            .member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.tcache.insert((0x5b, elem, 0), st);
        st
    }

    /// The variable of one view of a slot.
    fn sbuf_var(&mut self, slot: u8, view: u8) -> Word {
        if let Some(&v) = self.sb.vars.get(&(slot, view)) {
            return v;
        }
        let (elem, stride) = match view {
            WIDE => (self.ty(Type::U64), 8),
            FLOAT => (self.ty(Type::F32), 4),
            _ => (self.ty(Type::U32), 4),
        };
        let st = self.runtime_block(elem, stride);
        let pty = self.ptr(StorageClass::StorageBuffer, st);
        let var = self.global_var(pty, StorageClass::StorageBuffer, None);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        let binding = self.sbuf_binding(slot);
        self.b
            .decorate(var, Decoration::Binding, [Operand::LiteralBit32(binding)]);
        if (self.sb.views[slot as usize] | view).count_ones() > 1 {
            self.b.decorate(var, Decoration::Aliased, []);
        }
        self.interface.push(var);
        self.sb.vars.insert((slot, view), var);
        var
    }

    /// A pointer to element `byte_off >> shift` (+ `add`) of a view.
    fn sbuf_ptr(&mut self, slot: u8, view: u8, byte_off: Word, add: u32) -> Word {
        let var = self.sbuf_var(slot, view);
        let u = self.ty(Type::U32);
        let elem = match view {
            WIDE => self.ty(Type::U64),
            FLOAT => self.ty(Type::F32),
            _ => u,
        };
        let sh = self.u32c(if view == WIDE { 3 } else { 2 });
        let mut i = self.op(spirv::Op::ShiftRightLogical, u, &[byte_off, sh]);
        if add != 0 {
            let k = self.u32c(add);
            i = self.op(spirv::Op::IAdd, u, &[i, k]);
        }
        let zero = self.u32c(0);
        let p = self.ptr(StorageClass::StorageBuffer, elem);
        self.b
            .access_chain(p, None, var, &[zero, i])
            .expect("block")
    }

    /// `(byte_off & 3) * 8`: the bit position of a narrow access in its word.
    pub(crate) fn byte_bit(&mut self, byte_off: Word) -> Word {
        let u = self.ty(Type::U32);
        let three = self.u32c(3);
        let b = self.op(spirv::Op::BitwiseAnd, u, &[byte_off, three]);
        self.op(spirv::Op::ShiftLeftLogical, u, &[b, three])
    }

    /// A load of width `w` at byte `off` of storage buffer `slot` (U32, or U64 for `B64`).
    pub(crate) fn sbuf_load(&mut self, slot: u8, w: Width, off: Word) -> Word {
        match w {
            Width::B32 => {
                let p = self.sbuf_ptr(slot, WORDS, off, 0);
                self.load(Type::U32, p)
            }
            Width::B64 => {
                let p0 = self.sbuf_ptr(slot, WORDS, off, 0);
                let lo = self.load(Type::U32, p0);
                let p1 = self.sbuf_ptr(slot, WORDS, off, 1);
                let hi = self.load(Type::U32, p1);
                self.pack64(lo, hi)
            }
            _ => {
                let p = self.sbuf_ptr(slot, WORDS, off, 0);
                let word = self.load(Type::U32, p);
                self.narrow_of(word, off, w)
            }
        }
    }

    /// The narrow value of width `w` at byte address `byte_off` inside `word` (the word that
    /// holds it), sign- or zero-extended to `u32`.
    pub(crate) fn narrow_of(&mut self, word: Word, byte_off: Word, w: Width) -> Word {
        let u = self.ty(Type::U32);
        let sh = self.byte_bit(byte_off);
        let n = self.u32c(w.bytes() * 8);
        let op = if matches!(w, Width::S8 | Width::S16) {
            spirv::Op::BitFieldSExtract
        } else {
            spirv::Op::BitFieldUExtract
        };
        self.op(op, u, &[word, sh, n])
    }

    /// A store of width `w` at byte `off` of storage buffer `slot`.
    pub(crate) fn sbuf_store(&mut self, slot: u8, w: Width, off: Word, v: Word) {
        let u = self.ty(Type::U32);
        match w {
            Width::B32 => {
                let p = self.sbuf_ptr(slot, WORDS, off, 0);
                self.store(p, v);
            }
            Width::B64 => {
                let (lo, hi) = self.split64(v);
                let p0 = self.sbuf_ptr(slot, WORDS, off, 0);
                self.store(p0, lo);
                let p1 = self.sbuf_ptr(slot, WORDS, off, 1);
                self.store(p1, hi);
            }
            _ => {
                let p = self.sbuf_ptr(slot, WORDS, off, 0);
                let sh = self.byte_bit(off);
                let fm = self.u32c(if w.bytes() == 1 { 0xff } else { 0xffff });
                let m = self.op(spirv::Op::ShiftLeftLogical, u, &[fm, sh]);
                let vm = self.op(spirv::Op::BitwiseAnd, u, &[v, fm]);
                let vs = self.op(spirv::Op::ShiftLeftLogical, u, &[vm, sh]);
                let nm = self.op(spirv::Op::Not, u, &[m]);
                let sc = self.u32c(SCOPE_DEVICE);
                let sem = self.u32c(0);
                self.op(spirv::Op::AtomicAnd, u, &[p, sc, sem, nm]);
                self.op(spirv::Op::AtomicOr, u, &[p, sc, sem, vs]);
            }
        }
    }

    /// An atomic read-modify-write at byte `off` of storage buffer `slot`; the old value.
    pub(crate) fn sbuf_atomic(
        &mut self,
        slot: u8,
        aop: AtomOp,
        w: Width,
        off: Word,
        v: Word,
    ) -> Word {
        let t = if w == Width::B64 {
            Type::U64
        } else {
            Type::U32
        };
        let ty = self.ty(t);
        let sc = self.u32c(SCOPE_DEVICE);
        let sem = self.u32c(0);
        if aop == AtomOp::FAdd {
            let f = self.ty(Type::F32);
            let p = self.sbuf_ptr(slot, FLOAT, off, 0);
            let fv = self.op(spirv::Op::Bitcast, f, &[v]);
            let r = self.op(spirv::Op::AtomicFAddEXT, f, &[p, sc, sem, fv]);
            return self.op(spirv::Op::Bitcast, ty, &[r]);
        }
        let p = self.sbuf_wide_or_word(slot, w, off);
        match super::rmw_op(aop) {
            Some(o) => self.op(o, ty, &[p, sc, sem, v]),
            None => self.atomic_loop(aop, t, p, sc, v, false),
        }
    }

    /// Compare-and-swap at byte `off` of storage buffer `slot`; the old value.
    pub(crate) fn sbuf_cas(&mut self, slot: u8, w: Width, off: Word, cmp: Word, val: Word) -> Word {
        let t = if w == Width::B64 {
            Type::U64
        } else {
            Type::U32
        };
        let ty = self.ty(t);
        let p = self.sbuf_wide_or_word(slot, w, off);
        let sc = self.u32c(SCOPE_DEVICE);
        let sem = self.u32c(0);
        self.op(
            spirv::Op::AtomicCompareExchange,
            ty,
            &[p, sc, sem, sem, val, cmp],
        )
    }

    /// The element pointer of an atomic: the `u64` view for 64-bit ones, else the word.
    fn sbuf_wide_or_word(&mut self, slot: u8, w: Width, off: Word) -> Word {
        if w == Width::B64 {
            self.sb.int64_atomics = true;
            self.sbuf_ptr(slot, WIDE, off, 0)
        } else {
            self.sbuf_ptr(slot, WORDS, off, 0)
        }
    }

    /// Capabilities storage buffers need beyond the module's base set.
    pub(crate) fn sbuf_caps(&mut self) {
        // Global memory's capability set already holds Int64Atomics.
        if self.sb.int64_atomics && !self.uses_psb {
            self.b.capability(Capability::Int64Atomics);
        }
    }

    /// The reflection's `sbuf` and `sbuf_ubo` resources: one per slot the code accesses.
    pub(crate) fn sbuf_resources(&self) -> Vec<Resource> {
        let mut slots: Vec<u8> = self.sb.vars.keys().map(|k| k.0).collect();
        slots.dedup();
        slots
            .into_iter()
            .map(|s| {
                let binding = self.sbuf_binding(s);
                let u = self.sbuf_ubo_of(s);
                Resource {
                    kind: (if u.is_some() { "sbuf_ubo" } else { "sbuf" }).into(),
                    bank: u.map_or(s as u32, |u| u.ubo as u32),
                    guest_offset: u.map_or(0, |u| u.offset),
                    size: Some(0),
                    set: 0,
                    binding: Some(binding),
                    metal_index: 0,
                    count: 0,
                    separate: false,
                    metal_sampler: None,
                    ubo: u.map(|u| u.ubo as u32),
                    offset: u.map(|u| u.offset),
                    ..Default::default()
                }
            })
            .collect()
    }
}
