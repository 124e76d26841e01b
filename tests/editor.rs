//! The windowed editor under Xvfb (lavapipe, validation on: the editor exits non-zero on any
//! message): `scarp edit --replay J --screenshot F --trace T --quit` paints the demo journal
//! through the input path, the screenshot shows the terrain and the imgui panels, and the
//! session's trace holds frame spans, draws, UI passes and brush waves. Presets shipped in
//! assets/presets all load.

mod common;
mod ui_driver;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// An Xvfb server on a free display, killed on drop. `-noreset`: a server resets when its last
/// client leaves, and a client connecting during the reset is refused ("Can't open display",
/// seen in CI when a test started its next editor as the previous one closed).
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Self {
        Self::start_sized("1600x1000x24")
    }

    /// A server whose screen is `size` (WxHxDEPTH).
    fn start_sized(size: &str) -> Self {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                size,
                "-nolisten",
                "tcp",
                "-noreset",
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
    let trace = dir.path().join("trace.json");
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let out = editor(&x, dir.path())
        .args(["--replay", demo, "--screenshot"])
        .arg(&shot)
        .arg("--trace")
        .arg(&trace)
        .arg("--quit")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "editor failed: {stderr}");
    assert!(!stderr.contains("VUID"), "{stderr}");
    // The trace of the session: a frame span per frame, the painting's waves, draws and UI on
    // the GPU track.
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).expect("the trace is JSON");
    let spans: Vec<&serde_json::Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    let count =
        |pred: &dyn Fn(&serde_json::Value) -> bool| spans.iter().filter(|e| pred(e)).count();
    assert!(count(&|e| e["name"] == "frame") >= 3, "frame spans");
    for pass in ["terrain draw", "ui"] {
        assert!(
            count(&|e| e["tid"] == 1000 && e["name"] == pass) >= 3,
            "{pass}"
        );
    }
    assert!(
        count(&|e| e["tid"] == 1000 && e["name"].as_str().unwrap().starts_with("brush ")) >= 1,
        "the replay's brush waves"
    );
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

/// The editor under Xvfb with its untitled-session journals in `state`.
fn editor(x: &Xvfb, state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scarp"));
    c.env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("SCARP_VALIDATION", "1")
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .arg("edit");
    c
}

/// Waits (up to 300 s) for an untitled journal in `folder` that `done` accepts; fails if the
/// editor ends first. Returns its path.
fn wait_for_journal(
    child: &mut std::process::Child,
    folder: &Path,
    done: impl Fn(&scarp::journal::JournalFile) -> bool,
) -> std::path::PathBuf {
    let start = std::time::Instant::now();
    loop {
        if let Some(p) = find_journal(folder, &done) {
            return p;
        }
        if let Some(status) = child.try_wait().unwrap() {
            ended(child, status, "a journal");
        }
        if start.elapsed().as_secs() >= 300 {
            let steps = find_journal(folder, &|_| true)
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|t| serde_json::from_str::<scarp::journal::JournalFile>(&t).ok())
                .map(|j| j.steps.iter().map(step_kind).collect::<Vec<_>>());
            panic!("no such untitled journal after 300 s; the journal's steps: {steps:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Fails: the editor `child` ended with `status` while the test waited for `what`; its stderr
/// says why.
fn ended(child: &mut Child, status: std::process::ExitStatus, what: &str) -> ! {
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).unwrap();
    }
    panic!("the editor ended ({status}) waiting for {what}: {err}");
}

/// A journal step's kind, for messages.
fn step_kind(s: &scarp::journal::StepEntry) -> &'static str {
    use scarp::journal::StepEntry as S;
    match s {
        S::Stroke(_) => "stroke",
        S::Undo(_) => "undo",
        S::Redo(_) => "redo",
        S::Layer(_) => "layer",
        S::Erode(_) => "erode",
        S::Path(_) => "path",
        S::Geology(_) => "geology",
    }
}

/// An untitled journal in `folder` that `done` accepts, if there is one now. Hidden files are
/// the atomic writes' temporaries (`.NAME.tmp-PID`): one may hold a whole journal a moment
/// before it is renamed over the journal, and be gone when read again.
fn find_journal(
    folder: &Path,
    done: &impl Fn(&scarp::journal::JournalFile) -> bool,
) -> Option<std::path::PathBuf> {
    std::fs::read_dir(folder).ok().and_then(|entries| {
        entries.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
            let hidden = p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            !hidden
                && std::fs::read_to_string(p)
                    .ok()
                    .and_then(|t| serde_json::from_str::<scarp::journal::JournalFile>(&t).ok())
                    .is_some_and(|j| done(&j))
        })
    })
}

/// `scarp apply` of `journal` to an .r32 file; the heights as bytes.
fn applied(journal: &Path, out: &Path) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_scarp"))
        .env("SCARP_VALIDATION", "1")
        .args(["apply", "--journal"])
        .arg(journal)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

/// Replays `journal` through the editor's input path in an untitled session (under its own
/// Xvfb), kills it once every step is journaled, and returns that journal's text with the
/// heights `scarp apply` makes of `journal` and of it.
fn replayed_untitled(journal: &Path, dir: &Path) -> (String, Vec<u8>, Vec<u8>) {
    let x = Xvfb::start();
    let state = dir.join("state");
    let want_steps = scarp::journal::Journal::load(journal).unwrap().steps.len();
    let mut child = editor(&x, &state)
        .arg("--replay")
        .arg(journal)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let folder = state.join("scarp");
    let journaled = wait_for_journal(&mut child, &folder, |j| j.steps.len() == want_steps);
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&journaled).unwrap();
    let want = applied(journal, &dir.join("want.r32"));
    let got = applied(&journaled, &dir.join("got.r32"));
    (text, want, got)
}

