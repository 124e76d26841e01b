//! The undo history of a list of steps, as the editor's History panel lists it: the steps in
//! force (oldest first) and the steps undone that a redo brings back (next first), each named by
//! its tool and its parameters.

use super::Step;

/// Which steps of a list are in force and which are undone, by index into the list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// The steps in force, oldest first (what undo takes back, from the end).
    pub done: Vec<usize>,
    /// The steps undone, the next to redo first.
    pub undone: Vec<usize>,
}

impl History {
    /// The history `steps` leave (undo and redo counts move along it; a new step clears what
    /// was undone, as the document does).
    pub fn of(steps: &[Step]) -> Self {
        let mut h = History::default();
        for (i, step) in steps.iter().enumerate() {
            match step {
                Step::Undo(n) => {
                    for _ in 0..*n {
                        if let Some(last) = h.done.pop() {
                            h.undone.insert(0, last);
                        }
                    }
                }
                Step::Redo(n) => {
                    for _ in 0..*n {
                        if !h.undone.is_empty() {
                            h.done.push(h.undone.remove(0));
                        }
                    }
                }
                _ => {
                    h.undone.clear();
                    h.done.push(i);
                }
            }
        }
        h
    }
}

impl Step {
    /// The step in a few words: its tool and its main parameters ("raise r64 s0.50, 12
    /// samples", "layer add \"Layer 1\"", "geology 200 iterations").
    pub fn label(&self) -> String {
        match self {
            Step::Stroke { brush, samples } => format!(
                "{} r{:.0} s{:.2}, {} sample{}",
                brush.brush.name(),
                brush.radius,
                brush.strength,
                samples.len(),
                if samples.len() == 1 { "" } else { "s" }
            ),
            Step::Undo(n) => format!("undo {n}"),
            Step::Redo(n) => format!("redo {n}"),
            Step::Layer(op) => format!("layer {} \"{}\"", op.op_name(), op.name()),
            Step::Erode { region, erosion } => format!(
                "erode {} {}x{}, {} steps",
                erosion.model.name(),
                region.width,
                region.height,
                erosion.steps
            ),
            Step::Path(p) => format!(
                "path {}, {} points, width {:.0}",
                p.mode.name(),
                p.points.len(),
                p.width
            ),
            Step::Geology { region, run } => format!(
                "geology {}x{}, {}",
                region.width,
                region.height,
                match run.until_steady {
                    Some(tol) if run.solve_steady => format!("solved until steady ({tol})"),
                    Some(tol) => format!("until steady ({tol})"),
                    None => format!("{} iterations", run.iterations),
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brush::{BrushSettings, BrushType};

    fn stroke(radius: f32) -> Step {
        Step::Stroke {
            brush: BrushSettings {
                radius,
                ..BrushSettings::new(BrushType::Raise)
            },
            samples: Vec::new(),
        }
    }

    /// Undo moves the last step in force to the front of the undone ones, redo brings it back,
    /// and a new step clears what was undone.
    #[test]
    fn history_follows_undo_redo_and_new_steps() {
        let steps = [
            stroke(1.0),
            stroke(2.0),
            stroke(3.0),
            Step::Undo(2),
            Step::Redo(1),
        ];
        assert_eq!(
            History::of(&steps),
            History {
                done: vec![0, 1],
                undone: vec![2],
            }
        );
        let mut more = steps.to_vec();
        more.push(stroke(4.0));
        assert_eq!(
            History::of(&more),
            History {
                done: vec![0, 1, 5],
                undone: vec![],
            }
        );
        // More undos than steps leave nothing in force.
        assert_eq!(History::of(&[stroke(1.0), Step::Undo(3)]).undone, vec![0]);
        assert_eq!(stroke(64.0).label(), "raise r64 s0.50, 0 samples");
    }
}
