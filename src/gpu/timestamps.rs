//! GPU pass timing from timestamp queries. A [`GpuTimer`] holds a query pool with two queries per
//! pass; a timed pass writes one timestamp before and one after its dispatch (both at
//! ALL_COMMANDS, after its barriers), and [`GpuTimer::results`] turns tick differences into
//! nanoseconds with the device's timestamp period.

use super::context::Gpu;
use super::error::{GpuError, Result};
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
        }))
    }

    /// Records the reset of every query; call once at the start of a submission.
    pub(crate) fn reset(&self, cmd: vk::CommandBuffer) {
        self.labels.borrow_mut().clear();
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

    /// Times of the passes of the last completed submission, in recording order.
    pub fn results(&self) -> Result<Vec<PassTime>> {
        let labels = self.labels.borrow();
        if labels.is_empty() {
            return Ok(Vec::new());
        }
        let mut ticks = vec![0u64; labels.len() * 2];
        // SAFETY: these queries were written by a submission that has completed.
        unsafe {
            self.gpu.device().get_query_pool_results(
                self.pool,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )?
        };
        let bits = self.gpu.info().timestamp_valid_bits;
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let period = self.gpu.info().timestamp_period_ns;
        Ok(labels
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let delta = ticks[2 * i + 1].wrapping_sub(ticks[2 * i]) & mask;
                PassTime {
                    label: label.clone(),
                    gpu_ns: delta as f64 * period,
                }
            })
            .collect())
    }
}

impl Drop for GpuTimer {
    fn drop(&mut self) {
        // SAFETY: submissions complete before recording APIs return.
        unsafe { self.gpu.device().destroy_query_pool(self.pool, None) };
    }
}
