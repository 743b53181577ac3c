//! A Vulkan module's stage interface as the lowering sees it: every input and output
//! variable, whether it is per vertex (an outer array over the primitive's or patch's
//! vertices), and each scalar it holds with its place in a vertex or patch record
//! (`dmsh_reflect::lowered`): generic location L component c at word 4L + c, the built-ins at
//! theirs; patch varying L component c at patch word 8 + 4L + c, the tessellation levels at
//! 0–5. Only what the code uses is listed: a `gl_PerVertex` member the shader never touches
//! has no scalars (glslang declares all four).

use crate::module::{id_operand, Spirv};
use crate::Error;
use dmsh_reflect::lowered as l;
use rspirv::dr::{Instruction, Operand};
use spirv::{BuiltIn, Decoration, Op, StorageClass, Word};
use std::collections::{BTreeSet, HashMap};

/// Where one scalar lives in the lowering's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Word n of a vertex record.
    Record(u32),
    /// Word n of a patch record.
    Patch(u32),
}

/// One 32-bit scalar of an interface variable.
#[derive(Clone, Debug)]
pub(crate) struct Leaf {
    /// Constant access-chain indices from the variable (after the vertex index when per
    /// vertex) to the scalar.
    pub path: Vec<u32>,
    /// The scalar's type.
    pub ty: Word,
    /// Where it lives.
    pub slot: Slot,
}

/// One input or output variable.
#[derive(Clone, Debug)]
pub(crate) struct Var {
    /// The variable.
    pub id: Word,
    /// Its type (the pointee).
    pub ty: Word,
    /// Per vertex: the outer array's length.
    pub arrayed: Option<u32>,
    /// The type of one vertex's element (the pointee when not per vertex).
    pub elem: Word,
    /// Decorated `Patch`.
    pub patch: bool,
    /// The variable's own built-in (not a block's members').
    pub builtin: Option<BuiltIn>,
    /// Its `Stream` (geometry outputs; 0 when undecorated).
    pub stream: u32,
    /// Whether the code refers to it at all.
    pub used: bool,
    /// Its scalars the code uses, for one vertex.
    pub leaves: Vec<Leaf>,
}

/// Input built-ins that are not per-vertex values and have no record word (the primitive and
/// invocation IDs, the tessellation coordinate, the patch size, the vertex index, …): each
/// lowering gives them their value its own way, or refuses them.
pub(crate) fn special(b: BuiltIn, class: StorageClass) -> bool {
    class == StorageClass::Input
        && !matches!(
            b,
            BuiltIn::Position
                | BuiltIn::PointSize
                | BuiltIn::ClipDistance
                | BuiltIn::CullDistance
                | BuiltIn::TessLevelOuter
                | BuiltIn::TessLevelInner
        )
}

/// How the code uses a variable.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Use {
    /// Wholly (loaded or stored as a whole, or indexed at run time where a member is chosen).
    All,
    /// Only these members of its (per-vertex) struct.
    Members(BTreeSet<u32>),
}

/// The built-in of member `m` of struct `s`.
pub(crate) fn member_builtin(sp: &Spirv, s: Word, m: u32) -> Option<BuiltIn> {
    sp.m.annotations.iter().find_map(|a| {
        if a.class.opcode != Op::MemberDecorate || id_operand(a, 0) != Some(s) {
            return None;
        }
        match a.operands.get(1..4) {
            Some([Operand::LiteralBit32(mm), Operand::Decoration(Decoration::BuiltIn), Operand::BuiltIn(b)])
                if *mm == m =>
            {
                Some(*b)
            }
            _ => None,
        }
    })
}

/// Whether `id` is decorated `d`.
pub(crate) fn decorated(sp: &Spirv, id: Word, d: Decoration) -> bool {
    sp.decorations(id)
        .any(|a| a.operands.get(1) == Some(&Operand::Decoration(d)))
}

/// The definition of type `ty`.
pub(crate) fn def(sp: &Spirv, ty: Word) -> Result<&Instruction, Error> {
    sp.global_def(ty)
        .ok_or_else(|| Error::Parse(format!("type %{ty} is not declared")))
}

/// `(element, length)` of array type `ty`, None when it is not a sized array.
pub(crate) fn array_of(sp: &Spirv, ty: Word) -> Option<(Word, u32)> {
    let d = sp.global_def(ty)?;
    if d.class.opcode != Op::TypeArray {
        return None;
    }
    Some((id_operand(d, 0)?, sp.constant_literal(id_operand(d, 1)?)?))
}

/// The member types of struct `ty` (None when not a struct).
pub(crate) fn struct_members(sp: &Spirv, ty: Word) -> Option<Vec<Word>> {
    let d = sp.global_def(ty)?;
    (d.class.opcode == Op::TypeStruct).then(|| {
        d.operands
            .iter()
            .filter_map(|o| match o {
                Operand::IdRef(w) => Some(*w),
                _ => None,
            })
            .collect()
    })
}

