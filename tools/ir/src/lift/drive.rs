//! The lifting driver every instruction set shares: decode the code stream, find the
//! reachable instructions and the block leaders, lift each block instruction by instruction
//! into one [`Function`], and wrap it with the configuration's banks and memory sizes into a
//! [`Shader`]. What differs per instruction set (word size, scheduling slots, which
//! instructions transfer control, the semantics) is a [`Frontend`].

use super::state::State;
use super::{Config, Cx, LiftError, Result};
use crate::ir::{BlockId, Function, Op, Terminator};
use crate::shader::{Bank, BankSource, Shader};
use std::collections::{BTreeMap, BTreeSet};

/// How one instruction moves control, as the driver's reachability pass needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flow {
    /// The instruction ends its block (a branch, call, return, exit).
    pub ends: bool,
    /// Execution continues after it when it is taken (a call: the return lands there).
    pub returns: bool,
    /// A predicated form needs the next instruction as a leader even if it does not end
    /// its block.
    pub branchy: bool,
}

/// One instruction set's side of lifting.
pub(crate) trait Frontend {
    /// A decoded instruction.
    type Instr: Copy;
    /// Bytes per instruction slot.
    const SLOT: u32;
    /// Decodes every slot of `code`: `None` for slots that hold no instruction (Maxwell's
    /// scheduling words), `Err(word)` for words that do not decode.
    fn decode(code: &[u8]) -> Vec<Option<std::result::Result<Self::Instr, u128>>>;
    /// The first instruction at or after byte `off` (past a scheduling word).
    fn first_instr(off: u32) -> u32;
    /// The instruction after the one at `off`.
    fn next_of(off: u32) -> u32;
    /// Whether the guard of `i` is the constant false (`@!PT`): never executed.
    fn never(i: &Self::Instr) -> bool;
    /// Whether `i` is unconditional.
    fn unconditional(i: &Self::Instr) -> bool;
    /// Whether [`Frontend::flow`] of `i` is nothing at all (no successor but the next
    /// instruction, the default [`Flow`]): most instructions, which the reachability pass
    /// then steps over without the call. `false` asks for the call.
    fn plain(_i: &Self::Instr) -> bool {
        false
    }
    /// The control facts of `i` at `off`; calls `target(t, from_table)` for every static
    /// successor other than the next instruction (`t` as the instruction names it; the
    /// driver checks it and skips to [`Frontend::first_instr`]).
    fn flow(
        cfg: &Config,
        off: u32,
        i: &Self::Instr,
        decoded: &dyn Fn(u32) -> Option<Self::Instr>,
        end: u32,
        target: &mut dyn FnMut(Option<u64>, bool) -> Result<()>,
    ) -> Result<Flow>;
    /// Lifts one instruction (its guard included) into `cx`.
    fn lift_one(cx: &mut Cx, i: &Self::Instr) -> Result<()>;
    /// The guard of `i` (predicate, negated) when it is guarded (`None`: unconditional).
    fn guard(i: &Self::Instr) -> Option<(u8, bool)>;
    /// Whether `i`, guarded, may run unconditionally with its writes selected by the guard
    /// (`Cx::if_converted`; the default: no instruction may).
    fn if_convertible(_i: &Self::Instr) -> bool {
        false
    }
}

