//! `spv_single_lane` (seed 000, Monster Hunter Rise): Metal has no SIMD-group functions in
//! vertex functions (nor in the post-tessellation vertex functions tessellation evaluation
//! becomes), and SPIRV-Cross refuses subgroup built-ins there. With a subgroup of one lane
//! every subgroup operation has an exact value, so the module is rewritten to it:
//!
//! | operation | single-lane value |
//! |---|---|
//! | ballot | the lane's own bit: `uvec4(p ? 1 : 0, 0, 0, 0)` |
//! | inverse ballot, bit extract | bit 0 of the mask |
//! | bit count | reduce / inclusive scan: bit 0 of the mask; exclusive scan: 0 |
//! | find LSB / MSB | 0 when bit 0 is set, else −1 (no bit) |
//! | shuffles (index, xor, up, down), broadcasts, quad operations, read invocation | the own value |
//! | all, any | the predicate |
//! | all-equal, elect | true |
//! | arithmetic (add, mul, min, max, and, or, xor) | reduce, inclusive scan, clustered: the own value; exclusive scan: the operation's identity |
//! | `SubgroupLocalInvocationId`, `SubgroupId` | 0 |
//! | `SubgroupSize`, `NumSubgroups` | 1 |
//! | `SubgroupEq/Ge/LeMask` | `uvec4(1, 0, 0, 0)`; `SubgroupGt/LtMask`: 0 |
//!
//! Every rewritten result keeps its id (`OpCopyObject` of the value where the value already
//! exists). The subgroup capabilities and extensions are removed; an operation this table
//! does not cover is an error, never left behind.

use crate::module::{id_operand, value, Kind, Spirv};
use crate::Error;
use rspirv::dr::{Instruction, Operand};
use spirv::{BuiltIn, Capability, GroupOperation, Op, StorageClass, Word};
use std::collections::HashMap;

/// The capabilities the rewrite makes unnecessary.
const CAPABILITIES: &[Capability] = &[
    Capability::GroupNonUniform,
    Capability::GroupNonUniformVote,
    Capability::GroupNonUniformBallot,
    Capability::GroupNonUniformShuffle,
    Capability::GroupNonUniformShuffleRelative,
    Capability::GroupNonUniformArithmetic,
    Capability::GroupNonUniformClustered,
    Capability::GroupNonUniformQuad,
    Capability::SubgroupBallotKHR,
    Capability::SubgroupVoteKHR,
];

/// The extensions the rewrite makes unnecessary.
const EXTENSIONS: &[&str] = &["SPV_KHR_shader_ballot", "SPV_KHR_subgroup_vote"];

/// What one subgroup operation becomes.
enum Rule {
    /// The operand at this index (after the scope) is the result.
    Own(usize),
    /// A constant of the result type with these bits in every component.
    Splat(u32),
    /// `uvec4(pred ? 1 : 0, 0, 0, 0)` of the predicate at this index.
    Ballot(usize),
    /// `(mask.x & 1) != 0` of the mask at this index.
    MaskBit(usize),
    /// Bit count with the group operation at index 0 and the mask at index 1.
    BitCount,
    /// `mask.x & 1 ? 0 : 0xffffffff` of the mask at this index.
    FindBit(usize),
    /// Arithmetic with the group operation at index 0, the value at index 1, the identity.
    Arith(u32),
}

