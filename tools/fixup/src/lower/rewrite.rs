//! Module-wide rewrites the lowering makes: interface variables moved to another storage
//! class (with every pointer derived from them), their interface decorations dropped, the
//! entry point's execution model, modes, function and interface replaced, capabilities
//! edited, dead globals removed.

use super::iface::{array_of, struct_members};
use crate::module::{id_operand, inst, Spirv};
use crate::Error;
use rspirv::dr::{Instruction, Operand};
use spirv::{Capability, Decoration, ExecutionMode, ExecutionModel, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// Moves each variable to its new storage class: the variable's pointer type, and the result
/// type of every access chain or copy derived from it. Fails when such a pointer is passed to
/// a function or selected between (the lowering does not follow pointers through calls).
pub(crate) fn retype(sp: &mut Spirv, vars: &[(Word, StorageClass)]) -> Result<(), Error> {
    let mut class: HashMap<Word, StorageClass> = vars.iter().copied().collect();
    for &(var, c) in vars {
        let Some(i) =
            sp.m.types_global_values
                .iter()
                .position(|g| g.result_id == Some(var))
        else {
            return Err(Error::Parse(format!("no variable %{var}")));
        };
        let old = sp.m.types_global_values[i].result_type.unwrap_or(0);
        let pointee = sp
            .pointee(old)
            .ok_or_else(|| Error::Parse(format!("%{var}: not a pointer")))?;
        let p = sp.type_pointer(c, pointee);
        let g = &mut sp.m.types_global_values[i];
        g.result_type = Some(p);
        g.operands[0] = Operand::StorageClass(c);
        if g.operands.len() > 1 && c == StorageClass::Workgroup {
            // Workgroup variables take no initializer.
            g.operands.truncate(1);
        }
    }
    let mut new_types: Vec<(usize, usize, usize, Word, StorageClass)> = Vec::new();
    for (fi, f) in sp.m.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, i) in b.instructions.iter().enumerate() {
                let derived = matches!(
                    i.class.opcode,
                    Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::CopyObject
                );
                if derived {
                    if let Some(c) = id_operand(i, 0).and_then(|b| class.get(&b)).copied() {
                        if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                            class.insert(r, c);
                            new_types.push((fi, bi, ii, t, c));
                        }
                        continue;
                    }
                }
                let passes = i
                    .operands
                    .iter()
                    .any(|o| matches!(o, Operand::IdRef(w) if class.contains_key(w)));
                if passes
                    && matches!(
                        i.class.opcode,
                        Op::FunctionCall | Op::Phi | Op::Select | Op::PtrEqual | Op::PtrNotEqual
                    )
                {
                    return Err(Error::Unsupported(format!(
                        "a pointer into a stage input or output goes through {:?} (the \
                         lowering follows access chains only)",
                        i.class.opcode
                    )));
                }
            }
        }
    }
    for (fi, bi, ii, t, c) in new_types {
        let pointee = sp
            .pointee(t)
            .ok_or_else(|| Error::Parse(format!("%{t}: not a pointer type")))?;
        let p = sp.type_pointer(c, pointee);
        sp.m.functions[fi].blocks[bi].instructions[ii].result_type = Some(p);
    }
    Ok(())
}

/// Struct types reachable from `ty` through arrays and struct members.
fn structs_in(sp: &Spirv, ty: Word, out: &mut HashSet<Word>) {
    if let Some((e, _)) = array_of(sp, ty) {
        return structs_in(sp, e, out);
    }
    if let Some(ms) = struct_members(sp, ty) {
        if out.insert(ty) {
            for m in ms {
                structs_in(sp, m, out);
            }
        }
    }
}

/// Interface decorations, dropped from variables that stop being stage inputs or outputs.
fn interface_decoration(d: Decoration) -> bool {
    !matches!(
        d,
        Decoration::RelaxedPrecision | Decoration::NoContraction | Decoration::Restrict
    )
}

