//! Geology (docs/geology.md): GPU ms per stream-power iteration at several sizes, the bytes an
//! iteration moves by a stated cost model against the same run's storage-buffer copy ceiling,
//! the CPU twin on all cores at the smallest size; and the drainage statistics of the default
//! terrain before and after the default run to steady state (docs/bench.md, "Geology").

use super::ceilings::{timer, Heater, HEAT_LONG_MS, HEAT_SHORT_MS};
use super::{median, BenchOptions, Ceilings};
use crate::geology::cpu::State;
use crate::geology::gpu::{GpuGeology, Kernels, ITERATIONS_PER_SUBMIT};
use crate::geology::params::GeologyRun;
use crate::geology::run::RunSpec;
use crate::geology::stats::{channel_agreement, drainage, ChannelAgreement, Drainage};
use crate::geology::GeologyParams;
use crate::gpu::Gpu;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// One size.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeologyRow {
    pub name: String,
    pub side: u32,
    pub gpu_ms_per_iteration: f64,
    pub iterations_per_s: f64,
    pub bytes_per_texel: u64,
    pub gb_s: f64,
    pub fraction_of_copy: f64,
    /// The CPU twin on all cores (measured at the smallest size only).
    pub cpu_ms_per_iteration: Option<f64>,
    pub gpu_over_cpu: Option<f64>,
}

/// D8 drainage counted on the GPU by pointer doubling (docs/maps.md) against geology's exact
/// accumulation on the CPU, on the same heights: the same areas, bit for bit (checked).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DrainageRow {
    pub name: String,
    pub side: u32,
    pub rounds: u32,
    /// Wall clock of one count: the heights up, the passes, the counts back (median).
    pub gpu_wall_ms: f64,
    /// GPU time of the passes alone (median).
    pub gpu_ms: f64,
    /// `geology::cpu::d8_area` (receivers on all cores, the sort and sum on one), wall clock.
    pub cpu_ms: f64,
    pub cpu_over_gpu_wall: f64,
    /// Texels whose areas differ between the two (0: the same, bit for bit).
    pub differing_texels: u64,
}

/// The default run to steady state on a terrain, and its statistics before and after.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Realism {
    pub name: String,
    /// What the terrain is ("the default terrain at 1024²").
    pub terrain: String,
    pub side: u32,
    pub texel_size_m: f32,
    pub coarse_levels: u32,
    /// The threshold hillslope's angle, degrees; absent: the model alone (and in
    /// earlier reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_slope_deg: Option<f32>,
    /// Solved for its steady state between measured iterations (`--solve-steady`); false in
    /// earlier reports.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub solved: bool,
    pub iterations: usize,
    /// Iterations times Δt: the years simulated, except where `solved` (no time between).
    pub years: f64,
    pub gpu_s: f64,
    /// The steady-state measure at the end (the target is 0.01).
    pub measure: f32,
    /// One iteration on from the end (the CPU twin), `|z′ − z| / (Δt·U)` over the texels that
    /// are not outlets: its median, and the fraction of texels above 0.01.
    pub still_moving_median: f32,
    pub still_moving_fraction: f64,
    /// The fraction of the texels that are not outlets above 0.01 and moving by more than one
    /// f32 step of their height (absent from earlier reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_moving_beyond_one_step: Option<f64>,
    /// The fraction of the texels that are not outlets above 0.01 and moved the other way by the
    /// iteration after (absent from earlier reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_moving_turning: Option<f64>,
    pub before: Drainage,
    pub after: Drainage,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeologyResult {
    pub rows: Vec<GeologyRow>,
    pub cpu_threads: usize,
    pub realism: Vec<Realism>,
    /// The channels of the 1024² and 4096² realism runs (the same 4.1 km) compared, when both
    /// ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ChannelAgreement>,
    /// The same for the runs solved for their steady state (absent from earlier reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_solved: Option<ChannelAgreement>,
    /// The same with the threshold hillslope at the bench's critical slope (absent from
    /// earlier reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_critical: Option<ChannelAgreement>,
    /// The maps' D8 drainage on the GPU and the CPU (absent from earlier reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drainage: Vec<DrainageRow>,
}

