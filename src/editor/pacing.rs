//! When the editor draws the terrain again. A frame whose terrain would look as the last drawn one
//! keeps that picture and draws only the interface over it. A terrain that costs more than
//! [`FRAME_BUDGET`] to draw (lavapipe takes 1–2 s) is drawn only while the interface is quiet
//! (no key, click or drag taken by it for [`UI_QUIET`]) and then at most half the time, so
//! typing, combo boxes, sliders and stroke input never wait on it (issue 36, item 4). A
//! screenshot's frame draws it whenever its picture changed (the editor takes the shot only once
//! the drawn picture is current, or the sea's waves move).

use std::time::{Duration, Instant};

/// A terrain frame cheaper than this is drawn whenever the picture changes.
pub const FRAME_BUDGET: Duration = Duration::from_millis(100);
/// How long after the interface last took a key or click an expensive terrain waits.
pub const UI_QUIET: Duration = Duration::from_millis(400);

#[derive(Default)]
pub struct TerrainPacing {
    /// What the last terrain frames cost (smoothed): as [`Self::drawn`] was told.
    cost: Option<Duration>,
    last_draw: Option<Instant>,
    last_ui_input: Option<Instant>,
    /// What the last [`Self::draw_now`] answered.
    drew_last: bool,
}

impl TerrainPacing {
    /// The interface took a key, a character, a click or a drag at `now`.
    pub fn ui_input(&mut self, now: Instant) {
        self.last_ui_input = Some(now);
    }

    /// A frame that drew the terrain cost `cost` (the editor gives the GPU time of its draw and
    /// shading where there are timestamps, else the wall time from submission to results).
    pub fn drawn(&mut self, cost: Duration) {
        self.cost = Some(match self.cost {
            Some(c) => (c * 3 + cost) / 4,
            None => cost,
        });
    }

    /// The smoothed cost of a terrain frame, if one was measured.
    pub fn cost(&self) -> Option<Duration> {
        self.cost
    }

    /// Whether the frame at `now` draws the terrain: when its picture `changed`, if it is cheap,
    /// or `forced`, or the interface is quiet and the last terrain frame was submitted at least
    /// twice its cost ago.
    pub fn draw_now(&mut self, changed: bool, forced: bool, now: Instant) -> bool {
        self.drew_last = false;
        if !changed {
            return false;
        }
        let cost = self.cost.unwrap_or_default();
        let quiet = self.last_ui_input.map_or(true, |t| now - t >= UI_QUIET);
        let rested = self.last_draw.map_or(true, |t| now - t >= cost * 2);
        let draw = forced || cost <= FRAME_BUDGET || (quiet && rested);
        if draw {
            self.last_draw = Some(now);
        }
        self.drew_last = draw;
        draw
    }

    /// Whether the last frame asked drew the terrain.
    pub fn drew_last(&self) -> bool {
        self.drew_last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cheap_terrain_is_drawn_whenever_it_changes_and_kept_when_it_does_not() {
        let mut p = TerrainPacing::default();
        let t0 = Instant::now();
        assert!(p.draw_now(true, false, t0), "nothing measured yet");
        p.drawn(Duration::from_millis(30));
        p.ui_input(t0);
        assert!(!p.draw_now(false, false, t0), "unchanged: kept");
        assert!(!p.drew_last());
        assert!(p.draw_now(true, false, t0), "cheap: drawn while typing too");
    }

    #[test]
    fn an_expensive_terrain_waits_for_a_quiet_interface_and_takes_half_the_time_at_most() {
        let mut p = TerrainPacing::default();
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        assert!(p.draw_now(true, false, t0));
        p.drawn(Duration::from_millis(1500));
        assert_eq!(p.cost(), Some(Duration::from_millis(1500)));
        assert!(!p.draw_now(true, false, ms(2000)), "within twice its cost");
        assert!(p.draw_now(true, false, ms(3000)), "rested, quiet");
        p.ui_input(ms(6100));
        assert!(!p.draw_now(true, false, ms(6200)), "typing");
        assert!(p.draw_now(true, true, ms(6300)), "a screenshot's frame");
        assert!(!p.draw_now(true, false, ms(6600)), "quiet but not rested");
        assert!(p.draw_now(true, false, ms(9400)));
        // The cost follows what frames take now.
        p.drawn(Duration::from_millis(20));
        assert!(p.cost().unwrap() < Duration::from_millis(1200));
    }
}
