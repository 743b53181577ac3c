//! Templates of the soft-f64 routines: each routine's function is written once per process,
//! into a scratch module, by the same code that writes it directly ([`E::soft_write`]), and
//! kept as words in which every id is a slot: one of the function's own ids (numbered from
//! 0: parameters, labels, results) or a module-level id it names — a type, a constant, the
//! GLSL.std.450 import, the routine itself or a routine it calls. A module that calls the
//! routine resolves those in its own tables (constants and types stay shared with the rest
//! of the module), takes a block of fresh ids for the function's own, and copies the words.
//! A routine of thousands of instructions then costs a copy rather than its construction
//! (building the fma core took about 47,000 of the emitter's instructions, every time).
//!
//! The routines' code depends on nothing but the routine: no option, stage or shader
//! changes it (they are written on an empty module). A routine whose code names anything
//! else than the imports above, or writes outside its function (a decoration, an entry-block
//! variable), gets no template and is written directly; a test checks that every routine
//! has one.

use super::Routine;
use crate::emit::E;
use rspirv::grammar::{CoreInstructionTable, OperandKind, OperandQuantifier};
use rspirv::spirv::{Op as S, Word};
use std::collections::HashMap;
use std::sync::OnceLock;

/// A module-level id a template names.
#[derive(Clone, Debug, PartialEq)]
enum Import {
    /// The routine's own function.
    This,
    /// Another routine's function (a call).
    Routine(Routine),
    /// The GLSL.std.450 import.
    Glsl,
    /// A type, by its declaration.
    Type(TypeDecl),
    /// A `u32` constant.
    U32(u32),
    /// A `bool` constant.
    Bool(bool),
}

/// A type declaration: its opcode and operands (literals, or the types it is made of).
#[derive(Clone, Debug, PartialEq)]
struct TypeDecl {
    op: S,
    operands: Vec<TypeOperand>,
}

/// An operand of a [`TypeDecl`].
#[derive(Clone, Debug, PartialEq)]
enum TypeOperand {
    Literal(u32),
    Type(TypeDecl),
}

/// A routine's function, ready to be copied into a module.
#[derive(Debug)]
pub(super) struct Template {
    /// `OpFunction` to `OpFunctionEnd`, without dead code; a slot of `locals` holds the
    /// id's number among the function's own, a slot of `imported` its index in `imports`.
    words: Vec<u32>,
    /// The offsets in `words` of the function's own ids.
    local_slots: Vec<u32>,
    /// The offsets in `words` of the imported ids.
    import_slots: Vec<u32>,
    imports: Vec<Import>,
    /// How many ids the function defines.
    locals: u32,
}

/// The number of [`Routine`]s ([`index`]).
const ROUTINES: usize = 20;

/// A dense index of routine `r`, below [`ROUTINES`].
fn index(r: Routine) -> usize {
    use super::Fmt::*;
    let fmt = |f| match f {
        F16 => 0,
        F32 => 1,
        F64 => 2,
    };
    match r {
        Routine::Round(f) => fmt(f),
        Routine::Fma(f) => 3 + fmt(f),
        Routine::Narrow(f) => 6 + fmt(f),
        Routine::Int(f) => 9 + fmt(f),
        Routine::FmaCore => 12,
        Routine::Widen32 => 13,
        Routine::I2d => 14,
        Routine::D2i => 15,
        Routine::Rint => 16,
        Routine::Cmp => 17,
        Routine::Div => 18,
        Routine::Sqrt => 19,
    }
}

/// The template of routine `r` (made on first use, once per process), or `None` when it
/// cannot have one.
pub(super) fn of(r: Routine) -> Option<&'static Template> {
    static TEMPLATES: [OnceLock<Option<Template>>; ROUTINES] =
        [const { OnceLock::new() }; ROUTINES];
    TEMPLATES[index(r)].get_or_init(|| make(r)).as_ref()
}

