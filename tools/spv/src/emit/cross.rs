//! Values that cross blocks (out of SSA at emission).
//!
//! After dmsh-ir's `ssa` pass a value may be used in a block other than its defining one,
//! and a block may start with phis. The structured tree, its goto variable, the merge and
//! continue blocks it adds and the dispatcher loops do not carry IR dominance over into SPIR-V
//! dominance, and an IR block's SPIR-V predecessors may be synthetic blocks, so values do not
//! cross SPIR-V blocks as ids. Instead, at run time the SPIR-V code runs the IR blocks in the
//! guest's order, so a value stored when defined is there when a later block loads it:
//!
//! * a value used in another block gets a `Function` variable: stored right after its
//!   definition, loaded once at the start of each other block that uses it (its arguments,
//!   terminator value, or a phi operand it passes on), which sets the value's id for that
//!   block's code (`E::vals`);
//! * a constant is a module-level id, made once before any block (a half constant, a
//!   bitcast in the code, is made again in each block that uses it);
//! * a phi gets an incoming variable: each predecessor stores the phi's operand for it just
//!   before leaving (for every phi of every successor — only the taken successor reads its
//!   own), and the phi is a load of it at the start of its block. Operands are ids of the
//!   predecessor's code and the phis are loaded into ids at the block's start, so a phi
//!   operand that is another phi of the same block (the swap problem) or a value the block
//!   redefines (the lost-copy problem) reads the value of the edge, not a later one. A phi
//!   used in other blocks has, like any value, its own variable besides the incoming one.
//!
//! Consumers promote the variables to registers again (spirv-opt, Mesa, Metal's compiler).

use super::E;
use crate::Error;
use dmsh_ir::{BlockId, Function, Op, Type, Value};
use rspirv::spirv::Word;

/// Marks a value that needs a variable not made yet (no SPIR-V id is `u32::MAX`).
const NEEDED: Word = u32::MAX;
/// [`Cross::mark`] of a module-level constant: available in every block.
const EVERYWHERE: u32 = u32::MAX;

/// Which values cross blocks, and their variables. Filled by the emitter's first scan of
/// the instructions ([`Cross::enter_block`], [`Cross::note_inst`], [`Cross::leave_block`]
/// per block in order, then [`Cross::finish`]), which also gives every module-level
/// constant its id ([`is_module_constant`]) before any block is emitted.
#[derive(Default)]
pub(crate) struct Cross {
    /// Per value: its variable once made, [`NEEDED`] before, 0 when it needs none (not used
    /// in another block, or a constant).
    var: Vec<Word>,
    /// Per phi (`Function::phi_in` index): its incoming variable once made.
    phi_var: Vec<Word>,
    /// Per block: `uses[start[b]..start[b + 1]]` are the values the block loads at its start.
    start: Vec<u32>,
    uses: Vec<Value>,
    /// While scanning, per value: 1 + the block being scanned once the value is available
    /// there (defined in it earlier, or already listed for loading), [`EVERYWHERE`] for a
    /// module-level constant; empty when the function needs no crossing (not in SSA form,
    /// or one block) and after [`Cross::finish`].
    mark: Vec<u32>,
    /// 1 + the block being scanned.
    bb: u32,
    /// Variables made.
    pub vars: usize,
}

/// Whether `inst` is an id of the module, not of a block (a constant or undefined value:
/// a half constant is a bitcast in the code, made again in each block that uses it).
#[inline]
pub(super) fn is_module_constant(inst: &dmsh_ir::Inst) -> bool {
    match inst.op {
        Op::Const(_) => inst.ty != Type::F16,
        Op::Undef => true,
        _ => false,
    }
}

impl Cross {
    /// Empty tables for the scan of `f` (none when `f` is not in SSA form or has one block:
    /// nothing crosses).
    pub fn new(f: &Function) -> Cross {
        if !f.ssa || f.blocks.len() < 2 {
            return Cross::default();
        }
        let n = f.insts.len();
        Cross {
            // Both tables start zeroed (no fill).
            var: vec![0; n],
            mark: vec![0; n],
            phi_var: vec![0; f.phi_in.len()],
            start: Vec::with_capacity(f.blocks.len() + 1),
            // (Room for a few loads a block, so that the list seldom grows.)
            uses: Vec::with_capacity(4 * f.blocks.len()),
            bb: 0,
            vars: 0,
        }
    }

    /// Whether the scan has anything to note (see [`Cross::mark`]).
    #[inline]
    pub fn scanning(&self) -> bool {
        !self.mark.is_empty()
    }

    /// Starts the scan of the next block.
    #[inline]
    pub fn enter_block(&mut self) {
        self.start.push(self.uses.len() as u32);
        self.bb += 1;
    }

    /// Notes a use of `a` in the block being scanned.
    #[inline]
    fn add(&mut self, f: &Function, a: Value) {
        // Values defined or listed in this block have its mark, earlier blocks' lower ones,
        // module-level constants the highest.
        if self.mark[a.index()] < self.bb {
            self.add_new(f, a);
        }
    }

    /// [`Cross::add`] of a value not yet available in the block being scanned.
    #[inline(never)]
    fn add_new(&mut self, f: &Function, a: Value) {
        let inst = f.inst(a);
        if is_module_constant(inst) {
            // (Used before its definition is scanned: a block of a later index defines it.)
            self.mark[a.index()] = EVERYWHERE;
            return;
        }
        self.mark[a.index()] = self.bb;
        self.uses.push(a);
        if !matches!(inst.op, Op::Const(_)) {
            self.var[a.index()] = NEEDED;
        }
    }

