//! A small reader for the MSL SPIRV-Cross writes: entry-point signatures, the structs they
//! take and return, and the `[[...]]` attributes on each parameter and member. It relies on
//! SPIRV-Cross's layout (one declaration per line, entry points at the start of a line), not
//! on a full C++ parser.

/// One item of a `[[...]]` attribute list: `buffer(3)` is name `buffer`, argument `3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    /// The attribute name.
    pub name: String,
    /// The text between its parentheses, if it has any.
    pub arg: Option<String>,
}

/// A parameter or struct member: its type text, name and attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    /// The type as written (`constant uint4*`, `array<texture2d<float>, 32>`).
    pub ty: String,
    /// The declared name.
    pub name: String,
    /// Every attribute item of every `[[...]]` group.
    pub attrs: Vec<Attr>,
}

impl Decl {
    /// The argument of attribute `name`, if the declaration has it.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.arg.as_deref().unwrap_or(""))
    }

    /// Array elements: N for `array<T, N>`, else 1.
    pub fn count(&self) -> u32 {
        let t = self.ty.trim();
        if !t.contains("array<") || !t.ends_with('>') {
            return 1;
        }
        let inner = &t[..t.len() - 1];
        inner
            .rsplit(',')
            .next()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(1)
    }
}

/// An entry-point function: `kernel`, `vertex` or `fragment`, its return type and parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// `kernel`, `vertex` or `fragment`.
    pub qualifier: String,
    /// The return type (`void`, `main0_out`).
    pub ret: String,
    /// The function name.
    pub name: String,
    /// The parameters.
    pub params: Vec<Decl>,
}

const QUALIFIERS: [&str; 3] = ["kernel", "vertex", "fragment"];

/// Every entry-point function of `msl`, in order.
pub fn functions(msl: &str) -> Vec<Function> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in msl.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let mut rest = line.trim_start();
        // Function attributes first: [[ early_fragment_tests ]], [[ patch(triangle, 0) ]].
        while let Some(r) = rest.strip_prefix("[[") {
            let Some(end) = r.find("]]") else { break };
            rest = r[end + 2..].trim_start();
        }
        let Some(q) = QUALIFIERS
            .iter()
            .find(|q| rest.strip_prefix(**q).is_some_and(|r| r.starts_with(' ')))
        else {
            continue;
        };
        let head_start = start + (line.len() - rest.len());
        let Some(open) = msl[head_start..].find('(').map(|i| head_start + i) else {
            continue;
        };
        let Some(close) = matching(msl, open) else {
            continue;
        };
        let head: Vec<&str> = msl[head_start + q.len()..open].split_whitespace().collect();
        let Some((name, ret)) = head.split_last() else {
            continue;
        };
        out.push(Function {
            qualifier: q.to_string(),
            ret: ret.join(" "),
            name: name.to_string(),
            params: split_top(&msl[open + 1..close], ',')
                .into_iter()
                .filter_map(decl)
                .collect(),
        });
    }
    out
}

/// The members of `struct name { … };` in `msl`, if it declares one.
pub fn struct_members(msl: &str, name: &str) -> Option<Vec<Decl>> {
    let head = format!("struct {name}");
    let mut from = 0;
    let start = loop {
        let i = from + msl[from..].find(&head)?;
        let after = &msl[i + head.len()..];
        if after.trim_start().starts_with('{') {
            break i + head.len() + after.find('{')?;
        }
        from = i + head.len();
    };
    let end = matching(msl, start)?;
    Some(
        split_top(&msl[start + 1..end], ';')
            .into_iter()
            .filter_map(decl)
            .collect(),
    )
}

/// The index of the bracket closing the one at `open` (`(`, `[`, `{` or `<`).
fn matching(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` split at `sep` outside any brackets.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[from..]);
    out
}

/// One declaration `TYPE NAME [[attrs]] [N]`; None when it is empty or has no name.
fn decl(text: &str) -> Option<Decl> {
    let text = text.trim();
    let (head, mut rest) = match text.find("[[") {
        Some(i) => (&text[..i], &text[i..]),
        None => (text.split('[').next().unwrap_or(text), ""),
    };
    let head = head.trim();
    let split = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    let (ty, name) = (head[..=split].trim(), &head[split + 1..]);
    if name.is_empty() || ty.is_empty() {
        return None;
    }
    let mut attrs = Vec::new();
    while let Some(r) = rest.trim_start().strip_prefix("[[") {
        let end = r.find("]]")?;
        for item in split_top(&r[..end], ',') {
            let item = item.trim();
            let (name, arg) = match item.find('(') {
                Some(p) => (
                    &item[..p],
                    Some(item[p + 1..item.rfind(')')?].trim().to_string()),
                ),
                None => (item, None),
            };
            attrs.push(Attr {
                name: name.trim().to_string(),
                arg,
            });
        }
        rest = &r[end + 2..];
    }
    Some(Decl {
        ty: ty.to_string(),
        name: name.to_string(),
        attrs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSL: &str = "\
struct main0_out
{
    float4 m_0 [[color(0)]];
    float gl_ClipDistance [[clip_distance]] [4];
};

struct main0_in
{
    float4 m_1 [[user(locn1), center_no_perspective]];
};

[[ early_fragment_tests ]] fragment main0_out main0(main0_in in [[stage_in]], constant uint4* c3 [[buffer(0)]], array<texture2d<float>, 32> t [[texture(3)]], sampler tSmplr [[sampler(1)]], float4 gl_FragCoord [[position]])
{
    main0_out out = {};
}
";

    #[test]
    fn reads_the_signature_and_its_structs() {
        let f = functions(MSL);
        assert_eq!(f.len(), 1);
        let f = &f[0];
        assert_eq!(
            (f.qualifier.as_str(), f.ret.as_str()),
            ("fragment", "main0_out")
        );
        assert_eq!(f.name, "main0");
        let idx: Vec<_> = f
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.attrs[0].name.as_str(), p.count()))
            .collect();
        assert_eq!(
            idx,
            [
                ("in", "stage_in", 1),
                ("c3", "buffer", 1),
                ("t", "texture", 32),
                ("tSmplr", "sampler", 1),
                ("gl_FragCoord", "position", 1)
            ]
        );
        assert_eq!(f.params[2].attr("texture"), Some("3"));
        let inp = struct_members(MSL, "main0_in").unwrap();
        assert_eq!(inp[0].attr("user"), Some("locn1"));
        assert!(inp[0].attr("center_no_perspective").is_some());
        let out = struct_members(MSL, "main0_out").unwrap();
        assert_eq!(out[0].attr("color"), Some("0"));
        assert_eq!(out[1].name, "gl_ClipDistance");
        assert!(struct_members(MSL, "main0").is_none());
    }
}