/// How the functions of `sp` use each of `vars` (by access chains from it; `member_at`: the
/// index position of the struct member in a chain from a variable whose element is a
/// struct).
fn uses(sp: &Spirv, member_at: &HashMap<Word, usize>, vars: &[Word]) -> HashMap<Word, Use> {
    let mut out: HashMap<Word, Use> = HashMap::new();
    // Pointer id → (root variable, the chain's indices so far: a constant or None).
    let mut derived: HashMap<Word, (Word, Vec<Option<u32>>)> =
        vars.iter().map(|&v| (v, (v, Vec::new()))).collect();
    let mark = |out: &mut HashMap<Word, Use>, root: Word, m: Option<u32>| {
        let e = out
            .entry(root)
            .or_insert_with(|| Use::Members(BTreeSet::new()));
        match (e, m) {
            (Use::Members(s), Some(m)) => {
                s.insert(m);
            }
            (e, _) => *e = Use::All,
        }
    };
    for f in &sp.m.functions {
        for i in f.blocks.iter().flat_map(|b| b.instructions.iter()) {
            let chain = matches!(
                i.class.opcode,
                Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain
            );
            if chain {
                if let Some((root, mut idx)) =
                    id_operand(i, 0).and_then(|b| derived.get(&b).cloned())
                {
                    let skip = usize::from(i.class.opcode == Op::PtrAccessChain);
                    idx.extend(i.operands.iter().skip(1 + skip).map(|o| match o {
                        Operand::IdRef(w) => sp.constant_literal(*w),
                        _ => None,
                    }));
                    match member_at.get(&root) {
                        Some(&pos) if idx.len() > pos => mark(&mut out, root, idx[pos]),
                        Some(_) => {}
                        None => mark(&mut out, root, None),
                    }
                    if let Some(r) = i.result_id {
                        derived.insert(r, (root, idx));
                    }
                    continue;
                }
            }
            for o in &i.operands {
                if let Operand::IdRef(w) = o {
                    if let Some((root, idx)) = derived.get(w) {
                        let reached = member_at.get(root).is_some_and(|&p| idx.len() > p);
                        if !reached {
                            mark(&mut out, *root, None);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Walks a location-addressed type: every 32-bit scalar of `ty` at location `loc`, component
/// `comp`, into `out`; returns the locations it takes.
fn walk_location(
    sp: &Spirv,
    ty: Word,
    loc: u32,
    comp: u32,
    patch: bool,
    path: &mut Vec<u32>,
    out: &mut Vec<Leaf>,
) -> Result<u32, Error> {
    let d = def(sp, ty)?.clone();
    let lit = |k: usize| match d.operands.get(k) {
        Some(Operand::LiteralBit32(v)) => *v,
        _ => 0,
    };
    match d.class.opcode {
        Op::TypeFloat | Op::TypeInt => {
            if lit(0) != 32 {
                return Err(Error::Unsupported(format!(
                    "a {}-bit varying at location {loc} (the lowering's records hold 32-bit \
                     words)",
                    lit(0)
                )));
            }
            let slot = if patch {
                if loc >= l::PATCH_VECTORS || comp >= 4 {
                    return Err(Error::Unsupported(format!(
                        "a patch varying at location {loc}; the patch record holds locations \
                         0 to {}",
                        l::PATCH_VECTORS - 1
                    )));
                }
                Slot::Patch(8 + 4 * loc + comp)
            } else {
                Slot::Record(l::generic_word(loc, comp).ok_or_else(|| {
                    Error::Unsupported(format!(
                        "a varying at location {loc} component {comp}; vertex records hold \
                         locations 0 to {}",
                        l::GENERIC_VECTORS - 1
                    ))
                })?)
            };
            out.push(Leaf {
                path: path.clone(),
                ty,
                slot,
            });
            Ok(1)
        }
        Op::TypeVector => {
            let elem = id_operand(&d, 0).unwrap_or(0);
            for c in 0..lit(1) {
                path.push(c);
                walk_location(sp, elem, loc, comp + c, patch, path, out)?;
                path.pop();
            }
            Ok(1)
        }
        Op::TypeMatrix => {
            let col = id_operand(&d, 0).unwrap_or(0);
            for k in 0..lit(1) {
                path.push(k);
                walk_location(sp, col, loc + k, 0, patch, path, out)?;
                path.pop();
            }
            Ok(lit(1))
        }
        Op::TypeArray => {
            let (elem, n) = array_of(sp, ty)
                .ok_or_else(|| Error::Unsupported("an interface array of unknown length".into()))?;
            if n > 4 * l::GENERIC_VECTORS {
                return Err(Error::Unsupported(format!(
                    "an interface array of {n} elements; vertex records hold {} scalars",
                    4 * l::GENERIC_VECTORS
                )));
            }
            let mut at = 0;
            for k in 0..n {
                path.push(k);
                at += walk_location(sp, elem, loc + at, comp, patch, path, out)?;
                path.pop();
            }
            Ok(at)
        }
        Op::TypeStruct => {
            let members = struct_members(sp, ty).unwrap_or_default();
            let mut at = loc;
            let mut total = 0;
            for (m, mt) in members.into_iter().enumerate() {
                let m = m as u32;
                if let Some(x) = sp.member_literal(ty, m, Decoration::Location) {
                    at = x;
                }
                let c = sp.member_literal(ty, m, Decoration::Component).unwrap_or(0);
                path.push(m);
                let n = walk_location(sp, mt, at, c, patch, path, out)?;
                path.pop();
                at += n;
                total += n;
            }
            Ok(total)
        }
        op => Err(Error::Unsupported(format!(
            "an interface variable of type {op:?}"
        ))),
    }
}

/// Every scalar of built-in `b` of type `ty` (`clip`: the clip distances before a cull
/// distance); `Ok(false)` for a built-in without a record word.
fn walk_builtin(
    sp: &Spirv,
    b: BuiltIn,
    ty: Word,
    clip: u32,
    path: &mut Vec<u32>,
    out: &mut Vec<Leaf>,
) -> Result<bool, Error> {
    let mut scalar = |path: &mut Vec<u32>, ty: Word, slot: Slot| {
        out.push(Leaf {
            path: path.clone(),
            ty,
            slot,
        });
    };
    let d = def(sp, ty)?.clone();
    match b {
        BuiltIn::Position => {
            let elem = id_operand(&d, 0).unwrap_or(0);
            for c in 0..4 {
                path.push(c);
                scalar(path, elem, Slot::Record(l::POSITION_WORD + c));
                path.pop();
            }
        }
        BuiltIn::PointSize => scalar(path, ty, Slot::Record(l::POINT_SIZE_WORD)),
        BuiltIn::PrimitiveId => scalar(path, ty, Slot::Record(l::PRIMITIVE_ID_WORD)),
        BuiltIn::Layer => scalar(path, ty, Slot::Record(l::LAYER_WORD)),
        BuiltIn::ViewportIndex => scalar(path, ty, Slot::Record(l::VIEWPORT_WORD)),
        BuiltIn::ClipDistance
        | BuiltIn::CullDistance
        | BuiltIn::TessLevelOuter
        | BuiltIn::TessLevelInner => {
            let (elem, n) = array_of(sp, ty)
                .ok_or_else(|| Error::Unsupported(format!("built-in {b:?} is not an array")))?;
            let (first, room, patch) = match b {
                BuiltIn::ClipDistance => (l::CLIP_WORD, l::CLIP_WORDS, false),
                BuiltIn::CullDistance => (l::CLIP_WORD + clip, l::CLIP_WORDS - clip.min(8), false),
                BuiltIn::TessLevelOuter => (l::OUTER_LEVEL_WORD, 4, true),
                _ => (l::INNER_LEVEL_WORD, 2, true),
            };
            if n > room {
                return Err(Error::Unsupported(format!(
                    "{n} {b:?} elements; the lowering's records hold {room} (clip and cull \
                     distances share eight words)"
                )));
            }
            for k in 0..n {
                path.push(k);
                let slot = if patch {
                    Slot::Patch(first + k)
                } else {
                    Slot::Record(first + k)
                };
                scalar(path, elem, slot);
                path.pop();
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The declared clip distances among `members` of struct `s`, or of a loose `ClipDistance`
/// variable of `class`.
fn clip_count(sp: &Spirv, class: StorageClass, per_vertex: bool, s: Option<Word>) -> u32 {
    let len = |ty: Word| {
        let ty = if per_vertex {
            array_of(sp, ty).map_or(ty, |a| a.0)
        } else {
            ty
        };
        array_of(sp, ty).map_or(0, |a| a.1)
    };
    if let Some(s) = s {
        let members = struct_members(sp, s).unwrap_or_default();
        return (members.iter().enumerate())
            .find(|(m, _)| member_builtin(sp, s, *m as u32) == Some(BuiltIn::ClipDistance))
            .map_or(0, |(_, t)| array_of(sp, *t).map_or(0, |a| a.1));
    }
    sp.variables(class)
        .into_iter()
        .find(|(v, _)| sp.builtin_of(*v) == Some(BuiltIn::ClipDistance))
        .and_then(|(_, p)| sp.pointee(p))
        .map_or(0, len)
}

/// The input or output variables of `class`; `per_vertex`: the direction's non-patch,
/// non-special variables are arrays over vertices (geometry inputs, tessellation inputs and
/// control outputs).
pub(crate) fn variables(
    sp: &Spirv,
    class: StorageClass,
    per_vertex: bool,
) -> Result<Vec<Var>, Error> {
    let mut vars = Vec::new();
    for (id, ptr) in sp.variables(class) {
        let ty = sp
            .pointee(ptr)
            .ok_or_else(|| Error::Parse(format!("%{id}: not a pointer")))?;
        let builtin = sp.builtin_of(id);
        let patch = decorated(sp, id, Decoration::Patch)
            || matches!(
                builtin,
                Some(BuiltIn::TessLevelOuter | BuiltIn::TessLevelInner)
            );
        let arrayed = per_vertex && !patch && !builtin.is_some_and(|b| special(b, class));
        let (elem, n) = match (arrayed, array_of(sp, ty)) {
            (true, Some((e, n))) => (e, Some(n)),
            (true, None) => {
                return Err(Error::Unsupported(format!(
                    "{class:?} variable %{id} should be an array over the vertices"
                )))
            }
            _ => (ty, None),
        };
        vars.push(Var {
            id,
            ty,
            arrayed: n,
            elem,
            patch,
            builtin,
            stream: sp.decoration_literal(id, Decoration::Stream).unwrap_or(0),
            used: false,
            leaves: Vec::new(),
        });
    }
    let member_at: HashMap<Word, usize> = vars
        .iter()
        .filter(|v| struct_members(sp, v.elem).is_some())
        .map(|v| (v.id, usize::from(v.arrayed.is_some())))
        .collect();
    let ids: Vec<Word> = vars.iter().map(|v| v.id).collect();
    let uses = uses(sp, &member_at, &ids);
    for v in &mut vars {
        let Some(u) = uses.get(&v.id) else { continue };
        v.used = true;
        let mut path = Vec::new();
        let name = sp
            .m
            .debug_names
            .iter()
            .find_map(|n| match n.operands.as_slice() {
                [Operand::IdRef(t), Operand::LiteralString(s)] if *t == v.id && !s.is_empty() => {
                    Some(format!("{s} "))
                }
                _ => None,
            });
        let what = || {
            format!(
                "{class:?} variable {}%{}",
                name.clone().unwrap_or_default(),
                v.id
            )
        };
        let wrap = |e: Error| match e {
            Error::Unsupported(m) => Error::Unsupported(format!("{}: {m}", what())),
            e => e,
        };
        if let Some(b) = v.builtin {
            if special(b, class) {
                continue;
            }
            let clip = clip_count(sp, class, per_vertex, None);
            if !walk_builtin(sp, b, v.elem, clip, &mut path, &mut v.leaves).map_err(wrap)? {
                return Err(Error::Unsupported(format!(
                    "{}: built-in {b:?} is not lowered",
                    what()
                )));
            }
            continue;
        }
        let members = struct_members(sp, v.elem);
        let is_block_of_builtins = members.as_ref().is_some_and(|ms| {
            (0..ms.len() as u32).any(|m| member_builtin(sp, v.elem, m).is_some())
        });
        if is_block_of_builtins {
            let clip = clip_count(sp, class, per_vertex, Some(v.elem));
            for (m, mt) in members.unwrap_or_default().into_iter().enumerate() {
                let m = m as u32;
                if let Use::Members(s) = u {
                    if !s.contains(&m) {
                        continue;
                    }
                }
                let Some(b) = member_builtin(sp, v.elem, m) else {
                    return Err(Error::Unsupported(format!(
                        "{}: a block mixing built-ins and varyings",
                        what()
                    )));
                };
                path.push(m);
                if !walk_builtin(sp, b, mt, clip, &mut path, &mut v.leaves).map_err(wrap)? {
                    return Err(Error::Unsupported(format!(
                        "{}: built-in {b:?} in a block is not lowered",
                        what()
                    )));
                }
                path.pop();
            }
            continue;
        }
        let loc = sp.decoration_literal(v.id, Decoration::Location);
        let has_member_locations = members.as_ref().is_some_and(|ms| {
            (0..ms.len() as u32)
                .any(|m| sp.member_literal(v.elem, m, Decoration::Location).is_some())
        });
        let Some(loc) = loc.or(has_member_locations.then_some(0)) else {
            return Err(Error::Unsupported(format!("{} has no Location", what())));
        };
        let comp = sp
            .decoration_literal(v.id, Decoration::Component)
            .unwrap_or(0);
        walk_location(sp, v.elem, loc, comp, v.patch, &mut path, &mut v.leaves).map_err(wrap)?;
        if let Use::Members(s) = u {
            v.leaves
                .retain(|lf| lf.path.first().is_some_and(|m| s.contains(m)));
        }
    }
    Ok(vars)
}
