//! `scarp bench --quick` as CI runs it (lavapipe, validation on): the JSON report parses into the
//! documented schema with every section and field present, every ratio is finite, the Markdown
//! and the plot are written, and docs/bench.md documents every field. Speed is never asserted.

mod common;

use common::{scarp, stderr};
use scarp::bench::Report;
use std::path::Path;

/// Every object key in `v`, with the numbers found under each.
fn walk(
    v: &serde_json::Value,
    path: &str,
    keys: &mut Vec<String>,
    numbers: &mut Vec<(String, f64)>,
) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                keys.push(k.clone());
                walk(x, &format!("{path}.{k}"), keys, numbers);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, &format!("{path}[{i}]"), keys, numbers);
            }
        }
        serde_json::Value::Number(n) => numbers.push((path.to_string(), n.as_f64().unwrap())),
        serde_json::Value::Null => panic!("{path} is null (a NaN or a missing section)"),
        _ => {}
    }
}

#[test]
fn quick_bench_writes_a_complete_report() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let md = dir.path().join("bench.md");
    let png = dir.path().join("bench.png");
    let out = scarp(&[
        "bench",
        "--quick",
        "--json",
        json.to_str().unwrap(),
        "--md",
        md.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Parses into the schema (unknown or missing fields are errors).
    let text = std::fs::read_to_string(&json).unwrap();
    let report: Report = serde_json::from_str(&text).expect("report matches the schema");
    assert_eq!(report.schema, scarp::bench::SCHEMA_VERSION);
    assert!(report.settings.quick);
    assert!(report.system.validation, "CI runs with validation on");
    assert!(!report.system.device.is_empty() && !report.system.commit.is_empty());
    assert!(!report.system.cpu.is_empty() && report.system.cpu_threads >= 1);

    let noise = report.noise.as_ref().expect("noise section");
    let brushes = report.brushes.as_ref().expect("brush section");
    let frames = report.frames.as_ref().expect("frame section");
    assert_eq!(noise.kinds.len(), scarp::noise::NoiseKind::ALL.len());
    // Both CPU peers measured, and every kind compared with the SIMD one.
    let simd = noise.simd_peer.as_ref().expect("the SIMD peer");
    assert!(simd.one_thread_msamples_s > 0.0 && simd.all_cores_msamples_s > 0.0);
    assert!(noise
        .kinds
        .iter()
        .all(|k| k.gpu_over_simd_peer_all_cores > 0.0));
    let expected: Vec<String> = scarp::bench::names(true)
        .into_iter()
        .filter(|n| n.starts_with("brush/"))
        .collect();
    let got: Vec<String> = brushes.results.iter().map(|r| r.name.clone()).collect();
    assert_eq!(
        got, expected,
        "every configuration of the quick matrix, in order"
    );
    // Every brush type at every radius, in both formats.
    for t in scarp::brush::BrushType::ALL {
        for f in ["r32f", "r16"] {
            assert!(
                brushes
                    .results
                    .iter()
                    .any(|r| r.brush == t.name() && r.format == f),
                "{} {f}",
                t.name()
            );
        }
    }
    assert_eq!(
        brushes.cpu_twin.len(),
        scarp::brush::BrushType::ALL.len() * 2,
        "a CPU twin per brush and radius"
    );
    assert_eq!(frames.len(), 1);

    // Measurements are real: positive times, work that matches the configuration.
    let c = &report.ceilings;
    for (name, v) in [
        ("copy image", c.copy_image.gb_s),
        ("copy buffer", c.copy_buffer.gb_s),
        ("fma", c.fma.gflop_s),
    ] {
        assert!(v.is_finite() && v > 0.0, "{name} ceiling {v}");
    }
    // The copy at one brush wave's size (512² with --quick, read and written), as one image and
    // as 16 pages of 128², a dispatch a page.
    for (name, ceiling) in [
        ("wave-size", &c.copy_image_wave),
        ("paged wave-size", &c.copy_image_wave_pages),
    ] {
        let w = ceiling
            .as_ref()
            .unwrap_or_else(|| panic!("the {name} copy ceiling"));
        assert_eq!((w.elements, w.bytes), (512 * 512, 512 * 512 * 8), "{name}");
        assert!(
            w.gb_s.is_finite() && w.gb_s > 0.0 && w.median_ms > 0.0,
            "{name} ceiling {} GB/s in {} ms",
            w.gb_s,
            w.median_ms
        );
    }
    for k in &noise.kinds {
        assert!(k.gpu_ms > 0.0 && k.cpu_twin_ms > 0.0, "{}", k.name);
        assert!(
            k.max_rel_diff_vs_cpu_twin < 1e-3,
            "{}: GPU and twin disagree",
            k.name
        );
    }
    for r in &brushes.results {
        assert!(r.gpu_ms > 0.0, "{}", r.name);
        assert!(r.covered_texels > 0 && r.texels_written > 0, "{}", r.name);
        assert_eq!(r.instances, brushes.instances_per_stroke, "{}", r.name);
        let bytes_per_texel = if r.format == "r32f" { 8 } else { 4 };
        assert_eq!(
            r.bytes_moved,
            r.texels_written * bytes_per_texel,
            "{}",
            r.name
        );
        // Batched passes need fewer passes than instances: pointwise brushes, and multi-tap
        // ones (smooth, contrast) up to radius SMOOTH_TILED_MOST_RADIUS; larger multi-tap
        // instances run one a pass, whatever the batch.
        let multitap = r.brush == "smooth" || r.brush == "contrast";
        let batches = r.batch > 1
            && (!multitap || r.radius as f32 <= scarp::brush::gpu::SMOOTH_TILED_MOST_RADIUS);
        assert!(
            r.path == "ping-pong" || (r.path == "in-place" && !multitap),
            "{}: path {}",
            r.name,
            r.path
        );
        assert!(r.tile_culling || !multitap, "{}", r.name);
        if batches {
            assert!(r.passes < u64::from(r.instances), "{}", r.name);
        } else {
            assert!(r.passes >= u64::from(r.instances), "{}", r.name);
        }
    }
    for f in frames {
        assert!(f.mean_ms > 0.0 && f.p99_ms >= f.mean_ms * 0.5, "{}", f.name);
        assert!(f.gpu_draw_ms > 0.0 && f.triangles > 0.0, "{}", f.name);
        // The bound the selection used: the asked 2 px, or above it where the budget raised it.
        assert!(f.error_bound_px >= 2.0, "{}: {}", f.name, f.error_bound_px);
    }
    // Lighting: the document lit, and texels relit near the edits in both frame runs.
    let l = report.lighting.as_ref().expect("lighting section");
    assert!(l.whole_pages > 0, "no page lit");
    assert!(l.whole_gpu_ms > 0.0 && l.whole_ns_per_texel > 0.0);
    assert!(l.near_instance_gpu_ms > 0.0 && l.near_instance_texels > 0.0);
    assert!(l.lit_light_gpu_ms > 0.0 && l.lit_near_texels > 0.0);
    assert!(l.frame_plain_ms > 0.0 && l.frame_lit_ms > 0.0);
    assert_eq!(
        l.light_budget_ms,
        scarp::render::lighting::DEFAULT_BUDGET_MS
    );

    // Every number finite (serde writes NaN as null, which `walk` refuses), every ratio and
    // fraction positive.
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (mut keys, mut numbers) = (Vec::new(), Vec::new());
    walk(&value, "", &mut keys, &mut numbers);
    for (path, n) in &numbers {
        assert!(n.is_finite(), "{path} = {n}");
        let leaf = path.rsplit('.').next().unwrap();
        if leaf.contains("_over_") || leaf.starts_with("fraction_of") {
            assert!(*n > 0.0, "{path} = {n}");
        }
    }

    // docs/bench.md documents every field.
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/bench.md"))
        .unwrap();
    keys.sort();
    keys.dedup();
    for k in &keys {
        assert!(
            doc.contains(&format!("`{k}`")),
            "docs/bench.md does not document `{k}`"
        );
    }

    // Markdown: the sections and a row per configuration.
    let md = std::fs::read_to_string(&md).unwrap();
    for h in [
        "## Ceilings",
        "## Noise",
        "## Brushes",
        "### In place vs ping-pong",
        "### Tile culling",
        "## Editor frames",
        "## Lighting",
    ] {
        assert!(md.contains(h), "{h} missing from the Markdown");
    }
    for r in &brushes.results {
        assert!(md.contains(&format!("| {} |", r.name)), "{}", r.name);
    }

    // The plot: a PNG of the documented size with something drawn on it.
    let img = image::open(&png).expect("the plot is a PNG").to_rgb8();
    assert_eq!(img.dimensions(), (1800, 800));
    let distinct: std::collections::BTreeSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 8, "the plot has lines in several colours");
}

