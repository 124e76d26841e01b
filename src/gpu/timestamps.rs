//! GPU pass timing from timestamp queries. A [`GpuTimer`] holds a query pool with two queries per
//! pass; a timed pass writes one timestamp before and one after its dispatch (both at
//! ALL_COMMANDS, after its barriers), and [`GpuTimer::results`] turns tick differences into
//! nanoseconds with the device's timestamp period. While a trace records, `results` also puts
//! each pass on the trace's GPU track ([`start_trace`] measures the GPU clock's offset).

use super::context::Gpu;
use super::error::{GpuError, Result};
use super::retire::Garbage;
use ash::vk;
use std::cell::RefCell;
use std::sync::Arc;

/// GPU time of one pass.
#[derive(Clone, Debug, PartialEq)]
pub struct PassTime {
    pub label: String,
    pub gpu_ns: f64,
}

/// Query pool for up to `capacity` timed passes per submission.
pub struct GpuTimer {
    gpu: Arc<Gpu>,
    pool: vk::QueryPool,
    capacity: u32,
    labels: RefCell<Vec<String>>,
    /// Per pass: arguments shown with it in traces (a JSON object's text).
    args: RefCell<Vec<Option<String>>>,
}

impl GpuTimer {
    /// `None` when the device's queue has no timestamps.
    pub fn new(gpu: &Arc<Gpu>, capacity: u32) -> Result<Option<Self>> {
        if gpu.info().timestamp_valid_bits == 0 {
            return Ok(None);
        }
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(capacity * 2);
        // SAFETY: valid device and create info.
        let pool = unsafe { gpu.device().create_query_pool(&info, None)? };
        Ok(Some(Self {
            gpu: gpu.clone(),
            pool,
            capacity,
            labels: RefCell::new(Vec::new()),
            args: RefCell::new(Vec::new()),
        }))
    }

    /// Records the reset of every query; call once at the start of a submission.
    pub(crate) fn reset(&self, cmd: vk::CommandBuffer) {
        self.labels.borrow_mut().clear();
        self.args.borrow_mut().clear();
        // SAFETY: `cmd` is recording on this device; the range is within the pool.
        unsafe {
            self.gpu
                .device()
                .cmd_reset_query_pool(cmd, self.pool, 0, self.capacity * 2)
        };
    }

    /// Starts pass `label`, returning its query index for [`Self::end`].
    pub(crate) fn begin(&self, cmd: vk::CommandBuffer, label: &str) -> Result<u32> {
        let mut labels = self.labels.borrow_mut();
        let index = labels.len() as u32;
        if index >= self.capacity {
            return Err(GpuError::usage(format!(
                "timer full: more than {} passes in one submission",
                self.capacity
            )));
        }
        labels.push(label.to_owned());
        self.args.borrow_mut().push(None);
        self.gpu.cmd_write_timestamp2(
            cmd,
            vk::PipelineStageFlags2::ALL_COMMANDS,
            self.pool,
            index * 2,
        );
        Ok(index)
    }

    pub(crate) fn end(&self, cmd: vk::CommandBuffer, index: u32) {
        self.gpu.cmd_write_timestamp2(
            cmd,
            vk::PipelineStageFlags2::ALL_COMMANDS,
            self.pool,
            index * 2 + 1,
        );
    }

    /// Attaches `args` (a JSON object's text, e.g. `{"batch":16}`) to pass `index`: traces show
    /// them with the pass.
    pub fn note(&self, index: u32, args: String) {
        if let Some(a) = self.args.borrow_mut().get_mut(index as usize) {
            *a = Some(args);
        }
    }

    /// The timestamps' valid bits.
    fn mask(&self) -> u64 {
        match self.gpu.info().timestamp_valid_bits {
            bits if bits >= 64 => u64::MAX,
            bits => (1u64 << bits) - 1,
        }
    }

    /// Raw (begin, end) ticks of the passes of the last completed submission, masked to the
    /// valid bits.
    fn ticks(&self, passes: usize) -> Result<Vec<(u64, u64)>> {
        let mut ticks = vec![0u64; passes * 2];
        // SAFETY: these queries were written by a submission that has completed.
        unsafe {
            self.gpu.device().get_query_pool_results(
                self.pool,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )?
        };
        let mask = self.mask();
        Ok(ticks
            .chunks(2)
            .map(|t| (t[0] & mask, t[1] & mask))
            .collect())
    }

