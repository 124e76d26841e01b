//! Layers and masks (docs/layers.md): the GPU composite against the CPU twin of the fold, every
//! brush on a layer against the CPU twin of the brushes, the cache below the selected layer,
//! undo and redo of every layer step, and the refusals. Validation on; any message fails.

mod common;

use common::{assert_no_validation_messages, doc, gpu, max_diff, Rng};
use scarp::brush::cpu::CpuTerrain;
use scarp::brush::shared::BrushInstance;
use scarp::brush::stroke::{stroke_instances, StrokeSample};
use scarp::brush::{BrushSettings, BrushType, Falloff};
use scarp::document::Document;
use scarp::journal::Journal;
use scarp::layers::{fold_texel, Changes, LayerFiles, LayerOp, Mode, Part, BASE};
use scarp::noise::{CpuTables, NoiseKind, NoiseSettings, NoiseTables};
use scarp::pages::geometry::{DocumentDesc, HeightFormat};
use std::path::Path;
use std::sync::Arc;

/// Largest relative |GPU - CPU| of the composite accepted for r32f documents (the kernels and
/// the twin use the same operations in the same order, without fused multiply-adds).
const COMPOSITE_TOLERANCE: f32 = 1e-5;
/// Largest |GPU - CPU| of brushes on layers (the brush twins' tolerance, tests/gpu_brush.rs).
const BRUSH_TOLERANCE: f32 = 1e-4;

fn tables() -> NoiseTables {
    NoiseTables::new(1)
}

fn random_grid(rng: &mut Rng, d: &DocumentDesc, lo: f32, hi: f32) -> Vec<f32> {
    (0..d.width * d.height).map(|_| rng.range(lo, hi)).collect()
}

fn write_r32(dir: &Path, name: &str, values: &[f32]) -> String {
    let path = dir.join(name);
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

fn add_op(name: &str, mode: Mode, opacity: f32, files: LayerFiles) -> LayerOp {
    LayerOp::Add {
        name: name.into(),
        mode,
        opacity,
        files,
    }
}

fn set(name: &str, changes: Changes) -> LayerOp {
    LayerOp::Set {
        name: name.into(),
        changes,
    }
}

fn select(name: &str) -> LayerOp {
    LayerOp::Select { name: name.into() }
}

/// A layer's field as a dense grid.
fn field(d: &mut Document, layer: &str, part: Part) -> Vec<f32> {
    d.pump(None).unwrap();
    let i = d.layers().index_of(layer).unwrap();
    let name = d.layers().layers[i].field(part);
    d.store.field(&name).unwrap().to_dense().unwrap()
}

/// The CPU twin of the composite: the base and every layer's fields read back, folded texel by
/// texel in stack order.
fn cpu_composite(d: &mut Document) -> Vec<f32> {
    d.pump(None).unwrap();
    let base = d.base().to_dense().unwrap();
    let layers: Vec<(Mode, f32, [Vec<f32>; 3])> = d
        .layers()
        .layers
        .clone()
        .iter()
        .filter(|l| l.weight() > 0.0)
        .map(|l| {
            let f = Part::ALL.map(|p| d.store.field(&l.field(p)).unwrap().to_dense().unwrap());
            (l.mode, l.weight(), f)
        })
        .collect();
    let desc = *d.desc();
    (0..base.len())
        .map(|i| {
            desc.quantize(fold_texel(
                base[i],
                layers
                    .iter()
                    .map(|(m, w, f)| (*m, *w, [f[0][i], f[1][i], f[2][i]])),
            ))
        })
        .collect()
}

fn max_relative(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / x.abs().max(y.abs()).max(1.0))
        .fold(0.0, f32::max)
}

fn wavy(x0: f32, y0: f32, len: f32) -> Vec<StrokeSample> {
    (0..10)
        .map(|i| {
            let t = i as f32 / 9.0;
            StrokeSample {
                x: x0 + len * t,
                y: y0 + 0.4 * len * t + 9.0 * (t * 7.0).sin(),
                pressure: 0.5 + 0.5 * t,
                t,
            }
        })
        .collect()
}

fn stroke(d: &mut Document, b: &BrushSettings, samples: &[StrokeSample]) {
    d.apply_stroke(b, &stroke_instances(b, samples)).unwrap();
}

fn noise_brush(radius: f32) -> BrushSettings {
    BrushSettings {
        radius,
        strength: 0.4,
        noise: NoiseSettings {
            scale: 1.0 / 40.0,
            seed: 3,
            octaves: 5,
            ..NoiseSettings::new(NoiseKind::Fbm)
        },
        ..BrushSettings::new(BrushType::Noise)
    }
}