fn sides(quick: bool) -> &'static [u32] {
    if quick {
        &[128]
    } else {
        &[1024, 2048, 4096]
    }
}

fn name(side: u32) -> String {
    format!("geology/{side}")
}

/// The critical slope of the realism cases run with the threshold hillslope, degrees.
const CRITICAL_SLOPE: f32 = 35.0;

/// A realism case: the default terrain at `side`², run until steady with the default
/// parameters, the threshold hillslope at `critical` degrees if given, solving for the steady
/// state between measured iterations if `solve` (docs/geology.md).
#[derive(Clone, Copy, Debug)]
struct RealismCase {
    name: &'static str,
    side: u32,
    critical: Option<f32>,
    solve: bool,
}

const fn case(name: &'static str, side: u32, critical: Option<f32>, solve: bool) -> RealismCase {
    RealismCase {
        name,
        side,
        critical,
        solve,
    }
}

/// The realism cases: the default model stepped in time, the same solved for its steady state,
/// and the default with the threshold hillslope (docs/geology.md, "The critical slope").
fn realism_cases(quick: bool) -> &'static [RealismCase] {
    const QUICK: [RealismCase; 2] = [
        case("geology/realism/128", 128, None, false),
        case("geology/solved/128", 128, None, true),
    ];
    const FULL: [RealismCase; 6] = [
        case("geology/realism/1024", 1024, None, false),
        case("geology/realism/4096", 4096, None, false),
        case("geology/solved/1024", 1024, None, true),
        case("geology/solved/4096", 4096, None, true),
        case(
            "geology/critical-slope/1024",
            1024,
            Some(CRITICAL_SLOPE),
            false,
        ),
        case(
            "geology/critical-slope/4096",
            4096,
            Some(CRITICAL_SLOPE),
            false,
        ),
    ];
    if quick {
        &QUICK
    } else {
        &FULL
    }
}

fn drainage_sides(quick: bool) -> &'static [u32] {
    if quick {
        &[128]
    } else {
        &[1024, 4096]
    }
}

fn drainage_name(side: u32) -> String {
    format!("geology/drainage/{side}")
}

pub(super) fn names(quick: bool) -> Vec<String> {
    sides(quick)
        .iter()
        .map(|&s| name(s))
        .chain(realism_cases(quick).iter().map(|c| c.name.to_string()))
        .chain(drainage_sides(quick).iter().map(|&s| drainage_name(s)))
        .collect()
}