#[test]
fn an_untitled_session_killed_after_one_stroke_is_recovered_bit_for_bit() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let journal = dir.path().join("one.json");
    std::fs::write(
        &journal,
        r#"{"version": 1, "document": {"width": 600, "height": 400, "page_size": 256},
            "steps": [{"stroke": {"brush": {"type": "noise", "kind": "jordan", "radius": 90,
                        "strength": 0.3, "seed": 5},
                      "samples": [{"x": 100, "y": 120, "pressure": 1.0, "t": 0.0},
                                  {"x": 330, "y": 260, "pressure": 0.7, "t": 0.1},
                                  {"x": 520, "y": 200, "pressure": 0.9, "t": 0.2}]}}]}"#,
    )
    .unwrap();
    // Paint the stroke through the input path, untitled, and kill -9 once it is journaled.
    let mut child = editor(&x, &state)
        .arg("--replay")
        .arg(&journal)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let folder = state.join("scarp");
    let journaled = wait_for_journal(&mut child, &folder, |j| j.stroke_count() == 1);
    child.kill().unwrap(); // SIGKILL: no chance to save or clean up
    child.wait().unwrap();

    // The next start finds it, and it replays to the same heights, bit for bit.
    let left = scarp::session::untitled::leftovers(&folder);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].path, journaled);
    assert_eq!(left[0].strokes, 1);
    let want = applied(&journal, &dir.path().join("want.r32"));
    let got = applied(&journaled, &dir.path().join("got.r32"));
    assert!(got == want, "recovered heights differ from the stroke's");

    // `scarp edit --recover` takes it: the leftover is consumed and the session journals its
    // strokes again at once (nothing is lost if this session ends unsaved too).
    let out = editor(&x, &state)
        .arg("--recover")
        .arg("--screenshot")
        .arg(dir.path().join("recovered.png"))
        .arg("--quit")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("recovering the untitled session"), "{err}");
    assert!(!journaled.exists(), "the recovered leftover is still there");
    let again = scarp::session::untitled::leftovers(&folder);
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].strokes, 1);
    let regot = applied(&again[0].path, &dir.path().join("regot.r32"));
    assert!(regot == want, "re-journaled heights differ");
}

/// The first layer, added from the keyboard (Ctrl+Shift+N: the Layers panel's action, which runs
/// among the panels' actions, after the renderer caught up with the store and before it draws)
/// on an untitled flat document, a journal-made one and a reopened project: the editor keeps
/// drawing (it ended with "record before refresh: no coarse level" before) and journals the
/// step (the untitled journal, the project's recovery file).
#[test]
fn the_first_layer_is_added_without_a_crash_on_every_kind_of_document() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let flat = dir.path().join("flat.json");
    std::fs::write(
        &flat,
        r#"{"version": 1, "document": {"width": 1025, "height": 1025, "page_size": 256}}"#,
    )
    .unwrap();
    let hill = dir.path().join("hill.json");
    std::fs::write(
        &hill,
        r#"{"version": 1, "document": {"width": 700, "height": 500, "page_size": 256},
            "steps": [{"stroke": {"brush": {"type": "raise", "radius": 120, "strength": 0.5},
                      "samples": [{"x": 200, "y": 200, "pressure": 1.0, "t": 0.0},
                                  {"x": 450, "y": 300, "pressure": 1.0, "t": 0.1}]}}]}"#,
    )
    .unwrap();
    let project = dir.path().join("hill.scarp");
    common::scarp_ok(&[
        "apply",
        "--journal",
        hill.to_str().unwrap(),
        "--out",
        project.to_str().unwrap(),
    ]);
    let has_layer = |steps: &[scarp::journal::StepEntry]| {
        steps
            .iter()
            .any(|s| matches!(s, scarp::journal::StepEntry::Layer(_)))
    };
    for (case, source) in [
        ("untitled", &flat),
        ("journal", &hill),
        ("project", &project),
    ] {
        let state = dir.path().join(format!("state-{case}"));
        let (mut child, _) = driven_editor(&x, &state, source, dir.path());
        xdotool(&x, &["key", "ctrl+shift+n"]);
        if case == "project" {
            let recovery = scarp::project::recovery_path(&project);
            wait_for_file(&mut child, &recovery);
            let start = std::time::Instant::now();
            while !std::fs::read_to_string(&recovery).is_ok_and(|t| t.contains(r#""layer""#)) {
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "{case}: the editor ended"
                );
                assert!(
                    start.elapsed().as_secs() < 300,
                    "{case}: no layer step recovered"
                );
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        } else {
            wait_for_journal(&mut child, &state.join("scarp"), |j| has_layer(&j.steps));
        }
        // Frames drawn after the step: the editor is still running.
        std::thread::sleep(std::time::Duration::from_secs(4));
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("{case}: the editor ended ({status}) after adding a layer: {err}");
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
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
        scarp::journal::parse_brush(&text, root)
            .unwrap_or_else(|err| panic!("{}: {err}", p.display()));
        n += 1;
    }
    assert!(n >= 4);
    let j = scarp::journal::Journal::load(&root.join("assets/journals/default.json")).unwrap();
    assert_eq!((j.document.width, j.document.height), (4096, 4096));
}

/// The demo painted through the editor with pages squeezed out of a 12 MiB GPU budget and a
/// 2 MiB host budget (versions in the page file) draws the same terrain, pixel for pixel, as
/// with no budget (the view between the panels is compared; the profiler's numbers differ).
#[test]
fn a_tight_page_budget_draws_the_same_terrain() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let shot = |name: &str, budget: &[&str]| {
        let path = dir.path().join(name);
        let out = Command::new(env!("CARGO_BIN_EXE_scarp"))
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .env("SCARP_VALIDATION", "1")
            .env("XDG_STATE_HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .args(["edit", "--replay", demo, "--quit", "--screenshot"])
            .arg(&path)
            .args(budget)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "editor failed: {stderr}");
        image::open(&path).unwrap().to_rgb8()
    };
    let free = shot("free.png", &["--gpu-budget", "unlimited"]);
    let tight = shot(
        "tight.png",
        &["--gpu-budget", "12MiB", "--host-budget", "2MiB"],
    );
    assert_eq!(free.dimensions(), tight.dimensions());
    let (w, h) = free.dimensions();
    // Between the left panels (to x 345), the help panel (to y 255) and the profiler (from x
    // 1055), down to the bottom.
    let (x0, x1, y0) = (350 * w / 1440, 1050 * w / 1440, 260 * h / 900);
    let (mut differ, mut land) = (0, 0);
    for y in y0..h {
        for x in x0..x1 {
            let [r, g, b] = free.get_pixel(x, y).0.map(i32::from);
            land += usize::from(g > b + 8 && g >= r - 20 && g > 60);
            differ += usize::from(free.get_pixel(x, y) != tight.get_pixel(x, y));
        }
    }
    let area = ((x1 - x0) * (h - y0)) as usize;
    assert!(
        land * 5 > area,
        "the compared view shows terrain ({land} of {area})"
    );
    assert_eq!(differ, 0, "{differ} pixels of the terrain view differ");
}

#[test]
fn a_layered_session_painted_in_the_editor_journals_its_layer_steps_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/journals/layers.json"
    ));
    // Layer steps and strokes on layers through the editor's input path, untitled; kill -9 once
    // every step is journaled.
    let (text, want, got) = replayed_untitled(journal, dir.path());
    assert!(text.contains("\"layer\""), "layer steps are journaled");
    assert!(
        got == want,
        "the editor's layered session differs from the journal's"
    );
}

