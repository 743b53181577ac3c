//! `vs_pad` (seed 000, "Every pixel shader input must be a vertex shader output"): Maxwell's
//! attributes are untyped slots and a fragment shader that reads one its vertex shader never
//! wrote gets a default; Metal refuses to build such a pipeline. Every input location a vertex
//! shader's partners (shader_pairs.tsv) read but it does not write becomes an output of the
//! vertex shader, a four-component vector of the partner's component type, set to
//! (0, 0, 0, 1) at the start of the entry point.

use crate::module::{inst, Spirv};
use crate::Error;
use dmsh_reflect::IoVar;
use rspirv::dr::{Instruction, Operand};
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::BTreeMap;

/// The locations the vertex shader writes (its `Output` variables with a `Location`).
fn written(sp: &Spirv) -> Vec<u32> {
    sp.variables(StorageClass::Output)
        .into_iter()
        .filter_map(|(v, _)| sp.decoration_literal(v, Decoration::Location))
        .collect()
}

/// Adds the outputs `partner_inputs` read that the module does not write; returns them.
pub fn run(sp: &mut Spirv, partner_inputs: &[IoVar]) -> Result<Vec<IoVar>, Error> {
    let have = written(sp);
    let mut missing: BTreeMap<u32, &str> = BTreeMap::new();
    for i in partner_inputs {
        if !have.contains(&i.location) {
            missing
                .entry(i.location)
                .or_insert(i.component_type.as_str());
        }
    }
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let (_, fid, _) = sp.entry()?;
    let fi = sp.function_index(fid)?;
    let mut stores = Vec::new();
    let mut added = Vec::new();
    for (&loc, &ct) in &missing {
        let (scalar, one) = match ct {
            "float" => (sp.type_float(32), 1.0f32.to_bits()),
            "sint" => (sp.type_int(32, true), 1),
            "uint" => (sp.type_int(32, false), 1),
            t => {
                return Err(Error::Unsupported(format!(
                    "vs_pad: a partner reads location {loc} as {t:?}"
                )))
            }
        };
        let v4 = sp.type_vector(scalar, 4);
        let ptr = sp.type_pointer(StorageClass::Output, v4);
        let var = sp.new_id();
        sp.m.types_global_values.push(Instruction::new(
            Op::Variable,
            Some(ptr),
            Some(var),
            vec![Operand::StorageClass(StorageClass::Output)],
        ));
        sp.m.annotations.push(inst(
            Op::Decorate,
            vec![
                Operand::IdRef(var),
                Operand::Decoration(Decoration::Location),
                Operand::LiteralBit32(loc),
            ],
        ));
        sp.add_interface(var);
        let (z, o) = (sp.constant32(scalar, 0), sp.constant32(scalar, one));
        let c: Word = sp.constant_composite(v4, &[z, z, z, o]);
        stores.push(inst(
            Op::Store,
            vec![Operand::IdRef(var), Operand::IdRef(c)],
        ));
        added.push(IoVar {
            location: loc,
            component_type: ct.to_string(),
            ..Default::default()
        });
    }
    let entry = sp.m.functions[fi]
        .blocks
        .first_mut()
        .ok_or_else(|| Error::Parse("the entry point has no blocks".into()))?;
    // After the function's OpVariables, which must open its first block.
    let at = entry
        .instructions
        .iter()
        .position(|i| i.class.opcode != Op::Variable)
        .unwrap_or(entry.instructions.len());
    entry.instructions.splice(at..at, stores);
    Ok(added)
}
