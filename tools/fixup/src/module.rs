//! A SPIR-V module being rewritten: fresh ids, types and constants found or added, the
//! entry point, decorations and built-in variables looked up. Shared by every fix-up.

use crate::Error;
use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Module, Operand};
use spirv::{BuiltIn, Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

/// A module being rewritten by the fix-ups.
pub struct Spirv {
    /// The module.
    pub m: Module,
}

/// Checks the word stream of a module: the magic number, a whole header, and every
/// instruction's word count at least 1 and inside the module (errors name the byte offset).
fn check_words(words: &[u32]) -> Result<(), Error> {
    if words.len() < 5 || words[0] != spirv::MAGIC_NUMBER {
        return Err(Error::Parse(
            "offset 0x0: not a SPIR-V module (magic or header)".into(),
        ));
    }
    let mut at = 5;
    while at < words.len() {
        let n = (words[at] >> 16) as usize;
        if n == 0 || at + n > words.len() {
            return Err(Error::Parse(format!(
                "offset {:#x}: instruction (opcode {}) of {n} words in a module of {} words",
                4 * at,
                words[at] & 0xffff,
                words.len()
            )));
        }
        at += n;
    }
    Ok(())
}

/// Checks that every type, constant and global variable uses only globals declared before it
/// (SPIR-V's rule; a forward-declared pointer type excepted), so the type graph has no cycle
/// for the fix-ups' walks to run around.
fn check_global_order(m: &Module) -> Result<(), Error> {
    let globals: std::collections::HashSet<Word> = m
        .types_global_values
        .iter()
        .filter_map(|i| i.result_id)
        .collect();
    let mut seen = std::collections::HashSet::new();
    for i in &m.types_global_values {
        if i.class.opcode == Op::TypeForwardPointer {
            if let Some(Operand::IdRef(p)) = i.operands.first() {
                seen.insert(*p);
            }
            continue;
        }
        let uses = i
            .result_type
            .into_iter()
            .chain(i.operands.iter().filter_map(|o| match o {
                Operand::IdRef(w) => Some(*w),
                _ => None,
            }));
        for u in uses {
            if globals.contains(&u) && !seen.contains(&u) {
                return Err(Error::Parse(format!(
                    "global %{} uses %{u} before it is declared",
                    i.result_id.unwrap_or(0)
                )));
            }
        }
        if let Some(r) = i.result_id {
            seen.insert(r);
        }
    }
    Ok(())
}

/// `OpX` with `operands`, no result.
pub fn inst(op: Op, operands: Vec<Operand>) -> Instruction {
    Instruction::new(op, None, None, operands)
}

/// `%id = OpX %ty operands`.
pub fn value(op: Op, ty: Word, id: Word, operands: Vec<Operand>) -> Instruction {
    Instruction::new(op, Some(ty), Some(id), operands)
}

/// The id operand `i` of `x`, if it is one.
pub fn id_operand(x: &Instruction, i: usize) -> Option<Word> {
    match x.operands.get(i) {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    }
}

impl Spirv {
    /// Parses `words`.
    /// The word stream is checked first (the header, every instruction's word count inside
    /// the module), and a panic of rspirv's loader on a malformed operand becomes an error:
    /// damaged input never panics.
    pub fn parse(words: &[u32]) -> Result<Self, Error> {
        check_words(words)?;
        let loaded = std::panic::catch_unwind(|| rspirv::dr::load_words(words));
        match loaded {
            Ok(r) => {
                let m = r.map_err(|e| Error::Parse(e.to_string()))?;
                check_global_order(&m)?;
                Ok(Spirv { m })
            }
            Err(_) => Err(Error::Parse(
                "malformed instruction operands (the SPIR-V loader gave up)".into(),
            )),
        }
    }

    /// The module's words. Types and constants the fix-ups added (appended at the end) are
    /// moved in front of their first user first.
    pub fn assemble(&mut self) -> Vec<u32> {
        self.order_globals();
        self.m.assemble()
    }

    /// Reorders `types_global_values` so that every instruction follows the globals it uses:
    /// the original order, with each not-yet-placed dependency placed just before its first
    /// user, however far it lies (an early variable re-typed to a new pointer whose new
    /// pointee was appended before it: both move up); cycles through forward pointers keep
    /// the original order.
    fn order_globals(&mut self) {
        let globals = std::mem::take(&mut self.m.types_global_values);
        let index: HashMap<Word, usize> = globals
            .iter()
            .enumerate()
            .filter_map(|(k, i)| Some((i.result_id?, k)))
            .collect();
        let mut placed = vec![false; globals.len()];
        let mut order = Vec::with_capacity(globals.len());
        fn place(
            k: usize,
            g: &[Instruction],
            index: &HashMap<Word, usize>,
            placed: &mut [bool],
            order: &mut Vec<usize>,
        ) {
            if placed[k] {
                return;
            }
            placed[k] = true;
            let deps = g[k]
                .result_type
                .into_iter()
                .chain(g[k].operands.iter().filter_map(|o| match o {
                    Operand::IdRef(w) => Some(*w),
                    _ => None,
                }));
            for d in deps.collect::<Vec<_>>() {
                if let Some(&j) = index.get(&d) {
                    place(j, g, index, placed, order);
                }
            }
            order.push(k);
        }
        for k in 0..globals.len() {
            place(k, &globals, &index, &mut placed, &mut order);
        }
        let mut slots: Vec<Option<Instruction>> = globals.into_iter().map(Some).collect();
        self.m.types_global_values = order.into_iter().filter_map(|k| slots[k].take()).collect();
    }

    /// A fresh result id.
    pub fn new_id(&mut self) -> Word {
        let h = self
            .m
            .header
            .as_mut()
            .expect("a parsed module has a header");
        let id = h.bound;
        h.bound += 1;
        id
    }

    /// The id of the global `op` with exactly `operands` (and `result_type`), added when absent.
    fn global(&mut self, op: Op, result_type: Option<Word>, operands: Vec<Operand>) -> Word {
        if let Some(i) = self.m.types_global_values.iter().find(|i| {
            i.class.opcode == op && i.result_type == result_type && i.operands == operands
        }) {
            return i.result_id.expect("types and constants have ids");
        }
        let id = self.new_id();
        self.m
            .types_global_values
            .push(Instruction::new(op, result_type, Some(id), operands));
        id
    }

    /// The type `op` with `operands` (no result type), added when absent.
    pub fn global_type(&mut self, op: Op, operands: Vec<Operand>) -> Word {
        self.global(op, None, operands)
    }

    /// `OpTypeBool`.
    pub fn type_bool(&mut self) -> Word {
        self.global(Op::TypeBool, None, vec![])
    }

    /// `OpTypeInt width signed`.
    pub fn type_int(&mut self, width: u32, signed: bool) -> Word {
        let ops = vec![
            Operand::LiteralBit32(width),
            Operand::LiteralBit32(signed as u32),
        ];
        self.global(Op::TypeInt, None, ops)
    }

    /// `OpTypeFloat width`.
    pub fn type_float(&mut self, width: u32) -> Word {
        self.global(Op::TypeFloat, None, vec![Operand::LiteralBit32(width)])
    }

    /// `OpTypeVector elem n`.
    pub fn type_vector(&mut self, elem: Word, n: u32) -> Word {
        let ops = vec![Operand::IdRef(elem), Operand::LiteralBit32(n)];
        self.global(Op::TypeVector, None, ops)
    }

    /// `OpTypePointer class ty`.
    pub fn type_pointer(&mut self, class: StorageClass, ty: Word) -> Word {
        let ops = vec![Operand::StorageClass(class), Operand::IdRef(ty)];
        self.global(Op::TypePointer, None, ops)
    }

    /// A 32-bit scalar constant of type `ty` with `bits`.
    pub fn constant32(&mut self, ty: Word, bits: u32) -> Word {
        self.global(Op::Constant, Some(ty), vec![Operand::LiteralBit32(bits)])
    }

    /// `true` or `false`.
    pub fn constant_bool(&mut self, v: bool) -> Word {
        let b = self.type_bool();
        let op = if v {
            Op::ConstantTrue
        } else {
            Op::ConstantFalse
        };
        self.global(op, Some(b), vec![])
    }

    /// `OpConstantComposite ty parts`.
    pub fn constant_composite(&mut self, ty: Word, parts: &[Word]) -> Word {
        let ops = parts.iter().map(|&p| Operand::IdRef(p)).collect();
        self.global(Op::ConstantComposite, Some(ty), ops)
    }

    /// The global instruction (type, constant, variable) defining `id`.
    pub fn global_def(&self, id: Word) -> Option<&Instruction> {
        self.m
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(id))
    }

    /// The literal of the 32-bit `OpConstant` `id` (array lengths, struct indices).
    pub fn constant_literal(&self, id: Word) -> Option<u32> {
        let d = self.global_def(id)?;
        match (d.class.opcode, d.operands.first()) {
            (Op::Constant, Some(Operand::LiteralBit32(v))) => Some(*v),
            _ => None,
        }
    }

    /// What a type is, for building constants of it.
    pub fn scalar_kind(&self, ty: Word) -> Result<(Kind, u32), Error> {
        let d = self
            .global_def(ty)
            .ok_or_else(|| Error::Unsupported(format!("type %{ty} is not declared")))?;
        let lit = |i: usize| match d.operands.get(i) {
            Some(Operand::LiteralBit32(v)) => *v,
            _ => 0,
        };
        Ok(match d.class.opcode {
            Op::TypeBool => (Kind::Bool, 1),
            Op::TypeInt if lit(1) == 1 => (Kind::Sint, lit(0)),
            Op::TypeInt => (Kind::Uint, lit(0)),
            Op::TypeFloat => (Kind::Float, lit(0)),
            op => return Err(Error::Unsupported(format!("%{ty} is {op:?}, not a scalar"))),
        })
    }

    /// A constant of type `ty` (a scalar or a vector of 32-bit or bool scalars) whose every
    /// component has `bits` (bool: non-zero is true).
    pub fn splat(&mut self, ty: Word, bits: u32) -> Result<Word, Error> {
        let d = self
            .global_def(ty)
            .ok_or_else(|| Error::Unsupported(format!("type %{ty} is not declared")))?
            .clone();
        if d.class.opcode == Op::TypeVector {
            let (Some(elem), Some(Operand::LiteralBit32(n))) =
                (id_operand(&d, 0), d.operands.get(1))
            else {
                return Err(Error::Parse(format!("malformed vector type %{ty}")));
            };
            let c = self.splat(elem, bits)?;
            let parts = vec![c; *n as usize];
            return Ok(self.constant_composite(ty, &parts));
        }
        match self.scalar_kind(ty)? {
            (Kind::Bool, _) => Ok(self.constant_bool(bits != 0)),
            (_, 32) => Ok(self.constant32(ty, bits)),
            (k, w) => Err(Error::Unsupported(format!(
                "a constant of a {w}-bit {k:?} type"
            ))),
        }
    }

    /// The decorations of `id` (`OpDecorate id D …`).
    pub fn decorations(&self, id: Word) -> impl Iterator<Item = &Instruction> {
        self.m
            .annotations
            .iter()
            .filter(move |a| a.class.opcode == Op::Decorate && id_operand(a, 0) == Some(id))
    }

    /// The literal of decoration `d` on `id` (Location, Binding, …).
    pub fn decoration_literal(&self, id: Word, d: Decoration) -> Option<u32> {
        self.decorations(id)
            .find_map(|a| match a.operands.get(1..3) {
                Some([Operand::Decoration(x), Operand::LiteralBit32(v)]) if *x == d => Some(*v),
                _ => None,
            })
    }

    /// The literal of member decoration `d` on member `m` of struct `s` (Location, Offset, …).
    pub fn member_literal(&self, s: Word, m: u32, d: Decoration) -> Option<u32> {
        self.m.annotations.iter().find_map(|a| {
            if a.class.opcode != Op::MemberDecorate || id_operand(a, 0) != Some(s) {
                return None;
            }
            match a.operands.get(1..4) {
                Some(
                    [Operand::LiteralBit32(mm), Operand::Decoration(x), Operand::LiteralBit32(v)],
                ) if *mm == m && *x == d => Some(*v),
                _ => None,
            }
        })
    }

    /// Adds `OpDecorate id d value`.
    pub fn decorate(&mut self, id: Word, d: Decoration, value: u32) {
        let ops = vec![
            Operand::IdRef(id),
            Operand::Decoration(d),
            Operand::LiteralBit32(value),
        ];
        self.m.annotations.push(inst(Op::Decorate, ops));
    }

    /// The built-in `id` is decorated with.
    pub fn builtin_of(&self, id: Word) -> Option<BuiltIn> {
        self.decorations(id)
            .find_map(|a| match a.operands.get(1..3) {
                Some([Operand::Decoration(Decoration::BuiltIn), Operand::BuiltIn(b)]) => Some(*b),
                _ => None,
            })
    }

    /// Module-scope `OpVariable`s of `class`: (variable, pointer type).
    pub fn variables(&self, class: StorageClass) -> Vec<(Word, Word)> {
        self.m
            .types_global_values
            .iter()
            .filter(|i| {
                i.class.opcode == Op::Variable
                    && i.operands.first() == Some(&Operand::StorageClass(class))
            })
            .filter_map(|i| Some((i.result_id?, i.result_type?)))
            .collect()
    }

    /// The pointee of pointer type `ptr`.
    pub fn pointee(&self, ptr: Word) -> Option<Word> {
        let d = self.global_def(ptr)?;
        (d.class.opcode == Op::TypePointer)
            .then(|| id_operand(d, 1))
            .flatten()
    }

    /// The one entry point: (index in `entry_points`, its function id, its name).
    pub fn entry(&self) -> Result<(usize, Word, String), Error> {
        if self.m.entry_points.len() != 1 {
            return Err(Error::Unsupported(format!(
                "{} entry points; the fix-ups take modules with one",
                self.m.entry_points.len()
            )));
        }
        let e = &self.m.entry_points[0];
        let f = id_operand(e, 1)
            .ok_or_else(|| Error::Parse("OpEntryPoint without a function".into()))?;
        let name = match e.operands.get(2) {
            Some(Operand::LiteralString(s)) => s.clone(),
            _ => return Err(Error::Parse("OpEntryPoint without a name".into())),
        };
        Ok((0, f, name))
    }

    /// The index in `functions` of function `id`.
    pub fn function_index(&self, id: Word) -> Result<usize, Error> {
        self.m
            .functions
            .iter()
            .position(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(id))
            .ok_or_else(|| Error::Parse(format!("no function %{id}")))
    }

    /// Adds `var` to every entry point's interface.
    pub fn add_interface(&mut self, var: Word) {
        for e in &mut self.m.entry_points {
            e.operands.push(Operand::IdRef(var));
        }
    }

    /// Removes `var` from every entry point's interface, its decorations and names, and the
    /// variable itself.
    pub fn remove_variable(&mut self, var: Word) {
        for e in &mut self.m.entry_points {
            e.operands.retain(|o| *o != Operand::IdRef(var));
        }
        self.m.annotations.retain(|a| id_operand(a, 0) != Some(var));
        self.m.debug_names.retain(|a| id_operand(a, 0) != Some(var));
        self.m
            .types_global_values
            .retain(|i| i.result_id != Some(var));
    }

    /// The result type of every value defined in a function (instruction results and
    /// parameters).
    pub fn value_types(&self) -> HashMap<Word, Word> {
        let mut t = HashMap::new();
        for f in &self.m.functions {
            for i in f
                .parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
            {
                if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
                    t.insert(id, ty);
                }
            }
        }
        for i in &self.m.types_global_values {
            if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
                t.insert(id, ty);
            }
        }
        t
    }
}

