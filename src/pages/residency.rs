//! Where each page version of a field lives (on the GPU, in host memory or on disk) under a
//! GPU and a host memory budget.
//!
//! A [`Version`] is a key shared (`Rc`) by whatever holds the version: the field's current pages,
//! its undo steps, the working set of the edit under way. The [`Residency`] maps keys to places:
//!
//! * **GPU**: a [`GpuPage`] (image pair), the only place kernels and the renderer read.
//! * **Host**: the page's texels as the images store them.
//! * **Disk**: a range of a saved project (a page loaded lazily, or a clean page that was saved
//!   and then evicted: nothing is written) or of the spill file.
//! * **Pending**: a working version not made yet, a copy of another version or of the flat value;
//!   it is made when first asked for on the GPU, straight from wherever its source lies.
//!
//! [`Residency::ensure`] brings the versions one wave or frame needs onto the GPU. Past the GPU
//! budget the least recently used other versions move to host memory (one readback per batch),
//! and past the host budget to disk. Moving a page copies its texels exactly, so budgets never
//! change a height; a wave that alone needs more than the budget is refused
//! ([`PageError::BudgetTooSmall`]). Dropping the last holder of a version frees its place at the
//! next call that changes residency.

use super::ahead::PairsAhead;
use super::disk::{DiskLoc, SpillFile};
use super::error::{PageError, Result};
use super::geometry::{DocumentDesc, PageId, Rect};
use super::page::GpuPage;
use crate::gpu::{
    vk, Access, Buffer, BufferDesc, Gpu, GpuTimer, Image, ImageDesc, InFlight, Recorder, Ticket,
};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

/// Pages moved through host memory per submission.
const PAGES_PER_TRANSFER: usize = 64;
/// Versions made by GPU copies or clears per submission.
const COPIES_PER_SUBMIT: usize = 4096;
/// Image pairs kept for reuse when versions move or die (allocating device memory is far slower
/// than a page's copy), at most.
const RECYCLED: usize = 64;
/// Host memory kept for reuse by the next page-outs (allocating and freeing it costs as much as
/// copying it; within the host budget, which drops it first), at most.
const RECYCLED_HOST_BYTES: u64 = 512 << 20;
/// Pinned memory pages move through, in [`STAGING_PARTS`] buffers: the host copies into (or out
/// of) one while the GPU copies another. Each part holds at least one page, so documents of
/// 2048² r32f pages (16 MiB) use 128 MiB a set ([`STAGING_SETS`] sets while frames are in
/// flight).
const STAGING_BYTES: u64 = 64 << 20;
const STAGING_PARTS: usize = 8;
/// Sets of [`STAGING_PARTS`] made at most: with frames in flight, page-ins are not waited for
/// and their parts stay busy until their submissions finish (about one set a frame in flight).
const STAGING_SETS: usize = 3;
/// Image pairs made ahead of need with frames in flight ([`PairsAhead`]): as many as fit in
/// this many bytes, between 1 and [`AHEAD_PAIRS`].
const AHEAD_BYTES: u64 = 32 << 20;
const AHEAD_PAIRS: u64 = 16;
/// Bytes each thread copies at a time between host pages and staging memory: a page of 512² r32f
/// in 16 slices. One thread copies about 2 GB/s into staging on an H200's host; 16 slices took a
/// page-in's copy from 0.24-0.26 ms (4 slices) to 0.19-0.21 (docs/PERF.md, "Page-ins' host
/// copies").
const COPY_SLICE: usize = 64 << 10;

/// A saved page read ahead of need: its version's key, where it was read from, its bytes.
type ReadAhead = (u64, DiskLoc, Result<Vec<u8>>);

/// Threads reading saved pages ahead of need: a pool of their own, so a read (a page from the
/// file and its checksum) never holds a thread of rayon's global pool that a page-in's parallel
/// copy into staging, on the frame's thread, is waiting for.
const READ_THREADS: usize = 4;

fn read_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(READ_THREADS)
            .thread_name(|i| format!("scarp page reads {i}"))
            .build()
            .expect("the page-reading threads start")
    })
}

/// Memory the pages of a document may use; `None`: no limit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budgets {
    /// Device memory of page images (both images of a pair count).
    pub gpu: Option<u64>,
    /// Host memory of evicted pages' texels.
    pub host: Option<u64>,
    /// Folder of the spill file (next to the project; default: the system's temporary folder).
    pub spill_dir: Option<PathBuf>,
}

impl Budgets {
    /// The default GPU budget: half of the device's largest device-local heap.
    pub fn default_gpu(gpu: &Gpu) -> Option<u64> {
        let heap = gpu.info().device_local_bytes;
        (heap > 0).then_some(heap / 2)
    }

    /// The default host budget: a quarter of the machine's memory (`MemTotal`), if known.
    pub fn default_host() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024 / 4)
    }
}

/// Budgets as asked for (command-line flags): `None` takes the default, `Some(None)` is no
/// limit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BudgetRequest {
    pub gpu: Option<Option<u64>>,
    pub host: Option<Option<u64>>,
}

impl BudgetRequest {
    /// The budgets on `gpu` for the document of `project` (its page file goes next to it; without
    /// one, into the temporary folder).
    pub fn budgets(&self, gpu: &Gpu, project: Option<&Path>) -> Budgets {
        let spill_dir = project
            .and_then(Path::parent)
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf);
        Budgets {
            gpu: self.gpu.unwrap_or_else(|| Budgets::default_gpu(gpu)),
            host: self.host.unwrap_or_else(Budgets::default_host),
            spill_dir,
        }
    }
}

/// One version of one page: a key into its field's [`Residency`]. Cloning the `Rc` shares the
/// version; dropping the last one frees it.
pub struct Version {
    key: u64,
    /// GPU memory of the version's image pair.
    bytes: u64,
    dropped: Rc<RefCell<Vec<u64>>>,
}

impl Version {
    /// GPU memory of the version's image pair (what budgets and undo count).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub(super) fn key(&self) -> u64 {
        self.key
    }
}

impl Drop for Version {
    fn drop(&mut self) {
        self.dropped.borrow_mut().push(self.key);
    }
}

enum Place {
    Gpu(Box<GpuPage>),
    /// The texels as stored, in ordinary (pageable) host memory.
    Host(Vec<u8>),
    Disk(DiskLoc),
    /// Not made yet: a copy of this version, or (None) of the flat value.
    Pending(Option<Rc<Version>>),
}

struct Slot {
    id: PageId,
    place: Place,
    last_use: u64,
    /// Where the version's bytes lie in the project it was last saved to or loaded from.
    saved: Option<DiskLoc>,
}

