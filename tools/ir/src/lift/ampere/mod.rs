//! Lifting decoded Ampere (sm_86-class) instructions into the shared IR.
//!
//! The [driver](super::drive) is Maxwell's; this module is Ampere's [`Frontend`]: 16-byte
//! instructions with their scheduling bits inside, guards that may be uniform predicates,
//! and control flow without a reconvergence stack. Semantics live in one module per
//! instruction family, as for Maxwell: [`int`] (also the uniform datapath: `UIADD3` is
//! `IADD3` on uniform registers), [`float`], [`double`], [`half`], [`conv`], [`mem`],
//! [`warp`], [`io`], [`tex`], [`tensor`], [`ctrl`]. Source operands are read by position
//! through [`operand`].
//!
//! Convergence: `BSSY`/`BSYNC`/`BREAK`/`WARPSYNC` only make a diverged warp wait for its
//! threads; a thread's own results do not depend on them, and the structurizer rebuilds
//! the convergence points from the control-flow graph, so they lift to nothing. `CALL`
//! pushes the return address (the next instruction; ptxas and NAK put exactly that in the
//! register `RET` reads) on the IR's call stack and `RET` pops it, the same `StackPush` /
//! `StackPop` the `static_stack` pass resolves for Maxwell's `CAL`/`RET`.

pub mod conv;
pub mod ctrl;
pub mod double;
pub mod float;
pub mod half;
pub mod int;
pub mod io;
pub mod mem;
pub mod operand;
pub mod tensor;
pub mod tex;
pub mod warp;

use super::drive::{self, Flow, Frontend};
use super::{Config, Cx, Result};
use crate::ir::Reg;
use crate::shader::Shader;
use dmsh_isa::ampere::{self, Instr, Opcode};
use dmsh_isa::Field;

/// Lifts a bare Ampere code stream (instructions from byte 0) into a shader.
pub fn lift(code: &[u8], cfg: &Config) -> Result<Shader> {
    drive::lift::<AmpereFrontend>(code, cfg)
}

/// Lifts an Ampere graphics program: the SPH (version 4, 0x60 bytes... as NAK and NVN2
/// lay it out) followed by its instructions.
pub fn lift_graphics(code: &[u8], cfg: &Config) -> Result<Shader> {
    super::lift_graphics_with(code, cfg, lift)
}

/// Ampere's side of the driver.
struct AmpereFrontend;

impl Frontend for AmpereFrontend {
    type Instr = Instr;
    const SLOT: u32 = 16;

    fn decode(code: &[u8]) -> Vec<Option<std::result::Result<Instr, u128>>> {
        code.chunks_exact(16)
            .map(|c| {
                let w = u128::from_le_bytes(c.try_into().expect("16 bytes"));
                Some(ampere::decode(w).map_err(|_| w))
            })
            .collect()
    }
    fn first_instr(off: u32) -> u32 {
        off
    }
    fn next_of(off: u32) -> u32 {
        off + 16
    }
    fn never(i: &Instr) -> bool {
        let (g, neg) = i.guard();
        g.is_pt() && neg
    }
    fn unconditional(i: &Instr) -> bool {
        let (g, neg) = i.guard();
        // BRA.CONV / BRA.DIV on a uniform register: taken or not by the warp's convergence.
        let on_ureg = i.opcode() == Opcode::Bra && i.has(Field::URa);
        g.is_pt() && !neg && ctrl::condition_is_true(i) && !on_ureg
    }
    fn flow(
        _cfg: &Config,
        off: u32,
        i: &Instr,
        _decoded: &dyn Fn(u32) -> Option<Instr>,
        _end: u32,
        target: &mut dyn FnMut(Option<u64>, bool) -> Result<()>,
    ) -> Result<Flow> {
        use Opcode as O;
        let op = i.opcode();
        let mut returns = false;
        match op {
            O::Bra if i.has(Field::Target) => target(i.target(off as u64), false)?,
            O::Call => {
                returns = true;
                if let Some(t) = ctrl::call_target(i, off) {
                    target(Some(t), false)?;
                }
            }
            _ => {}
        }
        let ends = ctrl::ends_block(op);
        Ok(Flow {
            ends,
            returns,
            branchy: ends,
        })
    }
    fn lift_one(cx: &mut Cx, i: &Instr) -> Result<()> {
        lift_one(cx, i)
    }
    fn guard(i: &Instr) -> Option<(u8, bool)> {
        let (p, neg) = i.guard();
        (!p.is_pt()).then_some((p.0, neg))
    }
}

