//! The fragment variant `<key>_q` for lowered geometry pipelines (docs/geometry.md): a
//! geometry shader's gl_PrimitiveID reaches the fragment stage through the rasterizer, but in
//! the lowered pipeline the last stage is a vertex function, which cannot write it. The
//! draw's vertex function writes it instead to a flat `int` varying at
//! [`LOCATION`]; this variant reads the `PrimitiveId` built-in input from that location.
//!
//! It applies to a fragment module that reads `PrimitiveId` and has no other input at
//! [`LOCATION`].

use crate::module::{id_operand, Spirv};
use crate::Error;
use dmsh_reflect::{IoVar, Reflection};
use rspirv::dr::Operand;
use spirv::{BuiltIn, Decoration, Op, StorageClass};

/// The suffix of the variant's files (`<key>_q.metal`, `<key>_q.json`).
pub const SUFFIX: &str = "_q";

/// The seed-style name the variant's reflection lists in `fixups`.
pub const NAME: &str = "primitive_id_varying";

/// The varying location (`dmsh_reflect::lowered::PRIMITIVE_ID_LOCATION`).
pub const LOCATION: u32 = dmsh_reflect::lowered::PRIMITIVE_ID_LOCATION;

/// The variant of fragment module `words` (None when it does not read gl_PrimitiveID).
pub fn variant(words: &[u32], refl: &Reflection) -> Result<Option<(Vec<u32>, Reflection)>, Error> {
    if refl.stage != "fragment" {
        return Ok(None);
    }
    let mut sp = Spirv::parse(words)?;
    let inputs = sp.variables(StorageClass::Input);
    let Some(&(var, _)) = inputs
        .iter()
        .find(|(v, _)| sp.builtin_of(*v) == Some(BuiltIn::PrimitiveId))
    else {
        return Ok(None);
    };
    if inputs
        .iter()
        .any(|(v, _)| sp.decoration_literal(*v, Decoration::Location) == Some(LOCATION))
    {
        return Err(Error::Unsupported(format!(
            "reads gl_PrimitiveID and has an input at location {LOCATION}, the location that \
             carries it in a lowered geometry pipeline"
        )));
    }
    let flat = sp.decorations(var).any(|a| {
        matches!(
            a.operands.get(1),
            Some(Operand::Decoration(Decoration::Flat))
        )
    });
    sp.m.annotations.retain(|a| {
        !(a.class.opcode == Op::Decorate
            && id_operand(a, 0) == Some(var)
            && matches!(
                a.operands.get(1),
                Some(Operand::Decoration(Decoration::BuiltIn))
            ))
    });
    sp.decorate(var, Decoration::Location, LOCATION);
    if !flat {
        let ops = vec![Operand::IdRef(var), Operand::Decoration(Decoration::Flat)];
        sp.m.annotations
            .push(crate::module::inst(Op::Decorate, ops));
    }
    let mut r = refl.clone();
    r.inputs.push(IoVar {
        location: LOCATION,
        component_type: "sint".into(),
        index: 0,
    });
    r.fixups.push(NAME.into());
    Ok(Some((sp.assemble(), r)))
}
