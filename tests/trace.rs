//! Timeline traces (`--trace`, lavapipe, validation on): Chrome trace-event JSON whose GPU track
//! holds every brush wave of the journal once, with its instances, pages and texels; whose GPU
//! events lie inside the journal step that ran them (within the measured clock uncertainty);
//! whose timestamps increase; a frame span per timed frame in `scarp render`; and RenderDoc
//! captures that report their absence.

mod common;

use common::{gpu, scarp, scarp_ok, stderr};
use scarp::document::Document;
use scarp::journal::Journal;
use scarp::noise::NoiseTables;
use serde_json::Value;
use std::path::Path;

const GPU_TRACK: u64 = 1000;

fn events(path: &Path) -> (Vec<Value>, Value) {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("the trace is JSON");
    let all = v["traceEvents"].as_array().expect("traceEvents").clone();
    for e in &all {
        assert!(e["ph"] == "X" || e["ph"] == "M", "{e}");
        assert!(
            e["pid"].is_u64() && e["tid"].is_u64() && e["name"].is_string(),
            "{e}"
        );
    }
    let spans = all.into_iter().filter(|e| e["ph"] == "X").collect();
    (spans, v["otherData"].clone())
}

#[test]
fn apply_trace_holds_every_wave_inside_its_step() {
    let journal = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/journals/demo.json");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    scarp_ok(&[
        "apply",
        "--journal",
        journal.to_str().unwrap(),
        "--out",
        dir.path().join("h.r32").to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let (spans, other) = events(&trace);
    let unc = other["gpu_uncertainty_us"].as_f64().expect("a GPU clock");
    assert!(unc >= 0.0);
    // Timestamps increase through the file.
    let ts: Vec<f64> = spans.iter().map(|e| e["ts"].as_f64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    assert!(spans.iter().all(|e| e["dur"].as_f64().unwrap() >= 0.0));

    // The same journal replayed here: its waves and texels.
    let gpu = gpu();
    let j = Journal::load(&journal).unwrap();
    let mut doc = Document::new(&gpu, j.document, 0.0, &NoiseTables::default()).unwrap();
    let (mut waves, mut texels) = (0, 0);
    let mut tools = scarp::edit::Tools::default();
    j.replay(
        &mut scarp::edit::Target::new(&mut doc, &mut tools),
        |_, t| {
            waves += t.doc.brushes.last_stroke.waves;
            texels += t.doc.brushes.last_stroke.texels_written;
        },
    )
    .unwrap();

    let gpu_spans: Vec<&Value> = spans.iter().filter(|e| e["tid"] == GPU_TRACK).collect();
    let wave_spans: Vec<&Value> = gpu_spans
        .iter()
        .copied()
        .filter(|e| e["name"].as_str().unwrap().starts_with("brush "))
        .collect();
    assert_eq!(wave_spans.len(), waves, "every wave once");
    let mut traced_texels = 0;
    for w in &wave_spans {
        let a = &w["args"];
        assert!(a["instances"].as_u64().unwrap() >= 1, "{w}");
        assert!(a["pages"].as_u64().unwrap() >= 1, "{w}");
        assert_eq!(a["batch"].as_u64(), Some(16), "{w}");
        traced_texels += a["texels"].as_u64().unwrap();
    }
    assert_eq!(traced_texels, texels);
    // Each GPU pass lies inside a step, and GPU passes do not overlap.
    let steps: Vec<(f64, f64)> = spans
        .iter()
        .filter(|e| e["name"].as_str().unwrap().starts_with("step: "))
        .map(|e| {
            let t = e["ts"].as_f64().unwrap();
            (t, t + e["dur"].as_f64().unwrap())
        })
        .collect();
    assert!(steps.len() >= j.steps.len());
    let slack = unc + 5.0;
    let mut last_end = f64::NEG_INFINITY;
    for g in &gpu_spans {
        let (t, d) = (g["ts"].as_f64().unwrap(), g["dur"].as_f64().unwrap());
        assert!(
            steps
                .iter()
                .any(|s| s.0 - slack <= t && t + d <= s.1 + slack),
            "{g} lies in no step ({slack} µs slack)"
        );
        assert!(t >= last_end - 1.0, "{g} overlaps the pass before it");
        last_end = t + d;
    }
}

#[test]
fn render_trace_has_a_frame_span_per_frame_and_bad_flags_are_refused() {
    let journal = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/journals/demo.json");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("r.json");
    let (j, out, t) = (
        journal.to_str().unwrap(),
        dir.path().join("r.png"),
        trace.to_str().unwrap(),
    );
    let o = out.to_str().unwrap();
    scarp_ok(&[
        "render",
        "--journal",
        j,
        "--image",
        "160x100",
        "--frames",
        "4",
        "--paint",
        "jordan",
        "--paint-radius",
        "32",
        "--out",
        o,
        "--trace",
        t,
    ]);
    let (spans, _) = events(&trace);
    let frames = spans.iter().filter(|e| e["name"] == "frame").count();
    assert_eq!(frames, 10 + 4, "warm-up and timed frames");
    for pass in ["terrain draw", "brush noise"] {
        assert!(
            spans
                .iter()
                .any(|e| e["tid"] == GPU_TRACK && e["name"] == pass),
            "no {pass} on the GPU track"
        );
    }

    let bad: &[(&[&str], &str)] = &[
        (
            &["render", "--journal", j, "--out", o, "--trace", t],
            "--trace needs --frames",
        ),
        (
            &[
                "render",
                "--journal",
                j,
                "--out",
                o,
                "--frames",
                "2",
                "--trace",
                "x.txt",
            ],
            "--trace must be a .json file",
        ),
        (
            &[
                "apply",
                "--journal",
                j,
                "--out",
                "h.r32",
                "--backend",
                "cpu",
                "--trace",
                t,
            ],
            "--trace records the GPU backend",
        ),
        (
            &[
                "apply",
                "--journal",
                j,
                "--out",
                "h.r32",
                "--trace",
                "/no/such/dir/t.json",
            ],
            "/no/such/dir",
        ),
    ];
    for (args, needle) in bad {
        let out = scarp(args);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

/// Without RenderDoc, `scarp render --capture` says so and still writes its image.
#[test]
fn render_capture_without_renderdoc_reports_it_and_succeeds() {
    let journal = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/journals/demo.json");
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("c.png");
    let out = scarp_ok(&[
        "render",
        "--journal",
        journal.to_str().unwrap(),
        "--image",
        "160x100",
        "--out",
        png.to_str().unwrap(),
        "--capture",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("RenderDoc is not attached"), "{text}");
    assert!(png.is_file());
}

/// Both ways of placing GPU timestamps on the trace's clock (calibrated timestamps where the
/// device has them, the measured round trip everywhere) put a noise pass inside the CPU span of
/// the call that ran and waited for it.
#[test]
fn gpu_passes_land_inside_the_cpu_span_that_waited_for_them() {
    use scarp::noise::{GpuNoise, NoiseKind, NoiseSettings};
    let gpu = gpu();
    let mut noise = GpuNoise::new(&gpu, &NoiseTables::default()).unwrap();
    let settings = NoiseSettings::new(NoiseKind::Fbm);
    type Start = fn(&std::sync::Arc<scarp::gpu::Gpu>) -> scarp::gpu::Result<()>;
    let starts: [Start; 2] = [scarp::gpu::start_trace, scarp::gpu::start_trace_measured];
    for (i, start) in starts.into_iter().enumerate() {
        start(&gpu).unwrap();
        {
            let _s = scarp::profile::scope("generate");
            noise.generate(&settings, 256, 256).unwrap();
        }
        let trace = scarp::trace::stop().unwrap();
        let Some(clock) = trace.gpu else {
            return; // no timestamps on this device
        };
        assert_eq!(
            clock.method == "offset measured at start",
            i == 1 || gpu.calibrated_timestamps().is_none()
        );
        let span = trace.events.iter().find(|e| e.name == "generate").unwrap();
        let passes: Vec<_> = trace
            .events
            .iter()
            .filter(|e| e.track == scarp::trace::GPU_TRACK)
            .collect();
        assert!(!passes.is_empty());
        let slack = clock.uncertainty_us + 5.0;
        for p in passes {
            assert!(
                span.ts_us - slack <= p.ts_us
                    && p.ts_us + p.dur_us <= span.ts_us + span.dur_us + slack,
                "{} ({:?}): {p:?} outside {span:?}",
                clock.method,
                clock.uncertainty_us
            );
        }
    }
    common::assert_no_validation_messages(&gpu);
}