/// The drainage rows `o` selects.
fn measure_drainage(gpu: &Arc<Gpu>, o: &BenchOptions, heater: &Heater) -> Result<Vec<DrainageRow>> {
    use crate::maps::drainage::{push, rounds, Kernels as Drainage};
    let mut rows = Vec::new();
    let wanted: Vec<u32> = drainage_sides(o.quick)
        .iter()
        .copied()
        .filter(|&s| o.wants(&drainage_name(s)))
        .collect();
    if wanted.is_empty() {
        return Ok(rows);
    }
    let k = Drainage::new(gpu)?;
    for side in wanted {
        let z = super::erosion::terrain(side);
        let size = [side, side];
        let t = timer(gpu, 1)?;
        k.counts(gpu, &z, size, 1.0, None)?;
        let (mut wall, mut passes) = (Vec::new(), Vec::new());
        let mut counts = Vec::new();
        for _ in 0..o.repeats {
            heater.heat(HEAT_SHORT_MS)?;
            let t0 = Instant::now();
            counts = k.counts(gpu, &z, size, 1.0, Some(&t))?;
            wall.push(t0.elapsed().as_secs_f64() * 1e3);
            passes.push(t.results()?.iter().map(|p| p.gpu_ns).sum::<f64>() * 1e-6);
        }
        let t0 = Instant::now();
        let exact = crate::geology::cpu::d8_area(&z, &push(size, 1.0));
        let cpu_ms = t0.elapsed().as_secs_f64() * 1e3;
        let on_gpu = crate::maps::drainage::areas(&counts, push(size, 1.0).a0);
        let differing = on_gpu.iter().zip(&exact).filter(|(a, b)| a != b).count() as u64;
        let (gpu_wall_ms, gpu_ms) = (median(&wall), median(&passes));
        let n = u64::from(side) * u64::from(side);
        eprintln!(
            "{}: {} rounds, GPU {gpu_ms:.2} ms of passes, {gpu_wall_ms:.1} ms wall with transfers; CPU {cpu_ms:.1} ms ({:.1}x the GPU's wall); {differing} texels differ",
            drainage_name(side),
            rounds(n),
            cpu_ms / gpu_wall_ms
        );
        rows.push(DrainageRow {
            name: drainage_name(side),
            side,
            rounds: rounds(n),
            gpu_wall_ms,
            gpu_ms,
            cpu_ms,
            cpu_over_gpu_wall: cpu_ms / gpu_wall_ms,
            differing_texels: differing,
        });
    }
    Ok(rows)
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    ceilings: &Ceilings,
    tables: &crate::noise::NoiseTables,
    heater: &Heater,
) -> Result<Option<GeologyResult>> {
    let wanted: Vec<u32> = sides(o.quick)
        .iter()
        .copied()
        .filter(|&s| o.wants(&name(s)))
        .collect();
    let realism_wanted: Vec<RealismCase> = realism_cases(o.quick)
        .iter()
        .copied()
        .filter(|c| o.wants(c.name))
        .collect();
    let drainage_wanted = drainage_sides(o.quick)
        .iter()
        .any(|&s| o.wants(&drainage_name(s)));
    if wanted.is_empty() && realism_wanted.is_empty() && !drainage_wanted {
        return Ok(None);
    }
    heater.heat(HEAT_LONG_MS)?;
    let kernels = Arc::new(Kernels::new(gpu)?);
    let params = GeologyParams::default();
    let smallest = sides(o.quick)[0];
    let mut rows = Vec::new();
    for side in wanted {
        let z = super::erosion::terrain(side);
        let push = params.push([side, side], 1.0, None);
        let state = State::new(side as usize, side as usize, z, None, push.a0);
        let mut g = GpuGeology::new(gpu, &kernels, &state, false)?;
        let t = timer(gpu, 1)?;
        g.run(
            &push,
            ITERATIONS_PER_SUBMIT * o.warmup.max(1),
            0,
            None,
            None,
            |_, _| {},
        )?;
        let bytes_per_texel = g.bytes_per_texel();
        let mut per_iteration = Vec::new();
        for _ in 0..o.repeats {
            heater.heat(HEAT_SHORT_MS)?;
            let before = g.gpu_ms();
            g.run(&push, ITERATIONS_PER_SUBMIT, 0, None, Some(&t), |_, _| {})?;
            per_iteration.push((g.gpu_ms() - before) / ITERATIONS_PER_SUBMIT as f64);
        }
        drop(g);
        let ms = median(&per_iteration);
        let texels = u64::from(side) * u64::from(side);
        let gb_s = (texels * bytes_per_texel) as f64 / (ms * 1e-3) / 1e9;
        let cpu_ms = (side == smallest).then(|| {
            let mut st = state.clone();
            let n = 3;
            let t0 = Instant::now();
            for _ in 0..n {
                st.step(&push);
            }
            t0.elapsed().as_secs_f64() * 1e3 / n as f64
        });
        eprintln!(
            "{}: {ms:.4} ms/iteration, {:.0} iterations/s, {gb_s:.0} GB/s by the cost model ({:.0}% of copy){}",
            name(side),
            1e3 / ms,
            100.0 * gb_s / ceilings.copy_buffer.gb_s,
            cpu_ms.map_or(String::new(), |c| format!(", CPU twin {c:.2} ms/iteration"))
        );
        rows.push(GeologyRow {
            name: name(side),
            side,
            gpu_ms_per_iteration: ms,
            iterations_per_s: 1e3 / ms,
            bytes_per_texel,
            gb_s,
            fraction_of_copy: gb_s / ceilings.copy_buffer.gb_s,
            cpu_ms_per_iteration: cpu_ms,
            gpu_over_cpu: cpu_ms.map(|c| c / ms),
        });
    }
    let mut realism = Vec::new();
    let mut areas = Vec::new();
    for c in realism_wanted {
        let (r, area) = measure_realism(gpu, &kernels, tables, c, o.quick)?;
        areas.push((c, area));
        realism.push(r);
    }
    // The 1024² and 4096² runs of one model, when both ran.
    let agreement = |critical: Option<f32>, solve: bool| {
        let runs: Vec<(u32, &Vec<f64>)> = areas
            .iter()
            .filter(|(c, _)| c.critical == critical && c.solve == solve)
            .map(|(c, a)| (c.side, a))
            .collect();
        let [(cs, coarse), (fs, fine)] = runs.as_slice() else {
            return None;
        };
        if o.quick {
            return None;
        }
        let a = channel_agreement(
            coarse,
            *cs as usize,
            fine,
            *fs as usize,
            4096.0 * 4096.0,
            CHANNEL_FRACTION,
            CHANNEL_TOLERANCE,
        );
        eprintln!(
            "geology/{}{}: channels draining ≥ {}% of the region, {cs}² and {fs}² runs: {:.1}% of the {fs}² run's within {} texels of the {cs}²'s channels, {:.1}% the other way",
            if solve { "solved" } else { "realism" },
            critical.map_or(String::new(), |d| format!(" (critical slope {d}°)")),
            CHANNEL_FRACTION * 100.0,
            a.fine_on_coarse * 100.0,
            CHANNEL_TOLERANCE,
            a.coarse_on_fine * 100.0
        );
        Some(a)
    };
    let resolution = agreement(None, false);
    let resolution_solved = agreement(None, true);
    let resolution_critical = agreement(Some(CRITICAL_SLOPE), false);
    let drainage = measure_drainage(gpu, o, heater)?;
    Ok(Some(GeologyResult {
        rows,
        cpu_threads: rayon::current_num_threads(),
        realism,
        resolution,
        resolution_solved,
        resolution_critical,
        drainage,
    }))
}