/// The rule of `op`, and whether its first operand is the execution scope.
fn rule(op: Op) -> Option<(Rule, bool)> {
    use Op::*;
    let f = |bits: f32| bits.to_bits();
    Some(match op {
        GroupNonUniformElect => (Rule::Splat(1), true),
        GroupNonUniformAll | GroupNonUniformAny => (Rule::Own(0), true),
        GroupNonUniformAllEqual => (Rule::Splat(1), true),
        GroupNonUniformBroadcast | GroupNonUniformBroadcastFirst => (Rule::Own(0), true),
        GroupNonUniformShuffle
        | GroupNonUniformShuffleXor
        | GroupNonUniformShuffleUp
        | GroupNonUniformShuffleDown
        | GroupNonUniformQuadBroadcast
        | GroupNonUniformQuadSwap => (Rule::Own(0), true),
        GroupNonUniformBallot => (Rule::Ballot(0), true),
        GroupNonUniformInverseBallot | GroupNonUniformBallotBitExtract => (Rule::MaskBit(0), true),
        GroupNonUniformBallotBitCount => (Rule::BitCount, true),
        GroupNonUniformBallotFindLSB | GroupNonUniformBallotFindMSB => (Rule::FindBit(0), true),
        GroupNonUniformIAdd | GroupNonUniformFAdd => (Rule::Arith(0), true),
        GroupNonUniformIMul => (Rule::Arith(1), true),
        GroupNonUniformFMul => (Rule::Arith(f(1.0)), true),
        GroupNonUniformSMin => (Rule::Arith(i32::MAX as u32), true),
        GroupNonUniformUMin => (Rule::Arith(u32::MAX), true),
        GroupNonUniformFMin => (Rule::Arith(f(f32::INFINITY)), true),
        GroupNonUniformSMax => (Rule::Arith(i32::MIN as u32), true),
        GroupNonUniformUMax => (Rule::Arith(0), true),
        GroupNonUniformFMax => (Rule::Arith(f(f32::NEG_INFINITY)), true),
        GroupNonUniformBitwiseAnd => (Rule::Arith(u32::MAX), true),
        GroupNonUniformBitwiseOr | GroupNonUniformBitwiseXor => (Rule::Arith(0), true),
        GroupNonUniformLogicalAnd => (Rule::Arith(1), true),
        GroupNonUniformLogicalOr | GroupNonUniformLogicalXor => (Rule::Arith(0), true),
        SubgroupBallotKHR => (Rule::Ballot(0), false),
        SubgroupFirstInvocationKHR | SubgroupReadInvocationKHR => (Rule::Own(0), false),
        SubgroupAllKHR | SubgroupAnyKHR => (Rule::Own(0), false),
        SubgroupAllEqualKHR => (Rule::Splat(1), false),
        _ => return None,
    })
}

/// Whether `op` is a subgroup operation (covered by [`rule`] or not).
fn is_subgroup_op(op: Op) -> bool {
    let n = format!("{op:?}");
    n.starts_with("GroupNonUniform") || (n.starts_with("Subgroup") && n.ends_with("KHR"))
}

/// The single-lane value of a subgroup built-in, as component bits of its type.
fn builtin_value(b: BuiltIn) -> Option<[u32; 4]> {
    Some(match b {
        BuiltIn::SubgroupLocalInvocationId | BuiltIn::SubgroupId => [0; 4],
        BuiltIn::SubgroupSize | BuiltIn::NumSubgroups => [1, 1, 1, 1],
        BuiltIn::SubgroupEqMask | BuiltIn::SubgroupGeMask | BuiltIn::SubgroupLeMask => [1, 0, 0, 0],
        BuiltIn::SubgroupGtMask | BuiltIn::SubgroupLtMask => [0; 4],
        _ => return None,
    })
}

/// How many subgroup operations and built-in loads were rewritten.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// Subgroup operations.
    pub operations: usize,
    /// Loads of subgroup built-ins.
    pub builtins: usize,
}

