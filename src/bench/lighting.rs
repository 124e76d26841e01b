//! Sun shadows and ambient occlusion (docs/render.md, Lighting): the whole document's lighting,
//! the relighting near one brush instance, and editor frames while a brush paints with the
//! lighting and the look against the same frames without them (the viewport issue's targets).

use super::ceilings::{Heater, HEAT_LONG_MS};
use super::frames::{paint_frames, paint_frames_lit, Lit, Painting, FULL_RUN, QUICK_RUN};
use super::BenchOptions;
use crate::document::Document;
use crate::gpu::Gpu;
use crate::noise::NoiseTables;
use crate::render::frames::{mean_p99, LightPerFrame};
use crate::render::lighting::{LightSettings, Lighting, Sun, DEFAULT_BUDGET_MS};
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What the lighting benchmark measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LightingResult {
    pub name: String,
    pub journal: String,
    pub terrain: [u32; 2],
    pub image: [u32; 2],
    /// The sun, degrees.
    pub sun_azimuth: f32,
    pub sun_elevation: f32,
    pub brush_radius: f32,
    /// Every page of the document lit from scratch: pages, GPU ms, ns per texel.
    pub whole_pages: usize,
    pub whole_gpu_ms: f64,
    pub whole_ns_per_texel: f64,
    /// One instance painted a frame and a budget of 0, so only the texels near it are relit
    /// (a budget of 0 lights one strip page on a frame with nothing near, and every frame of
    /// this run paints): lighting GPU ms per frame, and texels lit near the instance.
    pub near_instance_gpu_ms: f64,
    pub near_instance_texels: f64,
    /// Editor frames while the brush paints `instances_per_frame` instances a frame: without
    /// lighting and look, and with both under `light_budget_ms` (the default), mean ms.
    pub frames: u32,
    pub instances_per_frame: u32,
    pub frame_plain_ms: f64,
    pub frame_lit_ms: f64,
    /// Lit frame over the plain one (the target: ≤ 1.25).
    pub frame_lit_over_plain: f64,
    pub light_budget_ms: f64,
    /// Lighting per lit frame: GPU ms, texels near the frame's edits, strip pages.
    pub lit_light_gpu_ms: f64,
    pub lit_near_texels: f64,
    pub lit_strip_pages: f64,
}

struct Case {
    name: &'static str,
    journal: &'static str,
    run: Painting,
}

const FULL: Case = Case {
    name: "lighting/8192",
    journal: "journals/bench/default-8192.json",
    run: FULL_RUN,
};

const QUICK: Case = Case {
    name: "lighting/1024",
    journal: "journals/demo.json",
    run: QUICK_RUN,
};

pub(super) fn names(quick: bool) -> Vec<String> {
    vec![(if quick { QUICK.name } else { FULL.name }).to_string()]
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    tables: &NoiseTables,
    heater: &Heater,
) -> Result<Option<LightingResult>> {
    let c = if o.quick { &QUICK } else { &FULL };
    if !o.wants(c.name) {
        return Ok(None);
    }
    let path = o.assets.join(c.journal);
    // Each part paints: each starts from the journal's document.
    let fresh = || -> Result<Document> {
        crate::session::replay_journal(gpu, &path, tables).map_err(|e| {
            anyhow!("{e:#} (the lighting benchmark replays the repository's journals: run from its root, or leave it out with --filter)")
        })
    };
    let sun = Sun::default();
    let mut doc = fresh()?;
    let desc = *doc.desc();
    let mut lighting = Lighting::new(gpu, desc.format)?;
    let settings = LightSettings {
        sun,
        vertical_scale: desc.vertical_scale(),
    };
    heater.heat(HEAT_LONG_MS)?;
    let whole = lighting.update(&mut doc.store, &settings, None)?;
    let texels = f64::from(desc.width) * f64::from(desc.height);
    // The near run keeps the document lit whole (what is relit near one instance); the lit run
    // follows the view as the editor does.
    let lit = |lighting, budget_ms, follow| {
        Some(Lit {
            lighting,
            sun,
            budget_ms,
            follow,
        })
    };
    let run = c.run;
    let one = Painting { rate: 1, ..run };
    let (_, near_log) =
        paint_frames_lit(gpu, &mut doc, &one, heater, lit(&mut lighting, 0.0, false))?;
    let near = LightPerFrame::of(&near_log, run.frames);
    drop(doc);
    let plain = paint_frames(gpu, &mut fresh()?, &run, heater)?;
    let mut lighting = Lighting::new(gpu, desc.format)?;
    let lit_run = lit(&mut lighting, DEFAULT_BUDGET_MS, true);
    let (lit_log, light_log) = paint_frames_lit(gpu, &mut fresh()?, &run, heater, lit_run)?;
    let per_frame = LightPerFrame::of(&light_log, run.frames);
    let (frame_plain_ms, frame_lit_ms) =
        (mean_p99(&plain.frame_ms).0, mean_p99(&lit_log.frame_ms).0);
    let r = LightingResult {
        name: c.name.to_string(),
        journal: c.journal.to_string(),
        terrain: [desc.width, desc.height],
        image: run.image,
        sun_azimuth: sun.azimuth,
        sun_elevation: sun.elevation,
        brush_radius: run.radius,
        whole_pages: whole.pages,
        whole_gpu_ms: whole.gpu_ms,
        whole_ns_per_texel: super::ratio(whole.gpu_ms * 1e6, texels),
        near_instance_gpu_ms: near.gpu_ms,
        near_instance_texels: near.near_texels,
        frames: run.frames as u32,
        instances_per_frame: run.rate as u32,
        frame_plain_ms,
        frame_lit_ms,
        frame_lit_over_plain: super::ratio(frame_lit_ms, frame_plain_ms),
        light_budget_ms: DEFAULT_BUDGET_MS,
        lit_light_gpu_ms: per_frame.gpu_ms,
        lit_near_texels: per_frame.near_texels,
        lit_strip_pages: per_frame.strip_pages,
    };
    eprintln!(
        "{}: whole document {} pages, GPU {:.2} ms ({:.3} ns/texel); near one r{} instance {:.3} ms ({:.2} Mtexels); frames {:.2} lit vs {:.2} plain ms ({:.3}x; lighting {:.3} ms a frame, {:.2} strip pages)",
        r.name, r.whole_pages, r.whole_gpu_ms, r.whole_ns_per_texel, run.radius,
        r.near_instance_gpu_ms, r.near_instance_texels * 1e-6, r.frame_lit_ms, r.frame_plain_ms,
        r.frame_lit_over_plain, r.lit_light_gpu_ms, r.lit_strip_pages
    );
    Ok(Some(r))
}
