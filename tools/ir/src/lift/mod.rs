//! Lifting decoded Maxwell instructions into IR.
//!
//! [`lift`] decodes a code stream with `dmsh-isa`, finds block leaders (branch targets,
//! reconvergence targets, call returns, jump-table entries, the instruction after every
//! control transfer), and lifts every reachable instruction into its block. Semantics live in
//! one module per instruction family so families can be added in parallel:
//! [`int`], [`float`], [`double`], [`half`], [`conv`], [`mem`], [`ctrl`], [`warp`], [`video`].
//! An instruction no family handles is [`LiftError::Unsupported`] naming offset and mnemonic.

pub mod abi;
pub mod conv;
pub mod ctrl;
mod ctx;
pub mod dksh;
pub mod double;
pub mod float;
pub mod half;
pub mod int;
pub mod io;
pub mod isa;
pub mod jump_table;
pub mod layout;
pub mod mem;
pub mod pipeline_state;
pub mod tex;
pub mod video;
pub mod warp;

pub use abi::{Abi, Config};
pub use ctx::Cx;
pub use isa::{lifter, Arch, Lifter};
pub use layout::{BindingLayout, CompType, Gfx, ImageFmt};
pub use pipeline_state::{GsInput, StateSource};

use crate::ir::Reg;
use crate::ir::{BlockId, Function, Op, Terminator, Type};
use crate::shader::{Bank, BankSource, Shader};
use dmsh_isa::{Field, Instr, Opcode};
use std::collections::{BTreeMap, BTreeSet};

/// Why lifting failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LiftError {
    /// A reachable word did not decode.
    #[error("offset {offset:#x}: undecodable instruction {bits:#018x}")]
    Decode {
        /// Byte offset.
        offset: u32,
        /// The word.
        bits: u64,
    },
    /// The translator has no semantics for this instruction (or this form of it).
    #[error("offset {offset:#x}: {mnemonic}: {why}")]
    Unsupported {
        /// Byte offset.
        offset: u32,
        /// The mnemonic (with the form name).
        mnemonic: String,
        /// What is missing.
        why: String,
    },
    /// The lifter read a modifier field with another enum than the form gives it: a
    /// translator bug (`tests/lift.rs` lifts every form to find one), reported rather than
    /// read as an absent field.
    #[error("offset {offset:#x}: {mnemonic}: the lifter reads field {field} as enum {expected}, which this form does not use")]
    ModifierEnum {
        /// Byte offset.
        offset: u32,
        /// The mnemonic (with the form name).
        mnemonic: String,
        /// The field.
        field: &'static str,
        /// The table name of the enum the lifter asked for.
        expected: &'static str,
    },
    /// Control flow leaves the code.
    #[error("offset {offset:#x}: branch target {target:#x} outside the code")]
    BadTarget {
        /// Byte offset of the branch.
        offset: u32,
        /// The target.
        target: u64,
    },
}

/// Result type of lifting.
pub type Result<T> = std::result::Result<T, LiftError>;

fn is_ctrl_slot(off: u32) -> bool {
    off.is_multiple_of(32)
}

