//! Markdown tables of a [`Report`].

use super::{BrushResult, Report};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// A number with precision that suits its size.
pub(super) fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn pct(fraction: f64) -> String {
    format!("{}%", num(fraction * 100.0))
}

/// The whole report as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut o = String::new();
    let s = &r.system;
    let _ = writeln!(o, "# scarp bench — {}\n", s.device);
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(o, "| device | {} ({}) |", s.device, s.device_type);
    let _ = writeln!(o, "| driver | {} {} |", s.driver, s.driver_info);
    let _ = writeln!(o, "| Vulkan | {} |", s.vulkan);
    let _ = writeln!(o, "| CPU | {} × {} threads |", s.cpu, s.cpu_threads);
    let _ = writeln!(o, "| OS | {} |", s.os);
    let _ = writeln!(o, "| scarp | {} (commit {}) |", s.scarp_version, s.commit);
    let _ = writeln!(o, "| started | {} |", s.started_utc);
    let st = &r.settings;
    let _ = writeln!(
        o,
        "| settings | {}, warm-up {}, median of {}, filters: {} |",
        if st.quick { "--quick" } else { "full" },
        st.warmup,
        st.repeats,
        if st.filters.is_empty() {
            "none".to_string()
        } else {
            st.filters.join(", ")
        }
    );
    if s.validation {
        let _ = writeln!(
            o,
            "\nValidation layers were on: CPU-side costs include theirs."
        );
    }

    let c = &r.ceilings;
    let _ = writeln!(o, "\n## Ceilings\n");
    let _ = writeln!(
        o,
        "| kernel | work per pass | median ms | rate |\n|---|---|---:|---:|"
    );
    let _ = writeln!(
        o,
        "| copy, R32F storage images (imageLoad/imageStore) | {} texels, {} MiB read + written | {} | **{} GB/s** |",
        c.copy_image.elements,
        c.copy_image.bytes >> 20,
        num(c.copy_image.median_ms),
        num(c.copy_image.gb_s)
    );
    if let Some(w) = &c.copy_image_wave {
        let _ = writeln!(
            o,
            "| copy, R32F storage images, one brush wave's size, each pass after the last | {} texels, {} MiB read + written | {} | {} GB/s ({}× the image copy) |",
            w.elements,
            w.bytes >> 20,
            num(w.median_ms),
            num(w.gb_s),
            num(super::ratio(w.gb_s, c.copy_image.gb_s))
        );
    }
    if let Some(w) = &c.copy_image_wave_pages {
        let _ = writeln!(
            o,
            "| copy, the same in pages (512², 128² with --quick), a dispatch a page, each pass after the last | {} texels, {} MiB read + written | {} | {} GB/s ({}× the image copy) |",
            w.elements,
            w.bytes >> 20,
            num(w.median_ms),
            num(w.gb_s),
            num(super::ratio(w.gb_s, c.copy_image.gb_s))
        );
    }
    let _ = writeln!(
        o,
        "| copy, storage buffers (vec4) | {} floats, {} MiB read + written | {} | {} GB/s ({}× the image copy) |",
        c.copy_buffer.elements,
        c.copy_buffer.bytes >> 20,
        num(c.copy_buffer.median_ms),
        num(c.copy_buffer.gb_s),
        num(super::ratio(c.copy_buffer.gb_s, c.copy_image.gb_s))
    );
    let _ = writeln!(
        o,
        "| FMA chains (8 per invocation) | {} invocations × {} iterations | {} | **{} GFLOP/s** |",
        c.fma.invocations,
        c.fma.iterations,
        num(c.fma.median_ms),
        num(c.fma.gflop_s)
    );

    if let Some(n) = &r.noise {
        let _ = writeln!(o, "\n## Noise, {}×{}\n", n.width, n.height);
        let _ = writeln!(
            o,
            "Peer: {} with {} octaves: {} Msamples/s on one thread, {} on {} threads.\n",
            n.peer.implementation,
            n.peer.octaves,
            num(n.peer.one_thread_msamples_s),
            num(n.peer.all_cores_msamples_s),
            n.peer.threads
        );
        if let Some(p) = &n.simd_peer {
            let _ = writeln!(
                o,
                "Strongest CPU peer (the honest comparison): {} with {} octaves: {} Msamples/s on one thread, {} on {} threads.\n",
                p.implementation,
                p.octaves,
                num(p.one_thread_msamples_s),
                num(p.all_cores_msamples_s),
                p.threads
            );
        }
        if let Some(p) = &n.fastnoise2_peer {
            let fbm = n.kinds.iter().find(|k| k.kind == "fbm");
            let _ = writeln!(
                o,
                "The C++ peer: {} with {} octaves: {} Msamples/s on one thread, {} on {} threads{}.\n",
                p.implementation,
                p.octaves,
                num(p.one_thread_msamples_s),
                num(p.all_cores_msamples_s),
                p.threads,
                fbm.and_then(|k| k.gpu_over_fastnoise2_all_cores)
                    .map_or(String::new(), |r| format!("; GPU fbm over it: **{}×**", num(r)))
            );
        }
        let _ = writeln!(o, "| kind | octaves | GPU ms | GPU ms, gradients in shared memory | shared-memory gain | GPU Msamples/s | CPU twin Msamples/s | GPU / twin | GPU / peer | GPU / SIMD peer | twin / peer | GB/s written (of copy) | GFLOP/s (of FMA) | G table lookups/s | max rel. diff |");
        let _ = writeln!(
            o,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for k in &n.kinds {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {}× | {} | {} | {}× | {}× | {}× | {}× | {} ({}) | {} ({}) | {} | {:.1e} |",
                k.kind,
                k.octaves,
                num(k.gpu_ms),
                num(k.gpu_ms_shared_gradients),
                num(k.shared_gradients_speedup),
                num(k.gpu_msamples_s),
                num(k.cpu_twin_msamples_s),
                num(k.gpu_over_cpu_twin),
                num(k.gpu_over_peer_all_cores),
                num(k.gpu_over_simd_peer_all_cores),
                num(k.cpu_twin_over_peer_all_cores),
                num(k.gpu_write_gb_s),
                pct(k.fraction_of_copy),
                num(k.gpu_gflop_s),
                pct(k.fraction_of_fma),
                num(k.gpu_fetches_g_s),
                k.max_rel_diff_vs_cpu_twin
            );
        }
    }

    if let Some(b) = &r.brushes {
        brushes(&mut o, b);
    }

    if let Some(frames) = &r.frames {
        let _ = writeln!(o, "\n## Editor frames while a brush paints\n");
        let _ = writeln!(o, "| terrain | image | brush | frame mean / p99 ms | fps | GPU draw | GPU shading | GPU tile bounds | GPU brush | CPU LOD + draw prep | pump (wall) | bounds refresh (wall) | triangles | per covered pixel | error bound px |");
        let _ = writeln!(
            o,
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for f in frames {
            let _ = writeln!(
                o,
                "| {}² ({}) | {}×{} | r{} {}, {}/frame | {} / {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                f.terrain[0],
                f.journal,
                f.image[0],
                f.image[1],
                f.brush_radius,
                f.brush,
                f.instances_per_frame,
                num(f.mean_ms),
                num(f.p99_ms),
                num(f.fps),
                num(f.gpu_draw_ms),
                num(f.gpu_shade_ms),
                num(f.gpu_tile_bounds_ms),
                num(f.gpu_brush_ms),
                num(f.cpu_prepare_ms),
                num(f.pump_wall_ms),
                num(f.refresh_wall_ms),
                num(f.triangles),
                num(f.triangles_per_pixel),
                num(f.error_bound_px)
            );
        }
    }
    if let Some(l) = &r.layers {
        let _ = writeln!(o, "\n## Layers\n");
        let _ = writeln!(
            o,
            "{}×{} document with {} layers (modes add, max, min, replace in turn, opacity 0.8, each \
             painted where the stroke goes); a radius-{} noise stroke of {} instances on layer {}, \
             GPU-timed, against the same stroke on the only layer of a one-layer document and on \
             the document without layers (docs/layers.md).\n",
            l.terrain[0], l.terrain[1], l.layers, l.brush_radius, l.instances, l.painted_layer
        );
        let _ = writeln!(o, "| measurement | value |\n|---|---:|");
        let _ = writeln!(
            o,
            "| without layers: µs per instance | {} |",
            num(l.plain_us_per_instance)
        );
        let _ = writeln!(
            o,
            "| on layer {}: waves (value + alpha) µs per instance | {} |",
            l.painted_layer,
            num(l.layered_brush_us_per_instance)
        );
        let _ = writeln!(
            o,
            "| on layer {}: composite µs per instance | {} |",
            l.painted_layer,
            num(l.layered_composite_us_per_instance)
        );
        let _ = writeln!(
            o,
            "| one-layer document: waves + composite µs per instance | {} |",
            num(l.one_layer_us_per_instance)
        );
        let _ = writeln!(
            o,
            "| layer {} of {} over the one-layer document (target ≤ 2) | **{}** |",
            l.painted_layer,
            l.layers,
            num(l.layered_over_one_layer)
        );
        let _ = writeln!(
            o,
            "| layer {} of {} over the document without layers | {} |",
            l.painted_layer,
            l.layers,
            num(l.layered_over_plain)
        );
        let _ = writeln!(
            o,
            "| composite µs per dirty page (from the cache; {} pages, {} blends each) | {} |",
            l.dirty_pages,
            num(l.blends_per_page),
            num(l.composite_us_per_page)
        );
        let _ = writeln!(
            o,
            "| full fold of every layer, µs per page | {} |",
            num(l.full_fold_us_per_page)
        );
        let _ = writeln!(
            o,
            "| editor frame while painting, without layers / on layer {} (ms, {} frames) | {} / {} |",
            l.painted_layer,
            l.frames,
            num(l.frame_plain_ms),
            num(l.frame_layered_ms)
        );
        let _ = writeln!(
            o,
            "| layered frame over plain (target ≤ 1.1) | **{}** |",
            num(l.frame_layered_over_plain)
        );
    }
    if let Some(e) = &r.erosion {
        let _ = writeln!(o, "\n## Erosion\n");
        let _ = writeln!(
            o,
            "GPU ms per step (median of {} submissions of {} steps, after a warm-up), bytes per \
             texel per step by the cost model of docs/erosion.md (hydraulic {}, thermal {}), and \
             that traffic's GB/s over the same run's storage-buffer copy ceiling ({} GB/s); the \
             CPU twin on {} threads at the smallest size.\n",
            r.settings.repeats,
            crate::erosion::gpu::STEPS_PER_SUBMIT,
            super::erosion::HYDRAULIC_BYTES,
            super::erosion::THERMAL_BYTES,
            num(r.ceilings.copy_buffer.gb_s),
            e.cpu_threads
        );
        let _ = writeln!(
            o,
            "| model | size | GPU ms/step | steps/s | B/texel | GB/s | of copy | CPU ms/step | GPU/CPU |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for row in &e.rows {
            let _ = writeln!(
                o,
                "| {} | {}² | {} | {} | {} | {} | {} | {} | {} |",
                row.model,
                row.side,
                num(row.gpu_ms_per_step),
                num(row.steps_per_s),
                row.bytes_per_texel,
                num(row.gb_s),
                pct(row.fraction_of_copy),
                row.cpu_ms_per_step.map_or("—".into(), num),
                row.gpu_over_cpu.map_or("—".into(), num)
            );
        }
        if !e.brush.is_empty() {
            let _ = writeln!(
                o,
                "\nErosion brush: strokes on a document (wall clock; *gpu*: each square copied \
                 out of the page images, stepped, blended and copied back without leaving the \
                 GPU; *host*: read back, stepped on the GPU, blended on the host, written into \
                 the page store).\n"
            );
            let _ = writeln!(
                o,
                "| radius | steps | instances | path | instances/s | gpu / host |\n|---:|---:|---:|---|---:|---:|"
            );
            for b in &e.brush {
                let host = e
                    .brush
                    .iter()
                    .find(|h| h.via_host && h.radius == b.radius && h.steps == b.steps);
                let ratio = match (b.via_host, host) {
                    (false, Some(h)) => num(b.instances_per_s / h.instances_per_s),
                    _ => "—".into(),
                };
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} | {} | {} |",
                    b.radius,
                    b.steps,
                    b.instances,
                    if b.via_host { "host" } else { "gpu" },
                    num(b.instances_per_s),
                    ratio
                );
            }
        }
    }
    if let Some(l) = &r.lighting {
        lighting(&mut o, l);
    }
    if let Some(g) = &r.geology {
        geology(&mut o, g, r);
    }
    if let Some(p) = &r.paging {
        let _ = writeln!(o, "\n## Paging\n");
        let _ = writeln!(
            o,
            "{} pages of {} KiB (r32f) moved by the page store, wall clock, against a GPU-timed \
             copy from pinned host memory to device memory of the same bytes.\n",
            p.pages,
            p.page_bytes >> 10
        );
        let _ = writeln!(o, "| measurement | GB/s |\n|---|---:|");
        let _ = writeln!(
            o,
            "| host → device copy (ceiling) | {} |",
            num(p.host_to_device_gb_s)
        );
        let _ = writeln!(
            o,
            "| page-in (host memory → GPU, under a full budget) | **{}** ({} of the ceiling) |",
            num(p.page_in_gb_s),
            pct(p.page_in_fraction_of_ceiling)
        );
        let _ = writeln!(
            o,
            "| page-out (GPU → host memory, under a full budget) | {} |",
            num(p.page_out_gb_s)
        );
        let _ = writeln!(
            o,
            "| cold page-in (image pairs allocated) / page-out (freed) | {} / {} |",
            num(p.cold_page_in_gb_s),
            num(p.cold_page_out_gb_s)
        );
        let _ = writeln!(
            o,
            "| swapping under a budget (half out, half in; bytes both ways) | {} |",
            num(p.swap_gb_s)
        );
    }
    o
}

