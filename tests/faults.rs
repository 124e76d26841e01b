//! Fault injection (issue 35): what a hostile file system, a crash, a second writer or an
//! absurd parameter does to `scarp`. Each case asserts a one-line error (or a refusal naming
//! the other writer), at once, and that nothing on disk changed. Small and fast: it runs in
//! `bash .ci/test` with the rest. docs/reliability.md lists every promise and its test.
//! GPU runs use SCARP_VALIDATION=1: the CLI then fails on any validation message.

mod common;

use common::{scarp, scarp_ok, stderr};
use std::path::Path;
use std::process::Output;

/// Runs `scarp args` in `dir`, failing the test if it runs past 60 s (a hang).
fn scarp_within_a_minute(dir: &Path, args: &[&str]) -> Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_scarp"))
        .env("SCARP_VALIDATION", "1")
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() > 60 {
            child.kill().unwrap();
            panic!("scarp {args:?} hung (killed after 60 s)");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A FIFO wherever a file is read — a height file, a render's heights, a journal, a journal's
/// initial file, a stamp, a tile of a tile set — is one line naming it, at once, and nothing is
/// written (opening a FIFO for reading waited for a writer forever before).
#[test]
fn a_pipe_where_a_file_is_read_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = |name: &str| {
        let p = std::ffi::CString::new(d.join(name).to_str().unwrap()).unwrap();
        assert_eq!(
            unsafe { libc::mkfifo(p.as_ptr(), 0o600) },
            0,
            "mkfifo {name}"
        );
    };
    for name in ["f.r32", "j.json", "t_x1_y0.r32"] {
        fifo(name);
    }
    std::fs::write(d.join("t_x0_y0.r32"), vec![0u8; 4 * 9]).unwrap();
    std::fs::write(
        d.join("initial.json"),
        r#"{"version": 1, "document": {"width": 3, "height": 3, "initial": {"file": "f.r32"}}}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("stamp.json"),
        r#"{"version": 1, "document": {"width": 64, "height": 64},
            "steps": [{"stroke": {"brush": {"type": "stamp", "radius": 10, "stamp": "f.r32",
                        "stamp_size": [3, 3]},
                      "samples": [{"x": 30, "y": 30, "pressure": 1.0, "t": 0.0}]}}]}"#,
    )
    .unwrap();
    let cases: [&[&str]; 6] = [
        &["convert", "f.r32", "o.r32", "--size", "3x3"],
        &[
            "render",
            "--heights",
            "f.r32",
            "--size",
            "3x3",
            "--out",
            "o.png",
        ],
        &["apply", "--journal", "j.json", "--out", "o.r32"],
        &["apply", "--journal", "initial.json", "--out", "o.r32"],
        &["apply", "--journal", "stamp.json", "--out", "o.r32"],
        &[
            "convert",
            "t_x{i}_y{j}.r32",
            "o.r32",
            "--tiles",
            "2x1",
            "--size",
            "3x3",
        ],
    ];
    for args in cases {
        let out = scarp_within_a_minute(d, args);
        let e = common::stderr(&out);
        assert!(!out.status.success(), "{args:?}");
        assert!(e.contains("not a regular file"), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
        assert!(
            !d.join("o.r32").exists() && !d.join("o.png").exists(),
            "{args:?}"
        );
    }
}

/// Writes `name` in `dir`: a journal of one raise dab at (`x`, 100) on a 256² document; its path.
fn raise_journal(dir: &Path, name: &str, x: f32) -> String {
    std::fs::write(
        dir.join(name),
        format!(
            r#"{{"version": 1, "document": {{"width": 256, "height": 256, "page_size": 128}},
                "steps": [{{"stroke": {{"brush": {{"type": "raise", "radius": 30}},
                "samples": [{{"x": {x}, "y": 100, "pressure": 1.0, "t": 0.0}}]}}}}]}}"#
        ),
    )
    .unwrap();
    dir.join(name).to_str().unwrap().to_string()
}

/// One writer per project: while another process holds a project's write lock (here this test,
/// as the editor holds it for a session), `scarp apply --onto P --out P` and `scarp convert … P`
/// are refused in one line naming the holder, and the project is left as it was; once the lock
/// is let go the same command paints onto it.
#[test]
fn a_second_writer_of_a_project_is_refused_and_changes_nothing() {
    use scarp::project::lock::ProjectLock;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (
        raise_journal(d, "a.json", 60.0),
        raise_journal(d, "b.json", 180.0),
    );
    let s = d.join("s.scarp").to_str().unwrap().to_string();
    scarp_ok(&["apply", "--journal", &a, "--out", &s]);
    let before = std::fs::read(&s).unwrap();

    let h = d.join("h.r32").to_str().unwrap().to_string();
    scarp_ok(&["apply", "--journal", &b, "--out", &h]);
    let held = ProjectLock::acquire(Path::new(&s), "the test").unwrap();
    let holder = format!("open for writing by the test (pid {})", std::process::id());
    for args in [
        vec!["apply", "--journal", &b, "--onto", &s, "--out", &s],
        vec!["convert", &h, &s],
    ] {
        let out = scarp(&args);
        let e = common::stderr(&out);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            e.contains("s.scarp") && e.contains(&holder),
            "{args:?}: {e}"
        );
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(
            std::fs::read(&s).unwrap() == before,
            "{args:?} changed the project"
        );
    }
    drop(held);
    scarp_ok(&["apply", "--journal", &b, "--onto", &s, "--out", &s]);
    assert!(std::fs::read(&s).unwrap() != before);
}