#[test]
fn an_erode_step_replayed_in_the_editor_is_journaled_and_replays_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("erode.json");
    let stroke = |ty: &str, x0: f32| {
        serde_json::json!({"stroke": {
            "brush": {"type": ty, "radius": 60, "strength": 0.3},
            "samples": (0..8).map(|i| serde_json::json!(
                {"x": x0 + 12.0 * i as f32, "y": 130.0, "pressure": 1.0, "t": i as f32 * 0.02}
            )).collect::<Vec<_>>()
        }})
    };
    let text = serde_json::json!({
        "version": 2,
        "document": {"width": 256, "height": 256, "page_size": 128},
        "steps": [
            stroke("raise", 60.0),
            {"erode": {"region": [20, 40, 200, 150], "model": "both", "steps": 40, "rain": 0.05}},
            {"undo": 1},
            {"redo": 1},
            stroke("lower", 120.0),
        ]
    });
    std::fs::write(&journal, text.to_string()).unwrap();
    let (text, want, got) = replayed_untitled(&journal, dir.path());
    assert!(text.contains("\"erode\""), "the erode step is journaled");
    assert!(
        got == want,
        "the editor's session differs from the journal's"
    );
}

/// A geology step replayed in the editor (its panel's run) is journaled with its parameters and
/// replays to the same heights with `scarp apply`, bit for bit; the drainage overlay it leaves
/// does not enter the journal or the heights.
#[test]
fn a_geology_step_replayed_in_the_editor_is_journaled_and_replays_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("geology.json");
    let text = serde_json::json!({
        "version": 2,
        "document": {"width": 256, "height": 192, "page_size": 128,
                     "units": {"texel_size": 8, "height_unit": 300}},
        "steps": [
            {"stroke": {"brush": {"type": "noise", "kind": "ridged", "radius": 120, "strength": 0.6},
                        "samples": [{"x": 128, "y": 96, "pressure": 1.0, "t": 0.0}]}},
            {"geology": {"region": [10, 10, 230, 170], "iterations": 300, "coarse": 1,
                         "erodibility": 1e-4}},
            {"undo": 1},
            {"redo": 1},
        ]
    });
    std::fs::write(&journal, text.to_string()).unwrap();
    let (text, want, got) = replayed_untitled(&journal, dir.path());
    assert!(
        text.contains("\"geology\""),
        "the geology step is journaled"
    );
    assert!(
        got == want,
        "the editor's session differs from the journal's"
    );
}

/// `scarp edit --sea-level` opens with the sea shown: the islands of a journal's terrain stand
/// in water that was green land without it.
#[test]
fn the_sea_is_drawn_in_the_editor() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let journal = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/journals/flatten-ramp.json"
    );
    let shoot = |sea: Option<&str>, name: &str| {
        let shot = dir.path().join(name);
        let mut cmd = editor(&x, dir.path());
        cmd.arg(journal);
        if let Some(level) = sea {
            cmd.args(["--sea-level", level]);
        }
        let out = cmd
            .arg("--screenshot")
            .arg(&shot)
            .arg("--quit")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "editor failed: {stderr}");
        assert!(!stderr.contains("VUID"), "{stderr}");
        image::open(&shot).unwrap().to_rgb8()
    };
    // Sea water: blue-green and dark in red (the sky is paler, the land greener or greyer), in
    // the middle of the window, below the help and between the side panels (their buttons are
    // blue too).
    let water = |img: &image::RgbImage| {
        let (w, h) = img.dimensions();
        let (xs, ys) = (w * 27 / 100..w * 70 / 100, h * 33 / 100..h * 98 / 100);
        let total = xs.len() * ys.len();
        let count = ys
            .flat_map(|y| xs.clone().map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let [r, g, b] = img.get_pixel(x, y).0.map(i32::from);
                r < 90 && b > r + 40 && g > r + 25
            })
            .count();
        count as f64 / total as f64
    };
    let land = water(&shoot(None, "land.png"));
    let sea = water(&shoot(Some("0.08"), "sea.png"));
    assert!(
        land < 0.05,
        "{land:.3} of the view is water without the sea"
    );
    assert!(sea > 0.2, "{sea:.3} of the view is sea");
}

/// The brush panel's noise preview is the noise kernel's output across the brush's width: its
/// pixels equal the CPU twin's noise stretched to grey levels, and follow a parameter change.
#[test]
fn the_noise_preview_shows_the_brush_noise() {
    use scarp::editor::noise_preview::{across, grey_pixels, NoisePreview, SIZE};
    use scarp::noise::{CpuTables, NoiseKind, NoiseSettings, NoiseTables};
    let gpu = common::gpu();
    let tables = NoiseTables::new(2009);
    let mut imgui = imgui::Context::create();
    let mut renderer =
        scarp::editor::imgui_renderer(&gpu, &mut imgui, scarp::gpu::vk::Format::B8G8R8A8_UNORM)
            .unwrap();
    let mut preview = NoisePreview::new(&gpu, &tables, &mut renderer).unwrap();
    let cpu = CpuTables::new(&tables);
    let width = 300.0;
    let mut last = Vec::new();
    for (kind, octaves) in [
        (NoiseKind::Jordan, 8),
        (NoiseKind::Jordan, 3),
        (NoiseKind::Ridged, 6),
    ] {
        let noise = NoiseSettings {
            scale: 0.005,
            octaves,
            ..NoiseSettings::new(kind)
        };
        preview.texture_for(&noise, width).unwrap();
        let got = preview.pixels().unwrap();
        let s = across(&noise, width);
        let want = grey_pixels(&cpu.generate(kind, &s.params(), SIZE, SIZE));
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap();
        assert!(
            worst <= 2,
            "{kind:?} {octaves} octaves: off by {worst} grey levels"
        );
        let levels: std::collections::BTreeSet<u8> = got.iter().step_by(4).copied().collect();
        assert!(levels.len() > 64, "{kind:?}: {} grey levels", levels.len());
        assert_ne!(got, last, "{kind:?} {octaves}: the preview did not change");
        last = got;
    }
    drop(preview);
    drop(renderer);
    common::assert_no_validation_messages(&gpu);
}