/// Lifts a bare Maxwell code stream (instructions start at byte 0) into a shader.
pub fn lift(code: &[u8], cfg: &Config) -> Result<Shader> {
    let n_slots = (code.len() / 8) as u32;
    let end = n_slots * 8;
    let mut instrs: Vec<Option<std::result::Result<Instr, u64>>> = vec![None; n_slots as usize];
    for (off, r, _) in dmsh_isa::stream::instructions(code) {
        let w = u64::from_le_bytes(code[off as usize..off as usize + 8].try_into().expect("8"));
        instrs[(off / 8) as usize] = Some(r.map_err(|_| w));
    }
    let get = |off: u32| -> Result<Instr> {
        match instrs.get((off / 8) as usize) {
            Some(Some(Ok(i))) => Ok(*i),
            Some(Some(Err(bits))) => Err(LiftError::Decode {
                offset: off,
                bits: *bits,
            }),
            _ => Err(LiftError::BadTarget {
                offset: off,
                target: off as u64,
            }),
        }
    };
    let next_of = |off: u32| -> u32 {
        let n = off + 8;
        if is_ctrl_slot(n) {
            n + 8
        } else {
            n
        }
    };
    // Pass 1: reachability and leaders.
    let mut leaders: BTreeSet<u32> = BTreeSet::new();
    // Reached instruction slots (by byte offset / 8).
    let mut seen = vec![false; n_slots as usize];
    let mut n_seen = 0usize;
    let mut work: Vec<u32> = vec![first_instr(0)];
    leaders.insert(first_instr(0));
    // Targets read from jump tables in embedded banks (`jump_table`).
    let mut table_targets: Vec<u32> = Vec::new();
    for &t in &cfg.extra_targets {
        let t = first_instr(t);
        if t < end {
            leaders.insert(t);
            work.push(t);
        }
    }
    let check = |off: u32, t: Option<u64>| -> Result<u32> {
        match t {
            Some(t) if t < end as u64 && t % 8 == 0 => Ok(first_instr(t as u32)),
            Some(t) => Err(LiftError::BadTarget {
                offset: off,
                target: t,
            }),
            None => Err(LiftError::BadTarget {
                offset: off,
                target: u64::MAX,
            }),
        }
    };
    while let Some(mut off) = work.pop() {
        loop {
            if off >= end || seen[(off / 8) as usize] {
                break;
            }
            seen[(off / 8) as usize] = true;
            n_seen += 1;
            let i = get(off)?;
            let (guard, neg) = i.guard();
            let never = guard.is_pt() && neg;
            let op = i.opcode();
            let nx = next_of(off);
            match op {
                Opcode::Bra
                | Opcode::Ssy
                | Opcode::Pbk
                | Opcode::Pcnt
                | Opcode::Cal
                | Opcode::Pret
                    if i.has(Field::Target) =>
                {
                    let t = check(off, i.target(off as u64))?;
                    leaders.insert(t);
                    work.push(t);
                    if matches!(op, Opcode::Cal | Opcode::Pret) {
                        leaders.insert(nx);
                        work.push(nx);
                    }
                }
                Opcode::Jmp | Opcode::Jcal => {
                    let t = check(off, i.get(Field::Imm).map(|v| v as u64))?;
                    leaders.insert(t);
                    work.push(t);
                    if op == Opcode::Jcal {
                        leaders.insert(nx);
                        work.push(nx);
                    }
                }
                // An indirect branch through a jump table in an embedded bank (when the
                // container lists no targets): the table's entries are leaders.
                Opcode::Brx | Opcode::Jmx if cfg.extra_targets.is_empty() => {
                    let decoded = |o: u32| match instrs.get((o / 8) as usize) {
                        Some(Some(Ok(i))) => Some(*i),
                        _ => None,
                    };
                    let ok = |t: u32| t < end && decoded(t).is_some();
                    for t in jump_table::targets(cfg, off, &i, decoded, ok) {
                        leaders.insert(t);
                        work.push(t);
                        table_targets.push(t);
                    }
                }
                _ => {}
            }
            let ends = ctrl::ends_block(op);
            let uncond = guard.is_pt() && !neg;
            if ends || (!uncond && !never && ctrl::is_branchy(op)) {
                leaders.insert(nx);
            }
            if ends && uncond && !matches!(op, Opcode::Cal | Opcode::Jcal) {
                break;
            }
            off = nx;
        }
    }
    // Pass 2: blocks.
    let mut f = Function::new();
    f.insts.reserve(n_seen * 8);
    table_targets.sort_unstable();
    table_targets.dedup();
    f.indirect_targets = table_targets;
    let mut block_of: BTreeMap<u32, BlockId> = BTreeMap::new();
    for &l in &leaders {
        if l < end && seen[(l / 8) as usize] {
            block_of.insert(l, f.add_block(Some(l)));
        }
    }
    if f.blocks.is_empty() {
        // No instruction at all: an empty program.
        let b = f.add_block(Some(first_instr(0)));
        f.blocks[b.index()].term = Terminator::Exit;
    }
    // Block 0 must be the entry.
    let entry = first_instr(0);
    if let Some(&b) = block_of.get(&entry) {
        if b.0 != 0 {
            f.blocks.swap(0, b.index());
            for v in block_of.values_mut() {
                if *v == b {
                    *v = BlockId(0);
                } else if v.0 == 0 {
                    *v = b;
                }
            }
        }
    }
    let mut guest = 0usize;
    let starts: Vec<(u32, BlockId)> = block_of.iter().map(|(&a, &b)| (a, b)).collect();
    // Whether a block starts at an instruction slot (the per-instruction check below).
    let mut starts_block = vec![false; n_slots as usize];
    for &(a, _) in &starts {
        if let Some(s) = starts_block.get_mut((a / 8) as usize) {
            *s = true;
        }
    }
    let mut consts = ctx::ConstCache::default();
    consts.reserve(n_seen * 2);
    let mut local_extent = 0u32;
    let mut regs = Vec::new();
    for (start, bid) in starts {
        let mut cx = Cx::new(&mut f, bid, cfg, &block_of, start);
        cx.consts = std::mem::take(&mut consts);
        cx.regs = std::mem::take(&mut regs);
        let mut off = start;
        loop {
            let i = get(off)?;
            guest += 1;
            cx.addr = off;
            cx.next = next_of(off);
            lift_one(&mut cx, &i)?;
            if cx.done() {
                break;
            }
            off = cx.next;
            if starts_block.get((off / 8) as usize) == Some(&true) {
                if let Some(&nb) = block_of.get(&off) {
                    cx.finish(Terminator::Jump(nb));
                    break;
                }
            }
            if off >= end {
                cx.finish(Terminator::Exit);
                break;
            }
        }
        consts = std::mem::take(&mut cx.consts);
        regs = std::mem::take(&mut cx.regs);
        local_extent = local_extent.max(cx.local_extent);
    }
    let mut banks = Vec::new();
    for (&bank, words) in &cfg.embedded_banks {
        banks.push(Bank {
            bank,
            source: BankSource::Embedded(words.clone()),
        });
    }
    for (&bank, &(guest_offset, size)) in &cfg.buffer_banks {
        banks.push(Bank {
            bank,
            source: BankSource::Buffer { guest_offset, size },
        });
    }
    // One scan over the instructions for both memory spaces.
    let (mut used_local, mut used_shared) = (false, false);
    for i in &f.insts {
        match i.op {
            Op::Load(crate::Space::Local, _) | Op::Store(crate::Space::Local, _) => {
                used_local = true
            }
            Op::Load(crate::Space::Shared, _)
            | Op::Store(crate::Space::Shared, _)
            | Op::Atomic(crate::Space::Shared, ..)
            | Op::AtomicCas(crate::Space::Shared, _) => used_shared = true,
            _ => {}
        }
        if used_local && used_shared {
            break;
        }
    }
    let _ = Type::Void;
    f.sbuf_table = cfg.sbuf_table();
    Ok(Shader {
        func: f,
        stage: cfg.stage,
        local_size: cfg.local_size,
        shared_bytes: if used_shared {
            cfg.shared_bytes.max(4)
        } else {
            cfg.shared_bytes
        },
        local_bytes: if used_local {
            cfg.local_bytes
                .max(cfg.declared_local_bytes)
                .max(cfg.stack_bytes())
                .max(local_extent.next_multiple_of(4))
                .max(4)
        } else {
            cfg.local_bytes
        },
        banks,
        abi: cfg.abi.name(),
        guest_insts: guest,
        gfx: cfg.gfx.clone(),
    })
}