/// Drops the interface decorations of `vars` (which stop being stage inputs or outputs) and
/// of the struct types only they hold (`Block`, member built-ins, locations, interpolation).
/// Fails when such a struct is also a remaining input's or output's.
pub(crate) fn strip(sp: &mut Spirv, vars: &[Word]) -> Result<(), Error> {
    let gone: HashSet<Word> = vars.iter().copied().collect();
    let mut mine = HashSet::new();
    for &v in vars {
        if let Some(t) = sp.global_def(v).and_then(|d| d.result_type) {
            if let Some(p) = sp.pointee(t) {
                structs_in(sp, p, &mut mine);
            }
        }
    }
    let mut kept = HashSet::new();
    for class in [StorageClass::Input, StorageClass::Output] {
        for (v, p) in sp.variables(class) {
            if !gone.contains(&v) {
                if let Some(t) = sp.pointee(p) {
                    structs_in(sp, t, &mut kept);
                }
            }
        }
    }
    if let Some(s) = mine.intersection(&kept).next() {
        return Err(Error::Unsupported(format!(
            "struct type %{s} is both a lowered interface variable's and a remaining one's"
        )));
    }
    sp.m.annotations.retain(|a| {
        let target = id_operand(a, 0).unwrap_or(0);
        match a.class.opcode {
            Op::Decorate if gone.contains(&target) || mine.contains(&target) => {
                !matches!(a.operands.get(1), Some(Operand::Decoration(d)) if interface_decoration(*d))
            }
            Op::MemberDecorate if mine.contains(&target) => {
                !matches!(a.operands.get(2), Some(Operand::Decoration(d)) if interface_decoration(*d))
            }
            _ => true,
        }
    });
    Ok(())
}

/// Replaces the entry point's execution model and function (`main`), keeps the execution
/// modes `keep` accepts (moved to the new function) and adds `add`.
pub(crate) fn set_entry(
    sp: &mut Spirv,
    model: ExecutionModel,
    main: Word,
    keep: impl Fn(ExecutionMode) -> bool,
    add: &[(ExecutionMode, Vec<u32>)],
) -> Result<(), Error> {
    let (_, old, name) = sp.entry()?;
    // The shader's own function keeps running under the new entry function: its name must
    // not be the entry point's (SPIRV-Cross would give both the entry point's MSL name).
    for n in &mut sp.m.debug_names {
        if n.class.opcode == Op::Name && id_operand(n, 0) == Some(old) {
            n.operands[1] = Operand::LiteralString(format!("{name}_shader"));
        }
    }
    let e = &mut sp.m.entry_points[0];
    e.operands[0] = Operand::ExecutionModel(model);
    e.operands[1] = Operand::IdRef(main);
    sp.m.execution_modes.retain_mut(|m| {
        if id_operand(m, 0) != Some(old) {
            return true;
        }
        match m.operands.get(1) {
            Some(Operand::ExecutionMode(x)) if keep(*x) => {
                m.operands[0] = Operand::IdRef(main);
                true
            }
            _ => false,
        }
    });
    for (mode, args) in add {
        let mut ops = vec![Operand::IdRef(main), Operand::ExecutionMode(*mode)];
        ops.extend(args.iter().map(|&a| Operand::LiteralBit32(a)));
        sp.m.execution_modes.push(inst(Op::ExecutionMode, ops));
    }
    Ok(())
}

/// Every id the functions refer to.
fn referenced(sp: &Spirv) -> HashSet<Word> {
    let mut r = HashSet::new();
    for f in &sp.m.functions {
        for i in f
            .def
            .iter()
            .chain(&f.parameters)
            .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
        {
            for o in &i.operands {
                if let Operand::IdRef(w) = o {
                    r.insert(*w);
                }
            }
        }
    }
    r
}