/// Pages and bytes moved between the GPU and host memory or disk, since the field was made.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    /// Versions brought onto the GPU from host memory or disk.
    pub page_ins: u64,
    pub bytes_in: u64,
    /// Versions moved off the GPU.
    pub page_outs: u64,
    pub bytes_out: u64,
    /// Versions written to the spill file.
    pub spills: u64,
    /// Wall-clock seconds spent bringing versions in from host memory or disk, and moving
    /// them off (host copies and GPU transfers).
    pub in_seconds: f64,
    pub out_seconds: f64,
    /// Image pairs created for versions made on the GPU: by the caller (on the frame's thread
    /// when frames are in flight), and made ahead on the maker thread and taken.
    pub pairs_made: u64,
    pub pairs_made_ahead: u64,
    /// Saved pages read from the project file by a page-in, and read ahead of need (off the
    /// frame's thread) and taken into host memory.
    pub pages_read: u64,
    pub pages_read_ahead: u64,
}

/// Where a field's page versions are now.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryReport {
    pub gpu_pages: usize,
    /// GPU memory of page images, recycled image pairs included.
    pub gpu_bytes: u64,
    /// Most GPU page memory held at once since the budgets were set.
    pub peak_gpu_bytes: u64,
    pub host_pages: usize,
    /// Host memory of evicted pages, recycled buffers included.
    pub host_bytes: u64,
    /// Versions on disk: in the spill file, or only in the saved project.
    pub disk_pages: usize,
    pub spill_bytes: u64,
    pub budgets: Budgets,
    pub traffic: Traffic,
}

impl MemoryReport {
    /// One line for reports: places, budgets and traffic.
    pub fn line(&self) -> String {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        let budget = |b: Option<u64>| match b {
            Some(b) => format!("{:.1} MiB", mib(b)),
            None => "unlimited".into(),
        };
        format!(
            "pages: {} on GPU ({:.1} MiB, peak {:.1} MiB, budget {}), {} in host memory \
             ({:.1} MiB, budget {}), {} on disk ({:.1} MiB spilled); {} page-ins ({:.1} MiB), \
             {} page-outs ({:.1} MiB)",
            self.gpu_pages,
            mib(self.gpu_bytes),
            mib(self.peak_gpu_bytes),
            budget(self.budgets.gpu),
            self.host_pages,
            mib(self.host_bytes),
            budget(self.budgets.host),
            self.disk_pages,
            mib(self.spill_bytes),
            self.traffic.page_ins,
            mib(self.traffic.bytes_in),
            self.traffic.page_outs,
            mib(self.traffic.bytes_out),
        )
    }
}

/// How a version is made on the GPU.
enum Source {
    /// From bytes read from disk, through a staging buffer.
    Upload(Vec<u8>),
    /// From the host buffer of version `key`.
    Host(u64),
    /// From the GPU page of version `key`.
    Copy(u64),
    Clear,
}

/// Next-fit packing of transfers into staging parts of `cap` bytes.
struct Packer {
    cap: u64,
    /// Parts opened so far, and the bytes of the last one.
    parts: usize,
    fill: u64,
}

impl Packer {
    fn new(cap: u64) -> Self {
        Self {
            cap,
            parts: 0,
            fill: cap,
        }
    }

    /// Whether placing `size` bytes opens a new part (the first placement always does).
    fn opens_part(&self, size: u64) -> bool {
        self.parts == 0 || (size > 0 && self.fill + size > self.cap)
    }

    /// Places `size` bytes: the part (from 0) and the offset in it.
    fn place(&mut self, size: u64) -> (usize, u64) {
        if self.opens_part(size) {
            (self.parts, self.fill) = (self.parts + 1, 0);
        }
        let offset = self.fill;
        self.fill += size;
        (self.parts - 1, offset)
    }
}

/// One GPU timing across the submissions of a batch: from the first one's start to the last
/// one's end.
struct BatchTiming<'t> {
    timer: Option<&'t GpuTimer>,
    query: Option<u32>,
    last: usize,
    n: usize,
}

impl<'t> BatchTiming<'t> {
    fn start(&mut self, rec: &mut Recorder<'t>) -> Result<()> {
        if let (0, Some(t)) = (self.n, self.timer) {
            rec.reset_timer(t);
            self.query = Some(rec.timer_begin(t, "copies")?);
        }
        Ok(())
    }

    fn end(&mut self, rec: &mut Recorder<'t>) {
        if let (true, Some(t), Some(q)) = (self.n == self.last, self.timer, self.query) {
            rec.timer_end(t, q);
        }
        self.n += 1;
    }
}

/// Copies the uploads of one staging `part` ((upload, offset) pairs) into `buf`, in parallel.
fn copy_into_staging(
    buf: &mut Buffer,
    part: &[(usize, u64)],
    uploads: &[(usize, &[u8])],
) -> Result<()> {
    let _p = crate::profile::scope("page-in: host copy");
    let mapped = buf.mapped_mut()?;
    let mut jobs: Vec<(&mut [u8], &[u8])> = Vec::new();
    let mut rest: &mut [u8] = mapped;
    let mut at = 0u64;
    for &(u, offset) in part {
        let bytes = uploads[u].1;
        let (_, tail) = std::mem::take(&mut rest).split_at_mut((offset - at) as usize);
        let (head, tail) = tail.split_at_mut(bytes.len());
        jobs.extend(head.chunks_mut(COPY_SLICE).zip(bytes.chunks(COPY_SLICE)));
        rest = tail;
        at = offset + bytes.len() as u64;
    }
    jobs.into_par_iter().for_each(|(d, b)| d.copy_from_slice(b));
    Ok(())
}

/// The places of one field's page versions.
pub struct Residency {
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    format: vk::Format,
    /// What the images hold for the flat value, and its texel as stored.
    clear: f32,
    flat_texel: Vec<u8>,
    slots: HashMap<u64, Slot>,
    next_key: u64,
    dropped: Rc<RefCell<Vec<u64>>>,
    tick: u64,
    budgets: Budgets,
    gpu_bytes: u64,
    peak_gpu_bytes: u64,
    host_bytes: u64,
    spill: Option<SpillFile>,
    traffic: Traffic,
    /// Image pairs of versions moved off the GPU or dropped, reused by the versions made next
    /// (counted in `gpu_bytes`).
    spare: Vec<GpuPage>,
    /// Host memory of versions brought back or dropped, reused by the next page-outs (counted in
    /// `host_bytes`).
    host_free: Vec<Vec<u8>>,
    host_free_bytes: u64,
    /// Pinned memory every page-in and page-out goes through (made on first use): pinning is
    /// slow, so host pages live in pageable memory and are copied through these, in parallel,
    /// one part while the GPU transfers another.
    staging: Vec<Buffer>,
    /// Staging parts detached page-ins still read, with their submissions: free again once
    /// those finished.
    staging_busy: Vec<(Ticket, Buffer)>,
    /// Pairs of whole pages made on a thread ahead of need (started by the first page-in that
    /// made a pair with frames in flight); taken into `spare` as they come.
    ahead: Option<PairsAhead>,
    /// Saved pages being read ahead of need on the page-reading threads ([`Self::read_ahead`]):
    /// their keys and lengths, and where the reads arrive (taken into host memory as they come).
    reading: HashMap<u64, u64>,
    reads: (Sender<ReadAhead>, Receiver<ReadAhead>),
    /// Frames are in flight: the submissions that make versions (uploads, and copies and clears
    /// for copy-on-write) are not waited for, so a page-in does not wait for the frames the GPU
    /// draws (only, past [`STAGING_SETS`] sets of staging in use, for the oldest upload); work
    /// recorded later orders after them on the queue.
    pub detached: bool,
}

