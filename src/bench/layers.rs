//! Layers (docs/layers.md): a radius-512 noise stroke on layer 8 of 16 against the same stroke on
//! the only layer of a one-layer document and on the document without layers — GPU time per
//! instance of the stroke's waves plus the composite folds it causes — the composite's µs per dirty page (from the cache below the selection, and
//! a full fold of every layer), and editor frames while a brush paints layer 8 against the
//! frames of the document without layers.

use super::ceilings::{Heater, HEAT_LONG_MS};
use super::frames::{Painting, FULL_RUN, QUICK_RUN};
use super::{median, BenchOptions};
use crate::brush::stroke::{stroke_instances, StrokeSample};
use crate::brush::{BrushSettings, BrushType};
use crate::document::Document;
use crate::gpu::Gpu;
use crate::layers::{LayerFiles, LayerOp, Mode, BASE};
use crate::noise::NoiseTables;
use crate::render::frames::mean_p99;
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// What the layers benchmark measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LayersResult {
    pub name: String,
    pub terrain: [u32; 2],
    pub layers: u32,
    /// 1-based position of the painted layer, from the bottom.
    pub painted_layer: u32,
    pub brush_radius: f32,
    pub instances: usize,
    /// The stroke on the document without layers: GPU µs per instance (its waves).
    pub plain_us_per_instance: f64,
    /// The stroke on the painted layer: its waves (value and alpha) per instance.
    pub layered_brush_us_per_instance: f64,
    /// The composite folds the stroke caused, per instance.
    pub layered_composite_us_per_instance: f64,
    /// (waves + folds) on the layer over the waves without layers.
    pub layered_over_plain: f64,
    /// The stroke on the only layer of a one-layer document: waves and folds per instance.
    #[serde(default)]
    pub one_layer_us_per_instance: f64,
    /// (waves + folds) on layer 8 of 16 over the same on a one-layer document (target ≤ 2).
    #[serde(default)]
    pub layered_over_one_layer: f64,
    /// Pages the stroke's composite folded, and layer blends per page.
    pub dirty_pages: usize,
    pub blends_per_page: f64,
    /// Composite µs per dirty page, folded from the cache below the painted layer.
    pub composite_us_per_page: f64,
    /// Composite µs per page of a full fold of every layer (the base selected: no cache).
    pub full_fold_us_per_page: f64,
    /// Editor frames while a brush paints: without layers, and on the painted layer.
    pub frame_plain_ms: f64,
    pub frame_layered_ms: f64,
    /// Layered frame over the frame without layers (target ≤ 1.1).
    pub frame_layered_over_plain: f64,
    pub frames: u32,
}

struct Case {
    name: &'static str,
    journal: &'static str,
    layers: usize,
    /// 0-based index of the painted layer.
    painted: usize,
    /// The frame runs; its brush radius is the stroke's too.
    run: Painting,
}

const FULL: Case = Case {
    name: "layers/8192x16",
    journal: "journals/bench/default-8192.json",
    layers: 16,
    painted: 7,
    run: FULL_RUN,
};

const QUICK: Case = Case {
    name: "layers/1024x4",
    journal: "journals/demo.json",
    layers: 4,
    painted: 1,
    run: QUICK_RUN,
};

pub(super) fn names(quick: bool) -> Vec<String> {
    vec![(if quick { QUICK.name } else { FULL.name }).to_string()]
}

/// A noise brush of `radius` and the stroke across the document's middle it paints.
fn stroke(desc: [u32; 2], radius: f32, seed: i32) -> (BrushSettings, Vec<StrokeSample>) {
    let mut b = BrushSettings::new(BrushType::Noise);
    b.radius = radius;
    b.strength = 0.05;
    b.noise.seed = seed;
    let (w, h) = (desc[0] as f32, desc[1] as f32);
    let samples = (0..8)
        .map(|i| {
            let t = i as f32 / 7.0;
            StrokeSample {
                x: w * (0.3 + 0.4 * t),
                y: h * (0.45 + 0.1 * (t * 6.0).sin()),
                pressure: 1.0,
                t,
            }
        })
        .collect();
    (b, samples)
}

/// The bench document with `count` layers, each painted where the stroke goes, layer `painted`
/// (0-based) selected.
fn layered(
    gpu: &Arc<Gpu>,
    path: &Path,
    count: usize,
    painted: usize,
    radius: f32,
    tables: &NoiseTables,
) -> Result<Document> {
    let mut d = crate::session::replay_journal(gpu, path, tables)?;
    let size = [d.desc().width, d.desc().height];
    let here = Path::new(".");
    for i in 0..count {
        let name = format!("layer {}", i + 1);
        d.layer_op(
            &LayerOp::Add {
                name: name.clone(),
                mode: Mode::ALL[i % 4],
                opacity: 0.8,
                files: LayerFiles::default(),
            },
            here,
        )?;
        d.layer_op(&LayerOp::Select { name }, here)?;
        // Every layer holds values where the measured stroke goes.
        let (b, s) = stroke(size, radius, i as i32);
        d.apply_stroke(&b, &stroke_instances(&b, &s))?;
    }
    d.layer_op(
        &LayerOp::Select {
            name: format!("layer {}", painted + 1),
        },
        here,
    )?;
    Ok(d)
}