/// The editor remembers the window's size, the panels' layout and the last brush in the config
/// folder, starts with them, and starts with defaults (saying why) from a broken file.
#[test]
fn window_size_layout_and_last_brush_are_remembered() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let config = dir.path().join("scarp");
    let run = |name: &str| {
        let shot = dir.path().join(name);
        let out = editor(&x, dir.path())
            .arg(demo)
            .arg("--screenshot")
            .arg(&shot)
            .arg("--quit")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let remembered: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(config.join("editor.json")).unwrap())
                .unwrap();
        (image::image_dimensions(&shot).unwrap(), remembered)
    };
    // A layout an older version left (imgui.ini) puts the collapsed Erosion panel in the middle
    // of the viewport: the editor leaves it to that version and docks the panel.
    std::fs::create_dir_all(&config).unwrap();
    let old = "[Window][Erosion]\nPos=500,300\nSize=400,460\nCollapsed=1\n\n";
    std::fs::write(config.join("imgui.ini"), old).unwrap();
    let (size, first) = run("first.png");
    assert_eq!(first["window"], serde_json::json!([size.0, size.1]));
    assert_eq!(first["brush"]["type"], "noise");
    let layout = std::fs::read_to_string(config.join(scarp::editor::remembered::LAYOUT_FILE));
    let layout = layout.unwrap();
    assert!(layout.contains("[Window][Brush]"), "{layout}");
    let erosion = layout
        .split("[Window][Erosion]")
        .nth(1)
        .expect("the Erosion panel's place");
    let x: f32 = erosion
        .lines()
        .find_map(|l| l.strip_prefix("Pos="))
        .and_then(|p| p.split(',').next())
        .and_then(|x| x.parse().ok())
        .expect("a position");
    assert!(
        x >= size.0 as f32 - 420.0,
        "docked at the right, not at {x}: {layout}"
    );
    assert_eq!(
        std::fs::read_to_string(config.join("imgui.ini")).unwrap(),
        old
    );

    std::fs::write(
        config.join("editor.json"),
        r#"{"window": [1000, 640], "brush": {"type": "ramp", "radius": 77, "strength": 0.5}}"#,
    )
    .unwrap();
    let (size, second) = run("second.png");
    assert_eq!(size, (1000, 640));
    assert_eq!(second["brush"]["type"], "ramp");
    assert_eq!(second["brush"]["radius"], 77.0);

    std::fs::write(config.join("editor.json"), "{ broken").unwrap();
    let (_, third) = run("third.png");
    assert_eq!(
        third["brush"]["type"], "noise",
        "defaults after a broken file"
    );
}

/// Tests that drive an editor by keys and clicks run one at a time: with several editors on
/// lavapipe at once a frame can take seconds, and imgui takes about a key a frame, so typed
/// names lost keys under the full suite's load (seen: a stamp's name, then no stroke in 300 s).
fn one_driven_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static DRIVEN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    DRIVEN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `xdotool` on the test's display. A connection refused while the server is busy (seen
/// once in CI right after an editor closed, "Can't open display") is tried again, up to 10 s.
fn xdotool(x: &Xvfb, args: &[&str]) -> String {
    let run = || {
        Command::new("xdotool")
            .env("DISPLAY", &x.display)
            .args(args)
            .output()
            .expect("xdotool (installed by .ci/setup)")
    };
    let mut out = run();
    for _ in 0..20 {
        if out.status.success() || !String::from_utf8_lossy(&out.stderr).contains("open display") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
        out = run();
    }
    assert!(
        out.status.success(),
        "xdotool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The editor on `journal`, running in `dir` (where its file browser opens) with its state in
/// `state`, its window found and focused: the child and the window's id.
fn driven_editor(x: &Xvfb, state: &Path, journal: &Path, dir: &Path) -> (Child, String) {
    let started = spawn_windowed(x, state, journal, dir, &[]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    started
}

/// The editor on `file` with `more` arguments, running in `dir` with its state in `state`, its
/// window found (looked for until it shows, or the editor ends) and focused.
fn spawn_windowed(
    x: &Xvfb,
    state: &Path,
    file: &Path,
    dir: &Path,
    more: &[&std::ffi::OsStr],
) -> (Child, String) {
    let mut child = editor(x, state)
        .arg(file)
        .args(more)
        .current_dir(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let window = loop {
        if let Some(status) = child.try_wait().unwrap() {
            ended(&mut child, status, "its window");
        }
        let found = Command::new("xdotool")
            .env("DISPLAY", &x.display)
            .args(["search", "--name", "Scarp"])
            .output()
            .expect("xdotool (installed by .ci/setup)");
        if let Some(w) = String::from_utf8_lossy(&found.stdout).lines().next() {
            break w.to_string();
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    xdotool(x, &["windowfocus", "--sync", &window]);
    (child, window)
}

/// [`driven_editor`] writing its interface state to `dir`/`name` (`--ui-state`), driven by
/// what it shows.
fn probed_editor<'a>(
    x: &'a Xvfb,
    state: &Path,
    file: &Path,
    dir: &Path,
    name: &str,
) -> ui_driver::Driver<'a> {
    let probe = dir.join(name);
    let more = [std::ffi::OsStr::new("--ui-state"), probe.as_os_str()];
    let (child, window) = spawn_windowed(x, state, file, dir, &more);
    ui_driver::Driver::new(x, child, window, &probe)
}

/// A journal of a new flat `side`² document, written into `dir`.
fn flat_journal(dir: &Path, side: u32) -> std::path::PathBuf {
    let start = dir.join("flat.json");
    let doc = format!(
        r#"{{"version": 2, "document": {{"width": {side}, "height": {side}, "page_size": 256}},
            "steps": []}}"#
    );
    std::fs::write(&start, doc).unwrap();
    start
}

/// [`driven_editor`] on a new flat `side`² document (a journal written into `dir`).
fn driven_on_flat(x: &Xvfb, state: &Path, dir: &Path, side: u32) -> (Child, String) {
    let start = flat_journal(dir, side);
    driven_editor(x, state, &start, dir)
}

/// Waits (up to 300 s) for `path` to exist with a size no longer changing.
fn wait_for_file(child: &mut std::process::Child, path: &Path) {
    let start = std::time::Instant::now();
    let mut last = None;
    loop {
        let len = std::fs::metadata(path).ok().map(|m| m.len());
        if len.is_some() && len == last {
            return;
        }
        last = len;
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the editor ended ({status}) before writing {}",
                path.display()
            );
        }
        assert!(
            start.elapsed().as_secs() < 300,
            "no {} after 300 s",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Driven by keys and the mouse as a person would: Ctrl+T opens the file browser, a stamp of
/// the library is typed and taken, a click stamps it, Ctrl+E exports the heights. The untitled
/// journal names the stamp's file, and replaying it gives the exported heights bit for bit.
#[test]
fn the_file_browser_opens_a_stamp_and_exports_the_stamped_heights() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let flat = flat_journal(dir.path(), 512);
    let mut e = probed_editor(&x, &state, &flat, dir.path(), "ui.jsonl");
    // The stamp browser opens in the library.
    e.key("ctrl+t");
    e.wait("the stamp browser", |v| v["browser"] == "Open a stamp");
    e.type_text("crater.png");
    e.key("Return");
    e.wait("the crater stamp", |v| {
        v["browser"].is_null() && v["brush"] == "stamp"
    });
    // One stamp in the middle of the view (the document, framed): a press held two frames.
    let geometry = xdotool(&x, &["getwindowgeometry", "--shell", e.window()]);
    let field = |k: &str| -> i32 {
        geometry
            .lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('=')?.parse().ok())
            .unwrap()
    };
    e.point(field("WIDTH") / 2 + 60, field("HEIGHT") / 2 + 40);
    e.press();
    e.frames(2);
    e.release();
    let folder = state.join("scarp");
    let stroked = |j: &scarp::journal::JournalFile| j.stroke_count() >= 1;
    let journaled = wait_for_journal(&mut e.child, &folder, stroked);
    let text = std::fs::read_to_string(&journaled).unwrap();
    assert!(text.contains("\"type\": \"stamp\""), "{text}");
    assert!(text.contains("crater.png"), "{text}");

    let exported = e.export_heights(dir.path(), "exported.r32");
    e.child.kill().unwrap();
    e.child.wait().unwrap();

    let got = std::fs::read(&exported).unwrap();
    assert_eq!(got.len(), 512 * 512 * 4);
    let want = applied(&journaled, &dir.path().join("want.r32"));
    assert!(got == want, "the exported heights are not the journal's");
    // And the stamp is there: the crater's rim rises above the flat ground.
    let peak = got
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .fold(0.0f32, f32::max);
    assert!(
        peak > 0.005,
        "no stamp in the exported heights (peak {peak})"
    );
}

/// A key released while a file browser has the keyboard is let go: Ctrl+S held over the terrain
/// opens the save browser, S comes up while the browser has the keyboard, and after Escape the
/// camera stays where it was (S used to count as held, and the camera travelled on).
#[test]
fn a_key_released_while_a_browser_has_the_keyboard_does_not_keep_moving_the_camera() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let flat = flat_journal(dir.path(), 512);
    let mut e = probed_editor(&x, &state, &flat, dir.path(), "ui.jsonl");
    e.frames(2);
    let start = e.latest()["camera_target"].clone();
    assert!(start.is_array(), "{start}");
    xdotool(&x, &["keydown", "ctrl+s"]);
    e.wait("the save browser", |v| v["browser"] == "Save the project");
    e.frames(2);
    xdotool(&x, &["keyup", "ctrl+s"]);
    e.frames(2);
    e.key("Escape");
    e.wait("the browser closed", |v| v["browser"].is_null());
    e.frames(20);
    let end = e.latest()["camera_target"].clone();
    e.child.kill().unwrap();
    e.child.wait().unwrap();
    assert_eq!(start, end, "the camera moved after the browser closed");
}