/// The geology section: iterations per size against the copy ceiling, and the drainage
/// statistics before and after the default run.
fn geology(o: &mut String, g: &super::geology::GeologyResult, r: &Report) {
    let _ = writeln!(o, "\n## Geology\n");
    let _ = writeln!(
        o,
        "GPU ms per stream-power iteration (median of {} submissions of {} iterations, after a \
         warm-up), {} bytes per texel by the cost model of docs/geology.md (receivers a byte each \
         where the device stores bytes, the uplift map not read when it is 1), and that traffic's \
         GB/s over the same run's storage-buffer copy ceiling ({} GB/s); the CPU twin on {} \
         threads at the smallest size.\n",
        r.settings.repeats,
        crate::geology::gpu::ITERATIONS_PER_SUBMIT,
        g.rows.first().map_or(0, |row| row.bytes_per_texel),
        num(r.ceilings.copy_buffer.gb_s),
        g.cpu_threads
    );
    let _ = writeln!(
        o,
        "| size | GPU ms/iteration | iterations/s | GB/s | of copy | CPU ms/iteration | GPU/CPU |\n|---:|---:|---:|---:|---:|---:|---:|"
    );
    for row in &g.rows {
        let _ = writeln!(
            o,
            "| {}² | {} | {} | {} | {} | {} | {} |",
            row.side,
            num(row.gpu_ms_per_iteration),
            num(row.iterations_per_s),
            num(row.gb_s),
            pct(row.fraction_of_copy),
            row.cpu_ms_per_iteration.map_or("—".into(), num),
            row.gpu_over_cpu.map_or("—".into(), num)
        );
    }
    if !g.drainage.is_empty() {
        let _ = writeln!(
            o,
            "\nThe maps' D8 drainage of the same terrains on the GPU by pointer doubling \
             (docs/maps.md; passes alone, and wall clock with the heights up and the counts \
             back, medians) against geology's exact accumulation on the CPU (`d8_area`), and \
             the texels whose areas differ (0: the same, bit for bit).\n"
        );
        let _ = writeln!(
            o,
            "| size | rounds | GPU ms (passes) | GPU ms (wall) | CPU ms | CPU/GPU wall | texels differing |\n|---:|---:|---:|---:|---:|---:|---:|"
        );
        for d in &g.drainage {
            let _ = writeln!(
                o,
                "| {}² | {} | {} | {} | {} | {} | {} |",
                d.side,
                d.rounds,
                num(d.gpu_ms),
                num(d.gpu_wall_ms),
                num(d.cpu_ms),
                num(d.cpu_over_gpu_wall),
                d.differing_texels
            );
        }
    }
    if g.realism.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nThe default parameters (and with the threshold hillslope where a critical slope is \
         named) run coarse to fine until the steady-state measure is at most 0.01 (or the cap); \
         drainage statistics (docs/bench.md) before → after.\n"
    );
    let _ = writeln!(
        o,
        "| terrain | iterations | years | GPU s | measure | Hack's exponent | pits | slope p50/p90/p99 (°) |\n|---|---:|---:|---:|---:|---|---|---|"
    );
    for x in &g.realism {
        let (b, a) = (&x.before, &x.after);
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {:.3} → **{:.3}** | {:.2} % → **{:.2} %** | {:.0}/{:.0}/{:.0} → {:.0}/{:.0}/{:.0} |",
            match (x.critical_slope_deg, x.solved) {
                (Some(d), _) => format!("{}, critical slope {d}°", x.terrain),
                (None, true) => format!("{}, with the steady-state solver", x.terrain),
                (None, false) => x.terrain.clone(),
            },
            x.iterations,
            match x.solved {
                true => "solver".to_string(),
                false => format!("{:.3e}", x.years),
            },
            num(x.gpu_s),
            num(f64::from(x.measure)),
            b.hack_exponent,
            a.hack_exponent,
            100.0 * b.pit_fraction,
            100.0 * a.pit_fraction,
            b.slope_p50_deg,
            b.slope_p90_deg,
            b.slope_p99_deg,
            a.slope_p50_deg,
            a.slope_p90_deg,
            a.slope_p99_deg
        );
    }
}

