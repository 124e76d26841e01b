//! Paging bandwidth: page versions brought onto the GPU from host memory (page-in) and moved off
//! it (page-out) by the page store's residency, wall clock, against a host→device copy ceiling
//! measured in the same run (a GPU-timed copy from pinned host memory into device memory: the
//! link's rate). Page-in and page-out are timed in the steady state of a budget (the residency's
//! own clocks while halves swap, image pairs reused), and cold (pairs allocated, then freed).

use super::ceilings::{Heater, HEAT_LONG_MS};
use super::{median, BenchOptions};
use crate::gpu::{vk, Access, Buffer, BufferDesc, Gpu, Recorder};
use crate::pages::residency::Residency;
use crate::pages::{Budgets, DocumentDesc, HeightFormat, PageId, Version};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

/// Page-in and page-out rates and the copy ceiling they are compared with.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PagingResult {
    /// Bytes of one page's texels (r32f).
    pub page_bytes: u64,
    /// Pages moved each way per measurement.
    pub pages: usize,
    /// Host (pinned) → device buffer copy, GPU-timed.
    pub host_to_device_gb_s: f64,
    /// Pages from host memory onto the GPU under a full budget (image pairs reused), wall
    /// clock of the page-ins (copies and waits).
    pub page_in_gb_s: f64,
    /// Pages from the GPU to host memory under a full budget, wall clock of the page-outs.
    pub page_out_gb_s: f64,
    /// Pages from host memory onto the GPU with no pair to reuse (allocated), wall clock.
    #[serde(default)]
    pub cold_page_in_gb_s: f64,
    /// Every page off the GPU at once (pairs freed), wall clock.
    #[serde(default)]
    pub cold_page_out_gb_s: f64,
    /// Steady state under a budget: half the pages move out while the other half come in
    /// (their image pairs reused), bytes in + out per second, wall clock.
    #[serde(default)]
    pub swap_gb_s: f64,
    pub page_in_fraction_of_ceiling: f64,
}

pub(super) fn names() -> Vec<String> {
    vec!["paging/in-out".to_string()]
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    heater: &Heater,
) -> Result<Option<PagingResult>> {
    if !o.wants("paging/") {
        return Ok(None);
    }
    heater.heat(HEAT_LONG_MS)?;
    let page_size = 512u32;
    let pages: usize = if o.quick { 32 } else { 512 };
    let page_bytes = u64::from(page_size * page_size) * 4;
    let ceiling = host_to_device_gb_s(gpu, page_bytes * pages as u64, o)?;
    let mut rig = PagingRig::new(gpu, page_size, pages);
    let (ins, outs) = rig.move_all(o, heater)?;
    let swaps = rig.swap_halves(o, heater)?;
    let half = pages / 2;
    let skip = o.warmup.max(1);
    let moved = (page_bytes * half as u64) as f64;
    let swap = 2.0 * moved / median(&swaps.wall[skip..]) * 1e-9;
    let page_in = moved / median(&swaps.ins[skip..]) * 1e-9;
    let page_out = moved / median(&swaps.outs[skip..]) * 1e-9;
    let total = (page_bytes * pages as u64) as f64;
    let cold_in = total / median(&ins[skip..]) * 1e-9;
    let cold_out = total / median(&outs[skip..]) * 1e-9;
    eprintln!(
        "paging: {pages} pages of {} KiB: in {page_in:.1} GB/s, out {page_out:.1} GB/s \
         (cold: {cold_in:.1} and {cold_out:.1}), swapping {swap:.1} GB/s in + out; \
         host→device copy {ceiling:.1} GB/s",
        page_bytes >> 10
    );
    Ok(Some(PagingResult {
        page_bytes,
        pages,
        host_to_device_gb_s: ceiling,
        page_in_gb_s: page_in,
        page_out_gb_s: page_out,
        cold_page_in_gb_s: cold_in,
        cold_page_out_gb_s: cold_out,
        swap_gb_s: swap,
        page_in_fraction_of_ceiling: super::ratio(page_in, ceiling),
    }))
}

/// A field's worth of r32f page versions in host memory, the residency that moves them, and a
/// lone version of another page. (Fields drop in this order: versions before the residency.)
struct PagingRig {
    /// Under a budget of one page, asking for it moves every other page out.
    lone: Rc<Version>,
    versions: Vec<Rc<Version>>,
    places: Residency,
    /// Bytes of one page's image pair.
    pair: u64,
}

/// Wall-clock seconds of each swap, and the residency's own seconds of its page-ins and
/// page-outs.
struct Swaps {
    wall: Vec<f64>,
    ins: Vec<f64>,
    outs: Vec<f64>,
}

