//! How work recorded between frames is submitted (the brush engine's waves, the lighting's
//! pages): waited for at once (the default: strokes applied whole, journals, tests,
//! benchmarks), or, with frames in flight ([`Submitter::detached`]: the editor and the frame
//! loops), left running behind the frame the GPU is drawing, so the host never waits for that
//! frame. A detached submission's pass times are taken once it has finished, at a later call;
//! they pace the work after it (GPU time per unit of work).

use super::command::Recorder;
use super::context::Gpu;
use super::error::Result;
use super::retire::Ticket;
use super::timestamps::{GpuTimer, PassTime};
use std::collections::VecDeque;
use std::sync::Arc;

/// Timed passes per submission (one per brush wave, say).
const TIMER_CAPACITY: u32 = 1024;

/// One detached submission: its timer and the units of work it ran (0: uploads and copies).
struct Flight {
    ticket: Ticket,
    timer: Option<GpuTimer>,
    units: usize,
}

/// What the detached submissions that finished since the last call measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Finished {
    /// GPU time of their units of work (brush waves, lit texels), and of their uploads and
    /// copies (submissions of no units).
    pub work_ns: f64,
    pub copy_ns: f64,
}

/// Submits recordings and keeps the timers of those not waited for; see the module docs.
pub struct Submitter {
    gpu: Arc<Gpu>,
    /// Leave submissions running instead of waiting for them.
    pub detached: bool,
    spare: Vec<GpuTimer>,
    flights: VecDeque<Flight>,
    /// GPU time per unit of work, as the last finished detached submissions measured it.
    pub unit_ns: Option<f64>,
}

impl Submitter {
    pub fn new(gpu: &Arc<Gpu>) -> Self {
        Self {
            gpu: gpu.clone(),
            detached: false,
            spare: Vec::new(),
            flights: VecDeque::new(),
            unit_ns: None,
        }
    }

    /// A timer for one submission (None without timestamps).
    pub fn timer(&mut self) -> Result<Option<GpuTimer>> {
        match self.spare.pop() {
            Some(t) => Ok(Some(t)),
            None => Ok(GpuTimer::new(&self.gpu, TIMER_CAPACITY)?),
        }
    }

    /// Submits `rec`: waits for it, or (detached) leaves it running and returns its ticket.
    pub fn send(&self, rec: Recorder<'_>) -> Result<Option<Ticket>> {
        if !self.detached {
            rec.submit_and_wait()?;
            return Ok(None);
        }
        // SAFETY: the submitters' users (the brush engine, the lighting) never map a buffer a
        // recording uses after recording it (instance buffers are device-local, uploads are made
        // per stroke and dropped), never rewrite a set a recording binds (sets are made per
        // recording or once per page version), and the recording's timer is read only after its
        // ticket has finished ([`Self::collect`]); what is dropped meanwhile is released after
        // it (gpu::retire).
        Ok(Some(unsafe { rec.submit_detached(None, None)? }))
    }

    /// After [`Self::send`] of a recording timed by `timer` that ran `units` units of work (0:
    /// uploads and copies): its pass times when it was waited for, else None (kept for later).
    pub fn finish(
        &mut self,
        ticket: Option<Ticket>,
        timer: Option<GpuTimer>,
        units: usize,
    ) -> Result<Option<Vec<PassTime>>> {
        match ticket {
            Some(ticket) => {
                self.flights.push_back(Flight {
                    ticket,
                    timer,
                    units,
                });
                Ok(None)
            }
            None => {
                let times = match &timer {
                    Some(t) => t.results()?,
                    None => Vec::new(),
                };
                self.spare.extend(timer);
                Ok(Some(times))
            }
        }
    }

    /// Takes the pass times of the detached submissions that have finished (in order), and
    /// updates the GPU time per unit of work from them.
    pub fn collect(&mut self) -> Result<Finished> {
        let mut out = Finished::default();
        let (mut ns, mut units) = (0.0, 0);
        while let Some(f) = self.flights.front() {
            if !self.gpu.finished(f.ticket)? {
                break;
            }
            let f = self.flights.pop_front().expect("looked at");
            let t: f64 = match &f.timer {
                Some(timer) => timer.results()?.iter().map(|p| p.gpu_ns).sum(),
                None => 0.0,
            };
            if f.units == 0 {
                out.copy_ns += t;
            } else {
                out.work_ns += t;
                ns += t;
                units += f.units;
            }
            self.spare.extend(f.timer);
        }
        if units > 0 && ns > 0.0 {
            self.unit_ns = Some(ns / units as f64);
        }
        Ok(out)
    }
}
