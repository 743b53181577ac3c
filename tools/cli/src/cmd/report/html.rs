//! report.html: one self-contained page (inline CSS and SVG, no script, no link, nothing
//! fetched), with a bar chart per count table.

use super::markdown::percent;
use super::{Count, KeyNote, Report};

/// `text` with HTML's special characters escaped.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A horizontal bar chart, one bar per count, scaled to `total`.
fn chart(rows: &[Count], total: usize) -> String {
    const W: usize = 800;
    const LABEL: usize = 300;
    const ROW: usize = 22;
    let h = rows.len() * ROW + 4;
    let mut s = format!("<svg width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" role=\"img\">");
    let span = (W - LABEL - 80) as f64;
    for (i, c) in rows.iter().enumerate() {
        let y = i * ROW + 2;
        let w = if total == 0 {
            0.0
        } else {
            span * c.count as f64 / total as f64
        };
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{LABEL}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" class=\"bar\"/>\
             <text x=\"{:.1}\" y=\"{}\">{} ({})</text>",
            LABEL - 6,
            y + 15,
            esc(&c.name),
            ROW - 6,
            LABEL as f64 + w + 6.0,
            y + 15,
            c.count,
            esc(&percent(c.count, total))
        ));
    }
    s.push_str("</svg>\n");
    s
}

fn section(s: &mut String, title: &str, rows: &[Count], total: usize) {
    s.push_str(&format!("<h2>{}</h2>\n{}", esc(title), chart(rows, total)));
}

fn notes(s: &mut String, title: &str, empty: &str, list: &[KeyNote]) {
    s.push_str(&format!("<h2>{}: {}</h2>\n", esc(title), list.len()));
    if list.is_empty() {
        s.push_str(&format!("<p>{}</p>\n", esc(empty)));
        return;
    }
    key_table(s, list);
}

fn key_table(s: &mut String, list: &[KeyNote]) {
    s.push_str("<table><tr><th>key</th><th>stage</th><th></th></tr>\n");
    for n in list {
        s.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
            esc(&n.key),
            esc(&n.stage),
            esc(&n.note)
        ));
    }
    s.push_str("</table>\n");
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:60em}\
svg text{font-size:13px;font-family:sans-serif}.bar{fill:#3b7dd8}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;\
vertical-align:top}code{font-size:90%}";

/// The page.
pub fn html(r: &Report) -> String {
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Shader coverage: {t}</title><style>{STYLE}</style></head><body>\n\
         <h1>Shader coverage: {t}</h1>\n<p>Chain version <code>{v}</code>; {n} unique shaders.</p>\n",
        t = esc(&r.title),
        v = esc(&r.chain),
        n = r.shaders
    );
    section(&mut s, "Along the chain", &r.levels, r.shaders);
    s.push_str(&format!("<p>{}</p>\n", esc(super::cause::LEVELS_NOTE)));
    section(&mut s, "Shaders per stage", &r.stages, r.shaders);
    section(
        &mut s,
        "Shaders per container kind",
        &r.containers,
        r.shaders,
    );
    section(
        &mut s,
        "Shaders per container kind and stage",
        &r.container_stages,
        r.shaders,
    );
    let causes: Vec<Count> = r
        .failures
        .iter()
        .map(|g| Count {
            name: g.label.clone(),
            count: g.count,
        })
        .collect();
    section(&mut s, "Failures by cause", &causes, r.shaders);
    for g in &r.failures {
        s.push_str(&format!(
            "<h3>{} (<code>{}</code>): {} shaders, for example</h3>\n",
            esc(&g.label),
            esc(&g.cause),
            g.count
        ));
        key_table(&mut s, &g.examples);
    }
    for (title, empty, list) in r.note_sections() {
        notes(&mut s, title, empty, list);
    }
    if let Some(since) = &r.since {
        s.push_str(&format!(
            "<h2>Since b-{}</h2>\n<p>{} keys have other outputs, {} are unchanged.</p>\n",
            esc(&since.from),
            since.changed.len(),
            since.unchanged
        ));
        if !since.inputs_changed.is_empty() {
            let n = since.changed.len() + since.unchanged;
            section(
                &mut s,
                "Inputs that changed, in how many keys",
                &since.inputs_changed,
                n,
            );
        }
        if !since.changed.is_empty() {
            s.push_str("<table><tr><th>key</th><th>stage</th><th>change</th><th>before</th><th>now</th><th>inputs changed</th></tr>\n");
            for c in &since.changed {
                s.push_str(&format!(
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    esc(&c.key),
                    esc(&c.stage),
                    esc(&c.kind),
                    esc(&c.before),
                    esc(&c.now),
                    esc(&c.inputs.join(", "))
                ));
            }
            s.push_str("</table>\n");
        }
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_nothing_is_fetched() {
        let r = Report {
            title: "<T & T>".into(),
            chain: "0123456789ab".into(),
            shaders: 2,
            containers: vec![],
            stages: vec![Count {
                name: "vertex".into(),
                count: 2,
            }],
            container_stages: vec![],
            levels: vec![],
            failures: vec![],
            unresolved_bindings: vec![],
            dynamic_slots: vec![],
            driver_reads: vec![KeyNote {
                key: "aa".into(),
                stage: "vertex".into(),
                note: "x [[texture(0)]] <b>".into(),
            }],
            not_in_metal: vec![],
            since: None,
        };
        let h = html(&r);
        assert!(h.contains("&lt;T &amp; T&gt;"));
        assert!(h.contains("&lt;b&gt;") && !h.contains("<b>"));
        assert!(h.contains("<svg") && h.contains("<rect"));
        for bad in [
            "http:", "https:", "src=", "href=", "<script", "<link", "url(", "@import",
        ] {
            assert!(!h.contains(bad), "{bad}");
        }
    }
}