/// Writes routine `r` alone in an empty module, assembles that without its dead code and
/// turns the function into a template.
fn make(r: Routine) -> Option<Template> {
    let opts = crate::Options {
        f64: crate::F64Mode::Soft,
        ..Default::default()
    };
    let empty = dmsh_ir::Function::default();
    let mut e = E::new(&empty, [1, 1, 1], dmsh_ir::Stage::Compute, None, &opts);
    let id = e.soft_fn_id(r);
    let side = e.b.side_words();
    e.soft_write(r).ok()?;
    if e.b.side_words() != side {
        return None;
    }
    let routines: HashMap<Word, Routine> = e.soft.ids.iter().map(|(&r, &w)| (w, r)).collect();
    let glsl = e.glsl_set();
    let module = std::mem::take(&mut e.b).assemble_live();
    let all: Vec<&[u32]> = insts(module.get(5..)?).collect();
    let first = all.iter().position(|i| op_of(i) == S::Function as u32)?;
    let code = &all[first..];
    if code
        .iter()
        .filter(|i| op_of(i) == S::Function as u32)
        .count()
        != 1
    {
        return None;
    }
    // The function's own ids, numbered in the order they are defined.
    let mut locals: HashMap<Word, u32> = HashMap::new();
    for inst in code {
        if let Some(w) = result_word(inst)? {
            if inst[w] != id {
                let n = locals.len() as u32;
                locals.insert(inst[w], n);
            }
        }
    }
    let mut t = Template {
        words: Vec::new(),
        local_slots: Vec::new(),
        import_slots: Vec::new(),
        imports: Vec::new(),
        locals: locals.len() as u32,
    };
    let mut import_of: HashMap<Word, u32> = HashMap::new();
    for inst in code {
        let at = t.words.len();
        t.words.extend_from_slice(inst);
        for k in id_words(inst)? {
            let w = inst[k];
            let slot = (at + k) as u32;
            if let Some(&n) = locals.get(&w) {
                t.words[slot as usize] = n;
                t.local_slots.push(slot);
                continue;
            }
            let i = match import_of.get(&w) {
                Some(&i) => i,
                None => {
                    let import = if w == id {
                        Import::This
                    } else if let Some(&r2) = routines.get(&w) {
                        Import::Routine(r2)
                    } else if w == glsl {
                        Import::Glsl
                    } else {
                        declared(&all, w)?
                    };
                    t.imports.push(import);
                    import_of.insert(w, t.imports.len() as u32 - 1);
                    t.imports.len() as u32 - 1
                }
            };
            t.words[slot as usize] = i;
            t.import_slots.push(slot);
        }
    }
    Some(t)
}

/// The opcode of an instruction.
fn op_of(inst: &[u32]) -> u32 {
    inst[0] & 0xffff
}

/// The declaration of module-level id `w` among a module's instructions.
fn declaration<'a>(module: &[&'a [u32]], w: Word) -> Option<&'a [u32]> {
    module.iter().copied().find(|inst| {
        let op = op_of(inst);
        if op == S::Function as u32 {
            return false;
        }
        // Types and imports have no result type: their id is word 1.
        let is_type = (S::TypeVoid as u32..=S::TypePipe as u32).contains(&op)
            || op == S::ExtInstImport as u32;
        inst.get(if is_type { 1 } else { 2 }) == Some(&w)
    })
}

/// What the scratch module's id `w` is, as an import (`None`: not one templates know).
fn declared(module: &[&[u32]], w: Word) -> Option<Import> {
    let inst = declaration(module, w)?;
    let op = inst[0] & 0xffff;
    if op == S::ConstantTrue as u32 || op == S::ConstantFalse as u32 {
        return Some(Import::Bool(op == S::ConstantTrue as u32));
    }
    if op == S::Constant as u32 && inst.len() == 4 {
        let ty = type_decl(module, inst[1])?;
        let u32_ty = TypeDecl {
            op: S::TypeInt,
            operands: vec![TypeOperand::Literal(32), TypeOperand::Literal(0)],
        };
        return (ty == u32_ty).then_some(Import::U32(inst[3]));
    }
    type_decl(module, w).map(Import::Type)
}

/// The declaration of the scratch module's type `w` (bool, integer, float, vector, struct
/// and function types).
fn type_decl(module: &[&[u32]], w: Word) -> Option<TypeDecl> {
    let inst = declaration(module, w)?;
    let op = inst[0] & 0xffff;
    let lit = |k: usize| inst.get(k).map(|&v| TypeOperand::Literal(v));
    let ty = |k: usize| type_decl(module, inst[k]).map(TypeOperand::Type);
    let (op, operands) = match op {
        o if o == S::TypeBool as u32 => (S::TypeBool, vec![]),
        o if o == S::TypeInt as u32 => (S::TypeInt, vec![lit(2)?, lit(3)?]),
        o if o == S::TypeFloat as u32 => (S::TypeFloat, vec![lit(2)?]),
        o if o == S::TypeVector as u32 => (S::TypeVector, vec![ty(2)?, lit(3)?]),
        o if o == S::TypeStruct as u32 => (
            S::TypeStruct,
            (2..inst.len()).map(ty).collect::<Option<_>>()?,
        ),
        o if o == S::TypeFunction as u32 => (
            S::TypeFunction,
            (2..inst.len()).map(ty).collect::<Option<_>>()?,
        ),
        _ => return None,
    };
    Some(TypeDecl { op, operands })
}

/// The instructions of well-formed code.
fn insts(code: &[u32]) -> impl Iterator<Item = &[u32]> {
    let mut rest = code;
    std::iter::from_fn(move || {
        let len = (*rest.first()? >> 16) as usize;
        if len == 0 || len > rest.len() {
            return None;
        }
        let (inst, tail) = rest.split_at(len);
        rest = tail;
        Some(inst)
    })
}

/// The offset of an instruction's result id, if it has one (`None` for an opcode the
/// grammar does not know).
fn result_word(inst: &[u32]) -> Option<Option<usize>> {
    let g = CoreInstructionTable::lookup_opcode((inst[0] & 0xffff) as u16)?;
    // The result type (if any) comes first, then the result.
    Some(
        (1..)
            .zip(g.operands.iter().take(2))
            .find(|(_, o)| o.kind == OperandKind::IdResult)
            .map(|(k, _)| k),
    )
}

