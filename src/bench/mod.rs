//! `scarp bench`: GPU brush and noise benchmarks anchored to ceilings measured in the same run (a
//! copy kernel for bandwidth, an FMA chain for arithmetic), with the CPU twins and the `noise`
//! crate as baselines, and the editor's frame time while a brush paints. The report is JSON
//! (schema in docs/bench.md), Markdown tables and a plot.
//!
//! GPU times are timestamp queries around the dispatches; every measurement runs `warmup`
//! untimed times first and reports the median of `repeats`.

mod brushes;
mod ceilings;
pub mod compare;
pub mod erosion;
mod frames;
pub mod geology;
pub mod layers;
pub mod lighting;
mod noise;
mod paging;
pub mod plot;
pub mod report;

use crate::gpu::Gpu;
use crate::noise::NoiseTables;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// Version of the JSON layout below; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Small sizes and a reduced brush matrix (CI, lavapipe).
    pub quick: bool,
    /// Run only measurements whose name contains one of these (all when empty). Ceilings always
    /// run: every other figure is a fraction of them.
    pub filters: Vec<String>,
    /// Timed runs per measurement; the median is reported.
    pub repeats: usize,
    /// Untimed runs before them.
    pub warmup: usize,
    /// The repository's `assets/` folder (journals of the frame benchmark).
    pub assets: PathBuf,
    pub table_seed: u64,
}

impl BenchOptions {
    pub fn new(quick: bool, assets: PathBuf, table_seed: u64) -> Self {
        Self {
            quick,
            filters: Vec::new(),
            repeats: if quick { 3 } else { 5 },
            warmup: 1,
            assets,
            table_seed,
        }
    }

    /// Whether the measurement called `name` is selected.
    pub fn wants(&self, name: &str) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| name.contains(f.as_str()))
    }
}

/// The machine and build a report comes from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct System {
    pub device: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    pub vulkan: String,
    pub timestamp_period_ns: f64,
    pub cpu: String,
    pub cpu_threads: usize,
    pub os: String,
    pub scarp_version: String,
    pub commit: String,
    /// Start of the run, UTC, ISO 8601.
    pub started_utc: String,
    /// Validation layers were on: CPU-side costs include theirs.
    pub validation: bool,
}

/// The run's settings.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub quick: bool,
    pub filters: Vec<String>,
    pub warmup: usize,
    pub repeats: usize,
    pub table_seed: u64,
    /// FMA work ran before measurements to hold the GPU's clocks up (off on CPU devices).
    pub clock_heater: bool,
}

/// One bandwidth ceiling.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CopyCeiling {
    /// Elements (f32) copied per pass.
    pub elements: u64,
    /// Bytes read plus bytes written per pass.
    pub bytes: u64,
    pub median_ms: f64,
    pub gb_s: f64,
}

/// The arithmetic ceiling.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FmaCeiling {
    pub invocations: u64,
    /// Dependent FMAs per chain; 8 independent chains per invocation.
    pub iterations: u32,
    /// 2 per FMA.
    pub flops: u64,
    pub median_ms: f64,
    pub gflop_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ceilings {
    /// R32F storage image to storage image (`imageLoad`/`imageStore`, the pages' path): the
    /// ceiling every `fraction_of_copy` refers to.
    pub copy_image: CopyCeiling,
    /// The same bytes between storage buffers (vec4 per invocation), for comparison.
    pub copy_buffer: CopyCeiling,
    /// The image copy at the size of one radius-1024 brush wave (2048², 512² with `--quick`),
    /// each pass behind a barrier on the one before, as a stroke's waves are: what a wave of
    /// that size can reach (absent in reports before 2026-11-27).
    #[serde(default)]
    pub copy_image_wave: Option<CopyCeiling>,
    /// The same square in pages of 512 (128 with `--quick`), a dispatch a page behind one
    /// barrier a pass, as a brush's wave runs: what the pass structure alone allows (absent in
    /// reports before 2026-11-28).
    #[serde(default)]
    pub copy_image_wave_pages: Option<CopyCeiling>,
    pub fma: FmaCeiling,
}

/// The `noise` crate's `Fbm<Perlin>` on the CPU.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PeerBaseline {
    pub implementation: String,
    pub octaves: u32,
    pub one_thread_msamples_s: f64,
    pub all_cores_msamples_s: f64,
    pub threads: usize,
}