/// The path tool driven as a person would: P, clicks on the terrain place three control points,
/// Enter carves; the untitled journal holds one path step with those points, and replaying it
/// gives the exported heights bit for bit, lower along the path and nowhere higher.
#[test]
fn the_path_tool_places_points_by_clicks_and_carves_one_journaled_step() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let start = dir.path().join("hill.json");
    std::fs::write(
        &start,
        r#"{"version": 2, "document": {"width": 512, "height": 512, "page_size": 256},
            "steps": [{"stroke": {"brush": {"type": "raise", "radius": 240, "strength": 0.2,
                        "falloff": "smooth"},
                      "samples": [{"x": 256, "y": 256, "pressure": 1.0, "t": 0.0}]}}]}"#,
    )
    .unwrap();
    let mut e = probed_editor(&x, &state, &start, dir.path(), "ui.jsonl");
    e.key("p");
    e.wait("the path tool", |v| v["path_tool"] == true);
    // Three points across the middle of the view (the framed document), clear of the panels.
    for (n, (px, py)) in [(520, 470), (700, 560), (880, 480)].into_iter().enumerate() {
        e.click(px, py);
        e.wait(&format!("path point {}", n + 1), |v| {
            v["path_points"] == n + 1
        });
    }
    e.key("Return");
    let folder = state.join("scarp");
    let has_path = |j: &scarp::journal::JournalFile| {
        j.steps
            .iter()
            .any(|s| matches!(s, scarp::journal::StepEntry::Path(_)))
    };
    let journaled = wait_for_journal(&mut e.child, &folder, has_path);
    let text = std::fs::read_to_string(&journaled).unwrap();
    let file: scarp::journal::JournalFile = serde_json::from_str(&text).unwrap();
    let paths: Vec<_> = file
        .steps
        .iter()
        .filter_map(|s| match s {
            scarp::journal::StepEntry::Path(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(paths.len(), 1, "{text}");
    assert_eq!(paths[0].points.len(), 3, "{text}");
    assert_eq!(paths[0].mode.as_deref(), Some("carve"));

    let exported = e.export_heights(dir.path(), "exported.r32");
    e.child.kill().unwrap();
    e.child.wait().unwrap();

    let floats = |b: Vec<u8>| -> Vec<f32> {
        b.chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let got = floats(std::fs::read(&exported).unwrap());
    let want = floats(applied(&journaled, &dir.path().join("want.r32")));
    assert!(got == want, "the exported heights are not the journal's");
    let before = floats(applied(&start, &dir.path().join("before.r32")));
    let lower = got.iter().zip(&before).filter(|(a, b)| a < b).count();
    let higher = got.iter().zip(&before).filter(|(a, b)| a > b).count();
    assert!(lower > 1000, "the path carved {lower} texels");
    assert_eq!(higher, 0, "carving raised {higher} texels");
}

/// XInput2 on a real X server (Xvfb): the connection opens, the devices are listed, none has a
/// pressure valuator (Xvfb has only its core pointer and keyboard), and no pen means no
/// pressure (a mouse paints at 1.0).
#[test]
fn xinput2_lists_the_devices_of_an_x_server_and_finds_no_pen_on_xvfb() {
    let x = Xvfb::start();
    let mut reader = scarp::editor::pen::PenReader::open(Some(&x.display), 0)
        .expect("XInput2 on Xvfb (libXi, installed with Xvfb)");
    assert!(reader.devices.is_empty(), "{:?}", reader.devices);
    assert_eq!(reader.poll(), None);
    let missing = scarp::editor::pen::PenReader::open(Some(":9999"), 0);
    assert!(missing.is_err());
}

/// At 1280x720 and at 1920x1080 every label and line of text in the panels fits: the editor
/// measures each panel (items past its right edge, the panel past the window) and says so with
/// its screenshot.
#[test]
fn every_panel_fits_at_1280x720_and_1920x1080() {
    let x = Xvfb::start_sized("2000x1200x24");
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    for (w, h) in [(1280, 720), (1920, 1080)] {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("scarp");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("editor.json"),
            format!(r#"{{"window": [{w}, {h}]}}"#),
        )
        .unwrap();
        let shot = dir.path().join("panels.png");
        let out = editor(&x, dir.path())
            .arg(demo)
            .arg("--screenshot")
            .arg(&shot)
            .arg("--quit")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(image::image_dimensions(&shot).unwrap(), (w, h));
        assert!(
            stdout.contains("panels: all text fits"),
            "{w}x{h}: {stdout}"
        );
    }
}

/// Waits (up to 120 s) for the editor to end; its status.
fn wait_for_exit(child: &mut Child) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed().as_secs() < 120, "the editor did not close");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Closing asks first when steps are not saved: Ctrl+Q with a step made shows the close panel
/// and the editor goes on; Esc answers "cancel"; Ctrl+Q twice closes without saving, and the
/// untitled journal goes with the steps. With nothing unsaved, Ctrl+Q closes at once.
#[test]
fn closing_with_unsaved_steps_asks_first() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let start = dir.path().join("flat.json");
    std::fs::write(
        &start,
        r#"{"version": 2, "document": {"width": 256, "height": 256, "page_size": 128},
            "steps": []}"#,
    )
    .unwrap();
    let state = dir.path().join("state-saved");
    let (mut child, _) = driven_editor(&x, &state, &start, dir.path());
    xdotool(&x, &["key", "ctrl+q"]);
    assert!(
        wait_for_exit(&mut child).success(),
        "nothing unsaved: closed"
    );

    let state = dir.path().join("state-unsaved");
    let mut e = probed_editor(&x, &state, &start, dir.path(), "ui.jsonl");
    e.key("ctrl+shift+n");
    let has_layer = |j: &scarp::journal::JournalFile| {
        j.steps
            .iter()
            .any(|s| matches!(s, scarp::journal::StepEntry::Layer(_)))
    };
    let journal = wait_for_journal(&mut e.child, &state.join("scarp"), has_layer);
    // Ctrl+Q with a step unsaved: the close panel asks (a frame that shows it comes, so the
    // editor did not close unasked); Esc cancels, and the editor goes on.
    e.key("ctrl+q");
    e.wait("the close panel", |v| v["closing"] == true);
    e.key("Escape");
    e.wait("the close panel cancelled", |v| v["closing"] == false);
    e.frames(2);
    e.key("ctrl+q");
    e.wait("the close panel again", |v| v["closing"] == true);
    xdotool(&x, &["key", "ctrl+q"]);
    assert!(
        wait_for_exit(&mut e.child).success(),
        "Ctrl+Q twice: closed"
    );
    assert!(
        !journal.exists(),
        "discarded steps leave no untitled journal"
    );
}

