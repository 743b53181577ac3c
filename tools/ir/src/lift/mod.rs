//! Lifting decoded Maxwell instructions into IR.
//!
//! [`lift`] decodes a code stream with `dmsh-isa`, finds block leaders (branch targets,
//! reconvergence targets, call returns, jump-table entries, the instruction after every
//! control transfer), and lifts every reachable instruction into its block. Semantics live in
//! one module per instruction family so families can be added in parallel:
//! [`int`], [`float`], [`double`], [`half`], [`conv`], [`mem`], [`ctrl`], [`warp`], [`video`].
//! An instruction no family handles is [`LiftError::Unsupported`] naming offset and mnemonic.

pub mod abi;
pub mod ampere;
pub mod conv;
pub mod ctrl;
mod ctx;
pub mod dksh;
pub mod double;
mod drive;
pub mod float;
pub mod half;
pub mod int;
pub mod io;
pub mod isa;
pub mod jump_table;
pub mod layout;
mod lut;
pub mod mem;
pub mod pipeline_state;
mod state;
pub mod tex;
pub mod video;
pub mod warp;

pub use abi::{Abi, Config};
pub use ctx::Cx;
pub use isa::{lifter, Arch, Lifter};
pub use layout::{BindingLayout, CompType, Gfx, ImageFmt};
pub use pipeline_state::{GsInput, StateSource};

use crate::ir::Reg;
use crate::shader::Shader;
use dmsh_isa::{Field, Instr, Opcode};

/// Why lifting failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LiftError {
    /// A reachable word did not decode.
    #[error("offset {offset:#x}: undecodable instruction {bits:#018x}")]
    Decode {
        /// Byte offset.
        offset: u32,
        /// The word.
        bits: u128,
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
    drive::lift::<MaxwellFrontend>(code, cfg)
}

/// Maxwell's side of the [`drive`]r: 8-byte slots, a scheduling word every 32 bytes.
struct MaxwellFrontend;

impl drive::Frontend for MaxwellFrontend {
    type Instr = Instr;
    const SLOT: u32 = 8;

    fn decode(code: &[u8]) -> Vec<Option<std::result::Result<Instr, u128>>> {
        // Every fourth word is a scheduling word (`None`); the lifter does not read them.
        code.chunks_exact(8)
            .enumerate()
            .map(|(k, c)| {
                if is_ctrl_slot(k as u32 * 8) {
                    return None;
                }
                let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                Some(Instr::decode(w).map_err(|_| w as u128))
            })
            .collect()
    }
    fn first_instr(off: u32) -> u32 {
        first_instr(off)
    }
    fn next_of(off: u32) -> u32 {
        first_instr(off + 8)
    }
    fn never(i: &Instr) -> bool {
        let (g, neg) = i.guard();
        g.is_pt() && neg
    }
    fn unconditional(i: &Instr) -> bool {
        let (g, neg) = i.guard();
        g.is_pt() && !neg
    }
    #[inline]
    fn plain(i: &Instr) -> bool {
        // The instructions `flow` names a target of or a control fact for.
        let op = i.opcode();
        !ctrl::ends_block(op)
            && !matches!(
                op,
                Opcode::Ssy | Opcode::Pbk | Opcode::Pcnt | Opcode::Cal | Opcode::Pret
            )
    }
    fn flow(
        cfg: &Config,
        off: u32,
        i: &Instr,
        decoded: &dyn Fn(u32) -> Option<Instr>,
        end: u32,
        target: &mut dyn FnMut(Option<u64>, bool) -> Result<()>,
    ) -> Result<drive::Flow> {
        let op = i.opcode();
        let mut returns = false;
        match op {
            Opcode::Bra | Opcode::Ssy | Opcode::Pbk | Opcode::Pcnt | Opcode::Cal | Opcode::Pret
                if i.has(Field::Target) =>
            {
                target(i.target(off as u64), false)?;
                returns = matches!(op, Opcode::Cal | Opcode::Pret);
            }
            Opcode::Jmp | Opcode::Jcal => {
                target(i.get(Field::Imm).map(|v| v as u64), false)?;
                returns = op == Opcode::Jcal;
            }
            // An indirect branch through a jump table in an embedded bank (when the
            // container lists no targets): the table's entries are leaders.
            Opcode::Brx | Opcode::Jmx if cfg.extra_targets.is_empty() => {
                let ok = |t: u32| t < end && decoded(t).is_some();
                for t in jump_table::targets(cfg, off, i, decoded, ok) {
                    target(Some(t as u64), true)?;
                }
            }
            _ => {}
        }
        let ends = ctrl::ends_block(op);
        Ok(drive::Flow {
            ends,
            returns,
            branchy: ctrl::is_branchy(op),
        })
    }
    fn lift_one(cx: &mut Cx, i: &Instr) -> Result<()> {
        lift_one(cx, i)
    }
    fn guard(i: &Instr) -> Option<(u8, bool)> {
        let (p, neg) = i.guard();
        (!p.is_pt()).then_some((p.0, neg))
    }
    fn if_convertible(i: &Instr) -> bool {
        if_convertible(i.opcode())
    }
}

