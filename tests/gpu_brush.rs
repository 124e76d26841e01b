//! The brush engine on the GPU against its CPU twin, and the invariants of paging, batching,
//! input rate and undo. Every test runs with validation on and fails on any message.

mod common;

use common::{assert_no_validation_messages, doc, gpu, max_diff};
use scarp::brush::cpu::CpuTerrain;
use scarp::brush::shared::BrushInstance;
use scarp::brush::stamp::Stamp;
use scarp::brush::stroke::{stroke_instances, StrokeSample};
use scarp::brush::{BrushSettings, BrushType, Falloff};
use scarp::document::Document;
use scarp::noise::{CpuTables, NoiseKind, NoiseSettings, NoiseTables};
use scarp::pages::geometry::{DocumentDesc, HeightFormat, PageId};
use scarp::pages::Budgets;
use std::sync::Arc;

/// Largest |GPU - CPU| accepted for r32f documents.
const TOLERANCE: f32 = 1e-4;

/// A wavy stroke through the corner shared by pages (0,0), (1,0), (0,1), (1,1) of a 128 grid.
fn corner_stroke() -> Vec<StrokeSample> {
    (0..12)
        .map(|i| {
            let t = i as f32 / 11.0;
            StrokeSample {
                x: 60.0 + 150.0 * t,
                y: 90.0 + 70.0 * t + 12.0 * (t * 9.0).sin(),
                pressure: 0.4 + 0.6 * t,
                t,
            }
        })
        .collect()
}

/// Every brush type, with the noise brush in several kinds and falloffs.
fn brushes() -> Vec<BrushSettings> {
    let base = BrushSettings {
        radius: 30.0,
        inner_radius: 6.0,
        strength: 0.3,
        spacing: 0.2,
        ..BrushSettings::new(BrushType::Raise)
    };
    let mut out = vec![
        base.clone(),
        BrushSettings {
            brush: BrushType::Lower,
            falloff: Falloff::Smooth,
            ..base.clone()
        },
        BrushSettings {
            brush: BrushType::Raise,
            falloff: Falloff::Linear,
            inner_radius: 0.0,
            ..base.clone()
        },
        BrushSettings {
            brush: BrushType::Level,
            strength: 0.4,
            ..base.clone()
        },
        BrushSettings {
            brush: BrushType::Smooth,
            strength: 0.8,
            ..base.clone()
        },
        BrushSettings {
            brush: BrushType::Contrast,
            strength: 0.5,
            ..base.clone()
        },
    ];
    for kind in [
        NoiseKind::Fbm,
        NoiseKind::Ridged,
        NoiseKind::Jordan,
        NoiseKind::Erosive,
    ] {
        let noise = NoiseSettings {
            scale: 1.0 / 64.0,
            seed: 5,
            octaves: 6,
            ..NoiseSettings::new(kind)
        };
        out.push(BrushSettings {
            brush: BrushType::Noise,
            noise,
            ..base.clone()
        });
    }
    let noise = NoiseSettings {
        scale: 1.0 / 32.0,
        seed: 9,
        octaves: 5,
        ..NoiseSettings::new(NoiseKind::Ridged)
    };
    out.push(BrushSettings {
        brush: BrushType::Directional,
        noise,
        dir_angle_deg: 90.0,
        dir_ratio: 4.0,
        ..base.clone()
    });
    out.push(BrushSettings {
        falloff: Falloff::Power,
        falloff_power: 5.0,
        ..base.clone()
    });
    let stamp = Stamp {
        width: 33,
        height: 21,
        values: (0..33 * 21)
            .map(|i| ((i * 7919) % 101) as f32 / 100.0)
            .collect(),
        source: None,
    };
    out.push(BrushSettings {
        brush: BrushType::Stamp,
        stamp: Some(Arc::new(stamp)),
        stamp_scale: 1.2,
        dir_angle_deg: 30.0,
        ..base.clone()
    });
    for sharpness in [0.3, 0.9] {
        out.push(BrushSettings {
            brush: BrushType::Terrace,
            strength: 0.6,
            terrace_height: 0.013,
            terrace_sharpness: sharpness,
            ..base.clone()
        });
    }
    for tilt in [0.0, 30.0] {
        out.push(BrushSettings {
            brush: BrushType::Flatten,
            strength: 0.7,
            flatten_tilt: tilt,
            ..base.clone()
        });
    }
    out.push(BrushSettings {
        brush: BrushType::Ramp,
        strength: 0.8,
        ..base.clone()
    });
    out
}

/// A sloped, rippled, rough initial terrain: level, smooth and contrast all have work to do.
fn initial(d: &DocumentDesc) -> Vec<f32> {
    (0..d.height)
        .flat_map(|y| {
            (0..d.width).map(move |x| {
                let (x, y) = (x as f32, y as f32);
                0.25 + 0.002 * x
                    + 0.05 * (y * 0.07).sin()
                    + 0.02 * (x * 1.3).sin() * (y * 0.9).cos()
            })
        })
        .collect()
}

