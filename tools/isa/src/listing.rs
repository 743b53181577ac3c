//! Readers for nvdisasm listings used as ground truth: the corpus TSV format
//! (`offset  encoding  sass  sass_raw  dual`) and nvdisasm's own `-hex` text.

use crate::word::Word;

/// One slot of a listing, with its word of type `W` (`u64` for Maxwell, `u128` for Ampere).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<W = u64> {
    /// Byte offset in the instruction stream.
    pub offset: u64,
    /// The instruction (or scheduling) word.
    pub word: W,
    /// nvdisasm's text (`None` for scheduling words and for words nvdisasm rejected).
    pub text: Option<String>,
}

/// Normalizes instruction text for comparison: drops `{`, `}` and a trailing `;`,
/// collapses runs of blanks.
pub fn normalize(s: &str) -> String {
    let s = s.replace(['{', '}'], " ");
    let s = s.trim().trim_end_matches(';');
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses a listing in either format (detected from its content).
pub fn parse(text: &str) -> Vec<Entry> {
    if text.lines().any(|l| l.starts_with("0x0000\t")) {
        parse_tsv(text)
    } else {
        parse_nvdisasm(text)
    }
}

/// Parses the corpus TSV format (64-bit words; other lines are skipped).
pub fn parse_tsv(text: &str) -> Vec<Entry> {
    parse_tsv_as(text)
}

/// Parses the corpus TSV format with words of type `W` (`parse_tsv_as::<u128>` for sm86
/// listings); lines whose encoding is not exactly `W`'s width are skipped.
pub fn parse_tsv_as<W: Word>(text: &str) -> Vec<Entry<W>> {
    let mut out = Vec::new();
    for l in text.lines() {
        if l.starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let c: Vec<&str> = l.split('\t').collect();
        if c.len() < 3 {
            continue;
        }
        if c[1].len() != W::BYTES * 2 {
            continue;
        }
        let (Ok(offset), Ok(word)) = (
            u64::from_str_radix(c[0].trim_start_matches("0x"), 16),
            u128::from_str_radix(c[1], 16),
        ) else {
            continue;
        };
        let word = W::from_u128(word);
        let t = c[2].trim();
        let text = (t != ".ctrl" && !t.contains("UNDECODED")).then(|| t.to_string());
        out.push(Entry { offset, word, text });
    }
    out
}

/// Parses nvdisasm `-hex` output: `/*0008*/  TEXT ;  /* 0x... */` lines, scheduling words
/// as bare `/* 0x... */` lines; the hex of the second of a dual-issue pair may sit on the
/// next line.
pub fn parse_nvdisasm(text: &str) -> Vec<Entry> {
    let mut words = Vec::new();
    let mut texts = std::collections::HashMap::new();
    for l in text.lines() {
        let t = l.trim_start();
        if t.starts_with("//") || t.starts_with('.') {
            continue;
        }
        // Offset comment.
        let mut rest = t;
        if let Some(r) = t.strip_prefix("/*") {
            if let Some(end) = r.find("*/") {
                let off = &r[..end];
                if !off.starts_with(" 0x") {
                    if let Ok(o) = u64::from_str_radix(off, 16) {
                        let body = &r[end + 2..];
                        let stop = body.find("/* 0x").unwrap_or(body.len());
                        let body = body[..stop].split("//").next().unwrap_or("");
                        texts.insert(o, body.trim().to_string());
                        rest = &r[end + 2..];
                    }
                }
            }
        }
        let mut r = rest;
        while let Some(p) = r.find("/* 0x") {
            let h = &r[p + 5..];
            let n = h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len());
            if n == 16 {
                if let Ok(w) = u64::from_str_radix(&h[..16], 16) {
                    words.push(w);
                }
            }
            r = &h[n..];
        }
    }
    words
        .into_iter()
        .enumerate()
        .map(|(i, word)| {
            let offset = i as u64 * 8;
            let text = texts
                .get(&offset)
                .filter(|t| !t.contains("UNDECODED"))
                .cloned();
            Entry { offset, word, text }
        })
        .collect()
}