/// The lighting section: the whole document, near one instance, frames lit against plain.
fn lighting(o: &mut String, l: &super::lighting::LightingResult) {
    let _ = writeln!(o, "\n## Lighting\n");
    let _ = writeln!(
        o,
        "Sun shadows and ambient occlusion (docs/render.md) of the {}×{} terrain, sun {}°, {}°; \
         a radius-{} Jordan brush painting around the centre; frames at {}×{} (the frame \
         benchmark's loop).\n",
        l.terrain[0],
        l.terrain[1],
        l.sun_azimuth,
        l.sun_elevation,
        l.brush_radius,
        l.image[0],
        l.image[1]
    );
    let _ = writeln!(o, "| measurement | value |\n|---|---:|");
    let rows = [
        (
            format!("whole document ({} pages), GPU ms", l.whole_pages),
            num(l.whole_gpu_ms),
        ),
        (
            "whole document, GPU ns per texel".to_string(),
            num(l.whole_ns_per_texel),
        ),
        (
            format!(
                "relighting near one instance a frame ({} Mtexels), GPU ms (target for r512 on 8192²: ≤ 0.5)",
                num(l.near_instance_texels * 1e-6)
            ),
            format!("**{}**", num(l.near_instance_gpu_ms)),
        ),
        (
            format!(
                "frame while painting {} instances a frame, plain / lit (ms, {} frames)",
                l.instances_per_frame, l.frames
            ),
            format!("{} / {}", num(l.frame_plain_ms), num(l.frame_lit_ms)),
        ),
        (
            format!(
                "lit over plain, lighting budget {} ms (target on 8192² at 1080p: ≤ 1.25)",
                num(l.light_budget_ms)
            ),
            format!("**{}**", num(l.frame_lit_over_plain)),
        ),
        (
            "lighting per lit frame: GPU ms, Mtexels near edits, strip pages".to_string(),
            format!(
                "{} / {} / {}",
                num(l.lit_light_gpu_ms),
                num(l.lit_near_texels * 1e-6),
                num(l.lit_strip_pages)
            ),
        ),
    ];
    for (what, value) in rows {
        let _ = writeln!(o, "| {what} | {value} |");
    }
}