/// Rewrites every subgroup operation and built-in of `sp` to its single-lane value.
pub fn run(sp: &mut Spirv) -> Result<Count, Error> {
    let mut count = Count::default();
    let builtins = builtin_constants(sp)?;
    let mut functions = std::mem::take(&mut sp.m.functions);
    let result = (|| {
        for f in &mut functions {
            for b in &mut f.blocks {
                let mut out = Vec::with_capacity(b.instructions.len());
                for i in std::mem::take(&mut b.instructions) {
                    let op = i.class.opcode;
                    if op == Op::Load {
                        if let Some(&c) = id_operand(&i, 0).and_then(|p| builtins.get(&p)) {
                            let (ty, id) = (i.result_type.unwrap_or(0), i.result_id.unwrap_or(0));
                            out.push(value(Op::CopyObject, ty, id, vec![Operand::IdRef(c)]));
                            count.builtins += 1;
                            continue;
                        }
                    }
                    if !is_subgroup_op(op) {
                        out.push(i);
                        continue;
                    }
                    let Some((r, scoped)) = rule(op) else {
                        return Err(Error::Unsupported(format!(
                            "spv_single_lane: {op:?} has no single-lane rewrite"
                        )));
                    };
                    rewrite(sp, &i, r, scoped as usize, &mut out)?;
                    count.operations += 1;
                }
                b.instructions = out;
            }
        }
        Ok(())
    })();
    sp.m.functions = functions;
    result?;
    for &var in builtins.keys() {
        sp.remove_variable(var);
    }
    // Any other use of a subgroup built-in variable (an access chain into a mask) would now
    // refer to a removed variable.
    if let Some(f) = sp.m.functions.iter().find(|f| {
        f.blocks.iter().flat_map(|b| &b.instructions).any(|i| {
            i.operands
                .iter()
                .any(|o| matches!(o, Operand::IdRef(w) if builtins.contains_key(w)))
        })
    }) {
        let id = f.def.as_ref().and_then(|d| d.result_id).unwrap_or(0);
        return Err(Error::Unsupported(format!(
            "spv_single_lane: function %{id} uses a subgroup built-in other than by OpLoad"
        )));
    }
    sp.m.capabilities.retain(
        |c| !matches!(c.operands.first(), Some(Operand::Capability(x)) if CAPABILITIES.contains(x)),
    );
    sp.m.extensions.retain(|e| {
        !matches!(e.operands.first(), Some(Operand::LiteralString(s)) if EXTENSIONS.contains(&s.as_str()))
    });
    Ok(count)
}

/// The constant each subgroup built-in input variable is replaced with.
fn builtin_constants(sp: &mut Spirv) -> Result<HashMap<Word, Word>, Error> {
    let mut map = HashMap::new();
    for (var, ptr) in sp.variables(StorageClass::Input) {
        let Some(b) = sp.builtin_of(var) else {
            continue;
        };
        let Some(bits) = builtin_value(b) else {
            continue;
        };
        let ty = sp
            .pointee(ptr)
            .ok_or_else(|| Error::Parse(format!("variable %{var} has no pointer type")))?;
        let c = match sp.global_def(ty).map(|d| d.class.opcode) {
            Some(Op::TypeVector) => {
                let d = sp.global_def(ty).cloned().expect("checked");
                let elem = id_operand(&d, 0).unwrap_or(0);
                let parts: Result<Vec<Word>, Error> =
                    bits.iter().map(|&v| sp.splat(elem, v)).collect();
                sp.constant_composite(ty, &parts?)
            }
            _ => sp.splat(ty, bits[0])?,
        };
        map.insert(var, c);
    }
    Ok(map)
}

