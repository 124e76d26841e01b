//! A journal file checked step by step before anything runs: each step against the document and
//! the layer stack it will meet (undo and redo move along the stacks of the undoable steps).
//! Errors name the step and the field.

use super::file::{
    DocumentEntry, ErodeEntry, GeologyEntry, Initial, JournalFile, StepEntry, StrokeEntry,
};
use super::layer_entry::LayerEntry;
use super::{Journal, JournalError, Step, MAX_STROKE_INSTANCES, MAX_STROKE_SAMPLES};
use super::{JOURNAL_VERSION, OLDEST_JOURNAL_VERSION};
use crate::brush::{BrushSettings, BrushType};
use crate::erosion::params::snake_flags;
use crate::layers::{LayerOp, Stack};
use crate::pages::geometry::{check_region, DocumentDesc, Region};
use std::path::Path;

/// Checks `raw` for a document that starts with the layers of `start`; relative files resolve
/// against `base_dir`.
pub(super) fn journal(
    raw: &JournalFile,
    base_dir: &Path,
    start: &Stack,
) -> Result<Journal, JournalError> {
    if !(OLDEST_JOURNAL_VERSION..=JOURNAL_VERSION).contains(&raw.version) {
        return Err(JournalError::at(
            "version",
            format!(
                "{} is not supported (this scarp reads versions {OLDEST_JOURNAL_VERSION} to {JOURNAL_VERSION})",
                raw.version
            ),
        ));
    }
    let document = document(&raw.document)?;
    let initial = initial(&raw.document.initial, base_dir)?;
    let mut checker = Checker {
        version: raw.version,
        base_dir,
        document,
        undoable: 0,
        redoable: 0,
        stacks: vec![start.clone()],
    };
    let steps = raw
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| checker.step(s).map_err(|e| JournalError::in_step(i, e)))
        .collect::<Result<_, _>>()?;
    if let Some(view) = &raw.view {
        view.check().map_err(|e| {
            let (field, problem) = e.split_once(' ').unwrap_or(("view", e.as_str()));
            JournalError::at(field.trim_end_matches(':'), problem)
        })?;
    }
    Ok(Journal {
        document,
        initial,
        steps,
        layers: checker.stacks.swap_remove(checker.undoable),
        view: raw.view,
    })
}

/// The document a journal describes, checked.
fn document(d: &DocumentEntry) -> Result<DocumentDesc, JournalError> {
    let document = DocumentDesc {
        width: d.width,
        height: d.height,
        format: d.format,
        page_size: d.page_size,
        height_min: d.height_min,
        height_max: d.height_max,
        units: d.units,
    };
    d.units
        .validate()
        .map_err(|e| JournalError::at("document.units", e))?;
    document
        .validate()
        .map_err(|e| JournalError::at("document", e))?;
    Ok(document)
}

/// The initial heights, files resolved against `base_dir`.
fn initial(initial: &Initial, base_dir: &Path) -> Result<Initial, JournalError> {
    Ok(match initial {
        Initial::Flat(h) if !h.is_finite() => {
            return Err(JournalError::at(
                "document.initial.flat",
                format!("must be finite, got {h}"),
            ))
        }
        Initial::Flat(h) => Initial::Flat(*h),
        Initial::File(p) => Initial::File(base_dir.join(p)),
        Initial::Tiles { pattern, grid } => {
            if !crate::terrain::tiles::is_pattern(pattern) {
                return Err(JournalError::at(
                    "document.initial.tiles.pattern",
                    format!("{} holds no {{i}} and {{j}}", pattern.display()),
                ));
            }
            Initial::Tiles {
                pattern: base_dir.join(pattern),
                grid: *grid,
            }
        }
    })
}

/// The state steps are checked against.
struct Checker<'a> {
    version: u32,
    base_dir: &'a Path,
    document: DocumentDesc,
    /// Steps that undo can take back, and that redo can bring back, here.
    undoable: usize,
    redoable: usize,
    /// The stack after each undoable step, `stacks[undoable]` the current one.
    stacks: Vec<Stack>,
}

