//! Writing new functions into a module being lowered: a [`Cx`] (the module, its common types
//! and the lowered buffers it declares) and a [`Code`] builder of one function's blocks.

use crate::module::{inst, value, Spirv};
use crate::Error;
use dmsh_reflect::lowered::RECORD_WORDS;
use dmsh_reflect::LoweredBuffer;
use rspirv::dr::{Block, Function, Instruction, Operand};
use spirv::{BuiltIn, Decoration, FunctionControl, Op, StorageClass, Word};

/// The module being lowered and what the new code shares.
pub(crate) struct Cx {
    /// The module.
    pub sp: Spirv,
    /// `uint`, `int`, `float`, `bool`, `void`.
    pub u: Word,
    pub i: Word,
    pub f: Word,
    pub b: Word,
    pub void: Word,
    /// The buffers of the lowering contract this module declares, by role (0: none).
    bufs: [Word; 9],
    /// Built-in input variables this module declares, by built-in.
    builtins: Vec<(BuiltIn, Word)>,
}

impl Cx {
    /// A context over `sp`.
    pub fn new(mut sp: Spirv) -> Cx {
        let u = sp.type_int(32, false);
        let i = sp.type_int(32, true);
        let f = sp.type_float(32);
        let b = sp.type_bool();
        let void = sp.global_type(Op::TypeVoid, vec![]);
        Cx {
            sp,
            u,
            i,
            f,
            b,
            void,
            bufs: [0; 9],
            builtins: Vec::new(),
        }
    }

    /// The SPIR-V version of the module (major, minor).
    pub fn version(&self) -> (u8, u8) {
        self.sp.m.header.as_ref().map_or((1, 0), |h| h.version())
    }

    /// A `uint` constant.
    pub fn u32c(&mut self, v: u32) -> Word {
        self.sp.constant32(self.u, v)
    }

    /// `OpTypePointer class ty`.
    pub fn ptr(&mut self, class: StorageClass, ty: Word) -> Word {
        self.sp.type_pointer(class, ty)
    }

    /// The storage buffer of lowered-buffer role `r` (`buffer { uint w[]; }` at set 0, binding
    /// 240 + role), declared once.
    pub fn buffer(&mut self, r: LoweredBuffer) -> Word {
        let k = r as usize;
        if self.bufs[k] != 0 {
            return self.bufs[k];
        }
        if self.version() < (1, 3)
            && !self.sp.m.extensions.iter().any(|e| {
                e.operands.first()
                    == Some(&Operand::LiteralString(
                        "SPV_KHR_storage_buffer_storage_class".into(),
                    ))
            })
        {
            self.sp.m.extensions.push(inst(
                Op::Extension,
                vec![Operand::LiteralString(
                    "SPV_KHR_storage_buffer_storage_class".into(),
                )],
            ));
        }
        // A runtime array and block of our own (not shared with the module's types, whose
        // decorations we do not own).
        let arr = self.sp.new_id();
        self.sp.m.types_global_values.push(Instruction::new(
            Op::TypeRuntimeArray,
            None,
            Some(arr),
            vec![Operand::IdRef(self.u)],
        ));
        self.sp.decorate(arr, Decoration::ArrayStride, 4);
        let st = self.sp.new_id();
        self.sp.m.types_global_values.push(Instruction::new(
            Op::TypeStruct,
            None,
            Some(st),
            vec![Operand::IdRef(arr)],
        ));
        self.sp.m.annotations.push(inst(
            Op::MemberDecorate,
            vec![
                Operand::IdRef(st),
                Operand::LiteralBit32(0),
                Operand::Decoration(Decoration::Offset),
                Operand::LiteralBit32(0),
            ],
        ));
        self.sp.m.annotations.push(inst(
            Op::Decorate,
            vec![Operand::IdRef(st), Operand::Decoration(Decoration::Block)],
        ));
        let pty = self.ptr(StorageClass::StorageBuffer, st);
        let var = self.sp.new_id();
        self.sp.m.types_global_values.push(Instruction::new(
            Op::Variable,
            Some(pty),
            Some(var),
            vec![Operand::StorageClass(StorageClass::StorageBuffer)],
        ));
        self.sp.decorate(var, Decoration::DescriptorSet, 0);
        self.sp.decorate(var, Decoration::Binding, r.binding());
        if matches!(r, LoweredBuffer::Params | LoweredBuffer::IndexSource) {
            self.sp.m.annotations.push(inst(
                Op::Decorate,
                vec![
                    Operand::IdRef(var),
                    Operand::Decoration(Decoration::NonWritable),
                ],
            ));
        }
        self.sp.m.debug_names.push(inst(
            Op::Name,
            vec![Operand::IdRef(var), Operand::LiteralString(r.name().into())],
        ));
        self.bufs[k] = var;
        var
    }

