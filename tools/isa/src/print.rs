//! The printer: renders an instruction exactly as nvdisasm 11.8 and 12.4 do (after collapsing
//! blanks), from its form's template; generic over the ISA ([`crate::engine`]).

use crate::engine::{FieldDef, Instr, Isa};
use crate::table_syntax::{Kind, Style, Tok};
use crate::word::Word;
use std::fmt::Write;

/// What the printer needs from around an instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// Operand reuse flags from the scheduling field.
    pub reuse: u8,
    /// Texture-phase marker: `Some(false)` prints `.T`, `Some(true)` `.P`, `None` nothing.
    /// See [`crate::stream::tex_phases`].
    pub tex_phase: Option<bool>,
}

impl<I: Isa> Instr<I> {
    /// nvdisasm's text for this instruction at byte `addr` of the stream (for branch
    /// targets), with the `.reuse` flags of its scheduling field. No trailing ` ;`.
    /// Texture-phase markers need the stream context: use [`Instr::print_ctx`].
    pub fn print(&self, addr: u64, reuse: u8) -> String {
        self.print_ctx(
            addr,
            Context {
                reuse,
                tex_phase: None,
            },
        )
    }

    /// Like [`Instr::print`] with the full printing context.
    pub fn print_ctx(&self, addr: u64, ctx: Context) -> String {
        let mut s = String::with_capacity(48);
        self.write_text_ctx(&mut s, addr, ctx);
        s
    }

    /// Appends the text to `out` (see [`Instr::print`]).
    pub fn write_text(&self, out: &mut String, addr: u64, reuse: u8) {
        self.write_text_ctx(
            out,
            addr,
            Context {
                reuse,
                tex_phase: None,
            },
        );
    }