fn brushes(o: &mut String, b: &super::BrushSection) {
    let _ = writeln!(
        o,
        "\n## Brushes\n\n{}×{} document of uneven heights; one stroke of {} instances on a circle per configuration; GPU time = the stroke's timestamped waves (page copy-on-write not included).\n",
        b.document[0], b.document[1], b.instances_per_stroke
    );
    let _ = writeln!(o, "Cost model (docs/bench.md): FLOPs = covered texels × per-texel FLOPs + noise evaluations × per-evaluation FLOPs; bytes = texels written × (read + write).\n");
    let _ = writeln!(o, "| brush | FLOPs per covered texel and instance | FLOPs per noise evaluation | bytes per texel written (r32f / r16) |\n|---|---:|---:|---:|");
    for c in &b.costs {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} / {} |",
            c.brush,
            c.flops_per_texel_instance,
            c.flops_per_noise_eval,
            c.bytes_per_texel_written_r32f,
            c.bytes_per_texel_written_r16
        );
    }
    let batches: BTreeSet<u32> = b.results.iter().map(|r| r.batch).collect();
    let pages: BTreeSet<u32> = b.results.iter().map(|r| r.page_size).collect();
    let formats: Vec<String> = ["r32f", "r16"]
        .into_iter()
        .filter(|f| b.results.iter().any(|r| r.format == *f))
        .map(String::from)
        .collect();
    let rows: Vec<(String, u32)> = {
        let mut seen = Vec::new();
        for r in &b.results {
            if !seen.contains(&(r.brush.clone(), r.radius)) {
                seen.push((r.brush.clone(), r.radius));
            }
        }
        seen
    };
    let find =
        |brush: &str, radius: u32, batch: u32, page: u32, format: &str| -> Option<&BrushResult> {
            b.results.iter().find(|r| {
                r.brush == brush
                    && r.radius == radius
                    && r.batch == batch
                    && r.page_size == page
                    && r.format == format
                    && r.path == "ping-pong"
                    && r.tile_culling
            })
        };
    let (ref_batch, ref_page, first_format) = super::reference_config(&b.results);

    // Batching.
    let _ = writeln!(
        o,
        "\n### Batching: µs per instance, page {ref_page}, {first_format}\n"
    );
    let mut head = String::from("| brush | radius |");
    let mut rule = String::from("|---|---:|");
    for bt in &batches {
        let _ = write!(head, " b{bt} |");
        rule.push_str("---:|");
    }
    head.push_str(
        " best / b1 | best GB/s (of copy) | best GFLOP/s (of FMA) | CPU twin µs | GPU / twin |",
    );
    rule.push_str("---:|---:|---:|---:|---:|");
    let _ = writeln!(o, "{head}\n{rule}");
    for (brush, radius) in &rows {
        let cells: Vec<Option<&BrushResult>> = batches
            .iter()
            .map(|&bt| find(brush, *radius, bt, ref_page, &first_format))
            .collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        let mut line = format!("| {brush} | {radius} |");
        for c in &cells {
            let _ = write!(
                line,
                " {} |",
                c.map_or("—".to_string(), |r| num(r.us_per_instance))
            );
        }
        let present: Vec<&BrushResult> = cells.iter().flatten().copied().collect();
        let best = present
            .iter()
            .min_by(|a, b| a.us_per_instance.total_cmp(&b.us_per_instance))
            .expect("one cell at least");
        let b1 = present.iter().find(|r| r.batch == 1);
        let bw = present
            .iter()
            .max_by(|a, b| a.gb_s.total_cmp(&b.gb_s))
            .expect("one");
        let fl = present
            .iter()
            .max_by(|a, b| a.gflop_s.total_cmp(&b.gflop_s))
            .expect("one");
        let twin = b
            .cpu_twin
            .iter()
            .find(|t| &t.brush == brush && t.radius == *radius);
        let _ = writeln!(
            line,
            " {} | {} ({}, b{}) | {} ({}, b{}) | {} | {} |",
            b1.map_or("—".to_string(), |b1| format!(
                "{}× (b{})",
                num(super::ratio(b1.us_per_instance, best.us_per_instance)),
                best.batch
            )),
            num(bw.gb_s),
            pct(bw.fraction_of_copy),
            bw.batch,
            num(fl.gflop_s),
            pct(fl.fraction_of_fma),
            fl.batch,
            twin.map_or("—".to_string(), |t| num(t.cpu_us_per_instance)),
            twin.map_or("—".to_string(), |t| format!("{}×", num(t.gpu_over_cpu)))
        );
        o.push_str(&line);
    }

    // Page size and format.
    if pages.len() > 1 || formats.len() > 1 {
        let _ = writeln!(
            o,
            "\n### Page size and format: µs per instance, batch {ref_batch}\n"
        );
        let mut head = String::from("| brush | radius |");
        let mut rule = String::from("|---|---:|");
        for p in &pages {
            for f in &formats {
                let _ = write!(head, " p{p} {f} |");
                rule.push_str("---:|");
            }
        }
        let _ = writeln!(o, "{head}\n{rule}");
        for (brush, radius) in &rows {
            let mut line = format!("| {brush} | {radius} |");
            for p in &pages {
                for f in &formats {
                    let _ = write!(
                        line,
                        " {} |",
                        find(brush, *radius, ref_batch, *p, f)
                            .map_or("—".to_string(), |r| num(r.us_per_instance))
                    );
                }
            }
            let _ = writeln!(o, "{line}");
        }
    }

    // Variants against the default path (ping-pong, tile culling).
    for (heading, intro, label, is_variant) in [
        (
            "In place vs ping-pong (pointwise brushes)",
            "In place, a pass reads and writes the front image and writes only its own rectangle; ping-pong passes also copy the previous pass's rectangle into the back image.",
            "in place",
            (|r: &BrushResult| r.path == "in-place") as fn(&BrushResult) -> bool,
        ),
        (
            "Tile culling (pointwise brushes)",
            "With tile culling (the default) each 16×16 workgroup first marks the batch's instances that reach it, and its texels test only those; without it every texel of a pass tests every instance of the batch.",
            "without culling",
            |r: &BrushResult| !r.tile_culling && r.path == "ping-pong",
        ),
    ] {
        let variants: Vec<&BrushResult> = b.results.iter().filter(|r| is_variant(r)).collect();
        if variants.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n### {heading}\n\n{intro}\n");
        let _ = writeln!(o, "| brush | radius | batch | page | format | default µs / instance | {label} µs / instance | time, {label} / default | texels written, {label} / default |\n|---|---:|---:|---:|---|---:|---:|---:|---:|");
        for r in variants {
            let Some(base) = find(&r.brush, r.radius, r.batch, r.page_size, &r.format) else {
                continue;
            };
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {}× | {} |",
                r.brush,
                r.radius,
                r.batch,
                r.page_size,
                r.format,
                num(base.us_per_instance),
                num(r.us_per_instance),
                num(super::ratio(r.us_per_instance, base.us_per_instance)),
                num(super::ratio(
                    r.texels_written as f64,
                    base.texels_written as f64
                ))
            );
        }
    }

    let _ = writeln!(o, "\n### Every configuration\n");
    let _ = writeln!(o, "| configuration | passes / waves | GPU ms | µs / instance | Mtexel/s | GB/s | of copy | GFLOP/s | of FMA |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &b.results {
        let _ = writeln!(
            o,
            "| {} | {} / {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            r.passes,
            r.waves,
            num(r.gpu_ms),
            num(r.us_per_instance),
            num(r.mtexel_s),
            num(r.gb_s),
            pct(r.fraction_of_copy),
            num(r.gflop_s),
            pct(r.fraction_of_fma)
        );
    }
}
