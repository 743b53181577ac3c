//! Value ranges of a function's integers by interval arithmetic (seed 001's c1 rule: every
//! value followed to its single SSA definition; constants, `& K`, shifts, bit-field
//! extracts, min, max, clamps and casts bound it). Each value gets an unsigned and a signed
//! interval of its type's width, each narrowing the other (so `smax(smin(x, 60), 0)` is
//! `[0, 60]`).
//!
//! The solver is optimistic and sparse: every value starts empty and is re-evaluated when an
//! operand changes (phis: the union of their incoming values); a value that changed more than
//! [`WIDEN_AFTER`] times has each growing bound moved to its type's extreme, so each value
//! changes a bounded number of times and the work is linear in the def-use edges. Two
//! in-order passes then narrow the widened values again (a value whose operands kept their
//! sets since its last evaluation takes that evaluation's result). Values the analysis does not
//! understand (registers outside SSA, memory and attribute loads, constant-bank words, floats)
//! take their type's whole range.

use crate::ir::{Function, Op, Type, Value};

/// Changes a value may make before its growing bounds widen to the type's extremes.
pub const WIDEN_AFTER: u8 = 6;

/// An unsigned range `[lo, hi]` (inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The least value.
    pub lo: u64,
    /// The greatest value.
    pub hi: u64,
}

/// A value's unsigned and signed intervals (the same set of bit patterns, both kept because
/// each bounds what the other cannot). Widths are at most 64 bits, so both fit 64-bit
/// integers; the operations whose intermediate results may not (sums, products, negations)
/// compute them in 128 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Abs {
    u: (u64, u64),
    s: (i64, i64),
}

/// The bit width of an integer type (Bool: 1); `None` for floats and Void.
fn width(t: Type) -> Option<u32> {
    match t {
        Type::Bool => Some(1),
        Type::U32 => Some(32),
        Type::U64 => Some(64),
        _ => None,
    }
}

/// The greatest unsigned value of width `w` (1 to 64).
fn umax(w: u32) -> u64 {
    u64::MAX >> (64 - w)
}

/// The least signed value of width `w`.
fn smin(w: u32) -> i64 {
    i64::MIN >> (64 - w)
}

/// The greatest signed value of width `w`.
fn smax(w: u32) -> i64 {
    i64::MAX >> (64 - w)
}

/// The signed value of the `w`-bit pattern `x`.
fn sext(w: u32, x: u64) -> i64 {
    ((x << (64 - w)) as i64) >> (64 - w)
}

/// The `w`-bit pattern of the signed value `x`.
fn trunc(w: u32, x: i64) -> u64 {
    x as u64 & umax(w)
}

/// The whole range of width `w`.
fn top(w: u32) -> Abs {
    Abs {
        u: (0, umax(w)),
        s: (smin(w), smax(w)),
    }
}

/// The single `w`-bit pattern `c` (what [`from_u`] gives `[c, c]`, without the narrowing).
fn point(w: u32, c: u64) -> Abs {
    let s = sext(w, c);
    Abs {
        u: (c, c),
        s: (s, s),
    }
}

/// The set of the unsigned interval `u` of width `w` (signed one derived).
fn from_u(w: u32, lo: u64, hi: u64) -> Abs {
    reduce(
        w,
        Abs {
            u: (lo, hi),
            s: (smin(w), smax(w)),
        },
    )
}

/// The set of the signed interval `s` of width `w` (unsigned one derived).
fn from_s(w: u32, lo: i64, hi: i64) -> Abs {
    reduce(
        w,
        Abs {
            u: (0, umax(w)),
            s: (lo, hi),
        },
    )
}

/// Narrows each interval by what the other says (twice: each step may help the other).
fn reduce(w: u32, mut a: Abs) -> Abs {
    let half = 1u64 << (w - 1);
    for _ in 0..2 {
        let (lo, hi) = a.u;
        let s = if hi < half {
            (lo as i64, hi as i64)
        } else if lo >= half {
            (sext(w, lo), sext(w, hi))
        } else {
            (smin(w), smax(w))
        };
        a.s = (a.s.0.max(s.0), a.s.1.min(s.1));
        let (lo, hi) = a.s;
        let u = if lo >= 0 {
            (lo as u64, hi as u64)
        } else if hi < 0 {
            (trunc(w, lo), trunc(w, hi))
        } else {
            (0, umax(w))
        };
        a.u = (a.u.0.max(u.0), a.u.1.min(u.1));
    }
    if a.u.0 > a.u.1 || a.s.0 > a.s.1 {
        // Only an inconsistent input gets here; stay sound.
        return top(w);
    }
    a
}