/// Lifts a bare code stream of frontend `F` (instructions from byte 0).
pub(crate) fn lift<F: Frontend>(code: &[u8], cfg: &Config) -> Result<Shader> {
    let step = F::SLOT;
    let instrs = F::decode(code);
    let n_slots = instrs.len() as u32;
    let end = n_slots * step;
    let slot = |off: u32| (off / step) as usize;
    let get = |off: u32| instr_at::<F>(&instrs, off);
    let decoded = |o: u32| match instrs.get(slot(o)) {
        Some(Some(Ok(i))) => Some(*i),
        _ => None,
    };
    // Pass 1: reachability and leaders.
    let entry = F::first_instr(0);
    let mut leaders: BTreeSet<u32> = BTreeSet::new();
    let mut seen = vec![false; n_slots as usize];
    let mut n_seen = 0usize;
    let mut work: Vec<u32> = vec![entry];
    leaders.insert(entry);
    // Targets read from jump tables in embedded banks (`jump_table`).
    let mut table_targets: Vec<u32> = Vec::new();
    for &t in &cfg.extra_targets {
        let t = F::first_instr(t);
        if t < end {
            leaders.insert(t);
            work.push(t);
        }
    }
    while let Some(mut off) = work.pop() {
        loop {
            if off >= end || seen[slot(off)] {
                break;
            }
            seen[slot(off)] = true;
            n_seen += 1;
            let i = get(off)?;
            let nx = F::next_of(off);
            if F::plain(&i) {
                off = nx;
                continue;
            }
            let mut add = |t: Option<u64>, from_table: bool| -> Result<()> {
                let t = match t {
                    Some(t) if t < end as u64 && t % step as u64 == 0 => F::first_instr(t as u32),
                    Some(t) => {
                        return Err(LiftError::BadTarget {
                            offset: off,
                            target: t,
                        })
                    }
                    None => {
                        return Err(LiftError::BadTarget {
                            offset: off,
                            target: u64::MAX,
                        })
                    }
                };
                leaders.insert(t);
                work.push(t);
                if from_table {
                    table_targets.push(t);
                }
                Ok(())
            };
            let flow = F::flow(cfg, off, &i, &decoded, end, &mut add)?;
            if flow.returns {
                leaders.insert(nx);
                work.push(nx);
            }
            // Only control flow needs the guard (most instructions are neither).
            if flow.ends || flow.branchy {
                let uncond = F::unconditional(&i);
                if flow.ends || (!uncond && !F::never(&i)) {
                    leaders.insert(nx);
                }
                if flow.ends && uncond && !flow.returns {
                    break;
                }
            }
            off = nx;
        }
    }
    // Pass 2: blocks. First without the zero, sign and overflow flags of `.CC` instructions,
    // which few shaders read (`Cx::zso_flags`); again with them when an instruction reads one.
    table_targets.sort_unstable();
    table_targets.dedup();
    let r = Reach {
        leaders,
        seen,
        entry,
        end,
        n_seen,
        table_targets,
    };
    let lifted = match blocks::<F>(&r, cfg, &instrs, false)? {
        Some(l) => l,
        None => blocks::<F>(&r, cfg, &instrs, true)?.expect("lifted with every flag"),
    };
    Ok(shader(lifted, cfg))
}

/// The decoded slots of a code stream ([`Frontend::decode`]).
type Slots<I> = [Option<std::result::Result<I, u128>>];