#[test]
fn filters_select_measurements_and_bad_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fbm.json");
    let out = scarp(&[
        "bench",
        "--quick",
        "--filter",
        "noise/fbm",
        "--repeats",
        "1",
        "--json",
        json.to_str().unwrap(),
        "--md",
        dir.path().join("fbm.md").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let kinds: Vec<&str> = report
        .noise
        .as_ref()
        .expect("noise selected")
        .kinds
        .iter()
        .map(|k| k.kind.as_str())
        .collect();
    assert_eq!(kinds, ["fbm"]);
    assert!(report.brushes.is_none() && report.frames.is_none());
    assert_eq!(report.settings.filters, ["noise/fbm"]);

    let bad: &[(&[&str], &str)] = &[
        (&["--filter", "no-such-thing"], "no-such-thing"),
        (&["--json", "report.txt"], "--json must be a .json file"),
        (&["--plot", "p.jpg"], "--plot must be a .png file"),
        (
            &["--filter", "noise/fbm", "--plot", "p.png"],
            "--plot draws brush results",
        ),
        (&["--repeats", "0"], "repeats"),
        (&["--json", "/no/such/folder/r.json"], "/no/such/folder"),
    ];
    for (args, needle) in bad {
        let mut all = vec!["bench", "--quick"];
        all.extend_from_slice(args);
        let out = scarp(&all);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

/// `--compare`: a made-up regression in one measurement is flagged, and only it; reports of
/// another device or schema, files that are not reports, and measuring flags are refused.
#[test]
fn compare_flags_exactly_the_regressed_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench-report.json");
    let text = std::fs::read_to_string(&old).unwrap();
    let write = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        edit(&mut v);
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
        p
    };
    // The brush measurement whose repeats agreed best, made twice as slow as its band allows.
    let report: Report = serde_json::from_str(&text).unwrap();
    let results = &report.brushes.as_ref().unwrap().results;
    let (i, spread) = results
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.gpu_spread))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let name = &results[i].name;
    let slower = write("slower.json", &|v| {
        let r = &mut v["brushes"]["results"][i];
        let us = r["us_per_instance"].as_f64().unwrap();
        r["us_per_instance"] = (us * 2.0 * (1.0 + spread.max(0.05))).into();
    });
    let md = dir.path().join("cmp.md");
    let (o, s) = (old.to_str().unwrap(), slower.to_str().unwrap());
    let out = scarp(&["bench", "--compare", o, s, "--md", md.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let flagged: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("regression: "))
        .map(str::to_string)
        .collect();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert!(flagged[0].contains(&format!("{name} us_per_instance")));
    let table = std::fs::read_to_string(&md).unwrap();
    assert!(
        table.contains("1 regression beyond the noise band"),
        "{table}"
    );
    assert_eq!(table.matches("REGRESSION").count(), 1);
    // The same report against itself: nothing flagged.
    let out = scarp(&["bench", "--compare", o, o]);
    assert!(out.status.success() && !stderr(&out).contains("regression"));

    let other = write("other.json", &|v| {
        v["system"]["device"] = "Other GPU".into()
    });
    let newer = write("newer.json", &|v| v["schema"] = 999.into());
    let bad: &[(&[&str], &str)] = &[
        (&[o, other.to_str().unwrap()], "different devices"),
        (&[o, newer.to_str().unwrap()], "different schemas"),
        (&[o, "Cargo.toml"], "not a Scarp bench report"),
        (&[o, "/no/such/report.json"], "cannot read"),
    ];
    for (files, needle) in bad {
        let mut all = vec!["bench", "--compare"];
        all.extend_from_slice(files);
        let out = scarp(&all);
        assert!(!out.status.success(), "{files:?} was accepted");
        assert!(stderr(&out).contains(needle), "{files:?}: {}", stderr(&out));
    }
    let out = scarp(&["bench", "--compare", o, s, "--json", "x.json"]);
    assert!(!out.status.success() && stderr(&out).contains("takes only --md"));
}