/// Lifts a graphics program: the 0x50-byte SPH followed by its instructions (a
/// `*.code.bin` of the dksh corpus, or an NVN code area from +0x30). `cfg.gfx` must be set;
/// its `sph` is replaced by the header read here. A malformed header is an error naming the
/// shader key and offset 0.
pub fn lift_graphics(code: &[u8], cfg: &Config) -> Result<Shader> {
    let key = cfg.gfx.as_ref().map(|g| g.key.clone()).unwrap_or_default();
    let bad = |why: String| LiftError::Unsupported {
        offset: 0,
        mnemonic: "SPH".into(),
        why: format!("shader {key}: {why}"),
    };
    let sph = dmsh_isa::sph_info::SphInfo::parse(code).map_err(|e| bad(e.to_string()))?;
    let want = match cfg.stage {
        crate::Stage::Vertex => dmsh_isa::sph_info::SphStage::Vertex,
        crate::Stage::TessControl => dmsh_isa::sph_info::SphStage::TessControl,
        crate::Stage::TessEval => dmsh_isa::sph_info::SphStage::TessEval,
        crate::Stage::Geometry => dmsh_isa::sph_info::SphStage::Geometry,
        crate::Stage::Fragment => dmsh_isa::sph_info::SphStage::Fragment,
        crate::Stage::Compute => return Err(bad("compute code has no SPH".into())),
    };
    if sph.stage != want {
        return Err(bad(format!(
            "the SPH says {} but the stage is {}",
            sph.stage.name(),
            cfg.stage.name()
        )));
    }
    let mut cfg = cfg.clone();
    match cfg.gfx.as_mut() {
        Some(g) => g.sph = sph,
        None => return Err(bad("no graphics configuration".into())),
    }
    lift(&code[dmsh_isa::sph::SPH_SIZE..], &cfg)
}