    /// Notes instruction `v` (`inst`) of the block being scanned: its uses, then its
    /// definition (a use in the block comes after a definition in it). The caller notes a
    /// module-level constant's definition again with [`Cross::note_module_constant`].
    #[inline]
    pub fn note_inst(&mut self, f: &Function, v: Value, inst: &dmsh_ir::Inst) {
        for &a in &inst.args {
            if a.is_none() {
                break;
            }
            self.add(f, a);
        }
        self.mark[v.index()] = self.bb;
    }

    /// Notes that `v`, a module-level constant ([`is_module_constant`]) just noted by
    /// [`Cross::note_inst`], is available in every block.
    #[inline]
    pub fn note_module_constant(&mut self, v: Value) {
        self.mark[v.index()] = EVERYWHERE;
    }

    /// Ends the scan of block `b`: the values its terminator and its successors' phis use.
    pub fn leave_block(&mut self, f: &Function, b: BlockId) {
        match &f.blocks[b.index()].term {
            dmsh_ir::Terminator::Branch(c, _, _)
            | dmsh_ir::Terminator::Dynamic(c)
            | dmsh_ir::Terminator::Switch(c, _, _) => self.add(f, *c),
            _ => {}
        }
        if !f.phi_in.is_empty() {
            for_each_phi_operand(f, b, |_, a| self.add(f, a));
        }
    }

    /// Ends the scan.
    pub fn finish(&mut self) {
        if self.scanning() {
            self.start.push(self.uses.len() as u32);
            self.mark = Vec::new();
        }
    }
}

/// Calls `g(phi, operand)` for every phi of every distinct successor of `b` with the operand
/// it takes when entered from `b`.
fn for_each_phi_operand(f: &Function, b: BlockId, mut g: impl FnMut(Value, Value)) {
    let mut i = 0;
    while let Some(s) = f.succ(b, i) {
        i += 1;
        if (0..i - 1).any(|j| f.succ(b, j) == Some(s)) {
            continue;
        }
        for &p in &f.blocks[s.index()].insts {
            if !matches!(f.inst(p).op, Op::Phi(_)) {
                break;
            }
            if let Some(&(_, a)) = f.phi_args(p).iter().find(|x| x.0 == b) {
                g(p, a);
            }
        }
    }
}

impl E {
    /// Makes the id of `v`, a module-level constant ([`is_module_constant`]) of type `t` and
    /// bits `bits`, during the first scan: every block can use it.
    #[inline]
    pub(super) fn module_constant(&mut self, v: Value, t: Type, bits: u64) {
        self.vals[v.index()] = self.c(t, bits);
        if self.cross.scanning() {
            self.cross.note_module_constant(v);
        }
    }

    /// A value's cross-block variable.
    fn cross_var(&mut self, f: &Function, v: Value) -> Result<Word, Error> {
        if self.cross.var[v.index()] == NEEDED {
            let t = f.ty(v);
            if t == Type::Void {
                return Err(Error::Unsupported(format!(
                    "value {v} ({:?}) without a type is used in another block",
                    f.inst(v).op
                )));
            }
            let ty = self.ty(t);
            self.cross.var[v.index()] = self.fn_var(ty, None);
            self.cross.vars += 1;
        }
        Ok(self.cross.var[v.index()])
    }

    /// The incoming variable of phi `k` of type `t`.
    pub(super) fn phi_var(&mut self, k: u32, t: Type) -> Word {
        let k = k as usize;
        if self.cross.phi_var[k] == 0 {
            let ty = self.ty(t);
            self.cross.phi_var[k] = self.fn_var(ty, None);
            self.cross.vars += 1;
        }
        self.cross.phi_var[k]
    }

    /// Emits IR block `b`'s instructions: loads of the values it uses from other blocks,
    /// its code (storing values other blocks use), and the operands its successors' phis
    /// take from it. Its terminator is left to the caller.
    pub(super) fn ir_block(
        &mut self,
        sh: &dmsh_ir::Shader,
        f: &Function,
        b: BlockId,
    ) -> Result<(), Error> {
        let cross = !self.cross.start.is_empty();
        if cross {
            let (s, t) = (
                self.cross.start[b.index()] as usize,
                self.cross.start[b.index() + 1] as usize,
            );
            for i in s..t {
                let a = self.cross.uses[i];
                if self.cross.var[a.index()] != 0 {
                    let var = self.cross_var(f, a)?;
                    let id = self.load(f.ty(a), var);
                    self.vals[a.index()] = id;
                } else {
                    self.inst(sh, f, a)?;
                }
            }
        }
        for &v in &f.blocks[b.index()].insts {
            self.inst(sh, f, v)?;
            if cross && self.cross.var[v.index()] != 0 {
                let var = self.cross_var(f, v)?;
                let id = self.vals[v.index()];
                self.store(var, id);
            }
        }
        if cross && !f.phi_in.is_empty() {
            for_each_phi_operand(f, b, |p, a| {
                if let Op::Phi(k) = f.inst(p).op {
                    let var = self.phi_var(k, f.ty(p));
                    let id = self.vals[a.index()];
                    self.store(var, id);
                }
            });
        }
        Ok(())
    }
}
