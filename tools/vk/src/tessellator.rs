//! A software tessellation primitive generator: what Metal's fixed-function tessellator does
//! between a lowered tessellation pipeline's control kernel and its evaluation draw
//! (docs/exec-job.md "lowered_tessellation"), made on the host so that lavapipe can run the
//! lowered passes.
//!
//! It follows the Vulkan specification's tessellation chapter: each level is clamped and
//! rounded by the spacing (equal: [1, 64], up to an integer; fractional even: [2, 64], up to
//! an even integer; fractional odd: [1, 63], up to an odd integer); an edge of n segments at
//! level f has n − 2 segments of length 1/f and two equal shorter ones, placed symmetrically
//! next to the edge's middle (fractional spacing only; the placement is the implementation's
//! choice in the specification). The triangle and quad domains are subdivided into concentric
//! rings by the inner levels (ring r's edges have n − 2r segments, at the inner subdivision's
//! points), the outermost ring's outer edges are subdivided by the outer levels instead, and
//! the band between each ring and the next is filled with triangles that walk both edges in
//! order. An inner level of 1 with some other level above 1 counts as 1 + ε. A patch with an
//! outer level ≤ 0 or NaN (of those its domain uses) is culled.
//!
//! The result is a non-indexed list: three domain points per triangle, two per line, one per
//! point. Triangles are ordered by the output's winding (see [`Output`]).

use crate::error::Error;

/// The largest tessellation level (`maxTessellationGenerationLevel` on the devices we target).
pub const MAX_LEVEL: f32 = 64.0;

/// The tessellation domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// Barycentric (u, v, w) triangles: outer levels 0–2, inner level 0.
    Triangles,
    /// (u, v) squares: outer levels 0–3, inner levels 0–1.
    Quads,
    /// Lines at constant v: outer level 0 lines of outer level 1 segments.
    Isolines,
}

/// How levels become segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spacing {
    /// Integer levels, equal segments.
    Equal,
    /// Odd segment counts, two shorter segments.
    FractionalOdd,
    /// Even segment counts, two shorter segments.
    FractionalEven,
}

/// The primitives made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Triangles counter-clockwise in the domain with its origin at the upper left (Vulkan's
    /// default `VK_TESSELLATION_DOMAIN_ORIGIN_UPPER_LEFT`): clockwise in the (u, v) plane
    /// drawn with v up.
    TrianglesCcw,
    /// Triangles the other way round.
    TrianglesCw,
    /// Every distinct domain point once (point mode).
    Points,
    /// Line segments (the isolines domain).
    Lines,
}

/// A TES's tessellation mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// The domain.
    pub domain: Domain,
    /// The spacing.
    pub spacing: Spacing,
    /// The primitives made.
    pub output: Output,
}

impl Mode {
    /// The mode a reflection's `tessellation` record names (`triangles`/`quads`/`isolines`,
    /// `equal`/`fractional_odd`/`fractional_even`, `triangles_ccw`/`triangles_cw`/`points`/
    /// `lines`; an isolines domain draws lines unless `points`).
    pub fn from_reflection(t: &dmsh_reflect::Tessellation) -> Result<Mode, Error> {
        let domain = match t.domain.as_str() {
            "triangles" => Domain::Triangles,
            "quads" => Domain::Quads,
            "isolines" => Domain::Isolines,
            d => return Err(Error::Job(format!("unknown tessellation domain {d:?}"))),
        };
        let spacing = match t.spacing.as_str() {
            "equal" => Spacing::Equal,
            "fractional_odd" => Spacing::FractionalOdd,
            "fractional_even" => Spacing::FractionalEven,
            s => return Err(Error::Job(format!("unknown tessellation spacing {s:?}"))),
        };
        let output = match (t.output.as_str(), domain) {
            ("points", _) => Output::Points,
            (_, Domain::Isolines) => Output::Lines,
            ("triangles_ccw", _) => Output::TrianglesCcw,
            ("triangles_cw", _) => Output::TrianglesCw,
            (o, _) => {
                return Err(Error::Job(format!(
                    "tessellation output {o:?} for the {} domain (use triangles_ccw, \
                     triangles_cw or points)",
                    t.domain
                )))
            }
        };
        Ok(Mode {
            domain,
            spacing,
            output,
        })
    }

