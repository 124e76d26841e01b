//! Erosion (docs/erosion.md): GPU ms per step of each model at several sizes, the bytes a step
//! moves by a stated cost model and the GB/s that makes against the same run's buffer copy
//! ceiling (the state lives in storage buffers), and the CPU twin on all cores at the smallest
//! size for the GPU's ratio over it.

use super::ceilings::{timer, Heater, HEAT_LONG_MS, HEAT_SHORT_MS};
use super::{median, BenchOptions, Ceilings};
use crate::erosion::cpu::State;
use crate::erosion::gpu::{GpuErosion, STEPS_PER_SUBMIT};
use crate::erosion::{ErosionParams, Model};
use crate::gpu::Gpu;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// Bytes a hydraulic step reads and writes per texel if neighbour reads hit the caches:
/// `flux` reads b, d and the flux and writes the flux (40), `water` reads d, the flux, b and s
/// and writes b, d2 and s1 (40), `transport` reads d, the flux, s1 and d2 and writes s and d (36).
pub const HYDRAULIC_BYTES: u64 = 116;
/// A thermal step: `thermal_out` reads b and writes a/E (8), `thermal_in` reads b and a/E and
/// writes b (12).
pub const THERMAL_BYTES: u64 = 20;

fn bytes_per_texel(model: Model) -> u64 {
    match model {
        Model::Hydraulic => HYDRAULIC_BYTES,
        Model::Thermal => THERMAL_BYTES,
        Model::Both => HYDRAULIC_BYTES + THERMAL_BYTES,
    }
}

/// One model at one size.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErosionRow {
    pub name: String,
    pub model: String,
    pub side: u32,
    pub gpu_ms_per_step: f64,
    pub steps_per_s: f64,
    /// By the cost model (see `HYDRAULIC_BYTES`).
    pub bytes_per_texel: u64,
    pub gb_s: f64,
    /// GB/s over the same run's storage-buffer copy ceiling.
    pub fraction_of_copy: f64,
    /// The CPU twin on all cores at this size (measured at the smallest size only).
    pub cpu_ms_per_step: Option<f64>,
    pub gpu_over_cpu: Option<f64>,
}

/// The erosion brush: whole strokes on a document, wall clock (each instance reads its square
/// back, runs its steps on the GPU and writes the square into the page store).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErosionBrushRow {
    pub name: String,
    pub radius: f32,
    pub steps: u32,
    pub instances: usize,
    pub instances_per_s: f64,
    /// The square went through the host (the baseline of the GPU path).
    #[serde(default)]
    pub via_host: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErosionResult {
    pub rows: Vec<ErosionRow>,
    pub cpu_threads: usize,
    #[serde(default)]
    pub brush: Vec<ErosionBrushRow>,
}

/// (radius, steps, instances) of the brush cases.
fn brush_cases(quick: bool) -> &'static [(f32, u32, usize)] {
    if quick {
        &[(16.0, 5, 3)]
    } else {
        &[(64.0, 50, 40), (256.0, 50, 20)]
    }
}

fn brush_name(radius: f32, steps: u32) -> String {
    format!("erosion/brush/r{radius}/s{steps}")
}

fn host_name(radius: f32, steps: u32) -> String {
    format!("{}/host", brush_name(radius, steps))
}

fn sides(quick: bool) -> &'static [u32] {
    if quick {
        &[128]
    } else {
        &[1024, 2048, 4096]
    }
}

fn name(model: Model, side: u32) -> String {
    format!("erosion/{}/{side}", model.name())
}

pub(super) fn names(quick: bool) -> Vec<String> {
    Model::ALL
        .iter()
        .flat_map(|&m| sides(quick).iter().map(move |&s| name(m, s)))
        .chain(
            brush_cases(quick)
                .iter()
                .flat_map(|&(r, s, _)| [brush_name(r, s), host_name(r, s)]),
        )
        .collect()
}

/// Instances per second of erosion-brush strokes (median of the repeats; each stroke undone).
fn measure_brush(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    tables: &crate::noise::NoiseTables,
    heater: &Heater,
) -> Result<Vec<ErosionBrushRow>> {
    use crate::brush::shared::BrushInstance;
    use crate::brush::{BrushSettings, BrushType};
    let cases: Vec<(f32, u32, usize)> = brush_cases(o.quick)
        .iter()
        .copied()
        .filter(|&(r, s, _)| o.wants(&brush_name(r, s)) || o.wants(&host_name(r, s)))
        .collect();
    if cases.is_empty() {
        return Ok(Vec::new());
    }
    let side = if o.quick { 256 } else { 2048 };
    let desc = crate::pages::DocumentDesc::for_heights(side, side);
    let heights: Vec<f32> = terrain(side).iter().map(|b| b / side as f32).collect();
    let mut doc = crate::document::Document::from_heights(gpu, desc, &heights, tables)?;
    let mut tools = crate::edit::Tools::default();
    let mut rows = Vec::new();
    for (radius, steps, count) in cases {
        let mut brush = BrushSettings::new(BrushType::Erode);
        brush.radius = radius;
        brush.strength = 0.8;
        brush.erosion.steps = steps;
        let instances: Vec<BrushInstance> = (0..count)
            .map(|i| {
                let t = i as f32 / count.max(2) as f32;
                BrushInstance {
                    center: [side as f32 * (0.2 + 0.6 * t), side as f32 * 0.5],
                    radius,
                    strength: brush.strength,
                    ..Default::default()
                }
            })
            .collect();
        for via_host in [false, true] {
            let name = match via_host {
                false => brush_name(radius, steps),
                true => host_name(radius, steps),
            };
            if !o.wants(&name) {
                continue;
            }
            tools.erode.set_via_host(via_host);
            // Warm-up: pipelines, allocations.
            crate::edit::stroke::apply(&mut doc, &mut tools, &brush, &instances[..1])?;
            doc.undo()?;
            let mut rates = Vec::new();
            for _ in 0..o.repeats {
                heater.heat(HEAT_SHORT_MS)?;
                let t0 = Instant::now();
                crate::edit::stroke::apply(&mut doc, &mut tools, &brush, &instances)?;
                doc.pump(None)?;
                rates.push(count as f64 / t0.elapsed().as_secs_f64());
                doc.undo()?;
            }
            let rate = median(&rates);
            eprintln!("{name}: {rate:.0} instances/s ({count} instances of {steps} steps)");
            rows.push(ErosionBrushRow {
                name,
                radius,
                steps,
                instances: count,
                instances_per_s: rate,
                via_host,
            });
        }
    }
    Ok(rows)
}