impl Residency {
    /// Places for a field of `desc` whose images are `format` and hold `clear` for the flat
    /// value, stored as `flat_texel`.
    pub fn new(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        format: vk::Format,
        clear: f32,
        flat_texel: Vec<u8>,
    ) -> Self {
        Self {
            gpu: gpu.clone(),
            desc,
            format,
            clear,
            flat_texel,
            slots: HashMap::new(),
            next_key: 0,
            dropped: Rc::new(RefCell::new(Vec::new())),
            tick: 0,
            budgets: Budgets::default(),
            gpu_bytes: 0,
            peak_gpu_bytes: 0,
            host_bytes: 0,
            spill: None,
            traffic: Traffic::default(),
            spare: Vec::new(),
            host_free: Vec::new(),
            host_free_bytes: 0,
            staging: Vec::new(),
            staging_busy: Vec::new(),
            ahead: None,
            reading: HashMap::new(),
            reads: channel(),
            detached: false,
        }
    }

    fn pair_bytes(&self, id: PageId) -> u64 {
        let r = self.desc.page_rect(id);
        r.width() as u64 * r.height() as u64 * self.desc.texel_bytes() * 2
    }

    fn insert(&mut self, id: PageId, place: Place, saved: Option<DiskLoc>) -> Rc<Version> {
        let key = self.next_key;
        self.next_key += 1;
        self.slots.insert(
            key,
            Slot {
                id,
                place,
                last_use: self.tick,
                saved,
            },
        );
        Rc::new(Version {
            key,
            bytes: self.pair_bytes(id),
            dropped: self.dropped.clone(),
        })
    }

    /// A new version of `id` that will be a copy of `source` (None: the flat value) when first
    /// needed on the GPU.
    pub fn pending(&mut self, id: PageId, source: Option<Rc<Version>>) -> Rc<Version> {
        self.insert(id, Place::Pending(source), None)
    }

    /// A version of `id` holding `bytes` (texels as stored), in host memory until needed.
    pub fn from_bytes(&mut self, id: PageId, bytes: Vec<u8>) -> Rc<Version> {
        self.host_bytes += bytes.len() as u64;
        self.insert(id, Place::Host(bytes), None)
    }

    /// Empty host memory with room for `bytes` of texels: a recycled vector, else a new one
    /// (allocated, not zeroed: the page-out writes every byte).
    fn take_host_vec(&mut self, bytes: u64) -> Vec<u8> {
        if let Some(i) = self
            .host_free
            .iter()
            .position(|v| v.capacity() as u64 == bytes)
        {
            let mut v = self.host_free.swap_remove(i);
            self.host_free_bytes -= v.capacity() as u64;
            v.clear();
            return v;
        }
        self.host_bytes += bytes;
        Vec::with_capacity(bytes as usize)
    }

