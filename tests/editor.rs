//! The windowed editor under Xvfb (lavapipe, validation on: the editor exits non-zero on any
//! message): `scarp edit --replay J --screenshot F --quit` paints the demo journal through the
//! input path, and the screenshot shows the terrain and the imgui panels. Presets shipped in
//! assets/presets all load.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// An Xvfb server on a free display, killed on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Self {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1600x1000x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (package xvfb, installed by .ci/setup)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let n: u32 = line.trim().parse().expect("Xvfb display number");
        Self {
            child,
            display: format!(":{n}"),
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn scripted_replay_draws_terrain_and_panels_and_exits_cleanly() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("edit.png");
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let out = Command::new(env!("CARGO_BIN_EXE_scarp"))
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("SCARP_VALIDATION", "1")
        .args(["edit", "--replay", demo, "--screenshot"])
        .arg(&shot)
        .arg("--quit")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "editor failed: {stderr}");
    assert!(!stderr.contains("VUID"), "{stderr}");
    let img = image::open(&shot).unwrap().to_rgb8();
    let (w, h) = img.dimensions();
    assert!(w >= 800 && h >= 500, "{w}x{h}");
    // imgui windows: dark grey backgrounds (ImGui's default dark style).
    let panel = img
        .pixels()
        .filter(|p| p.0.iter().all(|&c| c < 40) && p.0[0].abs_diff(p.0[2]) < 6)
        .count();
    // Terrain: greens and browns (neither sky blue nor panel grey).
    let terrain = img
        .pixels()
        .filter(|p| {
            let [r, g, b] = p.0.map(i32::from);
            g > b + 8 && g >= r - 20 && g > 60
        })
        .count();
    let total = (w * h) as usize;
    assert!(panel * 20 > total, "panels cover {panel} of {total} pixels");
    assert!(
        terrain * 10 > total,
        "terrain covers {terrain} of {total} pixels"
    );
}

#[test]
fn no_display_gives_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_scarp"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .arg("edit")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no display") && err.contains("scarp render"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn shipped_presets_and_journals_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for e in std::fs::read_dir(root.join("assets/presets")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        scarp::brush::journal::parse_brush(&text, root)
            .unwrap_or_else(|err| panic!("{}: {err}", p.display()));
        n += 1;
    }
    assert!(n >= 4);
    let j =
        scarp::brush::journal::Journal::load(&root.join("assets/journals/default.json")).unwrap();
    assert_eq!((j.document.width, j.document.height), (4096, 4096));
}