/// Channels for the resolution comparison drain at least this fraction of the region.
const CHANNEL_FRACTION: f64 = 0.01;
/// And coincide within this many texels of the coarse run.
const CHANNEL_TOLERANCE: f64 = 4.0;

/// The default terrain (assets/journals/default.json, 4096² at 1 m) at `c.side`² over the same
/// 4.1 km (box means; quick: the erosion section's small terrain over 4.1 km instead), run with
/// the default parameters (and the threshold hillslope, if the case has one) until steady
/// (measure ≤ 0.01) coarse to fine, stepping time or solving for the steady state; its
/// statistics before and after, and the drainage area (m²) at the end.
fn measure_realism(
    gpu: &Arc<Gpu>,
    kernels: &Arc<Kernels>,
    tables: &crate::noise::NoiseTables,
    c: RealismCase,
    quick: bool,
) -> Result<(Realism, Vec<f64>)> {
    let (case, side, critical_slope) = (c.name, c.side, c.critical);
    let (h, texel, unit, terrain) = if quick {
        // Over 4.1 km like the default terrain, so Hack's fit (channels of 1 ha at least) has
        // channels to fit: heights in texels of 32 m.
        let side_f = side as f32;
        let texel = 4096.0 / side_f;
        let h: Vec<f32> = super::erosion::terrain(side)
            .iter()
            .map(|v| v / side_f)
            .collect();
        (
            h,
            texel,
            side_f * texel,
            format!("the erosion section's terrain at {side}² ({texel} m texels)"),
        )
    } else {
        let h = default_terrain(gpu, tables, side)?;
        let texel = 4096.0 / side as f32;
        (
            h,
            texel,
            1024.0,
            format!("the default terrain at {side}² ({texel} m texels)"),
        )
    };
    let coarse = crate::geology::run::auto_coarse([side, side]);
    let run = GeologyRun {
        params: GeologyParams {
            critical_slope,
            ..GeologyParams::default()
        },
        iterations: if quick { 256 } else { 50_000 },
        until_steady: Some(0.01),
        solve_steady: c.solve,
        coarse,
        stop_after: None,
    };
    let desc = crate::pages::DocumentDesc {
        units: crate::pages::Units {
            texel_size: Some(f64::from(texel)),
            height_unit: Some(f64::from(unit)),
            ..Default::default()
        },
        ..crate::pages::DocumentDesc::for_heights(side, side)
    };
    let spec = RunSpec::of(&run, &desc);
    let z_of = |h: &[f32]| -> Vec<f32> { h.iter().map(|v| v * unit).collect() };
    let before = drainage(&z_of(&h), [side, side], texel);
    let mut after_h = h;
    let t = timer(gpu, 1)?;
    let mut runner =
        crate::geology::run::Runner::new(Some((gpu, kernels)), &after_h, [side, side], None, &spec);
    while !runner.advance(ITERATIONS_PER_SUBMIT, Some(&t))? {}
    let (z, a, _) = runner.ended().expect("the run ended its levels");
    let push = spec.params.push([side, side], spec.tau, spec.base_z);
    let state = State {
        width: side as usize,
        height: side as usize,
        z: z.to_vec(),
        a: a.to_vec(),
        u: vec![1.0; z.len()],
    };
    let still = crate::geology::cpu::spread(&state, &push);
    let out = runner.finish(&mut after_h)?;
    let after = drainage(&z_of(&after_h), [side, side], texel);
    let iterations = out.iterations();
    eprintln!(
        "{case}: {iterations} iterations ({} levels) in {:.2} s of GPU time: {} (median texel {:.3}, {:.1}% above 0.01, {:.2}% above it and by more than one f32 step, {:.2}% above it and turning back the next iteration); before: {before}; after: {after}",
        out.levels.len(),
        out.gpu_ms * 1e-3,
        out.text(&run),
        still.median,
        still.above * 100.0,
        still.above_one_step * 100.0,
        still.above_turning * 100.0
    );
    let area = out.area.iter().map(|&a| f64::from(a)).collect();
    let r = Realism {
        name: case.to_string(),
        terrain,
        side,
        texel_size_m: texel,
        coarse_levels: coarse,
        critical_slope_deg: critical_slope,
        solved: c.solve,
        iterations,
        years: out.years(run.params.time_step),
        gpu_s: out.gpu_ms * 1e-3,
        measure: out.measure(),
        still_moving_median: still.median,
        still_moving_fraction: still.above,
        still_moving_beyond_one_step: Some(still.above_one_step),
        still_moving_turning: Some(still.above_turning),
        before,
        after,
    };
    Ok((r, area))
}

/// The default terrain's heights (height units) at `side`² by box means of its 4096².
fn default_terrain(
    gpu: &Arc<Gpu>,
    tables: &crate::noise::NoiseTables,
    side: u32,
) -> Result<Vec<f32>> {
    let path = std::path::Path::new(crate::editor::DEFAULT_JOURNAL);
    let mut doc = crate::session::replay_journal(gpu, path, tables)?;
    let full = doc.to_dense()?;
    let n = doc.desc().width as usize;
    let f = n / side as usize;
    let mut out = vec![0.0f32; (side * side) as usize];
    for (i, v) in full.iter().enumerate() {
        let (x, y) = (i % n / f, i / n / f);
        out[y * side as usize + x] += v;
    }
    let inv = 1.0 / (f * f) as f32;
    Ok(out.into_iter().map(|v| v * inv).collect())
}