impl PagingRig {
    /// `pages` versions of `page_size`² pages (and the lone one) in host memory.
    fn new(gpu: &Arc<Gpu>, page_size: u32, pages: usize) -> Self {
        let page_bytes = u64::from(page_size * page_size) * 4;
        // A field's worth of pages in host memory, brought in and sent back out, `repeats` times.
        let side = page_size * (pages as f64).sqrt().ceil() as u32;
        let desc = DocumentDesc {
            width: side,
            height: side,
            format: HeightFormat::R32f,
            page_size,
            height_min: 0.0,
            height_max: 1.0,
            units: Default::default(),
        };
        let mut places = Residency::new(gpu, desc, vk::Format::R32_SFLOAT, 0.0, vec![0; 4]);
        let bytes: Vec<u8> = (0..page_bytes).map(|i| (i % 251) as u8).collect();
        let versions: Vec<Rc<Version>> = (0..pages as u32)
            .map(|i| {
                let id = PageId {
                    x: i % desc.pages_x(),
                    y: i / desc.pages_x(),
                };
                places.from_bytes(id, bytes.clone())
            })
            .collect();
        let pair = 2 * page_bytes;
        // A budget of one page: asking for a lone other version moves every page out.
        let (spare, spare_bytes) = (PageId { x: 0, y: 0 }, bytes.clone());
        let lone = places.from_bytes(spare, spare_bytes);
        Self {
            lone,
            versions,
            places,
            pair,
        }
    }

    /// Brings every page onto the GPU with no budget (pairs allocated), then sends them all
    /// out for the lone page under a budget of one (pairs freed), warm-up and repeats times:
    /// the wall-clock seconds of each bringing in and each sending out.
    fn move_all(&mut self, o: &BenchOptions, heater: &Heater) -> Result<(Vec<f64>, Vec<f64>)> {
        let places = &mut self.places;
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        for _ in 0..o.warmup.max(1) + o.repeats {
            places.set_budgets(Budgets::default());
            let all: Vec<&Version> = self.versions.iter().map(|v| &**v).collect();
            heater.heat(super::ceilings::HEAT_SHORT_MS)?;
            let t = Instant::now();
            places.ensure(&all, None)?;
            ins.push(t.elapsed().as_secs_f64());
            places.set_budgets(Budgets {
                gpu: Some(self.pair),
                ..Budgets::default()
            });
            heater.heat(super::ceilings::HEAT_SHORT_MS)?;
            let t = Instant::now();
            places.ensure(&[&*self.lone], None)?;
            outs.push(t.elapsed().as_secs_f64());
        }
        let r = places.report();
        let pages = self.versions.len();
        if r.traffic.page_ins < (pages * (o.warmup.max(1) + o.repeats)) as u64 {
            anyhow::bail!("paging bench: pages did not move as planned ({})", r.line());
        }
        Ok((ins, outs))
    }

    /// Swaps under a budget of half the pages: each half in turn pushes the other out,
    /// warm-up and repeats times.
    fn swap_halves(&mut self, o: &BenchOptions, heater: &Heater) -> Result<Swaps> {
        let places = &mut self.places;
        let versions = &self.versions;
        let half = versions.len() / 2;
        places.set_budgets(Budgets {
            gpu: Some(self.pair * half as u64),
            ..Budgets::default()
        });
        let (a, b): (Vec<&Version>, Vec<&Version>) = (
            versions[..half].iter().map(|v| &**v).collect(),
            versions[half..2 * half].iter().map(|v| &**v).collect(),
        );
        places.ensure(&a, None)?;
        // SCARP_PROFILE=1: the residency's phases while swapping.
        let _ = crate::profile::report();
        let (mut swaps, mut swap_ins, mut swap_outs) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..o.warmup.max(1) + o.repeats {
            heater.heat(super::ceilings::HEAT_SHORT_MS)?;
            let before = places.report().traffic;
            let t = Instant::now();
            places.ensure(if k % 2 == 0 { &b } else { &a }, None)?;
            swaps.push(t.elapsed().as_secs_f64());
            let after = places.report().traffic;
            swap_ins.push(after.in_seconds - before.in_seconds);
            swap_outs.push(after.out_seconds - before.out_seconds);
        }
        let profile = crate::profile::report();
        if !profile.is_empty() {
            eprintln!("CPU profile (swaps):\n{profile}");
        }
        Ok(Swaps {
            wall: swaps,
            ins: swap_ins,
            outs: swap_outs,
        })
    }
}

/// GPU-timed copies of `bytes` from pinned host memory (the memory type host pages live in,
/// never device-local) into a device buffer: median GB/s.
fn host_to_device_gb_s(gpu: &Arc<Gpu>, bytes: u64, o: &BenchOptions) -> Result<f64> {
    let source = BufferDesc::readback(bytes)
        .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST);
    let mut src = Buffer::new(gpu, "h2d ceiling source", source)?;
    src.write(&vec![1u8; bytes as usize])?;
    let dst = Buffer::new(
        gpu,
        "h2d ceiling destination",
        BufferDesc::new(bytes).usage(vk::BufferUsageFlags::TRANSFER_DST),
    )?;
    let passes = o.warmup.max(1) + o.repeats;
    let timer = super::ceilings::timer(gpu, passes)?;
    let mut rec = Recorder::new(gpu)?;
    rec.reset_timer(&timer);
    rec.buffer(&src, Access::HostWrite);
    for _ in 0..passes {
        let q = rec.timer_begin(&timer, "h2d")?;
        rec.copy_buffer(&src, 0, &dst, 0, bytes);
        rec.timer_end(&timer, q);
    }
    rec.submit_and_wait()?;
    let ms = super::ceilings::timed_median(&timer, o.warmup.max(1))?;
    Ok(bytes as f64 / (ms * 1e-3) * 1e-9)
}
