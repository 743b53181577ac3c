//! `int_inputs` (seed 000, "Integer vertex inputs"): a Maxwell attribute is an untyped slot,
//! and without pipeline state the translator declares every vertex input `float4` and moves
//! its bits into integer registers. Skinned models read their bone indices as raw integer bits;
//! Metal converts an integer vertex format to float for a float input, so every index is
//! garbage. A vertex input whose components are only ever used as integers is therefore
//! declared as an integer vector, so the host binds it with an integer Metal vertex format:
//!
//! - the input's components are read through `OpAccessChain` + `OpLoad` and every load is
//!   `OpBitcast` to a 32-bit integer at once (the translator's register move);
//! - no value derived from those integers by moves (`OpCopyObject`, `OpPhi`, `OpSelect`,
//!   integer `OpBitcast`) is bit-cast back to a float, or stored to memory;
//! - `sint` when some component is reinterpreted as signed right after the move (`OpBitcast`
//!   to a signed integer: I2F.S32, signed compares and shifts), else `uint`. For 32-bit
//!   formats the sign does not change the bits; for 8- and 16-bit ones it is the host's hint
//!   (seed 000: the host widens a format of the other sign on the CPU).
//!
//! Inputs the facts typed (shader_facts_manual.tsv) are already integer and are left alone;
//! the reflection's `inputs` records the declared type either way.

use crate::module::{id_operand, value, Kind, Spirv};
use crate::Error;
use rspirv::dr::{Instruction, Operand};
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// Every use of every value: value → (function, block, instruction) positions.
type Uses = HashMap<Word, Vec<(usize, usize, usize)>>;

fn uses(sp: &Spirv) -> Uses {
    let mut u: Uses = HashMap::new();
    for (fi, f) in sp.m.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, i) in b.instructions.iter().enumerate() {
                for o in &i.operands {
                    if let Operand::IdRef(w) = o {
                        u.entry(*w).or_default().push((fi, bi, ii));
                    }
                }
            }
        }
    }
    u
}

/// The instruction at a use position.
fn at(sp: &Spirv, p: (usize, usize, usize)) -> &Instruction {
    &sp.m.functions[p.0].blocks[p.1].instructions[p.2]
}

/// The scalar kind of a scalar or vector value type.
fn kind_of(sp: &Spirv, ty: Word) -> Option<(Kind, u32)> {
    let d = sp.global_def(ty)?;
    if d.class.opcode == Op::TypeVector {
        return sp.scalar_kind(id_operand(d, 0)?).ok();
    }
    sp.scalar_kind(ty).ok()
}

/// What an input's uses say: `None` when a float use (or an unknown one) keeps it float.
fn integer_kind(sp: &Spirv, var: Word, uses: &Uses, types: &HashMap<Word, Word>) -> Option<Kind> {
    let mut moves: Vec<Word> = Vec::new();
    for &p in uses.get(&var)? {
        let chain = at(sp, p);
        if chain.class.opcode != Op::AccessChain || id_operand(chain, 0) != Some(var) {
            return None;
        }
        for &q in uses.get(&chain.result_id?).into_iter().flatten() {
            let load = at(sp, q);
            if load.class.opcode != Op::Load {
                return None;
            }
            for &r in uses.get(&load.result_id?).into_iter().flatten() {
                let b = at(sp, r);
                match (b.class.opcode, kind_of(sp, b.result_type?)) {
                    (Op::Bitcast, Some((Kind::Uint | Kind::Sint, 32))) => moves.push(b.result_id?),
                    _ => return None,
                }
            }
        }
    }
    if moves.is_empty() {
        return None;
    }
    let mut signed = false;
    for &m in &moves {
        let own = types.get(&m).and_then(|&t| kind_of(sp, t));
        signed |= matches!(own, Some((Kind::Sint, _)));
        for &p in uses.get(&m).into_iter().flatten() {
            let i = at(sp, p);
            signed |= i.class.opcode == Op::Bitcast
                && matches!(
                    i.result_type.and_then(|t| kind_of(sp, t)),
                    Some((Kind::Sint, _))
                );
        }
    }
    // Everything the moved integers flow into by moves: never back to a float, never to memory.
    let mut seen: HashSet<Word> = moves.iter().copied().collect();
    let mut work = moves;
    while let Some(v) = work.pop() {
        for &p in uses.get(&v).into_iter().flatten() {
            let i = at(sp, p);
            let ty = i.result_type.and_then(|t| kind_of(sp, t));
            match i.class.opcode {
                Op::Store => return None,
                Op::Bitcast | Op::CopyObject | Op::Phi | Op::Select => match ty {
                    Some((Kind::Float, _)) | None => return None,
                    _ => {
                        let r = i.result_id?;
                        if seen.insert(r) {
                            work.push(r);
                        }
                    }
                },
                _ => {}
            }
        }
    }
    Some(if signed { Kind::Sint } else { Kind::Uint })
}

/// Declares every vertex input used only as integers as an integer vector; returns the
/// (location, `uint` | `sint`) of each one changed.
pub fn run(sp: &mut Spirv) -> Result<Vec<(u32, &'static str)>, Error> {
    let f32t = sp.type_float(32);
    let v4f = sp.type_vector(f32t, 4);
    let u = uses(sp);
    let types = sp.value_types();
    let mut changed = Vec::new();
    let mut plan: Vec<(Word, Kind)> = Vec::new();
    for (var, ptr) in sp.variables(StorageClass::Input) {
        if sp.builtin_of(var).is_some() || sp.pointee(ptr) != Some(v4f) {
            continue;
        }
        let Some(loc) = sp.decoration_literal(var, Decoration::Location) else {
            continue;
        };
        if let Some(k) = integer_kind(sp, var, &u, &types) {
            plan.push((var, k));
            changed.push((loc, if k == Kind::Sint { "sint" } else { "uint" }));
        }
    }
    for (var, k) in plan {
        let scalar = sp.type_int(32, k == Kind::Sint);
        let v4 = sp.type_vector(scalar, 4);
        let var_ptr = sp.type_pointer(StorageClass::Input, v4);
        let comp_ptr = sp.type_pointer(StorageClass::Input, scalar);
        if let Some(d) =
            sp.m.types_global_values
                .iter_mut()
                .find(|i| i.result_id == Some(var))
        {
            d.result_type = Some(var_ptr);
        }
        // Chains → loads → bit casts, in the order found (the uses map is from before).
        for &p in &u[&var] {
            let chain_id = {
                let c = &mut sp.m.functions[p.0].blocks[p.1].instructions[p.2];
                c.result_type = Some(comp_ptr);
                c.result_id.expect("an access chain has a result")
            };
            for &q in u.get(&chain_id).into_iter().flatten() {
                let load_id = {
                    let l = &mut sp.m.functions[q.0].blocks[q.1].instructions[q.2];
                    l.result_type = Some(scalar);
                    l.result_id.expect("a load has a result")
                };
                for &r in u.get(&load_id).into_iter().flatten() {
                    let b = &mut sp.m.functions[r.0].blocks[r.1].instructions[r.2];
                    let (ty, id) = (b.result_type.unwrap_or(0), b.result_id.unwrap_or(0));
                    let op = if ty == scalar {
                        Op::CopyObject
                    } else {
                        Op::Bitcast
                    };
                    *b = value(op, ty, id, vec![Operand::IdRef(load_id)]);
                }
            }
        }
    }
    Ok(changed)
}