#[test]
fn gpu_composite_equals_the_cpu_fold_for_every_mode() {
    let gpu = gpu();
    let dir = tempfile::tempdir().unwrap();
    for format in [HeightFormat::R32f, HeightFormat::R16] {
        // Edge pages are partial (320 = 2.5 pages of 128).
        let desc = DocumentDesc {
            format,
            ..doc(320, 192, 128)
        };
        let mut rng = Rng(17);
        let base = random_grid(&mut rng, &desc, 0.2, 0.8);
        let mut d = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
        for (i, mode) in Mode::ALL.into_iter().enumerate() {
            let files = LayerFiles {
                value: Some(write_r32(
                    dir.path(),
                    &format!("v{i}.r32"),
                    &random_grid(&mut rng, &desc, -0.3, 1.2),
                )),
                alpha: Some(write_r32(
                    dir.path(),
                    &format!("a{i}.r32"),
                    &random_grid(&mut rng, &desc, 0.0, 1.0),
                )),
                mask: Some(write_r32(
                    dir.path(),
                    &format!("m{i}.r32"),
                    &random_grid(&mut rng, &desc, 0.0, 1.0),
                )),
            };
            let opacity = rng.range(0.2, 1.0);
            d.layer_op(&add_op(mode.name(), mode, opacity, files), dir.path())
                .unwrap();
        }
        // A hidden layer folds nothing.
        d.layer_op(
            &add_op("hidden", Mode::Replace, 1.0, LayerFiles::default()),
            dir.path(),
        )
        .unwrap();
        d.layer_op(
            &set(
                "hidden",
                Changes {
                    visible: Some(false),
                    ..Default::default()
                },
            ),
            dir.path(),
        )
        .unwrap();
        let gpu_h = d.to_dense().unwrap();
        let cpu_h = cpu_composite(&mut d);
        match format {
            HeightFormat::R32f => {
                let rel = max_relative(&gpu_h, &cpu_h);
                assert!(rel <= COMPOSITE_TOLERANCE, "relative difference {rel}");
            }
            // Quantized once, at the end: the same level, or one apart where the f32 fold lands
            // on a rounding boundary.
            HeightFormat::R16 => {
                let level = desc.height_range() / 65535.0;
                let diff = max_diff(&gpu_h, &cpu_h);
                assert!(diff <= level * 1.01, "r16 composite off by {diff}");
            }
        }
        // The composite differs from the base: the layers did something.
        assert!(max_diff(&gpu_h, &d.base().to_dense().unwrap()) > 0.05);
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn hiding_a_layer_gives_the_base_and_opacity_scales_an_add_layer() {
    let gpu = gpu();
    let desc = doc(384, 256, 128);
    let mut rng = Rng(5);
    let base = random_grid(&mut rng, &desc, 0.3, 0.5);
    let mut d = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
    let here = Path::new(".");
    d.layer_op(
        &add_op("bumps", Mode::Add, 1.0, LayerFiles::default()),
        here,
    )
    .unwrap();
    d.layer_op(&select("bumps"), here).unwrap();
    stroke(&mut d, &noise_brush(40.0), &wavy(20.0, 30.0, 150.0));
    let full = d.to_dense().unwrap();
    assert!(
        max_diff(&full, &base) > 0.01,
        "the stroke changed the composite"
    );
    assert_eq!(
        d.base().to_dense().unwrap(),
        base,
        "strokes on a layer leave the base"
    );
    d.layer_op(
        &set(
            "bumps",
            Changes {
                opacity: Some(0.5),
                ..Default::default()
            },
        ),
        here,
    )
    .unwrap();
    let half = d.to_dense().unwrap();
    let worst = full
        .iter()
        .zip(&half)
        .zip(&base)
        .map(|((f, h), b)| ((h - b) - 0.5 * (f - b)).abs())
        .fold(0.0, f32::max);
    assert!(
        worst < 1e-6,
        "opacity 0.5 gives half the contribution (off by {worst})"
    );
    d.layer_op(
        &set(
            "bumps",
            Changes {
                visible: Some(false),
                ..Default::default()
            },
        ),
        here,
    )
    .unwrap();
    let hidden = d.to_dense().unwrap();
    assert!(
        hidden
            .iter()
            .zip(&base)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "a hidden layer leaves the base bit for bit"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_stroke_on_layer_3_of_8_composites_as_a_full_recomposite() {
    let gpu = gpu();
    let dir = tempfile::tempdir().unwrap();
    let desc = doc(512, 256, 128);
    let mut rng = Rng(99);
    let base = random_grid(&mut rng, &desc, 0.3, 0.6);
    let mut d = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
    let modes = [Mode::Add, Mode::Max, Mode::Min, Mode::Replace];
    for i in 0..8 {
        let mode = modes[i % 4];
        // Sparse layers: a value file on some, the rest painted.
        let files = LayerFiles {
            value: (i % 3 == 0).then(|| {
                write_r32(
                    dir.path(),
                    &format!("v{i}.r32"),
                    &random_grid(&mut rng, &desc, 0.0, 1.0),
                )
            }),
            ..Default::default()
        };
        d.layer_op(
            &add_op(&format!("l{i}"), mode, rng.range(0.3, 1.0), files),
            dir.path(),
        )
        .unwrap();
        d.layer_op(&select(&format!("l{i}")), dir.path()).unwrap();
        stroke(
            &mut d,
            &noise_brush(30.0),
            &wavy(10.0 + 20.0 * i as f32, 20.0, 120.0),
        );
    }
    d.layer_op(&select("l3"), dir.path()).unwrap();
    d.take_composite_stats();
    stroke(&mut d, &noise_brush(50.0), &wavy(40.0, 40.0, 160.0));
    let cached = d.to_dense().unwrap();
    let stats = d.take_composite_stats();
    assert!(stats.pages > 0 && stats.cache_pages == 0, "{stats:?}");
    // Layers 3..8 are folded from the cache: at most 5 blends per dirty page, not 8.
    assert!(stats.blends <= 5 * stats.pages, "{stats:?}");
    // Selecting the base drops the cache: every page is folded from the base.
    d.layer_op(&select(BASE), dir.path()).unwrap();
    let full = d.to_dense().unwrap();
    assert!(
        cached
            .iter()
            .zip(&full)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "cached and full composites differ (max {})",
        max_diff(&cached, &full)
    );
    let rel = max_relative(&full, &cpu_composite(&mut d));
    assert!(rel <= COMPOSITE_TOLERANCE, "relative difference {rel}");
    assert_no_validation_messages(&gpu);
}

/// The document's state a step leaves: composite, base, and every layer's settings.
fn state(d: &mut Document) -> (Vec<u32>, Vec<u32>, String) {
    let h = d.to_dense().unwrap().iter().map(|v| v.to_bits()).collect();
    let b = d
        .base()
        .to_dense()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    (h, b, format!("{:?}", d.layers()))
}

#[test]
fn undo_and_redo_of_every_layer_step_and_layer_stroke_are_bit_exact() {
    let gpu = gpu();
    let dir = tempfile::tempdir().unwrap();
    let desc = doc(384, 256, 128);
    let mut rng = Rng(3);
    let base = random_grid(&mut rng, &desc, 0.3, 0.6);
    let mut d = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
    let mask = write_r32(
        dir.path(),
        "mask.r32",
        &random_grid(&mut rng, &desc, 0.0, 1.0),
    );
    let raise = BrushSettings {
        radius: 35.0,
        strength: 0.3,
        ..BrushSettings::new(BrushType::Raise)
    };
    let mask_brush = BrushSettings {
        brush: BrushType::Mask,
        radius: 30.0,
        strength: 0.8,
        value: 0.0,
        ..BrushSettings::new(BrushType::Raise)
    };
    enum S {
        Op(LayerOp),
        Stroke(BrushSettings, Vec<StrokeSample>),
    }
    let steps = vec![
        S::Stroke(raise.clone(), wavy(10.0, 10.0, 100.0)),
        S::Op(add_op(
            "a",
            Mode::Add,
            1.0,
            LayerFiles {
                mask: Some(mask),
                ..Default::default()
            },
        )),
        S::Op(select("a")),
        S::Stroke(noise_brush(40.0), wavy(30.0, 20.0, 140.0)),
        S::Op(add_op("b", Mode::Max, 0.8, LayerFiles::default())),
        S::Op(select("b")),
        S::Stroke(raise.clone(), wavy(60.0, 50.0, 90.0)),
        S::Stroke(mask_brush, wavy(70.0, 40.0, 60.0)),
        S::Op(set(
            "b",
            Changes {
                opacity: Some(0.4),
                mode: Some(Mode::Replace),
                rename: Some("b2".into()),
                ..Default::default()
            },
        )),
        S::Op(LayerOp::Move {
            name: "b2".into(),
            index: 0,
        }),
        S::Op(LayerOp::Duplicate {
            name: "a".into(),
            rename: "a copy".into(),
        }),
        S::Op(LayerOp::MergeDown {
            name: "a copy".into(),
        }),
        S::Op(LayerOp::MergeDown { name: "b2".into() }),
        S::Op(select("a")),
        S::Stroke(raise.clone(), wavy(25.0, 70.0, 120.0)),
        S::Op(select(BASE)),
        S::Stroke(raise, wavy(5.0, 90.0, 150.0)),
        S::Op(LayerOp::Delete { name: "a".into() }),
    ];
    let mut states = vec![state(&mut d)];
    for s in &steps {
        match s {
            S::Op(op) => d.layer_op(op, dir.path()).unwrap(),
            S::Stroke(b, samples) => stroke(&mut d, b, samples),
        }
        let now = state(&mut d);
        assert!(
            &now != states.last().unwrap(),
            "every step changes something"
        );
        states.push(now);
    }
    for i in (0..steps.len()).rev() {
        assert!(d.undo().unwrap());
        assert!(state(&mut d) == states[i], "undo back to step {i}");
    }
    assert!(!d.undo().unwrap());
    for (i, expected) in states.iter().enumerate().skip(1) {
        assert!(d.redo().unwrap());
        assert!(state(&mut d) == *expected, "redo to step {i}");
    }
    assert_no_validation_messages(&gpu);
}

/// The CPU twin of painting one layer: the brush twins on V, A and M as the document routes a
/// stroke (docs/layers.md), then the fold.
struct CpuLayer {
    mode: Mode,
    parts: [CpuTerrain; 3],
}

fn level(
    b: &BrushSettings,
    full: bool,
    instances: &[BrushInstance],
) -> (BrushSettings, Vec<BrushInstance>) {
    let mut b = b.clone();
    b.brush = BrushType::Level;
    let mut inst = instances.to_vec();
    if full {
        b.strength = 1.0;
        inst.iter_mut().for_each(|i| i.strength = 1.0);
    }
    (b, inst)
}

impl CpuLayer {
    /// `composite_target`: level's target; `plane`: flatten's and ramp's (both from the
    /// composite before the stroke).
    fn paint(
        &mut self,
        b: &BrushSettings,
        instances: &[BrushInstance],
        composite_target: f32,
        plane: Option<scarp::brush::Plane>,
    ) {
        let [v, a, m] = &mut self.parts;
        match b.brush {
            BrushType::Mask => {
                let (lb, li) = level(b, false, instances);
                m.apply_stroke_toward(&lb, &li, Some(b.value));
            }
            BrushType::Erase => {
                let (lb, li) = level(b, false, instances);
                if self.mode == Mode::Add {
                    v.apply_stroke_toward(&lb, &li, Some(0.0));
                }
                a.apply_stroke_toward(&lb, &li, Some(0.0));
            }
            _ => {
                if b.brush.is_plane() {
                    v.apply_stroke_to_plane(b, instances, plane);
                } else {
                    v.apply_stroke_toward(b, instances, Some(composite_target));
                }
                if self.mode != Mode::Add {
                    let (lb, li) = level(b, true, instances);
                    a.apply_stroke_toward(&lb, &li, Some(1.0));
                }
            }
        }
    }
}

#[test]
fn every_brush_on_a_layer_matches_its_cpu_twin() {
    let gpu = gpu();
    let desc = doc(384, 256, 128);
    let cpu_tables = Arc::new(CpuTables::new(&tables()));
    let mut rng = Rng(11);
    let base: Vec<f32> = (0..desc.width * desc.height)
        .map(|i| 0.3 + 0.001 * (i % desc.width) as f32 + rng.range(0.0, 0.02))
        .collect();
    let base_brush = BrushSettings {
        radius: 28.0,
        inner_radius: 4.0,
        strength: 0.35,
        spacing: 0.2,
        ..BrushSettings::new(BrushType::Raise)
    };
    let mut brushes: Vec<BrushSettings> = [
        BrushType::Raise,
        BrushType::Lower,
        BrushType::Level,
        BrushType::Smooth,
        BrushType::Contrast,
        BrushType::Noise,
        BrushType::Directional,
        BrushType::Terrace,
        BrushType::Flatten,
        BrushType::Ramp,
        BrushType::Mask,
        BrushType::Erase,
    ]
    .into_iter()
    .map(|t| BrushSettings {
        brush: t,
        value: 0.25,
        falloff: if t == BrushType::Lower {
            Falloff::Smooth
        } else {
            Falloff::Parabolic
        },
        ..base_brush.clone()
    })
    .collect();
    brushes.push(BrushSettings {
        brush: BrushType::Stamp,
        stamp: Some(Arc::new(scarp::brush::stamp::Stamp {
            width: 17,
            height: 13,
            values: (0..17 * 13)
                .map(|i| ((i * 31) % 23) as f32 / 22.0)
                .collect(),
            source: None,
        })),
        ..base_brush.clone()
    });
    for mode in [Mode::Add, Mode::Max] {
        let mut d = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
        let here = Path::new(".");
        d.layer_op(&add_op("l", mode, 0.9, LayerFiles::default()), here)
            .unwrap();
        d.layer_op(&select("l"), here).unwrap();
        let mut twin = CpuLayer {
            mode,
            parts: Part::ALL.map(|p| {
                CpuTerrain::new(
                    scarp::layers::composite::f32_desc(&desc),
                    p.default_value(mode),
                    cpu_tables.clone(),
                )
            }),
        };
        // Raise first, so smooth, contrast, level and erase have values to work on.
        let order = std::iter::once(&brushes[0]).chain(&brushes);
        for (k, b) in order.enumerate() {
            let samples = wavy(15.0 + 7.0 * k as f32, 25.0 + 5.0 * k as f32, 130.0);
            let instances = stroke_instances(b, &samples);
            // Level pulls toward the composite under the first sample, before the stroke.
            let target = match scarp::brush::level_texel(&instances) {
                Some((x, y)) => d.height_at(x, y).unwrap(),
                None => 0.0,
            };
            // Flatten and ramp pull toward the plane through the composite, before the stroke.
            let plane =
                scarp::brush::Plane::of_stroke(b, &instances, |x, y| d.height_at(x, y)).unwrap();
            d.apply_stroke(b, &instances).unwrap();
            twin.paint(b, &instances, target, plane);
            for (i, p) in Part::ALL.into_iter().enumerate() {
                let g = field(&mut d, "l", p);
                let c = twin.parts[i].to_dense();
                let diff = max_diff(&g, &c);
                assert!(
                    diff <= BRUSH_TOLERANCE,
                    "{} on a {} layer: {} differs by {diff}",
                    b.brush.name(),
                    mode.name(),
                    p.name()
                );
            }
        }
        let rel = max_relative(&d.to_dense().unwrap(), &cpu_composite(&mut d));
        assert!(rel <= COMPOSITE_TOLERANCE);
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn locked_layers_and_layer_brushes_on_the_base_are_refused() {
    let gpu = gpu();
    let desc = doc(256, 256, 128);
    let mut d = Document::new(&gpu, desc, 0.5, &tables()).unwrap();
    let here = Path::new(".");
    let mask = BrushSettings {
        brush: BrushType::Mask,
        ..BrushSettings::new(BrushType::Raise)
    };
    let instances = stroke_instances(&mask, &wavy(10.0, 10.0, 50.0));
    let e = d.apply_stroke(&mask, &instances).unwrap_err().to_string();
    assert!(e.contains("select a layer"), "{e}");
    d.layer_op(&add_op("rock", Mode::Max, 1.0, LayerFiles::default()), here)
        .unwrap();
    d.layer_op(
        &set(
            "rock",
            Changes {
                locked: Some(true),
                ..Default::default()
            },
        ),
        here,
    )
    .unwrap();
    d.layer_op(&select("rock"), here).unwrap();
    let raise = BrushSettings::new(BrushType::Raise);
    let before = d.to_dense().unwrap();
    let e = d
        .apply_stroke(&raise, &stroke_instances(&raise, &wavy(10.0, 10.0, 50.0)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"rock\" is locked"), "{e}");
    assert_eq!(d.to_dense().unwrap(), before, "nothing painted");
    let e = d
        .layer_op(&add_op("rock", Mode::Add, 1.0, LayerFiles::default()), here)
        .unwrap_err()
        .to_string();
    assert!(e.contains("name") && e.contains("already"), "{e}");
    let steps = d.undo_steps();
    let e = d
        .layer_op(
            &set(
                "rock",
                Changes {
                    opacity: Some(2.0),
                    ..Default::default()
                },
            ),
            here,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("opacity"), "{e}");
    assert_eq!(d.undo_steps(), steps, "a refused step is not a step");
    assert_no_validation_messages(&gpu);
}

#[test]
fn journal_layer_steps_are_checked_by_step_and_field() {
    let j = |steps: &str, version: u32| {
        format!(
            r#"{{"version": {version}, "document": {{"width": 64, "height": 64}}, "steps": [{steps}]}}"#
        )
    };
    let ok = j(
        r#"{"layer": {"op": "add", "name": "r", "mode": "max"}},
           {"layer": {"op": "select", "name": "r"}},
           {"stroke": {"brush": {"type": "mask", "radius": 8, "value": 0.5}, "samples": [{"x": 5, "y": 5}]}},
           {"undo": 2}, {"redo": 1},
           {"layer": {"op": "set", "name": "r", "opacity": 0.5, "rename": "r2"}},
           {"layer": {"op": "fill_mask", "name": "r2",
                      "rules": {"height": {"lo": 0.2, "hi": 0.8, "soft": 0.1}}}},
           {"stroke": {"brush": {"type": "mask", "radius": 8, "value": 1,
                                 "rules": {"slope": {"lo": 0, "hi": 0.01}}},
                       "samples": [{"x": 9, "y": 9}]}}"#,
        2,
    );
    let parsed = Journal::parse(&ok, Path::new(".")).unwrap();
    assert_eq!(parsed.steps.len(), 8);
    let bad = [
        (
            j(r#"{"layer": {"op": "add", "name": "r"}}"#, 1),
            "steps[0]",
            "version 2",
        ),
        (
            j(r#"{"layer": {"op": "select", "name": "nope"}}"#, 2),
            "steps[0]",
            "nope",
        ),
        (
            j(
                r#"{"layer": {"op": "add", "name": "r"}}, {"layer": {"op": "add", "name": "r"}}"#,
                2,
            ),
            "steps[1]",
            "already",
        ),
        (
            j(
                r#"{"layer": {"op": "add", "name": "r", "mode": "screen"}}"#,
                2,
            ),
            "mode",
            "screen",
        ),
        (
            j(r#"{"layer": {"op": "add", "name": "r", "opacity": -1}}"#, 2),
            "opacity",
            "[0, 1]",
        ),
        (
            j(r#"{"layer": {"op": "add", "name": "r", "index": 0}}"#, 2),
            "index",
            "takes no",
        ),
        (
            j(
                r#"{"layer": {"op": "add", "name": "r", "value": "missing.r32"}}"#,
                2,
            ),
            "value",
            "not a file",
        ),
        (
            j(
                r#"{"layer": {"op": "add", "name": "r"}}, {"layer": {"op": "select", "name": "r"}}, {"undo": 1},
                 {"stroke": {"brush": {"type": "erase", "radius": 8}, "samples": [{"x": 5, "y": 5}]}}"#,
                2,
            ),
            "steps[3]",
            "base is selected",
        ),
        (
            j(
                r#"{"layer": {"op": "add", "name": "r"}}, {"layer": {"op": "set", "name": "r", "locked": true}},
                 {"layer": {"op": "select", "name": "r"}},
                 {"stroke": {"brush": {"type": "raise", "radius": 8}, "samples": [{"x": 5, "y": 5}]}}"#,
                2,
            ),
            "steps[3]",
            "locked",
        ),
        (
            j(
                r#"{"layer": {"op": "add", "name": "r"}}, {"layer": {"op": "select", "name": "r"}},
                 {"stroke": {"brush": {"type": "mask", "radius": 8,
                                       "rules": {"height": {"lo": 1, "hi": 0}}},
                             "samples": [{"x": 5, "y": 5}]}}"#,
                2,
            ),
            "steps[2]",
            "rules.height",
        ),
    ];
    for (text, at, what) in bad {
        let e = Journal::parse(&text, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(at) && e.contains(what),
            "{e} (wanted {at}, {what})"
        );
    }
}

#[test]
fn live_strokes_on_layers_with_frames_in_flight_match_applied_strokes() {
    use scarp::session::LiveStroke;
    let gpu = gpu();
    let desc = doc(512, 384, 128);
    let mut rng = Rng(21);
    let base = random_grid(&mut rng, &desc, 0.3, 0.4);
    let here = Path::new(".");
    let setup = |d: &mut Document| {
        d.layer_op(&add_op("m", Mode::Max, 1.0, LayerFiles::default()), here)
            .unwrap();
        d.layer_op(&add_op("a", Mode::Add, 0.7, LayerFiles::default()), here)
            .unwrap();
        d.layer_op(&select("m"), here).unwrap();
    };
    let strokes = [
        (noise_brush(60.0), wavy(40.0, 60.0, 300.0)),
        (
            BrushSettings {
                brush: BrushType::Mask,
                radius: 50.0,
                value: 0.2,
                ..BrushSettings::new(BrushType::Raise)
            },
            wavy(100.0, 100.0, 200.0),
        ),
    ];
    let mut applied = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
    setup(&mut applied);
    for (b, s) in &strokes {
        stroke(&mut applied, b, s);
    }
    let mut live = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
    live.set_frames_in_flight(true);
    setup(&mut live);
    for (b, s) in &strokes {
        let mut ls = LiveStroke::new(b.clone());
        for sample in s {
            ls.add(&mut live, &mut scarp::edit::Tools::default(), *sample)
                .unwrap();
            live.pump(Some(0.05)).unwrap();
        }
        ls.finish(&mut live, &mut scarp::edit::Tools::default())
            .unwrap();
        live.pump(Some(0.05)).unwrap();
    }
    let (a, l) = (applied.to_dense().unwrap(), live.to_dense().unwrap());
    assert!(
        a.iter().zip(&l).all(|(x, y)| x.to_bits() == y.to_bits()),
        "live and applied composites differ by up to {}",
        max_diff(&a, &l)
    );
    assert!(max_diff(&a, &base) > 0.01);
    assert_no_validation_messages(&gpu);
}

#[test]
fn projects_round_trip_the_stack_and_its_fields_sparse_and_incrementally() {
    use scarp::session::{meta_of, open_project_file, save_document};
    let gpu = gpu();
    let dir = tempfile::tempdir().unwrap();
    let desc = DocumentDesc {
        format: HeightFormat::R16,
        ..doc(640, 384, 128)
    };
    let mut rng = Rng(8);
    let base = random_grid(&mut rng, &desc, 0.2, 0.4);
    let mut d = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
    let alpha = write_r32(dir.path(), "a.r32", &random_grid(&mut rng, &desc, 0.0, 1.0));
    let here = dir.path();
    d.layer_op(
        &add_op("hills", Mode::Add, 0.6, LayerFiles::default()),
        here,
    )
    .unwrap();
    d.layer_op(
        &add_op(
            "cap",
            Mode::Replace,
            0.9,
            LayerFiles {
                alpha: Some(alpha),
                ..Default::default()
            },
        ),
        here,
    )
    .unwrap();
    d.layer_op(&select("hills"), here).unwrap();
    stroke(&mut d, &noise_brush(50.0), &wavy(30.0, 40.0, 250.0));
    d.layer_op(
        &set(
            "cap",
            Changes {
                locked: Some(true),
                ..Default::default()
            },
        ),
        here,
    )
    .unwrap();
    let path = dir.path().join("layered.scarp");
    let meta = meta_of(&d, vec![], &[]).unwrap();
    let (file, first) = save_document(&mut d, &path, &meta, None, None).unwrap();
    let composite = d.to_dense().unwrap();
    let fields = |d: &mut Document| -> Vec<Vec<f32>> {
        let names = d.layers().field_names();
        names
            .iter()
            .map(|n| d.store.field(n).unwrap().to_dense().unwrap())
            .chain(std::iter::once(d.base().to_dense().unwrap()))
            .collect()
    };
    let want_fields = fields(&mut d);
    // The hills layer's value holds only the pages the stroke reached: sparse.
    let hills_value = &d.layers().layers[0].field(Part::Value);
    let painted = d.store.field(hills_value).unwrap().versions().count();
    assert!(painted > 0 && painted < desc.pages_x() as usize * desc.pages_y() as usize);
    let (mut back, meta2, sp) = open_project_file(&gpu, &path, &tables()).unwrap();
    assert_eq!(back.layers(), d.layers());
    assert!(meta2.layers.is_some());
    let got = back.to_dense().unwrap();
    assert!(
        got.iter()
            .zip(&composite)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "reopened composite differs by {}",
        max_diff(&got, &composite)
    );
    assert!(fields(&mut back) == want_fields, "reopened fields differ");
    // One more stroke on the reopened document, saved incrementally: only its pages are new.
    stroke(&mut back, &noise_brush(20.0), &wavy(400.0, 300.0, 40.0));
    let meta3 = meta_of(&back, vec![], &[]).unwrap();
    let (_, second) = save_document(&mut back, &path, &meta3, sp.as_ref(), None).unwrap();
    assert!(second.incremental, "{second:?}");
    assert!(
        second.pages_written < first.pages_written,
        "{first:?} then {second:?}"
    );
    let after = back.to_dense().unwrap();
    let (mut third, _, _) = open_project_file(&gpu, &path, &tables()).unwrap();
    assert!(third.to_dense().unwrap() == after);
    drop(file);
    assert_no_validation_messages(&gpu);
}

/// A document for the procedural-mask tests (partial edge pages: 400 = 3 pages and a bit of
/// 128, so slopes and curvature cross seams) with an `add` layer "lift" at half opacity under a
/// `replace` layer "snow" (selected), rules that select part of it, and the height below "snow"
/// folded on the CPU.
fn rules_document(
    gpu: &Arc<scarp::gpu::Gpu>,
    here: &Path,
) -> (Document, scarp::layers::MaskRules, Vec<f32>) {
    use scarp::layers::{Band, MaskRules};
    let desc = doc(400, 272, 128);
    let heights: Vec<f32> = (0..desc.height)
        .flat_map(|y| {
            (0..desc.width).map(move |x| {
                let (x, y) = (x as f32, y as f32);
                0.4 + 0.25 * (x * 0.031).sin() * (y * 0.027).cos() + 0.0005 * x
            })
        })
        .collect();
    let mut d = Document::from_heights(gpu, desc, &heights, &tables()).unwrap();
    // A layer under the masked one: the mask reads the fold below the masked layer.
    let bump = write_r32(
        here,
        "bump.r32",
        &vec![0.05; (desc.width * desc.height) as usize],
    );
    d.layer_op(
        &add_op(
            "lift",
            Mode::Add,
            0.5,
            LayerFiles {
                value: Some(bump),
                ..Default::default()
            },
        ),
        here,
    )
    .unwrap();
    d.layer_op(
        &add_op("snow", Mode::Replace, 1.0, LayerFiles::default()),
        here,
    )
    .unwrap();
    let rules = MaskRules {
        height: Some(Band {
            lo: 0.45,
            hi: 0.9,
            soft: 0.05,
        }),
        slope: Some(Band {
            lo: 0.0,
            hi: 0.004,
            soft: 0.002,
        }),
        curvature: Some(Band {
            lo: -0.001,
            hi: 0.0002,
            soft: 0.0003,
        }),
        slope_degrees: None,
    };
    let below: Vec<f32> = heights
        .iter()
        .map(|&h| fold_texel(h, [(Mode::Add, 0.5, [0.05, 1.0, 1.0])]))
        .collect();
    (d, rules, below)
}

/// The rules' mask of `below` at every texel (the CPU twin, `mask_at`).
fn rules_twin(rules: &scarp::layers::MaskRules, desc: &DocumentDesc, below: &[f32]) -> Vec<f32> {
    let (w, h) = (desc.width as i32, desc.height as i32);
    (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| {
            scarp::layers::rules::mask_at(
                rules,
                desc.vertical_scale(),
                [w, h],
                |x, y| below[(y * w + x) as usize],
                x,
                y,
            )
        })
        .collect()
}

#[test]
fn procedural_masks_match_their_cpu_twin_and_undo() {
    use scarp::layers::{Band, MaskRules};
    let gpu = gpu();
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path();
    let (mut d, rules, below) = rules_document(&gpu, here);
    let desc = *d.desc();
    let before = field(&mut d, "snow", Part::Mask);
    d.layer_op(
        &LayerOp::FillMask {
            name: "snow".into(),
            rules,
        },
        here,
    )
    .unwrap();
    let got = field(&mut d, "snow", Part::Mask);
    // The twin: the base plus half the lift, folded on the CPU, then the rules per texel.
    let want = rules_twin(&rules, &desc, &below);
    let diff = max_diff(&got, &want);
    assert!(diff <= 1e-5, "mask differs from its twin by {diff}");
    // The rules select something, not everything.
    assert!(got.contains(&0.0) && got.contains(&1.0));
    assert!(got.iter().any(|&m| m > 0.0 && m < 1.0), "soft edges");
    assert!(d.undo().unwrap());
    assert_eq!(field(&mut d, "snow", Part::Mask), before);
    assert!(d.redo().unwrap());
    assert_eq!(field(&mut d, "snow", Part::Mask), got);
    let bad = MaskRules {
        height: Some(Band {
            lo: 1.0,
            hi: 0.0,
            soft: 0.0,
        }),
        ..Default::default()
    };
    let e = d
        .layer_op(
            &LayerOp::FillMask {
                name: "snow".into(),
                rules: bad,
            },
            here,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("rules") && e.contains("height"), "{e}");

    // A slope band in true degrees of the ground (here the unit-less document's true scale,
    // a quarter of its side per unit): 1 up to 20 degrees, 0 from 30, as the twin.
    let degrees = MaskRules {
        slope_degrees: Some(Band {
            lo: 0.0,
            hi: 20.0,
            soft: 10.0,
        }),
        ..Default::default()
    };
    d.layer_op(
        &LayerOp::FillMask {
            name: "snow".into(),
            rules: degrees,
        },
        here,
    )
    .unwrap();
    let got = field(&mut d, "snow", Part::Mask);
    let diff = max_diff(&got, &rules_twin(&degrees, &desc, &below));
    assert!(diff <= 1e-5, "degree mask differs from its twin by {diff}");
    // Independently: the ground's angle at each texel, from the central differences.
    let (w, h) = (desc.width as i32, desc.height as i32);
    let at =
        |x: i32, y: i32| f64::from(below[(y.clamp(0, h - 1) * w + x.clamp(0, w - 1)) as usize]);
    let (mut flat, mut steep) = (0, 0);
    for y in 0..h {
        for x in 0..w {
            let (gx, gy) = (at(x + 1, y) - at(x - 1, y), at(x, y + 1) - at(x, y - 1));
            let s = 0.5 * (gx * gx + gy * gy).sqrt();
            let angle = (s * f64::from(desc.vertical_scale())).atan().to_degrees();
            let m = got[(y * w + x) as usize];
            if angle < 19.99 {
                assert_eq!(m, 1.0, "({x}, {y}) at {angle:.2} degrees");
                flat += 1;
            } else if angle > 30.01 {
                assert_eq!(m, 0.0, "({x}, {y}) at {angle:.2} degrees");
                steep += 1;
            }
        }
    }
    assert!(
        flat > 1000 && steep > 1000,
        "{flat} gentle, {steep} steep texels"
    );
    let both = MaskRules {
        slope: rules.slope,
        ..degrees
    };
    let e = d
        .layer_op(
            &LayerOp::FillMask {
                name: "snow".into(),
                rules: both,
            },
            here,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("slope or slope_degrees"), "{e}");
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_procedural_mask_brush_paints_where_its_rules_allow_as_its_cpu_twin() {
    use scarp::layers::Band;
    let gpu = gpu();
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path();
    let (mut d, rules, below) = rules_document(&gpu, here);
    let desc = *d.desc();
    let brush = BrushSettings {
        radius: 70.0,
        inner_radius: 10.0,
        strength: 0.8,
        spacing: 0.2,
        value: 0.1,
        rules: Some(rules),
        ..BrushSettings::new(BrushType::Mask)
    };
    // Across the page seams at 128 and 256, and past the partial edge page.
    d.layer_op(&select("snow"), here).unwrap();
    let samples = wavy(60.0, 40.0, 320.0);
    let instances = stroke_instances(&brush, &samples);
    let before = field(&mut d, "snow", Part::Mask);
    d.apply_stroke(&brush, &instances).unwrap();
    let got = field(&mut d, "snow", Part::Mask);
    // The twin: a level stroke toward the value on the mask, each instance's weight times the
    // rules' mask of the height below the layer.
    let weight = rules_twin(&rules, &desc, &below);
    let w = desc.width as i32;
    let mut twin = CpuTerrain::new(
        scarp::layers::composite::f32_desc(&desc),
        1.0,
        Arc::new(CpuTables::new(&tables())),
    );
    let (lb, li) = level(&brush, false, &instances);
    let lb = BrushSettings { rules: None, ..lb };
    twin.apply_stroke_weighted(&lb, &li, brush.value, &|x, y| weight[(y * w + x) as usize]);
    let want = twin.to_dense();
    let diff = max_diff(&got, &want);
    assert!(
        diff <= BRUSH_TOLERANCE,
        "mask differs from its twin by {diff}"
    );
    // The rules filter the stroke: inside its reach, texels the rules exclude keep their mask
    // and texels they select are painted.
    let plain = {
        let mut t = CpuTerrain::new(
            scarp::layers::composite::f32_desc(&desc),
            1.0,
            Arc::new(CpuTables::new(&tables())),
        );
        t.apply_stroke_toward(&lb, &li, Some(brush.value));
        t.to_dense()
    };
    let reached: Vec<usize> = (0..plain.len()).filter(|&i| plain[i] < 0.99).collect();
    assert!(reached.iter().any(|&i| weight[i] == 0.0 && got[i] == 1.0));
    assert!(reached.iter().any(|&i| weight[i] == 1.0 && got[i] < 0.5));
    assert!(reached.iter().all(|&i| weight[i] > 0.0 || got[i] == 1.0));
    // One undo step; redo brings it back bit for bit.
    assert!(d.undo().unwrap());
    assert_eq!(field(&mut d, "snow", Part::Mask), before);
    assert!(d.redo().unwrap());
    assert_eq!(field(&mut d, "snow", Part::Mask), got);
    // Rules on another brush, and bad rules, are refused with the field named.
    let raise = BrushSettings {
        rules: Some(rules),
        ..BrushSettings::new(BrushType::Raise)
    };
    let e = raise.validate().unwrap_err();
    assert!(e.contains("rules") && e.contains("mask"), "{e}");
    let mut bad = brush.clone();
    bad.rules.as_mut().unwrap().slope = Some(Band {
        lo: 0.0,
        hi: 0.1,
        soft: -1.0,
    });
    let e = bad.validate().unwrap_err();
    assert!(e.contains("rules.slope") && e.contains("soft"), "{e}");
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_tight_gpu_budget_never_changes_a_layered_composite() {
    use scarp::pages::Budgets;
    let gpu = gpu();
    let desc = doc(1024, 768, 128);
    let mut rng = Rng(31);
    let base = random_grid(&mut rng, &desc, 0.2, 0.5);
    let here = Path::new(".");
    let build = |budgets: Option<Budgets>| {
        let mut d = Document::from_heights(&gpu, desc, &base, &tables()).unwrap();
        if let Some(b) = budgets {
            d.set_budgets(b);
        }
        for (i, mode) in [Mode::Max, Mode::Add, Mode::Replace]
            .into_iter()
            .enumerate()
        {
            let name = format!("l{i}");
            d.layer_op(&add_op(&name, mode, 0.8, LayerFiles::default()), here)
                .unwrap();
            d.layer_op(&select(&name), here).unwrap();
            stroke(
                &mut d,
                &noise_brush(90.0),
                &wavy(60.0 + 200.0 * i as f32, 80.0, 600.0),
            );
        }
        d.layer_op(&select("l1"), here).unwrap();
        stroke(&mut d, &noise_brush(70.0), &wavy(100.0, 400.0, 700.0));
        d
    };
    let mut free = build(None);
    // 24 page pairs of 128² r32f per field, of the 48 pages each field could hold.
    let tight = Budgets {
        gpu: Some(24 * 128 * 128 * 4 * 2),
        ..Budgets::default()
    };
    let mut paged = build(Some(tight));
    let (a, b) = (free.to_dense().unwrap(), paged.to_dense().unwrap());
    assert!(
        a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
        "the budget changed the composite (max {})",
        max_diff(&a, &b)
    );
    for name in free.layers().field_names() {
        let f = free.store.field(&name).unwrap().to_dense().unwrap();
        let p = paged.store.field(&name).unwrap().to_dense().unwrap();
        assert!(f == p, "{name} differs under the budget");
    }
    assert!(
        paged.memory().traffic.page_outs > 0,
        "the budget made the composite page out"
    );
    assert_no_validation_messages(&gpu);
}

/// The layers demo journal applied into `dir` as `l.scarp`, with its composite and its base
/// converted to `composite.r32` and `base.r32`; the folder's path maker.
fn layered_project(dir: &Path) -> impl Fn(&str) -> String + '_ {
    let p = move |n: &str| dir.join(n).to_str().unwrap().to_string();
    let journal = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/journals/layers.json");
    common::scarp_ok(&["apply", "--journal", journal, "--out", &p("l.scarp")]);
    common::scarp_ok(&["convert", &p("l.scarp"), &p("composite.r32")]);
    common::scarp_ok(&["convert", &p("l.scarp"), &p("base.r32"), "--base"]);
    p
}

/// A raw little-endian f32 file's values.
fn read_r32(path: &str) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// `scarp convert` of a layered project writes its composite (what the editor shows and
/// exports: the project's document folded on the GPU), not its base; `--base` and `--layer NAME`
/// pick those, and a layer that is not there, or either flag on a height file, is one line.
#[test]
fn convert_reads_a_layered_projects_composite_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let p = layered_project(dir.path());
    common::scarp_ok(&[
        "convert",
        &p("l.scarp"),
        &p("ridges.r32"),
        "--layer",
        "ridges",
    ]);
    let r32 = |n: &str| read_r32(&p(n));
    // The editor's export reads the opened project's composite field.
    let gpu = gpu();
    let tables = NoiseTables::default();
    let (mut d, _, _) =
        scarp::session::open_project_file(&gpu, Path::new(&p("l.scarp")), &tables).unwrap();
    assert!(d.is_layered());
    let shown = d.to_dense().unwrap();
    let base = d.base().to_dense().unwrap();
    let layer = d
        .layers()
        .layers
        .iter()
        .find(|l| l.name == "ridges")
        .unwrap();
    let ridges = d
        .store
        .field(&layer.field(Part::Value))
        .unwrap()
        .to_dense()
        .unwrap();
    assert!(
        r32("composite.r32") == shown,
        "convert's composite is the editor's"
    );
    assert!(r32("base.r32") == base);
    assert!(r32("ridges.r32") == ridges);
    assert!(shown != base, "the layers change the heights");

    let e = common::stderr(&common::scarp(&[
        "convert",
        &p("l.scarp"),
        &p("x.r32"),
        "--layer",
        "nope",
    ]));
    assert!(
        e.contains("no layer \"nope\"") && e.contains("ridges"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    let e = common::stderr(&common::scarp(&[
        "convert",
        &p("ridges.r32"),
        &p("y.r32"),
        "--base",
    ]));
    assert!(
        e.contains("--base and --layer pick a part of a .scarp project"),
        "{e}"
    );
    assert!(!dir.path().join("x.r32").exists() && !dir.path().join("y.r32").exists());

    // erode reads the same parts: a run on the project equals the run on the part's heights.
    let side = shown.len().isqrt().to_string();
    let size = format!("{side}x{side}");
    for (part, file) in [(None, "composite.r32"), (Some("--base"), "base.r32")] {
        let run = |input: &str, out: &str, extra: &[&str]| {
            let mut args = vec!["erode", "--heights", input, "--out", out];
            args.extend(["--steps", "3", "--backend", "cpu"]);
            args.extend(extra);
            common::scarp_ok(&args);
        };
        run(
            &p("l.scarp"),
            &p("e-project.r32"),
            &part.into_iter().collect::<Vec<_>>(),
        );
        run(&p(file), &p("e-file.r32"), &["--size", &size]);
        assert!(
            r32("e-project.r32") == r32("e-file.r32"),
            "erode {part:?}: the project's part erodes as its heights"
        );
    }
    // render too: the base drawn from the project is the base drawn from its heights.
    let draw = |source: &str, out: &str, extra: &[&str]| {
        let mut args = vec![
            "render",
            "--heights",
            source,
            "--image",
            "160x96",
            "--out",
            out,
        ];
        args.extend(extra);
        common::scarp_ok(&args);
        std::fs::read(out).unwrap()
    };
    let from_project = draw(&p("l.scarp"), &p("base-project.png"), &["--base"]);
    let from_file = draw(&p("base.r32"), &p("base-file.png"), &["--size", &size]);
    assert!(from_project == from_file, "render --base draws the base");
    for cmd in ["erode", "render"] {
        let e = common::stderr(&common::scarp(&[
            cmd,
            "--heights",
            &p("base.r32"),
            "--out",
            &p("z.png"),
            "--base",
        ]));
        assert!(
            e.contains("--base and --layer pick a part of a .scarp project"),
            "{cmd}: {e}"
        );
    }
    assert_no_validation_messages(&gpu);
}

/// A journal's initial file and a layer's value file may be a project: read as the editor shows
/// it, a layered project's composite (folded on the CPU, `project::composite_heights`, equal to
/// the GPU's composite within f32 rounding), never its base alone.
#[test]
fn a_journals_initial_file_and_a_layers_file_read_a_projects_composite() {
    let dir = tempfile::tempdir().unwrap();
    let p = layered_project(dir.path());
    let r32 = |n: &str| read_r32(&p(n));
    let (gpu_fold, base) = (r32("composite.r32"), r32("base.r32"));
    let cpu_fold = scarp::project::composite_heights(Path::new(&p("l.scarp")))
        .unwrap()
        .values;
    let worst = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    };
    assert!(
        worst(&cpu_fold, &gpu_fold) <= 1e-5,
        "{}",
        worst(&cpu_fold, &gpu_fold)
    );
    assert!(
        worst(&base, &gpu_fold) > 1e-2,
        "the layers change the heights"
    );

    let doc = r#""document": {"width": 2048, "height": 2048, "page_size": 256"#;
    // Each journal applied headless: its heights.
    let applied = |name: &str, text: String| {
        std::fs::write(p(name), text).unwrap();
        let out = format!("{name}.r32");
        common::scarp_ok(&["apply", "--journal", &p(name), "--out", &p(&out)]);
        r32(&out)
    };
    let initial = applied(
        "from-project.json",
        format!(r#"{{"version": 2, {doc}, "initial": {{"file": "l.scarp"}}}}, "steps": []}}"#),
    );
    assert!(
        worst(&initial, &gpu_fold) <= 1e-5,
        "the initial file is the composite"
    );
    // A layer whose value file is the project: added to a flat base of 0, it shows the
    // composite.
    let layer = applied(
        "layer-from-project.json",
        format!(
            r#"{{"version": 2, {doc}}}, "steps": [{{"layer": {{"op": "add", "name": "shown",
                "value": "l.scarp"}}}}]}}"#
        ),
    );
    assert!(
        worst(&layer, &gpu_fold) <= 1e-5,
        "the layer's file is the composite"
    );
    // A project of another size is named.
    std::fs::write(
        p("small.json"),
        r#"{"version": 2, "document": {"width": 512, "height": 512, "initial": {"file": "l.scarp"}}, "steps": []}"#,
    )
    .unwrap();
    let e = common::stderr(&common::scarp(&[
        "apply",
        "--journal",
        &p("small.json"),
        "--out",
        &p("s.r32"),
    ]));
    assert!(
        e.contains("a 2048x2048 project where 512x512 is needed"),
        "{e}"
    );
}