    /// Times of the passes of the last completed submission, in recording order (and, while a
    /// trace records, the passes on its GPU track).
    pub fn results(&self) -> Result<Vec<PassTime>> {
        let labels = self.labels.borrow();
        if labels.is_empty() {
            return Ok(Vec::new());
        }
        let ticks = self.ticks(labels.len())?;
        let period = self.gpu.info().timestamp_period_ns;
        let mask = self.mask();
        if crate::trace::recording() {
            let args = self.args.borrow();
            for (i, label) in labels.iter().enumerate() {
                let (b, e) = ticks[i];
                crate::trace::gpu_span(label, b, e, args.get(i).cloned().flatten());
            }
        }
        Ok(labels
            .iter()
            .zip(ticks)
            .map(|(label, (b, e))| PassTime {
                label: label.clone(),
                gpu_ns: (e.wrapping_sub(b) & mask) as f64 * period,
            })
            .collect())
    }
}

/// Starts recording a trace ([`crate::trace::start`]) and places GPU timestamps on its clock.
/// With VK_EXT_calibrated_timestamps (device clock and CLOCK_MONOTONIC sampled together, the
/// clock of Rust's `Instant` on Linux), the uncertainty is the driver's reported deviation.
/// Elsewhere a timestamp written by a submission waited for lies between the host times just
/// before the submission and just after the wait: the midpoint of the shortest of five such round
/// trips gives the offset, half of it the uncertainty.
pub fn start_trace(gpu: &Arc<Gpu>) -> Result<()> {
    start_trace_by(gpu, true)
}

/// [`start_trace`] with the round-trip measurement even where calibrated timestamps exist (to
/// compare the two).
pub fn start_trace_measured(gpu: &Arc<Gpu>) -> Result<()> {
    start_trace_by(gpu, false)
}

fn start_trace_by(gpu: &Arc<Gpu>, calibrated: bool) -> Result<()> {
    let epoch = crate::trace::start();
    let period = gpu.info().timestamp_period_ns;
    if gpu.info().timestamp_valid_bits == 0 {
        return Ok(());
    }
    let sample = calibrated.then(|| gpu.calibrated_timestamps()).flatten();
    if let (Some(epoch_mono), Some((tick, mono, deviation))) = (monotonic_ns_of(epoch), sample) {
        crate::trace::set_gpu_clock(crate::trace::GpuClock {
            method: "VK_EXT_calibrated_timestamps",
            offset_us: (mono as f64 - epoch_mono) * 1e-3 - tick as f64 * period * 1e-3,
            period_ns: period,
            uncertainty_us: deviation as f64 * 1e-3 + 1.0,
        });
        return Ok(());
    }
    let Some(timer) = GpuTimer::new(gpu, 1)? else {
        return Ok(());
    };
    let mut best: Option<crate::trace::GpuClock> = None;
    for _ in 0..5 {
        let mut rec = super::Recorder::new(gpu)?;
        rec.reset_timer(&timer);
        let q = rec.timer_begin(&timer, "calibration")?;
        rec.timer_end(&timer, q);
        let t0 = epoch.elapsed().as_secs_f64() * 1e6;
        rec.submit_and_wait()?;
        let t1 = epoch.elapsed().as_secs_f64() * 1e6;
        let (tick, _) = timer.ticks(1)?[0];
        let clock = crate::trace::GpuClock {
            method: "offset measured at start",
            offset_us: 0.5 * (t0 + t1) - tick as f64 * period * 1e-3,
            period_ns: period,
            uncertainty_us: 0.5 * (t1 - t0),
        };
        if best.map_or(true, |b| clock.uncertainty_us < b.uncertainty_us) {
            best = Some(clock);
        }
    }
    if let Some(c) = best {
        crate::trace::set_gpu_clock(c);
    }
    Ok(())
}

/// CLOCK_MONOTONIC at `instant`, ns (unix; ~1 µs: the clock is read right after `instant`).
fn monotonic_ns_of(instant: std::time::Instant) -> Option<f64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid timespec to write into.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
            return None;
        }
        let now = ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64;
        Some(now - instant.elapsed().as_secs_f64() * 1e9)
    }
    #[cfg(not(unix))]
    {
        let _ = instant;
        None
    }
}

impl Drop for GpuTimer {
    fn drop(&mut self) {
        // Destroyed once no detached submission that may write it is pending.
        self.gpu.release(Garbage::QueryPool(self.pool));
    }
}
