//! The `scarp` command line as a user runs it: both backends, both formats, and every bad-input
//! case giving a one-line error, a non-zero exit and nothing at the output path.
//! GPU runs use SCARP_VALIDATION=1: the CLI then fails on any validation message.

mod common;

use common::{max_diff, scarp, scarp_ok, stderr};
use std::path::Path;
use std::process::Output;

fn read_r32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn noise(out: &Path, backend: &str, extra: &[&str]) -> Output {
    let out = out.to_str().unwrap();
    let mut args = vec![
        "noise",
        "--kind",
        "erosive",
        "--size",
        "96x64",
        "--seed",
        "-7",
        "--offset",
        "-3.5,2",
        "--backend",
        backend,
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    scarp(&args)
}

#[test]
fn gpu_and_cpu_backends_agree_in_r32() {
    let dir = tempfile::tempdir().unwrap();
    let (g, c) = (dir.path().join("g.r32"), dir.path().join("c.r32"));
    for (path, backend) in [(&g, "gpu"), (&c, "cpu")] {
        let o = noise(
            path,
            backend,
            &["--prewarp-amount", "0.5", "--power", "1.5"],
        );
        assert!(
            o.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("Msamples/s"),
            "{backend} prints throughput: {stdout}"
        );
    }
    let (g, c) = (read_r32(&g), read_r32(&c));
    assert_eq!(g.len(), 96 * 64);
    let diff = max_diff(&g, &c);
    assert!(diff <= 1e-4, "backends differ by {diff}");
    assert!(g.iter().any(|v| *v != g[0]), "output is not constant");
}

#[test]
fn png_output_is_16_bit_gray_of_the_requested_size() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ["gpu", "cpu"] {
        let path = dir.path().join(format!("{backend}.png"));
        let o = noise(&path, backend, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let img = image::open(&path).unwrap();
        assert_eq!(img.color(), image::ColorType::L16);
        assert_eq!((img.width(), img.height()), (96, 64));
        let px = img.into_luma16().into_raw();
        assert_eq!(px.iter().min(), Some(&0), "normalized: min maps to 0");
        assert_eq!(
            px.iter().max(),
            Some(&65535),
            "normalized: max maps to 65535"
        );
    }
}

#[test]
fn bad_input_gives_one_line_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.r32");
    let o = out.to_str().unwrap();
    let jpg = dir.path().join("x.jpg");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["noise", "--kind", "fbm", "--size", "0x10", "--out", o],
            "between 1 and",
        ),
        (
            vec!["noise", "--kind", "fbm", "--size", "10", "--out", o],
            "WIDTHxHEIGHT",
        ),
        (
            vec![
                "noise", "--kind", "fbm", "--size", "8x8", "--gain", "NaN", "--out", o,
            ],
            "--gain",
        ),
        (
            vec![
                "noise", "--kind", "fbm", "--size", "8x8", "--scale", "inf", "--out", o,
            ],
            "--scale",
        ),
        (
            vec![
                "noise",
                "--kind",
                "fbm",
                "--size",
                "8x8",
                "--octaves",
                "33",
                "--out",
                o,
            ],
            "--octaves",
        ),
        (
            vec![
                "noise", "--kind", "fbm", "--size", "8x8", "--offset", "1,NaN", "--out", o,
            ],
            "not finite",
        ),
        (
            vec!["noise", "--kind", "plasma", "--size", "8x8", "--out", o],
            "plasma",
        ),
        (
            vec![
                "noise",
                "--kind",
                "fbm",
                "--size",
                "8x8",
                "--out",
                "/nonexistent-dir/x.r32",
            ],
            "does not exist",
        ),
        (
            vec![
                "noise",
                "--kind",
                "fbm",
                "--size",
                "8x8",
                "--out",
                jpg.to_str().unwrap(),
            ],
            "unknown height file format",
        ),
        (
            vec![
                "noise", "--kind", "fbm", "--size", "8x8", "--power", "0", "--out", o,
            ],
            "--power",
        ),
    ];
    for (args, expect) in cases {
        let res = scarp(&args);
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(!res.status.success(), "{args:?} should fail");
        assert!(
            stderr.contains(expect),
            "{args:?}: error should mention '{expect}', got: {stderr}"
        );
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?} left a file behind"
        );
    }
}