impl Checker<'_> {
    /// The checked step; the error names the field (`stroke.brush.radius: …`).
    fn step(&mut self, step: &StepEntry) -> Result<Step, String> {
        let stack = self.stacks[self.undoable].clone();
        let (step, next) = match step {
            StepEntry::Layer(l) => {
                let op = self.layer(l, &stack)?;
                let mut next = stack;
                next.apply(&op);
                (Step::Layer(op), next)
            }
            StepEntry::Stroke(s) => (self.stroke(s, &stack)?, stack),
            StepEntry::Erode(e) => (self.erode(e, &stack)?, stack),
            StepEntry::Path(p) => {
                base_only(&stack, "path: a path")?;
                let d = &self.document;
                let spec = p.spec(d.width, d.height).map_err(|e| format!("path.{e}"))?;
                (Step::Path(spec), stack)
            }
            StepEntry::Geology(g) => (self.geology(g, &stack)?, stack),
            StepEntry::Undo(n) => return self.undo(*n),
            StepEntry::Redo(n) => return self.redo(*n),
        };
        self.undoable += 1;
        self.redoable = 0;
        self.stacks.truncate(self.undoable);
        self.stacks.push(next);
        Ok(step)
    }

    fn layer(&self, l: &LayerEntry, stack: &Stack) -> Result<LayerOp, String> {
        if self.version < 2 {
            return Err("layer: layer steps need journal version 2".into());
        }
        let op = l.op(self.base_dir).map_err(|e| format!("layer.{e}"))?;
        stack.check(&op).map_err(|e| format!("layer.{e}"))?;
        Ok(op)
    }

    fn stroke(&self, s: &StrokeEntry, stack: &Stack) -> Result<Step, String> {
        let brush = s
            .brush
            .settings(self.base_dir)
            .map_err(|e| format!("stroke.{e}"))?;
        let uplift = stack.paints_uplift();
        match stack.selected_layer() {
            None if uplift && brush.brush == BrushType::Erode => {
                return Err(
                    "stroke.brush.type: the erode brush reshapes the base, and the uplift map is selected"
                        .into(),
                );
            }
            None if uplift && brush.rules.is_some() => {
                return Err(
                    "stroke.brush.rules: mask rules filter a layer's mask, and the uplift map is selected"
                        .into(),
                );
            }
            None if BrushType::LAYER_ONLY.contains(&brush.brush) && !uplift => {
                return Err(format!(
                    "stroke.brush.type: {} brushes paint layers, and the {} is selected",
                    brush.brush.name(),
                    stack.selected_name()
                ));
            }
            Some(l) if l.locked => return Err(format!("stroke: layer {:?} is locked", l.name)),
            _ => {}
        }
        samples(s)?;
        instance_estimate(&brush, s)?;
        Ok(Step::Stroke {
            brush,
            samples: s.samples.clone(),
        })
    }

    fn geology(&self, g: &GeologyEntry, stack: &Stack) -> Result<Step, String> {
        base_only(stack, "geology: geology")?;
        let d = &self.document;
        let region = whole_or(g.region, d);
        check_region(d.width, d.height, region).map_err(|e| format!("geology.region: {e}"))?;
        let run = crate::geology::params::GeologyRun {
            params: g.params,
            iterations: g.iterations,
            until_steady: g.until_steady,
            solve_steady: g.solve_steady,
            coarse: g.coarse,
            stop_after: g.stop_after,
        };
        run.validate()
            .and_then(|()| run.params.validate_for(d.texel_size()))
            .map_err(|e| format!("geology.{}", snake_flags(&e)))?;
        Ok(Step::Geology { region, run })
    }

    fn erode(&self, e: &ErodeEntry, stack: &Stack) -> Result<Step, String> {
        base_only(stack, "erode: erosion")?;
        let d = &self.document;
        let region = whole_or(e.region, d);
        check_region(d.width, d.height, region).map_err(|e| format!("erode.region: {e}"))?;
        let erosion = crate::erosion::ErosionBrush::of_fields(e.run, e.params);
        erosion.validate().map_err(|e| format!("erode.{e}"))?;
        Ok(Step::Erode { region, erosion })
    }

    fn undo(&mut self, n: u32) -> Result<Step, String> {
        let count = n as usize;
        if n == 0 || count > self.undoable {
            return Err(format!(
                "undo: {n} requested, {} step(s) can be undone here",
                self.undoable
            ));
        }
        self.undoable -= count;
        self.redoable += count;
        Ok(Step::Undo(n))
    }

    fn redo(&mut self, n: u32) -> Result<Step, String> {
        let count = n as usize;
        if n == 0 || count > self.redoable {
            return Err(format!(
                "redo: {n} requested, {} step(s) can be redone here",
                self.redoable
            ));
        }
        self.redoable -= count;
        self.undoable += count;
        Ok(Step::Redo(n))
    }
}

/// The region `[x, y, width, height]` of a step, or the whole document `d` where it has none.
fn whole_or(region: Option<[u32; 4]>, d: &DocumentDesc) -> Region {
    match region {
        Some([x, y, width, height]) => Region {
            x,
            y,
            width,
            height,
        },
        None => Region::whole(d.width, d.height),
    }
}

/// Refuses `what` (which reshapes the base) while a layer is selected (the uplift map may be:
/// geology reads it, and the other edits reshape the base as the panels say).
fn base_only(stack: &Stack, what: &str) -> Result<(), String> {
    match stack.selected_layer() {
        Some(l) => Err(format!(
            "{what} reshapes the base, and layer {:?} is selected",
            l.name
        )),
        None => Ok(()),
    }
}

/// A stroke's samples: 1 to [`MAX_STROKE_SAMPLES`], finite, pressures in [0, 1].
fn samples(s: &StrokeEntry) -> Result<(), String> {
    if s.samples.is_empty() || s.samples.len() > MAX_STROKE_SAMPLES {
        return Err(format!(
            "stroke.samples: needs 1 to {MAX_STROKE_SAMPLES} samples, got {}",
            s.samples.len()
        ));
    }
    for (j, p) in s.samples.iter().enumerate() {
        if !(p.x.is_finite() && p.y.is_finite() && p.t.is_finite()) {
            return Err(format!("stroke.samples[{j}]: x, y and t must be finite"));
        }
        if !(0.0..=1.0).contains(&p.pressure) {
            return Err(format!(
                "stroke.samples[{j}].pressure: must be in [0, 1], got {}",
                p.pressure
            ));
        }
    }
    Ok(())
}

/// Refuses a stroke whose path would place more than [`MAX_STROKE_INSTANCES`] instances.
fn instance_estimate(brush: &BrushSettings, s: &StrokeEntry) -> Result<(), String> {
    let length: f64 = s
        .samples
        .windows(2)
        .map(|w| f64::from(w[1].x - w[0].x).hypot(f64::from(w[1].y - w[0].y)))
        .sum();
    let estimate = length / f64::from(brush.spacing * brush.radius);
    if estimate > MAX_STROKE_INSTANCES as f64 {
        return Err(format!(
            "stroke: about {estimate:.0} instances (path length / (spacing x radius)), more than {MAX_STROKE_INSTANCES}"
        ));
    }
    Ok(())
}