    /// Domain points per primitive of the output (3, 2 or 1).
    pub fn vertices_per_primitive(self) -> usize {
        match self.output {
            Output::TrianglesCcw | Output::TrianglesCw => 3,
            Output::Lines => 2,
            Output::Points => 1,
        }
    }

    /// Bytes of one patch's factors in Metal's layout: 8 for triangles (`half edge[3]`, `half
    /// inside`), 12 for quads and isolines (`half edge[4]`, `half inside[2]`).
    pub fn factor_bytes(self) -> u32 {
        match self.domain {
            Domain::Triangles => 8,
            Domain::Quads | Domain::Isolines => 12,
        }
    }
}

/// An IEEE half float's value.
pub fn half_to_f32(h: u16) -> f32 {
    let e = ((h >> 10) & 31) as i32;
    let m = (h & 1023) as f32;
    let v = match e {
        0 => m * 2f32.powi(-24),
        31 => {
            if m == 0.0 {
                f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    };
    if h & 0x8000 != 0 {
        -v
    } else {
        v
    }
}

/// One patch's tessellation levels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Levels {
    /// gl_TessLevelOuter (those the domain uses).
    pub outer: [f32; 4],
    /// gl_TessLevelInner (those the domain uses).
    pub inner: [f32; 2],
}

impl Levels {
    /// Patch `patch`'s levels from a tess-factor buffer in Metal's layout for `domain`
    /// (little-endian halves; triangles: edge 0–2 = outer 0–2, inside = inner 0; quads and
    /// isolines: edge 0–3 = outer 0–3, inside 0–1 = inner 0–1). Missing bytes read as 0.
    pub fn from_factors(bytes: &[u8], domain: Domain, patch: usize) -> Levels {
        let (stride, edges, insides) = match domain {
            Domain::Triangles => (8, 3, 1),
            Domain::Quads | Domain::Isolines => (12, 4, 2),
        };
        let half = |k: usize| {
            let i = patch * stride + 2 * k;
            bytes
                .get(i..i + 2)
                .map_or(0.0, |b| half_to_f32(u16::from_le_bytes([b[0], b[1]])))
        };
        let mut l = Levels::default();
        for (k, o) in l.outer.iter_mut().enumerate().take(edges) {
            *o = half(k);
        }
        for (k, i) in l.inner.iter_mut().enumerate().take(insides) {
            *i = half(edges + k);
        }
        l
    }
}

/// A level clamped and rounded by `spacing`: (f, n), the clamped level and the segment count.
/// NaN clamps to the low end.
pub fn round_level(level: f32, spacing: Spacing) -> (f32, u32) {
    let (lo, hi) = match spacing {
        Spacing::Equal => (1.0, MAX_LEVEL),
        Spacing::FractionalEven => (2.0, MAX_LEVEL),
        Spacing::FractionalOdd => (1.0, MAX_LEVEL - 1.0),
    };
    let f = if level.is_nan() {
        lo
    } else {
        level.clamp(lo, hi)
    };
    let up = f.ceil() as u32;
    let n = match spacing {
        Spacing::Equal => up,
        Spacing::FractionalEven => up + up % 2,
        Spacing::FractionalOdd => up + (1 - up % 2),
    };
    (f, n)
}

/// The points 0 = p₀ < … < pₙ = 1 of an edge subdivided at clamped level `f` into `n`
/// segments: n − 2 of length 1/f and two equal ones of what is left, the two nearest the
/// middle (all equal when f = n). Symmetric: pⱼ = 1 − pₙ₋ⱼ, exactly for j past the middle.
pub fn edge_points(f: f32, n: u32) -> Vec<f32> {
    let n = n.max(1) as usize;
    let mut seg = vec![1.0 / n as f32; n];
    if (f - n as f32).abs() > 1e-6 && n >= 2 {
        let long = 1.0 / f;
        let short = ((1.0 - (n - 2) as f32 * long) / 2.0).max(0.0);
        seg = vec![long; n];
        let (a, b) = if n.is_multiple_of(2) {
            (n / 2 - 1, n / 2)
        } else {
            ((n - 1) / 2 - 1, (n - 1) / 2 + 1)
        };
        seg[a] = short;
        seg[b] = short;
    }
    let mut p = vec![0.0f32; n + 1];
    for j in 1..=n / 2 {
        p[j] = p[j - 1] + seg[j - 1];
    }
    if n.is_multiple_of(2) {
        p[n / 2] = 0.5;
    }
    for j in n / 2 + 1..=n {
        p[j] = 1.0 - p[n - j];
    }
    p
}

/// `a` + t(`b` − `a`), exactly `a` at t = 0 and `b` at t = 1.
fn lerp(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [0, 1, 2].map(|c| (1.0 - t) * a[c] + t * b[c])
}

/// The primitives of one patch, as a list of domain points (u, v, w; w = 0 outside the
/// triangle domain): 3 per triangle, 2 per line, 1 per point. Empty when the patch is culled.
pub fn tessellate(mode: Mode, levels: Levels) -> Vec<[f32; 3]> {
    let used = match mode.domain {
        Domain::Triangles => 3,
        Domain::Quads => 4,
        Domain::Isolines => 2,
    };
    if levels.outer[..used].iter().any(|&o| o.is_nan() || o <= 0.0) {
        return Vec::new();
    }
    let prims = match mode.domain {
        Domain::Triangles => triangles(mode.spacing, levels),
        Domain::Quads => quads(mode.spacing, levels),
        Domain::Isolines => isolines(mode.spacing, levels),
    };
    match mode.output {
        Output::Points => {
            // Each distinct point once, in the order it first appears.
            let mut seen = std::collections::HashSet::new();
            prims
                .into_iter()
                .filter(|p| seen.insert(p.map(f32::to_bits)))
                .collect()
        }
        Output::Lines => prims,
        Output::TrianglesCcw | Output::TrianglesCw => {
            let mut v = prims;
            for t in v.chunks_exact_mut(3) {
                // Signed area in (u, v); the upper-left origin flips the plane, so Vulkan's
                // counter-clockwise is negative here.
                let area = (t[1][0] - t[0][0]) * (t[2][1] - t[0][1])
                    - (t[2][0] - t[0][0]) * (t[1][1] - t[0][1]);
                let want_negative = mode.output == Output::TrianglesCcw;
                if (area < 0.0) != want_negative && area != 0.0 {
                    t.swap(1, 2);
                }
            }
            v
        }
    }
}

/// Fills the band between two parallel edges: `outer` (points in order, with their positions
/// along the band) and `inner` (likewise; one point when the inner ring is a point), whose
/// first points lie at the same corner. Every triangle has two points on one edge; both edges
/// are walked in order, so the triangles tile the band.
fn band(out: &mut Vec<[f32; 3]>, outer: &[([f32; 3], f32)], inner: &[([f32; 3], f32)]) {
    let (mut i, mut k) = (0, 0);
    while i + 1 < outer.len() || k + 1 < inner.len() {
        let advance_outer =
            k + 1 >= inner.len() || (i + 1 < outer.len() && outer[i + 1].1 <= inner[k + 1].1);
        if advance_outer {
            out.extend([outer[i].0, outer[i + 1].0, inner[k].0]);
            i += 1;
        } else {
            out.extend([outer[i].0, inner[k + 1].0, inner[k].0]);
            k += 1;
        }
    }
}

/// The triangle domain's triangles (any winding).
fn triangles(spacing: Spacing, l: Levels) -> Vec<[f32; 3]> {
    let outer: Vec<(f32, u32)> = (0..3).map(|k| round_level(l.outer[k], spacing)).collect();
    let (mut fi, mut ni) = round_level(l.inner[0], spacing);
    let corners = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    if ni == 1 && outer.iter().all(|o| o.1 == 1) {
        return corners.to_vec();
    }
    if ni == 1 {
        // 1 + ε.
        (fi, ni) = round_level(1.0 + f32::EPSILON * 8.0, spacing);
        if spacing == Spacing::Equal {
            fi = ni as f32;
        }
    }
    let p = edge_points(fi, ni);
    let n = ni as usize;
    let third = 1.0f32 / 3.0;
    // Ring r's corner c: the corner scaled by 1 − 2pᵣ about the centre.
    let ring_corner = |r: usize, c: usize| {
        let s = 1.0 - 2.0 * p[r];
        corners[c].map(|x| third + s * (x - third))
    };
    // Edge c of the triangle goes from corner c to corner c + 1 (u→v: outer 2, v→w: outer 0,
    // w→u: outer 1).
    let outer_of_edge = [2, 0, 1];
    // Ring r's edge c, with each point's position along the edge in outer-edge units.
    let ring_edge = |r: usize, c: usize| -> Vec<([f32; 3], f32)> {
        let (a, b) = (ring_corner(r, c), ring_corner(r, (c + 1) % 3));
        let segs = n - 2 * r;
        if segs == 0 {
            return vec![(a, 0.5)];
        }
        let span = p[n - r] - p[r];
        (0..=segs)
            .map(|j| {
                let t = if j == segs {
                    1.0
                } else {
                    (p[r + j] - p[r]) / span
                };
                (lerp(a, b, t), p[r + j])
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut r = 0;
    loop {
        let next = r + 1;
        if n < 2 * next {
            break;
        }
        for c in 0..3 {
            let from: Vec<([f32; 3], f32)> = if r == 0 {
                let (f, m) = outer[outer_of_edge[c]];
                let q = edge_points(f, m);
                let (a, b) = (corners[c], corners[(c + 1) % 3]);
                q.iter().map(|&t| (lerp(a, b, t), t)).collect()
            } else {
                ring_edge(r, c)
            };
            band(&mut out, &from, &ring_edge(next, c));
        }
        match n - 2 * next {
            0 => break,
            1 => {
                out.extend((0..3).map(|c| ring_corner(next, c)));
                break;
            }
            _ => r = next,
        }
    }
    out
}

/// The quad domain's triangles (any winding).
fn quads(spacing: Spacing, l: Levels) -> Vec<[f32; 3]> {
    let outer: Vec<(f32, u32)> = (0..4).map(|k| round_level(l.outer[k], spacing)).collect();
    let mut inner = [0, 1].map(|k| round_level(l.inner[k], spacing));
    let uv = |u: f32, v: f32| [u, v, 0.0];
    if inner.iter().all(|i| i.1 == 1) && outer.iter().all(|o| o.1 == 1) {
        let [a, b, c, d] = [uv(0.0, 0.0), uv(1.0, 0.0), uv(1.0, 1.0), uv(0.0, 1.0)];
        return vec![a, b, c, a, c, d];
    }
    for i in inner.iter_mut() {
        if i.1 == 1 {
            *i = round_level(1.0 + f32::EPSILON * 8.0, spacing);
            if spacing == Spacing::Equal {
                i.0 = i.1 as f32;
            }
        }
    }
    let pu = edge_points(inner[0].0, inner[0].1);
    let pv = edge_points(inner[1].0, inner[1].1);
    let (m, n) = (inner[0].1 as usize, inner[1].1 as usize);
    // Ring r ≥ 1's four edges, counter-clockwise in (u, v) from (lo, lo): bottom, right, top,
    // left, each with positions along it (ascending on the first two, descending after).
    let ring = |r: usize| -> [Vec<([f32; 3], f32)>; 4] {
        let (u0, u1, v0, v1) = (pu[r], pu[m - r], pv[r], pv[n - r]);
        let us: Vec<f32> = pu[r..=m - r].to_vec();
        let vs: Vec<f32> = pv[r..=n - r].to_vec();
        [
            us.iter().map(|&u| (uv(u, v0), u)).collect(),
            vs.iter().map(|&v| (uv(u1, v), v)).collect(),
            us.iter().rev().map(|&u| (uv(u, v1), 1.0 - u)).collect(),
            vs.iter().rev().map(|&v| (uv(u0, v), 1.0 - v)).collect(),
        ]
    };
    // The outer edges, in the same order: v = 0 (outer 1), u = 1 (outer 2), v = 1 (outer 3),
    // u = 0 (outer 0).
    let outer_edges: [Vec<([f32; 3], f32)>; 4] = {
        let q = |k: usize| edge_points(outer[k].0, outer[k].1);
        [
            q(1).iter().map(|&u| (uv(u, 0.0), u)).collect(),
            q(2).iter().map(|&v| (uv(1.0, v), v)).collect(),
            q(3).iter().rev().map(|&u| (uv(u, 1.0), 1.0 - u)).collect(),
            q(0).iter().rev().map(|&v| (uv(0.0, v), 1.0 - v)).collect(),
        ]
    };
    let mut out = Vec::new();
    let mut r = 0;
    loop {
        let next = r + 1;
        if m < 2 * next || n < 2 * next {
            break;
        }
        let from = if r == 0 { outer_edges.clone() } else { ring(r) };
        let to = ring(next);
        for (a, b) in from.iter().zip(&to) {
            band(&mut out, a, b);
        }
        let (mr, nr) = (m - 2 * next, n - 2 * next);
        if mr == 0 || nr == 0 {
            break;
        }
        if mr == 1 || nr == 1 {
            // The innermost rectangle: a row or column of quads.
            for i in 0..mr {
                for j in 0..nr {
                    let (u0, u1) = (pu[next + i], pu[next + i + 1]);
                    let (v0, v1) = (pv[next + j], pv[next + j + 1]);
                    let [a, b, c, d] = [uv(u0, v0), uv(u1, v0), uv(u1, v1), uv(u0, v1)];
                    out.extend([a, b, c, a, c, d]);
                }
            }
            break;
        }
        r = next;
    }
    out
}

/// The isolines domain's line segments: outer 0 lines (equal spacing) at v = i / n, each of
/// outer 1 segments (the spacing); v = 1 has no line.
fn isolines(spacing: Spacing, l: Levels) -> Vec<[f32; 3]> {
    let (_, lines) = round_level(l.outer[0], Spacing::Equal);
    let (f, segs) = round_level(l.outer[1], spacing);
    let pu = edge_points(f, segs);
    let mut out = Vec::new();
    for i in 0..lines {
        let v = i as f32 / lines as f32;
        for w in pu.windows(2) {
            out.extend([[w[0], v, 0.0], [w[1], v, 0.0]]);
        }
    }
    out
}

/// Every patch's domain points (`patches` patches of the tess-factor buffer `factors`), as
/// the `domain_points` buffer: per vertex u32 patch, f32 u, v, w.
pub fn domain_points(mode: Mode, factors: &[u8], patches: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for patch in 0..patches {
        let levels = Levels::from_factors(factors, mode.domain, patch as usize);
        for p in tessellate(mode, levels) {
            out.extend(patch.to_le_bytes());
            for c in p {
                out.extend(c.to_le_bytes());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(domain: Domain, spacing: Spacing, output: Output) -> Mode {
        Mode {
            domain,
            spacing,
            output,
        }
    }

    fn tri(outer: [f32; 3], inner: f32) -> Levels {
        Levels {
            outer: [outer[0], outer[1], outer[2], 0.0],
            inner: [inner, 0.0],
        }
    }

    fn quad(outer: [f32; 4], inner: [f32; 2]) -> Levels {
        Levels { outer, inner }
    }

    const TRI: Mode = Mode {
        domain: Domain::Triangles,
        spacing: Spacing::Equal,
        output: Output::TrianglesCcw,
    };
    const QUAD: Mode = Mode {
        domain: Domain::Quads,
        spacing: Spacing::Equal,
        output: Output::TrianglesCcw,
    };

    /// Twice the signed area in (u, v) of each triangle.
    fn areas(v: &[[f32; 3]]) -> Vec<f32> {
        v.chunks_exact(3)
            .map(|t| {
                (t[1][0] - t[0][0]) * (t[2][1] - t[0][1])
                    - (t[2][0] - t[0][0]) * (t[1][1] - t[0][1])
            })
            .collect()
    }

    fn distinct(v: &[[f32; 3]]) -> usize {
        let mut s: Vec<[u32; 3]> = v.iter().map(|p| p.map(f32::to_bits)).collect();
        s.sort();
        s.dedup();
        s.len()
    }

    /// The triangles cover the domain once: their areas sum to the domain's (½ or 1 in (u,
    /// v)), none is inverted.
    fn assert_tiles(v: &[[f32; 3]], domain_area: f32, ccw: bool) {
        let a = areas(v);
        let total: f32 = a.iter().map(|x| x.abs()).sum::<f32>() / 2.0;
        assert!((total - domain_area).abs() < 1e-4, "area {total}");
        for x in &a {
            assert!(*x == 0.0 || (*x < 0.0) == ccw, "winding {x}");
        }
    }

    #[test]
    fn level_rounding_follows_each_spacing() {
        assert_eq!(round_level(3.2, Spacing::Equal), (3.2, 4));
        assert_eq!(round_level(0.3, Spacing::Equal), (1.0, 1));
        assert_eq!(round_level(100.0, Spacing::Equal), (64.0, 64));
        assert_eq!(round_level(3.2, Spacing::FractionalEven), (3.2, 4));
        assert_eq!(round_level(4.5, Spacing::FractionalEven), (4.5, 6));
        assert_eq!(round_level(1.0, Spacing::FractionalEven), (2.0, 2));
        assert_eq!(round_level(3.2, Spacing::FractionalOdd), (3.2, 5));
        assert_eq!(round_level(2.0, Spacing::FractionalOdd), (2.0, 3));
        assert_eq!(round_level(64.0, Spacing::FractionalOdd), (63.0, 63));
        assert_eq!(round_level(f32::NAN, Spacing::Equal), (1.0, 1));
    }

    #[test]
    fn edges_are_split_at_the_spacing_s_points() {
        assert_eq!(edge_points(4.0, 4), [0.0, 0.25, 0.5, 0.75, 1.0]);
        // Fractional even 3: four segments, 1/3, 1/6, 1/6, 1/3.
        let p = edge_points(3.0, 4);
        let want = [0.0, 1.0 / 3.0, 0.5, 2.0 / 3.0, 1.0];
        assert!(
            p.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
            "{p:?}"
        );
        // Fractional odd 2: three segments, 1/4, 1/2, 1/4.
        let p = edge_points(2.0, 3);
        let want = [0.0, 0.25, 0.75, 1.0];
        assert!(
            p.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
            "{p:?}"
        );
        // Fractional odd 4: five segments, 1/4, 1/8, 1/4, 1/8, 1/4.
        let p = edge_points(4.0, 5);
        let want = [0.0, 0.25, 0.375, 0.625, 0.75, 1.0];
        assert!(
            p.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
            "{p:?}"
        );
        // Symmetric, exactly.
        for (f, n) in [(5.3, 6), (7.7, 9), (33.3, 34)] {
            let p = edge_points(f, n);
            for j in n as usize / 2 + 1..=n as usize {
                assert_eq!(p[j], 1.0 - p[n as usize - j]);
            }
        }
    }

    #[test]
    fn triangle_counts_for_known_levels() {
        // All ones: one triangle.
        assert_eq!(tessellate(TRI, tri([1.0; 3], 1.0)).len(), 3);
        // Inner 2, outer 1: a fan of three triangles around the centre.
        let v = tessellate(TRI, tri([1.0; 3], 2.0));
        assert_eq!((v.len() / 3, distinct(&v)), (3, 4));
        // Uniform level n: rings of 3(n − 2r) segments (and the centre point when n is
        // even); each band has as many triangles as its two rings have segments, plus the
        // middle triangle when n is odd: (3n² − n mod 2) / 2 triangles.
        for n in 2..=9u32 {
            let v = tessellate(TRI, tri([n as f32; 3], n as f32));
            let points: u32 = (0..=n / 2).map(|r| (3 * (n - 2 * r)).max(1)).sum();
            assert_eq!(v.len() / 3, ((3 * n * n - n % 2) / 2) as usize, "level {n}");
            assert_eq!(distinct(&v), points as usize, "level {n}");
            // Euler: a triangulated disc of V points, B on the boundary, has 2V − B − 2.
            assert_eq!(v.len() / 3, 2 * distinct(&v) - 3 * n as usize - 2);
            assert_tiles(&v, 0.5, true);
        }
        // Outer (2, 3, 4), inner 3: 9 outer segments and the inner ring's 3 make 12 band
        // triangles, plus the inner ring's triangle; 9 + 3 points.
        let v = tessellate(TRI, tri([2.0, 3.0, 4.0], 3.0));
        assert_eq!(v.len() / 3, 13);
        assert_eq!(distinct(&v), 12);
        assert_tiles(&v, 0.5, true);
        // Inner 1 with outer 5 counts as 1 + ε = 2: bands to the centre.
        let v = tessellate(TRI, tri([5.0, 1.0, 1.0], 1.0));
        assert_eq!(v.len() / 3, 7);
        assert_tiles(&v, 0.5, true);
        let v = tessellate(
            mode(Domain::Triangles, Spacing::Equal, Output::TrianglesCw),
            tri([4.0; 3], 5.0),
        );
        assert_tiles(&v, 0.5, false);
    }

    #[test]
    fn quad_counts_for_known_levels() {
        assert_eq!(tessellate(QUAD, quad([1.0; 4], [1.0; 2])).len(), 6);
        // Uniform m × n: 2mn triangles, (m + 1)(n + 1) points.
        for (m, n) in [(2, 2), (3, 4), (4, 4), (5, 2), (6, 7)] {
            let l = quad(
                [n as f32, m as f32, n as f32, m as f32],
                [m as f32, n as f32],
            );
            let v = tessellate(QUAD, l);
            assert_eq!(v.len() / 3, 2 * m * n, "{m}×{n}");
            assert_eq!(distinct(&v), (m + 1) * (n + 1), "{m}×{n}");
            assert_tiles(&v, 1.0, true);
        }
        // Outer 3, 4, 3, 4, inner 2, 3: the inner ring is a line of one segment (u = ½, v
        // from ⅓ to ⅔); 14 outer segments and its 2 make 16 band triangles, on 14 + 2 points.
        let v = tessellate(QUAD, quad([3.0, 4.0, 3.0, 4.0], [2.0, 3.0]));
        assert_eq!(v.len() / 3, 16);
        assert_eq!(distinct(&v), 14 + 2);
        assert_tiles(&v, 1.0, true);
        let v = tessellate(
            mode(Domain::Quads, Spacing::FractionalOdd, Output::TrianglesCw),
            quad([2.5, 7.1, 3.0, 1.2], [4.4, 1.0]),
        );
        assert_tiles(&v, 1.0, false);
    }

    #[test]
    fn fractional_spacings_tile_the_domain() {
        for spacing in [
            Spacing::FractionalOdd,
            Spacing::FractionalEven,
            Spacing::Equal,
        ] {
            for l in [
                [1.5, 2.7, 9.9, 3.3],
                [4.0, 4.0, 4.0, 4.0],
                [63.5, 1.0, 2.2, 17.0],
            ] {
                let t = mode(Domain::Triangles, spacing, Output::TrianglesCcw);
                let v = tessellate(t, tri([l[0], l[1], l[2]], l[3]));
                assert_tiles(&v, 0.5, true);
                let q = mode(Domain::Quads, spacing, Output::TrianglesCcw);
                let v = tessellate(q, quad(l, [l[3], l[1]]));
                assert_tiles(&v, 1.0, true);
            }
        }
    }

    #[test]
    fn every_point_lies_in_the_domain_and_edges_follow_the_spacing() {
        for spacing in [
            Spacing::FractionalOdd,
            Spacing::FractionalEven,
            Spacing::Equal,
        ] {
            let outer = [2.5f32, 3.7, 6.0];
            let t = mode(Domain::Triangles, spacing, Output::Points);
            let v = tessellate(t, tri(outer, 4.2));
            assert_eq!(v.len(), distinct(&v));
            for p in &v {
                assert!(
                    p.iter().all(|&c| (-1e-6..=1.0 + 1e-6).contains(&c)),
                    "{p:?}"
                );
                assert!((p[0] + p[1] + p[2] - 1.0).abs() < 1e-5, "{p:?}");
            }
            // Edge u = 0 (outer 0): its points are at the spacing's positions in v.
            let (f, n) = round_level(outer[0], spacing);
            let mut on: Vec<f32> = v.iter().filter(|p| p[0] == 0.0).map(|p| p[2]).collect();
            on.sort_by(f32::total_cmp);
            let want = edge_points(f, n);
            assert_eq!(on.len(), want.len(), "{spacing:?}");
            assert!(on.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6));
            // Quads: edge v = 0 (outer 1) in u.
            let q = mode(Domain::Quads, spacing, Output::Points);
            let v = tessellate(q, quad([2.5, 5.5, 1.0, 3.0], [3.3, 2.0]));
            assert!(v
                .iter()
                .all(|p| p.iter().all(|&c| (0.0..=1.0).contains(&c))));
            let mut on: Vec<f32> = v.iter().filter(|p| p[1] == 0.0).map(|p| p[0]).collect();
            on.sort_by(f32::total_cmp);
            let (f, n) = round_level(5.5, spacing);
            let want = edge_points(f, n);
            assert_eq!(on.len(), want.len(), "{spacing:?}");
            assert!(on.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6));
        }
    }

    #[test]
    fn culled_patches_and_isolines() {
        assert!(tessellate(TRI, tri([0.0, 4.0, 4.0], 4.0)).is_empty());
        assert!(tessellate(TRI, tri([4.0, f32::NAN, 4.0], 4.0)).is_empty());
        assert!(tessellate(QUAD, quad([4.0, 4.0, 4.0, -1.0], [4.0; 2])).is_empty());
        // The inner level does not cull.
        assert_eq!(tessellate(TRI, tri([1.0; 3], 0.0)).len(), 3);
        let iso = mode(Domain::Isolines, Spacing::Equal, Output::Lines);
        let v = tessellate(iso, quad([3.0, 4.0, 0.0, 0.0], [0.0; 2]));
        assert_eq!(v.len(), 3 * 4 * 2);
        assert!(v.iter().all(|p| p[1] < 1.0));
        assert!(tessellate(iso, quad([3.0, 0.0, 5.0, 5.0], [0.0; 2])).is_empty());
    }

    #[test]
    fn factors_decode_in_metal_s_layout() {
        // Halves: 1.0 = 0x3c00, 2.0 = 0x4000, 3.0 = 0x4200, 4.0 = 0x4400, 5.0 = 0x4500.
        let tri_bytes: Vec<u8> = [
            0x4000u16, 0x4200, 0x4400, 0x4200, 0x3c00, 0x3c00, 0x3c00, 0x3c00,
        ]
        .iter()
        .flat_map(|h| h.to_le_bytes())
        .collect();
        let l = Levels::from_factors(&tri_bytes, Domain::Triangles, 0);
        assert_eq!(l.outer[..3], [2.0, 3.0, 4.0]);
        assert_eq!(l.inner[0], 3.0);
        let l = Levels::from_factors(&tri_bytes, Domain::Triangles, 1);
        assert_eq!((l.outer[..3].to_vec(), l.inner[0]), (vec![1.0; 3], 1.0));
        let quad_bytes: Vec<u8> = [0x4200u16, 0x4400, 0x4200, 0x4400, 0x4000, 0x4200]
            .iter()
            .flat_map(|h| h.to_le_bytes())
            .collect();
        let l = Levels::from_factors(&quad_bytes, Domain::Quads, 0);
        assert_eq!(l, quad([3.0, 4.0, 3.0, 4.0], [2.0, 3.0]));
        let pts = domain_points(QUAD, &quad_bytes, 1);
        assert_eq!(pts.len(), 16 * 16 * 3);
        assert_eq!(half_to_f32(0x4500), 5.0);
        assert_eq!(half_to_f32(0xc000), -2.0);
        assert!(half_to_f32(0x7e00).is_nan());
    }
}