fn union(a: Abs, b: Abs) -> Abs {
    Abs {
        u: (a.u.0.min(b.u.0), a.u.1.max(b.u.1)),
        s: (a.s.0.min(b.s.0), a.s.1.max(b.s.1)),
    }
}

fn meet(w: u32, a: Abs, b: Abs) -> Abs {
    reduce(
        w,
        Abs {
            u: (a.u.0.max(b.u.0), a.u.1.min(b.u.1)),
            s: (a.s.0.max(b.s.0), a.s.1.min(b.s.1)),
        },
    )
}

/// `old` with each bound that `new` moves outward set to the type's extreme.
fn widen(w: u32, old: Abs, new: Abs) -> Abs {
    let t = top(w);
    Abs {
        u: (
            if new.u.0 < old.u.0 { t.u.0 } else { old.u.0 },
            if new.u.1 > old.u.1 { t.u.1 } else { old.u.1 },
        ),
        s: (
            if new.s.0 < old.s.0 { t.s.0 } else { old.s.0 },
            if new.s.1 > old.s.1 { t.s.1 } else { old.s.1 },
        ),
    }
}

/// A signed interval widened to 128 bits, for sums, differences and products.
fn wide(s: (i64, i64)) -> (i128, i128) {
    (s.0 as i128, s.1 as i128)
}

/// The intervals `[lo, hi]` of a signed expression over the corners of two signed intervals,
/// or the whole range when a corner leaves width `w`.
fn corners(w: u32, a: (i128, i128), b: (i128, i128), f: impl Fn(i128, i128) -> i128) -> Abs {
    let c = [f(a.0, b.0), f(a.0, b.1), f(a.1, b.0), f(a.1, b.1)];
    let (lo, hi) = (*c.iter().min().unwrap(), *c.iter().max().unwrap());
    if lo < smin(w) as i128 || hi > smax(w) as i128 {
        return top(w);
    }
    from_s(w, lo as i64, hi as i64)
}

/// The unsigned interval `[lo, hi]` of an unsigned sum or difference computed without
/// wrapping: itself when it stays inside width `w`, shifted by 2^w when both ends wrap the
/// same way, else the whole range.
fn wrap(w: u32, lo: i128, hi: i128) -> Abs {
    let m = 1i128 << w;
    if lo >= 0 && hi < m {
        from_u(w, lo as u64, hi as u64)
    } else if lo >= m && hi < 2 * m {
        from_u(w, (lo - m) as u64, (hi - m) as u64)
    } else if lo < 0 && hi < 0 && lo >= -m {
        from_u(w, (lo + m) as u64, (hi + m) as u64)
    } else {
        top(w)
    }
}

/// All ones up to the highest set bit of `x`.
fn ones_to(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        u64::MAX >> x.leading_zeros()
    }
}

/// `x >> n`, 0 once `n` reaches 64.
fn shr(x: u64, n: u64) -> u64 {
    x.checked_shr(n.min(64) as u32).unwrap_or(0)
}

/// A binary operation of width `w` over `a[0]` and `a[1]`: what its unsigned evaluation `fu`
/// and its signed one `fs` both allow.
fn both(w: u32, a: &[Abs], fu: impl Fn(Abs, Abs) -> Abs, fs: impl Fn(Abs, Abs) -> Abs) -> Abs {
    meet(w, fu(a[0], a[1]), fs(a[0], a[1]))
}