/// Removes functions the entry point does not reach, then module-scope variables no function
/// refers to (with their decorations and names).
pub(crate) fn remove_dead(sp: &mut Spirv) -> Result<(), Error> {
    let (_, main, _) = sp.entry()?;
    let mut live: HashSet<Word> = [main].into();
    let mut work = vec![main];
    while let Some(f) = work.pop() {
        let Ok(fi) = sp.function_index(f) else {
            continue;
        };
        for i in sp.m.functions[fi]
            .blocks
            .iter()
            .flat_map(|b| b.instructions.iter())
        {
            if i.class.opcode == Op::FunctionCall {
                if let Some(g) = id_operand(i, 0) {
                    if live.insert(g) {
                        work.push(g);
                    }
                }
            }
        }
    }
    sp.m.functions.retain(|f| {
        f.def
            .as_ref()
            .and_then(|d| d.result_id)
            .is_some_and(|id| live.contains(&id))
    });
    let used = referenced(sp);
    let dead: Vec<Word> =
        sp.m.types_global_values
            .iter()
            .filter(|g| g.class.opcode == Op::Variable)
            .filter_map(|g| g.result_id)
            .filter(|v| !used.contains(v))
            .collect();
    for v in dead {
        sp.remove_variable(v);
    }
    // Names and decorations of what the removed functions defined.
    let mut defined: HashSet<Word> = HashSet::new();
    for i in
        sp.m.types_global_values
            .iter()
            .chain(&sp.m.ext_inst_imports)
            .chain(sp.m.functions.iter().flat_map(|f| {
                f.def.iter().chain(&f.parameters).chain(
                    f.blocks
                        .iter()
                        .flat_map(|b| b.label.iter().chain(&b.instructions)),
                )
            }))
    {
        defined.extend(i.result_id);
    }
    let known = |i: &Instruction| id_operand(i, 0).is_none_or(|t| defined.contains(&t));
    sp.m.debug_names.retain(known);
    sp.m.annotations.retain(known);
    Ok(())
}

/// Sets the entry point's interface: the module's input and output variables, and from
/// SPIR-V 1.4 on every module-scope variable (the rule for that version).
pub(crate) fn set_interface(sp: &mut Spirv) {
    let all = sp.m.header.as_ref().map_or((1, 0), |h| h.version()) >= (1, 4);
    let vars: Vec<Word> =
        sp.m.types_global_values
            .iter()
            .filter(|g| g.class.opcode == Op::Variable)
            .filter(|g| {
                all || matches!(
                    g.operands.first(),
                    Some(Operand::StorageClass(
                        StorageClass::Input | StorageClass::Output
                    ))
                )
            })
            .filter_map(|g| g.result_id)
            .collect();
    for e in &mut sp.m.entry_points {
        e.operands.truncate(3);
        e.operands.extend(vars.iter().map(|&v| Operand::IdRef(v)));
    }
}

/// Removes capabilities `remove` and adds `add` (each once).
pub(crate) fn capabilities(sp: &mut Spirv, remove: &[Capability], add: &[Capability]) {
    sp.m.capabilities.retain(
        |c| !matches!(c.operands.first(), Some(Operand::Capability(x)) if remove.contains(x)),
    );
    for &c in add {
        let has =
            sp.m.capabilities
                .iter()
                .any(|x| x.operands.first() == Some(&Operand::Capability(c)));
        if !has {
            sp.m.capabilities
                .push(inst(Op::Capability, vec![Operand::Capability(c)]));
        }
    }
}

/// Adds extension `name` once.
pub(crate) fn extension(sp: &mut Spirv, name: &str) {
    let has =
        sp.m.extensions
            .iter()
            .any(|e| e.operands.first() == Some(&Operand::LiteralString(name.into())));
    if !has {
        sp.m.extensions.push(inst(
            Op::Extension,
            vec![Operand::LiteralString(name.into())],
        ));
    }
}

/// Replaces every instruction of every function for which `f` gives a replacement.
pub(crate) fn replace(sp: &mut Spirv, mut f: impl FnMut(&Instruction) -> Option<Vec<Instruction>>) {
    for func in &mut sp.m.functions {
        for b in &mut func.blocks {
            let mut out = Vec::with_capacity(b.instructions.len());
            for i in b.instructions.drain(..) {
                match f(&i) {
                    Some(r) => out.extend(r),
                    None => out.push(i),
                }
            }
            b.instructions = out;
        }
    }
}

/// The capabilities of stages the lowered module no longer is.
pub(crate) const STAGE_CAPABILITIES: [Capability; 9] = [
    Capability::Geometry,
    Capability::GeometryPointSize,
    Capability::GeometryStreams,
    Capability::Tessellation,
    Capability::TessellationPointSize,
    Capability::MultiViewport,
    Capability::ClipDistance,
    Capability::CullDistance,
    Capability::ShaderViewportIndexLayerEXT,
];