/// One noise kind.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoiseResult {
    pub name: String,
    pub kind: String,
    pub octaves: u32,
    /// Median GPU time of the whole grid (gradients fetched from the table, the default).
    pub gpu_ms: f64,
    /// Spread of the repeats of `gpu_ms`: (slowest - fastest) / median (0 in reports made
    /// before it was recorded, or with one repeat).
    #[serde(default)]
    pub gpu_spread: f64,
    /// The same with the gradient table staged in shared memory per workgroup.
    pub gpu_ms_shared_gradients: f64,
    /// `gpu_ms / gpu_ms_shared_gradients` (above 1: shared memory is faster).
    pub shared_gradients_speedup: f64,
    pub gpu_msamples_s: f64,
    pub cpu_twin_ms: f64,
    pub cpu_twin_msamples_s: f64,
    pub gpu_over_cpu_twin: f64,
    pub gpu_over_peer_all_cores: f64,
    pub cpu_twin_over_peer_all_cores: f64,
    /// GPU rate / the SIMD peer's rate on all cores (0 in reports made before it was measured).
    #[serde(default)]
    pub gpu_over_simd_peer_all_cores: f64,
    /// GPU rate / FastNoise2's on all cores (where the bench was built with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_over_fastnoise2_all_cores: Option<f64>,
    /// Output bytes (4 per sample) per second.
    pub gpu_write_gb_s: f64,
    pub fraction_of_copy: f64,
    /// Assumed FLOPs per sample (hand count of noise.glsl, docs/bench.md).
    pub flops_per_sample: f64,
    pub gpu_gflop_s: f64,
    pub fraction_of_fma: f64,
    /// Table lookups per second (3 per octave: a perm texel, two gradient pairs).
    pub gpu_fetches_g_s: f64,
    /// max |gpu - cpu| / max(1, |cpu|) over the grid.
    pub max_rel_diff_vs_cpu_twin: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoiseSection {
    pub width: u32,
    pub height: u32,
    pub peer: PeerBaseline,
    /// The strongest CPU peer: SIMD fBm (absent from reports made before it was measured).
    #[serde(default)]
    pub simd_peer: Option<PeerBaseline>,
    /// FastNoise2's fBm, where the bench was built with the `fastnoise2` feature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastnoise2_peer: Option<PeerBaseline>,
    pub kinds: Vec<NoiseResult>,
}

/// The cost model of one brush type (docs/bench.md).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BrushCost {
    pub brush: String,
    /// FLOPs per covered texel per instance.
    pub flops_per_texel_instance: f64,
    /// FLOPs of each noise evaluation (0 for brushes without noise).
    pub flops_per_noise_eval: f64,
    /// Bytes per texel a pass writes: it reads and writes each texel of its rectangle once.
    pub bytes_per_texel_written_r32f: u32,
    pub bytes_per_texel_written_r16: u32,
}

/// One brush configuration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BrushResult {
    pub name: String,
    pub brush: String,
    pub radius: u32,
    pub batch: u32,
    pub page_size: u32,
    pub format: String,
    /// `ping-pong` (front image read, back image written) or `in-place` (pointwise brushes).
    pub path: String,
    /// Pointwise kernels culled the batch's instances per 16x16 tile (the default; multi-tap
    /// brushes have no batch and report true).
    pub tile_culling: bool,
    pub instances: u32,
    pub passes: u64,
    pub waves: u64,
    /// Texels inside instance circles, summed over instances (clipped to the document).
    pub covered_texels: u64,
    /// Texels the passes wrote (each also read once).
    pub texels_written: u64,
    pub gpu_ms: f64,
    /// Spread of the repeats of `gpu_ms`: (slowest - fastest) / median (0 in reports made
    /// before it was recorded, or with one repeat).
    #[serde(default)]
    pub gpu_spread: f64,
    pub us_per_instance: f64,
    pub instances_per_s: f64,
    /// Covered texels per second.
    pub mtexel_s: f64,
    pub bytes_moved: u64,
    pub gb_s: f64,
    pub fraction_of_copy: f64,
    pub flops: f64,
    pub gflop_s: f64,
    pub fraction_of_fma: f64,
}

/// A brush's CPU twin against the GPU.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuTwinResult {
    pub brush: String,
    pub radius: u32,
    pub page_size: u32,
    pub format: String,
    /// The stroke's first instances the twin applied (fewer for large radii).
    pub instances: u32,
    /// Wall time of the twin's stroke, its undo copies included.
    pub cpu_ms: f64,
    /// Of which: copying the touched pages (measured apart).
    pub cpu_page_copy_ms: f64,
    /// (cpu_ms - cpu_page_copy_ms) / instances, like the GPU figure without page copies.
    pub cpu_us_per_instance: f64,
    /// The GPU configuration compared with.
    pub gpu_reference: String,
    pub gpu_us_per_instance: f64,
    pub gpu_over_cpu: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BrushSection {
    pub document: [u32; 2],
    pub instances_per_stroke: u32,
    pub costs: Vec<BrushCost>,
    pub results: Vec<BrushResult>,
    pub cpu_twin: Vec<CpuTwinResult>,
}

