//! Pipeline state a graphics binary does not (fully) carry: a geometry shader's input
//! primitive and a tessellation-evaluation shader's domain, spacing and output primitive.
//! Each comes from facts or an option when given, else from the container or an inference,
//! and the reflection says which ([`StateSource`]), so a guess is never silent.

use crate::ir::{Function, Op};

/// Where a piece of pipeline state came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateSource {
    /// Given by the caller: a facts row or a `dmsh translate` option.
    Given,
    /// Read from the container (the DKSH program header).
    Container,
    /// Derived from the code with certainty (every input vertex index is a constant).
    Inferred,
    /// Nothing determines it: a default or a guess; the host must check it.
    Guessed,
}

impl StateSource {
    /// The reflection's name: `given`, `container`, `inferred` or `guessed`.
    pub fn name(self) -> &'static str {
        match self {
            StateSource::Given => "given",
            StateSource::Container => "container",
            StateSource::Inferred => "inferred",
            StateSource::Guessed => "guessed",
        }
    }
}

/// A geometry shader's input primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GsInput {
    /// 1 vertex.
    Points,
    /// 2 vertices.
    Lines,
    /// 4 vertices.
    LinesAdjacency,
    /// 3 vertices.
    Triangles,
    /// 6 vertices.
    TrianglesAdjacency,
}

impl GsInput {
    /// Every input primitive, in order of vertex count.
    pub const ALL: [GsInput; 5] = [
        GsInput::Points,
        GsInput::Lines,
        GsInput::Triangles,
        GsInput::LinesAdjacency,
        GsInput::TrianglesAdjacency,
    ];

    /// Vertices per input primitive.
    pub fn vertices(self) -> u32 {
        match self {
            GsInput::Points => 1,
            GsInput::Lines => 2,
            GsInput::Triangles => 3,
            GsInput::LinesAdjacency => 4,
            GsInput::TrianglesAdjacency => 6,
        }
    }

    /// The name used by facts rows, options and the reflection.
    pub fn name(self) -> &'static str {
        match self {
            GsInput::Points => "points",
            GsInput::Lines => "lines",
            GsInput::Triangles => "triangles",
            GsInput::LinesAdjacency => "lines_adjacency",
            GsInput::TrianglesAdjacency => "triangles_adjacency",
        }
    }

    /// Parses [`GsInput::name`].
    pub fn parse(s: &str) -> Option<GsInput> {
        GsInput::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The smallest primitive with at least `n` vertices.
    pub fn holding(n: u32) -> GsInput {
        GsInput::ALL
            .into_iter()
            .find(|p| p.vertices() >= n)
            .unwrap_or(GsInput::TrianglesAdjacency)
    }
}

/// The input vertex indices a geometry shader reads: (largest constant index, whether some
/// index is computed at run time).
fn input_vertex_reads(f: &Function) -> (Option<u32>, bool) {
    let mut max = None::<u32>;
    let mut dynamic = false;
    for &v in f.blocks.iter().flat_map(|b| &b.insts) {
        let inst = f.inst(v);
        if let Op::AttrLoad {
            output: false,
            patch: false,
        } = inst.op
        {
            match f.const_of(inst.args[1]) {
                Some(c) => max = Some(max.map_or(c as u32, |m| m.max(c as u32))),
                None => dynamic = true,
            }
        }
    }
    (max, dynamic)
}

/// A geometry shader's input primitive: `given` when the caller knows it (checked against the
/// constant vertex indices the code reads); else inferred from the largest constant index when
/// every index is a constant; else guessed — triangles, or the smallest primitive holding the
/// largest constant index — and marked so.
pub fn geometry_input(
    f: &Function,
    given: Option<GsInput>,
) -> Result<(GsInput, StateSource), String> {
    let (max, dynamic) = input_vertex_reads(f);
    let need = max.map_or(1, |m| m + 1);
    if let Some(p) = given {
        if need > p.vertices() {
            return Err(format!(
                "input primitive {} has {} vertices, but the shader reads vertex {}",
                p.name(),
                p.vertices(),
                need - 1
            ));
        }
        return Ok((p, StateSource::Given));
    }
    if dynamic {
        return Ok((GsInput::holding(need.max(3)), StateSource::Guessed));
    }
    Ok((GsInput::holding(need), StateSource::Inferred))
}

