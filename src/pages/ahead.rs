//! Image pairs made ahead of need, on a thread of their own. With frames in flight a page-in
//! that needs a new pair takes one made earlier ([`super::residency`] keeps them with its spare
//! pairs) instead of creating two images on the frame's thread: on the NVIDIA driver that cost
//! 0.1–0.2 ms a pair, 5–6 ms in a frame where a stroke reached a row of pages not yet on the GPU.

use crate::gpu::{Gpu, Image, ImageDesc, Result};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Pairs of `desc` to make, named `name`.
struct Ask {
    pairs: usize,
    desc: ImageDesc,
    name: String,
}

/// The maker thread and what it has made; dropping it waits for the thread to end, after every
/// pair asked for (at most a few dozen), so no image outlives the field that asked for it.
pub struct PairsAhead {
    ask: Option<Sender<Ask>>,
    made: Receiver<Result<[Image; 2]>>,
    thread: Option<JoinHandle<()>>,
    /// Pairs asked for and not taken yet.
    pending: usize,
}

impl PairsAhead {
    /// Starts the maker thread.
    pub fn new(gpu: &Arc<Gpu>) -> std::io::Result<Self> {
        let (ask, asks) = channel::<Ask>();
        let (send, made) = channel();
        let gpu = gpu.clone();
        let thread = std::thread::Builder::new()
            .name("scarp page pairs".into())
            .spawn(move || {
                for a in asks {
                    for _ in 0..a.pairs {
                        let pair = Image::new(&gpu, &a.name, a.desc)
                            .and_then(|i| Ok([i, Image::new(&gpu, &a.name, a.desc)?]));
                        if send.send(pair).is_err() {
                            return;
                        }
                    }
                }
            })?;
        Ok(Self {
            ask: Some(ask),
            made,
            thread: Some(thread),
            pending: 0,
        })
    }

    /// Pairs asked for that have not been taken yet (made or still being made).
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Asks for `pairs` more pairs of `desc`; false if the thread is gone.
    pub fn ask(&mut self, pairs: usize, desc: ImageDesc, name: &str) -> bool {
        let sent = self.ask.as_ref().is_some_and(|a| {
            a.send(Ask {
                pairs,
                desc,
                name: name.to_string(),
            })
            .is_ok()
        });
        if sent {
            self.pending += pairs;
        }
        sent
    }

    /// The pairs made since the last call, without waiting, and how many failed (out of device
    /// memory: whoever needs a pair then makes it and meets the error itself).
    pub fn take(&mut self) -> (Vec<[Image; 2]>, usize) {
        let mut out = Vec::new();
        let mut failed = 0;
        for r in self.made.try_iter() {
            self.pending -= 1;
            match r {
                Ok(pair) => out.push(pair),
                Err(_) => failed += 1,
            }
        }
        (out, failed)
    }
}

impl Drop for PairsAhead {
    fn drop(&mut self) {
        // Ends the thread's loop once it has made what it was asked for.
        drop(self.ask.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
