//! A SPIR-V module builder that writes words directly.
//!
//! It offers the subset of `rspirv::dr::Builder`'s methods the emitter uses, with the same
//! signatures and the same output (types deduplicated the same way, sections in the same
//! order), but it never builds rspirv's data representation: every instruction is encoded
//! into its section's word vector as it is made, so emission allocates per section rather
//! than per instruction and operand, and "assembly" is concatenation.

use super::dead::Uses;
use rspirv::binary::Assemble;
use rspirv::dr::{Error, InsertPoint, Instruction, Operand};
use rspirv::spirv::{self, Decoration, StorageClass, Word};

type BuildResult<T> = Result<T, Error>;

/// The module being built, section by section.
#[derive(Default)]
pub(crate) struct Builder {
    version: u32,
    next_id: Word,
    capabilities: Vec<u32>,
    extensions: Vec<u32>,
    ext_inst_imports: Vec<u32>,
    memory_model: Vec<u32>,
    entry_points: Vec<u32>,
    execution_modes: Vec<u32>,
    annotations: Vec<u32>,
    /// Types, constants and module-scope variables, in creation order.
    globals: Vec<u32>,
    /// The type declarations (for deduplication): head word, first operand (0 if none) and
    /// word offset in `globals`, so that a scan compares the operands of few.
    types: Vec<[u32; 3]>,
    /// Module-scope variables and their storage classes.
    vars: Vec<(Word, StorageClass)>,
    /// Function bodies.
    functions: Vec<u32>,
    in_function: bool,
    in_block: bool,
    blocks: usize,
    /// Word offset in `functions` just after the entry block's label.
    entry_body: Option<usize>,
    /// Words that go at word `entry_at` of `functions` (the entry block's top: function
    /// variables), placed there by [`Builder::assemble_live`] so the body is not moved for them.
    entry_words: Vec<u32>,
    entry_at: usize,
    /// The uses of ids in `functions` and `entry_words`, counted as they are written, and
    /// where their removable instructions are (offsets in `functions`; [`ENTRY`] marks one
    /// in `entry_words`): [`Builder::assemble_live`] removes the dead ones without reading
    /// the code again.
    uses: Uses,
    /// Code moved after it was counted (a second function's entry words): the counts'
    /// offsets are stale, so [`Builder::assemble_live`] counts the code again.
    moved: bool,
}

/// Marks an offset in [`Builder::uses`] as one in `entry_words`.
const ENTRY: u32 = 1 << 31;

#[inline]
fn head(op: spirv::Op, len: usize) -> u32 {
    ((len as u32) << 16) | op as u32
}