    /// Appends the text to `out` (see [`Instr::print_ctx`]).
    pub fn write_text_ctx(&self, out: &mut String, addr: u64, ctx: Context) {
        let reuse = ctx.reuse;
        let t = I::table();
        let f = self.form_def();
        let bits = self.bits();
        let (g, neg) = self.guard();
        if !g.is_pt() || neg {
            out.push('@');
            if neg {
                out.push('!');
            }
            if self.guard_is_uniform() {
                push_upred(out, g.0 as u64);
            } else {
                push_pred(out, g.0 as u64);
            }
            out.push(' ');
        }
        let start = out.len();
        for tok in &f.template {
            match tok {
                Tok::Text(s) => out.push_str(s),
                Tok::TexPhase => match ctx.tex_phase {
                    Some(false) => out.push_str(".T"),
                    Some(true) => out.push_str(".P"),
                    None => {}
                },
                Tok::Reuse(k) => {
                    if reuse >> k & 1 != 0 {
                        out.push_str(".reuse");
                    }
                }
                Tok::Field(i, style) => {
                    let d = &f.fields[*i as usize];
                    let raw = d.extract(bits);
                    match style {
                        Style::Reg => push_reg(out, raw),
                        Style::Pred => push_pred(out, raw),
                        Style::UReg => push_ureg(out, raw),
                        Style::UPred => push_upred(out, raw),
                        Style::CommaPredOnly => {
                            if raw != 7 {
                                out.push_str(", ");
                                push_pred(out, raw);
                            }
                        }
                        Style::NotAllOnes(text) => {
                            if raw != (1u64 << d.width) - 1 {
                                out.push_str(text);
                            }
                        }
                        Style::PredComma => {
                            if raw != 7 {
                                push_any_pred(out, raw, d.kind);
                                out.push_str(", ");
                            }
                        }
                        Style::Hex => push_hex(out, d.to_value(raw)),
                        Style::SHex => push_hex(out, d.to_value(raw)),
                        Style::Dec => {
                            let _ = write!(out, "{}", d.to_value(raw));
                        }
                        Style::F20 => push_f32_of::<I>(out, (raw as u32) << 12),
                        Style::F32 => push_f32_of::<I>(out, raw as u32),
                        Style::F16 => push_f16_of::<I>(out, d.to_value(raw) as u16),
                        Style::Bf16 => push_f32_of::<I>(out, (raw as u32 & 0xffff) << 16),
                        Style::D20 => push_f64_of::<I>(out, raw << 44),
                        Style::Target => {
                            // A target before the start of the stream prints negative
                            // (`BRA -0x8`), as nvdisasm 12.4 does.
                            push_hex(out, addr as i64 + I::Word::BYTES as i64 + d.to_value(raw));
                        }
                        Style::Hidden | Style::HiddenSigned => {}
                        Style::Flag(text) => {
                            if raw != 0 {
                                out.push_str(text);
                            }
                        }
                        Style::Enum(e) => {
                            if let Some(s) = t.enums[*e as usize].1.get(raw as usize) {
                                out.push_str(s);
                            }
                        }
                        Style::Mem(r) => {
                            push_mem(out, &f.fields[*r as usize], bits, d, raw, true, "")
                        }
                        Style::MemSuffix(r, sfx) => {
                            push_mem(out, &f.fields[*r as usize], bits, d, raw, true, sfx)
                        }
                        Style::CbufMem(r) => {
                            let rd = &f.fields[*r as usize];
                            if rd.extract(bits) == 255 && d.to_value(raw) == 0 {
                                out.push_str("0x0");
                            } else {
                                push_mem(out, rd, bits, d, raw, false, "");
                            }
                        }
                        Style::OptImm | Style::OptImmComma => {
                            let v = d.to_value(raw);
                            if v != 0 {
                                out.push_str(if *style == Style::OptImm { " " } else { ", " });
                                push_hex(out, v);
                            }
                        }
                        Style::RegComma => {
                            if d.kind == Kind::UReg {
                                if raw != 63 {
                                    push_ureg(out, raw);
                                    out.push_str(", ");
                                }
                            } else if raw != 255 {
                                push_reg(out, raw);
                                out.push_str(", ");
                            }
                        }
                        Style::CommaReg => {
                            if raw != 255 {
                                out.push_str(", ");
                                push_reg(out, raw);
                            }
                        }
                        Style::RegPlus(k) => {
                            push_reg(out, if raw == 255 { 255 } else { raw + *k as u64 })
                        }
                        Style::BitList => {
                            let mut first = true;
                            for b in (0..d.width).rev() {
                                if raw >> b & 1 != 0 {
                                    out.push_str(if first { ", " } else { "," });
                                    first = false;
                                    let _ = write!(out, "{b}");
                                }
                            }
                        }
                        Style::NegFloat16(n) => {
                            let neg = f.fields[*n as usize].extract(bits) != 0;
                            let h = d.to_value(raw) as u16 ^ if neg { 0x8000 } else { 0 };
                            push_f16_of::<I>(out, h);
                        }
                        Style::BitSet => {
                            out.push('{');
                            let mut first = true;
                            for b in (0..d.width).rev() {
                                if raw >> b & 1 != 0 {
                                    if !first {
                                        out.push(',');
                                    }
                                    first = false;
                                    let _ = write!(out, "{b}");
                                }
                            }
                            out.push('}');
                        }
                        Style::PlusUReg => {
                            if raw != 63 {
                                out.push('+');
                                push_ureg(out, raw);
                            }
                        }
                        Style::RegAdd(sfx) => {
                            if raw != 255 {
                                push_reg(out, raw);
                                out.push_str(sfx);
                                out.push('+');
                            }
                        }
                        Style::PlusImm => {
                            let v = d.to_value(raw);
                            if v != 0 {
                                out.push('+');
                                push_hex(out, v);
                            }
                        }
                        Style::CommaPred(n) => {
                            let neg = f.fields[*n as usize].extract(bits) != 0;
                            if raw != 7 || neg {
                                out.push_str(", ");
                                if neg {
                                    out.push('!');
                                }
                                push_pred(out, raw);
                            }
                        }
                        Style::NegPredComma(n) | Style::NegPred(n) => {
                            let neg = f.fields[*n as usize].extract(bits) != 0;
                            if raw != 7 || neg {
                                if neg {
                                    out.push('!');
                                }
                                push_pred(out, raw);
                                if matches!(style, Style::NegPredComma(_)) {
                                    out.push_str(", ");
                                }
                            }
                        }
                        Style::RegNoRz => {
                            if raw == 255 {
                                out.push_str("???255");
                            } else {
                                push_reg(out, raw);
                            }
                        }
                        Style::URegOffset(r) => {
                            push_ureg(out, f.fields[*r as usize].extract(bits));
                            let v = d.to_value(raw);
                            if v != 0 {
                                out.push('+');
                                push_hex(out, v);
                            }
                        }
                        Style::D32 => push_f64_of::<I>(out, raw << 32),
                        Style::MemSigned(r) => {
                            push_mem(out, &f.fields[*r as usize], bits, d, raw, false, "")
                        }
                    }
                }
            }
        }
        collapse(out, start);
    }
}

