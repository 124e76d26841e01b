//! Undo/redo with copy-on-write pages, one step per stroke. A page version is shared (`P` is an
//! `Arc`/`Rc` of the page) between the document and every step that did not change it; a stroke
//! replaces the versions of the pages it touches and keeps the previous ones in its step, so undo
//! and redo swap versions back and forth and restore heights bit-exactly, with no copies. Pages
//! that did not exist before a stroke are recorded as `None` and removed again by undo.
//!
//! A memory budget bounds the page versions the steps hold: past it, the oldest undo steps are
//! forgotten (the newest step is always kept). Versions shared between steps count once per step,
//! so the figure is an upper bound.

use super::geometry::PageId;
use std::collections::BTreeMap;

/// Memory the undo history may hold unless told otherwise (1 GiB).
pub const DEFAULT_UNDO_BUDGET: u64 = 1 << 30;

/// The page versions one step replaced, and their memory.
struct Step<P> {
    pages: Vec<(PageId, Option<P>)>,
    bytes: u64,
}

/// Undo and redo stacks of page versions.
pub struct History<P> {
    undo: Vec<Step<P>>,
    redo: Vec<Step<P>>,
    /// Memory of one page version.
    size_of: fn(&P) -> u64,
    budget_bytes: u64,
}

impl<P> History<P> {
    /// An empty history; `size_of` gives a page version's memory.
    pub fn new(size_of: fn(&P) -> u64, budget_bytes: u64) -> Self {
        Self {
            undo: Vec::new(),
            redo: Vec::new(),
            size_of,
            budget_bytes,
        }
    }

    fn step(&self, pages: Vec<(PageId, Option<P>)>) -> Step<P> {
        let bytes = pages
            .iter()
            .filter_map(|(_, p)| p.as_ref())
            .map(self.size_of)
            .sum();
        Step { pages, bytes }
    }

    /// Memory the undo and redo steps hold (an upper bound, see the module docs).
    pub fn held_bytes(&self) -> u64 {
        self.undo.iter().chain(&self.redo).map(|s| s.bytes).sum()
    }

    /// Sets the memory budget and forgets old steps to meet it.
    pub fn set_budget(&mut self, bytes: u64) {
        self.budget_bytes = bytes;
        self.enforce_budget();
    }

    fn enforce_budget(&mut self) {
        while self.held_bytes() > self.budget_bytes && self.undo.len() > 1 {
            self.undo.remove(0);
        }
    }

    /// Records a finished stroke: `previous` holds, for each page it touched, the version before
    /// it. Clears the redo stack, then forgets the oldest steps past the budget.
    pub fn record(&mut self, previous: Vec<(PageId, Option<P>)>) {
        self.redo.clear();
        let step = self.step(previous);
        self.undo.push(step);
        self.enforce_budget();
    }

    /// Records the next part of the last step's stroke (painted live): pages the step already
    /// holds keep their older version (the intermediate one is dropped), new pages join the step.
    /// With no step yet it records a new one.
    pub fn record_joined(&mut self, previous: Vec<(PageId, Option<P>)>) {
        let Some(mut last) = self.undo.pop() else {
            self.record(previous);
            return;
        };
        self.redo.clear();
        for (id, version) in previous {
            if !last.pages.iter().any(|(held, _)| *held == id) {
                last.pages.push((id, version));
            }
        }
        let step = self.step(last.pages);
        self.undo.push(step);
        self.enforce_budget();
    }

    /// Whether the newest undo step holds a version of page `id` (the page changed in it).
    pub fn last_step_holds(&self, id: PageId) -> bool {
        self.undo
            .last()
            .is_some_and(|s| s.pages.iter().any(|(held, _)| *held == id))
    }

    pub fn can_undo(&self) -> usize {
        self.undo.len()
    }

    pub fn can_redo(&self) -> usize {
        self.redo.len()
    }

    /// Undoes the last step on `pages`; false if there is none.
    pub fn undo(&mut self, pages: &mut BTreeMap<PageId, P>) -> bool {
        match self.undo.pop() {
            Some(step) => {
                let back = self.step(swap(step, pages));
                self.redo.push(back);
                true
            }
            None => false,
        }
    }

    /// Forgets the last undone step: it can no longer be redone.
    pub fn forget_redo(&mut self) {
        self.redo.pop();
    }

    /// Redoes the last undone step on `pages`; false if there is none.
    pub fn redo(&mut self, pages: &mut BTreeMap<PageId, P>) -> bool {
        match self.redo.pop() {
            Some(step) => {
                let back = self.step(swap(step, pages));
                self.undo.push(back);
                true
            }
            None => false,
        }
    }
}

/// Puts the step's versions into `pages`, returning the versions they replaced.
fn swap<P>(step: Step<P>, pages: &mut BTreeMap<PageId, P>) -> Vec<(PageId, Option<P>)> {
    step.pages
        .into_iter()
        .map(|(id, version)| {
            let current = match version {
                Some(v) => pages.insert(id, v),
                None => pages.remove(&id),
            };
            (id, current)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn undo_and_redo_swap_versions() {
        let a = PageId { x: 0, y: 0 };
        let b = PageId { x: 1, y: 0 };
        let mut pages: BTreeMap<PageId, Arc<u32>> = BTreeMap::new();
        pages.insert(a, Arc::new(1));
        let mut h = History::new(|_| 8, u64::MAX);
        // Stroke: a 1 -> 2, b created.
        let prev = vec![
            (a, pages.insert(a, Arc::new(2))),
            (b, pages.insert(b, Arc::new(7))),
        ];
        h.record(prev);
        assert!(h.undo(&mut pages));
        assert_eq!(*pages[&a], 1);
        assert!(!pages.contains_key(&b));
        assert!(h.redo(&mut pages));
        assert_eq!((*pages[&a], *pages[&b]), (2, 7));
        assert!(!h.redo(&mut pages));
    }

    #[test]
    fn the_budget_forgets_the_oldest_steps_but_keeps_the_newest() {
        let id = |x| PageId { x, y: 0 };
        let mut pages: BTreeMap<PageId, u64> = BTreeMap::new();
        // Each version "weighs" its value in bytes.
        let mut h = History::new(|v: &u64| *v, 250);
        for (i, weight) in [100u64, 100, 100, 400].into_iter().enumerate() {
            pages.insert(id(i as u32), weight);
            h.record(vec![
                (id(i as u32), None),
                (id(9), pages.insert(id(9), weight)),
            ]);
        }
        // Steps hold page 9's previous versions: 0 (none), 100, 100, 100 bytes; 250 keeps two.
        assert_eq!(h.can_undo(), 2);
        assert_eq!(h.held_bytes(), 200);
        // Below one step's weight, the newest step is still kept.
        h.set_budget(50);
        assert_eq!((h.can_undo(), h.held_bytes()), (1, 100));
        h.set_budget(u64::MAX);
        assert!(h.undo(&mut pages));
        assert!(!h.undo(&mut pages), "older steps were forgotten");
        assert_eq!(pages[&id(9)], 100);
    }
}