/// A project whose newest save is damaged — its superblock altered, or the file's tail cut off —
/// is refused by name instead of opening silently at the save before it; `--accept-older` opens
/// that older save (saying so), which holds exactly the first save's heights.
#[test]
fn a_damaged_newest_save_is_named_instead_of_silently_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let (a, b) = (
        raise_journal(d, "a.json", 60.0),
        raise_journal(d, "b.json", 180.0),
    );
    scarp_ok(&["apply", "--journal", &a, "--out", &p("s.scarp")]);
    scarp_ok(&["convert", &p("s.scarp"), &p("first.r32")]);
    scarp_ok(&[
        "apply",
        "--journal",
        &b,
        "--onto",
        &p("s.scarp"),
        "--out",
        &p("s.scarp"),
    ]);
    let good = std::fs::read(p("s.scarp")).unwrap();
    let mut altered = good.clone();
    altered[72] ^= 0x01; // the second save's superblock (slot 1, at 64)
    let truncated = good[..good.len() - 10].to_vec();
    for (bytes, what) in [(altered, "damaged"), (truncated, "truncated")] {
        std::fs::write(p("bad.scarp"), &bytes).unwrap();
        let out = scarp(&["convert", &p("bad.scarp"), &p("o.r32")]);
        let e = common::stderr(&out);
        assert!(!out.status.success(), "{what}");
        assert!(
            e.contains("bad.scarp") && e.contains("newest save") && e.contains(what),
            "{e}"
        );
        assert!(e.contains("--accept-older"), "{e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        // The editor asks about this refusal, and only this one.
        let refusal = scarp::project::open(Path::new(&p("bad.scarp")))
            .err()
            .unwrap();
        let offer = scarp::project::older_save_offer(&refusal);
        assert!(
            offer.is_some_and(|o| o.contains("the older save #1")),
            "{what}"
        );
        assert!(!d.join("o.r32").exists());
        let out = scarp_ok(&["convert", &p("bad.scarp"), &p("o.r32"), "--accept-older"]);
        assert!(common::stderr(&out).contains("the older save #1"));
        assert!(std::fs::read(p("o.r32")).unwrap() == std::fs::read(p("first.r32")).unwrap());
        std::fs::remove_file(p("o.r32")).unwrap();
    }
    let missing = scarp::project::open(Path::new(&p("gone.scarp")))
        .err()
        .unwrap();
    assert!(scarp::project::older_save_offer(&missing).is_none());
    assert!(scarp::project::open(Path::new(&p("s.scarp"))).is_ok());
    // The intact file opens without a word.
    let out = scarp_ok(&["convert", &p("s.scarp"), &p("o.r32")]);
    assert!(!common::stderr(&out).contains("note"));
}

/// Parameters that would overflow f32 or wreck the terrain are refused in one line naming the
/// parameter and its range, before anything is written: a noise brush of scale 1e38 and a brush
/// of strength 3e38 (they stored NaN in projects), `erode --capacity 1e30` (heights of about 1
/// became 2.3e29).
#[test]
fn parameters_that_overflow_are_refused_naming_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("nan.scarp");
    let out = out.to_str().unwrap();
    let journal = |brush: &str| {
        let path = d.join("j.json");
        std::fs::write(
            &path,
            format!(
                r#"{{"version": 1, "document": {{"width": 128, "height": 128}},
                    "steps": [{{"stroke": {{"brush": {brush},
                    "samples": [{{"x": 60, "y": 60}}, {{"x": 70, "y": 64}}]}}}}]}}"#
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    };
    for (brush, expect) in [
        (
            r#"{"type": "noise", "radius": 30, "scale": 1e38}"#,
            "scale must be between -1000 and 1000",
        ),
        (
            r#"{"type": "raise", "radius": 30, "strength": 3e38}"#,
            "strength must be between -1000000 and 1000000",
        ),
        (
            r#"{"type": "noise", "radius": 30, "gain": 40}"#,
            "gain must be between -4 and 4",
        ),
    ] {
        let o = scarp(&["apply", "--journal", &journal(brush), "--out", out]);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(expect), "{brush}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(!Path::new(out).exists(), "{brush}: a project was written");
    }
    let heights = d.join("h.r32");
    std::fs::write(&heights, vec![0u8; 64 * 64 * 4]).unwrap();
    let eroded = d.join("e.r32");
    let o = scarp(&[
        "erode",
        "--heights",
        heights.to_str().unwrap(),
        "--size",
        "64x64",
        "--capacity",
        "1e30",
        "--out",
        eroded.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("--capacity must be at most 10"),
        "{e}"
    );
    assert!(!eroded.exists());
}