fn push_reg(out: &mut String, r: u64) {
    if r == 255 {
        out.push_str("RZ");
    } else {
        let _ = write!(out, "R{r}");
    }
}

fn push_ureg(out: &mut String, r: u64) {
    if r == 63 {
        out.push_str("URZ");
    } else {
        let _ = write!(out, "UR{r}");
    }
}

fn push_upred(out: &mut String, p: u64) {
    if p == 7 {
        out.push_str("UPT");
    } else {
        let _ = write!(out, "UP{p}");
    }
}

/// A predicate of either file: `UP0`/`UPT` for a uniform predicate field, else `P0`/`PT`.
fn push_any_pred(out: &mut String, p: u64, kind: Kind) {
    if kind == Kind::UPred {
        push_upred(out, p);
    } else {
        push_pred(out, p);
    }
}

fn push_pred(out: &mut String, p: u64) {
    if p == 7 {
        out.push_str("PT");
    } else {
        let _ = write!(out, "P{p}");
    }
}

fn push_hex(out: &mut String, v: i64) {
    if v < 0 {
        let _ = write!(out, "-{:#x}", v.unsigned_abs());
    } else {
        let _ = write!(out, "{v:#x}");
    }
}

/// `[R2+0x10]`-style operand. With `abs_unsigned`, an offset without a base register (an
/// absolute address, `[0x800000]`) prints unsigned, as nvdisasm 12.4 prints memory operands;
/// with a register it is signed (`[R6+-0x10]`). `sfx` follows a base register that is not
/// RZ (`R3.X4`).
fn push_mem<W: Word>(
    out: &mut String,
    rd: &FieldDef,
    bits: W,
    od: &FieldDef,
    oraw: u64,
    abs_unsigned: bool,
    sfx: &str,
) {
    let r = rd.extract(bits);
    let off = if abs_unsigned && r == 255 {
        (oraw << od.shift) as i64
    } else {
        od.to_value(oraw)
    };
    match (r == 255, off == 0) {
        (true, true) => out.push_str("RZ"),
        (true, false) => push_hex(out, off),
        (false, true) => {
            push_reg(out, r);
            out.push_str(sfx);
        }
        (false, false) => {
            push_reg(out, r);
            out.push_str(sfx);
            out.push('+');
            push_hex(out, off);
        }
    }
}

/// Collapses runs of blanks from `start` on and trims the end.
fn collapse(out: &mut String, start: usize) {
    if !out[start..].contains("  ") && !out.ends_with(' ') {
        return;
    }
    let tail: String = out[start..].to_string();
    out.truncate(start);
    let mut prev_blank = false;
    for c in tail.chars() {
        if c == ' ' {
            if !prev_blank {
                out.push(' ');
            }
            prev_blank = true;
        } else {
            out.push(c);
            prev_blank = false;
        }
    }
    while out.len() > start
        && out.ends_with(' ')
        && !out.ends_with("INF ")
        && !out.ends_with("NAN ")
    {
        out.pop();
    }
}

/// `+SNAN ` / `-SNAN ` for a signalling NaN (exponent all ones, fraction non-zero with its
/// top bit clear) of a `width`-bit float with `frac` fraction bits, where the ISA's nvdisasm
/// prints one ([`Isa::PRINTS_SNAN`]); false (nothing pushed) otherwise.
fn push_snan<I: Isa>(out: &mut String, bits: u64, frac: u32, width: u32) -> bool {
    let exp = ((1u64 << (width - 1 - frac)) - 1) << frac;
    let f = bits & ((1u64 << frac) - 1);
    if !I::PRINTS_SNAN || bits & exp != exp || f == 0 || f >> (frac - 1) != 0 {
        return false;
    }
    out.push_str(if bits >> (width - 1) & 1 != 0 {
        "-SNAN "
    } else {
        "+SNAN "
    });
    true
}

/// An f32 immediate from its bits (signalling NaNs as the ISA prints them).
fn push_f32_of<I: Isa>(out: &mut String, bits: u32) {
    if !push_snan::<I>(out, bits as u64, 23, 32) {
        push_f32(out, f32::from_bits(bits));
    }
}

/// An f16 immediate from its bits (signalling NaNs as the ISA prints them).
fn push_f16_of<I: Isa>(out: &mut String, h: u16) {
    if !push_snan::<I>(out, h as u64, 10, 16) {
        push_f32(out, f16_to_f32(h));
    }
}