/// The kind of a scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `OpTypeBool`.
    Bool,
    /// Signed integer.
    Sint,
    /// Unsigned integer.
    Uint,
    /// Floating point.
    Float,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The int_inputs case: an early variable re-typed to a pointer appended after the
    /// vector type it points to (both new) — every global must follow what it uses.
    #[test]
    fn globals_follow_their_dependencies_after_retyping() {
        let mut b = rspirv::dr::Builder::new();
        b.memory_model(spirv::AddressingModel::Logical, spirv::MemoryModel::GLSL450);
        let f = b.type_float(32);
        let v4f = b.type_vector(f, 4);
        let pf = b.type_pointer(None, StorageClass::Input, v4f);
        let var = b.variable(pf, None, StorageClass::Input, None);
        let mut sp = Spirv { m: b.module() };
        let i = sp.type_int(32, false);
        let v4 = sp.type_vector(i, 4);
        let p = sp.type_pointer(StorageClass::Input, v4);
        let d =
            sp.m.types_global_values
                .iter_mut()
                .find(|g| g.result_id == Some(var))
                .unwrap();
        d.result_type = Some(p);
        sp.order_globals();
        let pos = |id: Word| {
            sp.m.types_global_values
                .iter()
                .position(|g| g.result_id == Some(id))
                .unwrap()
        };
        assert!(pos(i) < pos(v4) && pos(v4) < pos(p) && pos(p) < pos(var));
    }
}
