//! Brushes: every type x radius x batch x page size x format on the GPU (one stroke of
//! instances on a circle, timestamps of its waves), and each type's CPU twin.

use super::ceilings::{Heater, HEAT_LONG_MS, HEAT_SHORT_MS};
use super::noise::flops_per_sample;
use super::{
    median, ratio, spread, BenchOptions, BrushCost, BrushResult, BrushSection, Ceilings,
    CpuTwinResult, REFERENCE_BATCH, REFERENCE_PAGE,
};
use crate::brush::cpu::CpuTerrain;
use crate::brush::gpu::StrokeStats;
use crate::brush::shared::BrushInstance;
use crate::brush::stamp::Stamp;
use crate::brush::{touched_pages, BrushSettings, BrushType};
use crate::document::Document;
use crate::gpu::Gpu;
use crate::noise::{CpuTables, GpuNoise, NoiseKind, NoiseSettings, NoiseTables};
use crate::pages::geometry::{DocumentDesc, HeightFormat};
use crate::session::paint_loop::circle_instances;
use anyhow::{anyhow, Result};
use std::sync::Arc;
use std::time::Instant;

/// The matrix of one run.
struct Matrix {
    side: u32,
    instances: usize,
    radii: &'static [u32],
    batches: &'static [u32],
    pages: &'static [u32],
    formats: &'static [HeightFormat],
    /// Page sizes at which pointwise brushes also run in place, and without tile culling.
    variant_pages: &'static [u32],
}

const FULL: Matrix = Matrix {
    side: 4096,
    instances: 64,
    radii: &[16, 64, 256, 1024],
    batches: &[1, 4, 16, 32],
    pages: &[256, 512, 1024],
    formats: &[HeightFormat::R32f, HeightFormat::R16],
    variant_pages: &[512],
};

const QUICK: Matrix = Matrix {
    side: 1024,
    instances: 32,
    radii: &[16, 64],
    batches: &[1, 16],
    pages: &[512],
    formats: &[HeightFormat::R32f, HeightFormat::R16],
    variant_pages: &[512],
};

fn format_name(f: HeightFormat) -> &'static str {
    match f {
        HeightFormat::R32f => "r32f",
        HeightFormat::R16 => "r16",
    }
}

/// One brush configuration.
#[derive(Clone, Copy)]
struct Config {
    format: HeightFormat,
    page: u32,
    brush: BrushType,
    radius: u32,
    batch: u32,
    in_place: bool,
    tile_culling: bool,
}

impl Config {
    fn name(&self) -> String {
        format!(
            "brush/{}/r{}/b{}/p{}/{}{}",
            self.brush.name(),
            self.radius,
            self.batch,
            self.page,
            format_name(self.format),
            match (self.in_place, self.tile_culling) {
                (true, _) => "/in-place",
                (false, false) => "/no-cull",
                (false, true) => "",
            }
        )
    }
}

