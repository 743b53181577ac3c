//! `fix_strides` (seed 000, "Seen in Super Mario Galaxy (Vulkan)"): the game's run-time SPIR-V
//! puts `ArrayStride` on the struct member (`OpMemberDecorate %S m ArrayStride s`) instead of
//! on the member's array type. NVIDIA's driver accepts it; spirv-val and SPIRV-Cross refuse it
//! ("Struct member does not have ArrayStride set"). The fix-up moves each such decoration onto
//! the array type (`OpDecorate %T ArrayStride s`):
//!
//! - a type that already has that stride (or gets it from another member first) is left;
//! - a type two members share with different strides is cloned (a new `OpTypeArray` with the
//!   same operands) for each other stride, and the member takes the clone; access chains that
//!   end at that member get a pointer to the clone, and loads through them the clone's type
//!   (element accesses through the member are typed by the element and need nothing).

use crate::module::{id_operand, Spirv};
use crate::Error;
use rspirv::dr::{Instruction, Operand};
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

/// What [`run`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strides {
    /// `OpMemberDecorate … ArrayStride` decorations moved.
    pub moved: usize,
    /// Array types cloned because members sharing them wanted different strides.
    pub cloned: usize,
}

/// One misplaced decoration: struct, member, stride.
type MemberStride = (Word, u32, u32);

fn member_strides(sp: &Spirv) -> Vec<MemberStride> {
    sp.m.annotations
        .iter()
        .filter(|a| a.class.opcode == Op::MemberDecorate)
        .filter_map(|a| match a.operands.as_slice() {
            [Operand::IdRef(s), Operand::LiteralBit32(m), Operand::Decoration(Decoration::ArrayStride), Operand::LiteralBit32(v)] => {
                Some((*s, *m, *v))
            }
            _ => None,
        })
        .collect()
}

/// Moves every member `ArrayStride` onto its array type (cloning shared types whose members
/// disagree).
pub fn run(sp: &mut Spirv) -> Result<Strides, Error> {
    let misplaced = member_strides(sp);
    let mut done = Strides::default();
    if misplaced.is_empty() {
        return Ok(done);
    }
    // The stride each array type has (declared, or given here first).
    let mut stride: HashMap<Word, u32> = HashMap::new();
    let mut clones: HashMap<(Word, u32), Word> = HashMap::new();
    // (struct, member) → the clone it now has.
    let mut retyped: HashMap<(Word, u32), Word> = HashMap::new();
    for &(s, m, v) in &misplaced {
        let def = sp
            .global_def(s)
            .filter(|d| d.class.opcode == Op::TypeStruct)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "fix_strides: ArrayStride on member {m} of %{s}, which is not a struct"
                ))
            })?;
        let t = id_operand(def, m as usize)
            .ok_or_else(|| Error::Parse(format!("fix_strides: %{s} has no member {m}")))?;
        let tdef = sp
            .global_def(t)
            .filter(|d| matches!(d.class.opcode, Op::TypeArray | Op::TypeRuntimeArray))
            .cloned()
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "fix_strides: ArrayStride on member {m} of %{s}, whose type %{t} is not an array"
                ))
            })?;
        let have = match stride.get(&t) {
            Some(h) => Some(*h),
            None => sp.decoration_literal(t, Decoration::ArrayStride),
        };
        match have {
            None => {
                sp.decorate(t, Decoration::ArrayStride, v);
                stride.insert(t, v);
            }
            Some(h) if h == v => {
                stride.insert(t, v);
            }
            Some(h) => {
                stride.insert(t, h);
                let c = match clones.get(&(t, v)) {
                    Some(c) => *c,
                    None => {
                        let c = sp.new_id();
                        let mut i = tdef.clone();
                        i.result_id = Some(c);
                        sp.m.types_global_values.push(i);
                        sp.decorate(c, Decoration::ArrayStride, v);
                        clones.insert((t, v), c);
                        done.cloned += 1;
                        c
                    }
                };
                let def =
                    sp.m.types_global_values
                        .iter_mut()
                        .find(|i| i.result_id == Some(s))
                        .expect("the struct was found above");
                def.operands[m as usize] = Operand::IdRef(c);
                retyped.insert((s, m), c);
            }
        }
        done.moved += 1;
    }
    sp.m.annotations.retain(|a| {
        !(a.class.opcode == Op::MemberDecorate
            && matches!(
                a.operands.get(2),
                Some(Operand::Decoration(Decoration::ArrayStride))
            ))
    });
    if !retyped.is_empty() {
        retype_member_accesses(sp, &retyped);
    }
    Ok(done)
}

/// Where an access chain ends: (storage class, the (struct, member) its last index selects,
/// when that is a struct member).
fn chain_end(
    sp: &Spirv,
    i: &Instruction,
    types: &HashMap<Word, Word>,
) -> Option<(StorageClass, (Word, u32))> {
    let base = id_operand(i, 0)?;
    let ptr = types.get(&base)?;
    let pdef = sp.global_def(*ptr)?;
    let class = match pdef.operands.first() {
        Some(Operand::StorageClass(c)) => *c,
        _ => return None,
    };
    let mut ty = id_operand(pdef, 1)?;
    let mut last = None;
    for k in 1..i.operands.len() {
        let d = sp.global_def(ty)?;
        let idx = id_operand(i, k)?;
        last = None;
        ty = match d.class.opcode {
            Op::TypeStruct => {
                let m = sp.constant_literal(idx)?;
                last = Some((ty, m));
                id_operand(d, m as usize)?
            }
            Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector | Op::TypeMatrix => {
                id_operand(d, 0)?
            }
            _ => return None,
        };
    }
    Some((class, last?))
}

/// Access chains ending at a retyped member point to its clone; loads through them load it.
fn retype_member_accesses(sp: &mut Spirv, retyped: &HashMap<(Word, u32), Word>) {
    let types = sp.value_types();
    let mut chains: Vec<(usize, usize, usize, StorageClass, Word)> = Vec::new();
    for (fi, f) in sp.m.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, i) in b.instructions.iter().enumerate() {
                if !matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain) {
                    continue;
                }
                if let Some((class, end)) = chain_end(sp, i, &types) {
                    if let Some(c) = retyped.get(&end) {
                        chains.push((fi, bi, ii, class, *c));
                    }
                }
            }
        }
    }
    let mut pointers: HashMap<Word, Word> = HashMap::new();
    for (fi, bi, ii, class, c) in chains {
        let p = sp.type_pointer(class, c);
        let i = &mut sp.m.functions[fi].blocks[bi].instructions[ii];
        i.result_type = Some(p);
        pointers.insert(i.result_id.expect("access chains have results"), c);
    }
    for f in &mut sp.m.functions {
        for b in &mut f.blocks {
            for i in &mut b.instructions {
                if i.class.opcode == Op::Load {
                    if let Some(c) = id_operand(i, 0).and_then(|p| pointers.get(&p)) {
                        i.result_type = Some(*c);
                    }
                }
            }
        }
    }
}
