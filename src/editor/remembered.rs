//! What the editor remembers between runs, in the user's config folder (`$XDG_CONFIG_HOME/scarp`,
//! else `~/.config/scarp`): the window's size and the last brush in `editor.json`, the panels'
//! places and sizes in imgui's own layout file beside it ([`LAYOUT_FILE`]).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file of [`Remembered`] in the config folder.
pub const FILE: &str = "editor.json";
/// imgui's layout file in the config folder. Its name carries the layout's version: when the
/// panels' docked places change, a new name leaves an older version's file (whose places would
/// override the new ones: collapsed tool panels in the middle of the viewport) to that version.
/// Version 2: the right column's tool panels open one at a time (2026-11-26); before it,
/// `imgui.ini`.
pub const LAYOUT_FILE: &str = "layout-2.ini";
/// Window sizes accepted from the file (logical pixels, each side).
pub const WINDOW_SIDES: std::ops::RangeInclusive<u32> = 320..=16384;

/// The config folder (not created here); None without XDG_CONFIG_HOME or HOME.
pub fn config_dir() -> Option<PathBuf> {
    crate::session::untitled::user_folder("XDG_CONFIG_HOME", ".config")
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remembered {
    /// The window's inner size, logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<[u32; 2]>,
    /// The last brush, as journals and presets spell it (docs/journal.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brush: Option<crate::journal::BrushEntry>,
    /// The Help panel was shown once: later runs start without it (the View panel's "help"
    /// brings it back).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub help_seen: bool,
    /// The folder a file was last chosen in (the file browser's start when the document opened
    /// is not a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browse_dir: Option<PathBuf>,
}

impl Remembered {
    /// What to remember of a window of `window` logical pixels (kept when its sides are in
    /// [`WINDOW_SIDES`]), the brush `brush`, the folder last browsed, `browse_dir`, and whether
    /// the Help panel has been seen.
    pub fn of(
        window: [u32; 2],
        brush: &crate::brush::BrushSettings,
        browse_dir: &Path,
        help_seen: bool,
    ) -> Self {
        Self {
            window: window
                .iter()
                .all(|s| WINDOW_SIDES.contains(s))
                .then_some(window),
            brush: crate::journal::preset(brush).ok(),
            help_seen,
            browse_dir: std::path::absolute(browse_dir).ok(),
        }
    }

    /// Reads `dir`'s file: nothing remembered when there is none; a one-line error naming the
    /// file when it cannot be read or holds something else (a window size out of range too).
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join(FILE);
        let text = match crate::atomic_file::read_regular_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let r: Self =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some([w, h]) = r.window {
            if !WINDOW_SIDES.contains(&w) || !WINDOW_SIDES.contains(&h) {
                return Err(format!(
                    "{}: window {w}x{h} is outside {}..={} a side",
                    path.display(),
                    WINDOW_SIDES.start(),
                    WINDOW_SIDES.end()
                ));
            }
        }
        Ok(r)
    }

    /// Writes `dir`'s file (creating the folder), atomically.
    pub fn save(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::atomic_file::write_bytes_atomic(&dir.join(FILE), text.as_bytes())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_state_round_trips_and_bad_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Remembered::load(dir.path()).unwrap(), Remembered::default());
        let r = Remembered {
            window: Some([1280, 720]),
            brush: Some(
                serde_json::from_value(serde_json::json!({"type": "raise", "radius": 40})).unwrap(),
            ),
            ..Default::default()
        };
        r.save(&dir.path().join("sub")).unwrap();
        assert_eq!(Remembered::load(&dir.path().join("sub")).unwrap(), r);
        for (text, says) in [
            ("{", "EOF"),
            (r#"{"window": [10, 720]}"#, "window 10x720 is outside"),
            (r#"{"windows": [1280, 720]}"#, "unknown field"),
        ] {
            std::fs::write(dir.path().join(FILE), text).unwrap();
            let e = Remembered::load(dir.path()).unwrap_err();
            assert!(e.contains(FILE) && e.contains(says), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn help_is_seen_once_and_the_last_folder_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let brush = crate::brush::BrushSettings::new(crate::brush::BrushType::Raise);
        let r = Remembered::of([1280, 720], &brush, dir.path(), true);
        assert!(r.help_seen);
        assert_eq!(r.browse_dir.as_deref(), Some(dir.path()));
        r.save(dir.path()).unwrap();
        let back = Remembered::load(dir.path()).unwrap();
        assert!(back.help_seen && back.browse_dir == r.browse_dir);
        // A file written before these fields reads as never seen, no folder.
        std::fs::write(dir.path().join(FILE), r#"{"window": [1280, 720]}"#).unwrap();
        let old = Remembered::load(dir.path()).unwrap();
        assert!(!old.help_seen && old.browse_dir.is_none());
    }
}