/// Lifts a graphics program: the 0x50-byte SPH followed by its instructions (a
/// `*.code.bin` of the dksh corpus, or an NVN code area from +0x30). `cfg.gfx` must be set;
/// its `sph` is replaced by the header read here. A malformed header is an error naming the
/// shader key and offset 0.
pub fn lift_graphics(code: &[u8], cfg: &Config) -> Result<Shader> {
    lift_graphics_with(code, cfg, lift)
}

/// [`lift_graphics`] for the instruction set `lift_code` lifts (the SPH is the same
/// header for every generation; its version says how to read it).
pub(crate) fn lift_graphics_with(
    code: &[u8],
    cfg: &Config,
    lift_code: fn(&[u8], &Config) -> Result<Shader>,
) -> Result<Shader> {
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
    // The instructions follow the SPH: 0x50 bytes (version 3), 0x80 (version 4, SM75+).
    let size = if sph.version == 4 {
        dmsh_isa::sph::SPH_V4_SIZE
    } else {
        dmsh_isa::sph::SPH_SIZE
    };
    let mut cfg = cfg.clone();
    match cfg.gfx.as_mut() {
        Some(g) => g.sph = sph,
        None => return Err(bad("no graphics configuration".into())),
    }
    lift_code(code.get(size..).unwrap_or_default(), &cfg)
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
    if cc.is_none()
        && if_convertible(op)
        && !cx.done()
        && cx.run_converts.is_some_and(|f| f(cx.next, (guard.0, neg)))
    {
        let p = cx.pred(guard.0, neg);
        return cx.if_converted(p, |cx| dispatch(cx, i));
    }
    // Predicated: run the instruction in its own block or join the run before it.
    cx.guarded(
        run,
        (Reg::pred(guard.0), neg),
        cc.is_none(),
        |cx| match cc {
            Some(c) if guard.is_pt() => c,
            Some(c) => {
                let p = cx.pred(guard.0, neg);
                cx.and(p, c)
            }
            None => cx.pred(guard.0, neg),
        },
        |cx| dispatch(cx, i),
    )
}

/// Whether a guarded instruction of opcode `op` runs as well unconditionally with its
/// register writes selected by the guard ([`Cx::if_converted`]): arithmetic, logic,
/// comparisons, moves and conversions, which read nothing but registers and constants and
/// have no effect but their writes (no memory, texture, warp, barrier, system-value or
/// control-flow instruction; no f64, whose routines are long).
fn if_convertible(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
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
            | O::Fadd
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
            | O::F2f
            | O::F2i
            | O::I2f
            | O::I2i
            | O::Hadd2
            | O::Hmul2
            | O::Hfma2
    )
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
