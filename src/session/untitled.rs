//! Where an untitled session journals its steps, so that no stroke is ever lost: from its first
//! step, an untitled session (the default terrain, a journal or a height file opened in the
//! editor) rewrites a complete journal of its document (initial heights and every step) in the
//! user's state folder, `$XDG_STATE_HOME/scarp` (else `~/.local/state/scarp`), named after the
//! process. A file whose process is gone is a *leftover*: the editor offers it at the next start
//! (`scarp edit --recover` takes it without asking), `scarp recover` lists them, and since each is
//! a journal, `scarp apply --journal FILE` replays one headless.

use crate::journal::JournalFile;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

const PREFIX: &str = "untitled-";
const SUFFIX: &str = ".journal.json";

/// The folder untitled sessions journal into (not created here).
pub fn state_dir() -> Option<PathBuf> {
    user_folder("XDG_STATE_HOME", ".local/state")
}

/// Scarp's folder in the user's XDG folder `var` (else `home_default` under HOME); None when
/// neither is set.
pub fn user_folder(var: &str, home_default: &str) -> Option<PathBuf> {
    let from_env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from_env(var)
        .or_else(|| from_env("HOME").map(|h| h.join(home_default)))
        .map(|d| d.join("scarp"))
}

/// The journal file of this process's untitled session in `dir`.
pub fn path_for_this_process(dir: &Path) -> PathBuf {
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    dir.join(format!("{PREFIX}{}-{started}{SUFFIX}", std::process::id()))
}

/// A journal left by an untitled session that ended without saving.
#[derive(Clone, Debug)]
pub struct Leftover {
    pub path: PathBuf,
    pub strokes: usize,
    pub steps: usize,
    pub modified: SystemTime,
}

/// The pid in an untitled journal's file name.
fn pid_of(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?
        .strip_suffix(SUFFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}

/// Leftover untitled journals in `dir`, newest first; unreadable ones are skipped.
pub fn leftovers(dir: &Path) -> Vec<Leftover> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Leftover> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = pid_of(&name)?;
            if crate::atomic_file::process_running(pid) {
                return None;
            }
            let text = crate::atomic_file::read_regular_to_string(&e.path()).ok()?;
            let journal: JournalFile = serde_json::from_str(&text).ok()?;
            Some(Leftover {
                path: e.path(),
                strokes: journal.stroke_count(),
                steps: journal.steps.len(),
                modified: e.metadata().ok()?.modified().ok()?,
            })
        })
        .collect();
    out.sort_by_key(|l| std::cmp::Reverse(l.modified));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_carry_the_pid_and_live_processes_are_not_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let mine = path_for_this_process(dir.path());
        let name = mine.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(pid_of(&name), Some(std::process::id()));
        let journal = r#"{"version": 1, "document": {"width": 64, "height": 64}, "steps": []}"#;
        std::fs::write(&mine, journal).unwrap();
        // A pid no process has (above Linux's pid_max).
        let dead = dir.path().join(format!("{PREFIX}4294967295-1{SUFFIX}"));
        std::fs::write(&dead, journal).unwrap();
        std::fs::write(dir.path().join("unrelated.json"), journal).unwrap();
        let found = leftovers(dir.path());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, dead);
        assert_eq!(found[0].strokes, 0);
    }
}