/// Appends to `out` the single-lane form of subgroup operation `i`.
fn rewrite(
    sp: &mut Spirv,
    i: &Instruction,
    r: Rule,
    first: usize,
    out: &mut Vec<Instruction>,
) -> Result<(), Error> {
    let (ty, id) = match (i.result_type, i.result_id) {
        (Some(t), Some(r)) => (t, r),
        _ => {
            return Err(Error::Parse(format!(
                "{:?} without a result",
                i.class.opcode
            )))
        }
    };
    let arg = |k: usize| {
        id_operand(i, first + k)
            .ok_or_else(|| Error::Parse(format!("{:?}: operand {k} is not an id", i.class.opcode)))
    };
    let copy = |from: Word| value(Op::CopyObject, ty, id, vec![Operand::IdRef(from)]);
    let group = || match i.operands.get(first) {
        Some(Operand::GroupOperation(g)) => Ok(*g),
        _ => Err(Error::Parse(format!(
            "{:?} without a group operation",
            i.class.opcode
        ))),
    };
    match r {
        Rule::Own(k) => out.push(copy(arg(k)?)),
        Rule::Splat(bits) => {
            let c = sp.splat(ty, bits)?;
            out.push(copy(c));
        }
        Rule::Ballot(k) => {
            let p = arg(k)?;
            let u = sp.type_int(32, false);
            let (one, zero) = (sp.constant32(u, 1), sp.constant32(u, 0));
            let x = sp.new_id();
            out.push(value(
                Op::Select,
                u,
                x,
                vec![Operand::IdRef(p), Operand::IdRef(one), Operand::IdRef(zero)],
            ));
            let parts = [x, zero, zero, zero].map(Operand::IdRef).to_vec();
            out.push(value(Op::CompositeConstruct, ty, id, parts));
        }
        Rule::MaskBit(k) => {
            let bit = low_bit(sp, arg(k)?, out);
            let u = sp.type_int(32, false);
            let zero = sp.constant32(u, 0);
            out.push(value(
                Op::INotEqual,
                ty,
                id,
                vec![Operand::IdRef(bit), Operand::IdRef(zero)],
            ));
        }
        Rule::BitCount => match group()? {
            GroupOperation::ExclusiveScan => {
                let c = sp.splat(ty, 0)?;
                out.push(copy(c));
            }
            GroupOperation::Reduce | GroupOperation::InclusiveScan => {
                let bit = low_bit(sp, arg(1)?, out);
                out.push(copy(bit));
            }
            g => {
                return Err(Error::Unsupported(format!(
                    "spv_single_lane: bit count with {g:?}"
                )))
            }
        },
        Rule::FindBit(k) => {
            let bit = low_bit(sp, arg(k)?, out);
            let u = sp.type_int(32, false);
            let zero = sp.constant32(u, 0);
            let none = sp.splat(ty, u32::MAX)?;
            let found = sp.splat(ty, 0)?;
            let b = sp.type_bool();
            let set = sp.new_id();
            out.push(value(
                Op::INotEqual,
                b,
                set,
                vec![Operand::IdRef(bit), Operand::IdRef(zero)],
            ));
            out.push(value(
                Op::Select,
                ty,
                id,
                vec![
                    Operand::IdRef(set),
                    Operand::IdRef(found),
                    Operand::IdRef(none),
                ],
            ));
        }
        Rule::Arith(identity) => match group()? {
            GroupOperation::Reduce
            | GroupOperation::InclusiveScan
            | GroupOperation::ClusteredReduce => out.push(copy(arg(1)?)),
            GroupOperation::ExclusiveScan => {
                let k = sp.scalar_kind_of_value_type(ty)?;
                let bits = if k == Kind::Bool {
                    identity & 1
                } else {
                    identity
                };
                let c = sp.splat(ty, bits)?;
                out.push(copy(c));
            }
            g => {
                return Err(Error::Unsupported(format!(
                    "spv_single_lane: {:?} with {g:?}",
                    i.class.opcode
                )))
            }
        },
    }
    Ok(())
}

/// Appends `mask.x & 1` (a uint) of the uvec4 `mask` to `out` and returns its id.
fn low_bit(sp: &mut Spirv, mask: Word, out: &mut Vec<Instruction>) -> Word {
    let u = sp.type_int(32, false);
    let one = sp.constant32(u, 1);
    let (x, bit) = (sp.new_id(), sp.new_id());
    out.push(value(
        Op::CompositeExtract,
        u,
        x,
        vec![Operand::IdRef(mask), Operand::LiteralBit32(0)],
    ));
    out.push(value(
        Op::BitwiseAnd,
        u,
        bit,
        vec![Operand::IdRef(x), Operand::IdRef(one)],
    ));
    bit
}

impl Spirv {
    /// The scalar kind of a scalar or vector type.
    fn scalar_kind_of_value_type(&self, ty: Word) -> Result<Kind, Error> {
        match self.global_def(ty) {
            Some(d) if d.class.opcode == Op::TypeVector => {
                self.scalar_kind(id_operand(d, 0).unwrap_or(0)).map(|k| k.0)
            }
            _ => self.scalar_kind(ty).map(|k| k.0),
        }
    }
}
