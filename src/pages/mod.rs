//! The page store: a document's named sparse fields of GPU pages, apart from whatever edits or
//! draws them.
//!
//! Promise: a page holds exactly the values the edits committed to it; a page never written holds
//! no memory and reads as its field's flat value; every version an undo step needs is kept (up to
//! the undo budget) and restores values bit for bit. The brush engine writes a field through
//! `&mut` ([`Field::begin_versions`] … [`Field::commit_versions`]); the renderer, offscreen
//! targets and readers take `&` and follow changes by epoch ([`changes::ChangeLog::changed_since`]).
//!
//! * [`geometry`]: document size, format, range and page grid ([`DocumentDesc`], [`PageId`]).
//! * [`page`]: one page version's GPU image pair ([`GpuPage`]).
//! * [`field`]: one sparse field ([`Field`]), which ties together its [`versions`] (committed,
//!   working, undo [`history`]), where they live ([`residency`]), its [`changes`] by epoch and
//!   its [`coarse`] level.
//! * [`rects`]: a rectangle of a field read, written, or edited on the GPU, as one undo step.
//! * [`coarse`]: a field's coarse level (min, max, sum per 64² texels), always on the GPU.
//! * [`residency`]: where versions live (GPU, host, disk) under memory budgets; [`disk`]: page
//!   bytes in files (saved projects, the spill file); [`ahead`]: image pairs made on a thread
//!   ahead of page-ins.
//! * [`store`]: the fields by name ([`PageStore`]).

pub mod ahead;
pub mod changes;
pub mod coarse;
pub mod disk;
pub mod error;
pub mod field;
pub mod geometry;
pub mod history;
pub mod page;
pub mod rects;
pub mod residency;
pub mod store;
pub mod versions;

pub use error::PageError;
pub use field::Field;
pub use geometry::{DocumentDesc, GeoPlacement, HeightFormat, PageId, Rect, Units};
pub use page::GpuPage;
pub use residency::{BudgetRequest, Budgets, MemoryReport, Version};
pub use store::{PageStore, HEIGHT};