/// The instruction at byte `off` of the decoded code `instrs`: an error where its word does
/// not decode or no instruction is there.
#[inline]
fn instr_at<F: Frontend>(instrs: &Slots<F::Instr>, off: u32) -> Result<F::Instr> {
    match instrs.get((off / F::SLOT) as usize) {
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
}

/// Whether the guarded instructions after byte `off` that continue a run of guard `g` in
/// the same block can all run unconditionally too ([`Frontend::if_convertible`]): an
/// instruction of the run is if-converted only then, so that a run ending in a memory
/// access (`@P0 IADD.CC; @P0 IADD.X; @P0 STG`) stays one guarded block, where the access
/// sees its address computed, not selected.
fn run_converts<F: Frontend>(
    instrs: &Slots<F::Instr>,
    starts_block: &[bool],
    mut off: u32,
    end: u32,
    g: (u8, bool),
) -> bool {
    while off < end && starts_block.get((off / F::SLOT) as usize) != Some(&true) {
        let Some(Some(Ok(i))) = instrs.get((off / F::SLOT) as usize) else {
            return true;
        };
        if F::guard(i) != Some(g) {
            return true;
        }
        if !F::if_convertible(i) {
            return false;
        }
        off = F::next_of(off);
    }
    true
}

/// A lifted function and what the shader around it needs to know about the code.
struct Lifted {
    f: Function,
    /// Guest instructions lifted.
    guest: usize,
    /// The local-memory extent ([`Cx::local_extent`]).
    local_extent: u32,
    /// Whether an instruction accesses local memory ([`Cx::uses_local`]).
    uses_local: bool,
    /// Whether an instruction accesses shared memory ([`Cx::uses_shared`]).
    uses_shared: bool,
}

/// What the reachability pass found: block leaders, the slots reached, the entry, the end
/// of the code, how many instructions were reached and the jump-table targets.
struct Reach {
    leaders: BTreeSet<u32>,
    seen: Vec<bool>,
    entry: u32,
    end: u32,
    n_seen: usize,
    table_targets: Vec<u32>,
}

/// Lifts the reached code block by block into a function, with what the shader needs to know
/// about it. With `zso_flags` false, `.CC` instructions leave the
/// zero, sign and overflow flags out, and the answer is `None` as soon as an instruction
/// reads one of them.
fn blocks<F: Frontend>(
    r: &Reach,
    cfg: &Config,
    instrs: &Slots<F::Instr>,
    zso_flags: bool,
) -> Result<Option<Lifted>> {
    let (step, end) = (F::SLOT, r.end);
    let slot = |off: u32| (off / step) as usize;
    let mut f = Function::new();
    f.insts.reserve(r.n_seen * 8);
    f.indirect_targets = r.table_targets.clone();
    let mut block_of: BTreeMap<u32, BlockId> = BTreeMap::new();
    for &l in &r.leaders {
        if l < end && r.seen[slot(l)] {
            block_of.insert(l, f.add_block(Some(l)));
        }
    }
    if f.blocks.is_empty() {
        // No instruction at all: an empty program.
        let b = f.add_block(Some(r.entry));
        f.blocks[b.index()].term = Terminator::Exit;
    }
    // Block 0 must be the entry.
    if let Some(&b) = block_of.get(&r.entry) {
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
    let mut starts_block = vec![false; r.seen.len()];
    for &(a, _) in &starts {
        if let Some(s) = starts_block.get_mut(slot(a)) {
            *s = true;
        }
    }
    // Whether a guarded instruction's run after byte `next` converts too (`Cx::run_converts`).
    let converts =
        |next: u32, g: (u8, bool)| run_converts::<F>(instrs, &starts_block, next, end, g);
    let mut made = super::ctx::Made::take();
    let mut local_extent = 0u32;
    let (mut uses_local, mut uses_shared) = (false, false);
    let mut state = super::state::State::take();
    for (k, &(start, bid)) in starts.iter().enumerate() {
        // Room for the block's IR (several instructions per guest instruction) up front.
        let span = starts.get(k + 1).map_or(end, |n| n.0).saturating_sub(start) / step;
        f.blocks[bid.index()].insts.reserve(span as usize * 8);
        let mut cx = Cx::new(
            &mut f,
            bid,
            cfg,
            &block_of,
            start,
            std::mem::take(&mut state),
        );
        cx.made = std::mem::take(&mut made);
        cx.run_converts = Some(&converts);
        cx.zso_flags = zso_flags;
        let mut off = start;
        loop {
            let i = instr_at::<F>(instrs, off)?;
            guest += 1;
            cx.addr = off;
            cx.next = F::next_of(off);
            F::lift_one(&mut cx, &i)?;
            if cx.zso_read {
                break;
            }
            if cx.done() {
                break;
            }
            off = cx.next;
            if starts_block.get(slot(off)) == Some(&true) {
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
        made = std::mem::take(&mut cx.made);
        state = std::mem::take(&mut cx.state);
        local_extent = local_extent.max(cx.local_extent);
        uses_local |= cx.uses_local;
        uses_shared |= cx.uses_shared;
        if cx.zso_read {
            state.give_back(f.blocks.len());
            made.give_back(f.blocks.len());
            return Ok(None);
        }
    }
    made.place_constants(&mut f);
    if !cfg.keep_unread_sets {
        drop_unread_sets(&mut f, &state);
    }
    state.give_back(f.blocks.len());
    made.give_back(f.blocks.len());
    Ok(Some(Lifted {
        f,
        guest,
        local_extent,
        uses_local,
        uses_shared,
    }))
}

/// Drops the `Set`s of guest state no block reads at its entry (no `Get` of the slot
/// anywhere, [`State::got`]): `ssa` would drop them, after carrying them through its tables
/// (most `Set`s: a temporary, a predicate or the carry used only in its block). Only where
/// `ssa` will run (no dynamic jump, not too many blocks); elsewhere guest state stays in
/// variables and the stores stay as they were. A block's `Set`s end it ([`State::flush`]);
/// the few placed earlier (a guarded run's block reopened) are left to `ssa`.
fn drop_unread_sets(f: &mut Function, state: &State) {
    if f.blocks.len() * crate::ir::STATE_SLOTS > crate::passes::ssa::MAX_TABLE
        || f.blocks
            .iter()
            .any(|b| matches!(b.term, Terminator::Dynamic(_)))
    {
        return;
    }
    let Function { blocks, insts, .. } = f;
    for b in blocks.iter_mut() {
        let tail = b
            .insts
            .iter()
            .rev()
            .take_while(|&&v| matches!(insts[v.index()].op, Op::Set(_)))
            .count();
        let start = b.insts.len() - tail;
        let mut w = start;
        for k in start..b.insts.len() {
            let v = b.insts[k];
            if let Op::Set(r) = insts[v.index()].op {
                if state.got(r) {
                    b.insts[w] = v;
                    w += 1;
                }
            }
        }
        b.insts.truncate(w);
    }
}

/// The shader of a lifted function: the configuration's banks, and the memory sizes the code
/// needs (a space it uses gets at least one word).
fn shader(lifted: Lifted, cfg: &Config) -> Shader {
    let Lifted {
        mut f,
        guest,
        local_extent,
        uses_local: used_local,
        uses_shared: used_shared,
    } = lifted;
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
    f.sbuf_table = cfg.sbuf_table();
    Shader {
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
    }
}