/// Evaluates one operation of result width `w` over its operands' sets.
fn eval(op: Op, w: u32, ws: &[u32], a: &[Abs]) -> Abs {
    match op {
        Op::IAdd => both(
            w,
            a,
            |x, y| {
                wrap(
                    w,
                    x.u.0 as i128 + y.u.0 as i128,
                    x.u.1 as i128 + y.u.1 as i128,
                )
            },
            |x, y| corners(w, wide(x.s), wide(y.s), |p, q| p + q),
        ),
        Op::ISub => both(
            w,
            a,
            |x, y| {
                wrap(
                    w,
                    x.u.0 as i128 - y.u.1 as i128,
                    x.u.1 as i128 - y.u.0 as i128,
                )
            },
            |x, y| corners(w, wide(x.s), wide(y.s), |p, q| p - q),
        ),
        Op::IMul => both(
            w,
            a,
            |x, y| {
                // Products of 64-bit values fit 128 bits.
                let h = x.u.1 as u128 * y.u.1 as u128;
                if h <= umax(w) as u128 {
                    from_u(w, x.u.0 * y.u.0, h as u64)
                } else {
                    top(w)
                }
            },
            |x, y| corners(w, wide(x.s), wide(y.s), |p, q| p * q),
        ),
        Op::INeg => {
            let (lo, hi) = wide(a[0].s);
            meet(
                w,
                wrap(w, -(a[0].u.1 as i128), -(a[0].u.0 as i128)),
                if -lo > smax(w) as i128 {
                    top(w)
                } else {
                    from_s(w, -hi as i64, -lo as i64)
                },
            )
        }
        Op::UMulHi => {
            let mul_hi = |x: u64, y: u64| ((x as u128 * y as u128) >> w) as u64;
            from_u(w, mul_hi(a[0].u.0, a[1].u.0), mul_hi(a[0].u.1, a[1].u.1))
        }
        Op::And => {
            if a[0].u.0 == a[0].u.1 && a[1].u.0 == a[1].u.1 {
                let x = a[0].u.0 & a[1].u.0;
                return from_u(w, x, x);
            }
            from_u(w, 0, a[0].u.1.min(a[1].u.1))
        }
        Op::Or => from_u(w, a[0].u.0.max(a[1].u.0), ones_to(a[0].u.1.max(a[1].u.1))),
        Op::Xor => from_u(w, 0, ones_to(a[0].u.1.max(a[1].u.1))),
        Op::Not => from_u(w, umax(w) - a[0].u.1, umax(w) - a[0].u.0),
        Op::Shl => {
            let (lo, hi) = (a[1].u.0.min(127) as u32, a[1].u.1.min(127) as u32);
            if hi >= w || (a[0].u.1 as u128) << hi > umax(w) as u128 {
                return top(w);
            }
            from_u(w, a[0].u.0 << lo, a[0].u.1 << hi)
        }
        Op::LShr => {
            let (lo, hi) = (a[1].u.0.min(w as u64 - 1), a[1].u.1.min(w as u64 - 1));
            from_u(w, a[0].u.0 >> hi, a[0].u.1 >> lo)
        }
        Op::AShr => {
            let b = (
                a[1].u.0.min(w as u64 - 1) as i128,
                a[1].u.1.min(w as u64 - 1) as i128,
            );
            corners(w, wide(a[0].s), b, |p, q| p >> q)
        }
        Op::BfeU => {
            let count = a[2].u.1.min(w as u64) as u32;
            from_u(
                w,
                0,
                umax(count.max(1)).min(shr(a[0].u.1, a[1].u.0)) * (count > 0) as u64,
            )
        }
        Op::BfeS => {
            let (c_lo, c_hi) = (a[2].u.0.min(w as u64) as u32, a[2].u.1.min(w as u64) as u32);
            let field = shr(a[0].u.1, a[1].u.0);
            if c_lo == c_hi && c_lo > 0 && field < 1u64 << (c_lo - 1) {
                from_u(w, 0, field)
            } else if c_hi > 0 {
                from_s(w, smin(c_hi), smax(c_hi))
            } else {
                from_u(w, 0, 0)
            }
        }
        Op::Popc => from_u(w, 0, ws[0] as u64),
        Op::FindUMsb | Op::FindSMsb => from_s(w, -1, ws[0] as i64 - 1),
        Op::UMin => from_u(w, a[0].u.0.min(a[1].u.0), a[0].u.1.min(a[1].u.1)),
        Op::UMax => from_u(w, a[0].u.0.max(a[1].u.0), a[0].u.1.max(a[1].u.1)),
        Op::SMin => from_s(w, a[0].s.0.min(a[1].s.0), a[0].s.1.min(a[1].s.1)),
        Op::SMax => from_s(w, a[0].s.0.max(a[1].s.0), a[0].s.1.max(a[1].s.1)),
        Op::Select => reduce(w, union(a[1], a[2])),
        Op::UConvert if a[0].u.1 <= umax(w) => from_u(w, a[0].u.0, a[0].u.1),
        Op::SConvert if ws[0] <= w => from_s(w, a[0].s.0, a[0].s.1),
        Op::Bitcast if ws[0] == w => a[0],
        Op::Pack64 => from_u(w, a[0].u.0 + (a[1].u.0 << 32), a[0].u.1 + (a[1].u.1 << 32)),
        Op::Hi32 => from_u(w, a[0].u.0 >> 32, a[0].u.1 >> 32),
        op if is_compare(op) => from_u(w, 0, 1),
        _ => top(w),
    }
}

