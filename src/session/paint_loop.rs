//! A brush painting while frames are drawn (`scarp render --frames --paint`, the frame
//! benchmark): a stroke that grows around the document's centre by a fixed number of instances
//! per frame, pumped under a GPU budget as the editor pumps live strokes.

use crate::brush::error::{BrushError, Result};
use crate::brush::shared::BrushInstance;
use crate::brush::BrushSettings;
use crate::document::Document;
use crate::pages::PageStore;
use crate::render::frames::FrameWork;

/// A brush painting a circle around the document's centre while frames are drawn.
#[derive(Clone, Debug)]
pub struct PaintLoad {
    pub brush: BrushSettings,
    /// Instances added to the stroke each frame.
    pub instances_per_frame: usize,
    /// GPU budget for brush work per frame (ms); None drains the queue every frame.
    pub budget_ms: Option<f64>,
}

impl PaintLoad {
    /// A noise brush of `kind` painting the benchmark circle: `rate` instances per frame, spacing
    /// a tenth of the radius (so the ring laps and grows spiky), the whole queue each frame.
    pub fn noise(kind: crate::noise::NoiseKind, radius: f32, strength: f32, rate: usize) -> Self {
        let mut brush = BrushSettings::new(crate::brush::BrushType::Noise);
        brush.noise.kind = kind;
        brush.radius = radius;
        brush.strength = strength;
        brush.spacing = 0.1;
        Self {
            brush,
            instances_per_frame: rate,
            budget_ms: None,
        }
    }
}

/// Instances `first..first + count` of a circle of radius `r` around `c`, spaced by the brush.
pub fn circle_instances(
    brush: &BrushSettings,
    c: [f32; 2],
    r: f32,
    first: usize,
    count: usize,
) -> Vec<BrushInstance> {
    let step = (brush.spacing * brush.radius / r.max(1.0)).max(1e-4);
    (first..first + count)
        .map(|k| {
            let a = k as f32 * step;
            let dir = a + std::f32::consts::FRAC_PI_2;
            let axis_angle = dir + brush.dir_angle_deg.to_radians();
            BrushInstance {
                center: [c[0] + r * a.cos(), c[1] + r * a.sin()],
                radius: brush.radius,
                inner_radius: brush.inner_radius,
                strength: brush.signed_strength(),
                direction: dir,
                axis: [axis_angle.cos(), axis_angle.sin()],
            }
        })
        .collect()
}

/// The frame loop's work: `load` painting `doc` (or nothing, with no load).
pub struct PaintLoop<'a> {
    pub doc: &'a mut Document,
    pub load: Option<&'a PaintLoad>,
    next: usize,
}

impl<'a> PaintLoop<'a> {
    /// Paints `doc` with `load` (None: idle), its pumps not waiting for the frames in flight.
    pub fn new(doc: &'a mut Document, load: Option<&'a PaintLoad>) -> Self {
        doc.set_frames_in_flight(true);
        Self { doc, load, next: 0 }
    }
}

impl Drop for PaintLoop<'_> {
    fn drop(&mut self) {
        self.doc.set_frames_in_flight(false);
    }
}

impl FrameWork for PaintLoop<'_> {
    type Error = BrushError;

    fn store(&mut self) -> &mut PageStore {
        &mut self.doc.store
    }

    fn before_frame(&mut self, frame: usize) -> Result<f64> {
        let Some(p) = self.load else {
            return Ok(0.0);
        };
        let d = *self.doc.desc();
        let centre = [d.width as f32 * 0.5, d.height as f32 * 0.5];
        let ring = d.width.min(d.height) as f32 * 0.3;
        let inst = circle_instances(&p.brush, centre, ring, self.next, p.instances_per_frame);
        self.next += inst.len();
        self.doc.enqueue_stroke_part(&p.brush, &inst, frame > 0)?;
        Ok(self.doc.pump(p.budget_ms)?.gpu_ns * 1e-6)
    }

    fn finish(&mut self) -> Result<()> {
        self.doc.pump(None).map(|_| ())
    }

    fn done(&self) -> usize {
        self.next
    }
}