/// Ctrl+Shift+N (a layer step, waited for in `project`'s recovery journal so the save has
/// something to write), Ctrl+S (waited for: the file no longer holds `before`), then Ctrl+Q.
fn add_a_layer_save_and_quit(x: &Xvfb, child: &mut Child, project: &Path, before: &[u8]) {
    xdotool(x, &["key", "ctrl+shift+n"]);
    let recovery = scarp::project::recovery_path(project);
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&recovery).is_ok_and(|t| t.contains(r#""layer""#)) {
        assert!(child.try_wait().unwrap().is_none(), "the editor ended");
        assert!(start.elapsed().as_secs() < 300, "no layer step");
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    xdotool(x, &["key", "ctrl+s"]);
    while std::fs::read(project).unwrap() == before {
        assert!(child.try_wait().unwrap().is_none(), "the editor ended");
        assert!(start.elapsed().as_secs() < 300, "not saved");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    xdotool(x, &["key", "ctrl+q"]);
    assert!(wait_for_exit(child).success());
}

/// A project whose newest save is damaged is asked about, not refused or rolled back
/// silently: the editor starts (on the default terrain) with the question; Enter opens the
/// older save, and a save then writes over the damaged one.
#[test]
fn a_damaged_newest_save_is_asked_about_and_the_older_save_opens() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let raise = |name: &str, x: f32| {
        std::fs::write(
            d.join(name),
            format!(
                r#"{{"version": 1, "document": {{"width": 256, "height": 256, "page_size": 128}},
                    "steps": [{{"stroke": {{"brush": {{"type": "raise", "radius": 30}},
                    "samples": [{{"x": {x}, "y": 100, "pressure": 1.0, "t": 0.0}}]}}}}]}}"#
            ),
        )
        .unwrap();
        p(name)
    };
    let (a, b) = (raise("a.json", 60.0), raise("b.json", 180.0));
    common::scarp_ok(&["apply", "--journal", &a, "--out", &p("s.scarp")]);
    common::scarp_ok(&["convert", &p("s.scarp"), &p("first.r32")]);
    let onto = ["--onto", &p("s.scarp"), "--out", &p("s.scarp")];
    common::scarp_ok(&[&["apply", "--journal", &b][..], &onto].concat());
    let mut bytes = std::fs::read(p("s.scarp")).unwrap();
    bytes[72] ^= 0x01; // the second save's superblock
    std::fs::write(p("s.scarp"), &bytes).unwrap();

    let state = d.join("state");
    let (mut child, _) = driven_editor(&x, &state, &d.join("s.scarp"), d);
    std::thread::sleep(std::time::Duration::from_secs(3));
    if let Some(status) = child.try_wait().unwrap() {
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        panic!("the editor ended ({status}) on a damaged save instead of asking: {err}");
    }
    assert_eq!(
        std::fs::read(p("s.scarp")).unwrap(),
        bytes,
        "asking changed the file"
    );
    // Enter: the older save opens, and the session takes the project's write lock.
    let lock = d.join(".s.scarp.lock");
    let start = std::time::Instant::now();
    while !lock.exists() {
        assert!(child.try_wait().unwrap().is_none(), "the editor ended");
        assert!(
            start.elapsed().as_secs() < 300,
            "the older save was not opened"
        );
        xdotool(&x, &["key", "Return"]);
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    // A layer step, Ctrl+S: saved into the file over the damage.
    add_a_layer_save_and_quit(&x, &mut child, &d.join("s.scarp"), &bytes);
    // The file opens without --accept-older: the first save's heights and the new layer.
    common::scarp_ok(&["convert", &p("s.scarp"), "--base", &p("base.r32")]);
    assert!(std::fs::read(p("base.r32")).unwrap() == std::fs::read(p("first.r32")).unwrap());
    let layers = common::scarp_ok(&["layers", &p("s.scarp")]);
    assert!(
        String::from_utf8_lossy(&layers.stdout).contains("Layer 1"),
        "{}",
        String::from_utf8_lossy(&layers.stdout)
    );
}