    /// The roles of the lowered buffers this module declares.
    pub fn roles(&self) -> Vec<LoweredBuffer> {
        LoweredBuffer::ALL
            .into_iter()
            .filter(|r| self.bufs[*r as usize] != 0)
            .collect()
    }

    /// The module's input variable of built-in `b` (of type `ty`; a `uint` vector of 3 for
    /// the compute built-ins), declared when absent.
    pub fn builtin_input(&mut self, b: BuiltIn, ty: Word) -> Word {
        if let Some(&(_, v)) = self.builtins.iter().find(|x| x.0 == b) {
            return v;
        }
        let existing = self
            .sp
            .variables(StorageClass::Input)
            .into_iter()
            .find(|(v, _)| self.sp.builtin_of(*v) == Some(b));
        let var = match existing {
            Some((v, _)) => v,
            None => {
                let pty = self.ptr(StorageClass::Input, ty);
                let v = self.sp.new_id();
                self.sp.m.types_global_values.push(Instruction::new(
                    Op::Variable,
                    Some(pty),
                    Some(v),
                    vec![Operand::StorageClass(StorageClass::Input)],
                ));
                self.sp.m.annotations.push(inst(
                    Op::Decorate,
                    vec![
                        Operand::IdRef(v),
                        Operand::Decoration(Decoration::BuiltIn),
                        Operand::BuiltIn(b),
                    ],
                ));
                v
            }
        };
        self.builtins.push((b, var));
        var
    }

    /// A module-scope variable of `class` holding `ty` (named `name`).
    pub fn global_var(&mut self, class: StorageClass, ty: Word, name: &str) -> Word {
        let pty = self.ptr(class, ty);
        let v = self.sp.new_id();
        self.sp.m.types_global_values.push(Instruction::new(
            Op::Variable,
            Some(pty),
            Some(v),
            vec![Operand::StorageClass(class)],
        ));
        self.sp.m.debug_names.push(inst(
            Op::Name,
            vec![Operand::IdRef(v), Operand::LiteralString(name.into())],
        ));
        v
    }

    /// The `GLSL.std.450` import, added when absent.
    pub fn glsl(&mut self) -> Word {
        let found =
            self.sp.m.ext_inst_imports.iter().find(|i| {
                i.operands.first() == Some(&Operand::LiteralString("GLSL.std.450".into()))
            });
        if let Some(id) = found.and_then(|i| i.result_id) {
            return id;
        }
        let id = self.sp.new_id();
        self.sp.m.ext_inst_imports.push(Instruction::new(
            Op::ExtInstImport,
            None,
            Some(id),
            vec![Operand::LiteralString("GLSL.std.450".into())],
        ));
        id
    }

    /// `OpTypeFunction void`.
    pub fn void_fn(&mut self) -> Word {
        self.sp
            .global_type(Op::TypeFunction, vec![Operand::IdRef(self.void)])
    }
}

/// One function being written: its finished blocks and the block being filled.
pub(crate) struct Code<'a> {
    /// The module.
    pub cx: &'a mut Cx,
    blocks: Vec<Block>,
    label: Word,
    cur: Vec<Instruction>,
    vars: Vec<Instruction>,
}