/// Editor frames while a brush paints.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FrameResult {
    pub name: String,
    pub journal: String,
    pub terrain: [u32; 2],
    pub image: [u32; 2],
    pub frames: u32,
    pub brush: String,
    pub brush_radius: f32,
    pub instances_per_frame: u32,
    pub mean_ms: f64,
    /// Relative uncertainty of `mean_ms`: three standard errors of the mean over the mean
    /// (0 in reports made before it was recorded).
    #[serde(default)]
    pub mean_spread: f64,
    pub p99_ms: f64,
    pub fps: f64,
    pub gpu_brush_ms: f64,
    pub gpu_tile_bounds_ms: f64,
    pub gpu_draw_ms: f64,
    /// The shading pass (0 in reports made before it existed).
    #[serde(default)]
    pub gpu_shade_ms: f64,
    pub cpu_prepare_ms: f64,
    pub pump_wall_ms: f64,
    pub refresh_wall_ms: f64,
    pub triangles: f64,
    pub triangles_per_pixel: f64,
    /// Mean screen-space error bound the LOD selection used, px (0 in older reports).
    #[serde(default)]
    pub error_bound_px: f64,
}

/// A whole run. Sections left out by `--filter` are null.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub schema: u32,
    pub system: System,
    pub settings: Settings,
    pub ceilings: Ceilings,
    pub noise: Option<NoiseSection>,
    pub brushes: Option<BrushSection>,
    pub frames: Option<Vec<FrameResult>>,
    /// Page-in and page-out rates (absent from reports made before they were measured).
    #[serde(default)]
    pub paging: Option<paging::PagingResult>,
    /// A stroke and frames on a layer of a layered document (absent from earlier reports).
    #[serde(default)]
    pub layers: Option<layers::LayersResult>,
    /// Erosion steps per model and size (absent from earlier reports).
    #[serde(default)]
    pub erosion: Option<erosion::ErosionResult>,
    /// Shadows and occlusion: the whole document, near one instance, frames with and without
    /// (absent from earlier reports).
    #[serde(default)]
    pub lighting: Option<lighting::LightingResult>,
    /// Stream-power iterations per size and the default terrain's drainage statistics before
    /// and after (absent from earlier reports).
    #[serde(default)]
    pub geology: Option<geology::GeologyResult>,
}

/// Batch and page size of the reference configuration: CPU twins are compared with it, the
/// plot draws it, the Markdown pivots around it.
pub(crate) const REFERENCE_BATCH: u32 = 16;
pub(crate) const REFERENCE_PAGE: u32 = 512;

/// The reference configuration among `results`: batch 16 and page 512 where measured (else the
/// largest batch and the smallest page), r32f where measured.
pub(crate) fn reference_config(results: &[BrushResult]) -> (u32, u32, String) {
    let batch = if results.iter().any(|r| r.batch == REFERENCE_BATCH) {
        REFERENCE_BATCH
    } else {
        results
            .iter()
            .map(|r| r.batch)
            .max()
            .unwrap_or(REFERENCE_BATCH)
    };
    let page = if results.iter().any(|r| r.page_size == REFERENCE_PAGE) {
        REFERENCE_PAGE
    } else {
        results
            .iter()
            .map(|r| r.page_size)
            .min()
            .unwrap_or(REFERENCE_PAGE)
    };
    let format = if results.iter().any(|r| r.format == "r32f") {
        "r32f"
    } else {
        "r16"
    };
    (batch, page, format.to_string())
}

/// Median of `v` (the mean of the middle two for even lengths); NaN when empty.
/// (largest - smallest) / median of `v`: how far repeats of one measurement spread (0 for fewer
/// than two).
pub fn spread(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    ratio(hi - lo, median(v))
}

pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        0.5 * (s[m - 1] + s[m])
    }
}

/// `a / b`, or 0 when `b` is 0 (a measurement too short to time).
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && b.is_finite() && a.is_finite() {
        a / b
    } else {
        0.0
    }
}

