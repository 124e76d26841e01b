//! Erosion as an edit (docs/erosion.md): the erode brush's strokes (each instance's square read
//! from the base, eroded on the GPU and written back; one undo step per stroke) and a run over a
//! region of the base (one undo step). Both reshape the base, never a layer. CPU twins:
//! [`crate::brush::cpu::CpuTerrain::erode_region`] and the erosion brush's twin in
//! [`crate::erosion::brush`]. The pipelines and the squares' buffers are made at the first use
//! and kept in [`Tools`].

use crate::brush::error::{BrushError, Result};
use crate::brush::shared::BrushInstance;
use crate::brush::BrushSettings;
use crate::document::Document;
use crate::erosion::gpu::{GpuErosion, Kernels};
use crate::pages::geometry::Region;
use crate::pages::geometry::{HeightFormat, Rect};
use crate::pages::rects::{self, RectEdit};
use std::sync::Arc;

/// What erosion keeps between edits: the pipelines and the brush squares' buffers.
#[derive(Default)]
pub struct Tools {
    kernels: Option<Arc<Kernels>>,
    buffers: Option<GpuErosion>,
    /// Erosion-brush squares through the host even on r32f documents (a benchmark's baseline).
    via_host: bool,
    /// The stroke under way has begun its undo step: a part of it fell on the document. A part
    /// joining a stroke whose earlier parts all fell outside begins the step instead of joining
    /// the stroke before.
    began: bool,
}

impl Tools {
    /// The erosion pipelines, made on first use and kept.
    pub fn kernels(&mut self, gpu: &Arc<crate::gpu::Gpu>) -> Result<Arc<Kernels>> {
        if let Some(k) = &self.kernels {
            return Ok(k.clone());
        }
        let k = Arc::new(Kernels::new(gpu)?);
        self.kernels = Some(k.clone());
        Ok(k)
    }

    /// Erosion-brush squares through the host (read back, eroded, uploaded) even where the GPU
    /// path applies: the baseline `scarp bench` compares that path against. Same heights.
    pub fn set_via_host(&mut self, on: bool) {
        self.via_host = on;
    }
}

/// Why the base cannot be eroded now, if it cannot: erosion reshapes heights, not a layer's
/// values.
pub fn check(doc: &Document) -> Result<()> {
    match doc.layers().selected_layer() {
        Some(l) => Err(BrushError::Layer(format!(
            "erosion reshapes the base: select it (layer {:?} is selected)",
            l.name
        ))),
        None => Ok(()),
    }
}

/// Why `region` of the base cannot be eroded now, if it cannot: a layer selected, a region
/// outside the document, or (on the GPU) one past what the device simulates at once.
pub fn check_region(doc: &Document, region: Region, gpu: bool) -> Result<()> {
    let most = gpu.then(|| GpuErosion::max_texels(doc.gpu()));
    super::check_base_region(doc, region, most, "erode a smaller region")
}

/// Erodes `region` of the base (the whole model on the GPU, or the CPU twin without `gpu`) as
/// one undo step, after every queued stroke; returns the water and the suspended sediment at
/// the end of the steps. Refused while a layer is selected and for a region outside the
/// document.
pub fn region(
    doc: &mut Document,
    region: Region,
    spec: &crate::erosion::run::RunSpec,
    gpu: bool,
    progress: impl FnMut(usize),
) -> Result<crate::erosion::run::RunOutput> {
    check_region(doc, region, gpu)?;
    spec.params.validate().map_err(BrushError::Layer)?;
    let rect = region.rect();
    let mut heights = doc.base_rect(rect)?;
    let before = heights.clone();
    let whole = Region {
        x: 0,
        y: 0,
        ..region
    };
    let gpu = gpu.then(|| doc.gpu().clone());
    let out = crate::erosion::run::erode(
        gpu.as_ref(),
        &mut heights,
        region.width,
        whole,
        spec,
        progress,
    )?;
    doc.write_base_rect(rect, &heights, false)?;
    doc.add_wear(rect, &before, &heights)?;
    Ok(out)
}