/// An f64 immediate from its bits (signalling NaNs as the ISA prints them).
fn push_f64_of<I: Isa>(out: &mut String, bits: u64) {
    if !push_snan::<I>(out, bits, 52, 64) {
        push_f64(out, f64::from_bits(bits));
    }
}

/// Converts IEEE half-precision bits to f32.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = (h as u32 & 0x8000) << 16;
    let exp = (h >> 10) & 0x1f;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut m = m;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (e as u32) << 23 | (m & 0x3ff) << 13
        }
        (31, 0) => sign | 0x7f80_0000,
        (31, m) => sign | 0x7fc0_0000 | m << 13,
        (e, m) => sign | ((e as u32 + 127 - 15) << 23) | m << 13,
    };
    f32::from_bits(bits)
}

/// Formats an f32 immediate as nvdisasm does.
pub fn push_f32(out: &mut String, v: f32) {
    push_float(out, v as f64, v.is_nan(), v.is_infinite());
}

/// Formats an f64 immediate as nvdisasm does.
pub fn push_f64(out: &mut String, v: f64) {
    push_float(out, v, v.is_nan(), v.is_infinite());
}

fn push_float(out: &mut String, v: f64, nan: bool, inf: bool) {
    if inf {
        out.push_str(if v < 0.0 { "-INF " } else { "+INF " });
        return;
    }
    if nan {
        out.push_str(if v.is_sign_negative() {
            "-QNAN "
        } else {
            "+QNAN "
        });
        return;
    }
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0.0 " } else { "0" });
        return;
    }
    // Magnitudes from 1e9 up: C's "%.20e" (21 significant digits, zeros kept). nvdisasm 12.4
    // prints 999999936 as is and 1e9 as 1.00000000000000000000e+09, for f32 (F32, F20) and
    // f64 (D20) immediates alike; every such f32/D20 value is an integer.
    if v.abs() >= 1e9 {
        let e20 = format!("{:.20e}", v);
        let (m, x) = e20.split_once('e').unwrap_or((&e20, "0"));
        let x: i32 = x.parse().unwrap_or(0);
        let _ = write!(out, "{m}e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs());
        return;
    }
    // Otherwise C's "%.20g".
    let e = format!("{:.19e}", v);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    if neg {
        out.push('-');
    }
    if (-4..20).contains(&exp) {
        // Fixed notation with 20 significant digits, trailing zeros stripped.
        let mut s = String::new();
        if exp >= 0 {
            let ip = (exp + 1) as usize;
            s.push_str(&digits[..ip]);
            let frac = digits[ip..].trim_end_matches('0');
            if !frac.is_empty() {
                s.push('.');
                s.push_str(frac);
            }
        } else {
            s.push_str("0.");
            for _ in 0..(-exp - 1) {
                s.push('0');
            }
            s.push_str(digits.trim_end_matches('0'));
        }
        out.push_str(&s);
    } else {
        let frac = digits[1..].trim_end_matches('0');
        out.push_str(&digits[..1]);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f64) -> String {
        let mut s = String::new();
        push_f64(&mut s, v);
        s
    }

    fn g(v: f32) -> String {
        let mut s = String::new();
        push_f32(&mut s, v);
        s
    }

    #[test]
    fn floats_like_nvdisasm() {
        assert_eq!(g(0.5), "0.5");
        assert_eq!(g(-24.0), "-24");
        assert_eq!(g(16777216.0), "16777216");
        assert_eq!(g(0.211_324_87), "0.21132487058639526367");
        assert_eq!(g(f32::from_bits(0x0080_0000)), "1.175494350822287508e-38");
        assert_eq!(g(2f32.powi(126)), "8.50705917302346158658e+37");
        assert_eq!(f(2f64.powi(54)), "1.80143985094819840000e+16");
        assert_eq!(g(3.051_757_8e-5), "3.0517578125e-05");
        assert_eq!(g(f32::INFINITY), "+INF ");
        assert_eq!(g(134217728.0), "134217728");
        assert_eq!(g(12910067712.0), "1.29100677120000000000e+10");
        assert_eq!(g(-0.0), "-0.0 ");
    }

    /// The switch to "%.20e" is at a magnitude of 1e9, not at 2^32 (nvdisasm 12.4 on FMUL32I,
    /// FMUL and DMUL immediates; NAK's FMUL32I 0x4f7ffffe in tests/corpus/nak).
    #[test]
    fn large_floats_switch_to_exponent_form_at_1e9() {
        assert_eq!(g(4_294_966_784.0), "4.29496678400000000000e+09");
        assert_eq!(g(999_999_936.0), "999999936");
        assert_eq!(g(-999_999_936.0), "-999999936");
        assert_eq!(g(1e9), "1.00000000000000000000e+09");
        assert_eq!(g(-1e9), "-1.00000000000000000000e+09");
        assert_eq!(g(2_147_483_648.0), "2.14748364800000000000e+09");
        assert_eq!(g(536_870_912.0), "536870912");
        assert_eq!(f(998_244_352.0), "998244352");
        assert_eq!(f(1_000_341_504.0), "1.00034150400000000000e+09");
        assert_eq!(f(2f64.powi(40)), "1.09951162777600000000e+12");
        assert_eq!(g(3e38), "3.00000000549775575778e+38");
        assert_eq!(g(1e-5), "9.9999997473787516356e-06");
    }

    /// `{N&P:Q}` / `{N&P:p}`: Ampere's condition predicate before the operands, or alone at
    /// the end; nothing for PT, `!PT` when negated (nvdisasm 13.5 on corpus words and their
    /// bit 90 flipped).
    #[test]
    fn condition_predicates_like_nvdisasm() {
        let p = |w: u128, addr: u64| crate::ampere::decode(w).unwrap().print(addr, 0);
        assert_eq!(
            p(0x000fea0006800000000004c00000c947, 0x950),
            "@!P4 BRA !P5, 0xe20"
        );
        assert_eq!(p(0x000fc0000383fffffffffff000007947, 0), "BRA 0x0");
        assert_eq!(p(0x000fc0000783fffffffffff000007947, 0), "BRA !PT, 0x0");
        assert_eq!(p(0x000fea0003800000000000000000794d, 0), "EXIT");
        assert_eq!(p(0x000fea0007800000000000000000794d, 0), "EXIT !PT");
        assert_eq!(p(0x000fea0000000000000000000000794d, 0), "EXIT P0");
    }

    /// `{A&B:s}`: an offset without a base register prints signed, `RZ` when zero (LDSM,
    /// LDC, LDGSTS's shared address); LDC's uniform form prints it unsigned (nvdisasm 13.5).
    #[test]
    fn signed_absolute_offsets_like_nvdisasm() {
        let p = |w: u128| crate::ampere::decode(w).unwrap().print(0, 0);
        assert_eq!(
            p(0x000fe20000000000fffff000ff04783b),
            "LDSM.16.M88 R4, [-0x10]"
        );
        assert_eq!(
            p(0x000fe2000000000000000000ff04783b),
            "LDSM.16.M88 R4, [RZ]"
        );
        assert_eq!(p(0x000fe2000000080000c00000ff047b82), "LDC R4, c[0x3][RZ]");
        assert_eq!(
            p(0x000fe2000000080000e00400ff047b82),
            "LDC R4, c[0x3][-0x7ff0]"
        );
        assert_eq!(
            p(0x000fe200080008ff0020040005047582),
            "LDC R4, cx[UR5][0x8010]"
        );
        assert_eq!(
            p(0x000fe2000b801040ffff000006ff7fae),
            "LDGSTS.E.BYPASS.EF.INVALID0 [-0x10], [R6.64]"
        );
    }

    /// nvdisasm 13.5 prints a signalling NaN immediate (quiet bit clear) as `SNAN` for SM86,
    /// in every float style (f32, f16, bf16, f64 high half); texts from nvdisasm 13.5.
    #[test]
    fn ampere_signalling_nans_like_nvdisasm() {
        let p = |w: u128| crate::ampere::decode(w).unwrap().print(0, 0);
        assert_eq!(
            p(0x000fc400038000007f80000102047809),
            "FMNMX R4, R2, +SNAN , PT"
        );
        assert_eq!(
            p(0x000fc40003800000ffc0000102047809),
            "FMNMX R4, R2, -QNAN , PT"
        );
        assert_eq!(
            p(0x040fe400038000007c017e0002047840),
            "HMNMX2 R4, R2, +SNAN , +QNAN , PT"
        );
        assert_eq!(
            p(0x040fe40003a000004001ff8102047840),
            "HMNMX2.BF16_V2 R4, R2, 2.015625, -SNAN , PT"
        );
        assert_eq!(
            p(0x000fc40007800000fff4000002047429).trim_end(),
            "DADD R4, R2, -SNAN"
        );
    }
}