/// Runs everything `options` selects on `gpu`, printing a line per measurement.
pub fn run(gpu: &Arc<Gpu>, options: &BenchOptions) -> Result<Report> {
    if gpu.info().timestamp_valid_bits == 0 {
        bail!(
            "{} has no timestamp queries: GPU times cannot be measured",
            gpu.info().name
        );
    }
    if options.repeats == 0 {
        bail!("repeats must be at least 1");
    }
    let names = names(options.quick);
    for f in &options.filters {
        if !names.iter().any(|n| n.contains(f.as_str())) {
            bail!(
                "--filter {f:?} matches no measurement of this run (names look like noise/fbm, brush/raise/r64/b16/p512/r32f, frame/4096{})",
                if options.quick {
                    "; --quick has radii 16 and 64, batches 1 and 16, page 512, frame/1024"
                } else {
                    ""
                }
            );
        }
    }
    let system = system(gpu);
    eprintln!(
        "bench: {} ({}, Vulkan {}), CPU {} x {}, commit {}{}",
        system.device,
        system.driver_info,
        system.vulkan,
        system.cpu,
        system.cpu_threads,
        system.commit,
        if system.validation {
            " — validation layers on: CPU-side costs include theirs"
        } else {
            ""
        }
    );
    let heater = ceilings::Heater::new(gpu)?;
    let ceilings = ceilings::measure(gpu, options, &heater)?;
    eprintln!(
        "ceilings: copy image {:.1} GB/s, copy buffer {:.1} GB/s, FMA {:.1} GFLOP/s, copy image a wave's size {:.1} GB/s",
        ceilings.copy_image.gb_s,
        ceilings.copy_buffer.gb_s,
        ceilings.fma.gflop_s,
        ceilings.copy_image_wave.as_ref().map_or(0.0, |c| c.gb_s)
    );
    let tables = NoiseTables::new(options.table_seed);
    let noise = noise::measure(gpu, options, &ceilings, &tables, &heater)?;
    let brushes = brushes::measure(gpu, options, &ceilings, &tables, &heater)?;
    let frames = frames::measure(gpu, options, &tables, &heater)?;
    let paging = paging::measure(gpu, options, &heater)?;
    let layers = layers::measure(gpu, options, &tables, &heater)?;
    let erosion = erosion::measure(gpu, options, &ceilings, &tables, &heater)?;
    let lighting = lighting::measure(gpu, options, &tables, &heater)?;
    let geology = geology::measure(gpu, options, &ceilings, &tables, &heater)?;
    Ok(Report {
        schema: SCHEMA_VERSION,
        system,
        settings: Settings {
            quick: options.quick,
            filters: options.filters.clone(),
            warmup: options.warmup,
            repeats: options.repeats,
            table_seed: options.table_seed,
            clock_heater: heater.enabled(),
        },
        ceilings,
        noise,
        brushes,
        frames,
        paging,
        layers,
        erosion,
        lighting,
        geology,
    })
}

/// The name of every measurement a run (`quick` or full) can make, in run order; `--filter`
/// selects among them by substring.
pub fn names(quick: bool) -> Vec<String> {
    let mut n = noise::names();
    n.extend(brushes::names(quick));
    n.extend(frames::names(quick));
    n.extend(paging::names());
    n.extend(layers::names(quick));
    n.extend(erosion::names(quick));
    n.extend(lighting::names(quick));
    n.extend(geology::names(quick));
    n
}

fn system(gpu: &Gpu) -> System {
    let info = gpu.info();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(
            || std::env::consts::ARCH.to_string(),
            |(_, v)| v.trim().to_string(),
        );
    let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let distro = os_release
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .ok();
    let os = [Some(std::env::consts::OS.to_string()), distro, kernel]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
    System {
        device: info.name.clone(),
        device_type: format!("{:?}", info.device_type),
        driver: info.driver_name.clone(),
        driver_info: info.driver_info.clone(),
        vulkan: info.api_version_string(),
        timestamp_period_ns: info.timestamp_period_ns,
        cpu,
        cpu_threads: rayon::current_num_threads(),
        os,
        scarp_version: env!("CARGO_PKG_VERSION").to_string(),
        commit: env!("SCARP_COMMIT").to_string(),
        started_utc: utc_now(),
        validation: gpu.validation_enabled(),
    }
}

/// The current time as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_lengths() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn filters_select_by_substring() {
        let mut o = BenchOptions::new(true, PathBuf::from("assets"), 1);
        assert!(o.wants("brush/raise/r16/b1/p512/r32f"));
        o.filters = vec!["raise".into(), "noise/fbm".into()];
        assert!(o.wants("brush/raise/r16/b1/p512/r32f"));
        assert!(o.wants("noise/fbm"));
        assert!(!o.wants("noise/ridged") && !o.wants("brush/lower/r16/b1/p512/r32f"));
    }

    #[test]
    fn utc_dates_are_iso() {
        let s = utc_now();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.starts_with("20") && s.ends_with('Z'), "{s}");
    }
}
