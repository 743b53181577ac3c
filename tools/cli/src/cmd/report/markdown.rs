//! report.md: the report as Markdown tables.

use super::{Count, KeyNote, Report};

fn table(out: &mut String, head: &str, rows: &[Count], total: usize) {
    out.push_str(&format!("| {head} | shaders | share |\n|---|---:|---:|\n"));
    for c in rows {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            c.name,
            c.count,
            percent(c.count, total)
        ));
    }
    out.push('\n');
}

/// `n` of `total` as a percentage with one decimal.
pub fn percent(n: usize, total: usize) -> String {
    if total == 0 {
        return "–".into();
    }
    format!("{:.1} %", n as f64 * 100.0 / total as f64)
}

fn notes(out: &mut String, title: &str, empty: &str, list: &[KeyNote]) {
    out.push_str(&format!("## {title}: {}\n\n", list.len()));
    if list.is_empty() {
        out.push_str(&format!("{empty}\n\n"));
        return;
    }
    for n in list {
        out.push_str(&format!("- `{}` ({}): {}\n", n.key, n.stage, n.note));
    }
    out.push('\n');
}

/// The Markdown text.
pub fn markdown(r: &Report) -> String {
    let mut s = format!(
        "# Shader coverage: {}\n\nChain version `{}`; {} unique shaders.\n\n## Along the chain\n\n",
        r.title, r.chain, r.shaders
    );
    table(&mut s, "step", &r.levels, r.shaders);
    s.push_str(&format!("{}\n\n", super::cause::LEVELS_NOTE));
    s.push_str("## Shaders per stage\n\n");
    table(&mut s, "stage", &r.stages, r.shaders);
    s.push_str("## Shaders per container kind\n\n");
    table(&mut s, "container", &r.containers, r.shaders);
    s.push_str("## Shaders per container kind and stage\n\n");
    table(&mut s, "container/stage", &r.container_stages, r.shaders);
    s.push_str("## Failures by cause\n\n");
    if r.failures.is_empty() {
        s.push_str("None.\n\n");
    } else {
        s.push_str("| cause | shaders | example keys |\n|---|---:|---|\n");
        for g in &r.failures {
            let ex: Vec<String> = g.examples.iter().map(|e| format!("`{}`", e.key)).collect();
            s.push_str(&format!(
                "| {} (`{}`) | {} | {} |\n",
                g.label,
                g.cause,
                g.count,
                ex.join(", ")
            ));
        }
        s.push('\n');
        for g in &r.failures {
            s.push_str(&format!("### {}\n\n", g.label));
            for e in &g.examples {
                s.push_str(&format!(
                    "- `{}` ({}): {}\n",
                    e.key,
                    e.stage,
                    e.note.replace('|', "\\|")
                ));
            }
            s.push('\n');
        }
    }
    for (title, empty, list) in r.note_sections() {
        notes(&mut s, title, empty, list);
    }
    if let Some(since) = &r.since {
        s.push_str(&format!(
            "## Since b-{}\n\n{} keys have other outputs, {} are unchanged.\n\n",
            since.from,
            since.changed.len(),
            since.unchanged
        ));
        if !since.inputs_changed.is_empty() {
            s.push_str("Inputs that changed, in how many keys:\n\n");
            let n = since.changed.len() + since.unchanged;
            table(&mut s, "input", &since.inputs_changed, n);
        }
        if !since.changed.is_empty() {
            s.push_str("| key | stage | change | before | now | inputs changed |\n|---|---|---|---|---|---|\n");
            for c in &since.changed {
                s.push_str(&format!(
                    "| `{}` | {} | {} | {} | {} | {} |\n",
                    c.key,
                    c.stage,
                    c.kind,
                    c.before,
                    c.now,
                    c.inputs.join(", ")
                ));
            }
            s.push('\n');
        }
    }
    s
}