/// Whether `op` is an integer comparison (a Bool: `[0, 1]`).
fn is_compare(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        IEq | INe | SLt | SLe | SGt | SGe | ULt | ULe | UGt | UGe
    )
}

/// How many operands an operation's interval reads (the rest, e.g. a select's condition, are
/// ignored); `None`: the operation is not evaluated (its value is its type's whole range).
fn operands(op: Op) -> Option<usize> {
    Some(match op {
        Op::INeg
        | Op::Not
        | Op::Popc
        | Op::FindUMsb
        | Op::FindSMsb
        | Op::UConvert
        | Op::SConvert
        | Op::Bitcast
        | Op::Hi32 => 1,
        Op::IAdd
        | Op::ISub
        | Op::IMul
        | Op::UMulHi
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Shl
        | Op::LShr
        | Op::AShr
        | Op::UMin
        | Op::UMax
        | Op::SMin
        | Op::SMax
        | Op::Pack64 => 2,
        op if is_compare(op) => 2,
        Op::BfeU | Op::BfeS | Op::Select => 3,
        _ => return None,
    })
}

/// The ranges of every value of a function.
pub struct Intervals {
    /// Per value: its index in `state` ([`UNPLACED`]: none, its type's whole range).
    slot: Vec<u32>,
    /// Per placed value (in `slot`'s numbering): its set once reached.
    state: Vec<Option<Abs>>,
    /// Per value: its bit width (0: not an integer).
    widths: Vec<u8>,
}

/// [`Intervals::slot`]'s entry for a value the solver does not place (in no block, or not
/// asked for).
const UNPLACED: u32 = u32::MAX;

impl Intervals {
    /// The unsigned range of `v` (its type's whole range when unknown or not an integer; a
    /// 32-bit value's range lies in `[0, 2^32)`). For [`intervals_of`], `v` is a root or a
    /// value they depend on (others read as unknown 64-bit values).
    pub fn range(&self, v: Value) -> Range {
        let w = match self.widths[v.index()] {
            0 => 64,
            w => w as u32,
        };
        let a = match self.slot[v.index()] {
            UNPLACED => None,
            s => self.state[s as usize],
        }
        .unwrap_or(top(w));
        Range {
            lo: a.u.0,
            hi: a.u.1,
        }
    }
}

/// The state of the solver.
struct Solver<'a> {
    f: &'a Function,
    /// [`Intervals`]'s tables, being filled.
    r: Intervals,
}

impl Solver<'_> {
    /// The bit width of `v` (`None`: not an integer).
    #[inline]
    fn width(&self, v: Value) -> Option<u32> {
        match self.r.widths[v.index()] {
            0 => None,
            w => Some(w as u32),
        }
    }

    /// The current set of operand `v` (`None`: not yet reached).
    fn get(&self, v: Value) -> Option<Abs> {
        let i = v.index();
        let w = self.width(v)?;
        if let Op::Const(c) = self.f.insts[i].op {
            return Some(point(w, c & umax(w)));
        }
        match self.r.slot[i] {
            UNPLACED => Some(top(w)),
            s => self.r.state[s as usize],
        }
    }

    /// One narrowing pass over the placed values, in order (each set met with what its
    /// operands now give); whether some set changed. A value none of whose operands changed
    /// since its last evaluation gives what that gave (`e.last`), without evaluating it again.
    fn narrow(&mut self, order: &[Value], e: &mut Evaluations) -> bool {
        let mut changed = false;
        for (k, &v) in order.iter().enumerate() {
            let (Some(old), Some(w)) = (self.r.state[k], self.width(v)) else {
                continue;
            };
            let new = if e.stale(self.f, &self.r.slot, k, v) {
                let new = self.eval(v);
                e.evaluated(k, new);
                new
            } else {
                debug_assert_eq!(
                    self.eval(v),
                    e.last[k],
                    "an evaluation went stale unnoticed"
                );
                e.last[k]
            };
            if let Some(new) = new {
                let next = meet(w, old, new);
                if next != old {
                    changed = true;
                    e.changed(k);
                }
                self.r.state[k] = Some(next);
            }
        }
        changed
    }

    /// `v`'s set from its operands' current sets (`None`: an operand is not yet reached).
    fn eval(&self, v: Value) -> Option<Abs> {
        let i = self.f.inst(v);
        let w = self.width(v)?;
        if let Op::Phi(_) = i.op {
            return self
                .f
                .phi_args(v)
                .iter()
                .filter_map(|&(_, x)| self.get(x))
                .reduce(union);
        }
        if let Op::Const(_) = i.op {
            return self.get(v);
        }
        let Some(n) = operands(i.op) else {
            return Some(top(w));
        };
        let mut a = [top(w); 3];
        let mut ws = [w; 3];
        for k in 0..n {
            let x = i.args[k];
            if x.is_none() {
                return Some(top(w));
            }
            let Some(xw) = self.width(x) else {
                // A float operand (a bitcast from float): nothing known.
                if k == 0 || !matches!(i.op, Op::Select) {
                    return Some(top(w));
                }
                continue;
            };
            ws[k] = xw;
            if k == 0 && matches!(i.op, Op::Select) {
                continue;
            }
            a[k] = self.get(x)?;
        }
        Some(eval(i.op, w, &ws[..n], &a[..n]))
    }
}

