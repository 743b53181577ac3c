//! The dual-source variant `<key>_d` (seed 000, "Seen in Super Mario Galaxy (Vulkan)"): the
//! GX fragment shaders write the second blend source as an ordinary output at location 1 (no
//! `Index` decoration), and their pipelines blend with SRC1 factors; NVIDIA's hardware feeds
//! MRT 1 to source 1. Metal refuses such a pipeline ("Fragment shader does not write to render
//! target color(0), index(1)"), so the build makes a second library of the shader in which
//! that output is `Location 0` `Index 1` (SPIRV-Cross writes `[[color(0), index(1)]]`), and
//! the host takes it for the pipelines whose blend reads source 1.
//!
//! It applies to a fragment module whose outputs (besides built-ins) are exactly locations 0
//! and 1, none with an `Index` decoration: dual-source blending has one colour target in
//! Vulkan and Metal alike, so a shader writing more targets has no such variant.

use crate::module::{id_operand, Spirv};
use crate::Error;
use dmsh_reflect::Reflection;
use rspirv::dr::Operand;
use spirv::{Decoration, Op, StorageClass, Word};

/// The suffix of the variant's files and name (`<key>_d.metal`, `<key>_d.json`).
pub const SUFFIX: &str = "_d";

/// The seed name the variant's reflection lists in `fixups`.
pub const NAME: &str = "dual_source";

/// The location-1 output that becomes source 1, when the module qualifies.
fn second_source(sp: &Spirv) -> Option<Word> {
    let mut at = [None, None];
    for (var, _) in sp.variables(StorageClass::Output) {
        if sp.builtin_of(var).is_some() {
            continue;
        }
        if sp.decoration_literal(var, Decoration::Index).is_some() {
            return None;
        }
        match sp.decoration_literal(var, Decoration::Location) {
            Some(l @ (0 | 1)) if at[l as usize].is_none() => at[l as usize] = Some(var),
            _ => return None,
        }
    }
    at[0].and(at[1])
}

/// The `_d` variant of a fragment module and its reflection (`outputs`: the second source at
/// location 0 index 1; `fixups` + [`NAME`]), or None when the module does not qualify.
pub fn variant(words: &[u32], refl: &Reflection) -> Result<Option<(Vec<u32>, Reflection)>, Error> {
    if refl.stage != "fragment" {
        return Ok(None);
    }
    let mut sp = Spirv::parse(words)?;
    let Some(var) = second_source(&sp) else {
        return Ok(None);
    };
    for a in &mut sp.m.annotations {
        if a.class.opcode == Op::Decorate
            && id_operand(a, 0) == Some(var)
            && a.operands.get(1) == Some(&Operand::Decoration(Decoration::Location))
        {
            a.operands[2] = Operand::LiteralBit32(0);
        }
    }
    sp.decorate(var, Decoration::Index, 1);
    let mut r = refl.clone();
    for o in &mut r.outputs {
        if o.location == 1 {
            o.location = 0;
            o.index = 1;
        }
    }
    r.outputs.sort_by_key(|o| (o.location, o.index));
    r.fixups.push(NAME.into());
    Ok(Some((sp.assemble(), r)))
}
