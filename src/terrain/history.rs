//! Undo/redo with copy-on-write pages, one step per stroke. A page version is shared (`P` is an
//! `Arc` of the page) between the document and every step that did not change it; a stroke
//! replaces the versions of the pages it touches and keeps the previous ones in its step, so undo
//! and redo swap versions back and forth and restore heights bit-exactly, with no copies. Pages
//! that did not exist before a stroke are recorded as `None` and removed again by undo.

use super::document::PageId;
use std::collections::BTreeMap;

/// The page versions one step replaced.
struct Step<P> {
    pages: Vec<(PageId, Option<P>)>,
}

/// Undo and redo stacks of page versions.
pub struct History<P> {
    undo: Vec<Step<P>>,
    redo: Vec<Step<P>>,
}

impl<P> Default for History<P> {
    fn default() -> Self {
        Self {
            undo: Vec::new(),
            redo: Vec::new(),
        }
    }
}

impl<P> History<P> {
    /// Records a finished stroke: `previous` holds, for each page it touched, the version before
    /// it. Clears the redo stack.
    pub fn record(&mut self, previous: Vec<(PageId, Option<P>)>) {
        self.redo.clear();
        self.undo.push(Step { pages: previous });
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
                self.redo.push(swap(step, pages));
                true
            }
            None => false,
        }
    }

    /// Redoes the last undone step on `pages`; false if there is none.
    pub fn redo(&mut self, pages: &mut BTreeMap<PageId, P>) -> bool {
        match self.redo.pop() {
            Some(step) => {
                self.undo.push(swap(step, pages));
                true
            }
            None => false,
        }
    }

    /// Drops the oldest undo steps until at most `keep` remain (a memory budget's lever).
    pub fn forget_oldest(&mut self, keep: usize) {
        let excess = self.undo.len().saturating_sub(keep);
        self.undo.drain(..excess);
    }
}

/// Puts the step's versions into `pages`, returning the versions they replaced as a step.
fn swap<P>(step: Step<P>, pages: &mut BTreeMap<PageId, P>) -> Step<P> {
    let replaced = step
        .pages
        .into_iter()
        .map(|(id, version)| {
            let current = match version {
                Some(v) => pages.insert(id, v),
                None => pages.remove(&id),
            };
            (id, current)
        })
        .collect();
    Step { pages: replaced }
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
        let mut h = History::default();
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
}