fn push_str(s: &str, out: &mut Vec<u32>) {
    let chunks = s.as_bytes().chunks_exact(4);
    let rest = chunks.remainder();
    let mut last = [0u8; 4];
    last[..rest.len()].copy_from_slice(rest);
    out.extend(chunks.map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
    out.push(u32::from_le_bytes(last));
}

/// Starts an instruction in `out`; returns its start (patch the count with [`end`]).
#[inline]
fn begin(out: &mut Vec<u32>) -> usize {
    out.push(0);
    out.len() - 1
}

#[inline]
fn end(out: &mut [u32], start: usize, op: spirv::Op) {
    out[start] = head(op, out.len() - start);
}

thread_local! {
    /// The builder of this thread's last module, emptied, for the next ([`Builder::new`]):
    /// its sections keep their room, so a module seldom allocates for them.
    static SPARE: std::cell::Cell<Option<Builder>> = const { std::cell::Cell::new(None) };
}

impl Builder {
    /// An empty module (SPIR-V 1.0 until [`Builder::set_version`]): this thread's last
    /// one emptied ([`Builder::assemble_live`] hands it on), else a new one.
    pub fn new() -> Self {
        match SPARE.take() {
            Some(b) => b,
            None => Builder::with_room(),
        }
    }

    /// An empty module with room for a shader's usual sections.
    fn with_room() -> Self {
        Builder {
            version: 0x0001_0000,
            next_id: 1,
            // Room for a shader's usual sections (no regrowth); the code's room is
            // `reserve_code`'s, else it grows.
            capabilities: Vec::with_capacity(32),
            execution_modes: Vec::with_capacity(16),
            globals: Vec::with_capacity(1024),
            types: Vec::with_capacity(64),
            ext_inst_imports: Vec::with_capacity(8),
            entry_points: Vec::with_capacity(64),
            annotations: Vec::with_capacity(256),
            ..Default::default()
        }
    }

    /// Reserves room for about `words` words of function code.
    pub fn reserve_code(&mut self, words: usize) {
        self.functions.reserve(words);
    }

    /// Counts the uses of the instruction just written to `functions` at `at`.
    #[inline]
    fn counted(&mut self, at: usize) {
        self.uses
            .inst(&self.functions[at..], at as u32, self.next_id);
    }

    /// [`Builder::counted`] for an instruction whose opcode is known to be removable or not
    /// (`Uses::removable`) where it is written.
    #[inline(always)]
    fn counted_as(&mut self, at: usize, removable: bool) {
        let (code, uses, bound) = (&self.functions, &mut self.uses, self.next_id);
        let from = if removable && code.len() >= at + 3 {
            uses.def(code[at + 2], at as u32);
            3
        } else {
            1
        };
        for &w in &code[at + from..] {
            uses.word(w, bound);
        }
    }

    /// Sets the SPIR-V version of the header.
    pub fn set_version(&mut self, major: u8, minor: u8) {
        self.version = ((major as u32) << 16) | ((minor as u32) << 8);
    }

    /// A fresh id.
    #[inline]
    pub fn id(&mut self) -> Word {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The function body being written, or an error when no block is open.
    #[inline]
    fn body(&mut self) -> BuildResult<&mut Vec<u32>> {
        if self.in_block {
            Ok(&mut self.functions)
        } else {
            Err(Error::DetachedInstruction(None))
        }
    }

    /// Appends `op` with a result type, a result id and id operands to the current block.
    // Always inlined into `E::op4`'s calls of fixed lengths: the operands stay in registers.
    #[inline(always)]
    pub fn op_ids(&mut self, op: spirv::Op, ty: Word, id: Word, args: &[Word]) -> BuildResult<()> {
        let at = self.functions.len() as u32;
        let out = self.body()?;
        let h = head(op, 3 + args.len());
        // Fixed-size copies for the usual lengths (no per-word capacity checks or memcpy).
        match *args {
            [a] => out.extend_from_slice(&[h, ty, id, a]),
            [a, b] => out.extend_from_slice(&[h, ty, id, a, b]),
            [a, b, c] => out.extend_from_slice(&[h, ty, id, a, b, c]),
            [a, b, c, d] => out.extend_from_slice(&[h, ty, id, a, b, c, d]),
            _ => {
                out.extend_from_slice(&[h, ty, id]);
                out.extend_from_slice(args);
            }
        }
        // What `Uses::inst` counts, from the operands at hand.
        let bound = self.next_id;
        if Uses::removable(op as u32) {
            self.uses.def(id, at);
        } else {
            self.uses.word(ty, bound);
            self.uses.word(id, bound);
        }
        for &a in args {
            self.uses.word(a, bound);
        }
        Ok(())
    }

    /// Appends an instruction without result made of raw operand words (ids and literals).
    #[inline]
    pub fn void_words(&mut self, op: spirv::Op, args: &[u32]) -> BuildResult<()> {
        let at = self.functions.len();
        let out = self.body()?;
        out.push(head(op, 1 + args.len()));
        out.extend_from_slice(args);
        self.counted_as(at, Uses::removable(op as u32));
        Ok(())
    }

    /// Appends an rspirv instruction (rare instructions without a dedicated method).
    pub fn insert_into_block(&mut self, at: InsertPoint, inst: Instruction) -> BuildResult<()> {
        if !self.in_block {
            return Err(Error::DetachedInstruction(Some(inst)));
        }
        debug_assert!(matches!(at, InsertPoint::End));
        let at = self.functions.len();
        inst.assemble_into(&mut self.functions);
        self.counted(at);
        Ok(())
    }

    // ----- module-level instructions -----

    /// `OpCapability`.
    pub fn capability(&mut self, c: spirv::Capability) {
        self.capabilities
            .extend_from_slice(&[head(spirv::Op::Capability, 2), c as u32]);
    }

    /// `OpExtension`.
    pub fn extension(&mut self, name: impl Into<String>) {
        let s = begin(&mut self.extensions);
        push_str(&name.into(), &mut self.extensions);
        end(&mut self.extensions, s, spirv::Op::Extension);
    }

    /// `OpExtInstImport`.
    pub fn ext_inst_import(&mut self, name: impl Into<String>) -> Word {
        let id = self.id();
        let s = begin(&mut self.ext_inst_imports);
        self.ext_inst_imports.push(id);
        push_str(&name.into(), &mut self.ext_inst_imports);
        end(&mut self.ext_inst_imports, s, spirv::Op::ExtInstImport);
        id
    }

    /// `OpMemoryModel` (replaces an earlier one).
    pub fn memory_model(&mut self, am: spirv::AddressingModel, mm: spirv::MemoryModel) {
        self.memory_model.clear();
        self.memory_model.extend_from_slice(&[
            head(spirv::Op::MemoryModel, 3),
            am as u32,
            mm as u32,
        ]);
    }

    /// `OpEntryPoint`.
    pub fn entry_point(
        &mut self,
        model: spirv::ExecutionModel,
        f: Word,
        name: impl Into<String>,
        interface: impl AsRef<[Word]>,
    ) {
        let out = &mut self.entry_points;
        let s = begin(out);
        out.push(model as u32);
        out.push(f);
        push_str(&name.into(), out);
        out.extend_from_slice(interface.as_ref());
        end(out, s, spirv::Op::EntryPoint);
    }

    /// `OpExecutionMode`.
    pub fn execution_mode(
        &mut self,
        f: Word,
        mode: spirv::ExecutionMode,
        params: impl AsRef<[u32]>,
    ) {
        let out = &mut self.execution_modes;
        let p = params.as_ref();
        out.push(head(spirv::Op::ExecutionMode, 3 + p.len()));
        out.push(f);
        out.push(mode as u32);
        out.extend_from_slice(p);
    }

    /// `OpDecorate`.
    pub fn decorate(
        &mut self,
        target: Word,
        d: Decoration,
        extra: impl IntoIterator<Item = Operand>,
    ) {
        let out = &mut self.annotations;
        let s = begin(out);
        out.push(target);
        out.push(d as u32);
        for o in extra {
            o.assemble_into(out);
        }
        end(out, s, spirv::Op::Decorate);
    }

    /// `OpDecorate` without extra operands.
    #[inline]
    pub fn decorate_flag(&mut self, target: Word, d: Decoration) {
        self.annotations
            .extend_from_slice(&[head(spirv::Op::Decorate, 3), target, d as u32]);
    }

    /// `OpMemberDecorate`.
    pub fn member_decorate(
        &mut self,
        st: Word,
        member: u32,
        d: Decoration,
        extra: impl IntoIterator<Item = Operand>,
    ) {
        let out = &mut self.annotations;
        let s = begin(out);
        out.push(st);
        out.push(member);
        out.push(d as u32);
        for o in extra {
            o.assemble_into(out);
        }
        end(out, s, spirv::Op::MemberDecorate);
    }

    // ----- types (deduplicated like rspirv: same opcode and operands) -----

    /// A type with operand words `ops`: the existing id or a new declaration.
    fn type_words(&mut self, op: spirv::Op, ops: &[u32]) -> Word {
        let h = head(op, 2 + ops.len());
        let first = ops.first().copied().unwrap_or(0);
        for &[th, tf, at] in &self.types {
            if th == h && tf == first {
                let at = at as usize;
                let g = &self.globals;
                if g[at + 2..at + 2 + ops.len()] == *ops {
                    return g[at + 1];
                }
            }
        }
        self.declare_type(h, ops)
    }

    /// A new type declaration with head word `h` and operand words `ops`.
    fn declare_type(&mut self, h: u32, ops: &[u32]) -> Word {
        let first = ops.first().copied().unwrap_or(0);
        let id = self.id();
        self.types.push([h, first, self.globals.len() as u32]);
        self.globals.push(h);
        self.globals.push(id);
        self.globals.extend_from_slice(ops);
        id
    }

    /// `OpTypeVoid`.
    pub fn type_void(&mut self) -> Word {
        self.type_words(spirv::Op::TypeVoid, &[])
    }
    /// `OpTypeBool`.
    pub fn type_bool(&mut self) -> Word {
        self.type_words(spirv::Op::TypeBool, &[])
    }
    /// `OpTypeInt`.
    pub fn type_int(&mut self, width: u32, signed: u32) -> Word {
        self.type_words(spirv::Op::TypeInt, &[width, signed])
    }
    /// `OpTypeFloat`.
    pub fn type_float(&mut self, width: u32) -> Word {
        self.type_words(spirv::Op::TypeFloat, &[width])
    }
    /// `OpTypeVector`.
    pub fn type_vector(&mut self, elem: Word, n: u32) -> Word {
        self.type_words(spirv::Op::TypeVector, &[elem, n])
    }
    /// `OpTypeArray` (`len` is a constant id).
    pub fn type_array(&mut self, elem: Word, len: Word) -> Word {
        self.type_words(spirv::Op::TypeArray, &[elem, len])
    }
    /// `OpTypeRuntimeArray`.
    pub fn type_runtime_array(&mut self, elem: Word) -> Word {
        self.type_words(spirv::Op::TypeRuntimeArray, &[elem])
    }
    /// `OpTypeStruct`.
    pub fn type_struct(&mut self, members: impl IntoIterator<Item = Word>) -> Word {
        let m: Vec<Word> = members.into_iter().collect();
        self.type_words(spirv::Op::TypeStruct, &m)
    }
    /// `OpTypeCooperativeMatrixKHR` (scope, rows, columns and use are constant ids).
    pub fn type_coop_matrix(
        &mut self,
        comp: Word,
        scope: Word,
        rows: Word,
        cols: Word,
        use_: Word,
    ) -> Word {
        self.type_words(
            spirv::Op::TypeCooperativeMatrixKHR,
            &[comp, scope, rows, cols, use_],
        )
    }
    /// `OpTypePointer`, declared without looking for an equal one: `E::ptr`, whose cache
    /// is the only way to pointer types, asks for each once.
    pub fn type_pointer_new(&mut self, sc: StorageClass, elem: Word) -> Word {
        let ops = [sc as u32, elem];
        self.declare_type(head(spirv::Op::TypePointer, 2 + ops.len()), &ops)
    }
    /// `OpTypeFunction`.
    pub fn type_function(&mut self, ret: Word, params: impl IntoIterator<Item = Word>) -> Word {
        let mut ops = vec![ret];
        ops.extend(params);
        self.type_words(spirv::Op::TypeFunction, &ops)
    }
    /// `OpTypeImage`.
    #[allow(clippy::too_many_arguments)]
    pub fn type_image(
        &mut self,
        sampled: Word,
        dim: spirv::Dim,
        depth: u32,
        arrayed: u32,
        ms: u32,
        sampled_kind: u32,
        fmt: spirv::ImageFormat,
        access: Option<spirv::AccessQualifier>,
    ) -> Word {
        let mut ops = vec![
            sampled,
            dim as u32,
            depth,
            arrayed,
            ms,
            sampled_kind,
            fmt as u32,
        ];
        if let Some(a) = access {
            ops.push(a as u32);
        }
        self.type_words(spirv::Op::TypeImage, &ops)
    }
    /// `OpTypeSampledImage`.
    pub fn type_sampled_image(&mut self, image: Word) -> Word {
        self.type_words(spirv::Op::TypeSampledImage, &[image])
    }
    /// `OpTypeSampler`.
    pub fn type_sampler(&mut self) -> Word {
        self.type_words(spirv::Op::TypeSampler, &[])
    }

    // ----- constants and module-scope variables (never deduplicated) -----

    fn global(&mut self, op: spirv::Op, ty: Word, ops: &[u32]) -> Word {
        let id = self.id();
        self.globals.push(head(op, 3 + ops.len()));
        self.globals.push(ty);
        self.globals.push(id);
        self.globals.extend_from_slice(ops);
        id
    }

    /// `OpConstantTrue`.
    pub fn constant_true(&mut self, ty: Word) -> Word {
        self.global(spirv::Op::ConstantTrue, ty, &[])
    }
    /// `OpConstantFalse`.
    pub fn constant_false(&mut self, ty: Word) -> Word {
        self.global(spirv::Op::ConstantFalse, ty, &[])
    }
    /// A 32-bit `OpConstant`.
    pub fn constant_bit32(&mut self, ty: Word, v: u32) -> Word {
        let id = self.id();
        let h = head(spirv::Op::Constant, 4);
        self.globals.extend_from_slice(&[h, ty, id, v]);
        id
    }
    /// A 32-bit `OpSpecConstant` (default `v`).
    pub fn spec_constant_bit32(&mut self, ty: Word, v: u32) -> Word {
        self.global(spirv::Op::SpecConstant, ty, &[v])
    }
    /// `OpSpecConstantComposite`.
    pub fn spec_constant_composite(&mut self, ty: Word, parts: &[Word]) -> Word {
        self.global(spirv::Op::SpecConstantComposite, ty, parts)
    }
    /// A 64-bit `OpConstant`.
    pub fn constant_bit64(&mut self, ty: Word, v: u64) -> Word {
        self.global(spirv::Op::Constant, ty, &[v as u32, (v >> 32) as u32])
    }
    /// `OpConstantComposite`.
    pub fn constant_composite(&mut self, ty: Word, parts: impl IntoIterator<Item = Word>) -> Word {
        let id = self.id();
        let s = begin(&mut self.globals);
        self.globals.push(ty);
        self.globals.push(id);
        self.globals.extend(parts);
        end(&mut self.globals, s, spirv::Op::ConstantComposite);
        id
    }

    /// A module-scope `OpVariable` with id `id`.
    pub fn global_variable(&mut self, id: Word, pty: Word, sc: StorageClass, init: Option<Word>) {
        let g = &mut self.globals;
        match init {
            Some(i) => g.extend_from_slice(&[head(spirv::Op::Variable, 5), pty, id, sc as u32, i]),
            None => g.extend_from_slice(&[head(spirv::Op::Variable, 4), pty, id, sc as u32]),
        }
        self.vars.push((id, sc));
    }

    /// The storage class of a module-scope variable.
    pub fn storage_class_of(&self, var: Word) -> Option<StorageClass> {
        self.vars.iter().find(|v| v.0 == var).map(|v| v.1)
    }

    // ----- whole functions (the soft-f64 routines' templates, `soft/template.rs`) -----

    /// How many words the decorations and the entry block's top hold: what a template must
    /// not have written.
    pub fn side_words(&self) -> (usize, usize) {
        (self.annotations.len(), self.entry_words.len())
    }

    /// A type declaration of opcode `op` and operand words `ops` (an equal one if there is).
    pub fn type_decl(&mut self, op: spirv::Op, ops: &[u32]) -> Word {
        self.type_words(op, ops)
    }

    /// `n` fresh consecutive ids; returns the first.
    pub fn ids(&mut self, n: u32) -> Word {
        let first = self.next_id;
        self.next_id += n;
        first
    }

    /// Appends a whole function, `OpFunction` to `OpFunctionEnd`, that has no dead code and
    /// uses no id a removable instruction outside it defines (a soft-f64 routine's template):
    /// its uses need no counting, since nothing in it or used by it can be removed. `patch`
    /// fills in its ids, which must be below the id bound.
    pub fn append_function(
        &mut self,
        words: &[u32],
        patch: impl FnOnce(&mut [u32]),
    ) -> BuildResult<()> {
        if self.in_function {
            return Err(Error::NestedFunction);
        }
        let at = self.functions.len();
        self.functions.extend_from_slice(words);
        patch(&mut self.functions[at..]);
        Ok(())
    }

    // ----- functions and blocks -----

    /// `OpFunction`.
    pub fn begin_function(
        &mut self,
        ret: Word,
        id: Option<Word>,
        control: spirv::FunctionControl,
        fnty: Word,
    ) -> BuildResult<Word> {
        if self.in_function {
            return Err(Error::NestedFunction);
        }
        let id = id.unwrap_or_else(|| self.id());
        let at = self.functions.len();
        self.functions.extend_from_slice(&[
            head(spirv::Op::Function, 5),
            ret,
            id,
            control.bits(),
            fnty,
        ]);
        self.counted(at);
        self.in_function = true;
        self.blocks = 0;
        self.entry_body = None;
        Ok(id)
    }

    /// `OpFunctionEnd`.
    pub fn end_function(&mut self) -> BuildResult<()> {
        if !self.in_function {
            return Err(Error::MismatchedFunctionEnd);
        }
        self.functions.push(head(spirv::Op::FunctionEnd, 1));
        self.in_function = false;
        Ok(())
    }

    /// `OpFunctionParameter` (between `OpFunction` and the first block).
    pub fn function_parameter(&mut self, ty: Word) -> BuildResult<Word> {
        if !self.in_function || self.in_block || self.blocks > 0 {
            return Err(Error::DetachedFunctionParameter);
        }
        let id = self.id();
        let at = self.functions.len();
        self.functions
            .extend_from_slice(&[head(spirv::Op::FunctionParameter, 3), ty, id]);
        self.counted(at);
        Ok(id)
    }

    /// `OpLabel`: starts a block.
    pub fn begin_block(&mut self, label: Option<Word>) -> BuildResult<Word> {
        if !self.in_function {
            return Err(Error::DetachedBlock);
        }
        if self.in_block {
            return Err(Error::NestedBlock);
        }
        let id = label.unwrap_or_else(|| self.id());
        self.uses.word(id, self.next_id);
        self.functions
            .extend_from_slice(&[head(spirv::Op::Label, 2), id]);
        if self.blocks == 0 {
            self.entry_body = Some(self.functions.len());
        }
        self.blocks += 1;
        self.in_block = true;
        Ok(id)
    }

    /// The index of the open block in its function.
    pub fn selected_block(&self) -> Option<usize> {
        self.in_block.then(|| self.blocks - 1)
    }

    /// The words of an instruction with a result type, a result id and id operands, for
    /// [`Builder::insert_at_entry`] (code that must run in the entry block, after its
    /// variables); returns the id.
    pub fn entry_instruction(
        &mut self,
        out: &mut Vec<u32>,
        op: spirv::Op,
        ty: Word,
        args: &[Word],
    ) -> Word {
        let id = self.id();
        out.extend_from_slice(&[head(op, 3 + args.len()), ty, id]);
        out.extend_from_slice(args);
        id
    }

    /// Inserts words at the top of the first function's entry block (function variables).
    pub fn insert_at_entry(&mut self, words: &[u32]) {
        if let Some(at) = self.entry_body {
            if !self.entry_words.is_empty() && at != self.entry_at {
                // A second function's entry: insert now, keeping the first one's words.
                self.functions.splice(at..at, words.iter().copied());
                self.moved = true;
                return;
            }
            self.entry_at = at;
            let base = ENTRY | self.entry_words.len() as u32;
            if !self.uses.scan(words, base, self.next_id) {
                self.moved = true; // not well formed: see `assemble_live`
            }
            self.entry_words.extend_from_slice(words);
        }
    }

    fn terminate(&mut self, op: spirv::Op, args: &[u32]) -> BuildResult<()> {
        self.void_words(op, args)?;
        self.in_block = false;
        Ok(())
    }

    // ----- instructions -----

    /// `OpExtInst` with id operands.
    #[inline]
    pub fn ext_ids(
        &mut self,
        ty: Word,
        id: Word,
        set: Word,
        inst: u32,
        args: &[Word],
    ) -> BuildResult<()> {
        let at = self.functions.len() as u32;
        let out = self.body()?;
        out.reserve(5 + args.len());
        out.push(head(spirv::Op::ExtInst, 5 + args.len()));
        out.extend_from_slice(&[ty, id, set, inst]);
        for &a in args {
            out.push(a);
        }
        // What `Uses::inst` counts (`OpExtInst` is removable).
        let bound = self.next_id;
        self.uses.def(id, at);
        self.uses.word(set, bound);
        self.uses.word(inst, bound);
        for &a in args {
            self.uses.word(a, bound);
        }
        Ok(())
    }

    /// `OpLoad`.
    pub fn load(
        &mut self,
        ty: Word,
        id: Option<Word>,
        ptr: Word,
        access: Option<spirv::MemoryAccess>,
        extra: impl IntoIterator<Item = Operand>,
    ) -> BuildResult<Word> {
        let id = id.unwrap_or_else(|| self.id());
        let out = self.body()?;
        let s = begin(out);
        out.extend_from_slice(&[ty, id, ptr]);
        if let Some(a) = access {
            out.push(a.bits());
        }
        for o in extra {
            o.assemble_into(out);
        }
        end(out, s, spirv::Op::Load);
        self.counted_as(s, true);
        Ok(id)
    }

    /// `OpLoad` without memory operands (the usual one, written at once).
    #[inline]
    pub fn load_plain(&mut self, ty: Word, ptr: Word) -> BuildResult<Word> {
        let id = self.id();
        let at = self.functions.len() as u32;
        let out = self.body()?;
        out.extend_from_slice(&[head(spirv::Op::Load, 4), ty, id, ptr]);
        // What `Uses::inst` counts (`OpLoad` is removable).
        self.uses.def(id, at);
        self.uses.word(ptr, self.next_id);
        Ok(id)
    }

    /// `OpStore`.
    pub fn store(
        &mut self,
        ptr: Word,
        v: Word,
        access: Option<spirv::MemoryAccess>,
        extra: impl IntoIterator<Item = Operand>,
    ) -> BuildResult<()> {
        let out = self.body()?;
        let s = begin(out);
        out.extend_from_slice(&[ptr, v]);
        if let Some(a) = access {
            out.push(a.bits());
        }
        for o in extra {
            o.assemble_into(out);
        }
        end(out, s, spirv::Op::Store);
        self.counted_as(s, false);
        Ok(())
    }

    /// `OpStore` without memory operands (the usual one, written at once).
    #[inline]
    pub fn store_plain(&mut self, ptr: Word, v: Word) -> BuildResult<()> {
        let out = self.body()?;
        out.extend_from_slice(&[head(spirv::Op::Store, 3), ptr, v]);
        // What `Uses::inst` counts (`OpStore` is kept: every word).
        let bound = self.next_id;
        self.uses.word(ptr, bound);
        self.uses.word(v, bound);
        Ok(())
    }

    /// `OpAccessChain`.
    pub fn access_chain(
        &mut self,
        ty: Word,
        id: Option<Word>,
        base: Word,
        idx: &[Word],
    ) -> BuildResult<Word> {
        let id = id.unwrap_or_else(|| self.id());
        let at = self.functions.len() as u32;
        let out = self.body()?;
        let h = head(spirv::Op::AccessChain, 4 + idx.len());
        // Fixed-size copies for the usual lengths (no memcpy call).
        match *idx {
            [i] => out.extend_from_slice(&[h, ty, id, base, i]),
            [i, j] => out.extend_from_slice(&[h, ty, id, base, i, j]),
            [i, j, k] => out.extend_from_slice(&[h, ty, id, base, i, j, k]),
            _ => {
                out.extend_from_slice(&[h, ty, id, base]);
                out.extend_from_slice(idx);
            }
        }
        // What `Uses::inst` counts (`OpAccessChain` is removable).
        let bound = self.next_id;
        self.uses.def(id, at);
        self.uses.word(base, bound);
        for &i in idx {
            self.uses.word(i, bound);
        }
        Ok(id)
    }

    /// `OpCompositeExtract`.
    pub fn composite_extract(
        &mut self,
        ty: Word,
        id: Option<Word>,
        comp: Word,
        idx: &[u32],
    ) -> BuildResult<Word> {
        let id = id.unwrap_or_else(|| self.id());
        let at = self.functions.len() as u32;
        let out = self.body()?;
        let h = head(spirv::Op::CompositeExtract, 4 + idx.len());
        match *idx {
            [i] => out.extend_from_slice(&[h, ty, id, comp, i]),
            _ => {
                out.extend_from_slice(&[h, ty, id, comp]);
                out.extend_from_slice(idx);
            }
        }
        // What `Uses::inst` counts (`OpCompositeExtract` is removable; its indices are
        // literals, counted as any word is).
        let bound = self.next_id;
        self.uses.def(id, at);
        self.uses.word(comp, bound);
        for &i in idx {
            self.uses.word(i, bound);
        }
        Ok(id)
    }

    /// `OpCompositeConstruct`.
    pub fn composite_construct(
        &mut self,
        ty: Word,
        id: Option<Word>,
        parts: impl IntoIterator<Item = Word>,
    ) -> BuildResult<Word> {
        let id = id.unwrap_or_else(|| self.id());
        let out = self.body()?;
        let s = begin(out);
        out.extend_from_slice(&[ty, id]);
        out.extend(parts);
        end(out, s, spirv::Op::CompositeConstruct);
        self.counted_as(s, true);
        Ok(id)
    }

    /// `OpImageWrite`.
    pub fn image_write(
        &mut self,
        image: Word,
        coord: Word,
        texel: Word,
        ops: Option<spirv::ImageOperands>,
        extra: impl IntoIterator<Item = Operand>,
    ) -> BuildResult<()> {
        let out = self.body()?;
        let s = begin(out);
        out.extend_from_slice(&[image, coord, texel]);
        if let Some(m) = ops {
            out.push(m.bits());
        }
        for o in extra {
            o.assemble_into(out);
        }
        end(out, s, spirv::Op::ImageWrite);
        self.counted(s);
        Ok(())
    }

    /// `OpAtomicStore`.
    pub fn atomic_store(&mut self, p: Word, scope: Word, sem: Word, v: Word) -> BuildResult<()> {
        self.void_words(spirv::Op::AtomicStore, &[p, scope, sem, v])
    }

    /// `OpControlBarrier`.
    pub fn control_barrier(&mut self, exec: Word, mem: Word, sem: Word) -> BuildResult<()> {
        self.void_words(spirv::Op::ControlBarrier, &[exec, mem, sem])
    }

    /// `OpMemoryBarrier`.
    pub fn memory_barrier(&mut self, mem: Word, sem: Word) -> BuildResult<()> {
        self.void_words(spirv::Op::MemoryBarrier, &[mem, sem])
    }

    /// `OpEmitVertex`.
    pub fn emit_vertex(&mut self) -> BuildResult<()> {
        self.void_words(spirv::Op::EmitVertex, &[])
    }

    /// `OpEndPrimitive`.
    pub fn end_primitive(&mut self) -> BuildResult<()> {
        self.void_words(spirv::Op::EndPrimitive, &[])
    }

    /// `OpSelectionMerge`.
    pub fn selection_merge(&mut self, merge: Word, c: spirv::SelectionControl) -> BuildResult<()> {
        self.void_words(spirv::Op::SelectionMerge, &[merge, c.bits()])
    }

    /// `OpLoopMerge`.
    pub fn loop_merge(
        &mut self,
        merge: Word,
        cont: Word,
        c: spirv::LoopControl,
        extra: impl IntoIterator<Item = Operand>,
    ) -> BuildResult<()> {
        let out = self.body()?;
        let s = begin(out);
        out.extend_from_slice(&[merge, cont, c.bits()]);
        for o in extra {
            o.assemble_into(out);
        }
        end(out, s, spirv::Op::LoopMerge);
        self.counted(s);
        Ok(())
    }

    // ----- terminators -----

    /// `OpBranch`.
    pub fn branch(&mut self, t: Word) -> BuildResult<()> {
        self.terminate(spirv::Op::Branch, &[t])
    }

    /// `OpBranchConditional`.
    pub fn branch_conditional(
        &mut self,
        c: Word,
        t: Word,
        f: Word,
        weights: impl IntoIterator<Item = u32>,
    ) -> BuildResult<()> {
        let out = self.body()?;
        let s = begin(out);
        out.extend_from_slice(&[c, t, f]);
        out.extend(weights);
        end(out, s, spirv::Op::BranchConditional);
        self.counted(s);
        self.in_block = false;
        Ok(())
    }

    /// `OpSwitch`.
    pub fn switch(
        &mut self,
        sel: Word,
        def: Word,
        targets: impl IntoIterator<Item = (Operand, Word)>,
    ) -> BuildResult<()> {
        let out = self.body()?;
        let s = begin(out);
        out.extend_from_slice(&[sel, def]);
        for (lit, t) in targets {
            lit.assemble_into(out);
            out.push(t);
        }
        end(out, s, spirv::Op::Switch);
        self.counted(s);
        self.in_block = false;
        Ok(())
    }

    /// `OpReturn`.
    pub fn ret(&mut self) -> BuildResult<()> {
        self.terminate(spirv::Op::Return, &[])
    }

    /// `OpReturnValue`.
    pub fn ret_value(&mut self, v: Word) -> BuildResult<()> {
        self.terminate(spirv::Op::ReturnValue, &[v])
    }

    /// `OpUnreachable`.
    pub fn unreachable(&mut self) -> BuildResult<()> {
        self.terminate(spirv::Op::Unreachable, &[])
    }

    /// The module's words (header and sections in SPIR-V's logical order, in one vector sized
    /// up front) without the instructions whose results nothing uses and that have no effect
    /// (`dead::sweep`), and without their decorations: left out as the sections are copied.
    pub fn assemble_live(mut self) -> Vec<u32> {
        let at = self.entry_at.min(self.functions.len());
        let (code, entry) = (&self.functions, &self.entry_words);
        let mut uses = std::mem::take(&mut self.uses);
        if self.moved {
            // The counts' offsets are stale: count again.
            uses = Default::default();
            let b = self.next_id;
            let ok = uses.scan(&code[..at], 0, b)
                && uses.scan(entry, ENTRY, b)
                && uses.scan(&code[at..], at as u32, b);
            if !ok {
                uses = Default::default(); // not well formed: leave it to the validator
            }
        }
        let dead = super::dead::sweep(uses, self.next_id, |off| {
            if off & ENTRY != 0 {
                &entry[(off & !ENTRY) as usize..]
            } else {
                &code[off as usize..]
            }
        });
        let head = 5
            + self.capabilities.len()
            + self.extensions.len()
            + self.ext_inst_imports.len()
            + self.memory_model.len()
            + self.entry_points.len()
            + self.execution_modes.len();
        let size = head + self.annotations.len() + self.globals.len() + code.len() + entry.len();
        let mut w = Vec::with_capacity(size);
        w.extend_from_slice(&[
            spirv::MAGIC_NUMBER,
            self.version,
            0x000f_0000,
            self.next_id,
            0,
        ]);
        for s in [
            &self.capabilities,
            &self.extensions,
            &self.ext_inst_imports,
            &self.memory_model,
            &self.entry_points,
            &self.execution_modes,
        ] {
            w.extend_from_slice(s);
        }
        if dead.is_empty() {
            for s in [
                &self.annotations,
                &self.globals,
                &code[..at],
                entry,
                &code[at..],
            ] {
                w.extend_from_slice(s);
            }
        } else {
            dead.copy_annotations(&mut w, &self.annotations);
            w.extend_from_slice(&self.globals);
            dead.copy_code(&mut w, &code[..at], 0);
            dead.copy_code(&mut w, entry, ENTRY);
            dead.copy_code(&mut w, &code[at..], at as u32);
        }
        self.recycle();
        w
    }

    /// Empties this builder, keeping its sections' room, and hands it to this thread's
    /// next [`Builder::new`].
    fn recycle(self) {
        fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
            v.clear();
            v
        }
        SPARE.set(Some(Builder {
            capabilities: emptied(self.capabilities),
            extensions: emptied(self.extensions),
            ext_inst_imports: emptied(self.ext_inst_imports),
            memory_model: emptied(self.memory_model),
            entry_points: emptied(self.entry_points),
            execution_modes: emptied(self.execution_modes),
            annotations: emptied(self.annotations),
            globals: emptied(self.globals),
            types: emptied(self.types),
            vars: emptied(self.vars),
            functions: emptied(self.functions),
            entry_words: emptied(self.entry_words),
            version: 0x0001_0000,
            next_id: 1,
            ..Default::default()
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function with dead code in its body and in its entry words, some of it decorated.
    fn module() -> Builder {
        let mut b = Builder::new();
        let void = b.type_void();
        let u = b.type_int(32, 0);
        let f = b.type_float(32);
        let pu = b.type_pointer_new(StorageClass::Function, u);
        let fnty = b.type_function(void, []);
        let one = b.constant_bit32(u, 1);
        b.begin_function(void, None, spirv::FunctionControl::NONE, fnty)
            .unwrap();
        b.begin_block(None).unwrap();
        let var = b.id();
        // Entry words: the variable, and a dead load of it.
        let mut entry = vec![head(spirv::Op::Variable, 4), pu, var, 7];
        b.entry_instruction(&mut entry, spirv::Op::Load, u, &[var]);
        let loaded = b.load(u, None, var, None, []).unwrap();
        // A dead chain: x = loaded + 1 (decorated), y = bitcast x.
        let x = b.id();
        b.op_ids(spirv::Op::IAdd, u, x, &[loaded, one]).unwrap();
        b.decorate_flag(x, Decoration::NoContraction);
        let y = b.id();
        b.op_ids(spirv::Op::Bitcast, f, y, &[x]).unwrap();
        // A live one: stored.
        let z = b.id();
        b.op_ids(spirv::Op::IAdd, u, z, &[loaded, loaded]).unwrap();
        b.store(var, z, None, []).unwrap();
        b.ret().unwrap();
        b.end_function().unwrap();
        b.insert_at_entry(&entry);
        b
    }

    #[test]
    fn counts_kept_while_writing_find_what_a_scan_finds() {
        let counted = module().assemble_live();
        let mut scanned = module();
        scanned.moved = true;
        let scanned = scanned.assemble_live();
        assert_eq!(counted, scanned);
        // The dead load, add, bit cast and decoration are gone (4 + 5 + 4 + 3 words).
        let mut all = module();
        all.uses = Default::default(); // no removable instruction known: nothing removed
        let all = all.assemble_live();
        assert_eq!(all.len() - counted.len(), 16);
    }
}