fn run_gpu(
    gpu: &Arc<scarp::gpu::Gpu>,
    d: DocumentDesc,
    batch: usize,
    strokes: &[(BrushSettings, Vec<StrokeSample>)],
) -> Vec<f32> {
    let mut t = Document::from_heights(gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
    t.brushes.set_batch(batch).unwrap();
    for (b, samples) in strokes {
        t.apply_stroke(b, &stroke_instances(b, samples)).unwrap();
    }
    t.to_dense().unwrap()
}

#[test]
fn gpu_matches_cpu_twin_for_every_brush() {
    let gpu = gpu();
    let cpu_tables = Arc::new(CpuTables::new(&NoiseTables::default()));
    let d = doc(300, 260, 128);
    for b in brushes() {
        let strokes = vec![(b.clone(), corner_stroke())];
        let got = run_gpu(&gpu, d, 16, &strokes);
        let mut cpu = CpuTerrain::from_heights(d, &initial(&d), cpu_tables.clone());
        cpu.apply_stroke(&b, &stroke_instances(&b, &strokes[0].1));
        let want = cpu.to_dense();
        let diff = max_diff(&got, &want);
        println!(
            "{:?}/{:?}: max |gpu - cpu| = {diff:e}",
            b.brush, b.noise.kind
        );
        assert!(
            diff <= TOLERANCE,
            "{:?} {:?}: max |gpu - cpu| = {diff}",
            b.brush,
            b.noise.kind
        );
        assert!(
            max_diff(&want, &initial(&d)) > 1e-3,
            "{:?}: the stroke changed nothing",
            b.brush
        );
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn batch_size_and_page_size_do_not_change_heights() {
    let gpu = gpu();
    for b in brushes() {
        let strokes = vec![
            (b.clone(), corner_stroke()),
            (
                BrushSettings {
                    strength: -0.1,
                    ..b.clone()
                },
                corner_stroke().into_iter().rev().collect(),
            ),
        ];
        let paged16 = run_gpu(&gpu, doc(300, 260, 128), 16, &strokes);
        let paged1 = run_gpu(&gpu, doc(300, 260, 128), 1, &strokes);
        let single_page = run_gpu(&gpu, doc(300, 260, 512), 16, &strokes);
        assert_eq!(
            paged1, paged16,
            "{:?} {:?}: batch 1 and 16 differ",
            b.brush, b.noise.kind
        );
        assert_eq!(
            single_page, paged16,
            "{:?} {:?}: page size 128 and one page differ",
            b.brush, b.noise.kind
        );
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn input_rate_does_not_change_heights() {
    let gpu = gpu();
    let path = |hz: usize| -> Vec<StrokeSample> {
        (0..=hz)
            .map(|i| {
                let a = 1.2 * i as f32 / hz as f32;
                StrokeSample {
                    x: 40.0 + 200.0 * a.cos(),
                    y: 30.0 + 200.0 * a.sin(),
                    pressure: 1.0,
                    t: i as f32 / hz as f32,
                }
            })
            .collect()
    };
    let b = BrushSettings {
        radius: 24.0,
        strength: 0.05,
        spacing: 0.25,
        ..BrushSettings::new(BrushType::Raise)
    };
    let slow = run_gpu(&gpu, doc(260, 260, 128), 16, &[(b.clone(), path(30))]);
    let fast = run_gpu(&gpu, doc(260, 260, 128), 16, &[(b, path(240))]);
    let diff = max_diff(&slow, &fast);
    assert!(diff <= 1e-4, "30 Hz and 240 Hz differ by {diff}");
    assert_no_validation_messages(&gpu);
}

/// Smooth and contrast apply up to 8 small instances a pass (shared-memory tiles with a halo,
/// each instance over what the later ones read): strokes along the document's edge and through
/// a page corner, dense and sparse, give the same heights bit for bit whatever the batch (1 is
/// one instance a pass), on r32f and r16, and follow the twin; so do large instances, which run
/// one a pass.
#[test]
fn smooth_and_contrast_batches_equal_one_instance_a_pass_at_edges_and_seams() {
    let gpu = gpu();
    let cpu_tables = Arc::new(CpuTables::new(&NoiseTables::default()));
    // Along the top edge into the right one (off the document at times), then back through
    // the corner of four pages.
    let edge: Vec<StrokeSample> = (0..16)
        .map(|i| {
            let t = i as f32 / 15.0;
            let (x, y) = if t < 0.5 {
                (150.0 + 320.0 * t, 4.0 + 6.0 * (t * 11.0).sin())
            } else {
                (296.0 - 170.0 * (t - 0.5), 8.0 + 250.0 * (t - 0.5))
            };
            StrokeSample {
                x,
                y,
                pressure: 1.0,
                t,
            }
        })
        .collect();
    // Radius 12 runs tiled, 140 one instance a pass.
    let cases = [(12.0, 0.1), (12.0, 1.5), (140.0, 0.05)];
    const { assert!(140.0 > scarp::brush::gpu::SMOOTH_TILED_MOST_RADIUS) };
    for (brush, strength) in [(BrushType::Smooth, 0.9), (BrushType::Contrast, 0.4)] {
        for (radius, spacing) in cases {
            let b = BrushSettings {
                radius,
                inner_radius: 2.0,
                strength,
                spacing,
                ..BrushSettings::new(brush)
            };
            let strokes = vec![(b.clone(), edge.clone())];
            for d in [doc(300, 260, 128), doc_r16(300, 260, 128)] {
                let one = run_gpu(&gpu, d, 1, &strokes);
                // Small instances share waves; large ones have one each.
                let mut t =
                    Document::from_heights(&gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
                t.brushes.set_batch(8).unwrap();
                t.apply_stroke(&b, &stroke_instances(&b, &edge)).unwrap();
                let st = &t.brushes.last_stroke;
                if radius <= scarp::brush::gpu::SMOOTH_TILED_MOST_RADIUS {
                    assert!(st.waves * 4 <= st.instances, "{} waves", st.waves);
                } else {
                    assert_eq!(st.waves, st.instances);
                }
                for batch in [3, 8, 16] {
                    assert!(
                        run_gpu(&gpu, d, batch, &strokes) == one,
                        "{brush:?} r{radius} spacing {spacing} {:?}: batch {batch} differs from 1",
                        d.format
                    );
                }
                if d.format == HeightFormat::R32f {
                    let mut cpu = CpuTerrain::from_heights(d, &initial(&d), cpu_tables.clone());
                    cpu.apply_stroke(&b, &stroke_instances(&b, &edge));
                    let want = cpu.to_dense();
                    let diff = max_diff(&one, &want);
                    assert!(diff <= TOLERANCE, "{brush:?}: max |gpu - cpu| = {diff}");
                    assert!(
                        max_diff(&want, &initial(&d)) > 1e-3,
                        "{brush:?} changed nothing"
                    );
                }
            }
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn undo_and_redo_are_bit_exact_and_untouched_pages_are_shared() {
    let gpu = gpu();
    let d = doc(512, 384, 128);
    let initial: Vec<f32> = (0..512 * 384)
        .map(|i| ((i % 977) as f32 * 0.013).sin())
        .collect();
    let mut t = Document::from_heights(&gpu, d, &initial, &NoiseTables::default()).unwrap();
    assert_eq!(t.to_dense().unwrap(), initial);
    let mut after = Vec::new();
    for (i, b) in brushes().into_iter().enumerate().take(4) {
        let samples: Vec<StrokeSample> = corner_stroke()
            .into_iter()
            .map(|s| StrokeSample {
                x: s.x + 40.0 * i as f32,
                ..s
            })
            .collect();
        t.apply_stroke(&b, &stroke_instances(&b, &samples)).unwrap();
        after.push(t.to_dense().unwrap());
    }
    // Page (3,2) is far from every stroke: the same version throughout.
    let far = PageId { x: 3, y: 2 };
    let far_before = t.height().versions().page(far).cloned().unwrap();
    for _ in 0..4 {
        assert!(t.undo().unwrap());
    }
    assert!(!t.undo().unwrap(), "nothing left to undo");
    assert_eq!(
        t.to_dense().unwrap(),
        initial,
        "undo must restore the initial heights bit-exactly"
    );
    for (i, expected) in after.iter().enumerate() {
        assert!(t.redo().unwrap());
        assert_eq!(
            &t.to_dense().unwrap(),
            expected,
            "redo {i} must reapply bit-exactly"
        );
    }
    assert!(
        std::rc::Rc::ptr_eq(&far_before, t.height().versions().page(far).unwrap()),
        "an untouched page must be shared, not copied"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn huge_flat_document_allocates_only_touched_pages() {
    let gpu = gpu();
    let d = doc(65536, 65536, 512);
    let mut t = Document::new(&gpu, d, 0.0, &NoiseTables::default()).unwrap();
    assert_eq!(
        t.height().versions().count(),
        0,
        "a new flat document holds no pages"
    );
    let b = BrushSettings {
        radius: 64.0,
        ..BrushSettings::new(BrushType::Raise)
    };
    let samples = [
        StrokeSample {
            x: 40000.0,
            y: 30000.0,
            pressure: 1.0,
            t: 0.0,
        },
        StrokeSample {
            x: 40100.0,
            y: 30050.0,
            pressure: 1.0,
            t: 0.1,
        },
    ];
    t.apply_stroke(&b, &stroke_instances(&b, &samples)).unwrap();
    assert!(
        t.height().versions().count() <= 4,
        "{} pages for one small stroke",
        t.height().versions().count()
    );
    assert!(
        t.height().versions().bytes() <= 16 << 20,
        "{} bytes of pages",
        t.height().versions().bytes()
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn level_pulls_to_the_height_under_the_first_sample() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let init = initial(&d);
    let mut t = Document::from_heights(&gpu, d, &init, &NoiseTables::default()).unwrap();
    let b = BrushSettings {
        radius: 40.0,
        inner_radius: 20.0,
        strength: 1.0,
        ..BrushSettings::new(BrushType::Level)
    };
    let samples = [
        StrokeSample {
            x: 128.0,
            y: 128.0,
            pressure: 1.0,
            t: 0.0,
        },
        StrokeSample {
            x: 140.0,
            y: 128.0,
            pressure: 1.0,
            t: 0.1,
        },
    ];
    t.apply_stroke(&b, &stroke_instances(&b, &samples)).unwrap();
    let target = init[128 * 256 + 128];
    let h = t.to_dense().unwrap();
    for y in 110usize..146 {
        for x in 110usize..146 {
            if (x as f32 - 128.0).hypot(y as f32 - 128.0) <= 19.0 {
                assert!(
                    (h[y * 256 + x] - target).abs() < 1e-6,
                    "({x}, {y}) = {} not levelled to {target}",
                    h[y * 256 + x]
                );
            }
        }
    }
    // Far outside the brush nothing moves.
    assert_eq!(h[10 * 256 + 10], init[10 * 256 + 10]);
    assert_no_validation_messages(&gpu);
}

#[test]
fn smooth_lowers_and_contrast_raises_roughness_across_pages() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let init = initial(&d);
    // Roughness: sum of |discrete Laplacian| around the page corner (128, 128).
    let roughness = |h: &[f32]| -> f32 {
        let at = |x: usize, y: usize| h[y * 256 + x];
        let mut sum = 0.0;
        for y in 110..146 {
            for x in 110..146 {
                sum += (4.0 * at(x, y) - at(x - 1, y) - at(x + 1, y) - at(x, y - 1) - at(x, y + 1))
                    .abs();
            }
        }
        sum
    };
    let before = roughness(&init);
    let samples = [StrokeSample {
        x: 128.0,
        y: 128.0,
        pressure: 1.0,
        t: 0.0,
    }];
    for (brush, smoother) in [(BrushType::Smooth, true), (BrushType::Contrast, false)] {
        let mut t = Document::from_heights(&gpu, d, &init, &NoiseTables::default()).unwrap();
        let b = BrushSettings {
            radius: 40.0,
            inner_radius: 30.0,
            strength: 0.9,
            ..BrushSettings::new(brush)
        };
        t.apply_stroke(&b, &stroke_instances(&b, &samples)).unwrap();
        let after = roughness(&t.to_dense().unwrap());
        if smoother {
            assert!(
                after < 0.8 * before,
                "smooth: roughness {before} -> {after}"
            );
        } else {
            assert!(
                after > 1.2 * before,
                "contrast: roughness {before} -> {after}"
            );
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn directional_noise_elongates_features_along_its_axis() {
    let gpu = gpu();
    let d = doc(384, 256, 128);
    let flat = vec![0.0f32; 384 * 256];
    // A horizontal stroke; compression along the stroke (angle 0) stretches features along x.
    let samples = [
        StrokeSample {
            x: 40.0,
            y: 128.0,
            pressure: 1.0,
            t: 0.0,
        },
        StrokeSample {
            x: 340.0,
            y: 128.0,
            pressure: 1.0,
            t: 1.0,
        },
    ];
    let noise = NoiseSettings {
        scale: 1.0 / 16.0,
        seed: 3,
        octaves: 4,
        ..NoiseSettings::new(NoiseKind::Fbm)
    };
    let base = BrushSettings {
        radius: 60.0,
        inner_radius: 50.0,
        strength: 0.2,
        spacing: 0.5,
        noise,
        ..BrushSettings::new(BrushType::Directional)
    };
    // Mean |dh/dx| and |dh/dy| over the stroke's core.
    let slopes = |h: &[f32]| {
        let (mut sx, mut sy) = (0.0f64, 0.0f64);
        for y in 100..156 {
            for x in 100..300 {
                sx += f64::from((h[y * 384 + x + 1] - h[y * 384 + x]).abs());
                sy += f64::from((h[(y + 1) * 384 + x] - h[y * 384 + x]).abs());
            }
        }
        (sx, sy)
    };
    let run = |b: BrushSettings| {
        let mut t = Document::from_heights(&gpu, d, &flat, &NoiseTables::default()).unwrap();
        t.apply_stroke(&b, &stroke_instances(&b, &samples)).unwrap();
        t.to_dense().unwrap()
    };
    let (sx, sy) = slopes(&run(BrushSettings {
        dir_angle_deg: 0.0,
        dir_ratio: 4.0,
        ..base.clone()
    }));
    assert!(
        sx * 2.0 < sy,
        "compressed along x: |dh/dx| {sx} should be well below |dh/dy| {sy}"
    );
    let (sx, sy) = slopes(&run(BrushSettings {
        dir_angle_deg: 90.0,
        dir_ratio: 4.0,
        ..base.clone()
    }));
    assert!(
        sy * 2.0 < sx,
        "compressed along y: |dh/dy| {sy} should be well below |dh/dx| {sx}"
    );
    // Ratio 1 is the plain noise brush, exactly.
    let plain = run(BrushSettings {
        brush: BrushType::Noise,
        ..base.clone()
    });
    assert_eq!(
        run(BrushSettings {
            dir_ratio: 1.0,
            ..base.clone()
        }),
        plain
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn undo_budget_forgets_the_oldest_strokes() {
    let gpu = gpu();
    let d = doc(512, 128, 128);
    let mut t = Document::new(&gpu, d, 0.0, &NoiseTables::default()).unwrap();
    // One 128x128 page version: two r32f images.
    let page_bytes = 128 * 128 * 4 * 2;
    t.set_undo_budget(2 * page_bytes);
    let b = BrushSettings {
        radius: 10.0,
        ..BrushSettings::new(BrushType::Raise)
    };
    for x in [20.0, 30.0, 40.0, 50.0] {
        // Every stroke touches page (0, 0) only; from the second on its step holds a version.
        let s = [StrokeSample {
            x,
            y: 60.0,
            pressure: 1.0,
            t: 0.0,
        }];
        t.apply_stroke(&b, &stroke_instances(&b, &s)).unwrap();
    }
    assert!(
        t.undo_bytes() <= 2 * page_bytes,
        "{} bytes held",
        t.undo_bytes()
    );
    assert!(t.undo_steps() < 4, "the oldest steps were forgotten");
    let steps = t.undo_steps();
    for _ in 0..steps {
        assert!(t.undo().unwrap());
    }
    assert!(!t.undo().unwrap());
    assert_no_validation_messages(&gpu);
}

/// Five corner strokes of pointwise, level and multi-tap brushes, for the queue tests.
fn queued_strokes() -> Vec<(BrushSettings, Vec<StrokeSample>)> {
    brushes()
        .into_iter()
        .filter(|b| {
            matches!(
                b.brush,
                BrushType::Raise | BrushType::Level | BrushType::Smooth | BrushType::Noise
            )
        })
        .take(5)
        .map(|b| (b, corner_stroke()))
        .collect()
}

#[test]
fn budgeted_queue_gives_the_same_heights_as_draining() {
    let gpu = gpu();
    let d = doc(300, 260, 128);
    let strokes = queued_strokes();
    let drained = run_gpu(&gpu, d, 4, &strokes);

    let mut t = Document::from_heights(&gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
    t.brushes.set_batch(4).unwrap();
    for (b, samples) in &strokes {
        t.enqueue_stroke_part(b, &stroke_instances(b, samples), false)
            .unwrap();
    }
    assert_eq!(t.brushes.pending_strokes(), strokes.len());
    // A budget far below one wave's time: every call runs exactly one unit of work.
    let mut calls = 0;
    while t.brushes.pending_strokes() > 0 {
        let report = t.pump(Some(1e-9)).unwrap();
        assert_eq!(
            report.units, 1,
            "one wave or instance per call under a tiny budget"
        );
        calls += 1;
        assert!(calls < 10_000, "the queue must drain");
    }
    assert!(calls > strokes.len(), "strokes were split across calls");
    assert_eq!(
        t.to_dense().unwrap(),
        drained,
        "budgeted pumping changed the heights"
    );
    assert_no_validation_messages(&gpu);
}

/// With frames in flight the pump leaves its waves running (no wait) and paces itself by the
/// time per unit earlier waves measured: the heights equal a drained queue's for pointwise,
/// level and multi-tap brushes, an undo in between is exact, and validation stays clean.
#[test]
fn detached_pumps_give_the_same_heights_as_draining() {
    let gpu = gpu();
    let d = doc(300, 260, 128);
    let strokes = queued_strokes();
    let drained = run_gpu(&gpu, d, 4, &strokes);

    let mut t = Document::from_heights(&gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
    t.brushes.set_batch(4).unwrap();
    t.set_frames_in_flight(true);
    let (mut calls, mut units, mut measured) = (0, 0, 0.0);
    let mut pump_all = |t: &mut Document| {
        while t.brushes.pending_strokes() > 0 {
            let report = t.pump(Some(0.05)).unwrap();
            assert!(report.units >= 1);
            units += report.units;
            measured += report.gpu_ns;
            calls += 1;
            assert!(calls < 10_000, "the queue must drain");
        }
    };
    // A stroke undone while its last waves may still run.
    let (extra_brush, extra) = &strokes[0];
    t.enqueue_stroke_part(extra_brush, &stroke_instances(extra_brush, extra), false)
        .unwrap();
    pump_all(&mut t);
    assert!(t.undo().unwrap());
    for (b, samples) in &strokes {
        t.enqueue_stroke_part(b, &stroke_instances(b, samples), false)
            .unwrap();
    }
    pump_all(&mut t);
    assert!(units > 0 && calls > 1);
    if gpu.info().timestamp_valid_bits > 0 {
        assert!(
            measured > 0.0,
            "later pumps report the GPU time of earlier waves"
        );
    }
    t.set_frames_in_flight(false);
    let now = t.to_dense().unwrap();
    let differ = now.iter().zip(&drained).filter(|(a, b)| a != b).count();
    assert_eq!(differ, 0, "detached pumping changed {differ} heights");
    assert_no_validation_messages(&gpu);
}

/// Tile culling (the default from batch 8) changes no height: every pointwise brush, full and
/// partial batches, both formats, pages smaller than the brush and larger.
#[test]
fn tile_culling_changes_no_height() {
    let gpu = gpu();
    for d in [doc(300, 260, 128), doc_r16(300, 260, 256)] {
        for b in brushes().iter().filter(|b| !b.brush.is_multitap()) {
            let strokes = [(b.clone(), corner_stroke())];
            let run = |cull: bool, batch: usize| {
                let mut t =
                    Document::from_heights(&gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
                t.brushes.set_batch(batch).unwrap();
                t.brushes.set_tile_culling(cull);
                for (brush, samples) in &strokes {
                    t.apply_stroke(brush, &stroke_instances(brush, samples))
                        .unwrap();
                }
                t.to_dense().unwrap()
            };
            for batch in [8, 13, 32] {
                let reference = run(false, batch);
                assert!(max_diff(&reference, &initial(&d)) > 0.0, "{:?}", b.brush);
                assert_eq!(
                    run(true, batch),
                    reference,
                    "{:?} {:?}: culling at batch {batch} changed heights",
                    b.brush,
                    d.format
                );
            }
        }
    }
    assert_no_validation_messages(&gpu);
}

/// In-place pointwise passes give the ping-pong heights bit for bit, in both formats, mixed
/// with ping-pong strokes and multi-tap brushes on the same page versions, and undo exactly.
#[test]
fn in_place_passes_equal_ping_pong() {
    let gpu = gpu();
    for d in [doc(300, 260, 128), doc_r16(300, 260, 128)] {
        let all = brushes();
        let smooth = all
            .iter()
            .find(|b| b.brush == BrushType::Smooth)
            .expect("a smooth brush")
            .clone();
        for b in all.iter().filter(|b| !b.brush.is_multitap()) {
            // Pointwise, smooth over it, pointwise back: the second pointwise stroke runs on
            // versions whose back images the first one left stale.
            let strokes = [
                (b.clone(), corner_stroke()),
                (smooth.clone(), corner_stroke()),
                (
                    BrushSettings {
                        strength: -0.07,
                        ..b.clone()
                    },
                    corner_stroke().into_iter().rev().collect(),
                ),
            ];
            let run = |modes: [bool; 3], batch: usize| {
                let mut t =
                    Document::from_heights(&gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
                t.brushes.set_batch(batch).unwrap();
                let mut states = vec![t.to_dense().unwrap()];
                for ((brush, samples), in_place) in strokes.iter().zip(modes) {
                    t.brushes.set_in_place(in_place);
                    t.apply_stroke(brush, &stroke_instances(brush, samples))
                        .unwrap();
                    states.push(t.to_dense().unwrap());
                }
                // Undo walks back through every state.
                for want in states.iter().rev().skip(1) {
                    assert!(t.undo().unwrap());
                    assert_eq!(&t.to_dense().unwrap(), want, "{:?}: undo", b.brush);
                }
                states
            };
            // A stroke painted in two parts (one undo step, the second part writing into the
            // versions the first made), switching paths between them.
            let parts = |first_in_place: bool| {
                let mut t =
                    Document::from_heights(&gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
                let inst = stroke_instances(b, &corner_stroke());
                let (p1, p2) = inst.split_at(inst.len() / 2);
                t.brushes.set_in_place(first_in_place);
                t.enqueue_stroke_part(b, p1, false).unwrap();
                t.pump(None).unwrap();
                t.brushes.set_in_place(!first_in_place);
                t.enqueue_stroke_part(b, p2, true).unwrap();
                t.pump(None).unwrap();
                t.to_dense().unwrap()
            };
            assert_eq!(
                parts(true),
                parts(false),
                "{:?}: parts in place then not",
                b.brush
            );
            let ping_pong = run([false; 3], 4);
            assert!(
                max_diff(&ping_pong[1], &ping_pong[0]) > 0.0,
                "{:?}: the stroke changed nothing",
                b.brush
            );
            for (modes, batch) in [
                ([true; 3], 4),
                ([true, false, true], 1),
                ([false, true, true], 16),
            ] {
                assert_eq!(
                    run(modes, batch),
                    ping_pong,
                    "{:?} {:?}: in-place {modes:?} at batch {batch} differs",
                    b.brush,
                    d.format
                );
            }
        }
    }
    assert_no_validation_messages(&gpu);
}

fn doc_r16(width: u32, height: u32, page_size: u32) -> DocumentDesc {
    DocumentDesc {
        format: HeightFormat::R16,
        height_min: -0.5,
        height_max: 1.5,
        ..doc(width, height, page_size)
    }
}

#[test]
fn r16_documents_match_the_cpu_twin_and_do_not_depend_on_batching_or_paging() {
    let gpu = gpu();
    let cpu_tables = Arc::new(CpuTables::new(&NoiseTables::default()));
    let d = doc_r16(300, 260, 128);
    // One r16 level of this range, the twins' tolerance (GPU division and unorm conversion may
    // land a value one level away).
    let quantum = (d.height_max - d.height_min) / 65535.0;
    for b in brushes() {
        let strokes = vec![(b.clone(), corner_stroke())];
        let got = run_gpu(&gpu, d, 16, &strokes);
        let mut cpu = CpuTerrain::from_heights(d, &initial(&d), cpu_tables.clone());
        cpu.apply_stroke(&b, &stroke_instances(&b, &strokes[0].1));
        let diff = max_diff(&got, &cpu.to_dense());
        // Contrast amplifies differences between neighbours, so a one-level difference can grow
        // by a level or two over a stroke.
        let levels = if b.brush == BrushType::Contrast {
            4.0
        } else {
            1.0
        };
        assert!(
            diff <= quantum * levels * 1.01,
            "{:?} {:?}: r16 max |gpu - cpu| = {diff} (> {levels} levels of {quantum})",
            b.brush,
            b.noise.kind
        );
        assert_eq!(
            run_gpu(&gpu, d, 1, &strokes),
            got,
            "{:?}: r16 batch 1 and 16 differ",
            b.brush
        );
        assert_eq!(
            run_gpu(&gpu, doc_r16(300, 260, 512), 16, &strokes),
            got,
            "{:?}: r16 paging changed heights",
            b.brush
        );
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn r16_quantizes_to_levels_and_clamps_to_the_range() {
    let gpu = gpu();
    let d = doc_r16(256, 256, 128);
    let level = |h: f32| (h - d.height_min) / (d.height_max - d.height_min) * 65535.0;
    // Initial heights beyond the range on both sides, and between levels.
    let init: Vec<f32> = (0..256 * 256)
        .map(|i| -2.0 + 5.0 * (i as f32 / 65535.0))
        .collect();
    let mut t = Document::from_heights(&gpu, d, &init, &NoiseTables::default()).unwrap();
    let loaded = t.to_dense().unwrap();
    for (h, want) in loaded.iter().zip(&init) {
        assert!(
            *h >= d.height_min && *h <= d.height_max,
            "{h} outside the range"
        );
        assert!(
            (level(*h) - level(*h).round()).abs() < 1e-2,
            "{h} is not an r16 level"
        );
        assert!(
            (h - want.clamp(d.height_min, d.height_max)).abs()
                <= 0.51 * (d.height_max - d.height_min) / 65535.0 + 1e-6,
            "{want} loaded as {h}"
        );
    }
    // A strong raise pins the brush's core at height_max, never above.
    let b = BrushSettings {
        radius: 40.0,
        inner_radius: 20.0,
        strength: 10.0,
        ..BrushSettings::new(BrushType::Raise)
    };
    let s = [StrokeSample {
        x: 60.0,
        y: 60.0,
        pressure: 1.0,
        t: 0.0,
    }];
    t.apply_stroke(&b, &stroke_instances(&b, &s)).unwrap();
    let h = t.to_dense().unwrap();
    assert_eq!(h[60 * 256 + 60], d.height_max);
    assert!(h.iter().all(|v| *v <= d.height_max && *v >= d.height_min));
    // Far from the brush the stored levels are untouched.
    assert_eq!(h[250 * 256 + 250], loaded[250 * 256 + 250]);
    assert_no_validation_messages(&gpu);
}

#[test]
fn stamps_land_texel_for_texel_and_rotate() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let values: Vec<f32> = (0..16 * 16).map(|i| i as f32).collect();
    let stamp = Arc::new(Stamp {
        width: 16,
        height: 16,
        values,
        source: None,
    });
    // Radius 32, inner 31 (full strength over the stamp), stamp side 0.25 of the diameter = 16
    // texels: stamp texel (k + 7, j + 7) lands on document texel (100 + k, 100 + j).
    let base = BrushSettings {
        radius: 32.0,
        inner_radius: 31.0,
        strength: 0.5,
        stamp: Some(stamp.clone()),
        stamp_scale: 0.25,
        stamp_follow: false,
        ..BrushSettings::new(BrushType::Stamp)
    };
    let at = [StrokeSample {
        x: 100.5,
        y: 100.5,
        pressure: 1.0,
        t: 0.0,
    }];
    for (angle, rotated) in [(0.0f32, false), (90.0, true)] {
        let b = BrushSettings {
            dir_angle_deg: angle,
            ..base.clone()
        };
        let mut t = Document::new(&gpu, d, 0.0, &NoiseTables::default()).unwrap();
        t.apply_stroke(&b, &stroke_instances(&b, &at)).unwrap();
        let h = t.to_dense().unwrap();
        for j in -7i32..=8 {
            for k in -7i32..=8 {
                // Rotating by 90 degrees maps document (k, j) to stamp (j, -k) about the centre.
                let (sx, sy) = if rotated {
                    (j + 7, 8 - k)
                } else {
                    (k + 7, j + 7)
                };
                let want = 0.5 * stamp.values[(sy * 16 + sx) as usize];
                let got = h[((100 + j) * 256 + 100 + k) as usize];
                assert!(
                    (got - want).abs() < 1e-4,
                    "angle {angle}: texel ({k}, {j}) = {got}, want {want}"
                );
            }
        }
        assert_eq!(h[10 * 256 + 10], 0.0, "outside the stamp nothing is added");
    }
    assert_no_validation_messages(&gpu);
}

/// Stamps of radius 256 and more paint four texels an invocation (brush::gpu): heights equal
/// one texel an invocation's bit for bit, and the CPU twin's, and do not depend on batching,
/// paging, culling or the in-place path, in both formats (rectangles of any height: their last
/// 64-row tiles are cut short).
#[test]
fn large_stamps_paint_as_the_twin_at_every_batch_and_page_size() {
    let gpu = gpu();
    let cpu_tables = Arc::new(CpuTables::new(&NoiseTables::default()));
    // The stamp of brushes(), at a radius that takes the wide kernel.
    let stamp = brushes()
        .into_iter()
        .find(|b| b.brush == BrushType::Stamp)
        .expect("a stamp brush");
    let b = BrushSettings {
        radius: 260.0,
        inner_radius: 40.0,
        ..stamp
    };
    let samples: Vec<StrokeSample> = (0..6)
        .map(|i| {
            let t = i as f32 / 5.0;
            StrokeSample {
                x: 230.0 + 250.0 * t,
                y: 250.0 + 90.0 * t,
                pressure: 0.5 + 0.5 * t,
                t,
            }
        })
        .collect();
    let instances = stroke_instances(&b, &samples);
    for d in [doc(730, 610, 128), doc_r16(730, 610, 128)] {
        let run = |d: DocumentDesc, batch: usize, in_place: bool, wide: bool| {
            let mut t =
                Document::from_heights(&gpu, d, &initial(&d), &NoiseTables::default()).unwrap();
            t.brushes.set_batch(batch).unwrap();
            t.brushes.set_in_place(in_place);
            t.brushes.set_wide_stamps(wide);
            t.apply_stroke(&b, &instances).unwrap();
            t.to_dense().unwrap()
        };
        let got = run(d, 16, false, true);
        let one_page = DocumentDesc {
            page_size: 1024,
            ..d
        };
        for (other, label) in [
            (run(d, 16, false, false), "one texel an invocation"),
            (run(d, 1, false, false), "one texel an invocation, batch 1"),
            (run(d, 1, false, true), "batch 1"),
            (run(d, 16, true, true), "in place"),
            (run(one_page, 16, false, true), "one page"),
        ] {
            assert_eq!(other, got, "{:?}: {label}", d.format);
        }
        let mut cpu = CpuTerrain::from_heights(d, &initial(&d), cpu_tables.clone());
        cpu.apply_stroke(&b, &instances);
        let want = cpu.to_dense();
        let diff = max_diff(&got, &want);
        // r16: one level of the range, as the twins' other r16 tests.
        let tolerance = if d.format == HeightFormat::R16 {
            (d.height_max - d.height_min) / 65535.0 * 1.01
        } else {
            TOLERANCE
        };
        assert!(
            diff <= tolerance,
            "{:?}: max |gpu - cpu| = {diff}",
            d.format
        );
        assert!(
            max_diff(&got, &initial(&d)) > 1e-3,
            "{:?}: the stroke changed nothing",
            d.format
        );
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_stroke_painted_live_equals_the_same_stroke_replayed_and_undoes_in_one_step() {
    use scarp::journal::Step;
    use scarp::session::LiveStroke;
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let d = doc(300, 260, 128);
    let start = initial(&d);
    let samples: Vec<StrokeSample> = (0..24)
        .map(|i| {
            let t = i as f32 / 23.0;
            StrokeSample {
                x: 30.0 + 240.0 * t,
                y: 60.0 + 140.0 * t + 30.0 * (t * 9.0).sin(),
                pressure: 0.4 + 0.6 * t,
                t: t * 0.4,
            }
        })
        .collect();
    for brush in brushes()
        .into_iter()
        .filter(|b| b.brush != BrushType::Stamp)
    {
        let mut live = Document::from_heights(&gpu, d, &start, &tables).unwrap();
        let mut stroke = LiveStroke::new(brush.clone());
        for s in &samples {
            stroke
                .add(&mut live, &mut scarp::edit::Tools::default(), *s)
                .unwrap();
            // A small budget leaves parts queued and strokes half-applied between samples.
            live.pump(Some(0.05)).unwrap();
        }
        let (step, _) = stroke
            .finish(&mut live, &mut scarp::edit::Tools::default())
            .unwrap();
        let Some(Step::Stroke {
            samples: recorded, ..
        }) = step
        else {
            panic!("{}: no stroke step", brush.brush.name());
        };
        // A ramp keeps its ends; every other stroke its samples.
        if brush.brush == BrushType::Ramp {
            assert_eq!(recorded, [samples[0], samples[samples.len() - 1]]);
        } else {
            assert_eq!(recorded, samples);
        }
        let painted = live.to_dense().unwrap();
        assert_eq!(live.undo_steps(), 1, "{}", brush.brush.name());

        let mut replay = Document::from_heights(&gpu, d, &start, &tables).unwrap();
        replay
            .apply_stroke(&brush, &stroke_instances(&brush, &recorded))
            .unwrap();
        let replayed = replay.to_dense().unwrap();
        assert!(
            painted == replayed,
            "{}: painted differs from replayed by {}",
            brush.brush.name(),
            max_diff(&painted, &replayed)
        );
        assert!(live.undo().unwrap());
        assert!(live.to_dense().unwrap() == start, "{}", brush.brush.name());
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_document_holds_named_fields_on_one_page_grid() {
    let gpu = gpu();
    let d = doc(300, 200, 128);
    let mut t = Document::new(&gpu, d, 0.25, &NoiseTables::new(2009)).unwrap();
    let mask = t.store.add_field("mask", d, 1.0).unwrap();
    assert_eq!(
        mask.versions().count(),
        0,
        "a new field is flat and holds no memory"
    );
    let e = match t.store.add_field("mask", d, 0.0) {
        Ok(_) => panic!("a second field of one name"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("already"), "{e}");
    let other = DocumentDesc { width: 299, ..d };
    assert!(t.store.add_field("water", other, 0.0).is_err());
    assert_eq!(t.store.names().collect::<Vec<_>>(), ["height", "mask"]);
    // Painting the height field leaves the other field as it was.
    let b = BrushSettings::new(BrushType::Raise);
    t.apply_stroke(&b, &stroke_instances(&b, &corner_stroke()))
        .unwrap();
    assert!(t.height().versions().count() > 0);
    let mask = t.store.field("mask").unwrap();
    assert_eq!(mask.versions().count(), 0);
    assert!(mask.to_dense().unwrap().iter().all(|&v| v == 1.0));
    assert_no_validation_messages(&gpu);
}

/// A long diagonal stroke crossing many pages of a 128-texel grid.
fn diagonal_stroke() -> Vec<StrokeSample> {
    (0..24)
        .map(|i| {
            let t = i as f32 / 23.0;
            StrokeSample {
                x: 40.0 + 560.0 * t,
                y: 60.0 + 460.0 * t + 40.0 * (t * 7.0).sin(),
                pressure: 0.5 + 0.5 * t,
                t,
            }
        })
        .collect()
}

/// Every brush, then undo and redo, step by step: the dense field after each step.
fn brushes_undo_redo(t: &mut Document) -> Vec<Vec<f32>> {
    let mut out = Vec::new();
    for b in brushes() {
        let b = BrushSettings { radius: 40.0, ..b };
        t.apply_stroke(&b, &stroke_instances(&b, &diagonal_stroke()))
            .unwrap();
        out.push(t.to_dense().unwrap());
    }
    for _ in 0..4 {
        assert!(t.undo().unwrap());
        out.push(t.to_dense().unwrap());
    }
    for _ in 0..3 {
        assert!(t.redo().unwrap());
        out.push(t.to_dense().unwrap());
    }
    while t.undo().unwrap() {}
    out.push(t.to_dense().unwrap());
    out
}

#[test]
fn every_brush_undo_and_redo_under_a_budget_of_a_few_pages_equal_the_unlimited_run() {
    let gpu = gpu();
    let d = doc(640, 576, 128); // 5 x 5 pages of 128 KiB (image pairs)
    let pair = 128 * 128 * 4 * 2;
    let tables = NoiseTables::default();
    let mut free = Document::from_heights(&gpu, d, &initial(&d), &tables).unwrap();
    let want = brushes_undo_redo(&mut free);

    let dir = tempfile::tempdir().unwrap();
    // A smooth instance of radius 40 writes up to 2 x 2 pages and reads their 4 x 4
    // neighbourhood: 16 pages is the least one wave needs. Host memory holds 6 pages; the rest
    // of the 25 pages, their working versions and the undo versions go to the page file.
    let budgets = Budgets {
        gpu: Some(16 * pair),
        host: Some(6 * pair / 2),
        spill_dir: Some(dir.path().to_path_buf()),
    };
    let mut tight =
        Document::from_heights_within(&gpu, d, &initial(&d), budgets.clone(), &tables).unwrap();
    let got = brushes_undo_redo(&mut tight);
    for (step, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g == w, "step {step}: heights differ under the budget");
    }
    let m = tight.memory();
    println!("{}", m.line());
    assert!(m.peak_gpu_bytes <= 16 * pair, "{}", m.line());
    assert!(
        m.traffic.page_outs > 0 && m.traffic.page_ins > 0,
        "{}",
        m.line()
    );
    assert!(
        m.traffic.spills > 0,
        "pages reached the page file: {}",
        m.line()
    );
    assert_eq!(m.budgets, budgets);
    assert_no_validation_messages(&gpu);

    // With frames in flight, page-ins are submitted detached (not waited for), their staging
    // parts busy until they finish: every step equals the unlimited run's all the same, and
    // synchronization validation stays clean.
    let mut detached =
        Document::from_heights_within(&gpu, d, &initial(&d), budgets.clone(), &tables).unwrap();
    detached.set_frames_in_flight(true);
    let got = brushes_undo_redo(&mut detached);
    for (step, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g == w, "step {step}: heights differ with detached page-ins");
    }
    let m = detached.memory();
    assert!(m.peak_gpu_bytes <= 16 * pair, "{}", m.line());
    assert!(m.traffic.page_ins > 0, "{}", m.line());
    detached.set_frames_in_flight(false);
    assert_no_validation_messages(&gpu);
}

/// With frames in flight the image pairs of new pages are made ahead, on a thread of their own:
/// once the first stroke has created pairs on the painting thread, the next strokes' new pages
/// take pairs made ahead and create none there, and the heights equal those of a document
/// without frames in flight bit for bit.
#[test]
fn pairs_made_ahead_serve_new_pages_with_frames_in_flight() {
    let gpu = gpu();
    // 16 x 4 pages of 128 KiB pairs: 16 pairs are made ahead at a time.
    let d = doc(2048, 512, 128);
    let tables = NoiseTables::default();
    let mut b = BrushSettings::new(BrushType::Raise);
    b.radius = 40.0;
    b.strength = 0.5;
    let stroke = |t: &mut Document, x: f32| {
        let samples: Vec<StrokeSample> = (0..4)
            .map(|i| StrokeSample {
                x: x + 10.0 * i as f32,
                y: 250.0,
                pressure: 1.0,
                t: i as f32,
            })
            .collect();
        t.apply_stroke(&b, &stroke_instances(&b, &samples)).unwrap();
    };
    let xs = [200.0, 700.0, 1200.0, 1700.0];
    let mut plain = Document::new(&gpu, d, 0.0, &tables).unwrap();
    for x in xs {
        stroke(&mut plain, x);
    }
    let mut live = Document::new(&gpu, d, 0.0, &tables).unwrap();
    live.set_frames_in_flight(true);
    stroke(&mut live, xs[0]);
    let first = live.memory().traffic;
    assert!(first.pairs_made > 0, "{first:?}");
    // Wait for the pairs asked for (an empty page-in takes what the thread has made).
    common::poll_until("16 pairs made ahead", || {
        live.store.height_mut().bring_in(&[], &[], 0).unwrap();
        live.memory().traffic.pairs_made_ahead >= 16
    });
    for &x in &xs[1..] {
        stroke(&mut live, x);
    }
    let after = live.memory().traffic;
    assert_eq!(
        after.pairs_made, first.pairs_made,
        "later strokes' new pages took pairs made ahead: {after:?}"
    );
    live.set_frames_in_flight(false);
    assert!(live.to_dense().unwrap() == plain.to_dense().unwrap());
    drop(live);
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_budget_smaller_than_one_wave_is_a_clear_error() {
    let gpu = gpu();
    let d = doc(640, 576, 128);
    let tables = NoiseTables::default();
    let mut t = Document::from_heights(&gpu, d, &initial(&d), &tables).unwrap();
    t.set_budgets(Budgets {
        gpu: Some(3 * 128 * 128 * 4 * 2),
        ..Budgets::default()
    });
    let b = BrushSettings {
        radius: 40.0,
        ..BrushSettings::new(BrushType::Smooth)
    };
    let e = t
        .apply_stroke(&b, &stroke_instances(&b, &diagonal_stroke()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("budget") && e.contains("too small"), "{e}");
    assert_no_validation_messages(&gpu);
}

/// The coarse level read back equals the CPU twin's reduction of the dense field.
fn assert_coarse_matches(t: &mut Document, label: &str) {
    let d = *t.desc();
    let dense = t.to_dense().unwrap();
    let field = t.store.height_mut();
    let got = field
        .coarse()
        .unwrap()
        .expect("a coarse level")
        .read()
        .unwrap();
    let [cw, _] = scarp::pages::coarse::size_of(&d);
    let mut compared = 0;
    for py in 0..d.pages_y() {
        for px in 0..d.pages_x() {
            let id = PageId { x: px, y: py };
            let want = scarp::pages::coarse::reduce_page(&d, id, &d.page_from_dense(&dense, id));
            let r = d.page_rect(id);
            let bw = (r.width() as u32).div_ceil(scarp::pages::coarse::FACTOR);
            for (k, w) in want.iter().enumerate() {
                let (bx, by) = (k as u32 % bw, k as u32 / bw);
                let cx = r.x0 as u32 / scarp::pages::coarse::FACTOR + bx;
                let cy = r.y0 as u32 / scarp::pages::coarse::FACTOR + by;
                let g = got[(cy * cw + cx) as usize];
                assert_eq!(g, *w, "{label}: coarse texel {cx},{cy}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, got.len(), "{label}: every coarse texel compared");
    // Every pyramid level equals the CPU reduction of the level below.
    let coarse = field.coarse().unwrap().expect("a coarse level");
    let (mut below, [mut w, mut h]) = (got, scarp::pages::coarse::size_of(&d));
    let sizes = scarp::pages::coarse::pyramid_sizes(&d);
    assert_eq!(coarse.pyramid().len(), sizes.len());
    assert_eq!(sizes.last(), Some(&[1, 1]), "{label}: down to one texel");
    for (k, size) in sizes.iter().enumerate() {
        let want = scarp::pages::coarse::reduce_level(&below, w, h);
        let level = coarse.read_pyramid(k + 1).unwrap();
        assert!(level == want, "{label}: pyramid level {}", k + 1);
        (below, [w, h]) = (level, *size);
    }
    // The top texel bounds the whole document and holds its first height.
    let lo = dense.iter().copied().fold(f32::MAX, f32::min);
    let hi = dense.iter().copied().fold(f32::MIN, f32::max);
    assert_eq!(
        [below[0][0], below[0][1], below[0][3]],
        [lo, hi, dense[0]],
        "{label}"
    );
}

#[test]
fn the_coarse_level_follows_small_strokes_across_its_blocks() {
    // Edits refresh only the 64² blocks they wrote: small strokes over block edges, one wave
    // per instance, must leave no block stale.
    let gpu = gpu();
    let tables = NoiseTables::default();
    for format in [HeightFormat::R32f, HeightFormat::R16] {
        let d = DocumentDesc {
            format,
            ..doc(512, 384, 256)
        };
        let mut t = Document::from_heights(&gpu, d, &initial(&d), &tables).unwrap();
        t.brushes.set_batch(1).unwrap();
        assert_coarse_matches(&mut t, &format!("{format:?} initial"));
        let line = |y: f32| -> Vec<StrokeSample> {
            (0..6)
                .map(|i| StrokeSample {
                    x: 50.0 + 30.0 * i as f32,
                    y,
                    pressure: 1.0,
                    t: i as f32,
                })
                .collect()
        };
        for (brush, y) in [(BrushType::Raise, 63.0), (BrushType::Smooth, 131.5)] {
            let b = BrushSettings {
                radius: 6.0,
                inner_radius: 1.0,
                strength: 0.5,
                spacing: 0.5,
                ..BrushSettings::new(brush)
            };
            t.apply_stroke(&b, &stroke_instances(&b, &line(y))).unwrap();
            assert_coarse_matches(&mut t, &format!("{format:?} {brush:?}"));
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn the_coarse_level_equals_a_cpu_reduction_after_edits_undo_and_eviction() {
    let gpu = gpu();
    let tables = NoiseTables::default();
    for format in [HeightFormat::R32f, HeightFormat::R16] {
        // 600 x 500: partial pages and partial 64² blocks at the right and bottom edges.
        let d = DocumentDesc {
            format,
            ..doc(600, 500, 128)
        };
        for budget in [None, Some(16 * 128 * 128 * 4 * 2)] {
            let label = format!("{format:?}, budget {budget:?}");
            let mut t = Document::from_heights_within(
                &gpu,
                d,
                &initial(&d),
                Budgets {
                    gpu: budget,
                    ..Budgets::default()
                },
                &tables,
            )
            .unwrap();
            assert_coarse_matches(&mut t, &format!("{label}, initial"));
            for b in brushes().into_iter().take(6) {
                let b = BrushSettings { radius: 40.0, ..b };
                t.apply_stroke(&b, &stroke_instances(&b, &diagonal_stroke()))
                    .unwrap();
            }
            assert_coarse_matches(&mut t, &format!("{label}, painted"));
            assert!(t.undo().unwrap() && t.undo().unwrap());
            assert_coarse_matches(&mut t, &format!("{label}, undone"));
        }
        // A flat document's coarse level is the flat value everywhere.
        let mut flat = Document::new(&gpu, d, 0.25, &tables).unwrap();
        assert_coarse_matches(&mut flat, &format!("{format:?} flat"));
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn terrace_at_full_strength_puts_heights_on_its_steps() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    // A ramp: heights 0..1 along x.
    let heights: Vec<f32> = (0..d.width * d.height)
        .map(|i| (i % d.width) as f32 / d.width as f32)
        .collect();
    let mut t = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let step = 0.1;
    let brush = BrushSettings {
        brush: BrushType::Terrace,
        radius: 100.0,
        inner_radius: 90.0,
        strength: 1.0,
        terrace_height: step,
        terrace_sharpness: 1.0,
        ..BrushSettings::new(BrushType::Terrace)
    };
    let inst = BrushInstance {
        center: [128.0, 128.0],
        radius: brush.radius,
        inner_radius: brush.inner_radius,
        strength: 1.0,
        ..Default::default()
    };
    t.apply_stroke(&brush, &[inst]).unwrap();
    let got = t.to_dense().unwrap();
    let mut levels = std::collections::BTreeSet::new();
    for y in 100..156u32 {
        for x in 60..196u32 {
            let i = (y * d.width + x) as usize;
            let k = (got[i] / step).round();
            assert!(
                (got[i] - k * step).abs() < 1e-5,
                "({x}, {y}): {} is not on a step of {step}",
                got[i]
            );
            assert!((got[i] - heights[i]).abs() <= step / 2.0 + 1e-5);
            levels.insert(k as i32);
        }
    }
    assert!(levels.len() >= 5, "steps {levels:?}");
    // Outside the brush nothing moves.
    assert_eq!(got[5], heights[5]);
    assert_no_validation_messages(&gpu);
}

/// Rough terrain with distinct heights everywhere: 0.3 + 0.001 x + ripples.
fn rough(d: &DocumentDesc) -> Vec<f32> {
    (0..d.width * d.height)
        .map(|i| {
            let (x, y) = ((i % d.width) as f32, (i / d.width) as f32);
            0.3 + 0.001 * x + 0.04 * (x * 0.21).sin() * (y * 0.17).cos()
        })
        .collect()
}

#[test]
fn flatten_at_full_strength_lays_the_tilted_plane_through_the_first_sample() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let start = rough(&d);
    for tilt in [0.0f32, 40.0, -25.0] {
        let mut t = Document::from_heights(&gpu, d, &start, &NoiseTables::new(2009)).unwrap();
        let brush = BrushSettings {
            brush: BrushType::Flatten,
            radius: 40.0,
            inner_radius: 36.0,
            strength: 1.0,
            spacing: 0.1,
            flatten_tilt: tilt,
            ..BrushSettings::new(BrushType::Flatten)
        };
        // Along +x through three pages: the plane rises `tilt` per 1000 texels along x.
        let samples = [(50.0, 120.0), (130.0, 120.0), (210.0, 120.0)].map(|(x, y)| StrokeSample {
            x,
            y,
            pressure: 1.0,
            t: 0.0,
        });
        t.apply_stroke(&brush, &stroke_instances(&brush, &samples))
            .unwrap();
        let got = t.to_dense().unwrap();
        let h0 = start[(120 * d.width + 50) as usize];
        for y in 100..140u32 {
            for x in 50..=210u32 {
                let want = h0 + tilt / 1000.0 * (x as f32 - 50.0);
                let i = (y * d.width + x) as usize;
                assert!(
                    (got[i] - want).abs() < 1e-5,
                    "tilt {tilt}: ({x}, {y}) is {}, the plane {want}",
                    got[i]
                );
            }
        }
        // Far from the stroke nothing moves.
        let far = (240 * d.width + 10) as usize;
        assert_eq!(got[far], start[far]);
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_ramp_runs_straight_between_the_heights_at_its_ends_and_replays_from_its_journal_step() {
    use scarp::journal::Step;
    use scarp::session::LiveStroke;
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let start = rough(&d);
    let tables = NoiseTables::new(2009);
    let brush = BrushSettings {
        brush: BrushType::Ramp,
        radius: 30.0,
        inner_radius: 26.0,
        strength: 1.0,
        spacing: 0.1,
        ..BrushSettings::new(BrushType::Ramp)
    };
    // Dragged along a wobbly path from A to B: only A and B count.
    let (a, b) = ((40.0f32, 60.0f32), (200.0f32, 190.0f32));
    let samples: Vec<StrokeSample> = (0..=20)
        .map(|i| {
            let t = i as f32 / 20.0;
            StrokeSample {
                x: a.0 + (b.0 - a.0) * t + 25.0 * (t * std::f32::consts::TAU).sin(),
                y: a.1 + (b.1 - a.1) * t,
                pressure: 1.0,
                t,
            }
        })
        .collect();
    let mut live = Document::from_heights(&gpu, d, &start, &tables).unwrap();
    let mut stroke = LiveStroke::new(brush.clone());
    for s in &samples {
        assert_eq!(
            stroke
                .add(&mut live, &mut scarp::edit::Tools::default(), *s)
                .unwrap(),
            0,
            "a ramp paints on release"
        );
    }
    let (step, n) = stroke
        .finish(&mut live, &mut scarp::edit::Tools::default())
        .unwrap();
    assert!(n > 10);
    let got = live.to_dense().unwrap();
    let at =
        |v: &[f32], x: f32, y: f32| v[(y.round() as u32 * d.width + x.round() as u32) as usize];
    let (ha, hb) = (at(&start, a.0, a.1), at(&start, b.0, b.1));
    assert!((ha - hb).abs() > 0.1);
    for i in 0..=16 {
        let t = i as f32 / 16.0;
        let (x, y) = (
            (a.0 + (b.0 - a.0) * t).round(),
            (a.1 + (b.1 - a.1) * t).round(),
        );
        // The plane through A and B sloping along AB, at the texel nearest the line.
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let s = ((x - a.0) * dx + (y - a.1) * dy) / (dx * dx + dy * dy);
        let want = ha + (hb - ha) * s;
        assert!(
            (at(&got, x, y) - want).abs() < 1e-5,
            "({x}, {y}): {} on a ramp of {ha}..{hb} wants {want}",
            at(&got, x, y)
        );
    }
    // Far from the line nothing moves.
    assert_eq!(at(&got, 20.0, 230.0), at(&start, 20.0, 230.0));
    // The journal step replays the same heights.
    let Some(Step::Stroke { samples: ends, .. }) = step else {
        panic!("no stroke step");
    };
    let mut replay = Document::from_heights(&gpu, d, &start, &tables).unwrap();
    replay
        .apply_stroke(&brush, &stroke_instances(&brush, &ends))
        .unwrap();
    assert!(replay.to_dense().unwrap() == got);
    assert_no_validation_messages(&gpu);
}

/// A stroke whose arithmetic overflows f32 leaves each such texel as it was, on the GPU and in
/// the CPU twin alike: the engine never stores NaN or Inf. Heights of 3e38 beside small ones make
/// a smooth stroke's neighbourhood sum overflow over them and along their border; the small
/// heights away from the border are smoothed as ever.
#[test]
fn a_stroke_that_overflows_leaves_those_texels_as_they_were() {
    let gpu = gpu();
    let cpu_tables = Arc::new(CpuTables::new(&NoiseTables::default()));
    let d = doc(256, 256, 128);
    let start: Vec<f32> = (0..256 * 256)
        .map(|i| match i % 256 < 128 {
            true => 3.0e38,
            false => ((i * 7919) % 101) as f32 * 0.01,
        })
        .collect();
    let smooth = BrushSettings {
        radius: 60.0,
        strength: 1.0,
        ..BrushSettings::new(BrushType::Smooth)
    };
    let line = |x0: f32, x1: f32| -> Vec<StrokeSample> {
        (0..8)
            .map(|i| StrokeSample {
                x: x0 + (x1 - x0) * i as f32 / 7.0,
                y: 128.0,
                pressure: 1.0,
                t: i as f32,
            })
            .collect()
    };
    let strokes = [(&smooth, line(100.0, 160.0))];
    let mut t = Document::from_heights(&gpu, d, &start, &NoiseTables::default()).unwrap();
    let mut cpu = CpuTerrain::from_heights(d, &start, cpu_tables);
    for (b, samples) in &strokes {
        let instances = stroke_instances(b, samples);
        t.apply_stroke(b, &instances).unwrap();
        cpu.apply_stroke(b, &instances);
    }
    let got = t.to_dense().unwrap();
    let want = cpu.to_dense();
    assert!(
        got.iter().all(|h| h.is_finite()),
        "the GPU stored a non-finite height"
    );
    assert!(
        want.iter().all(|h| h.is_finite()),
        "the twin holds a non-finite height"
    );
    assert!(max_diff(&got, &want) <= TOLERANCE);
    // Along the border the sums overflowed: those texels kept their heights.
    let at = |v: &[f32], x: usize| v[128 * 256 + x];
    assert_eq!(
        (at(&got, 127), at(&got, 128)),
        (at(&start, 127), at(&start, 128))
    );
    // Away from it the small heights were smoothed.
    assert!(
        (150..158).any(|x| at(&got, x) != at(&start, x)),
        "nothing was smoothed"
    );
    assert_no_validation_messages(&gpu);
}