/// A side x side terrain with slopes in every direction (heights in texels, about a quarter of
/// the side), cheap to make at any size.
pub(super) fn terrain(side: u32) -> Vec<f32> {
    let f = side as f32;
    (0..side * side)
        .map(|i| {
            let (x, y) = ((i % side) as f32 / f, (i / side) as f32 / f);
            let tau = std::f32::consts::TAU;
            f * (0.12 * (tau * 2.0 * x).sin() * (tau * 1.5 * y).cos()
                + 0.06 * (tau * 7.0 * (x + 0.3 * y)).sin()
                + 0.03 * (tau * 19.0 * (y - 0.2 * x)).cos()
                + 0.1)
        })
        .collect()
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    ceilings: &Ceilings,
    tables: &crate::noise::NoiseTables,
    heater: &Heater,
) -> Result<Option<ErosionResult>> {
    let wanted: Vec<(Model, u32)> = Model::ALL
        .iter()
        .flat_map(|&m| sides(o.quick).iter().map(move |&s| (m, s)))
        .filter(|&(m, s)| o.wants(&name(m, s)))
        .collect();
    let brush_wanted = brush_cases(o.quick)
        .iter()
        .any(|&(r, s, _)| o.wants(&brush_name(r, s)) || o.wants(&host_name(r, s)));
    if wanted.is_empty() && !brush_wanted {
        return Ok(None);
    }
    heater.heat(HEAT_LONG_MS)?;
    let params = ErosionParams::default();
    let smallest = sides(o.quick)[0];
    let mut rows = Vec::new();
    for (model, side) in wanted {
        let b = terrain(side);
        let push = params.push([side, side]);
        let mut g = GpuErosion::new(gpu, [side, side], &b)?;
        let t = timer(gpu, 1)?;
        // Warm-up: the water spreads first (and caches, pipelines, clocks settle).
        g.run(
            &push,
            model,
            STEPS_PER_SUBMIT * o.warmup.max(1),
            None,
            |_| {},
        )?;
        let mut per_step = Vec::new();
        for _ in 0..o.repeats {
            heater.heat(HEAT_SHORT_MS)?;
            g.submit_steps(&push, model, STEPS_PER_SUBMIT, Some(&t))?;
            let ns: f64 = t.results()?.iter().map(|p| p.gpu_ns).sum();
            per_step.push(ns * 1e-6 / STEPS_PER_SUBMIT as f64);
        }
        drop(g);
        let ms = median(&per_step);
        let texels = u64::from(side) * u64::from(side);
        let bytes = bytes_per_texel(model);
        let gb_s = (texels * bytes) as f64 / (ms * 1e-3) / 1e9;
        let cpu_ms = if side == smallest {
            let mut st = State::new(side as usize, side as usize, b);
            let steps = if o.quick { 2 } else { 3 };
            let t0 = Instant::now();
            for _ in 0..steps {
                st.step(&push, model);
            }
            Some(t0.elapsed().as_secs_f64() * 1e3 / steps as f64)
        } else {
            None
        };
        eprintln!(
            "{}: {:.4} ms/step, {:.0} steps/s, {:.0} GB/s by the cost model ({:.0}% of copy){}",
            name(model, side),
            ms,
            1e3 / ms,
            gb_s,
            100.0 * gb_s / ceilings.copy_buffer.gb_s,
            cpu_ms.map_or(String::new(), |c| format!(", CPU twin {c:.2} ms/step"))
        );
        rows.push(ErosionRow {
            name: name(model, side),
            model: model.name().to_string(),
            side,
            gpu_ms_per_step: ms,
            steps_per_s: 1e3 / ms,
            bytes_per_texel: bytes,
            gb_s,
            fraction_of_copy: gb_s / ceilings.copy_buffer.gb_s,
            cpu_ms_per_step: cpu_ms,
            gpu_over_cpu: cpu_ms.map(|c| c / ms),
        });
    }
    let brush = measure_brush(gpu, o, tables, heater)?;
    Ok(Some(ErosionResult {
        rows,
        cpu_threads: rayon::current_num_threads(),
        brush,
    }))
}
