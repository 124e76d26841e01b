//! Opt-in CPU phase timing (`SCARP_PROFILE=1`): named scopes accumulate wall-clock time per
//! thread; [`report`] lists them. While a trace records ([`crate::trace`]), each scope is also an
//! event on its thread's track. Off, a scope costs two relaxed atomic loads.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

static STATE: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 off, 2 on

thread_local! {
    static TOTALS: RefCell<BTreeMap<&'static str, (f64, u64)>> = const { RefCell::new(BTreeMap::new()) };
}

fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on = std::env::var("SCARP_PROFILE").is_ok_and(|v| v == "1");
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
    }
}

/// Times until dropped, under `label`.
pub struct Scope {
    label: &'static str,
    start: Option<Instant>,
    totals: bool,
}

/// Starts timing `label` (when profiling is on or a trace records).
pub fn scope(label: &'static str) -> Scope {
    let totals = enabled();
    Scope {
        label,
        start: (totals || crate::trace::recording()).then(Instant::now),
        totals,
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let Some(s) = self.start else {
            return;
        };
        crate::trace::cpu_span(self.label, s);
        if self.totals {
            let ms = s.elapsed().as_secs_f64() * 1e3;
            TOTALS.with(|t| {
                let mut t = t.borrow_mut();
                let e = t.entry(self.label).or_insert((0.0, 0));
                e.0 += ms;
                e.1 += 1;
            });
        }
    }
}

/// Totals of this thread's scopes (label, total ms, count), then cleared; empty when off.
pub fn take() -> Vec<(&'static str, f64, u64)> {
    TOTALS.with(|t| {
        std::mem::take(&mut *t.borrow_mut())
            .into_iter()
            .map(|(k, (ms, n))| (k, ms, n))
            .collect()
    })
}

/// [`take`] as text lines: `label: total ms / count = mean ms`.
pub fn report() -> String {
    take()
        .into_iter()
        .map(|(k, ms, n)| format!("  {k}: {ms:.2} ms / {n} = {:.4} ms\n", ms / n.max(1) as f64))
        .collect()
}