/// GPU µs per instance of `repeats` applications of the stroke (each undone after), split into
/// waves and composite folds; and the composite's pages and blends of one.
fn time_stroke(
    d: &mut Document,
    b: &BrushSettings,
    samples: &[StrokeSample],
    o: &BenchOptions,
) -> Result<(f64, f64, usize, usize)> {
    let instances = stroke_instances(b, samples);
    let (mut waves, mut folds) = (Vec::new(), Vec::new());
    let (mut pages, mut blends) = (0, 0);
    for k in 0..o.warmup + o.repeats {
        d.take_composite_stats();
        d.apply_stroke(b, &instances)?;
        let c = d.take_composite_stats();
        let w = d
            .brushes
            .last_stroke
            .gpu_ns
            .ok_or_else(|| anyhow!("no stroke timestamps"))?;
        if k >= o.warmup {
            waves.push(w * 1e-3 / instances.len() as f64);
            folds.push(c.gpu_ns * 1e-3 / instances.len() as f64);
            (pages, blends) = (c.pages, c.blends);
        }
        d.undo()?;
    }
    Ok((median(&waves), median(&folds), pages, blends))
}

fn frames(gpu: &Arc<Gpu>, d: &mut Document, c: &Case, heater: &Heater) -> Result<f64> {
    let log = super::frames::paint_frames(gpu, d, &c.run, heater)?;
    Ok(mean_p99(&log.frame_ms).0)
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    tables: &NoiseTables,
    heater: &Heater,
) -> Result<Option<LayersResult>> {
    let c = if o.quick { &QUICK } else { &FULL };
    if !o.wants(c.name) {
        return Ok(None);
    }
    let path = o.assets.join(c.journal);
    let hint = |e: crate::session::SessionError| {
        anyhow!("{e:#} (the layers benchmark replays the repository's journals: run from its root, or leave it out with --filter)")
    };
    let mut plain = crate::session::replay_journal(gpu, &path, tables).map_err(hint)?;
    let mut lay = layered(gpu, &path, c.layers, c.painted, c.run.radius, tables)?;
    let mut one = layered(gpu, &path, 1, 0, c.run.radius, tables)?;
    let desc = *plain.desc();
    let (b, samples) = stroke([desc.width, desc.height], c.run.radius, 99);
    heater.heat(HEAT_LONG_MS)?;
    let (plain_waves, _, _, _) = time_stroke(&mut plain, &b, &samples, o)?;
    let (waves, folds, pages, blends) = time_stroke(&mut lay, &b, &samples, o)?;
    let (one_waves, one_folds, _, _) = time_stroke(&mut one, &b, &samples, o)?;
    drop(one);
    let instances = stroke_instances(&b, &samples).len();
    // A full fold: selecting the base drops the cache and folds every page from the base.
    let here = Path::new(".");
    lay.take_composite_stats();
    lay.layer_op(&LayerOp::Select { name: BASE.into() }, here)?;
    let full = lay.take_composite_stats();
    lay.layer_op(
        &LayerOp::Select {
            name: format!("layer {}", c.painted + 1),
        },
        here,
    )?;
    lay.take_composite_stats();
    let frame_plain_ms = frames(gpu, &mut plain, c, heater)?;
    let frame_layered_ms = frames(gpu, &mut lay, c, heater)?;
    let r = LayersResult {
        name: c.name.to_string(),
        terrain: [desc.width, desc.height],
        layers: c.layers as u32,
        painted_layer: c.painted as u32 + 1,
        brush_radius: c.run.radius,
        instances,
        plain_us_per_instance: plain_waves,
        layered_brush_us_per_instance: waves,
        layered_composite_us_per_instance: folds,
        layered_over_plain: super::ratio(waves + folds, plain_waves),
        one_layer_us_per_instance: one_waves + one_folds,
        layered_over_one_layer: super::ratio(waves + folds, one_waves + one_folds),
        dirty_pages: pages,
        blends_per_page: if pages > 0 {
            blends as f64 / pages as f64
        } else {
            0.0
        },
        composite_us_per_page: if pages > 0 {
            folds * instances as f64 / pages as f64
        } else {
            0.0
        },
        full_fold_us_per_page: if full.pages > 0 {
            full.gpu_ns * 1e-3 / full.pages as f64
        } else {
            0.0
        },
        frame_plain_ms,
        frame_layered_ms,
        frame_layered_over_plain: super::ratio(frame_layered_ms, frame_plain_ms),
        frames: c.run.frames as u32,
    };
    eprintln!(
        "{}: r{} noise on layer {} of {}: {:.2} µs/instance (waves {:.2} + composite {:.2}) vs {:.2} on a one-layer document ({:.2}x), {:.2} without layers ({:.2}x); composite {:.1} µs per dirty page ({} pages, {:.1} blends each), full fold {:.1} µs/page; frames {:.2} vs {:.2} ms ({:.2}x)",
        r.name, c.run.radius, r.painted_layer, r.layers,
        waves + folds, waves, folds, r.one_layer_us_per_instance, r.layered_over_one_layer, plain_waves, r.layered_over_plain,
        r.composite_us_per_page, pages, r.blends_per_page, r.full_fold_us_per_page,
        frame_layered_ms, frame_plain_ms, r.frame_layered_over_plain
    );
    Ok(Some(r))
}
