//! Geology (docs/geology.md): the stream-power kernels against the CPU twin across page seams,
//! page-size invariance, undo/redo and journal replay bit for bit, the steady state's
//! slope-area law and exact D8 drainage, outlets that never move, flat ground that stays flat,
//! and the refusals. GPU tests run with validation on; any message fails.

mod common;

use common::{assert_no_validation_messages, gpu, max_diff, scarp, stderr};
use scarp::brush::cpu::CpuTerrain;
use scarp::brush::stroke::{stroke_instances, StrokeSample};
use scarp::brush::{BrushSettings, BrushType};
use scarp::document::Document;
use scarp::geology::cpu::{d8_area, receivers, NO_RECEIVER, OFFSETS};
use scarp::geology::gpu::Kernels;
use scarp::geology::params::GeologyRun;
use scarp::geology::run::{run, RunSpec};
use scarp::geology::GeologyParams;
use scarp::journal::{journal_json, Initial, Journal, Step};
use scarp::layers::{LayerOp, UPLIFT};
use scarp::noise::{CpuTables, NoiseTables};
use scarp::pages::geometry::{DocumentDesc, Region, Units};
use std::path::Path;
use std::sync::Arc;

const W: u32 = 384;
const H: u32 = 256;

/// A `W` x `H` document of 2 m texels and 200 m height units, pages of `page`.
fn desc(page: u32) -> DocumentDesc {
    DocumentDesc {
        units: Units {
            texel_size: Some(2.0),
            height_unit: Some(200.0),
            ..Units::default()
        },
        ..common::doc(W, H, page)
    }
}

/// 200 iterations over 300x200 texels across the seams of 128-texel pages.
fn run_200() -> (Region, GeologyRun) {
    let region = Region {
        x: 50,
        y: 20,
        width: 300,
        height: 200,
    };
    let params = GeologyParams {
        time_step: 100.0,
        ..GeologyParams::default()
    };
    let run = GeologyRun {
        params,
        iterations: 200,
        until_steady: None,
        solve_steady: false,
        coarse: 0,
        stop_after: None,
    };
    (region, run)
}

