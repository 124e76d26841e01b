//! What a driving script sees of the interface (`scarp edit --ui-state FILE`): after each frame
//! is presented, one JSON line with the frame's number, where imgui saw the pointer, and what
//! the panels show (the open tool panel, the brush, the path's points, the erosion region, the
//! sea, the file browser, the steps so far). A script waits for the line it needs instead of
//! for time: on a loaded machine one frame can take seconds, and a click sent before the panel
//! it aims at is drawn lands on the terrain. tests/editor.rs drives the artist's whole job so.

use anyhow::{Context, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// One frame's interface, as the line says it.
#[derive(Debug, Default, Serialize)]
pub struct UiProbe {
    /// Frames presented since the editor opened.
    pub frame: u64,
    /// Where imgui saw the pointer this frame (window pixels).
    pub pointer: [f32; 2],
    /// Whether imgui saw the left button down.
    pub button: bool,
    /// The pointer is over a panel (the panels take its clicks).
    pub over_panel: bool,
    /// The pointer is over a widget.
    pub over_widget: bool,
    /// Whether the terrain was drawn this frame (else the last picture was kept).
    pub terrain_drawn: bool,
    pub help: bool,
    /// The right column's open tool panel.
    pub panel: Option<&'static str>,
    /// The brush's type (its journal name).
    pub brush: &'static str,
    /// Left clicks place path points.
    pub path_tool: bool,
    pub path_points: usize,
    /// The path's water (height units).
    pub path_water: f32,
    /// The next left drag sets the erosion region.
    pub erosion_picking: bool,
    /// The erosion region (x, y, width, height; empty: the whole document).
    pub erosion_region: [i32; 4],
    pub erosion_running: bool,
    /// What the open file browser is for.
    pub browser: Option<&'static str>,
    /// The close panel asks about unsaved steps.
    pub closing: bool,
    pub sea: bool,
    pub layers: usize,
    /// Steps since the document was opened.
    pub steps: usize,
    /// The status line.
    pub message: String,
    /// The point the camera looks at (world units).
    pub camera_target: [f32; 3],
}

/// The file the lines go to.
pub struct UiProbeLog {
    out: std::io::BufWriter<std::fs::File>,
}

impl UiProbeLog {
    /// Creates (truncates) `path`.
    pub fn create(path: &Path) -> Result<Self> {
        let file = std::fs::File::create(path)
            .with_context(|| format!("--ui-state {}: cannot write", path.display()))?;
        Ok(Self {
            out: std::io::BufWriter::new(file),
        })
    }

    /// Appends `probe` as one line, written and flushed at once so a reader sees it whole.
    pub fn write(&mut self, probe: &UiProbe) -> Result<()> {
        let mut line = serde_json::to_vec(probe)?;
        line.push(b'\n');
        self.out.write_all(&line).context("--ui-state")?;
        self.out.flush().context("--ui-state")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_frame_is_one_whole_line_of_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ui.jsonl");
        let mut log = UiProbeLog::create(&path).unwrap();
        for frame in 1..=3 {
            let probe = UiProbe {
                frame,
                panel: Some("Path"),
                brush: "noise",
                ..UiProbe::default()
            };
            log.write(&probe).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2]["frame"], 3);
        assert_eq!(lines[2]["panel"], "Path");
        assert_eq!(lines[2]["brush"], "noise");
    }

    #[test]
    fn an_unwritable_file_is_named() {
        let e = UiProbeLog::create(Path::new("/nonexistent-dir/ui.jsonl"))
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("--ui-state /nonexistent-dir/ui.jsonl"));
    }
}
