//! Vulkan-style SPIR-V (seed 000, "Seen in Super Mario Galaxy (Vulkan)") made from
//! glslang's: the input defects the build's Vulkan fix-ups repair, written into glslang's
//! words by the tests.

use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Operand};
use spirv::{Decoration, Op};

/// The input defect: every `ArrayStride` of an array type that is a struct member moves onto
/// the member (`OpMemberDecorate`). With `share`, a struct member whose strided array type
/// has the same operands as an earlier strided array type's (glslang's `float[3]` at stride 4
/// in a std430 block and at stride 16 in a std140 one) takes that earlier type, so one array
/// type has members of two strides. Returns the module and how many decorations moved.
pub fn member_strides(words: &[u32], share: bool) -> (Vec<u32>, usize) {
    let mut m = rspirv::dr::load_words(words).expect("a module");
    let strided: Vec<(u32, u32)> = m
        .annotations
        .iter()
        .filter_map(|a| match a.operands.as_slice() {
            [Operand::IdRef(t), Operand::Decoration(Decoration::ArrayStride), Operand::LiteralBit32(s)]
                if a.class.opcode == Op::Decorate =>
            {
                Some((*t, *s))
            }
            _ => None,
        })
        .collect();
    let structs: Vec<(u32, Vec<u32>)> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeStruct)
        .map(|i| {
            let members = i
                .operands
                .iter()
                .map(|o| match o {
                    Operand::IdRef(w) => *w,
                    _ => 0,
                })
                .collect();
            (i.result_id.unwrap(), members)
        })
        .collect();
    let mut moved = 0;
    for (s, members) in &structs {
        for (k, t) in members.iter().enumerate() {
            if let Some((_, stride)) = strided.iter().find(|x| x.0 == *t) {
                m.annotations.push(Instruction::new(
                    Op::MemberDecorate,
                    None,
                    None,
                    vec![
                        Operand::IdRef(*s),
                        Operand::LiteralBit32(k as u32),
                        Operand::Decoration(Decoration::ArrayStride),
                        Operand::LiteralBit32(*stride),
                    ],
                ));
                moved += 1;
            }
        }
    }
    m.annotations.retain(|a| {
        !(a.class.opcode == Op::Decorate
            && strided
                .iter()
                .any(|x| a.operands.first() == Some(&Operand::IdRef(x.0))))
    });
    let arrays: Vec<(u32, Vec<Operand>)> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeArray)
        .filter(|i| strided.iter().any(|x| i.result_id == Some(x.0)))
        .map(|i| (i.result_id.unwrap(), i.operands.clone()))
        .collect();
    let shared = arrays.iter().enumerate().find_map(|(k, a)| {
        arrays[k + 1..]
            .iter()
            .find(|b| b.1 == a.1)
            .map(|b| (a.0, b.0))
    });
    let Some((first, second)) = shared.filter(|_| share) else {
        return (m.assemble(), moved);
    };
    for i in &mut m.types_global_values {
        if i.class.opcode == Op::TypeStruct {
            for o in &mut i.operands {
                if *o == Operand::IdRef(second) {
                    *o = Operand::IdRef(first);
                }
            }
        }
    }
    (m.assemble(), moved)
}