#[test]
fn gpu_matches_the_twin_after_200_iterations_across_page_seams() {
    let gpu = gpu();
    let heights = common::fbm_terrain(W, H, 5, 60.0, 6);
    let tables = NoiseTables::new(1);
    let (region, geology) = run_200();
    let mut d = Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
    let out = scarp::edit::geology::region(
        &mut d,
        &mut Default::default(),
        region,
        &geology,
        true,
        |_, _, _| {},
    )
    .unwrap();
    assert_eq!(out.levels.len(), 1);
    assert_eq!(out.levels[0].iterations, 200);
    let on_gpu = d.to_dense().unwrap();
    let mut twin = CpuTerrain::from_heights(desc(128), &heights, Arc::new(CpuTables::new(&tables)));
    twin.geology_region(region, &geology);
    let on_cpu = twin.to_dense();
    let (lo, hi) = scarp::terrain::formats::min_max(&on_cpu);
    let diff = max_diff(&on_gpu, &on_cpu) / (hi - lo);
    assert!(diff <= 1e-5, "GPU and twin differ by {diff} of the relief");
    // The run did something, and only inside the region.
    let changed: Vec<usize> = (0..heights.len())
        .filter(|&i| on_gpu[i] != heights[i])
        .collect();
    assert!(changed.len() > 10_000, "{} texels changed", changed.len());
    for i in changed {
        let (x, y) = (i as u32 % W, i as u32 / W);
        assert!(
            x > region.x && x < region.x + region.width - 1,
            "texel {x},{y} outside the region's interior changed"
        );
        assert!(y > region.y && y < region.y + region.height - 1);
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_geology_run_is_page_size_invariant_one_undo_step_and_replays_bit_for_bit() {
    let gpu = gpu();
    let heights = common::fbm_terrain(W, H, 9, 50.0, 5);
    let tables = NoiseTables::new(1);
    let (region, geology) = run_200();
    let geology = GeologyRun {
        iterations: 80,
        coarse: 1,
        ..geology
    };
    let mut results = Vec::new();
    for page in [128, 256, 512] {
        let mut d = Document::from_heights(&gpu, desc(page), &heights, &tables).unwrap();
        scarp::edit::geology::region(
            &mut d,
            &mut Default::default(),
            region,
            &geology,
            true,
            |_, _, _| {},
        )
        .unwrap();
        let after = d.to_dense().unwrap();
        assert!(d.undo().unwrap());
        assert!(
            d.to_dense().unwrap() == heights,
            "undo restores every texel"
        );
        assert!(d.redo().unwrap());
        assert!(d.to_dense().unwrap() == after, "redo brings the run back");
        results.push(after);
    }
    assert!(
        results[0] == results[1] && results[1] == results[2],
        "page size changed a height"
    );

    // Written as a journal step and read back: the same run, the same heights.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.r32");
    scarp::terrain::export::write_heights(&file, W, H, &heights).unwrap();
    let step = Step::Geology {
        region,
        run: geology,
    };
    let text = journal_json(&desc(128), &Initial::File(file), &[step]).unwrap();
    assert!(
        text.contains("\"geology\"") && text.contains("\"coarse\": 1"),
        "{text}"
    );
    let journal = Journal::parse(&text, Path::new(".")).unwrap();
    let mut replayed = Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
    let mut tools = scarp::edit::Tools::default();
    let target = &mut scarp::edit::Target::new(&mut replayed, &mut tools);
    journal.replay(target, |_, _| {}).unwrap();
    assert!(
        replayed.to_dense().unwrap() == results[1],
        "the journal step replays bit for bit"
    );

    // A layer selected: refused with the reason, nothing changes.
    common::add_and_select_layer(&mut replayed, "l");
    let e = scarp::edit::geology::region(
        &mut replayed,
        &mut tools.geology,
        region,
        &geology,
        true,
        |_, _, _| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("select"), "{e}");
    assert_no_validation_messages(&gpu);
}

/// The receiver slope of every texel that has a receiver: (texel, S).
fn slopes(z: &[f32], spec: &RunSpec, size: [u32; 2]) -> Vec<(usize, f64)> {
    let push = spec.params.push(size, spec.tau, spec.base_z);
    let r = receivers(z, &push);
    let w = size[0] as i32;
    (0..z.len())
        .filter(|&i| r[i] != NO_RECEIVER)
        .map(|i| {
            let [dx, dy] = OFFSETS[r[i] as usize];
            let (x, y) = (i as i32 % w, i as i32 / w);
            let j = ((y + dy) * w + x + dx) as usize;
            let d = f64::from(spec.tau) * f64::from(dx * dx + dy * dy).sqrt();
            (i, f64::from(z[i] - z[j]) / d)
        })
        .collect()
}

/// Steady state under uniform uplift without diffusion: every channel texel satisfies
/// K·A^m·S^n = U, so log S against log A is a line of slope −m/n through log((U/K)^(1/n));
/// and A is the exact D8 accumulation of the final heights. The same holds where the run
/// solves for the steady state between measured iterations, which gets there in a fifth of the
/// iterations or fewer.
#[test]
fn at_steady_state_channels_follow_the_slope_area_law_and_drain_exactly() {
    let (w, h) = (48u32, 48u32);
    let mut stepped_iterations = std::collections::HashMap::new();
    for (m, n, solve) in [(0.5f32, 1.0f32, false), (0.8, 2.0, false), (0.5, 1.0, true)] {
        let params = GeologyParams {
            uplift_rate: 1e-3,
            erodibility: 1e-4,
            area_exponent: m,
            slope_exponent: n,
            diffusion: 0.0,
            time_step: 10.0,
            base_level: None,
            fill_depressions: None,
            multi_flow: None,
            critical_slope: None,
        };
        let spec = RunSpec {
            params,
            tau: 100.0,
            height_unit: 100.0,
            base_z: None,
            iterations: 200_000,
            until: Some(1e-4),
            solve_steady: solve,
            coarse: 0,
            stop_after: None,
        };
        let mut heights = common::fbm_terrain(w, h, 3, 20.0, 4);
        let out = run(None, &mut heights, [w, h], None, &spec, None, |_, _, _| {}).unwrap();
        assert!(
            out.measure() <= 1e-4,
            "solve {solve}: not steady, measure {}",
            out.measure()
        );
        let stepped = *stepped_iterations
            .entry((m.to_bits(), n.to_bits()))
            .or_insert(out.levels[0].iterations);
        if solve {
            assert!(
                out.levels[0].iterations * 5 <= stepped,
                "m={m} n={n}: solved in {} iterations, stepped in {stepped}",
                out.levels[0].iterations
            );
        }
        let z: Vec<f32> = heights.iter().map(|h| h * spec.height_unit).collect();
        let a0 = spec.tau * spec.tau;
        // Channels: 20 texels of area or more, slopes far above the receiver clamp's Δt·U/τ.
        let clamp = f64::from(params.time_step * params.uplift_rate / spec.tau);
        let pts: Vec<(f64, f64)> = slopes(&z, &spec, [w, h])
            .into_iter()
            .filter(|&(i, s)| {
                let (x, y) = (i as u32 % w, i as u32 / w);
                let interior = x > 0 && y > 0 && x < w - 1 && y < h - 1;
                interior && out.area[i] >= 20.0 * a0 && s > 20.0 * clamp
            })
            .map(|(i, s)| (f64::from(out.area[i]).ln(), s.ln()))
            .collect();
        assert!(pts.len() >= 30, "{} channel texels", pts.len());
        let k = pts.len() as f64;
        let (mx, my) = (
            pts.iter().map(|p| p.0).sum::<f64>() / k,
            pts.iter().map(|p| p.1).sum::<f64>() / k,
        );
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let slope = sxy / sxx;
        let intercept = my - slope * mx;
        let want = f64::from(-m / n);
        let want_b =
            (f64::from(params.uplift_rate) / f64::from(params.erodibility)).ln() / f64::from(n);
        assert!(
            (slope - want).abs() <= 0.03,
            "m={m} n={n}: slope {slope}, want {want}"
        );
        assert!(
            (intercept - want_b).abs() <= 0.05 * want_b.abs(),
            "m={m} n={n}: intercept {intercept}, want {want_b}"
        );
        // The iterated area is the exact accumulation of the final heights.
        let push = params.push([w, h], spec.tau, None);
        let exact = d8_area(&z, &push);
        for (i, (&a, &e)) in out.area.iter().zip(&exact).enumerate() {
            assert!(
                (f64::from(a) - e).abs() <= 1e-5 * e,
                "texel {i}: area {a}, exact D8 {e}"
            );
        }
    }
}

#[test]
fn outlets_never_move_and_flat_ground_without_uplift_stays_flat() {
    let gpu = gpu();
    let kernels = Arc::new(Kernels::new(&gpu).unwrap());
    let (w, h) = (96u32, 80u32);
    let heights = common::fbm_terrain(w, h, 4, 30.0, 5);
    // A base level halfway up: the sea's texels and the border are outlets.
    let base = 0.5 * 100.0;
    let spec = RunSpec {
        params: GeologyParams {
            base_level: Some(base),
            ..GeologyParams::default()
        },
        tau: 4.0,
        height_unit: 100.0,
        base_z: Some(base),
        iterations: 300,
        until: None,
        solve_steady: false,
        coarse: 2,
        stop_after: None,
    };
    let mut after = heights.clone();
    run(
        Some((&gpu, &kernels)),
        &mut after,
        [w, h],
        None,
        &spec,
        None,
        |_, _, _| {},
    )
    .unwrap();
    let mut outlets = 0;
    for (i, (&a, &b)) in heights.iter().zip(&after).enumerate() {
        let (x, y) = (i as u32 % w, i as u32 / w);
        let border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
        if border || a * 100.0 <= base {
            outlets += 1;
            assert!(a == b, "outlet {x},{y} moved: {b} -> {a}");
        }
    }
    assert!(outlets > 1000, "{outlets} outlets");
    assert!(heights != after, "the land changed");

    // Flat ground, no uplift: nothing drains, nothing diffuses, nothing rises.
    let flat = vec![0.25f32; (w * h) as usize];
    let still = RunSpec {
        params: GeologyParams {
            uplift_rate: 0.0,
            ..GeologyParams::default()
        },
        base_z: None,
        ..spec
    };
    for backend in [Some((&gpu, &kernels)), None] {
        let mut g = flat.clone();
        let out = run(backend, &mut g, [w, h], None, &still, None, |_, _, _| {}).unwrap();
        assert!(g == flat, "flat ground moved");
        assert_eq!(out.measure(), 0.0);
    }
    assert_no_validation_messages(&gpu);
}

/// Every interior texel of a `w` x `h` grid with each neighbour: (its index, k, the neighbour's
/// index), k in the model's order.
fn interior_neighbours(w: u32, h: u32) -> impl Iterator<Item = (usize, usize, usize)> {
    let (w, h) = (w as i32, h as i32);
    (1..h - 1).flat_map(move |y| {
        (1..w - 1).flat_map(move |x| {
            OFFSETS.iter().enumerate().map(move |(k, [dx, dy])| {
                ((y * w + x) as usize, k, ((y + dy) * w + x + dx) as usize)
            })
        })
    })
}

/// The threshold hillslope (`--critical-slope`, docs/geology.md): with no erosion, creep or
/// uplift one iteration cuts each texel down to its lowest `z_q + tan θ·δ_q`, exactly as an
/// independent reference computes it, on the GPU and in the twin; with the model running the
/// GPU follows the twin; and a run until steady ends with no texel steeper than θ above a
/// neighbour, where the same run without the threshold leaves steeper ground.
#[test]
fn the_critical_slope_cuts_to_the_talus_exactly_and_bounds_the_steady_state() {
    let gpu = gpu();
    let kernels = Arc::new(Kernels::new(&gpu).unwrap());
    let (w, h) = (96u32, 80u32);
    let (tau, unit, degrees) = (4.0f32, 100.0f32, 30.0f32);
    let heights = common::fbm_terrain(w, h, 4, 30.0, 5);
    let spec =
        |params: GeologyParams, iterations: usize, until: Option<f32>, coarse: u32| RunSpec {
            params,
            tau,
            height_unit: unit,
            base_z: None,
            iterations,
            until,
            solve_steady: false,
            coarse,
            stop_after: None,
        };
    let run_on = |backend, g: &mut Vec<f32>, s: &RunSpec| {
        run(backend, g, [w, h], None, s, None, |_, _, _| {}).unwrap();
    };
    let tan = f64::from(degrees).to_radians().tan();
    let rise = |k: usize| {
        let d = if k & 1 == 1 {
            tau * std::f32::consts::SQRT_2
        } else {
            tau
        };
        (tan * f64::from(d)) as f32
    };

    // Talus alone: z' = min(z, min_q z_q + rise_q) over the interior, in metres.
    let talus = GeologyParams {
        uplift_rate: 0.0,
        erodibility: 0.0,
        diffusion: 0.0,
        critical_slope: Some(degrees),
        ..GeologyParams::default()
    };
    let z: Vec<f32> = heights.iter().map(|v| v * unit).collect();
    let mut want = z.clone();
    for (i, k, j) in interior_neighbours(w, h) {
        want[i] = want[i].min(z[j] + rise(k));
    }
    let cut = want.iter().zip(&z).filter(|(w, z)| w < z).count();
    assert!(cut > 100, "{cut} texels steeper than {degrees}° to cut");
    for backend in [Some((&gpu, &kernels)), None] {
        let mut g = heights.clone();
        run_on(backend, &mut g, &spec(talus, 1, None, 0));
        for (i, &got) in g.iter().enumerate() {
            // A texel the run changed leaves as z / unit; the others keep their heights.
            let expect = if want[i] == z[i] {
                heights[i]
            } else {
                want[i] / unit
            };
            assert_eq!(got, expect, "texel {i}, on the GPU: {}", backend.is_some());
        }
    }

    // The model with the threshold: the GPU follows the twin.
    let model = GeologyParams {
        time_step: 100.0,
        critical_slope: Some(degrees),
        ..GeologyParams::default()
    };
    let mut on_gpu = heights.clone();
    let mut on_cpu = heights.clone();
    for (backend, g) in [(Some((&gpu, &kernels)), &mut on_gpu), (None, &mut on_cpu)] {
        run_on(backend, g, &spec(model, 200, None, 0));
    }
    let (lo, hi) = scarp::terrain::formats::min_max(&on_cpu);
    let diff = max_diff(&on_gpu, &on_cpu) / (hi - lo);
    assert!(diff <= 1e-5, "GPU and twin differ by {diff} of the relief");
    assert!(on_cpu != heights);

    // Until steady, coarse to fine: no texel more than θ above a neighbour (within what the
    // last iteration may still move: 1 % of a step's uplift); without the threshold, steeper.
    let steepest = |with: Option<f32>, until: Option<f32>| {
        let params = GeologyParams {
            critical_slope: with,
            ..model
        };
        let mut g = heights.clone();
        let s = spec(params, 20_000, until, 2);
        let out = run(None, &mut g, [w, h], None, &s, None, |_, _, _| {}).unwrap();
        let z: Vec<f32> = g.iter().map(|v| v * unit).collect();
        let slack = 0.01 * params.time_step * params.uplift_rate;
        let most = interior_neighbours(w, h)
            .map(|(i, k, j)| f64::from(z[i] - z[j] - rise(k) - slack))
            .fold(0.0f64, f64::max);
        (out.measure(), most)
    };
    let (measure, over) = steepest(Some(degrees), Some(0.01));
    assert!(measure <= 0.01, "not steady: {measure}");
    assert!(over <= 1e-4, "a texel stands {over} m above its talus");
    let (_, over) = steepest(None, None);
    assert!(
        over > 1.0,
        "without the threshold the steepest texel is only {over} m over"
    );
    assert_no_validation_messages(&gpu);
}

/// Depressions filled before the first iteration (docs/geology.md): the run starts from the
/// priority-flood of the region's metres (texels the flood left alone keep their stored heights
/// bit for bit), the start drains (no pits off the outlets), and the GPU follows the twin from
/// there.
#[test]
fn a_run_with_depressions_filled_starts_from_the_flood_on_both_backends() {
    use scarp::geology::cpu::receiver;
    use scarp::geology::fill::priority_flood;
    use scarp::geology::run::Runner;
    let gpu = gpu();
    let kernels = Arc::new(Kernels::new(&gpu).unwrap());
    let (w, h) = (96u32, 80u32);
    // Rough ground with pits dug in it.
    let mut heights = common::fbm_terrain(w, h, 7, 12.0, 5);
    for i in (0..heights.len()).step_by(37) {
        heights[i] -= 0.3;
    }
    let (tau, unit) = (4.0f32, 100.0f32);
    let spec = RunSpec {
        params: GeologyParams {
            fill_depressions: Some(1e-3),
            ..GeologyParams::default()
        },
        tau,
        height_unit: unit,
        base_z: None,
        iterations: 100,
        until: None,
        solve_steady: false,
        coarse: 0,
        stop_after: None,
    };
    let push = spec.params.push([w, h], tau, None);
    let metres: Vec<f32> = heights.iter().map(|v| v * unit).collect();
    let mut flood = metres.clone();
    let raised = priority_flood(&mut flood, &push, 1e-3);
    let pits = |z: &[f32]| {
        (0..z.len())
            .filter(|&i| {
                let (x, y) = ((i as u32 % w) as i32, (i as u32 / w) as i32);
                let border = x == 0 || y == 0 || x == w as i32 - 1 || y == h as i32 - 1;
                !border && receiver(z, &push, x, y) == NO_RECEIVER
            })
            .count()
    };
    assert!(
        raised > 100 && pits(&metres) > 20,
        "{raised} raised, {} pits",
        pits(&metres)
    );
    let start = Runner::new(None, &heights, [w, h], None, &spec)
        .heights_now(&heights)
        .unwrap();
    for i in 0..heights.len() {
        let want = match flood[i] == metres[i] {
            true => heights[i],
            false => flood[i] / unit,
        };
        assert_eq!(start[i].to_bits(), want.to_bits(), "texel {i}");
    }
    let start_m: Vec<f32> = start.iter().map(|v| v * unit).collect();
    assert_eq!(pits(&start_m), 0);
    let mut on_gpu = heights.clone();
    let mut on_cpu = heights.clone();
    let backends = [(Some((&gpu, &kernels)), &mut on_gpu), (None, &mut on_cpu)];
    for (backend, out) in backends {
        run(backend, out, [w, h], None, &spec, None, |_, _, _| {}).unwrap();
    }
    let (lo, hi) = scarp::terrain::formats::min_max(&on_cpu);
    let diff = max_diff(&on_gpu, &on_cpu) / (hi - lo);
    assert!(diff <= 1e-5, "GPU and twin differ by {diff} of the relief");
    assert!(on_cpu != start, "the run moved the filled ground");
    assert_no_validation_messages(&gpu);
}

/// The exact multi-flow accumulation (in f64): every texel, highest first, hands its area to
/// its lower in-region neighbours in shares of `slope^e` (slopes as the model computes them).
fn multi_flow_area(z: &[f32], w: u32, h: u32, tau: f32, e: f64, a0: f64) -> Vec<f64> {
    let mut area = vec![a0; z.len()];
    let mut order: Vec<usize> = (0..z.len()).collect();
    order.sort_by(|&i, &j| z[j].total_cmp(&z[i]));
    let (w, h) = (w as i32, h as i32);
    for i in order {
        let (x, y) = (i as i32 % w, i as i32 / w);
        let lower: Vec<(usize, f64)> = OFFSETS
            .iter()
            .filter_map(|[dx, dy]| {
                let (qx, qy) = (x + dx, y + dy);
                if qx < 0 || qy < 0 || qx >= w || qy >= h {
                    return None;
                }
                let j = (qy * w + qx) as usize;
                let d = f64::from(tau) * f64::from(dx * dx + dy * dy).sqrt();
                let s = f64::from(z[i] - z[j]) / d;
                (s > 0.0).then(|| (j, s.powf(e)))
            })
            .collect();
        let sum: f64 = lower.iter().map(|l| l.1).sum();
        for (j, wgt) in lower {
            area[j] += area[i] * wgt / sum;
        }
    }
    area
}

/// Multi-flow routing (the second option): with the heights held still (no uplift,
/// erosion or creep), the Jacobi areas of the twin and the GPU reach the exact multi-flow
/// accumulation; with the model running, the GPU follows the twin.
#[test]
fn multi_flow_area_matches_the_exact_accumulation_and_the_gpu_follows_the_twin() {
    let gpu = gpu();
    let kernels = Arc::new(Kernels::new(&gpu).unwrap());
    let (w, h) = (48u32, 40u32);
    let heights = common::fbm_terrain(w, h, 3, 25.0, 4);
    let (tau, unit) = (10.0f32, 100.0f32);
    let still = RunSpec {
        params: GeologyParams {
            uplift_rate: 0.0,
            erodibility: 0.0,
            diffusion: 0.0,
            multi_flow: Some(1.1),
            ..GeologyParams::default()
        },
        tau,
        height_unit: unit,
        base_z: None,
        iterations: 3000,
        until: None,
        solve_steady: false,
        coarse: 0,
        stop_after: None,
    };
    let metres: Vec<f32> = heights.iter().map(|v| v * unit).collect();
    let want = multi_flow_area(&metres, w, h, tau, 1.1, f64::from(tau * tau));
    for backend in [Some((&gpu, &kernels)), None] {
        let mut z = heights.clone();
        let out = run(backend, &mut z, [w, h], None, &still, None, |_, _, _| {}).unwrap();
        assert!(z == heights, "held heights moved");
        let worst = out
            .area
            .iter()
            .zip(&want)
            .map(|(&a, &b)| (f64::from(a) - b).abs() / b)
            .fold(0.0, f64::max);
        assert!(
            worst < 1e-4,
            "gpu {}: off by {worst} of the area",
            backend.is_some()
        );
        // Not D8's: some texel's area differs from the steepest-descent accumulation.
        let d8 = d8_area(&metres, &still.params.push([w, h], tau, None));
        let apart = out
            .area
            .iter()
            .zip(&d8)
            .filter(|(&a, &b)| (f64::from(a) - b).abs() > 0.01 * b)
            .count();
        assert!(apart > 100, "{apart} texels apart from D8");
    }
    let moving = RunSpec {
        params: GeologyParams {
            time_step: 20.0,
            multi_flow: Some(1.0),
            ..GeologyParams::default()
        },
        iterations: 200,
        ..still
    };
    let (mut on_gpu, mut on_cpu) = (heights.clone(), heights.clone());
    run(
        Some((&gpu, &kernels)),
        &mut on_gpu,
        [w, h],
        None,
        &moving,
        None,
        |_, _, _| {},
    )
    .unwrap();
    run(None, &mut on_cpu, [w, h], None, &moving, None, |_, _, _| {}).unwrap();
    let (lo, hi) = scarp::terrain::formats::min_max(&on_cpu);
    let diff = max_diff(&on_gpu, &on_cpu) / (hi - lo);
    assert!(diff <= 1e-5, "GPU and twin differ by {diff} of the relief");
    assert!(on_cpu != heights, "the run moved the ground");
    assert_no_validation_messages(&gpu);
}

#[test]
fn the_cli_runs_geology_in_metres_and_refuses_bad_parameters_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.r32");
    let (w, h) = (64u32, 64u32);
    let heights = common::fbm_terrain(w, h, 2, 20.0, 4);
    scarp::terrain::export::write_heights(&input, w, h, &heights).unwrap();
    let out = dir.path().join("out.r32");
    let area = dir.path().join("area.r32");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let base = [
        "geology".to_string(),
        "--heights".into(),
        s(&input),
        "--texel-size".into(),
        "30".into(),
        "--height-unit".into(),
        "500".into(),
        "--out".into(),
        s(&out),
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter()
            .cloned()
            .chain(extra.iter().map(|e| e.to_string()))
            .collect()
    };
    let bad: [(&[&str], &str); 11] = [
        (&["--erodibility=-1e-5"], "--erodibility"),
        (&["--multi-flow", "0"], "--multi-flow"),
        (&["--fill-depressions=-0.01"], "--fill-depressions"),
        (&["--area-exponent", "0"], "--area-exponent"),
        (&["--slope-exponent", "-1"], "--slope-exponent"),
        (&["--time-step", "0"], "--time-step"),
        (&["--region", "40,40,32,32"], "--region"),
        (&["--iterations", "0"], "--iterations"),
        (&["--time-step", "100000", "--diffusion", "1"], "unstable"),
        (&["--solve-steady"], "--solve-steady needs --until-steady"),
        (
            &["--solve-steady", "--until-steady", "--slope-exponent", "2"],
            "--solve-steady needs --slope-exponent 1",
        ),
    ];
    for (extra, name) in bad {
        let args = with(extra);
        let o = scarp(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let e = stderr(&o);
        assert!(!o.status.success(), "{extra:?} accepted");
        assert!(e.contains(name) && e.lines().count() == 1, "{extra:?}: {e}");
        assert!(!out.exists(), "{extra:?} wrote its output");
    }
    let args = with(&[
        "--iterations",
        "300",
        "--drainage",
        &s(&area),
        "--backend",
        "cpu",
    ]);
    let o = scarp(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout).to_string();
    // 300 iterations of the default step.
    let years = format!(
        "{} years",
        300.0 * scarp::geology::params::DEFAULTS.time_step
    );
    assert!(said.contains(&years), "{years}: {said}");
    // A run until steady says whether it got there: one that stops at its cap is not steady,
    // and a solved one is not said to be solved; one stopped by hand gets no verdict.
    for (extra, says, not) in [
        (
            &["--until-steady", "1e-9", "--iterations", "64"][..],
            "years simulated, not steady (measure",
            ", steady (",
        ),
        (
            &[
                "--until-steady",
                "1e-9",
                "--iterations",
                "64",
                "--solve-steady",
            ][..],
            "not steady: the solver stopped at measure",
            "solved for the steady state",
        ),
        (
            &[
                "--until-steady",
                "0.01",
                "--iterations",
                "50000",
                "--solve-steady",
            ][..],
            "solved for the steady state (measure",
            "not steady",
        ),
        // Stopped by hand: no verdict, whatever the measure.
        (
            &[
                "--until-steady",
                "0.01",
                "--iterations",
                "50000",
                "--solve-steady",
                "--stop-after",
                "10",
            ][..],
            "stopped while solving for the steady state, measure",
            "steady (",
        ),
    ] {
        let args = with(&[extra, &["--backend", "cpu"]].concat());
        let o = scarp(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", stderr(&o));
        let said = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            said.contains(says) && !said.contains(not),
            "{extra:?}: {said}"
        );
    }
    // The output keeps the input's metres in its sidecar.
    let sidecar = std::fs::read_to_string(dir.path().join("out.r32.json")).unwrap();
    assert!(sidecar.contains("30"), "{sidecar}");
    let a = std::fs::read(&area).unwrap();
    let a: &[f32] = bytemuck::cast_slice(&a);
    let most = a.iter().copied().fold(0.0f32, f32::max);
    assert!(most > 100.0 * 900.0, "the largest basin drains {most} m²");
}

/// Solving for the steady state (`solve_steady`): the GPU's stationary sweeps follow the twin's,
/// with an uplift map and coarse to fine, and they are not the model's time steps (the same
/// iterations stepped in time end elsewhere). Run to a measure, the end is the model's steady
/// state: one more iteration of the model moves no texel by more than the tolerance.
#[test]
fn solving_for_the_steady_state_on_the_gpu_follows_the_twin() {
    let gpu = gpu();
    let kernels = Arc::new(Kernels::new(&gpu).unwrap());
    let (w, h) = (96u32, 80u32);
    let heights = common::fbm_terrain(w, h, 6, 25.0, 4);
    let u: Vec<f32> = (0..w * h)
        .map(|i| 0.5 + (i % w) as f32 / w as f32)
        .collect();
    let spec = RunSpec {
        params: GeologyParams::default(),
        tau: 10.0,
        height_unit: 100.0,
        base_z: None,
        iterations: 200,
        until: None,
        solve_steady: true,
        coarse: 1,
        stop_after: None,
    };
    let on = |backend: Option<(&Arc<scarp::gpu::Gpu>, &Arc<Kernels>)>, spec: &RunSpec| {
        let mut z = heights.clone();
        run(backend, &mut z, [w, h], Some(&u), spec, None, |_, _, _| {}).unwrap();
        z
    };
    let on_gpu = on(Some((&gpu, &kernels)), &spec);
    let on_cpu = on(None, &spec);
    let (lo, hi) = scarp::terrain::formats::min_max(&on_cpu);
    let diff = max_diff(&on_gpu, &on_cpu) / (hi - lo);
    assert!(diff <= 1e-5, "GPU and twin differ by {diff} of the relief");
    let stepped = on(
        None,
        &RunSpec {
            solve_steady: false,
            ..spec
        },
    );
    let apart = max_diff(&stepped, &on_cpu) / (hi - lo);
    assert!(apart > 1e-2, "solved and stepped differ by only {apart}");
    // To a measure: the model's own iteration from the end barely moves.
    let until = RunSpec {
        iterations: 20_000,
        until: Some(0.01),
        ..spec
    };
    let mut runner = scarp::geology::run::Runner::new(
        Some((&gpu, &kernels)),
        &heights,
        [w, h],
        Some(&u),
        &until,
    );
    while !runner.advance(64, None).unwrap() {}
    let measure = runner.progress().measure;
    assert!(measure <= 0.01, "measure {measure}");
    let (z, a, level) = runner.ended().unwrap();
    assert_eq!(level, 0);
    let p = until.params.push([w, h], until.tau, None);
    let mut state =
        scarp::geology::cpu::State::new(w as usize, h as usize, z.to_vec(), Some(u.clone()), p.a0);
    state.a = a.to_vec();
    let moved = state.step(&p);
    assert!(
        moved <= 0.01,
        "the model still moves texels by {moved} of a step's uplift"
    );
    assert_no_validation_messages(&gpu);
}

/// Which iterations of a solved run step the model (every 64th of a level and its last) does not
/// depend on how many a submission runs: the twin driven 1, 3, 64 or 1,000 at a time ends with
/// the same heights, bit for bit, and stops its levels at the same iterations.
#[test]
fn a_solved_run_does_not_depend_on_its_submissions() {
    use scarp::geology::run::Runner;
    let (w, h) = (48u32, 40u32);
    let heights = common::fbm_terrain(w, h, 3, 20.0, 4);
    let spec = RunSpec {
        params: GeologyParams::default(),
        tau: 10.0,
        height_unit: 100.0,
        base_z: None,
        iterations: 300,
        until: Some(0.01),
        solve_steady: true,
        coarse: 1,
        stop_after: None,
    };
    let ends: Vec<(Vec<f32>, Vec<usize>)> = [1, 3, 64, 1000]
        .into_iter()
        .map(|most| {
            let mut runner = Runner::new(None, &heights, [w, h], None, &spec);
            while !runner.advance(most, None).unwrap() {}
            let mut z = heights.clone();
            let out = runner.finish(&mut z).unwrap();
            (z, out.levels.iter().map(|l| l.iterations).collect())
        })
        .collect();
    assert_ne!(ends[0].0, heights, "the run changed the heights");
    for (z, levels) in &ends[1..] {
        assert_eq!(levels, &ends[0].1);
        assert!(z == &ends[0].0, "heights differ between submission sizes");
    }
}

/// An uplift map (the kernel reads it only when it holds anything but 1): the GPU follows the
/// twin, and ground under twice the uplift ends higher than under none. The kernels with
/// receivers an int each (devices without byte storage) give the same heights, bit for bit, as
/// those with a byte each.
#[test]
fn an_uplift_map_raises_what_it_marks_on_the_gpu_as_in_the_twin() {
    let gpu = gpu();
    let kernels = Arc::new(Kernels::new(&gpu).unwrap());
    let int_kernels = Arc::new(Kernels::with_byte_receivers(&gpu, false).unwrap());
    let (w, h) = (120u32, 90u32);
    let heights = common::fbm_terrain(w, h, 6, 25.0, 4);
    // No uplift in the left half, twice the rate in the right.
    let u: Vec<f32> = (0..w * h)
        .map(|i| if i % w < w / 2 { 0.0 } else { 2.0 })
        .collect();
    let spec = RunSpec {
        params: GeologyParams::default(),
        tau: 10.0,
        height_unit: 100.0,
        base_z: None,
        iterations: 150,
        until: None,
        solve_steady: false,
        coarse: 1,
        stop_after: None,
    };
    // On the GPU with `kernels`, or on the CPU twin.
    let on = |kernels: Option<&Arc<Kernels>>| {
        let mut z = heights.clone();
        run(
            kernels.map(|k| (&gpu, k)),
            &mut z,
            [w, h],
            Some(&u),
            &spec,
            None,
            |_, _, _| {},
        )
        .unwrap();
        z
    };
    let on_gpu = on(Some(&kernels));
    if !gpu.storage_buffer_8bit() {
        eprintln!("this device stores no bytes in buffers: both runs use int receivers");
    }
    assert!(
        on(Some(&int_kernels)) == on_gpu,
        "int receivers and byte receivers (byte storage: {}) disagree",
        gpu.storage_buffer_8bit()
    );
    let on_cpu = on(None);
    let (lo, hi) = scarp::terrain::formats::min_max(&on_cpu);
    let diff = max_diff(&on_gpu, &on_cpu) / (hi - lo);
    assert!(diff <= 1e-5, "GPU and twin differ by {diff} of the relief");
    let mean = |half: bool| {
        let v: Vec<f64> = (0..w * h)
            .filter(|i| (i % w >= w / 2) == half)
            .map(|i| f64::from(on_cpu[i as usize] - heights[i as usize]))
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(
        mean(true) > mean(false) + 0.01,
        "{} vs {}",
        mean(true),
        mean(false)
    );
    assert_no_validation_messages(&gpu);
}

/// A one-dab stroke of `brush` at (x, y).
fn dab(d: &mut Document, brush: &BrushSettings, x: f32, y: f32) {
    let sample = StrokeSample {
        x,
        y,
        pressure: 1.0,
        t: 0.0,
    };
    d.apply_stroke(brush, &stroke_instances(brush, &[sample]))
        .unwrap();
}

#[test]
fn a_painted_uplift_map_drives_geology_undoes_and_is_saved_with_the_project() {
    let gpu = gpu();
    let tables = NoiseTables::new(1);
    let heights = common::fbm_terrain(W, H, 3, 60.0, 5);
    let mut d = Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
    let here = Path::new(".");
    let select = |name: &str| LayerOp::Select { name: name.into() };
    d.layer_op(&select(UPLIFT), here).unwrap();
    assert!(d.layers().paints_uplift());
    assert!(!d.is_layered(), "the uplift map is no layer");
    // The mask brush paints the map toward its value (none around (100, 100)), the raise brush
    // raises it (faster around (260, 150)); both across the seams of 128-texel pages.
    let toward = |value: f32| BrushSettings {
        brush: BrushType::Mask,
        radius: 40.0,
        strength: 1.0,
        value,
        ..BrushSettings::new(BrushType::Raise)
    };
    dab(&mut d, &toward(0.0), 100.0, 100.0);
    let before_three = d.uplift_rect(Region::whole(W, H).rect()).unwrap().unwrap();
    let raise = BrushSettings {
        radius: 40.0,
        strength: 1.0,
        ..BrushSettings::new(BrushType::Raise)
    };
    dab(&mut d, &raise, 260.0, 150.0);
    let whole = Region::whole(W, H);
    let u = d.uplift_rect(whole.rect()).unwrap().unwrap();
    let at = |v: &[f32], x: u32, y: u32| v[(y * W + x) as usize];
    assert!(at(&u, 100, 100) < 0.05, "{}", at(&u, 100, 100));
    assert!(at(&u, 260, 150) > 1.5, "{}", at(&u, 260, 150));
    assert_eq!(at(&u, 5, 250), 1.0, "unpainted is 1");
    assert_eq!(
        d.to_dense().unwrap(),
        heights,
        "painting uplift leaves the heights"
    );

    // Saved beside the base, with the map still selected: the strokes a recovery journal holds
    // after the save go on painting it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("uplift.scarp");
    let meta = scarp::session::meta_of(&d, vec![], &[]).unwrap();
    scarp::session::save_document(&mut d, &path, &meta, None, None).unwrap();
    let (mut back, _, _) = scarp::session::open_project_file(&gpu, &path, &tables).unwrap();
    assert!(back.layers().paints_uplift());
    assert!(!back.is_layered());
    assert_eq!(back.uplift_rect(whole.rect()).unwrap().unwrap(), u);
    // The erode brush reshapes the base: refused while the map is selected.
    let erode = BrushSettings::new(BrushType::Erode);
    let e = scarp::edit::stroke::check(&back, &erode)
        .unwrap_err()
        .to_string();
    assert!(e.contains("uplift map is selected"), "{e}");
    // Back to the base: still no layers.
    back.layer_op(&select("base"), here).unwrap();
    assert!(!back.layers().paints_uplift() && !back.is_layered());

    // Without erosion or creep, each iteration raises a texel by Δt·U·u exactly.
    let run = GeologyRun {
        params: GeologyParams {
            erodibility: 0.0,
            diffusion: 0.0,
            ..GeologyParams::default()
        },
        iterations: 20,
        until_steady: None,
        solve_steady: false,
        coarse: 0,
        stop_after: None,
    };
    let mut tools = Default::default();
    scarp::edit::geology::region(&mut d, &mut tools, whole, &run, true, |_, _, _| {}).unwrap();
    let after = d.to_dense().unwrap();
    let (unit, p) = (200.0f32, run.params);
    let mut worst = 0.0f32;
    for y in 1..H - 1 {
        for x in 1..W - 1 {
            let rise = (at(&after, x, y) - at(&heights, x, y)) * unit;
            let want = 20.0 * p.time_step * p.uplift_rate * at(&u, x, y);
            worst = worst.max((rise - want).abs());
        }
    }
    assert!(worst < 2e-3, "the rise differs from 20·Δt·U·u by {worst} m");
    assert_eq!(
        at(&after, 0, 0),
        at(&heights, 0, 0),
        "the border is an outlet"
    );

    // The CLI on the saved project reads the stored map, as the editor's run did.
    let out = dir.path().join("out.r32");
    let o = scarp(&[
        "geology",
        "--heights",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--erodibility",
        "0",
        "--diffusion",
        "0",
        "--iterations",
        "20",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cli = std::fs::read(&out).unwrap();
    let cli: &[f32] = bytemuck::cast_slice(&cli);
    assert!(max_diff(cli, &after) <= 1e-6, "{}", max_diff(cli, &after));

    // As journal steps, written and read back: the same map, the same run, the same heights.
    let stroke = |brush: BrushSettings, x: f32, y: f32| Step::Stroke {
        brush,
        samples: vec![StrokeSample {
            x,
            y,
            pressure: 1.0,
            t: 0.0,
        }],
    };
    let steps = [
        Step::Layer(select(UPLIFT)),
        stroke(toward(0.0), 100.0, 100.0),
        stroke(raise.clone(), 260.0, 150.0),
        Step::Geology { region: whole, run },
    ];
    let file = dir.path().join("h.r32");
    scarp::terrain::export::write_heights(&file, W, H, &heights).unwrap();
    let text = journal_json(&desc(128), &Initial::File(file), &steps).unwrap();
    let journal = Journal::parse(&text, Path::new(".")).unwrap();
    let mut replayed = Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
    let mut replay_tools = scarp::edit::Tools::default();
    let target = &mut scarp::edit::Target::new(&mut replayed, &mut replay_tools);
    journal.replay(target, |_, _| {}).unwrap();
    assert!(
        replayed.to_dense().unwrap() == after,
        "the journal replays bit for bit"
    );

    // Undo takes back the run, then the stroke on the map; redo brings both back.
    assert!(d.undo().unwrap());
    assert_eq!(d.to_dense().unwrap(), heights);
    assert!(d.undo().unwrap());
    assert_eq!(d.uplift_rect(whole.rect()).unwrap().unwrap(), before_three);
    assert!(d.redo().unwrap() && d.redo().unwrap());
    assert_eq!(d.uplift_rect(whole.rect()).unwrap().unwrap(), u);
    assert_eq!(d.to_dense().unwrap(), after);

    // A layer's name cannot take the map's.
    let add = LayerOp::Add {
        name: UPLIFT.into(),
        mode: scarp::layers::Mode::Add,
        opacity: 1.0,
        files: Default::default(),
    };
    let e = d.layer_op(&add, here).unwrap_err().to_string();
    assert!(e.contains("uplift map"), "{e}");
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_live_run_stopped_by_hand_replays_bit_for_bit_and_a_cancel_restores_the_region() {
    const UNTIL: f32 = 20.0;
    use scarp::session::geology_run::GeologyLive;
    let gpu = gpu();
    let tables = NoiseTables::new(1);
    let heights = common::fbm_terrain(W, H, 4, 50.0, 5);
    let region = Region {
        x: 20,
        y: 10,
        width: 300,
        height: 200,
    };
    let run = GeologyRun {
        params: GeologyParams {
            time_step: 100.0,
            ..GeologyParams::default()
        },
        iterations: 150,
        until_steady: Some(UNTIL),
        solve_steady: false,
        coarse: 2,
        stop_after: None,
    };
    let open = || Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
    let mut tools = scarp::edit::Tools::default();

    // Stopped by hand in the middle level (three levels of 150 iterations, 64 a submission).
    let mut d = open();
    let mut live = GeologyLive::start(&mut d, &mut tools, region, run).unwrap();
    // A frame budget of 0 ms: a submission of one iteration a frame.
    while live.progress().run.level < 1 || live.progress().run.done < 40 {
        live.advance(&mut d, 0.0).unwrap();
    }
    let p = live.progress().run;
    assert_eq!(p.levels, 3);
    assert_eq!(p.done, 40, "one iteration a frame");
    assert_ne!(
        d.to_dense().unwrap(),
        heights,
        "the view shows the run as it goes"
    );
    let (step, _) = live.finish(&mut d).unwrap().expect("iterations ran");
    let Step::Geology { run: stopped, .. } = step else {
        panic!("{step:?}")
    };
    assert_eq!(stopped.stop_after, Some(p.total as u32));
    let after = d.to_dense().unwrap();
    assert_ne!(after, heights);
    assert_eq!(
        d.undo_steps(),
        1,
        "the view's writes and the end are one undo step"
    );
    assert!(d.undo().unwrap());
    assert!(
        d.to_dense().unwrap() == heights,
        "undo restores every texel"
    );
    assert!(d.redo().unwrap());

    // The journal step replays it bit for bit.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.r32");
    scarp::terrain::export::write_heights(&file, W, H, &heights).unwrap();
    let text = journal_json(&desc(128), &Initial::File(file), &[step]).unwrap();
    assert!(text.contains("\"stop_after\""), "{text}");
    let journal = Journal::parse(&text, Path::new(".")).unwrap();
    let mut replayed = open();
    let mut replay_tools = scarp::edit::Tools::default();
    let target = &mut scarp::edit::Target::new(&mut replayed, &mut replay_tools);
    journal.replay(target, |_, _| {}).unwrap();
    assert!(
        replayed.to_dense().unwrap() == after,
        "the stopped run replays bit for bit"
    );

    // Run to the end live: the heights of the run made in one go, and no stop in its step;
    // stepping time, and solving for the steady state between measured iterations.
    for solve in [false, true] {
        let run = GeologyRun {
            solve_steady: solve,
            ..run
        };
        let mut e = open();
        let mut live = GeologyLive::start(&mut e, &mut tools, region, run).unwrap();
        while !live.complete() {
            live.advance(&mut e, 0.0).unwrap();
        }
        let (step, _) = live.finish(&mut e).unwrap().unwrap();
        assert!(matches!(step, Step::Geology { run, .. } if run.stop_after.is_none()));
        let mut whole = open();
        let out = scarp::edit::geology::region(
            &mut whole,
            &mut tools.geology,
            region,
            &run,
            true,
            |_, _, _| {},
        )
        .unwrap();
        // The coarsest level settles early, at a measure taken every 64 iterations (the live run's
        // submissions fell elsewhere).
        let early: Vec<usize> = out.levels.iter().map(|l| l.iterations).collect();
        assert!(
            early[0] < 150 && early[0] % 64 == 0,
            "solve {solve}: {early:?}"
        );
        assert!(
            e.to_dense().unwrap() == whole.to_dense().unwrap(),
            "solve {solve}: live or in one go, the same heights"
        );
    }

    // Cancelled: the region as it was, no undo step left.
    let mut c = open();
    let mut live = GeologyLive::start(&mut c, &mut tools, region, run).unwrap();
    for _ in 0..3 {
        live.advance(&mut c, 0.0).unwrap();
    }
    live.cancel(&mut c).unwrap();
    assert!(c.to_dense().unwrap() == heights);
    assert_eq!(c.undo_steps(), 0);
    assert!(!c.redo().unwrap(), "a run given up leaves nothing to redo");
    assert_no_validation_messages(&gpu);
}