/// The view stays with the project: switched to the fly camera (Tab) and saved (Ctrl+S), the
/// project holds it; reopened, the editor flies again, so its next save holds it still.
#[test]
fn the_view_is_saved_with_the_project_and_reopens() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let journal = d.join("flat.json");
    std::fs::write(
        &journal,
        r#"{"version": 2, "document": {"width": 256, "height": 256, "page_size": 128},
            "steps": []}"#,
    )
    .unwrap();
    let project = d.join("v.scarp");
    common::scarp_ok(&[
        "apply",
        "--journal",
        journal.to_str().unwrap(),
        "--out",
        project.to_str().unwrap(),
    ]);
    let view = || scarp::project::open(&project).unwrap().meta().view;
    assert_eq!(view(), None, "apply writes no view");
    let save =
        |child: &mut Child, before: &[u8]| add_a_layer_save_and_quit(&x, child, &project, before);
    let state = d.join("state");
    let (mut child, _) = driven_editor(&x, &state, &project, d);
    xdotool(&x, &["key", "Tab"]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    xdotool(&x, &["key", "m"]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    save(&mut child, &std::fs::read(&project).unwrap());
    let first = view().expect("the editor saved its view");
    assert!(first.camera.fly, "the fly camera was saved");
    assert!(first.map_view, "the map view was saved");
    assert!(first.sun.is_some() && first.look.is_some());
    // Reopened: the saved view is the editor's again (no Tab this time).
    let (mut child, _) = driven_editor(&x, &state, &project, d);
    save(&mut child, &std::fs::read(&project).unwrap());
    let second = view().expect("saved again");
    assert!(
        second.camera.fly,
        "the reopened editor took the saved camera"
    );
    assert!(second.map_view, "the reopened editor is in the map view");
    assert_eq!(second.sun, first.sun);
    assert_eq!(second.altitude_range, first.altitude_range);
}

/// A drag of about 2 s on lavapipe, whose terrain frames take a second or more: every motion
/// event becomes a sample of the stroke (issue 36 item 4: samples were taken once a frame, so a
/// drag gave two or three), in order along the drag. The samples are the same whatever the frame
/// rate: `stroke_input`'s unit test replays one drag at 60 and at 1 frame a second.
#[test]
fn a_drag_paints_one_sample_per_motion_event_while_frames_are_slow() {
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (mut child, window) = driven_on_flat(&x, &state, dir.path(), 1024);
    std::thread::sleep(std::time::Duration::from_secs(3));
    let moves = 20;
    xdotool(&x, &["mousemove", "--window", &window, "600", "450"]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    xdotool(&x, &["mousedown", "1"]);
    for i in 1..=moves {
        let (px, py) = ((600 + 12 * i).to_string(), (450 + 4 * i).to_string());
        xdotool(&x, &["mousemove", "--window", &window, &px, &py]);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    xdotool(&x, &["mouseup", "1"]);
    let folder = state.join("scarp");
    let journaled = wait_for_journal(&mut child, &folder, |j| j.stroke_count() == 1);
    child.kill().unwrap();
    child.wait().unwrap();
    let j = scarp::journal::Journal::load(&journaled).unwrap();
    let samples = j
        .steps
        .iter()
        .find_map(|s| match s {
            scarp::journal::Step::Stroke { samples, .. } => Some(samples.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        samples.len(),
        moves + 1,
        "the press and each move: {samples:?}"
    );
    for w in samples.windows(2) {
        assert!(w[1].t >= w[0].t, "times in order: {samples:?}");
        let (dx, dy) = (w[1].x - w[0].x, w[1].y - w[0].y);
        assert!(
            dx.hypot(dy) > 1.0,
            "each move a step along the drag: {samples:?}"
        );
    }
    let (a, b) = (samples[0], samples[moves]);
    assert!(
        (b.x - a.x).hypot(b.y - a.y) > 20.0 * 2.0,
        "the stroke spans the drag: {samples:?}"
    );
}

/// Issue 36's whole job, driven by keys and the mouse on a 1440x900 window as an artist would:
/// sculpt a stroke, erode a dragged region live and finish it, lay a river with water (P, the
/// water slider, three clicks, Enter), stamp the crater (Ctrl+T), add the first layer and mask
/// it with the mask brush (chosen in the brush combo), turn the sea on (the View panel), save
/// (Ctrl+S), quit (Ctrl+Q), reopen and export a PNG (Ctrl+E). No crash, every step journaled,
/// the project holds them all (its composite is what `scarp apply` makes of the journal), the
/// view comes back, and the export is `scarp convert`'s, with its height range beside it.
/// Coordinates are the default layout's (help shown at first start, the right column's panels
/// collapsed): a change of layout moves them. Each action waits for the frames that saw it and
/// for what it should show (`--ui-state`, [`ui_driver`]), so a loaded machine only slows it.
#[test]
fn a_whole_terrain_job_in_the_editor_loses_nothing() {
    use scarp::journal::{JournalFile, StepEntry};
    let _one = one_driven_at_a_time();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let start = d.join("hill.json");
    std::fs::write(
        &start,
        r#"{"version": 2, "document": {"width": 512, "height": 512, "page_size": 256},
            "steps": [{"stroke": {"brush": {"type": "raise", "radius": 240, "strength": 0.2,
                        "falloff": "smooth"},
                      "samples": [{"x": 256, "y": 256, "pressure": 1.0, "t": 0.0}]}}]}"#,
    )
    .unwrap();
    let state = d.join("state");
    let folder = state.join("scarp");
    let mut e = probed_editor(&x, &state, &start, d, "ui-1.jsonl");
    let last_is = |j: &JournalFile, f: &dyn Fn(&StepEntry) -> bool| j.steps.last().is_some_and(f);
    let stroke_of = |s: &StepEntry, kind: &str| match s {
        StepEntry::Stroke(e) => serde_json::to_string(e)
            .unwrap()
            .contains(&format!(r#""type":"{kind}""#)),
        _ => false,
    };
    let steps = |v: &serde_json::Value| v["steps"].as_u64().unwrap();

    // The help's close box; a sculpting stroke (the noise brush).
    e.click(728, 39);
    e.wait("the help closed", |v| v["help"] == false);
    e.drag((600, 650), (800, 700));
    wait_for_journal(&mut e.child, &folder, |j| j.steps.len() == 2);
    // Erosion: open the panel, "drag a rectangle", drag it, "run", "finish now".
    e.click(1040, 327);
    e.wait("the Erosion panel", |v| v["panel"] == "Erosion");
    e.click(1211, 394);
    e.wait("the region tool", |v| v["erosion_picking"] == true);
    e.drag((480, 420), (720, 640));
    e.wait("a region", |v| v["erosion_region"][2].as_i64().unwrap() > 0);
    e.click(1052, 710);
    e.wait("the run", |v| v["erosion_running"] == true);
    // Finished now, unless the run already ended by itself (a fast machine).
    if e.latest()["erosion_running"] == true {
        e.click(1128, 734);
    }
    wait_for_journal(&mut e.child, &folder, |j| {
        last_is(j, &|s| matches!(s, StepEntry::Erode(_)))
    });
    // The river: P opens the Path panel; the water slider's middle (half the depth); three
    // points down the hill's flank; Enter carves.
    e.key("p");
    e.wait("the path tool", |v| {
        v["panel"] == "Path" && v["path_tool"] == true
    });
    e.click(1144, 540);
    e.wait("water in the river", |v| {
        v["path_water"].as_f64().unwrap() > 0.0
    });
    for (n, (px, py)) in [(660, 530), (560, 620), (470, 720)].into_iter().enumerate() {
        e.click(px, py);
        e.wait(&format!("path point {}", n + 1), |v| {
            v["path_points"] == n + 1
        });
    }
    e.key("Return");
    let carved = |j: &JournalFile| last_is(j, &|s| matches!(s, StepEntry::Path(_)));
    let j = wait_for_journal(&mut e.child, &folder, carved);
    let text = std::fs::read_to_string(&j).unwrap();
    assert!(text.contains(r#""water""#), "a river without water: {text}");
    // The crater: Ctrl+T, its name, Enter (the path tool gives the clicks back), a press.
    e.key("ctrl+t");
    e.wait("the stamp browser", |v| v["browser"] == "Open a stamp");
    e.type_text("crater.png");
    e.key("Return");
    e.wait("the crater stamp", |v| {
        v["browser"].is_null() && v["brush"] == "stamp" && v["path_tool"] == false
    });
    let before = steps(&e.latest());
    e.point(800, 760);
    e.press();
    e.frames(2);
    e.release();
    e.wait("the stamp's step", |v| steps(v) > before);
    let stamped = |j: &JournalFile| last_is(j, &|s| stroke_of(s, "stamp"));
    wait_for_journal(&mut e.child, &folder, stamped);
    // The first layer, then the mask brush from the type combo, a stroke masks it.
    e.key("ctrl+shift+n");
    e.wait("the first layer", |v| v["layers"] == 1);
    wait_for_journal(&mut e.child, &folder, |j| {
        last_is(j, &|s| matches!(s, StepEntry::Layer(_)))
    });
    e.click(98, 66);
    e.wheel_down(60, 150, 6);
    e.click(36, 175);
    e.wait("the mask brush", |v| v["brush"] == "mask");
    let before = steps(&e.latest());
    e.drag((700, 720), (850, 640));
    e.wait("the mask stroke's step", |v| steps(v) > before);
    let masked = |j: &JournalFile| last_is(j, &|s| stroke_of(s, "mask"));
    let journal = wait_for_journal(&mut e.child, &folder, masked);
    // The sea: the View panel scrolled to its checkbox.
    e.wheel_down(150, 760, 8);
    e.click(26, 751);
    e.wait("the sea", |v| v["sea"] == true);
    let text = std::fs::read_to_string(&journal).unwrap();
    let kept = d.join("job.json");
    std::fs::write(&kept, &text).unwrap();
    // Saved as job.scarp (the browser opens in the working folder), then closed.
    e.key("ctrl+s");
    e.wait("the save browser", |v| v["browser"] == "Save the project");
    e.key("ctrl+a");
    e.type_text("job.scarp");
    e.key("Return");
    let project = d.join("job.scarp");
    wait_for_file(&mut e.child, &project);
    e.wait("the browser closed", |v| v["browser"].is_null());
    xdotool(&x, &["key", "ctrl+q"]);
    assert!(
        wait_for_exit(&mut e.child).success(),
        "the editor did not close"
    );
    let view = scarp::project::open(&project).unwrap().meta().view;
    let view = view.expect("the project holds the view");
    assert!(view.sea_level.is_some(), "the sea was not saved on");

    // Every step is in the project: its composite is the journal's.
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    common::scarp_ok(&["convert", &p("job.scarp"), &p("project.r32")]);
    let want = applied(&kept, &d.join("journal.r32"));
    assert!(
        std::fs::read(d.join("project.r32")).unwrap() == want,
        "the project lost a step of {text}"
    );
    // And the river's water: the project's rivers field is the journal's.
    let gpu = common::gpu();
    let tables = scarp::noise::NoiseTables::new(scarp::noise::DEFAULT_TABLE_SEED);
    let whole = scarp::pages::geometry::Region::whole(512, 512).rect();
    let (journal, mut replayed) = scarp::session::open_journal(&gpu, &kept, &tables).unwrap();
    let mut tools = scarp::edit::Tools::default();
    journal
        .replay(
            &mut scarp::edit::Target::new(&mut replayed, &mut tools),
            |_, _| {},
        )
        .unwrap();
    let (mut opened, _, _) = scarp::session::open_project_file(&gpu, &project, &tables).unwrap();
    let water = replayed
        .rivers_rect(whole)
        .unwrap()
        .expect("the river holds water");
    assert!(
        opened.rivers_rect(whole).unwrap() == Some(water),
        "the project lost the river's water"
    );

    // Reopened: the saved view, and a PNG export with its range, as `scarp convert` writes.
    let mut e = probed_editor(&x, &state, &project, d, "ui-2.jsonl");
    let exported = e.export_heights(d, "job.png");
    common::scarp_ok(&["convert", &p("job.scarp"), &p("convert.png")]);
    // A step and a save: the reopened editor saves the view it took.
    let before = std::fs::read(&project).unwrap();
    add_a_layer_save_and_quit(&x, &mut e.child, &project, &before);
    let again = scarp::project::open(&project).unwrap().meta().view.unwrap();
    assert_eq!(again.camera, view.camera, "the view did not come back");
    assert_eq!(again.sea_level, view.sea_level, "the sea did not come back");
    assert!(
        std::fs::read(&exported).unwrap() == std::fs::read(d.join("convert.png")).unwrap(),
        "the editor's export is not `scarp convert`'s"
    );
    let sidecar = std::fs::read_to_string(d.join("job.png.json")).unwrap();
    assert!(sidecar.contains("\"heights\""), "{sidecar}");
}
