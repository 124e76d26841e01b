//! The document's undo log: which fields each document step wrote an undo step in (a stroke: the
//! fields its orders painted; a layer step: also the stack before and after), so that undo and
//! redo move those fields together, and the log forgets what the fields forgot.

use crate::layers::Stack;
use crate::pages::PageStore;

/// What one document step changed, for undo and redo.
#[derive(Clone, Debug)]
pub(super) enum LogEntry {
    /// Undo steps of these fields (a stroke: the fields its orders painted).
    Fields(Vec<String>),
    /// A layer step: the stack before and after, and the fields it wrote an undo step in.
    Stack {
        before: Box<Stack>,
        after: Box<Stack>,
        fields: Vec<String>,
    },
}

impl LogEntry {
    /// The fields the step wrote an undo step in.
    pub(super) fn fields(&self) -> &[String] {
        match self {
            LogEntry::Fields(f) | LogEntry::Stack { fields: f, .. } => f,
        }
    }

    fn fields_mut(&mut self) -> &mut Vec<String> {
        match self {
            LogEntry::Fields(f) | LogEntry::Stack { fields: f, .. } => f,
        }
    }
}

/// Steps to undo (oldest first) and steps undone that can be redone.
#[derive(Default)]
pub(super) struct UndoLog {
    undo: Vec<LogEntry>,
    redo: Vec<LogEntry>,
}

impl UndoLog {
    /// Records a new step; what was undone can no longer be redone.
    pub(super) fn push(&mut self, entry: LogEntry) {
        self.undo.push(entry);
        self.redo.clear();
    }

    /// Adds `fields` to the last undo step (written as part of it after it began).
    pub(super) fn extend_last(&mut self, fields: &[&str]) {
        if let Some(last) = self.undo.last_mut() {
            last.fields_mut()
                .extend(fields.iter().map(|f| f.to_string()));
        }
    }

    /// Steps that can be undone now.
    pub(super) fn len(&self) -> usize {
        self.undo.len()
    }

    /// Moves the last step to undo (`undo`) or to redo onto the other list and returns it;
    /// None when there is none.
    pub(super) fn step(&mut self, undo: bool) -> Option<LogEntry> {
        let (from, to) = if undo {
            (&mut self.undo, &mut self.redo)
        } else {
            (&mut self.redo, &mut self.undo)
        };
        let entry = from.pop()?;
        to.push(entry.clone());
        Some(entry)
    }

    /// Forgets the last undone step and returns it (it can no longer be redone).
    pub(super) fn forget_redo(&mut self) -> Option<LogEntry> {
        self.redo.pop()
    }

    /// Renames field `from` to `to` in every step (the base moving when layers come).
    pub(super) fn rename_field(&mut self, from: &str, to: &str) {
        for entry in self.undo.iter_mut().chain(&mut self.redo) {
            for f in entry.fields_mut().iter_mut().filter(|f| *f == from) {
                *f = to.to_string();
            }
        }
    }

    /// Forgets the oldest steps once a field of `store` has forgotten the undo steps they name
    /// (past its undo budget), so undo stops where the fields do. Every queued stroke must be
    /// done.
    pub(super) fn trim(&mut self, store: &PageStore) {
        loop {
            let mut cut: Option<usize> = None;
            let mut names: Vec<&String> = self.undo.iter().flat_map(|e| e.fields()).collect();
            names.sort();
            names.dedup();
            for name in names {
                let held = store.field(name).map_or(0, |f| f.versions().undo_steps());
                let refs: Vec<usize> = (0..self.undo.len())
                    .filter(|&i| self.undo[i].fields().iter().any(|f| f == name))
                    .collect();
                if refs.len() > held {
                    let last_forgotten = refs[refs.len() - held - 1];
                    cut = Some(cut.map_or(last_forgotten, |c| c.max(last_forgotten)));
                }
            }
            match cut {
                Some(i) => {
                    self.undo.drain(..=i);
                }
                None => break,
            }
        }
    }
}