/// Lifts one instruction, handling its guard (and a control instruction's condition).
fn lift_one(cx: &mut Cx, i: &Instr) -> Result<()> {
    let run = cx.pred_run.take();
    let (guard, neg) = i.guard();
    if guard.is_pt() && neg {
        return Ok(());
    }
    if i.opcode() == Opcode::Bra {
        return ctrl::lift(cx, i);
    }
    let cond = !ctrl::condition_is_true(i);
    if guard.is_pt() && !cond {
        return dispatch(cx, i);
    }
    let uniform = i.guard_is_uniform();
    let reg = if uniform {
        Reg::upred(guard.0)
    } else {
        Reg::pred(guard.0)
    };
    cx.guarded(
        run,
        (reg, neg),
        !cond,
        |cx| {
            let g = if uniform {
                cx.upred(guard.0, neg)
            } else {
                cx.pred(guard.0, neg)
            };
            if cond {
                let c = ctrl::condition(cx, i);
                cx.and(g, c)
            } else {
                g
            }
        },
        |cx| dispatch(cx, i),
    )
}

fn dispatch(cx: &mut Cx, i: &Instr) -> Result<()> {
    use Opcode as O;
    match i.opcode() {
        O::Iadd3
        | O::Imad
        | O::Isetp
        | O::Lop3
        | O::Plop3
        | O::Shf
        | O::Prmt
        | O::Lea
        | O::Sel
        | O::Imnmx
        | O::Iabs
        | O::Flo
        | O::Popc
        | O::Brev
        | O::Bmsk
        | O::Sgxt
        | O::Idp
        | O::Vabsdiff
        | O::Mov
        | O::P2r
        | O::R2p
        | O::Lepc
        | O::Uiadd3
        | O::Uimad
        | O::Uisetp
        | O::Uldc
        | O::Ulea
        | O::Ulop3
        | O::Umov
        | O::Uplop3
        | O::Upopc
        | O::Uprmt
        | O::Usel
        | O::Usgxt
        | O::Ushf
        | O::Ubmsk
        | O::Ubrev
        | O::Uflo
        | O::R2ur => int::lift(cx, i),
        O::Fadd
        | O::Fmul
        | O::Ffma
        | O::Fsetp
        | O::Fset
        | O::Fsel
        | O::Fmnmx
        | O::Mufu
        | O::Frnd
        | O::Fchk
        | O::Fswzadd => float::lift(cx, i),
        O::Dadd | O::Dmul | O::Dfma | O::Dsetp => double::lift(cx, i),
        O::Hadd2 | O::Hmul2 | O::Hfma2 | O::Hset2 | O::Hsetp2 | O::Hmnmx2 => half::lift(cx, i),
        O::F2f | O::F2i | O::I2f | O::I2fp | O::F2ip | O::F2fp | O::I2i => conv::lift(cx, i),
        O::Ld
        | O::St
        | O::Ldg
        | O::Stg
        | O::Ldl
        | O::Stl
        | O::Lds
        | O::Sts
        | O::Ldc
        | O::Atom
        | O::Atomg
        | O::Atoms
        | O::Red
        | O::Cctl
        | O::Cctll
        | O::Membar
        | O::Errbar
        | O::Qspc
        | O::Ldgsts
        | O::Ldgdepbar => mem::lift(cx, i),
        O::S2r
        | O::S2ur
        | O::Cs2r
        | O::Shfl
        | O::Vote
        | O::Voteu
        | O::Redux
        | O::Match
        | O::Bar
        | O::B2r => warp::lift(cx, i),
        O::Ald | O::Ast | O::Ipa | O::Out | O::Isberd | O::Pixld => io::lift(cx, i),
        O::Tex
        | O::Tld
        | O::Tld4
        | O::Tmml
        | O::Txd
        | O::Txq
        | O::Suld
        | O::Sust
        | O::Suatom
        | O::Sured => tex::lift(cx, i),
        O::Hmma | O::Imma | O::Ldsm | O::Movm => tensor::lift(cx, i),
        _ => ctrl::lift(cx, i),
    }
}