/// Computes the ranges of every value of `f`.
pub fn intervals(f: &Function) -> Intervals {
    solve(f, None)
}

/// Computes the ranges of `roots` and of the values they depend on (their operands, phi
/// operands included, and theirs); other values read as unknown. The same ranges as
/// [`intervals`] gives them: a value's set depends only on its operands' sets, values outside
/// this closure only ever queue values outside it, so the worklist visits the closure's values
/// in the same relative order and widens them at the same steps. What the reflection's
/// constant-bank reads and the texture-array sizes ask for is a small part of a function.
pub fn intervals_of(f: &Function, roots: impl IntoIterator<Item = Value>) -> Intervals {
    let mut wanted = vec![false; f.insts.len()];
    // The closure, in the order found (walked by index: the unwalked rest is the work list).
    let mut closure: Vec<Value> = Vec::new();
    let mut want = |v: Value, closure: &mut Vec<Value>| {
        if v.is_some() && !wanted[v.index()] {
            wanted[v.index()] = true;
            closure.push(v);
        }
    };
    for r in roots {
        want(r, &mut closure);
    }
    let mut k = 0;
    while let Some(&v) = closure.get(k) {
        k += 1;
        let i = f.inst(v);
        if let Op::Phi(_) = i.op {
            for &(_, x) in f.phi_args(v) {
                want(x, &mut closure);
            }
        } else {
            for x in i.args() {
                want(x, &mut closure);
            }
        }
    }
    solve(f, Some((&wanted, &closure)))
}

/// Calls `g` with each operand of `v` (a phi's incoming values).
fn for_each_operand(f: &Function, v: Value, mut g: impl FnMut(Value)) {
    if let Op::Phi(_) = f.inst(v).op {
        for &(_, x) in f.phi_args(v) {
            g(x);
        }
    } else {
        for x in f.inst(v).args() {
            g(x);
        }
    }
}

/// When each placed value (by slot) was last evaluated and what that gave, and when its set
/// last changed, in steps of one evaluation: what lets narrowing skip the values whose
/// operands kept their sets (a value's set depends on its operands' sets alone).
struct Evaluations {
    /// The step of the latest evaluation.
    step: u32,
    /// Per slot: the step of its last evaluation.
    at: Vec<u32>,
    /// Per slot: what its last evaluation gave.
    last: Vec<Option<Abs>>,
    /// Per slot: the step at which its set last changed.
    changed_at: Vec<u32>,
}

impl Evaluations {
    /// For `m` placed values, none evaluated yet.
    fn new(m: usize) -> Evaluations {
        Evaluations {
            step: 0,
            at: vec![0; m],
            last: vec![None; m],
            changed_at: vec![0; m],
        }
    }

    /// Notes that slot `k` was evaluated now, giving `new`.
    fn evaluated(&mut self, k: usize, new: Option<Abs>) {
        self.step += 1;
        self.at[k] = self.step;
        self.last[k] = new;
    }

    /// Notes that the set of slot `k` changed (after its evaluation).
    fn changed(&mut self, k: usize) {
        self.changed_at[k] = self.step;
    }