    /// At least [`STAGING_PARTS`] staging buffers, taken out (give them back with
    /// `self.staging = ..`, or to `staging_busy` while a detached submission reads them): the
    /// free ones, those whose detached page-ins finished, and new ones up to [`STAGING_SETS`]
    /// sets; past that it waits for the oldest busy ones.
    fn take_staging(&mut self) -> Result<Vec<Buffer>> {
        let gpu = self.gpu.clone();
        let mut parts = std::mem::take(&mut self.staging);
        loop {
            let mut i = 0;
            while i < self.staging_busy.len() {
                if gpu.finished(self.staging_busy[i].0)? {
                    parts.push(self.staging_busy.swap_remove(i).1);
                } else {
                    i += 1;
                }
            }
            // Topped up to one set, the parts made stay within STAGING_SETS sets.
            let busy = self.staging_busy.len();
            if parts.len() >= STAGING_PARTS || busy + STAGING_PARTS <= STAGING_SETS * STAGING_PARTS
            {
                break;
            }
            let oldest = self
                .staging_busy
                .iter()
                .map(|b| b.0)
                .min()
                .expect("every set is busy");
            let _w = crate::profile::scope("page-in: staging wait");
            gpu.wait_for(oldest)?;
        }
        let desc = BufferDesc::readback(self.part_bytes())
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST);
        while parts.len() < STAGING_PARTS {
            parts.push(Buffer::new(&self.gpu, "page staging", desc)?);
        }
        Ok(parts)
    }

    /// Size of one staging buffer: an eighth of 64 MiB, or one page if larger.
    fn part_bytes(&self) -> u64 {
        let page = u64::from(self.desc.page_size).pow(2) * self.desc.texel_bytes();
        (STAGING_BYTES / STAGING_PARTS as u64).max(page)
    }

    /// Packs transfers of `sizes` bytes, in order, into staging parts: per part, the indices of
    /// its transfers and their offsets in it.
    fn pack(&self, sizes: impl IntoIterator<Item = u64>) -> Vec<Vec<(usize, u64)>> {
        let mut packer = Packer::new(self.part_bytes());
        let mut parts: Vec<Vec<(usize, u64)>> = Vec::new();
        for (i, size) in sizes.into_iter().enumerate() {
            let (part, offset) = packer.place(size);
            parts.resize_with(part + 1, Vec::new);
            parts[part].push((i, offset));
        }
        parts
    }

    /// A version of `id` whose bytes lie in a saved project, read when first needed.
    pub fn from_disk(&mut self, id: PageId, loc: DiskLoc) -> Rc<Version> {
        self.insert(id, Place::Disk(loc.clone()), Some(loc))
    }

    /// The page of the live version keyed `key` (None once it is gone).
    pub fn page_of(&self, key: u64) -> Option<PageId> {
        self.slots.get(&key).map(|s| s.id)
    }

    /// The version's GPU page, if it is on the GPU now.
    pub fn gpu_page(&self, v: &Version) -> Option<&GpuPage> {
        match &self.slots.get(&v.key)?.place {
            Place::Gpu(p) => Some(p),
            _ => None,
        }
    }

    /// Notes that `v` is about to be written in place: it no longer equals its saved bytes.
    pub fn will_write(&mut self, v: &Version) {
        if let Some(s) = self.slots.get_mut(&v.key) {
            s.saved = None;
        }
    }

    /// Where `v`'s bytes lie in the project it was last saved to, if they are unchanged since.
    pub fn saved(&self, v: &Version) -> Option<&DiskLoc> {
        self.slots.get(&v.key)?.saved.as_ref()
    }

    /// Records that `v`'s bytes now lie at `loc` of a saved project.
    pub fn set_saved(&mut self, v: &Version, loc: DiskLoc) {
        if let Some(s) = self.slots.get_mut(&v.key) {
            s.saved = Some(loc);
        }
    }

    pub fn budgets(&self) -> &Budgets {
        &self.budgets
    }

    /// Sets the budgets (the next [`Self::ensure`] meets them) and starts the peak anew.
    pub fn set_budgets(&mut self, budgets: Budgets) {
        self.budgets = budgets;
        self.peak_gpu_bytes = self.gpu_bytes;
    }

    /// Frees the places of versions nobody holds any more.
    fn collect_dropped(&mut self) {
        loop {
            let keys: Vec<u64> = std::mem::take(&mut *self.dropped.borrow_mut());
            if keys.is_empty() {
                return;
            }
            for key in keys {
                if let Some(slot) = self.slots.remove(&key) {
                    self.retire(slot.place);
                }
                // Dropping a pending slot may drop its source: the loop collects it too.
            }
        }
    }

    /// Recycles what a place held (up to [`RECYCLED`] pairs, [`RECYCLED_HOST_BYTES`]), else
    /// frees it.
    fn retire(&mut self, place: Place) {
        match place {
            Place::Gpu(page) => self.recycle_pair(*page),
            Place::Host(v) => {
                if self.host_free_bytes + v.capacity() as u64 <= RECYCLED_HOST_BYTES {
                    self.host_free_bytes += v.capacity() as u64;
                    self.host_free.push(v);
                } else {
                    self.host_bytes -= v.capacity() as u64;
                }
            }
            Place::Disk(loc) => {
                if let Some(s) = &mut self.spill {
                    s.release(&loc);
                }
            }
            Place::Pending(_) => {}
        }
    }

    /// Keeps an image pair for the next version made (it stays counted in `gpu_bytes`).
    fn recycle_pair(&mut self, page: GpuPage) {
        if self.spare.len() < RECYCLED {
            self.spare.push(page);
        } else {
            self.gpu_bytes -= page.bytes();
        }
    }

    /// Brings `pins` onto the GPU, moving other versions off it past the budget (least recently
    /// used first). Returns the keys of versions whose GPU image changed (moved off or made).
    /// With `timer`, the transfers are timed and their GPU time is returned too.
    pub fn ensure(
        &mut self,
        pins: &[&Version],
        timer: Option<&GpuTimer>,
    ) -> Result<(Vec<u64>, f64)> {
        let _p = crate::profile::scope("pages: ensure");
        self.collect_dropped();
        self.take_pairs_ahead();
        self.take_read_ahead()?;
        self.tick += 1;
        let mut pinned = HashSet::with_capacity(pins.len());
        let mut wanted = 0u64;
        let mut missing = Vec::new();
        for v in pins {
            if !pinned.insert(v.key) {
                continue;
            }
            wanted += v.bytes;
            let slot = self
                .slots
                .get_mut(&v.key)
                .expect("a live version has a slot");
            slot.last_use = self.tick;
            if !matches!(slot.place, Place::Gpu(_)) {
                missing.push(v.key);
            }
        }
        if missing.is_empty() {
            // A budget lowered since: meet it now.
            let moved = match self.budgets.gpu {
                Some(b) if self.gpu_bytes > b && wanted <= b => self.make_room(&[], &pinned)?,
                _ => Vec::new(),
            };
            return Ok((moved, 0.0));
        }
        if let Some(budget) = self.budgets.gpu {
            if wanted > budget {
                return Err(PageError::BudgetTooSmall {
                    needed: wanted,
                    budget,
                });
            }
        }
        let mut changed = self.make_room(&missing, &pinned)?;
        let mut ns = 0.0;
        for chunk in self.batches(&missing) {
            ns += self.make(&chunk, timer)?;
            changed.extend(chunk);
        }
        self.peak_gpu_bytes = self.peak_gpu_bytes.max(self.gpu_bytes);
        self.meet_host_budget()?;
        Ok((changed, ns))
    }

    /// Splits versions to make into calls of [`Self::make`]: their uploads fit the staging
    /// parts, and [`COPIES_PER_SUBMIT`] versions in all.
    fn batches(&self, keys: &[u64]) -> Vec<Vec<u64>> {
        // Parts are filled as `pack` fills them in `make`.
        let mut out: Vec<Vec<u64>> = Vec::new();
        let mut packer = Packer::new(self.part_bytes());
        for &k in keys {
            let upload = matches!(
                self.slots[&self.origin(k)].place,
                Place::Host(_) | Place::Disk(_)
            );
            let bytes = if upload {
                self.pair_bytes(self.slots[&k].id) / 2
            } else {
                0
            };
            let full = out.last().map_or(true, |b| {
                b.len() >= COPIES_PER_SUBMIT
                    || (packer.opens_part(bytes) && packer.parts == STAGING_PARTS)
            });
            if full {
                out.push(Vec::new());
                packer = Packer::new(self.part_bytes());
            }
            if bytes > 0 {
                packer.place(bytes);
            }
            out.last_mut().expect("pushed above").push(k);
        }
        out
    }

    /// Extents of the pages `missing` will make, and which of them recycled pairs cover.
    fn new_pairs_needed(&self, missing: &[u64]) -> (u64, HashMap<[u32; 2], usize>) {
        let mut left: HashMap<[u32; 2], usize> = HashMap::new();
        for p in &self.spare {
            *left.entry(p.extent()).or_default() += 1;
        }
        let mut bytes = 0;
        for k in missing {
            let id = self.slots[k].id;
            let r = self.desc.page_rect(id);
            let e = [r.width() as u32, r.height() as u32];
            match left.get_mut(&e) {
                Some(n) if *n > 0 => *n -= 1,
                _ => bytes += self.pair_bytes(id),
            }
        }
        (bytes, left)
    }

    /// Frees recycled pairs and moves least recently used unpinned versions off the GPU until
    /// `missing` fit the budget (their image pairs are reused by `missing`).
    fn make_room(&mut self, missing: &[u64], pinned: &HashSet<u64>) -> Result<Vec<u64>> {
        let Some(budget) = self.budgets.gpu else {
            return Ok(Vec::new());
        };
        let mut moved = Vec::new();
        loop {
            let (need, unused) = self.new_pairs_needed(missing);
            let over = (self.gpu_bytes + need).saturating_sub(budget);
            if over == 0 {
                return Ok(moved);
            }
            // First the recycled pairs nothing coming in can use.
            if let Some(i) = self
                .spare
                .iter()
                .position(|p| unused.get(&p.extent()).is_some_and(|&n| n > 0))
            {
                let page = self.spare.swap_remove(i);
                self.gpu_bytes -= page.bytes();
                continue;
            }
            let mut candidates: Vec<(u64, u64)> = self
                .slots
                .iter()
                .filter(|(k, s)| matches!(s.place, Place::Gpu(_)) && !pinned.contains(k))
                .map(|(&k, s)| (s.last_use, k))
                .collect();
            if candidates.is_empty() {
                return Ok(moved);
            }
            candidates.sort_unstable();
            let mut victims = Vec::new();
            let mut freed = 0;
            for (_, key) in candidates {
                if freed >= over || victims.len() >= PAGES_PER_TRANSFER {
                    break;
                }
                freed += self.pair_bytes(self.slots[&key].id);
                victims.push(key);
            }
            self.move_off(&victims)?;
            moved.extend(victims);
        }
    }

    /// Moves GPU versions to host memory (through the staging parts: the host copies one out,
    /// in parallel, while the GPU fills the next), or, when their saved bytes are still theirs,
    /// simply back to the saved project. Their image pairs are kept in `self.spare` for the
    /// versions coming in.
    fn move_off(&mut self, keys: &[u64]) -> Result<()> {
        let started = std::time::Instant::now();
        let dirty: Vec<u64> = keys
            .iter()
            .copied()
            .filter(|k| self.slots[k].saved.is_none())
            .collect();
        let sizes: Vec<u64> = dirty
            .iter()
            .map(|k| self.pair_bytes(self.slots[k].id) / 2)
            .collect();
        let parts = self.pack(sizes.iter().copied());
        let staging = self.take_staging()?;
        let mut host: HashMap<u64, Vec<u8>> = HashMap::new();
        for round in parts.chunks(staging.len()) {
            let mut vecs: Vec<Vec<Vec<u8>>> = round
                .iter()
                .map(|part| {
                    part.iter()
                        .map(|&(i, _)| self.take_host_vec(sizes[i]))
                        .collect()
                })
                .collect();
            if let Err(e) = self.copy_out(round, &staging, &dirty, &sizes, &mut vecs) {
                // The host memory taken for them goes back where it came from.
                for v in vecs.into_iter().flatten() {
                    self.retire(Place::Host(v));
                }
                self.staging = staging;
                return Err(e);
            }
            for (part, out) in round.iter().zip(vecs) {
                for (&(i, _), v) in part.iter().zip(out) {
                    host.insert(dirty[i], v);
                }
            }
        }
        self.staging = staging;
        for &k in keys {
            let pair = self.pair_bytes(self.slots[&k].id);
            let slot = self.slots.get_mut(&k).expect("victim slot");
            let place = match host.remove(&k) {
                Some(v) => Place::Host(v),
                None => Place::Disk(slot.saved.clone().expect("clean victims are saved")),
            };
            if let Place::Gpu(page) = std::mem::replace(&mut slot.place, place) {
                // Kept for the versions coming in, still counted in `gpu_bytes`.
                self.spare.push(*page);
            }
            self.traffic.page_outs += 1;
            self.traffic.bytes_out += pair / 2;
        }
        self.traffic.out_seconds += started.elapsed().as_secs_f64();
        Ok(())
    }

    /// Copies the pages of one round of staging parts off the GPU into `vecs` (per part, per
    /// page, empty with room for `sizes[i]`): every part's transfers submitted first, then each
    /// part copied out, in parallel, as soon as its own have landed.
    fn copy_out(
        &self,
        round: &[Vec<(usize, u64)>],
        staging: &[Buffer],
        keys: &[u64],
        sizes: &[u64],
        vecs: &mut [Vec<Vec<u8>>],
    ) -> Result<()> {
        // Every part's GPU copies first, then each part copied out once its own are done.
        let flights = round
            .iter()
            .zip(staging)
            .map(|(part, buf)| {
                let mut rec = Recorder::new(&self.gpu)?;
                for &(i, offset) in part {
                    let Place::Gpu(page) = &self.slots[&keys[i]].place else {
                        unreachable!("victims are on the GPU")
                    };
                    rec.copy_image_to_buffer_at(page.front(), buf, offset);
                }
                rec.buffer(buf, Access::HostRead);
                // SAFETY: kept in `flights`, each waited below (or dropped on an error).
                Ok(unsafe { rec.submit()? })
            })
            .collect::<Result<Vec<_>>>()?;
        let _p = crate::profile::scope("page-out: wait and host copy");
        for (((part, buf), flight), out) in
            round.iter().zip(staging).zip(flights).zip(vecs.iter_mut())
        {
            flight.wait()?;
            let data = buf.mapped(self.part_bytes() as usize)?;
            let mut jobs: Vec<(&mut [MaybeUninit<u8>], &[u8])> = Vec::new();
            for (&(i, offset), v) in part.iter().zip(out.iter_mut()) {
                let src = &data[offset as usize..(offset + sizes[i]) as usize];
                let dst = &mut v.spare_capacity_mut()[..src.len()];
                jobs.extend(dst.chunks_mut(COPY_SLICE).zip(src.chunks(COPY_SLICE)));
            }
            jobs.into_par_iter().for_each(|(d, s)| {
                // SAFETY: `d` and `s` have the same length (chunks of equal slices) and do
                // not overlap (host memory and mapped staging memory).
                unsafe {
                    std::ptr::copy_nonoverlapping(s.as_ptr(), d.as_mut_ptr().cast(), s.len())
                };
            });
            for (&(i, _), v) in part.iter().zip(out.iter_mut()) {
                // SAFETY: the copies above wrote the first `sizes[i]` bytes (within the
                // capacity, which is at least that).
                unsafe { v.set_len(sizes[i] as usize) };
            }
        }
        Ok(())
    }

    /// Frees what nobody holds and meets the host budget.
    pub fn settle(&mut self) -> Result<()> {
        self.collect_dropped();
        self.meet_host_budget()
    }

    /// Moves least recently used host versions to disk until the host budget holds.
    fn meet_host_budget(&mut self) -> Result<()> {
        let Some(budget) = self.budgets.host else {
            return Ok(());
        };
        while self.host_bytes > budget {
            let Some(v) = self.host_free.pop() else {
                break;
            };
            self.host_free_bytes -= v.capacity() as u64;
            self.host_bytes -= v.capacity() as u64;
        }
        if self.host_bytes <= budget {
            return Ok(());
        }
        let mut candidates: Vec<(u64, u64)> = self
            .slots
            .iter()
            .filter(|(_, s)| matches!(s.place, Place::Host(_)))
            .map(|(&k, s)| (s.last_use, k))
            .collect();
        candidates.sort_unstable();
        for (_, key) in candidates {
            if self.host_bytes <= budget {
                break;
            }
            let slot = self.slots.get_mut(&key).expect("host slot");
            let Place::Host(v) = &slot.place else {
                unreachable!()
            };
            let len = v.capacity() as u64;
            let loc = match &slot.saved {
                Some(loc) => loc.clone(),
                None => {
                    if self.spill.is_none() {
                        let dir = self
                            .budgets
                            .spill_dir
                            .clone()
                            .unwrap_or_else(std::env::temp_dir);
                        self.spill = Some(SpillFile::create(&dir)?);
                    }
                    self.traffic.spills += 1;
                    self.spill.as_mut().expect("made above").put(v)?
                }
            };
            slot.place = Place::Disk(loc);
            self.host_bytes -= len;
        }
        Ok(())
    }

    /// How version `key` is made on the GPU, from wherever it (or its source) lies now.
    fn source_of(&self, key: u64) -> Result<Source> {
        Ok(self.sources_of(&[key])?.remove(0))
    }

    /// [`Self::source_of`] each of `keys`; texels on disk are read (and checked) in parallel.
    fn sources_of(&self, keys: &[u64]) -> Result<Vec<Source>> {
        let origins: Vec<u64> = keys.iter().map(|&k| self.origin(k)).collect();
        let reads: Vec<(usize, &DiskLoc, String)> = origins
            .iter()
            .enumerate()
            .filter_map(|(i, k)| match &self.slots[k].place {
                Place::Disk(loc) => Some((i, loc, self.page_name(self.slots[k].id))),
                _ => None,
            })
            .collect();
        let mut read: HashMap<usize, Vec<u8>> = reads
            .par_iter()
            .map(|(i, loc, name)| Ok((*i, loc.read(name)?)))
            .collect::<Result<_>>()?;
        Ok(origins
            .iter()
            .enumerate()
            .map(|(i, &k)| match &self.slots[&k].place {
                Place::Gpu(_) => Source::Copy(k),
                Place::Host(_) => Source::Host(k),
                Place::Disk(_) => Source::Upload(read.remove(&i).expect("read above")),
                Place::Pending(_) => Source::Clear,
            })
            .collect())
    }

    /// The version whose place version `key` is made from: itself, or the end of its chain of
    /// pending sources (a pending version without a source is the flat value).
    fn origin(&self, mut key: u64) -> u64 {
        while let Place::Pending(Some(v)) = &self.slots[&key].place {
            key = v.key;
        }
        key
    }

    fn page_name(&self, id: PageId) -> String {
        format!("page {},{}", id.x, id.y)
    }

    /// Makes the listed (non-GPU) versions on the GPU: a submission per staging part of
    /// uploads, and one for the copies and clears.
    fn make(&mut self, keys: &[u64], timer: Option<&GpuTimer>) -> Result<f64> {
        if keys.is_empty() {
            return Ok(0.0);
        }
        let started = std::time::Instant::now();
        let sources = {
            let _p = crate::profile::scope("page-in: read");
            self.sources_of(keys)?
        };
        self.traffic.pages_read += sources
            .iter()
            .filter(|s| matches!(s, Source::Upload(_)))
            .count() as u64;
        let pages = {
            let _p = crate::profile::scope("pages: images for versions");
            self.gpu_pages_for(keys)?
        };
        let any_upload = sources
            .iter()
            .any(|s| matches!(s, Source::Upload(_) | Source::Host(_)));
        let mut staging = if any_upload {
            self.take_staging()?
        } else {
            Vec::new()
        };
        let (ns, in_flight) = {
            let _p = crate::profile::scope("pages: fill");
            self.fill(&sources, &pages, &mut staging, timer)?
        };
        // The first parts, read by detached uploads, are busy until those finish.
        for (buf, ticket) in staging.drain(..in_flight.len()).zip(in_flight) {
            self.staging_busy.push((ticket, buf));
        }
        for (page, source) in pages.iter().zip(&sources) {
            let stale = match source {
                Source::Upload(_) | Source::Host(_) => {
                    let [w, h] = page.extent();
                    page.set_front(0);
                    Rect::new(0, 0, w as i32, h as i32)
                }
                _ => Rect::EMPTY,
            };
            page.set_stale(stale);
        }
        if any_upload {
            self.staging = staging;
            self.traffic.in_seconds += started.elapsed().as_secs_f64();
        }
        self.install(keys, pages, &sources);
        Ok(ns)
    }

    /// A GPU page for each of `keys`' versions: a spare one of the right extent, else a new one.
    fn gpu_pages_for(&mut self, keys: &[u64]) -> Result<Vec<GpuPage>> {
        let mut pages: Vec<GpuPage> = Vec::with_capacity(keys.len());
        let mut made = false;
        for k in keys {
            let id = self.slots[k].id;
            let r = self.desc.page_rect(id);
            let extent = [r.width() as u32, r.height() as u32];
            let page = match self.spare.iter().position(|p| p.extent() == extent) {
                Some(i) => self.spare.swap_remove(i),
                None => {
                    let page = self.new_page(id)?;
                    self.gpu_bytes += page.bytes();
                    self.traffic.pairs_made += 1;
                    made = true;
                    page
                }
            };
            pages.push(page);
        }
        self.ask_pairs_ahead(made);
        Ok(pages)
    }

    /// With frames in flight, keeps whole-page pairs coming ahead of the page-ins once they
    /// grow the field (`made`: pairs were just created here, or were made ahead before): asks
    /// for more when fewer than half of the pairs wanted ([`AHEAD_BYTES`] of them, 1 to
    /// [`AHEAD_PAIRS`]) are spare or coming, where the GPU budget leaves room for them. Pairs
    /// asked for count in `gpu_bytes` from then.
    fn ask_pairs_ahead(&mut self, made: bool) {
        if !self.detached || !(made || self.ahead.is_some()) {
            return;
        }
        let whole = PageId { x: 0, y: 0 };
        let r = self.desc.page_rect(whole);
        let extent = [r.width() as u32, r.height() as u32];
        let pair = self.pair_bytes(whole);
        let want = (AHEAD_BYTES / pair).clamp(1, AHEAD_PAIRS) as usize;
        let spare = self.spare.iter().filter(|p| p.extent() == extent).count();
        let desc = self.page_desc(extent);
        if self.ahead.is_none() {
            self.ahead = PairsAhead::new(&self.gpu).ok();
        }
        let Some(ahead) = &mut self.ahead else {
            return;
        };
        let have = spare + ahead.pending();
        if 2 * have >= want {
            return;
        }
        let more = want - have;
        let bytes = more as u64 * pair;
        if self.budgets.gpu.is_some_and(|b| self.gpu_bytes + bytes > b) {
            return;
        }
        if ahead.ask(more, desc, "page made ahead") {
            self.gpu_bytes += bytes;
            self.peak_gpu_bytes = self.peak_gpu_bytes.max(self.gpu_bytes);
        }
    }

    /// Puts the pairs made ahead since the last call with the spare ones (counted in
    /// `gpu_bytes` since they were asked for; those that failed no longer).
    fn take_pairs_ahead(&mut self) {
        let Some(ahead) = &mut self.ahead else {
            return;
        };
        let (made, failed) = ahead.take();
        let pair = self.pair_bytes(PageId { x: 0, y: 0 });
        self.gpu_bytes -= failed as u64 * pair;
        for images in made {
            let [w, h] = [images[0].desc.extent.width, images[0].desc.extent.height];
            let page = GpuPage::new(images, Rect::new(0, 0, w as i32, h as i32));
            self.traffic.pairs_made_ahead += 1;
            self.spare.push(page);
        }
    }

    /// Starts reading the saved bytes of `versions` that lie only in the saved project, on
    /// the page-reading threads ([`read_pool`]), within the host budget: a page-in that wants
    /// them later copies them from host memory instead of reading the file. Reads that find
    /// their version changed or gone are dropped; a failed read is left to the page-in, which
    /// reports it.
    pub fn read_ahead(&mut self, versions: &[&Version]) {
        let mut bytes: u64 = self.reading.values().sum();
        for v in versions {
            let key = self.origin(v.key);
            if self.reading.contains_key(&key) {
                continue;
            }
            let slot = &self.slots[&key];
            let (Place::Disk(loc), Some(saved)) = (&slot.place, &slot.saved) else {
                continue;
            };
            if !loc.same(saved) {
                continue;
            }
            bytes += loc.len;
            if self
                .budgets
                .host
                .is_some_and(|b| self.host_bytes + bytes > b)
            {
                return;
            }
            let (loc, name, send) = (loc.clone(), self.page_name(slot.id), self.reads.0.clone());
            self.reading.insert(key, loc.len);
            read_pool().spawn(move || {
                let read = loc.read(&name);
                let _ = send.send((key, loc, read));
            });
        }
    }

    /// Puts the saved pages read ahead since the last call in host memory, where their versions
    /// still lie only in the saved project.
    fn take_read_ahead(&mut self) -> Result<()> {
        let mut took = false;
        while let Ok((key, from, read)) = self.reads.1.try_recv() {
            self.reading.remove(&key);
            let (Some(slot), Ok(bytes)) = (self.slots.get_mut(&key), read) else {
                continue;
            };
            // Still the very bytes read: the same range of the same open file, same checksum.
            let same = |l: &DiskLoc| l.same(&from) && l.checksum == from.checksum;
            if !matches!(&slot.place, Place::Disk(loc) if same(loc))
                || !slot.saved.as_ref().is_some_and(same)
            {
                continue;
            }
            self.host_bytes += bytes.capacity() as u64;
            slot.place = Place::Host(bytes);
            self.traffic.pages_read_ahead += 1;
            took = true;
        }
        if took {
            self.meet_host_budget()?;
        }
        Ok(())
    }

    /// Saved pages being read ahead whose bytes have not been taken yet (the next call that
    /// changes residency takes those that arrived).
    pub fn reading_ahead(&self) -> usize {
        self.reading.len()
    }

    /// Fills `pages` from their `sources`: texels from host memory or disk go through the
    /// staging parts (the host copies into one, in parallel, while the GPU copies the previous
    /// one into its images), then the copies and clears on the GPU. Waits for them, or, when
    /// [`Self::detached`], submits them detached and untimed. Returns the GPU time when timed
    /// (ns), and the tickets of detached uploads: one per staging part used, in order (the
    /// host must not touch those parts until they finish).
    fn fill(
        &self,
        sources: &[Source],
        pages: &[GpuPage],
        staging: &mut [Buffer],
        timer: Option<&GpuTimer>,
    ) -> Result<(f64, Vec<Ticket>)> {
        let uploads: Vec<(usize, &[u8])> = sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Source::Upload(b) => Some((i, &b[..])),
                Source::Host(k) => match &self.slots[k].place {
                    Place::Host(v) => Some((i, &v[..])),
                    _ => unreachable!("host sources are in host memory"),
                },
                _ => None,
            })
            .collect();
        let parts = self.pack(uploads.iter().map(|(_, b)| b.len() as u64));
        assert!(
            parts.len() <= staging.len(),
            "batches fit the staging parts"
        );
        let has_on_gpu = sources
            .iter()
            .any(|s| matches!(s, Source::Copy(_) | Source::Clear));
        let detach = self.detached;
        let mut timing = BatchTiming {
            timer: if detach { None } else { timer },
            query: None,
            last: parts.len() + usize::from(has_on_gpu) - 1,
            n: 0,
        };
        let mut flights = Vec::new();
        let mut tickets = Vec::new();
        for (part, buf) in parts.iter().zip(staging.iter_mut()) {
            copy_into_staging(buf, part, &uploads)?;
            let buf: &Buffer = buf;
            let _p = crate::profile::scope("page-in: record and submit");
            let mut rec = Recorder::new(&self.gpu)?;
            timing.start(&mut rec)?;
            rec.buffer(buf, Access::HostWrite);
            for &(u, offset) in part {
                // Across the bus into the first image only: the second is marked stale, and
                // the first pass that writes the page brings it up to date (most page-ins
                // are only read: neighbours, drawing).
                let page = &pages[uploads[u].0];
                rec.copy_buffer_to_image_at(buf, offset, &page.images[0]);
            }
            timing.end(&mut rec);
            if detach {
                // SAFETY: the caller keeps `buf` busy (untouched by the host) until the ticket
                // has finished; images dropped meanwhile are released after it (gpu::retire).
                tickets.push(unsafe { rec.submit_detached(None, None)? });
            } else {
                // SAFETY: kept in `flights`, all waited below (or dropped on an error).
                flights.push(unsafe { rec.submit()? });
            }
        }
        if let Some(flight) = self.copy_and_clear(sources, pages, &mut timing, detach)? {
            flights.push(flight);
        }
        let _p = crate::profile::scope("page-in: wait");
        for f in flights {
            f.wait()?;
        }
        let ns = match timing.timer {
            Some(t) => t.results()?.iter().map(|p| p.gpu_ns).sum(),
            None => 0.0,
        };
        Ok((ns, tickets))
    }

    /// Records the pages made by copying a GPU version or clearing, and submits them: in flight
    /// (returned), or detached when `detach`. None when there are none.
    fn copy_and_clear<'a>(
        &'a self,
        sources: &[Source],
        pages: &'a [GpuPage],
        timing: &mut BatchTiming<'a>,
        detach: bool,
    ) -> Result<Option<InFlight<'a>>> {
        let on_gpu: Vec<(&Source, &GpuPage)> = sources
            .iter()
            .zip(pages)
            .filter(|(s, _)| matches!(s, Source::Copy(_) | Source::Clear))
            .collect();
        if on_gpu.is_empty() {
            return Ok(None);
        }
        let mut rec = Recorder::new(&self.gpu)?;
        timing.start(&mut rec)?;
        for (s, page) in on_gpu {
            let [front, back] = &page.images;
            match s {
                Source::Copy(k) => {
                    let Place::Gpu(src) = &self.slots[k].place else {
                        unreachable!("copy sources are on the GPU")
                    };
                    rec.copy_image(src.front(), front);
                    rec.copy_image(src.front(), back);
                }
                _ => {
                    rec.clear_image(front, self.clear);
                    rec.clear_image(back, self.clear);
                }
            }
        }
        timing.end(&mut rec);
        if detach {
            // SAFETY: copies and clears between images: no host-visible memory, no set
            // written; images dropped meanwhile are released after it (gpu::retire).
            let _ticket = unsafe { rec.submit_detached(None, None)? };
            return Ok(None);
        }
        // SAFETY: as above; the caller waits for it.
        Ok(Some(unsafe { rec.submit()? }))
    }

    /// Puts the made `pages` in place of `keys`' versions, counting page-ins, and retires what
    /// was there.
    fn install(&mut self, keys: &[u64], pages: Vec<GpuPage>, sources: &[Source]) {
        let _p = crate::profile::scope("page-in: retire");
        for ((&k, page), source) in keys.iter().zip(pages).zip(sources) {
            let pair = self.pair_bytes(self.slots[&k].id);
            let old = std::mem::replace(
                &mut self.slots.get_mut(&k).expect("made slot").place,
                Place::Gpu(Box::new(page)),
            );
            if matches!(source, Source::Upload(_) | Source::Host(_)) {
                self.traffic.page_ins += 1;
                self.traffic.bytes_in += pair / 2;
            }
            // A pending source dropped here is collected by the next call.
            self.retire(old);
        }
    }

    /// A new GPU page for `id`, both images undefined.
    fn new_page(&self, id: PageId) -> Result<GpuPage> {
        let r = self.desc.page_rect(id);
        let desc = self.page_desc([r.width() as u32, r.height() as u32]);
        let name = self.page_name(id);
        let images = [
            Image::new(&self.gpu, &name, desc)?,
            Image::new(&self.gpu, &name, desc)?,
        ];
        Ok(GpuPage::new(images, Rect::new(0, 0, r.width(), r.height())))
    }

    /// The images of a page of `extent`.
    fn page_desc(&self, extent: [u32; 2]) -> ImageDesc {
        ImageDesc::new_2d(self.format, extent).usage(
            vk::ImageUsageFlags::STORAGE
                | vk::ImageUsageFlags::TRANSFER_SRC
                | vk::ImageUsageFlags::TRANSFER_DST,
        )
    }

    /// The texels of each version, as stored: GPU versions read back (one submission per
    /// batch), the others from host memory or disk; pending ones as their source.
    pub fn read(&self, versions: &[&Version]) -> Result<Vec<Vec<u8>>> {
        self.map_bytes(versions, |_, b| b.to_vec())
    }

    /// `f(i, texels of versions[i])` for each version, run in parallel, as [`Self::read`] finds
    /// the texels (host memory is lent, not copied).
    pub fn map_bytes<T: Send>(
        &self,
        versions: &[&Version],
        f: impl Fn(usize, &[u8]) -> T + Sync,
    ) -> Result<Vec<T>> {
        /// Texels found off the GPU: lent from host memory, or read or made.
        enum Found<'r> {
            Lent(&'r [u8]),
            Made(Vec<u8>),
        }
        let mut out: Vec<Option<T>> = (0..versions.len()).map(|_| None).collect();
        let mut found: Vec<(usize, Found)> = Vec::new();
        let mut on_gpu: Vec<(usize, &GpuPage, u64)> = Vec::new();
        for (i, v) in versions.iter().enumerate() {
            let id = self.slots[&v.key].id;
            match self.source_of(v.key)? {
                Source::Upload(b) => found.push((i, Found::Made(b))),
                Source::Host(k) => {
                    let Place::Host(v) = &self.slots[&k].place else {
                        unreachable!()
                    };
                    found.push((i, Found::Lent(v)));
                }
                Source::Clear => {
                    let r = self.desc.page_rect(id);
                    let flat = self.flat_texel.repeat((r.width() * r.height()) as usize);
                    found.push((i, Found::Made(flat)));
                }
                Source::Copy(k) => {
                    let Place::Gpu(p) = &self.slots[&k].place else {
                        unreachable!()
                    };
                    on_gpu.push((i, p, v.bytes / 2));
                }
            }
        }
        let results: Vec<(usize, T)> = found
            .par_iter()
            .map(|(i, b)| {
                let bytes = match b {
                    Found::Lent(b) => b,
                    Found::Made(b) => &b[..],
                };
                (*i, f(*i, bytes))
            })
            .collect();
        for (i, t) in results {
            out[i] = Some(t);
        }
        for chunk in on_gpu.chunks(PAGES_PER_TRANSFER) {
            let total: u64 = chunk.iter().map(|c| c.2).sum();
            let readback = Buffer::new(&self.gpu, "pages readback", BufferDesc::readback(total))?;
            let mut rec = Recorder::new(&self.gpu)?;
            let mut at = 0;
            for (_, page, size) in chunk {
                rec.copy_image_to_buffer_at(page.front(), &readback, at);
                at += size;
            }
            rec.buffer(&readback, Access::HostRead);
            rec.submit_and_wait()?;
            let data = readback.mapped(total as usize)?;
            let mut parts: Vec<(usize, &[u8])> = Vec::with_capacity(chunk.len());
            let mut at = 0usize;
            for (i, _, size) in chunk {
                parts.push((*i, &data[at..at + *size as usize]));
                at += *size as usize;
            }
            let results: Vec<(usize, T)> = parts.par_iter().map(|&(i, b)| (i, f(i, b))).collect();
            for (i, t) in results {
                out[i] = Some(t);
            }
        }
        Ok(out
            .into_iter()
            .map(|t| t.expect("every version read"))
            .collect())
    }

    /// Where the field's versions are, the budgets and the traffic so far.
    pub fn report(&self) -> MemoryReport {
        let mut r = MemoryReport {
            gpu_bytes: self.gpu_bytes,
            peak_gpu_bytes: self.peak_gpu_bytes,
            host_bytes: self.host_bytes,
            spill_bytes: self.spill.as_ref().map_or(0, SpillFile::used),
            budgets: self.budgets.clone(),
            traffic: self.traffic,
            ..Default::default()
        };
        for s in self.slots.values() {
            match s.place {
                Place::Gpu(_) => r.gpu_pages += 1,
                Place::Host(_) => r.host_pages += 1,
                Place::Disk(_) => r.disk_pages += 1,
                Place::Pending(_) => {}
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::Packer;

    #[test]
    fn transfers_fill_staging_parts_in_order() {
        let mut p = Packer::new(10);
        assert!(p.opens_part(0), "the first placement opens a part");
        let placed: Vec<(usize, u64)> = [5, 5, 3, 8, 2].iter().map(|&s| p.place(s)).collect();
        assert_eq!(placed, [(0, 0), (0, 5), (1, 0), (2, 0), (2, 8)]);
        assert!(p.opens_part(1) && !p.opens_part(0));
    }
}