#[test]
fn unwritable_output_fails_before_work_and_keeps_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("keep.r32");
    std::fs::write(&out, b"previous").unwrap();
    // A bad parameter must not touch an existing output.
    let res = scarp(&[
        "noise",
        "--kind",
        "fbm",
        "--size",
        "8x8",
        "--octaves",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!res.status.success());
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    // A folder as output path.
    let res = scarp(&[
        "noise",
        "--kind",
        "fbm",
        "--size",
        "8x8",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!res.status.success());
}

#[test]
fn gallery_writes_every_kind_and_a_contact_sheet() {
    let dir = tempfile::tempdir().unwrap();
    scarp_ok(&[
        "gallery",
        "--out",
        dir.path().to_str().unwrap(),
        "--size",
        "256",
    ]);
    for kind in [
        "perlin", "fbm", "billowy", "ridged", "iq", "swiss", "jordan", "erosive",
    ] {
        let img = image::open(dir.path().join(format!("{kind}.png"))).unwrap();
        assert_eq!((img.width(), img.height()), (256, 256), "{kind}");
    }
    let sheet = image::open(dir.path().join("contact_sheet.png")).unwrap();
    assert!(sheet.width() >= 4 * 256 && sheet.height() >= 2 * 256);
}

#[test]
fn apply_replays_the_demo_journal_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let journal = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let (g, c) = (dir.path().join("g.r32"), dir.path().join("c.r32"));
    for (path, backend) in [(&g, "gpu"), (&c, "cpu")] {
        let o = scarp(&[
            "apply",
            "--journal",
            journal,
            "--out",
            path.to_str().unwrap(),
            "--backend",
            backend,
            "--page-size",
            "128",
        ]);
        assert!(
            o.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("total:"), "{stdout}");
        if backend == "gpu" {
            assert!(
                stdout.contains("passes in"),
                "per-stroke GPU times: {stdout}"
            );
        }
    }
    let (g, c) = (read_r32(&g), read_r32(&c));
    assert_eq!(g.len(), 1024 * 1024);
    let diff = max_diff(&g, &c);
    assert!(diff <= 1e-4, "backends differ by {diff}");
    assert!(g.iter().any(|h| *h > 0.1), "the demo raises terrain");
}