/// Tessellation-evaluation parameters packed as the DKSH header keeps them (`param_c8`):
/// domain | spacing << 4 | output primitive << 8 (dksh README §2).
pub mod tess {
    /// Domains by code: 0 isolines, 1 triangles, 2 quads.
    pub const DOMAINS: [&str; 3] = ["isolines", "triangles", "quads"];
    /// Spacings by code: 0 equal, 1 fractional_odd, 2 fractional_even.
    pub const SPACINGS: [&str; 3] = ["equal", "fractional_odd", "fractional_even"];
    /// Output primitives by code: 0 points, 1 lines, 2 triangles CCW, 3 triangles CW.
    pub const OUTPUTS: [&str; 4] = ["points", "lines", "triangles_ccw", "triangles_cw"];
    /// The default when nothing says: triangles, equal spacing, counter-clockwise.
    pub const DEFAULT: u32 = 0x201;

    /// Packs the three names (`triangles`, `equal`, `triangles_ccw`; `ccw` and `cw` are
    /// accepted for the triangle outputs).
    pub fn parse(domain: &str, spacing: &str, output: &str) -> Option<u32> {
        let d = DOMAINS.iter().position(|&n| n == domain)? as u32;
        let s = SPACINGS.iter().position(|&n| n == spacing)? as u32;
        let output = match output {
            "ccw" => "triangles_ccw",
            "cw" => "triangles_cw",
            o => o,
        };
        let o = OUTPUTS.iter().position(|&n| n == output)? as u32;
        Some(d | s << 4 | o << 8)
    }

    /// Parses `DOMAIN,SPACING,OUTPUT` (the `--tess` option's form).
    pub fn parse_list(s: &str) -> Option<u32> {
        let v: Vec<&str> = s.split(',').map(str::trim).collect();
        match v[..] {
            [d, sp, o] => parse(d, sp, o),
            _ => None,
        }
    }

    /// The names of a packed value (`None` for a code outside the tables).
    pub fn names(p: u32) -> Option<(&'static str, &'static str, &'static str)> {
        Some((
            DOMAINS.get((p & 0xf) as usize)?,
            SPACINGS.get((p >> 4 & 0xf) as usize)?,
            OUTPUTS.get((p >> 8 & 0xf) as usize)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    /// A function reading input vertex `idx` (a constant, or `None` for a run-time index).
    fn reads(idx: &[Option<u64>]) -> Function {
        let (mut f, [b]) = Function::with_blocks([0]);
        let addr = f.push(b, Op::Const(0x80), Type::U32, &[]);
        let dynv = f.push(b, Op::Undef, Type::U32, &[]);
        for i in idx {
            let v = match i {
                Some(c) => f.push(b, Op::Const(*c), Type::U32, &[]),
                None => dynv,
            };
            let op = Op::AttrLoad {
                output: false,
                patch: false,
            };
            f.push(b, op, Type::U32, &[addr, v]);
        }
        f
    }

    #[test]
    fn constant_indices_infer_the_primitive() {
        let cases = [
            (vec![Some(0)], GsInput::Points),
            (vec![Some(0), Some(1)], GsInput::Lines),
            (vec![Some(2), Some(0)], GsInput::Triangles),
            (vec![Some(3)], GsInput::LinesAdjacency),
            (vec![Some(5)], GsInput::TrianglesAdjacency),
        ];
        for (idx, want) in cases {
            assert_eq!(
                geometry_input(&reads(&idx), None).unwrap(),
                (want, StateSource::Inferred)
            );
        }
    }

    #[test]
    fn a_run_time_index_is_a_guess_unless_given() {
        // `i % 3` feeding ISBERD: no constant says how many vertices there are.
        let f = reads(&[None]);
        assert_eq!(
            geometry_input(&f, None).unwrap(),
            (GsInput::Triangles, StateSource::Guessed)
        );
        assert_eq!(
            geometry_input(&f, Some(GsInput::Lines)).unwrap(),
            (GsInput::Lines, StateSource::Given)
        );
        let f = reads(&[None, Some(4)]);
        assert_eq!(
            geometry_input(&f, None).unwrap().0,
            GsInput::TrianglesAdjacency
        );
    }

    #[test]
    fn a_given_primitive_must_hold_the_vertices_read() {
        let e = geometry_input(&reads(&[Some(2)]), Some(GsInput::Lines)).unwrap_err();
        assert!(e.contains("reads vertex 2"), "{e}");
    }

    #[test]
    fn tess_names_round_trip() {
        assert_eq!(
            tess::parse("triangles", "equal", "ccw"),
            Some(tess::DEFAULT)
        );
        let p = tess::parse_list("quads, fractional_odd, triangles_cw").unwrap();
        assert_eq!(p, 0x312);
        assert_eq!(
            tess::names(p),
            Some(("quads", "fractional_odd", "triangles_cw"))
        );
        assert_eq!(tess::parse_list("isolines,equal,points"), Some(0x000));
        assert!(tess::parse_list("quads,equal").is_none());
        assert!(tess::parse("hexagons", "equal", "cw").is_none());
        assert!(tess::names(0x0f3).is_none());
    }
}
