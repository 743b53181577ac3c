//! `vs_depth` (seed 000 §5, depth convention): NVN's depth mode is run-time state. A game in
//! GL mode (near = −w, NVN's default) needs its clip-space z moved into Metal's [0, w] by
//! z' = z/2 + w/2; a game that set near = 0 needs z untouched. Every vertex library therefore
//! holds two entry points and the host picks one when it loads the shader (no function
//! constants: specialising one costs about 2.4 ms per vertex shader on an M4 Pro):
//!
//! - `main` (MSL `main0`): the shader, then `gl_Position.z = (z + w) * 0.5` before every return
//!   (one rounding, `NoContraction`: the same value as z/2 + w/2, both halvings being exact);
//! - `main_z` (MSL `main0_z`): the shader as it is, a copy of the entry function with fresh ids
//!   (its decorations and execution modes copied too).

use crate::module::{id_operand, inst, value, Spirv};
use crate::Error;
use rspirv::dr::{Function, Instruction, Operand};
use spirv::{BuiltIn, Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

/// The SPIR-V name of the depth-as-is entry point.
pub const ENTRY_Z: &str = "main_z";

/// Adds [`ENTRY_Z`] (a copy of the entry point) and appends the GL depth rewrite to the
/// original entry point. Returns whether there was a position to rewrite: a vertex function
/// that writes none (a lowered geometry shader's draw when the shader emits no vertex) gets
/// the two entry points all the same, identical.
pub fn run(sp: &mut Spirv) -> Result<bool, Error> {
    let (_, fid, _) = sp.entry()?;
    let fi = sp.function_index(fid)?;
    let pos = position(sp).ok();
    let copy = clone_function(sp, fi);
    let new_fid = copy
        .def
        .as_ref()
        .and_then(|d| d.result_id)
        .expect("cloned def");
    sp.m.functions.push(copy);
    let mut e = sp.m.entry_points[0].clone();
    e.operands[1] = Operand::IdRef(new_fid);
    e.operands[2] = Operand::LiteralString(ENTRY_Z.into());
    sp.m.entry_points.push(e);
    let modes: Vec<Instruction> =
        sp.m.execution_modes
            .iter()
            .filter(|m| id_operand(m, 0) == Some(fid))
            .cloned()
            .collect();
    for mut m in modes {
        m.operands[0] = Operand::IdRef(new_fid);
        sp.m.execution_modes.push(m);
    }
    let Some((pos, comp)) = pos else {
        return Ok(false);
    };
    rewrite_returns(sp, fi, pos, comp)?;
    Ok(true)
}

/// The output position: (variable, member index when it is in a `gl_PerVertex` block).
fn position(sp: &Spirv) -> Result<(Word, Option<u32>), Error> {
    for (var, ptr) in sp.variables(StorageClass::Output) {
        if sp.builtin_of(var) == Some(BuiltIn::Position) {
            return Ok((var, None));
        }
        let Some(ty) = sp.pointee(ptr) else { continue };
        let member = sp.m.annotations.iter().find_map(|a| {
            (a.class.opcode == Op::MemberDecorate && id_operand(a, 0) == Some(ty))
                .then(|| match a.operands.get(1..4) {
                    Some(
                        [Operand::LiteralBit32(m), Operand::Decoration(Decoration::BuiltIn), Operand::BuiltIn(BuiltIn::Position)],
                    ) => Some(*m),
                    _ => None,
                })
                .flatten()
        });
        if let Some(m) = member {
            return Ok((var, Some(m)));
        }
    }
    Err(Error::Unsupported(
        "vs_depth: the vertex shader writes no position".into(),
    ))
}

/// A copy of function `fi` with every id it defines renamed, and the decorations of those ids
/// copied to the new ones.
fn clone_function(sp: &mut Spirv, fi: usize) -> Function {
    let mut f = sp.m.functions[fi].clone();
    let mut map: HashMap<Word, Word> = HashMap::new();
    let defs = f
        .def
        .iter()
        .chain(&f.parameters)
        .chain(
            f.blocks
                .iter()
                .flat_map(|b| b.label.iter().chain(&b.instructions)),
        )
        .filter_map(|i| i.result_id)
        .collect::<Vec<_>>();
    for d in defs {
        let n = sp.new_id();
        map.insert(d, n);
    }
    let rename = |i: &mut Instruction| {
        if let Some(r) = i.result_id.as_mut() {
            *r = map[r];
        }
        for o in &mut i.operands {
            if let Operand::IdRef(w) = o {
                if let Some(n) = map.get(w) {
                    *w = *n;
                }
            }
        }
    };
    f.def.iter_mut().for_each(rename);
    f.parameters.iter_mut().for_each(rename);
    for b in &mut f.blocks {
        b.label.iter_mut().for_each(rename);
        b.instructions.iter_mut().for_each(rename);
    }
    let copied: Vec<Instruction> =
        sp.m.annotations
            .iter()
            .filter(|a| a.class.opcode == Op::Decorate)
            .filter_map(|a| {
                let n = map.get(&id_operand(a, 0)?)?;
                let mut c = a.clone();
                c.operands[0] = Operand::IdRef(*n);
                Some(c)
            })
            .collect();
    sp.m.annotations.extend(copied);
    f
}

/// Inserts `pos.z = (pos.z + pos.w) * 0.5` before every `OpReturn` of function `fi`.
fn rewrite_returns(sp: &mut Spirv, fi: usize, pos: Word, member: Option<u32>) -> Result<(), Error> {
    let f32t = sp.type_float(32);
    let v4 = sp.type_vector(f32t, 4);
    let half = sp.constant32(f32t, 0.5f32.to_bits());
    let ptr_ty = sp.type_pointer(StorageClass::Output, v4);
    let member_index = match member {
        Some(m) => {
            let i32t = sp.type_int(32, true);
            Some(sp.constant32(i32t, m))
        }
        None => None,
    };
    let blocks = sp.m.functions[fi].blocks.len();
    for bi in 0..blocks {
        let ends_in_return = sp.m.functions[fi].blocks[bi]
            .instructions
            .last()
            .is_some_and(|i| i.class.opcode == Op::Return);
        if !ends_in_return {
            continue;
        }
        let mut seq = Vec::new();
        let ptr = match member_index {
            Some(m) => {
                let p = sp.new_id();
                seq.push(value(
                    Op::AccessChain,
                    ptr_ty,
                    p,
                    vec![Operand::IdRef(pos), Operand::IdRef(m)],
                ));
                p
            }
            None => pos,
        };
        let [p, z, w, s, h, q] = [(); 6].map(|_| sp.new_id());
        seq.push(value(Op::Load, v4, p, vec![Operand::IdRef(ptr)]));
        for (id, c) in [(z, 2), (w, 3)] {
            seq.push(value(
                Op::CompositeExtract,
                f32t,
                id,
                vec![Operand::IdRef(p), Operand::LiteralBit32(c)],
            ));
        }
        seq.push(value(
            Op::FAdd,
            f32t,
            s,
            vec![Operand::IdRef(z), Operand::IdRef(w)],
        ));
        seq.push(value(
            Op::FMul,
            f32t,
            h,
            vec![Operand::IdRef(s), Operand::IdRef(half)],
        ));
        seq.push(value(
            Op::CompositeInsert,
            v4,
            q,
            vec![
                Operand::IdRef(h),
                Operand::IdRef(p),
                Operand::LiteralBit32(2),
            ],
        ));
        seq.push(inst(
            Op::Store,
            vec![Operand::IdRef(ptr), Operand::IdRef(q)],
        ));
        for id in [s, h] {
            sp.m.annotations.push(inst(
                Op::Decorate,
                vec![
                    Operand::IdRef(id),
                    Operand::Decoration(Decoration::NoContraction),
                ],
            ));
        }
        let ins = &mut sp.m.functions[fi].blocks[bi].instructions;
        let at = ins.len() - 1;
        ins.splice(at..at, seq);
    }
    Ok(())
}