#[test]
fn bad_journals_fail_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.r32");
    let good = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/journals/demo.json"
    ))
    .unwrap();
    let cases = [
        (
            good.replacen("\"radius\": 90", "\"radius\": -90", 1),
            "steps[3]: stroke.brush.radius",
        ),
        (
            good.replacen("\"kind\": \"ridged\"", "\"kind\": \"plasma\"", 1),
            "steps[2].stroke.brush.kind",
        ),
        (
            good.replacen("{\n   \"redo\": 1\n  }", "{\n   \"redo\": 2\n  }", 1),
            "steps[5]: redo",
        ),
        (
            good.replacen("\"flat\": 0.0", "\"file\": \"missing.r32\"", 1),
            "missing.r32",
        ),
        ("[]".to_string(), "expected a journal object"),
    ];
    for (i, (text, expect)) in cases.iter().enumerate() {
        assert_ne!(text, &good, "case {i} must change the journal");
        let path = dir.path().join(format!("bad{i}.json"));
        std::fs::write(&path, text).unwrap();
        let o = scarp(&[
            "apply",
            "--journal",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "case {i} should fail");
        assert!(
            stderr.contains(expect),
            "case {i}: expected '{expect}' in {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "one-line error: {stderr}");
        assert!(!out.exists(), "case {i} wrote an output");
    }
    let o = scarp(&[
        "apply",
        "--journal",
        "assets/journals/demo.json",
        "--batch",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--batch"));
}

#[test]
fn render_writes_an_image_of_the_requested_size_from_a_journal_or_heights() {
    let dir = tempfile::tempdir().unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let shot = dir.path().join("shot.png");
    let out = scarp_ok(&[
        "render",
        "--journal",
        demo,
        "--image",
        "200x120",
        "--frames",
        "3",
        "--paint",
        "jordan",
        "--paint-radius",
        "64",
        "--out",
        shot.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("3 frames of 1024x1024 at 200x120"),
        "{stdout}"
    );
    let img = image::open(&shot).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (200, 120));
    // Terrain and sky are both in the picture.
    let distinct: std::collections::BTreeSet<[u8; 4]> = img.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 50, "{} colours", distinct.len());

    // Heights file: a ramp, seen from a given camera, in wireframe.
    let heights = dir.path().join("ramp.r32");
    let bytes: Vec<u8> = (0..130 * 100)
        .flat_map(|i| ((i % 130) as f32 * 0.5).to_le_bytes())
        .collect();
    std::fs::write(&heights, bytes).unwrap();
    let shot2 = dir.path().join("ramp.png");
    scarp_ok(&[
        "render",
        "--heights",
        heights.to_str().unwrap(),
        "--size",
        "130x100",
        "--camera",
        "-50,150,200,65,30,50",
        "--vertical-scale",
        "1",
        "--wireframe",
        "--image",
        "64x48",
        "--out",
        shot2.to_str().unwrap(),
    ]);
    assert_eq!(
        image::open(&shot2).unwrap().to_rgba8().dimensions(),
        (64, 48)
    );
}

/// `scarp render` lights what its final frame draws at page level, not the whole document:
/// a close-up of one corner of a 2048 x 1024 relief (32 pages of 256) lights only the pages
/// it draws there, and the image shows their shadows (darker than the same view unlit).
#[test]
fn render_lights_only_the_pages_the_view_draws_at_page_level() {
    let dir = tempfile::tempdir().unwrap();
    let heights = dir.path().join("ridges.r32");
    let (w, h) = (2048u32, 1024u32);
    let bytes: Vec<u8> = (0..w * h)
        .flat_map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            (40.0 * (x * 0.05).sin() * (y * 0.03).cos() + 40.0).to_le_bytes()
        })
        .collect();
    std::fs::write(&heights, bytes).unwrap();
    let render = |out: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        let mut args = vec![
            "render",
            "--heights",
            heights.to_str().unwrap(),
            "--size",
            "2048x1024",
            "--vertical-scale",
            "1",
            "--camera",
            "-40,160,-40,200,0,200",
            "--sun",
            "250,15",
            "--image",
            "160x120",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let said = String::from_utf8_lossy(&scarp_ok(&args).stdout).into_owned();
        (said, image::open(&out).unwrap().to_rgba8())
    };
    let (said, lit) = render("lit.png", &[]);
    let line = said
        .lines()
        .find(|l| l.starts_with("lighting: "))
        .unwrap_or_else(|| panic!("no lighting line: {said}"));
    let numbers: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (pages, drawn) = (numbers[0], numbers[1]);
    assert!(
        pages > 0 && pages == drawn && drawn < 32,
        "{line}: the view draws {drawn} of 32 pages at page level"
    );
    let (_, unlit) = render("unlit.png", &["--no-lighting"]);
    let darker = lit
        .pixels()
        .zip(unlit.pixels())
        .filter(|(a, b)| {
            (0..3)
                .map(|c| i32::from(b.0[c]) - i32::from(a.0[c]))
                .sum::<i32>()
                > 60
        })
        .count();
    assert!(darker > 300, "only {darker} pixels in shadow");
}

