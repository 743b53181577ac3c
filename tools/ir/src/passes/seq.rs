//! A straight sequence of new instructions for the lowering passes (`tensor`, `warp_shared`):
//! each helper makes an instruction in the arena and appends it to [`Seq::out`], which the
//! pass then splices into a block.

use crate::ir::{Function, Op, Type, Value};

/// New instructions in order, made in `f`'s arena.
pub(crate) struct Seq<'f> {
    /// The function whose arena the instructions go into.
    pub f: &'f mut Function,
    /// The instructions made, in order.
    pub out: Vec<Value>,
}

impl<'f> Seq<'f> {
    /// A sequence appending to `out`.
    pub fn new(f: &'f mut Function, out: Vec<Value>) -> Self {
        Seq { f, out }
    }
    /// Makes and appends an instruction.
    pub fn op(&mut self, op: Op, ty: Type, args: &[Value]) -> Value {
        let v = self.f.make(op, ty, args);
        self.out.push(v);
        v
    }
    /// A U32 constant.
    pub fn c32(&mut self, k: u32) -> Value {
        self.op(Op::Const(k as u64), Type::U32, &[])
    }
    /// A Bool constant.
    pub fn cbool(&mut self, k: bool) -> Value {
        self.op(Op::Const(k as u64), Type::Bool, &[])
    }
    /// A binary operation of the type of `a`.
    pub fn bin(&mut self, op: Op, a: Value, b: Value) -> Value {
        let t = self.f.ty(a);
        self.op(op, t, &[a, b])
    }
    /// `a op k` for a U32 constant `k`.
    pub fn bin_c(&mut self, op: Op, a: Value, k: u32) -> Value {
        let c = self.c32(k);
        self.bin(op, a, c)
    }
    /// A comparison (Bool).
    pub fn cmp(&mut self, op: Op, a: Value, b: Value) -> Value {
        self.op(op, Type::Bool, &[a, b])
    }
    /// `c ? a : b`.
    pub fn sel(&mut self, c: Value, a: Value, b: Value) -> Value {
        let t = self.f.ty(a);
        self.op(Op::Select, t, &[c, a, b])
    }
    /// Zero-extended bits `[off, off + len)` of a U32.
    pub fn bits(&mut self, a: Value, off: u32, len: u32) -> Value {
        let o = self.c32(off);
        let l = self.c32(len);
        self.op(Op::BfeU, Type::U32, &[a, o, l])
    }
    /// Sign-extended bits `[off, off + len)` of a U32.
    pub fn sbits(&mut self, a: Value, off: u32, len: u32) -> Value {
        let o = self.c32(off);
        let l = self.c32(len);
        self.op(Op::BfeS, Type::U32, &[a, o, l])
    }
    /// `v` reinterpreted as `t` (nothing when it already is).
    pub fn cast(&mut self, t: Type, v: Value) -> Value {
        if self.f.ty(v) == t {
            return v;
        }
        self.op(Op::Bitcast, t, &[v])
    }
}
