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
//! * a constant is made again where used (constants are module-level ids);
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

/// Which values cross blocks, and their variables.
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
    /// Variables made.
    pub vars: usize,
}

impl Cross {
    /// Finds the values of `f` that cross blocks (nothing when `f` is not in SSA form).
    pub fn new(f: &Function) -> Cross {
        if !f.ssa || f.blocks.len() < 2 {
            return Cross::default();
        }
        let n = f.insts.len();
        // `mark[v]`: 1 + the block being scanned once `v` is available there (defined in it
        // earlier, or already listed for loading). Both tables start zeroed (no fill).
        let mut mark = vec![0u32; n];
        let mut var = vec![0 as Word; n];
        let mut start = Vec::with_capacity(f.blocks.len() + 1);
        // (Room for a few loads a block, so that the list seldom grows.)
        let mut uses = Vec::with_capacity(4 * f.blocks.len());
        let phis = !f.phi_in.is_empty();
        for (b, blk) in f.blocks.iter().enumerate() {
            start.push(uses.len() as u32);
            let bb = b as u32 + 1;
            let mut add = |mark: &mut [u32], a: Value| {
                if mark[a.index()] != bb {
                    mark[a.index()] = bb;
                    uses.push(a);
                    if !matches!(f.inst(a).op, Op::Const(_) | Op::Undef) {
                        var[a.index()] = NEEDED;
                    }
                }
            };
            // A use in the block comes after a definition in it, so one walk marks both.
            for &v in &blk.insts {
                for &a in &f.inst(v).args {
                    if a.is_none() {
                        break;
                    }
                    add(&mut mark, a);
                }
                mark[v.index()] = bb;
            }
            match &blk.term {
                dmsh_ir::Terminator::Branch(c, _, _)
                | dmsh_ir::Terminator::Dynamic(c)
                | dmsh_ir::Terminator::Switch(c, _, _) => add(&mut mark, *c),
                _ => {}
            }
            if phis {
                for_each_phi_operand(f, BlockId(b as u32), |_, a| add(&mut mark, a));
            }
        }
        start.push(uses.len() as u32);
        Cross {
            var,
            phi_var: vec![0; f.phi_in.len()],
            start,
            uses,
            vars: 0,
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
            let mut stores: Vec<(Value, Value)> = Vec::new();
            for_each_phi_operand(f, b, |p, a| stores.push((p, a)));
            for (p, a) in stores {
                let Op::Phi(k) = f.inst(p).op else { continue };
                let var = self.phi_var(k, f.ty(p));
                let id = self.vals[a.index()];
                self.store(var, id);
            }
        }
        Ok(())
    }
}