impl<'a> Code<'a> {
    /// A new function's first block.
    pub fn new(cx: &'a mut Cx) -> Code<'a> {
        let label = cx.sp.new_id();
        Code {
            cx,
            blocks: Vec::new(),
            label,
            cur: Vec::new(),
            vars: Vec::new(),
        }
    }

    /// Appends `i` to the current block.
    pub fn push(&mut self, i: Instruction) {
        self.cur.push(i);
    }

    /// `%r = op ty args…` (id operands).
    pub fn op(&mut self, op: Op, ty: Word, args: &[Word]) -> Word {
        let id = self.cx.sp.new_id();
        let ops = args.iter().map(|&a| Operand::IdRef(a)).collect();
        self.cur.push(value(op, ty, id, ops));
        id
    }

    /// `uint` arithmetic and comparisons.
    pub fn uop(&mut self, op: Op, a: Word, b: Word) -> Word {
        let ty = match op {
            Op::IEqual
            | Op::INotEqual
            | Op::ULessThan
            | Op::UGreaterThanEqual
            | Op::UGreaterThan
            | Op::ULessThanEqual
            | Op::LogicalAnd
            | Op::LogicalOr => self.cx.b,
            _ => self.cx.u,
        };
        self.op(op, ty, &[a, b])
    }

    /// `a + k` for a constant `k`.
    pub fn add_c(&mut self, a: Word, k: u32) -> Word {
        let c = self.cx.u32c(k);
        self.uop(Op::IAdd, a, c)
    }

    /// `a * k` for a constant `k`.
    pub fn mul_c(&mut self, a: Word, k: u32) -> Word {
        let c = self.cx.u32c(k);
        self.uop(Op::IMul, a, c)
    }

    /// `c ? a : b` of `uint`s.
    pub fn select(&mut self, c: Word, a: Word, b: Word) -> Word {
        let u = self.cx.u;
        self.op(Op::Select, u, &[c, a, b])
    }

    /// `OpLoad ty ptr`.
    pub fn load(&mut self, ty: Word, ptr: Word) -> Word {
        self.op(Op::Load, ty, &[ptr])
    }

    /// `OpStore ptr v`.
    pub fn store(&mut self, ptr: Word, v: Word) {
        self.cur.push(inst(
            Op::Store,
            vec![Operand::IdRef(ptr), Operand::IdRef(v)],
        ));
    }

    /// `OpAccessChain` to a `class` pointer to `ty`.
    pub fn chain(&mut self, class: StorageClass, ty: Word, base: Word, idx: &[Word]) -> Word {
        let pty = self.cx.ptr(class, ty);
        let mut a = vec![base];
        a.extend_from_slice(idx);
        self.op(Op::AccessChain, pty, &a)
    }

    /// A pointer to word `i` of lowered buffer `r`.
    pub fn word_ptr(&mut self, r: LoweredBuffer, i: Word) -> Word {
        let var = self.cx.buffer(r);
        let z = self.cx.u32c(0);
        let u = self.cx.u;
        self.chain(StorageClass::StorageBuffer, u, var, &[z, i])
    }

    /// A pointer to word `w` of record `rec` of lowered buffer `r`.
    pub fn record_ptr(&mut self, r: LoweredBuffer, rec: Word, w: u32) -> Word {
        let base = self.mul_c(rec, RECORD_WORDS);
        let i = self.add_c(base, w);
        self.word_ptr(r, i)
    }

    /// `params[k]`.
    pub fn param(&mut self, k: u32) -> Word {
        let kc = self.cx.u32c(k);
        let p = self.word_ptr(LoweredBuffer::Params, kc);
        let u = self.cx.u;
        self.load(u, p)
    }

    /// Component `c` (`uint`) of compute built-in `b` (a `uvec3`).
    pub fn builtin_uvec3(&mut self, b: BuiltIn, c: u32) -> Word {
        let u = self.cx.u;
        let v3 = self.cx.sp.type_vector(u, 3);
        let var = self.cx.builtin_input(b, v3);
        let x = self.load(v3, var);
        let id = self.cx.sp.new_id();
        self.cur.push(value(
            Op::CompositeExtract,
            u,
            id,
            vec![Operand::IdRef(x), Operand::LiteralBit32(c)],
        ));
        id
    }

    /// Scalar integer built-in `b` (declared `int` when the module has none) as a `uint`.
    pub fn builtin_uint(&mut self, b: BuiltIn) -> Word {
        let i = self.cx.i;
        let var = self.cx.builtin_input(b, i);
        let ty = (self.cx.sp.global_def(var))
            .and_then(|d| d.result_type)
            .and_then(|p| self.cx.sp.pointee(p))
            .unwrap_or(i);
        let x = self.load(ty, var);
        let u = self.cx.u;
        if ty == u {
            x
        } else {
            self.op(Op::Bitcast, u, &[x])
        }
    }

    /// A function-scope variable of `ty`.
    pub fn local(&mut self, ty: Word) -> Word {
        let pty = self.cx.ptr(StorageClass::Function, ty);
        let id = self.cx.sp.new_id();
        self.vars.push(value(
            Op::Variable,
            pty,
            id,
            vec![Operand::StorageClass(StorageClass::Function)],
        ));
        id
    }

    /// Ends the current block with `term` and starts block `label`.
    fn end_block(&mut self, term: Instruction, label: Word) {
        self.cur.push(term);
        let ins = std::mem::take(&mut self.cur);
        self.blocks.push(Block {
            label: Some(Instruction::new(Op::Label, None, Some(self.label), vec![])),
            instructions: ins,
        });
        self.label = label;
    }

    /// `if (cond) { body }`.
    pub fn if_then(
        &mut self,
        cond: Word,
        body: impl FnOnce(&mut Code<'a>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (then, merge) = (self.cx.sp.new_id(), self.cx.sp.new_id());
        self.cur.push(inst(
            Op::SelectionMerge,
            vec![
                Operand::IdRef(merge),
                Operand::SelectionControl(spirv::SelectionControl::NONE),
            ],
        ));
        let br = inst(
            Op::BranchConditional,
            vec![
                Operand::IdRef(cond),
                Operand::IdRef(then),
                Operand::IdRef(merge),
            ],
        );
        self.end_block(br, then);
        body(self)?;
        self.end_block(inst(Op::Branch, vec![Operand::IdRef(merge)]), merge);
        Ok(())
    }

    /// `if (cond) return;` (the rest of the function is the else).
    pub fn return_if(&mut self, cond: Word) {
        let (ret, go) = (self.cx.sp.new_id(), self.cx.sp.new_id());
        self.cur.push(inst(
            Op::SelectionMerge,
            vec![
                Operand::IdRef(go),
                Operand::SelectionControl(spirv::SelectionControl::NONE),
            ],
        ));
        let br = inst(
            Op::BranchConditional,
            vec![
                Operand::IdRef(cond),
                Operand::IdRef(ret),
                Operand::IdRef(go),
            ],
        );
        self.end_block(br, ret);
        self.end_block(inst(Op::Return, vec![]), go);
    }

    /// `for (j = 0; j < n; j++) { body(j) }` (`n` a `uint` value).
    pub fn count_loop(
        &mut self,
        n: Word,
        body: impl FnOnce(&mut Code<'a>, Word) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let u = self.cx.u;
        let jv = self.local(u);
        let zero = self.cx.u32c(0);
        self.store(jv, zero);
        let [head, check, bodyb, cont, merge] = [(); 5].map(|_| self.cx.sp.new_id());
        self.end_block(inst(Op::Branch, vec![Operand::IdRef(head)]), head);
        self.cur.push(inst(
            Op::LoopMerge,
            vec![
                Operand::IdRef(merge),
                Operand::IdRef(cont),
                Operand::LoopControl(spirv::LoopControl::NONE),
            ],
        ));
        self.end_block(inst(Op::Branch, vec![Operand::IdRef(check)]), check);
        let j = self.load(u, jv);
        let more = self.uop(Op::ULessThan, j, n);
        let br = inst(
            Op::BranchConditional,
            vec![
                Operand::IdRef(more),
                Operand::IdRef(bodyb),
                Operand::IdRef(merge),
            ],
        );
        self.end_block(br, bodyb);
        body(self, j)?;
        self.end_block(inst(Op::Branch, vec![Operand::IdRef(cont)]), cont);
        let j1 = self.add_c(j, 1);
        self.store(jv, j1);
        self.end_block(inst(Op::Branch, vec![Operand::IdRef(head)]), merge);
        Ok(())
    }

    /// `OpFunctionCall void f`.
    pub fn call(&mut self, f: Word) {
        let void = self.cx.void;
        self.op(Op::FunctionCall, void, &[f]);
    }

    /// A workgroup barrier over workgroup and storage-buffer memory.
    pub fn barrier(&mut self) {
        let wg = self.cx.u32c(spirv::Scope::Workgroup as u32);
        let sem = (spirv::MemorySemantics::ACQUIRE_RELEASE
            | spirv::MemorySemantics::WORKGROUP_MEMORY
            | spirv::MemorySemantics::UNIFORM_MEMORY)
            .bits();
        let sem = self.cx.u32c(sem);
        self.cur.push(inst(
            Op::ControlBarrier,
            vec![Operand::IdRef(wg), Operand::IdRef(wg), Operand::IdRef(sem)],
        ));
    }

    /// Ends the function with `OpReturn` and adds it to the module as function `id` (a fresh
    /// id when None); returns its id.
    pub fn finish(mut self, id: Option<Word>) -> Word {
        self.end_block(inst(Op::Return, vec![]), 0);
        let fty = self.cx.void_fn();
        let id = id.unwrap_or_else(|| self.cx.sp.new_id());
        let mut blocks = std::mem::take(&mut self.blocks);
        if let Some(first) = blocks.first_mut() {
            let vars = std::mem::take(&mut self.vars);
            first.instructions.splice(0..0, vars);
        }
        let f = Function {
            def: Some(Instruction::new(
                Op::Function,
                Some(self.cx.void),
                Some(id),
                vec![
                    Operand::FunctionControl(FunctionControl::NONE),
                    Operand::IdRef(fty),
                ],
            )),
            end: Some(Instruction::new(Op::FunctionEnd, None, None, vec![])),
            parameters: Vec::new(),
            blocks,
        };
        self.cx.sp.m.functions.push(f);
        id
    }
}