/// An erosion stroke (part): instance after instance, each square read from the base, eroded
/// on the GPU ([`crate::erosion::brush`]) and written back; one undo step per stroke (`join`
/// continues the stroke before; its step begins at its first square on the document).
pub fn stroke(
    doc: &mut Document,
    tools: &mut Tools,
    brush: &BrushSettings,
    instances: &[BrushInstance],
    join: bool,
) -> Result<()> {
    check(doc)?;
    doc.check_stroke(brush)?;
    doc.pump(None)?;
    let d = *doc.desc();
    let gpu = doc.gpu().clone();
    let kernels = tools.kernels(&gpu)?;
    let held = tools.buffers.take();
    let mut buffers =
        crate::erosion::brush::buffers_for(&gpu, held, &kernels, d.width, d.height, brush.radius)?;
    let join = join && tools.began;
    tools.began = join;
    let r = instances_onto(
        doc,
        tools.via_host,
        brush,
        instances,
        join,
        &mut buffers,
        &mut tools.began,
    );
    tools.buffers = Some(buffers);
    r?;
    doc.composite()
}

/// The most texels a run of instances through the host sums its wear over (the union of their
/// squares): the wear and deposits are read and written once a run, not once an instance.
const HOST_WEAR_TEXELS: u64 = 1 << 22;

fn instances_onto(
    doc: &mut Document,
    via_host: bool,
    brush: &BrushSettings,
    instances: &[BrushInstance],
    join: bool,
    buffers: &mut GpuErosion,
    began: &mut bool,
) -> Result<()> {
    let d = *doc.desc();
    let squares: Vec<(Region, crate::erosion::brush::Instance)> = instances
        .iter()
        .filter_map(|b| {
            let inst = crate::brush::erosion_instance(b, brush);
            crate::erosion::brush::square(d.width, d.height, &inst).map(|sq| (sq, inst))
        })
        .collect();
    if squares.is_empty() {
        return Ok(());
    }
    doc.ensure_wear_fields()?;
    if !join {
        doc.begin_step(vec![doc.base_name().to_string()]);
        *began = true;
    }
    if d.format != HeightFormat::R32f || via_host {
        return host_instances(doc, &squares, brush, buffers, join);
    }
    for (i, (sq, inst)) in squares.iter().enumerate() {
        let mut push =
            crate::erosion::brush::instance_push(*sq, inst, &brush.erosion, d.vertical_scale());
        push.height_unit = d.height_unit() as f32;
        let e = &brush.erosion;
        let join = join || i > 0;
        square_on_gpu(
            doc,
            sq.rect(),
            &push,
            e.model,
            e.steps as usize,
            buffers,
            join,
        )?;
    }
    Ok(())
}

/// Erosion-brush instances through the host (r16 pages hold 16-bit texels: quantized there; the
/// benchmark's host path), in runs whose squares' union is at most [`HOST_WEAR_TEXELS`]: per
/// run the wear and deposits are read over the union, each instance's change (before
/// quantizing) added as its heights are written, and the sums written once — also after a
/// failed instance, so what was written has its wear.
fn host_instances(
    doc: &mut Document,
    squares: &[(Region, crate::erosion::brush::Instance)],
    brush: &BrushSettings,
    buffers: &mut GpuErosion,
    join: bool,
) -> Result<()> {
    let unit = doc.desc().height_unit() as f32;
    let mut first = 0;
    while first < squares.len() {
        let mut union = squares[first].0.rect();
        let mut end = first + 1;
        while let Some((sq, _)) = squares.get(end) {
            let wider = union.union(&sq.rect());
            if wider.texels() > HOST_WEAR_TEXELS {
                break;
            }
            union = wider;
            end += 1;
        }
        let join = join || first > 0;
        let mut sums = doc.wear_sums(union)?;
        let mut written = Ok(());
        for (i, (sq, inst)) in squares[first..end].iter().enumerate() {
            match host_instance(doc, *sq, inst, brush, buffers, join || i > 0) {
                Ok((before, after)) => {
                    crate::wear::add_changes(&mut sums, union, sq.rect(), &before, &after, unit)
                }
                Err(e) => {
                    written = Err(e);
                    break;
                }
            }
        }
        doc.write_wear_sums(union, &sums, join)?;
        written?;
        first = end;
    }
    Ok(())
}