fn first_instr(off: u32) -> u32 {
    if is_ctrl_slot(off) {
        off + 8
    } else {
        off
    }
}

/// Lifts one instruction, handling the guard predicate.
fn lift_one(cx: &mut Cx, i: &Instr) -> Result<()> {
    let run = cx.pred_run.take();
    let (guard, neg) = i.guard();
    if guard.is_pt() && neg {
        return Ok(());
    }
    let op = i.opcode();
    if ctrl::handles_guard(op) {
        return dispatch(cx, i);
    }
    // A control-flow instruction's condition-code test (`EXIT CC.NEU`) is a second guard.
    let cc = if ctrl::ends_block(op) {
        ctrl::cc_condition(cx, i)?
    } else {
        None
    };
    if guard.is_pt() && cc.is_none() {
        return dispatch(cx, i);
    }
    // Predicated: run the instruction in its own block, or in the then-block of the run of
    // instructions with the same guard just before it (`@P0 IADD.CC; @P0 IADD.X; @P0 STG`),
    // which keeps a guarded address computation and its access in one block. Joining is
    // exact: the continuation is still empty (nothing ran in between) and no instruction of
    // the run wrote the guard.
    let (then_b, cont) = match run {
        Some((g, n, t, c))
            if cc.is_none()
                && g == guard.0
                && n == neg
                && c == cx.b
                && !cx.ended
                && cx.f.blocks[c.index()].insts.is_empty()
                && cx.f.blocks[t.index()].term == Terminator::Jump(c) =>
        {
            cx.f.blocks[t.index()].term = Terminator::Unset;
            (t, c)
        }
        _ => {
            let p = match cc {
                Some(c) if guard.is_pt() => c,
                Some(c) => {
                    let p = cx.pred(guard.0, neg);
                    cx.and(p, c)
                }
                None => cx.pred(guard.0, neg),
            };
            let then_b = cx.f.add_block(None);
            let cont = cx.f.add_block(None);
            cx.finish(Terminator::Branch(p, then_b, cont));
            (then_b, cont)
        }
    };
    let first = cx.f.blocks[then_b.index()].insts.len();
    cx.b = then_b;
    cx.ended = false;
    dispatch(cx, i)?;
    let open = cc.is_none()
        && cx.b == then_b
        && !cx.done()
        && !cx.f.blocks[then_b.index()].insts[first..]
            .iter()
            .any(|&v| cx.f.inst(v).op == Op::Set(Reg::pred(guard.0)));
    if !cx.done() {
        cx.finish(Terminator::Jump(cont));
    }
    cx.b = cont;
    cx.ended = false;
    if open {
        cx.pred_run = Some((guard.0, neg, then_b, cont));
    }
    Ok(())
}