/// An image drawn in strips (each a window of the whole view, written band by band) is the
/// image drawn whole: the same nodes, the same pixels but for rounding at triangle edges.
#[test]
fn render_in_strips_draws_the_image_it_draws_whole() {
    let dir = tempfile::tempdir().unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let (whole, strips) = (dir.path().join("whole.png"), dir.path().join("strips.png"));
    let render = |out: &Path, extra: &[&str]| {
        let mut args = vec!["render", "--journal", demo, "--image", "240x170"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        String::from_utf8_lossy(&scarp_ok(&args).stdout).into_owned()
    };
    // Drawn in strips, the triangle budget is off (a strip does not see the whole image).
    render(&whole, &["--max-triangles-per-pixel", "0"]);
    // 40 rows a strip: five strips, the last one cut at the image's edge.
    let said = render(&strips, &["--strip-rows", "40"]);
    assert!(said.contains("5 strips of 40 rows"), "{said}");
    let (a, b) = (
        image::open(&whole).unwrap().to_rgba8(),
        image::open(&strips).unwrap().to_rgba8(),
    );
    assert_eq!(b.dimensions(), (240, 170));
    let (mut differ, mut worst) = (0, 0);
    for (p, q) in a.pixels().zip(b.pixels()) {
        let d = (0..4).map(|i| p.0[i].abs_diff(q.0[i])).max().unwrap();
        differ += usize::from(d > 2);
        worst = worst.max(d);
    }
    // Terrain and sky both drawn, and no strip seam: at most 0.5% of pixels differ by more
    // than rounding.
    let distinct: std::collections::BTreeSet<[u8; 4]> = b.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 50, "{} colours", distinct.len());
    assert!(
        differ * 200 <= 240 * 170,
        "{differ} pixels differ (worst by {worst})"
    );
    // Strips cannot be asked with a flag that needs the image whole.
    let o = scarp(&[
        "render",
        "--journal",
        demo,
        "--strip-rows",
        "10",
        "--frames",
        "2",
        "--out",
        strips.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--strip-rows cannot be used with --frames"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn render_rejects_bad_input_with_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/demo.json");
    let shot = dir.path().join("s.png");
    let s = shot.to_str().unwrap();
    let short = dir.path().join("short.r32");
    std::fs::write(&short, [0u8; 12]).unwrap();
    let nan = dir.path().join("nan.r32");
    std::fs::write(&nan, [f32::NAN.to_le_bytes(), 1f32.to_le_bytes()].concat()).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["render", "--out", s], "--journal"),
        (
            vec!["render", "--journal", demo, "--camera", "1,2,3", "--out", s],
            "6 numbers",
        ),
        (
            vec![
                "render",
                "--journal",
                demo,
                "--camera",
                "1,2,3,1,2,3",
                "--out",
                s,
            ],
            "same point",
        ),
        (
            vec!["render", "--journal", demo, "--image", "0x10", "--out", s],
            "between 1 and",
        ),
        (
            vec![
                "render",
                "--journal",
                demo,
                "--pixel-error",
                "-1",
                "--out",
                s,
            ],
            "--pixel-error",
        ),
        (
            vec![
                "render",
                "--journal",
                demo,
                "--sea-level",
                "inf",
                "--out",
                s,
            ],
            "--sea-level must be a finite height",
        ),
        (vec!["render", "--journal", demo, "--out", "x.jpg"], ".png"),
        // Counts past what work or memory allows are refused, naming the bound.
        (
            vec![
                "render",
                "--journal",
                demo,
                "--frames",
                "4294967296",
                "--out",
                s,
            ],
            "0..=100000",
        ),
        (
            vec![
                "render",
                "--journal",
                demo,
                "--image",
                "16385x100",
                "--out",
                s,
            ],
            "at most 16384x16384",
        ),
        (
            vec!["convert", demo, s, "--tiles", "511x511"],
            "at most 4096 (64x64)",
        ),
        (
            vec![
                "erode",
                "--heights",
                demo,
                "--out",
                s,
                "--steps",
                "4294967296",
            ],
            "--steps must be 1 to 10000",
        ),
        (
            vec!["render", "--journal", demo, "--paint", "fbm", "--out", s],
            "--frames",
        ),
        (
            vec![
                "render",
                "--heights",
                short.to_str().unwrap(),
                "--size",
                "2x2",
                "--out",
                s,
            ],
            "12 bytes, but 2x2 needs 16",
        ),
        (
            vec![
                "render",
                "--heights",
                nan.to_str().unwrap(),
                "--size",
                "2x1",
                "--out",
                s,
            ],
            "non-finite height (NaN) at texel (0, 0)",
        ),
    ];
    for (args, expect) in cases {
        let out = scarp(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(expect), "{args:?}: {err}");
        // Ours are one line; clap's usage errors add a usage hint.
        assert!(err.trim().lines().count() <= 6, "{args:?}: {err}");
        assert!(!shot.exists(), "{args:?} wrote the output");
    }
}

