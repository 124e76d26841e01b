//! A field's page versions: the committed version of each page that is not flat, the working
//! versions of an edit under way, and the undo history of replaced versions. Copy-on-write: an
//! edit's working version starts as a copy of the committed one, and untouched pages stay
//! shared between versions.

use super::geometry::PageId;
use super::history::{History, DEFAULT_UNDO_BUDGET};
use super::residency::{Residency, Version};
use std::collections::BTreeMap;
use std::rc::Rc;

/// New versions of the pages an edit touches, written before they are committed.
struct Working {
    ids: Vec<PageId>,
    versions: Vec<Rc<Version>>,
}

/// The versions of one field's pages.
pub struct Versions {
    /// The committed version of each page that is not flat.
    pub(super) pages: BTreeMap<PageId, Rc<Version>>,
    history: History<Rc<Version>>,
    working: Option<Working>,
}

impl Versions {
    pub(super) fn new() -> Self {
        Self {
            pages: BTreeMap::new(),
            history: History::new(|v: &Rc<Version>| v.bytes(), DEFAULT_UNDO_BUDGET),
            working: None,
        }
    }

    /// The committed version of a page, if it is not flat (for identity checks).
    pub fn page(&self, id: PageId) -> Option<&Rc<Version>> {
        self.pages.get(&id)
    }

    /// The committed versions of the pages that are not flat, in page order.
    pub fn by_page(&self) -> impl Iterator<Item = (PageId, &Rc<Version>)> {
        self.pages.iter().map(|(&id, v)| (id, v))
    }

    /// Pages that are not flat (wherever their versions live).
    pub fn count(&self) -> usize {
        self.pages.len()
    }

    /// GPU bytes the committed pages need on the GPU (history versions not included).
    pub fn bytes(&self) -> u64 {
        self.pages.values().map(|v| v.bytes()).sum()
    }

    /// The working versions (ids and versions, in the order the edit named the pages).
    pub fn working(&self) -> (&[PageId], &[Rc<Version>]) {
        match &self.working {
            Some(w) => (&w.ids, &w.versions),
            None => (&[], &[]),
        }
    }

    /// Whether an edit is under way.
    pub fn editing(&self) -> bool {
        self.working.is_some()
    }

    /// Memory the undo/redo steps' versions take (upper bound, counted as GPU image pairs).
    pub fn undo_bytes(&self) -> u64 {
        self.history.held_bytes()
    }

    /// Steps that can be undone now.
    pub fn undo_steps(&self) -> usize {
        self.history.can_undo()
    }

    /// The version of page `id` as it should be shown now: its working version if an edit is
    /// under way there, else the committed one; None for a flat page.
    pub fn visible(&self, id: PageId) -> Option<&Rc<Version>> {
        if let Some(w) = &self.working {
            if let Some(i) = w.ids.iter().position(|&p| p == id) {
                return Some(&w.versions[i]);
            }
        }
        self.pages.get(&id)
    }

    /// Starts an edit of `ids`: each gets a working version, made (a copy of the current version
    /// or the flat value) when `places` first brings it onto the GPU. With `join` (the edit
    /// continues the last undo step) a page that step already replaced is taken over and
    /// written in place.
    pub(super) fn begin(&mut self, ids: Vec<PageId>, join: bool, places: &mut Residency) {
        debug_assert!(self.working.is_none(), "an edit is already under way");
        let mut versions = Vec::with_capacity(ids.len());
        for &id in &ids {
            if join && self.history.last_step_holds(id) {
                if let Some(v) = self.pages.remove(&id) {
                    if Rc::strong_count(&v) == 1 {
                        places.will_write(&v);
                        versions.push(v);
                        continue;
                    }
                    self.pages.insert(id, v);
                }
            }
            let source = self.pages.get(&id).cloned();
            versions.push(places.pending(id, source));
        }
        self.working = Some(Working { ids, versions });
    }

    /// Makes the working versions current; the versions they replace become one undo step
    /// (with `join`, part of the last step).
    pub(super) fn commit(&mut self, join: bool) {
        let Some(w) = self.working.take() else { return };
        let previous = w
            .ids
            .iter()
            .zip(w.versions)
            .map(|(&id, v)| (id, self.pages.insert(id, v)))
            .collect();
        if join {
            self.history.record_joined(previous);
        } else {
            self.history.record(previous);
        }
    }

    /// Undoes the last step: whether there was one, and the pages whose version changed. No
    /// edit may be under way.
    pub(super) fn undo(&mut self) -> (bool, Vec<PageId>) {
        debug_assert!(self.working.is_none(), "undo during an edit");
        self.swap(|h, pages| h.undo(pages))
    }

    /// Forgets the last undone step: it can no longer be redone.
    pub(super) fn forget_redo(&mut self) {
        self.history.forget_redo();
    }

    /// Redoes the last undone step, as [`Self::undo`].
    pub(super) fn redo(&mut self) -> (bool, Vec<PageId>) {
        debug_assert!(self.working.is_none(), "redo during an edit");
        self.swap(|h, pages| h.redo(pages))
    }

    /// Runs `step` on the history and the pages; returns what it returns and the pages whose
    /// version it swapped.
    fn swap(
        &mut self,
        step: impl FnOnce(&mut History<Rc<Version>>, &mut BTreeMap<PageId, Rc<Version>>) -> bool,
    ) -> (bool, Vec<PageId>) {
        let before = self.pointers();
        let done = step(&mut self.history, &mut self.pages);
        let after = self.pointers();
        let swapped = before
            .keys()
            .chain(after.keys())
            .filter(|id| before.get(id) != after.get(id))
            .copied()
            .collect();
        (done, swapped)
    }

    fn pointers(&self) -> BTreeMap<PageId, *const Version> {
        self.pages
            .iter()
            .map(|(&id, p)| (id, Rc::as_ptr(p)))
            .collect()
    }

    /// Bounds the memory undo steps hold; the oldest steps are forgotten past it.
    pub(super) fn set_undo_budget(&mut self, bytes: u64) {
        self.history.set_budget(bytes);
    }
}