/// The offsets of every id in an instruction, by the grammar (`None` when an operand's size
/// is not known from its kind alone: strings, context-dependent literals, enumerants with
/// parameters).
fn id_words(inst: &[u32]) -> Option<Vec<usize>> {
    let g = CoreInstructionTable::lookup_opcode((inst[0] & 0xffff) as u16)?;
    let mut ids = Vec::new();
    let mut k = 1;
    for o in g.operands {
        loop {
            if k >= inst.len() {
                if o.quantifier == OperandQuantifier::One {
                    return None;
                }
                break;
            }
            use OperandKind as K;
            match o.kind {
                K::IdResultType | K::IdResult | K::IdMemorySemantics | K::IdScope | K::IdRef => {
                    ids.push(k);
                    k += 1;
                }
                K::PairIdRefIdRef => {
                    ids.extend([k, k + 1]);
                    k += 2;
                }
                K::PairIdRefLiteralInteger => {
                    ids.push(k);
                    k += 2;
                }
                K::PairLiteralIntegerIdRef => {
                    ids.push(k + 1);
                    k += 2;
                }
                K::LiteralInteger | K::LiteralExtInstInteger => k += 1,
                // Enumerants and masks without parameters (the routines use none).
                K::SelectionControl | K::LoopControl | K::FunctionControl if inst[k] == 0 => k += 1,
                _ => return None,
            }
            if o.quantifier != OperandQuantifier::ZeroOrMore {
                break;
            }
        }
    }
    (k == inst.len() && ids.iter().all(|&i| i < inst.len())).then_some(ids)
}

impl E {
    /// Writes routine `r`'s function from its template; false when it has none.
    pub(super) fn soft_copy(&mut self, r: Routine) -> Result<bool, crate::Error> {
        let Some(t) = of(r) else {
            return Ok(false);
        };
        let imports: Vec<Word> = t.imports.iter().map(|i| self.resolve(r, i)).collect();
        let base = self.b.ids(t.locals);
        self.b
            .append_function(&t.words, |words| {
                for &s in &t.local_slots {
                    words[s as usize] += base;
                }
                for &s in &t.import_slots {
                    let w = &mut words[s as usize];
                    *w = imports[*w as usize];
                }
            })
            .map_err(|e| crate::Error::Builder(format!("{e:?}")))?;
        Ok(true)
    }

    /// This module's id for import `i` of routine `r`'s template.
    fn resolve(&mut self, r: Routine, i: &Import) -> Word {
        match i {
            Import::This => self.soft_fn_id(r),
            Import::Routine(r2) => self.soft_fn_id(*r2),
            Import::Glsl => self.glsl_set(),
            Import::U32(v) => self.u32c(*v),
            Import::Bool(v) => self.c(dmsh_ir::Type::Bool, *v as u64),
            Import::Type(t) => self.declare(t),
        }
    }

    /// This module's id of type `t` (the emitter's caches for the usual ones).
    fn declare(&mut self, t: &TypeDecl) -> Word {
        use TypeOperand::{Literal as L, Type as T};
        match (t.op, &t.operands[..]) {
            (S::TypeBool, []) => self.ty(dmsh_ir::Type::Bool),
            (S::TypeInt, [L(32), L(0)]) => self.ty(dmsh_ir::Type::U32),
            (S::TypeVector, [T(elem), L(n)]) => {
                let elem = self.declare(elem);
                self.vec_ty(elem, *n)
            }
            _ => {
                let ops: Vec<u32> = t
                    .operands
                    .iter()
                    .map(|o| match o {
                        L(v) => *v,
                        T(t) => self.declare(t),
                    })
                    .collect();
                self.b.type_decl(t.op, &ops)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soft::Fmt;

    /// Every routine has a template, and the index is dense.
    #[test]
    fn every_routine_has_a_template() {
        let fmts = [Fmt::F16, Fmt::F32, Fmt::F64];
        let mut all: Vec<Routine> = Vec::new();
        for f in fmts {
            all.extend([
                Routine::Round(f),
                Routine::Fma(f),
                Routine::Narrow(f),
                Routine::Int(f),
            ]);
        }
        all.extend([
            Routine::FmaCore,
            Routine::Widen32,
            Routine::I2d,
            Routine::D2i,
            Routine::Rint,
            Routine::Cmp,
            Routine::Div,
            Routine::Sqrt,
        ]);
        let mut seen = [false; ROUTINES];
        for r in all {
            assert!(!std::mem::replace(&mut seen[index(r)], true), "{r:?}");
            let t = of(r).unwrap_or_else(|| panic!("{r:?} has no template"));
            assert!(t.locals > 0 && !t.local_slots.is_empty(), "{r:?}");
            assert!(t.imports.contains(&Import::This), "{r:?}");
        }
        assert!(seen.iter().all(|&s| s));
    }
}