fn dispatch(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::Iadd
        | O::Iadd32i
        | O::Iadd3
        | O::Iscadd
        | O::Iscadd32i
        | O::Imul
        | O::Imul32i
        | O::Imad
        | O::Imad32i
        | O::Xmad
        | O::Imnmx
        | O::Isetp
        | O::Iset
        | O::Icmp
        | O::Lop
        | O::Lop32i
        | O::Lop3
        | O::Shl
        | O::Shr
        | O::Shf
        | O::Bfe
        | O::Bfi
        | O::Flo
        | O::Popc
        | O::Lea
        | O::Sel
        | O::Prmt
        | O::Mov
        | O::Mov32i
        | O::Psetp
        | O::Pset
        | O::P2r
        | O::R2p
        | O::Csetp
        | O::Cset => int::lift(cx, i),
        O::Vadd
        | O::Vmnmx
        | O::Vabsdiff
        | O::Vabsdiff4
        | O::Vset
        | O::Vsetp
        | O::Vshl
        | O::Vshr
        | O::Vmad => video::lift(cx, i),
        O::St if video::is_vset_imm_word(i) => video::lift(cx, i),
        O::Fadd
        | O::Fadd32i
        | O::Fmul
        | O::Fmul32i
        | O::Ffma
        | O::Ffma32i
        | O::Fmnmx
        | O::Fsetp
        | O::Fset
        | O::Fcmp
        | O::Mufu
        | O::Rro
        | O::Fchk => float::lift(cx, i),
        O::Dadd | O::Dmul | O::Dfma | O::Dmnmx | O::Dsetp | O::Dset => double::lift(cx, i),
        O::Hadd2 | O::Hmul2 | O::Hfma2 | O::Hset2 | O::Hsetp2 => half::lift(cx, i),
        O::F2f | O::F2i | O::I2f | O::I2i => conv::lift(cx, i),
        O::Ldg
        | O::Stg
        | O::Ldl
        | O::Stl
        | O::Lds
        | O::Sts
        | O::Ldc
        | O::Ld
        | O::St
        | O::Atom
        | O::Atoms
        | O::Red
        | O::Cctl
        | O::Membar => mem::lift(cx, i),
        O::S2r if io::is_gfx_sreg(i) => io::lift(cx, i),
        O::Shfl | O::Vote | O::S2r | O::Cs2r | O::Bar | O::B2r => warp::lift(cx, i),
        O::Ald
        | O::Ast
        | O::Ipa
        | O::Out
        | O::Isberd
        | O::Pixld
        | O::Al2p
        | O::Sam
        | O::Ram
        | O::Fswzadd => io::lift(cx, i),
        O::Tex
        | O::Texs
        | O::Tld
        | O::Tlds
        | O::Tld4
        | O::Tld4s
        | O::Txq
        | O::Tmml
        | O::Txd
        | O::Suld
        | O::Sust
        | O::Suatom
        | O::Sured => tex::lift(cx, i),
        O::Exit => {
            io::frag_outputs(cx);
            ctrl::lift(cx, i)
        }
        _ => ctrl::lift(cx, i),
    }
}