/// Every configuration of matrix `m`, in run order (one document per format and page size).
fn configs(m: &Matrix) -> Vec<Config> {
    let mut out = Vec::new();
    for &format in m.formats {
        for &page in m.pages {
            for brush in BrushType::ALL {
                for &radius in m.radii {
                    for &batch in m.batches {
                        let c = Config {
                            format,
                            page,
                            brush,
                            radius,
                            batch,
                            in_place: false,
                            tile_culling: true,
                        };
                        out.push(c);
                        if !brush.is_multitap() && m.variant_pages.contains(&page) {
                            out.push(Config {
                                in_place: true,
                                ..c
                            });
                            out.push(Config {
                                tile_culling: false,
                                ..c
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// FLOPs per covered texel per instance, without noise (docs/bench.md): distance and test 6
/// (sub 2, dot 3, sqrt 1), parabolic falloff 5, weight and accumulate 3.
fn flops_per_texel_instance(brush: BrushType) -> f64 {
    const BASE: f64 = 14.0;
    match brush {
        BrushType::Raise | BrushType::Lower | BrushType::Noise => BASE,
        // clamp and lerp toward the target
        BrushType::Level | BrushType::Mask | BrushType::Erase => BASE + 4.0,
        // the terrace target (divide, floor, smoothstep 8, scale) and the move toward it
        BrushType::Terrace => BASE + 16.0,
        // the plane (2 multiply-adds, add) and the move toward it
        BrushType::Flatten | BrushType::Ramp => BASE + 7.0,
        // the instance's input transform
        BrushType::Directional => BASE + 8.0,
        // 3x3 binomial average (9 multiply-adds) and the move toward it
        BrushType::Smooth | BrushType::Contrast => BASE + 20.0,
        // stamp-space position 10, bilinear blend of 4 texels 6
        BrushType::Stamp => BASE + 16.0,
        // Not a brush kernel: the erosion section measures its steps.
        BrushType::Erode => 0.0,
    }
}

fn cost(brush: &BrushSettings) -> BrushCost {
    BrushCost {
        brush: brush.brush.name().to_string(),
        flops_per_texel_instance: flops_per_texel_instance(brush.brush),
        flops_per_noise_eval: if brush.brush.uses_noise() {
            flops_per_sample(&brush.noise)
        } else {
            0.0
        },
        bytes_per_texel_written_r32f: 8,
        bytes_per_texel_written_r16: 4,
    }
}

/// Texels (integer positions) strictly inside the circle of `b`, clipped to `d`.
fn disc_texels(b: &BrushInstance, d: &DocumentDesc) -> u64 {
    let (cx, cy, r) = (
        f64::from(b.center[0]),
        f64::from(b.center[1]),
        f64::from(b.radius),
    );
    let y0 = ((cy - r).floor() as i64).max(0);
    let y1 = ((cy + r).ceil() as i64).min(i64::from(d.height) - 1);
    (y0..=y1)
        .map(|y| {
            let dy = y as f64 - cy;
            let w2 = r * r - dy * dy;
            if w2 <= 0.0 {
                return 0;
            }
            let half = w2.sqrt();
            let x0 = ((cx - half).floor() as i64 + 1).max(0);
            let x1 = ((cx + half).ceil() as i64 - 1).min(i64::from(d.width) - 1);
            (x1 - x0 + 1).max(0) as u64
        })
        .sum()
}

/// A smooth, never-zero stamp (256², a ridged bump).
fn bench_stamp() -> Stamp {
    let n = 256u32;
    let values = (0..n * n)
        .map(|i| {
            let (x, y) = (
                (i % n) as f32 / (n - 1) as f32 * 2.0 - 1.0,
                (i / n) as f32 / (n - 1) as f32 * 2.0 - 1.0,
            );
            let r2 = (x * x + y * y).min(1.0);
            (1.0 - r2) * (0.6 + 0.4 * (9.0 * x).sin() * (7.0 * y).cos())
        })
        .collect();
    Stamp {
        width: n,
        height: n,
        values,
        source: None,
    }
}

fn settings(brush: BrushType, radius: u32, stamp: &Arc<Stamp>) -> BrushSettings {
    let mut b = BrushSettings::new(brush);
    b.radius = radius as f32;
    b.strength = 0.05;
    if brush == BrushType::Stamp {
        b.stamp = Some(stamp.clone());
    }
    b
}

/// Uneven initial heights in 0.1..0.9 (fbm), so no kernel reads a constant.
fn initial_heights(gpu: &Arc<Gpu>, tables: &NoiseTables, side: u32) -> Result<Vec<f32>> {
    let mut noise = GpuNoise::new(gpu, tables)?;
    let mut s = NoiseSettings::new(NoiseKind::Fbm);
    s.octaves = 6;
    s.scale = 4.0 / side as f32;
    let run = noise.generate(&s, side, side)?;
    Ok(run
        .heights
        .iter()
        .map(|h| (0.5 + 0.3 * h).clamp(0.1, 0.9))
        .collect())
}

/// Every brush measurement of a run (`quick` or full), in run order.
pub(super) fn names(quick: bool) -> Vec<String> {
    configs(if quick { &QUICK } else { &FULL })
        .iter()
        .map(Config::name)
        .collect()
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    ceilings: &Ceilings,
    tables: &NoiseTables,
    heater: &Heater,
) -> Result<Option<BrushSection>> {
    let m = if o.quick { &QUICK } else { &FULL };
    // R16 storage images are optional in Vulkan: without them the r16 half is skipped, said.
    let r16 = gpu.supports_storage_format(crate::gpu::vk::Format::R16_UNORM);
    if !r16 {
        eprintln!(
            "brushes: {} has no R16_UNORM storage images; r16 configurations skipped",
            gpu.info().name
        );
    }
    let configs: Vec<Config> = configs(m)
        .into_iter()
        .filter(|c| o.wants(&c.name()) && (r16 || c.format != HeightFormat::R16))
        .collect();
    if configs.is_empty() {
        return Ok(None);
    }
    let side = m.side;
    let w = Workload {
        o,
        m,
        heater,
        heights: initial_heights(gpu, tables, side)?,
        stamp: Arc::new(bench_stamp()),
    };

    heater.heat(HEAT_LONG_MS)?;
    let mut results: Vec<BrushResult> = Vec::new();
    let mut current: Option<((HeightFormat, u32), Document)> = None;
    for c in &configs {
        let (f, page) = (c.format, c.page);
        let desc = DocumentDesc {
            format: f,
            page_size: page,
            ..DocumentDesc::for_heights(side, side)
        };
        if current.as_ref().map(|c| c.0) != Some((f, page)) {
            drop(current.take()); // free the previous document first
            current = Some((
                (f, page),
                Document::from_heights(gpu, desc, &w.heights, tables)?,
            ));
        }
        let terrain = &mut current.as_mut().expect("made above").1;
        results.push(w.measure_config(terrain, c, &desc, ceilings)?);
    }
    drop(current);

    let cpu_twin = w.measure_cpu_twins(tables, &results);
    let costs = BrushType::ALL
        .into_iter()
        .map(|b| cost(&settings(b, 64, &w.stamp)))
        .collect();
    Ok(Some(BrushSection {
        document: [side, side],
        instances_per_stroke: m.instances as u32,
        costs,
        results,
        cpu_twin,
    }))
}

/// What every measurement of a run shares: the options, the matrix, the heater, the initial
/// heights and the stamp.
struct Workload<'a> {
    o: &'a BenchOptions,
    m: &'a Matrix,
    heater: &'a Heater,
    heights: Vec<f32>,
    stamp: Arc<Stamp>,
}

impl Workload<'_> {
    /// The stroke every measurement paints with `brush`: the matrix's instances on a circle
    /// around the document's centre.
    fn stroke(&self, brush: &BrushSettings) -> Vec<BrushInstance> {
        let side = self.m.side;
        let centre = [side as f32 * 0.5, side as f32 * 0.5];
        let ring = side as f32 * 0.3;
        circle_instances(brush, centre, ring, 0, self.m.instances)
    }

    /// Measures configuration `c` on `terrain` (a document of its format and page size, `desc`)
    /// and prints its line.
    fn measure_config(
        &self,
        terrain: &mut Document,
        c: &Config,
        desc: &DocumentDesc,
        ceilings: &Ceilings,
    ) -> Result<BrushResult> {
        let (f, page, brush_type, radius, batch) = (c.format, c.page, c.brush, c.radius, c.batch);
        terrain.brushes.set_batch(batch as usize)?;
        terrain.brushes.set_in_place(c.in_place);
        terrain.brushes.set_tile_culling(c.tile_culling);
        let brush = settings(brush_type, radius, &self.stamp);
        let instances = self.stroke(&brush);
        let (times, st) = self.time_stroke(terrain, &brush, &instances)?;
        let gpu_ms = median(&times);
        let gpu_spread = spread(&times);
        let gpu_s = gpu_ms * 1e-3;
        let covered: u64 = instances.iter().map(|b| disc_texels(b, desc)).sum();
        let model = cost(&brush);
        let noise_evals = match brush_type {
            // Evaluated at most once per texel per pass, only where an instance covers it.
            BrushType::Noise => covered.min(st.texels_written),
            BrushType::Directional => covered,
            _ => 0,
        };
        let flops = covered as f64 * model.flops_per_texel_instance
            + noise_evals as f64 * model.flops_per_noise_eval;
        let bytes = st.texels_written * desc.texel_bytes() * 2;
        let gb_s = ratio(bytes as f64, gpu_s * 1e9);
        let gflop_s = ratio(flops, gpu_s * 1e9);
        let r = BrushResult {
            name: c.name(),
            brush: brush_type.name().to_string(),
            radius,
            batch,
            page_size: page,
            format: format_name(f).to_string(),
            path: if c.in_place { "in-place" } else { "ping-pong" }.to_string(),
            tile_culling: c.tile_culling,
            instances: instances.len() as u32,
            passes: st.passes as u64,
            waves: st.waves as u64,
            covered_texels: covered,
            texels_written: st.texels_written,
            gpu_ms,
            gpu_spread,
            us_per_instance: ratio(gpu_ms * 1e3, instances.len() as f64),
            instances_per_s: ratio(instances.len() as f64, gpu_s),
            mtexel_s: ratio(covered as f64, gpu_s * 1e6),
            bytes_moved: bytes,
            gb_s,
            fraction_of_copy: ratio(gb_s, ceilings.copy_image.gb_s),
            flops,
            gflop_s,
            fraction_of_fma: ratio(gflop_s, ceilings.fma.gflop_s),
        };
        eprintln!(
            "{}: {:.2} us/instance, {:.0} Mtexel/s, {:.1} GB/s ({:.1}% of copy), {:.1} GFLOP/s ({:.1}% of FMA)",
            r.name,
            r.us_per_instance,
            r.mtexel_s,
            r.gb_s,
            r.fraction_of_copy * 100.0,
            r.gflop_s,
            r.fraction_of_fma * 100.0
        );
        Ok(r)
    }

    /// Paints the stroke (warm-up, then the repeats), undoing it each time after heating the
    /// GPU: the repeats' GPU times (ms) and the last one's statistics.
    fn time_stroke(
        &self,
        terrain: &mut Document,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<(Vec<f64>, StrokeStats)> {
        let o = self.o;
        let mut times = Vec::new();
        let mut stats = None;
        for i in 0..o.warmup + o.repeats {
            self.heater.heat(HEAT_SHORT_MS)?;
            terrain.apply_stroke(brush, instances)?;
            let st = terrain.brushes.last_stroke.clone();
            terrain.undo()?;
            if i >= o.warmup {
                times.push(st.gpu_ns.ok_or_else(|| anyhow!("no timestamps"))? * 1e-6);
                stats = Some(st);
            }
        }
        Ok((times, stats.expect("at least one repeat")))
    }

    /// CPU twins: r32f at the reference page size, against the GPU's reference configuration.
    fn measure_cpu_twins(
        &self,
        tables: &NoiseTables,
        results: &[BrushResult],
    ) -> Vec<CpuTwinResult> {
        let m = self.m;
        let page = if m.pages.contains(&REFERENCE_PAGE) {
            REFERENCE_PAGE
        } else {
            m.pages[0]
        };
        let desc = DocumentDesc {
            page_size: page,
            ..DocumentDesc::for_heights(m.side, m.side)
        };
        let cpu_tables = Arc::new(CpuTables::new(tables));
        let mut twin = CpuTerrain::from_heights(desc, &self.heights, cpu_tables);
        let mut cpu_twin = Vec::new();
        for brush_type in BrushType::ALL {
            for &radius in m.radii {
                // The GPU figure to compare with: the reference batch, else the largest measured.
                let Some(gpu_ref) = results
                    .iter()
                    .filter(|r| {
                        r.brush == brush_type.name()
                            && r.radius == radius
                            && r.page_size == page
                            && r.format == "r32f"
                            && r.path == "ping-pong"
                            && r.tile_culling
                            && r.batch <= REFERENCE_BATCH
                    })
                    .max_by_key(|r| r.batch)
                else {
                    continue;
                };
                let brush = settings(brush_type, radius, &self.stamp);
                cpu_twin.push(self.measure_twin(&mut twin, &desc, &brush, gpu_ref));
            }
        }
        cpu_twin
    }

    /// Times `brush`'s stroke on the CPU twin `twin` (`desc`, r32f), less its page copies, and
    /// prints how it compares with `gpu_ref`.
    fn measure_twin(
        &self,
        twin: &mut CpuTerrain,
        desc: &DocumentDesc,
        brush: &BrushSettings,
        gpu_ref: &BrushResult,
    ) -> CpuTwinResult {
        let instances = self.stroke(brush);
        let per_instance = disc_texels(&instances[0], desc).max(1);
        // Enough instances for ~16 M covered texels, at least one.
        let n = ((1u64 << 24) / per_instance).clamp(1, instances.len() as u64) as usize;
        let reps = if self.o.quick { 1 } else { 2 };
        let ms = median(
            &(0..reps)
                .map(|_| {
                    let t = Instant::now();
                    twin.apply_stroke(brush, &instances[..n]);
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    twin.undo();
                    ms
                })
                .collect::<Vec<_>>(),
        );
        // The twin copies each touched page for undo; GPU times leave page copies out, so
        // the comparison does too.
        let copy_ms = median(
            &(0..reps)
                .map(|_| {
                    let t = Instant::now();
                    for id in touched_pages(desc, &instances[..n]) {
                        if let Some(p) = twin.page(id) {
                            std::hint::black_box(p.as_ref().clone());
                        }
                    }
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect::<Vec<_>>(),
        );
        let cpu_us = (ms - copy_ms).max(0.0) * 1e3 / n as f64;
        let t = CpuTwinResult {
            brush: brush.brush.name().to_string(),
            radius: gpu_ref.radius,
            page_size: desc.page_size,
            format: "r32f".to_string(),
            instances: n as u32,
            cpu_ms: ms,
            cpu_page_copy_ms: copy_ms,
            cpu_us_per_instance: cpu_us,
            gpu_reference: gpu_ref.name.clone(),
            gpu_us_per_instance: gpu_ref.us_per_instance,
            gpu_over_cpu: ratio(cpu_us, gpu_ref.us_per_instance),
        };
        eprintln!(
            "cpu twin {} r{}: {:.1} us/instance; GPU ({}) {:.2}x faster",
            t.brush, t.radius, t.cpu_us_per_instance, t.gpu_reference, t.gpu_over_cpu
        );
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disc_texels_counts_a_clipped_circle() {
        let d = DocumentDesc::for_heights(100, 100);
        let b = |c: [f32; 2], r: f32| BrushInstance {
            center: c,
            radius: r,
            inner_radius: 0.0,
            strength: 1.0,
            direction: 0.0,
            axis: [1.0, 0.0],
        };
        // Brute force over the document.
        let brute = |i: &BrushInstance| {
            (0..100)
                .flat_map(|y| (0..100).map(move |x| (x, y)))
                .filter(|&(x, y)| {
                    let (dx, dy) = (x as f32 - i.center[0], y as f32 - i.center[1]);
                    (dx * dx + dy * dy).sqrt() < i.radius
                })
                .count() as u64
        };
        for i in [
            b([50.0, 50.0], 10.0),
            b([50.3, 49.6], 7.5),
            b([2.0, 3.0], 20.0),
            b([99.5, 0.0], 30.0),
        ] {
            assert_eq!(disc_texels(&i, &d), brute(&i), "{:?}", i.center);
        }
    }
}
