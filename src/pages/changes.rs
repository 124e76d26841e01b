//! A field's record of which pages changed when: every change of what a page shows bumps the
//! epoch and stamps the page; a reader keeps the epoch it has seen and asks what changed since,
//! so any number of readers can follow one field through `&`.

use super::geometry::{DocumentDesc, PageId, Rect};
use std::collections::{BTreeMap, VecDeque};

/// Most entries of the log of changed rectangles ([`ChangeLog::value_rects_since`]).
pub const RECT_LOG: usize = 4096;

/// Epochs of a field's changes: of what each page shows (values changed, or its image moved),
/// of its values alone, and where inside the pages the values changed.
#[derive(Default)]
pub struct ChangeLog {
    /// Epoch of each page's last visible change (values changed, or its image moved).
    shown: BTreeMap<PageId, u64>,
    /// Epoch of each page's last change of values.
    values: BTreeMap<PageId, u64>,
    /// Where values changed, oldest first: (epoch, page, page-local rectangle); at most
    /// [`RECT_LOG`] entries, older ones dropped (up to epoch `rects_dropped_through`).
    rects: VecDeque<(u64, PageId, Rect)>,
    rects_dropped_through: u64,
    epoch: u64,
}

impl ChangeLog {
    /// Where values changed since epoch `seen`, as page-local rectangles of the grid `desc`:
    /// the logged rectangles, or each changed page whole once the log no longer reaches back.
    pub fn rects_or_pages_since(&self, seen: u64, desc: &DocumentDesc) -> Vec<(PageId, Rect)> {
        self.value_rects_since(seen).unwrap_or_else(|| {
            self.values_changed_since(seen)
                .into_iter()
                .map(|id| {
                    let r = desc.page_rect(id);
                    (id, Rect::new(0, 0, r.width(), r.height()))
                })
                .collect()
        })
    }

    /// The current change epoch (0: nothing ever changed).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Pages whose shown values changed after epoch `seen`, and the epoch now (pass it next time).
    pub fn changed_since(&self, seen: u64) -> (Vec<PageId>, u64) {
        (after(&self.shown, seen), self.epoch)
    }

    /// Pages whose values changed after epoch `seen` (a subset of [`Self::changed_since`]'s:
    /// those not merely moved between places).
    pub fn values_changed_since(&self, seen: u64) -> Vec<PageId> {
        after(&self.values, seen)
    }

    /// Where values changed after epoch `seen`: page-local rectangles (a page may appear more
    /// than once); None when the log no longer reaches back that far (then every page of
    /// [`Self::values_changed_since`] counts as changed whole).
    pub fn value_rects_since(&self, seen: u64) -> Option<Vec<(PageId, Rect)>> {
        if seen < self.rects_dropped_through {
            return None;
        }
        let first = self.rects.partition_point(|&(e, _, _)| e <= seen);
        Some(
            self.rects
                .range(first..)
                .map(|&(_, id, r)| (id, r))
                .collect(),
        )
    }

    /// Notes the values of pages `ids` changed, inside the page-local `rects` (stamped with the
    /// epoch the next [`Self::moved`] opens).
    pub(super) fn values(&mut self, ids: &[PageId], rects: &[(PageId, Rect)]) {
        let epoch = self.epoch + 1;
        for &id in ids {
            self.values.insert(id, epoch);
        }
        self.rects
            .extend(rects.iter().map(|&(id, r)| (epoch, id, r)));
        while self.rects.len() > RECT_LOG {
            let (e, _, _) = self.rects.pop_front().expect("longer than the log");
            self.rects_dropped_through = e;
        }
    }

    /// Notes that the images of pages `ids` changed (readers rebind them): a new epoch.
    pub(super) fn moved(&mut self, ids: impl IntoIterator<Item = PageId>) {
        self.epoch += 1;
        for id in ids {
            self.shown.insert(id, self.epoch);
        }
    }

    /// Continues the epochs of `old`, the log of the field this one replaces.
    pub(super) fn continue_from(&mut self, old: &ChangeLog) {
        self.epoch = self.epoch.max(old.epoch);
    }
}

/// The pages stamped after epoch `seen`.
fn after(stamps: &BTreeMap<PageId, u64>, seen: u64) -> Vec<PageId> {
    stamps
        .iter()
        .filter(|(_, &e)| e > seen)
        .map(|(&id, _)| id)
        .collect()
}
