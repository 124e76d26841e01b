//! `scarp layers`: the layer stack a journal or a project (with its recovery journal) ends with,
//! top first, without replaying anything.

use crate::journal::Journal;
use crate::layers::Stack;
use crate::project;
use anyhow::{bail, Result};
use std::path::Path;

pub fn run(path: &Path) -> Result<()> {
    let stack = if path.extension().is_some_and(|e| e == "scarp") {
        let meta = project::open(path).map_err(anyhow::Error::msg)?.meta();
        let saved = match &meta.layers {
            Some(s) => s
                .check()
                .map_err(|e| anyhow::anyhow!("{}: layers: {e}", path.display()))?,
            None => Stack::default(),
        };
        // With a recovery journal, the stack its steps leave.
        match project::read_recovery(path).map_err(anyhow::Error::msg)? {
            Some(r) => {
                let base = path.parent().unwrap_or(Path::new("."));
                Journal::check_on(&r.journal, base, &saved)
                    .map_err(|e| anyhow::anyhow!("{}: recovery journal: {e}", path.display()))?
                    .layers
            }
            None => saved,
        }
    } else if path.extension().is_some_and(|e| e == "json") {
        Journal::load(path).map_err(anyhow::Error::msg)?.layers
    } else {
        bail!(
            "{}: give a journal (.json) or a project (.scarp)",
            path.display()
        );
    };
    print!("{}", describe(&stack));
    Ok(())
}

/// The stack as `scarp layers` prints it: top first, then the base; `*` marks the selection.
pub fn describe(stack: &Stack) -> String {
    let mut out = String::new();
    let selected = stack.selected_layer().map(|l| l.id);
    for (i, l) in stack.layers.iter().enumerate().rev() {
        out.push_str(&format!(
            "{} {i:>2} {:<24} {:<7} opacity {:.2}{}{}\n",
            if selected == Some(l.id) { '*' } else { ' ' },
            l.name,
            l.mode.name(),
            l.opacity,
            if l.visible { "" } else { "  hidden" },
            if l.locked { "  locked" } else { "" },
        ));
    }
    out.push_str(&format!(
        "{}    base\n",
        if selected.is_none() { '*' } else { ' ' }
    ));
    out
}