    /// Whether value `v` (slot `k`) has an operand whose set changed since `v`'s last
    /// evaluation (or was never evaluated).
    fn stale(&self, f: &Function, slot: &[u32], k: usize, v: Value) -> bool {
        let at = self.at[k];
        if at == 0 {
            return true;
        }
        let mut stale = false;
        for_each_operand(f, v, |x| {
            if let Some(&c) = slot
                .get(x.index())
                .and_then(|&s| self.changed_at.get(s as usize))
            {
                stale |= c >= at;
            }
        });
        stale
    }
}

/// The fixpoint over the placed values (those `wanted` says, when given with the list of
/// them: a set closed under operands). Its tables other than the per-value slot and width
/// are as long as the placed values, not the arena: what is asked for is usually a small
/// part of a function. Widths are known for the wanted values only (others read as not
/// integers: the solver never reads them, [`Intervals::range`] gives them 64 bits).
fn solve(f: &Function, wanted: Option<(&[bool], &[Value])>) -> Intervals {
    let n = f.insts.len();
    let width_of = |v: Value| width(f.inst(v).ty).unwrap_or(0) as u8;
    let widths: Vec<u8> = match wanted {
        None => (0..n as u32).map(|v| width_of(Value(v))).collect(),
        Some((_, list)) => {
            let mut widths = vec![0u8; n];
            for &v in list {
                widths[v.index()] = width_of(v);
            }
            widths
        }
    };
    let wanted = wanted.map(|w| w.0);
    // The placed values in block order, and each one's index in it.
    let mut slot = vec![UNPLACED; n];
    let mut order: Vec<Value> = Vec::new();
    for &v in f.blocks.iter().flat_map(|b| b.insts.iter()) {
        if wanted.is_none_or(|w| w[v.index()]) {
            slot[v.index()] = order.len() as u32;
            order.push(v);
        }
    }
    let m = order.len();
    // Users of each placed value (phi operands included), by slot: `users[first[s]..first[s
    // + 1]]`, in the order of `order` and of each user's operands.
    let mut first = vec![0u32; m + 1];
    for &v in &order {
        if widths[v.index()] != 0 {
            for_each_operand(f, v, |x| {
                if let Some(c) = first.get_mut(slot[x.index()] as usize + 1) {
                    *c += 1;
                }
            });
        }
    }
    for s in 0..m {
        first[s + 1] += first[s];
    }
    let mut fill = first.clone();
    let mut users = vec![0u32; first[m] as usize];
    for (s, &v) in order.iter().enumerate() {
        if widths[v.index()] != 0 {
            for_each_operand(f, v, |x| {
                if let Some(at) = fill.get_mut(slot[x.index()] as usize) {
                    users[*at as usize] = s as u32;
                    *at += 1;
                }
            });
        }
    }
    let mut s = Solver {
        f,
        r: Intervals {
            slot,
            state: vec![None; m],
            widths,
        },
    };
    let mut changes = vec![0u8; m];
    let mut queued = vec![true; m];
    let mut work: std::collections::VecDeque<u32> = (0..m as u32).collect();
    let mut e = Evaluations::new(m);
    let mut widened = false;
    while let Some(k) = work.pop_front() {
        let k = k as usize;
        queued[k] = false;
        let v = order[k];
        let new = s.eval(v);
        e.evaluated(k, new);
        let Some(new) = new else { continue };
        let w = s.width(v).unwrap_or(64);
        let old = s.r.state[k];
        let next = match old {
            None => new,
            Some(o) => {
                let j = union(o, new);
                if j == o {
                    continue;
                }
                changes[k] = changes[k].saturating_add(1);
                if changes[k] > WIDEN_AFTER {
                    widened = true;
                    widen(w, o, j)
                } else {
                    j
                }
            }
        };
        s.r.state[k] = Some(next);
        e.changed(k);
        for &u in &users[first[k] as usize..first[k + 1] as usize] {
            if !queued[u as usize] {
                queued[u as usize] = true;
                work.push_back(u);
            }
        }
    }
    // Narrowing: the fixpoint holds every run's values, so re-evaluating on it stays sound.
    // A second pass after one that changed nothing would evaluate the same sets again.
    // Without a widening the iteration ended at the least fixpoint (it started from nothing
    // and only joined), where re-evaluating gives every value its set again: no narrowing.
    if widened && s.narrow(&order, &mut e) {
        s.narrow(&order, &mut e);
    }
    s.r
}

#[cfg(test)]
pub(crate) mod tests;
