//! `scarp recover`: the journals of untitled sessions that ended without saving (a crash, a
//! kill), newest first. Each is a journal: `scarp apply --journal FILE --out x.scarp` replays one
//! headless, `scarp edit --recover` reopens the newest in the editor.

use crate::session::untitled;
use anyhow::{bail, Result};

pub fn run() -> Result<()> {
    let Some(dir) = untitled::state_dir() else {
        bail!("no state folder: set XDG_STATE_HOME or HOME");
    };
    let found = untitled::leftovers(&dir);
    if found.is_empty() {
        println!("no untitled session to recover in {}", dir.display());
        return Ok(());
    }
    for l in found {
        let age = l.modified.elapsed().map_or(0, |d| d.as_secs());
        println!(
            "{}: {} stroke(s), {} step(s), last written {} ago",
            l.path.display(),
            l.strokes,
            l.steps,
            human_age(age)
        );
    }
    Ok(())
}

fn human_age(secs: u64) -> String {
    match secs {
        0..=119 => format!("{secs} s"),
        120..=7199 => format!("{} min", secs / 60),
        7200..=172_799 => format!("{} h", secs / 3600),
        _ => format!("{} days", secs / 86_400),
    }
}