#[test]
fn apply_writes_a_project_that_render_and_apply_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let small = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/journal/small.json");
    let proj = dir.path().join("small.scarp");
    scarp_ok(&["apply", "--journal", small, "--out", proj.to_str().unwrap()]);
    let sp = scarp::project::v2::open(&proj).unwrap();
    let d = sp.meta.document;
    assert_eq!((d.width, d.height), (130, 70));
    assert!(!sp.pages.is_empty());
    let p = scarp::project::Project {
        document: d,
        flat: sp.meta.flat,
        pages: sp.page_heights().unwrap(),
        presets: vec![],
        journal: None,
    };
    // The project's heights equal the journal replayed to a raw file.
    let raw = dir.path().join("small.r32");
    scarp_ok(&["apply", "--journal", small, "--out", raw.to_str().unwrap()]);
    let dense = read_r32(&raw);
    for (id, heights) in &p.pages {
        let mut page = vec![0.0; dense.len()];
        p.document.page_into_dense(heights, *id, &mut page);
        let r = p.document.page_rect(*id);
        for y in r.y0..r.y1 {
            for x in r.x0..r.x1 {
                let i = (y * 130 + x) as usize;
                assert_eq!(page[i], dense[i], "texel {x},{y}");
            }
        }
    }
    let shot = dir.path().join("p.png");
    scarp_ok(&[
        "render",
        "--heights",
        proj.to_str().unwrap(),
        "--image",
        "64x40",
        "--out",
        shot.to_str().unwrap(),
    ]);
    // A damaged project is refused by name: truncated (no save left), or a page altered (found
    // when the page is read).
    let good = std::fs::read(&proj).unwrap();
    let mut truncated = good.clone();
    truncated.truncate(good.len() - 9);
    let mut altered = good.clone();
    altered[112 + 10] ^= 0x40;
    for (bytes, expect) in [(truncated, "no valid superblock"), (altered, "checksum")] {
        let bad = dir.path().join("bad.scarp");
        std::fs::write(&bad, bytes).unwrap();
        let out = scarp(&[
            "render",
            "--heights",
            bad.to_str().unwrap(),
            "--out",
            shot.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains("bad.scarp") && err.contains(expect), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn apply_writes_a_layered_journals_composite_and_layers_and_scarp_layers_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let journal = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/layers.json");
    let o = scarp_ok(&["layers", journal]);
    let listed = String::from_utf8_lossy(&o.stdout).into_owned();
    // Top first, the selection starred, the base last.
    let names: Vec<&str> = listed
        .lines()
        .map(|l| {
            l.split_whitespace()
                .find(|w| w.chars().all(char::is_alphabetic))
                .unwrap()
        })
        .collect();
    assert_eq!(names, ["crater", "dunes", "ridges", "base"], "{listed}");
    assert!(listed.lines().nth(2).unwrap().starts_with('*'), "{listed}");
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let read = |name: &str| -> Vec<f32> {
        std::fs::read(dir.path().join(name))
            .unwrap()
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    let page = ["--page-size", "512"];
    let run = |extra: &[&str]| {
        let mut args = vec!["apply", "--journal", journal];
        args.extend_from_slice(&page);
        args.extend_from_slice(extra);
        scarp(&args)
    };
    for (file, extra) in [
        ("composite.r32", vec![]),
        ("mask.r32", vec!["--layer", "dunes", "--field", "mask"]),
        ("ridges.r32", vec!["--layer", "ridges"]),
    ] {
        let mut args = extra.clone();
        let path = out(file);
        args.extend(["--out", path.as_str()]);
        let o = run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (composite, mask, ridges) = (read("composite.r32"), read("mask.r32"), read("ridges.r32"));
    // The mask brush painted dunes' mask toward 0 in places; elsewhere it is 1.
    assert!(mask.iter().all(|m| (0.0..=1.0).contains(m)));
    assert!(mask.iter().any(|&m| m < 0.01) && mask.contains(&1.0));
    // The ridges layer (max) raised the composite above the base where it was painted.
    let top = ridges.iter().cloned().fold(f32::MIN, f32::max);
    assert!(top > 0.3 && composite.iter().cloned().fold(f32::MIN, f32::max) > 0.3);
    for (args, wanted) in [
        (vec!["--layer", "nope"], "no layer called \"nope\""),
        (vec!["--layer", "dunes", "--field", "height"], "--field"),
        (vec!["--backend", "cpu"], "GPU backend"),
    ] {
        let mut args = args.clone();
        let path = out("x.r32");
        args.extend(["--out", path.as_str()]);
        let o = run(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && e.contains(wanted) && e.lines().count() == 1,
            "{e}"
        );
    }
    // A project holds the stack; scarp layers reads it back, and a journal of steps on its
    // layers paints onto it.
    let path = out("x.scarp");
    let o = run(&["--out", path.as_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = scarp_ok(&["layers", path.as_str()]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), listed);
    let more = dir.path().join("more.json");
    std::fs::write(
        &more,
        r#"{"version": 2, "document": {"width": 2048, "height": 2048, "page_size": 512},
            "steps": [{"layer": {"op": "select", "name": "dunes"}},
                      {"layer": {"op": "set", "name": "dunes", "rename": "sand"}}]}"#,
    )
    .unwrap();
    let more = more.to_str().unwrap();
    let o = scarp(&[
        "apply",
        "--journal",
        more,
        "--onto",
        path.as_str(),
        "--out",
        path.as_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = scarp_ok(&["layers", path.as_str()]);
    let now = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(now.contains("sand") && !now.contains("dunes"), "{now}");
    // Without the project the journal's names are unknown: refused before anything runs.
    let o = scarp(&["apply", "--journal", more, "--out", out("y.r32").as_str()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("no layer is called \"dunes\""),
        "{e}"
    );
}