/// One instance through the host: its square of the base read, eroded on the GPU, blended on
/// the host and written (`join`: part of the stroke's step); its heights before and after.
fn host_instance(
    doc: &mut Document,
    sq: Region,
    inst: &crate::erosion::brush::Instance,
    brush: &BrushSettings,
    buffers: &mut GpuErosion,
    join: bool,
) -> Result<(Vec<f32>, Vec<f32>)> {
    let rect = sq.rect();
    let scale = doc.desc().vertical_scale();
    let name = doc.base_name().to_string();
    let field = doc.store.field_mut(&name).expect("the base exists");
    let before = rects::read(field, rect)?;
    let mut after = before.clone();
    let backend = crate::erosion::brush::Backend::Gpu(&mut *buffers);
    crate::erosion::brush::erode_square(backend, &mut after, sq, inst, &brush.erosion, scale)?;
    let field = doc.store.field_mut(&name).expect("the base exists");
    rects::write(field, rect, &after, join)?;
    Ok((before, after))
}

/// One erosion-brush instance without leaving the GPU: the square's texels copied out of the
/// base's pages, and its wear and deposits out of theirs ([`crate::wear`]), into the erosion
/// buffers; the steps; the blend, which adds the change in metres to the wear and deposits;
/// and the results copied into new versions of those pages (one submission) — an undo step of
/// the three fields, or with `join` part of the last.
fn square_on_gpu(
    doc: &mut Document,
    rect: Rect,
    push: &crate::erosion::shared::ErosionPush,
    model: crate::erosion::Model,
    steps: usize,
    buffers: &GpuErosion,
    join: bool,
) -> Result<()> {
    use crate::wear::{DEPOSITS_FIELD, WEAR_FIELD};
    let _p = crate::profile::scope("erosion brush: instance on the GPU");
    let gpu = doc.gpu().clone();
    let names = [
        doc.base_name().to_string(),
        WEAR_FIELD.into(),
        DEPOSITS_FIELD.into(),
    ];
    // Every field begins its edit (a version step of it, named in the undo step, even when
    // the pages do not fit); the work is recorded only when all three began.
    let mut began = Vec::new();
    let mut failed = None;
    for (i, name) in names.iter().enumerate() {
        let field = doc
            .store
            .field_mut(name)
            .expect("the base and the wear fields exist");
        let edit = RectEdit::begin(field, rect, join);
        if i > 0 && !join {
            doc.name_in_step(&[name]);
        }
        match edit {
            Ok(edit) => began.push(edit),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let recorded = match failed {
        Some(e) => Err(e.into()),
        None => (|| -> Result<()> {
            let field = |i: usize| doc.store.field(&names[i]).expect("exists");
            let [wear, deposits] = buffers.wear();
            let targets = [buffers.heights(), wear, deposits];
            let mut rec = crate::gpu::Recorder::new(&gpu)?;
            for (i, edit) in began.iter().enumerate() {
                edit.record_out(field(i), &mut rec, targets[i]);
            }
            buffers.record_instance(&mut rec, push, model, steps)?;
            for (i, edit) in began.iter().enumerate() {
                edit.record_in(field(i), &mut rec, targets[i]);
            }
            rec.submit_and_wait()?;
            Ok(())
        })(),
    };
    for (name, edit) in names.iter().zip(began) {
        edit.end(doc.store.field_mut(name).expect("exists"));
    }
    recorded
}
