//! A stroke's input, one sample per window event: the press and every motion while the button is
//! held, each with the time it reached the editor and the pressure then. A sample's pixel goes to
//! the next frame, which picks the terrain point under it (the depth it drew, or the picture it
//! kept); when that frame's results come back the samples join the stroke in order. So a stroke
//! has the same samples whatever the frame rate: a slow terrain frame delays them, it does not
//! thin them out (issue 36, item 4).
//!
//! Strokes begin and end in the same queue as their samples, so they resolve in the order they
//! happened (the editor also resolves the last stroke's samples before a press begins the next).
//! Nothing here touches the GPU: the editor
//! passes the pixels to its frames and the picked points back ([`StrokeInput::send`],
//! [`StrokeInput::picked`]).

use crate::brush::stroke::StrokeSample;
use glam::Vec3;
use std::collections::VecDeque;

/// A sample waiting for its terrain point: the window pixel, seconds since the stroke began and
/// the pressure (0..1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PendingSample {
    pub pixel: [u32; 2],
    pub t: f32,
    pub pressure: f32,
}

/// What the queue holds, in the order it happened: a stroke begun (with what the editor needs to
/// start it, `S`), a sample, the stroke ended.
#[derive(Clone, Debug, PartialEq)]
pub enum StrokeEvent<S> {
    Begin(S),
    Sample(PendingSample),
    End,
}

/// An event whose sample has its terrain point: what the editor applies, in order. A sample that
/// picked the sky is dropped.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved<S> {
    Begin(S),
    /// The sample, and the terrain point it picked.
    Sample {
        sample: StrokeSample,
        point: Vec3,
    },
    End,
}

/// The events not yet sent to a frame, and those sent with each frame in flight.
pub struct StrokeInput<S> {
    queued: VecDeque<StrokeEvent<S>>,
    /// (frame number, its events), oldest first.
    sent: VecDeque<(u64, Vec<StrokeEvent<S>>)>,
}

impl<S> Default for StrokeInput<S> {
    fn default() -> Self {
        Self {
            queued: VecDeque::new(),
            sent: VecDeque::new(),
        }
    }
}

impl<S> StrokeInput<S> {
    pub fn push(&mut self, event: StrokeEvent<S>) {
        self.queued.push_back(event);
    }

    /// Whether every event has been resolved.
    pub fn is_idle(&self) -> bool {
        self.queued.is_empty() && self.sent.is_empty()
    }

    /// Whether events wait for a frame (not yet sent).
    pub fn has_queued(&self) -> bool {
        !self.queued.is_empty()
    }

    /// The events for frame `frame` (oldest first, with at most `room` samples; the rest wait for
    /// the next frame); returns the pixels it is to pick, in order, before any others it picks.
    /// Call it only for a frame that is submitted.
    pub fn send(&mut self, frame: u64, room: usize) -> Vec<[u32; 2]> {
        let mut events = Vec::new();
        let mut pixels = Vec::new();
        while let Some(e) = self.queued.front() {
            if let StrokeEvent::Sample(s) = e {
                if pixels.len() == room {
                    break;
                }
                pixels.push(s.pixel);
            }
            events.extend(self.queued.pop_front());
        }
        if !events.is_empty() {
            self.sent.push_back((frame, events));
        }
        pixels
    }

    /// Frame `frame`'s picked points came back (`points[i]` for the i-th pixel [`Self::send`]
    /// gave it); returns its events resolved and how many points they used. Frames older than it
    /// whose results never came (none should) lose their samples but keep their begins and ends.
    pub fn picked(&mut self, frame: u64, points: &[Option<Vec3>]) -> (Vec<Resolved<S>>, usize) {
        let mut out = Vec::new();
        let mut used = 0;
        while self.sent.front().is_some_and(|(f, _)| *f <= frame) {
            let (f, events) = self.sent.pop_front().expect("just seen");
            let mut points = points.iter().filter(|_| f == frame);
            for e in events {
                match e {
                    StrokeEvent::Begin(s) => out.push(Resolved::Begin(s)),
                    StrokeEvent::End => out.push(Resolved::End),
                    StrokeEvent::Sample(s) => {
                        let point = points.next().copied().flatten();
                        used += usize::from(f == frame);
                        if let Some(point) = point {
                            let sample = StrokeSample {
                                x: point.x,
                                y: point.z,
                                pressure: s.pressure,
                                t: s.t,
                            };
                            out.push(Resolved::Sample { sample, point });
                        }
                    }
                }
            }
        }
        (out, used)
    }

    /// Drops a stroke begun since the last frame (its begin and what followed), when the press
    /// turned out to be the interface's; returns whether there was one.
    pub fn drop_unsent_stroke(&mut self) -> bool {
        let begun = self
            .queued
            .iter()
            .position(|e| matches!(e, StrokeEvent::Begin(_)));
        if let Some(i) = begun {
            self.queued.truncate(i);
        }
        begun.is_some()
    }

    /// The events not yet sent, taken for picking at once (the frames in flight have all come
    /// back): their pixels, in order. Pass the points to [`Self::picked`] with `frame`.
    pub fn send_now(&mut self, frame: u64) -> Vec<[u32; 2]> {
        self.send(frame, usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drag of 2 s, 120 motion events along a line, drawn at `fps` frames per second: each frame
    /// sends what was queued, and its results come back two frames later (two frames in flight).
    /// The picking is an orthographic view of a plane (pixel (x, y) shows document point (x, y)).
    fn drag_at(fps: f64) -> Vec<Resolved<&'static str>> {
        let mut input = StrokeInput::default();
        let events: Vec<(f64, StrokeEvent<&str>)> = std::iter::once((0.0, StrokeEvent::Begin("b")))
            .chain((0..=120).map(|i| {
                let t = i as f64 / 60.0;
                let s = PendingSample {
                    pixel: [100 + 3 * i, 200 + i],
                    t: t as f32,
                    pressure: 0.5 + i as f32 / 480.0,
                };
                (t, StrokeEvent::Sample(s))
            }))
            .chain(std::iter::once((2.0, StrokeEvent::End)))
            .collect();
        let mut events = events.into_iter().peekable();
        let mut in_flight: VecDeque<(u64, Vec<[u32; 2]>)> = VecDeque::new();
        let mut out = Vec::new();
        let mut frame = 0u64;
        while events.peek().is_some() || !input.is_idle() {
            frame += 1;
            let now = frame as f64 / fps;
            while let Some((_, e)) = events.next_if(|(t, _)| *t <= now) {
                input.push(e);
            }
            if in_flight.len() == 2 {
                let (f, pixels) = in_flight.pop_front().unwrap();
                let points: Vec<_> = pixels
                    .iter()
                    .map(|p| Some(Vec3::new(p[0] as f32, 7.0, p[1] as f32)))
                    .collect();
                let (resolved, used) = input.picked(f, &points);
                assert_eq!(used, points.len());
                out.extend(resolved);
            }
            // A few pixels a frame at most, so a slow frame also carries some over.
            in_flight.push_back((frame, input.send(frame, 50)));
        }
        out
    }

    #[test]
    fn a_drag_gives_the_same_samples_at_60_fps_and_at_one_frame_a_second() {
        let fast = drag_at(60.0);
        let slow = drag_at(1.0);
        assert_eq!(fast.len(), 123, "a begin, 121 samples and an end");
        assert_eq!(fast[0], Resolved::Begin("b"));
        assert_eq!(fast[122], Resolved::End);
        let Resolved::Sample { sample, point } = fast[61] else {
            panic!("{:?}", fast[61]);
        };
        assert_eq!(
            sample,
            StrokeSample {
                x: 280.0,
                y: 260.0,
                pressure: 0.5 + 60.0 / 480.0,
                t: 1.0,
            }
        );
        assert_eq!(point.y, 7.0);
        assert_eq!(fast, slow);
        assert_eq!(drag_at(0.3), fast);
    }

    #[test]
    fn a_sample_over_the_sky_is_dropped_and_the_cursor_pick_after_the_samples_is_left() {
        let mut input = StrokeInput::default();
        input.push(StrokeEvent::Begin(1));
        for i in 0..3 {
            input.push(StrokeEvent::Sample(PendingSample {
                pixel: [i, 0],
                t: i as f32,
                pressure: 1.0,
            }));
        }
        assert_eq!(input.send(5, 10), vec![[0, 0], [1, 0], [2, 0]]);
        input.push(StrokeEvent::End);
        assert!(!input.is_idle());
        let p = |x: f32| Some(Vec3::new(x, 0.0, 0.0));
        // The frame also picked the cursor (a fourth point): it is not the stroke's.
        let (resolved, used) = input.picked(5, &[p(0.0), None, p(2.0), p(9.0)]);
        assert_eq!(used, 3);
        assert_eq!(resolved.len(), 3, "{resolved:?}");
        assert!(
            matches!(resolved[2], Resolved::Sample { sample, .. } if sample.x == 2.0 && sample.t == 2.0)
        );
        // The end waits for the next frame.
        assert!(input.has_queued());
        assert_eq!(input.send_now(6), Vec::<[u32; 2]>::new());
        assert_eq!(input.picked(6, &[]).0, vec![Resolved::End]);
        assert!(input.is_idle());
    }

    #[test]
    fn a_stroke_not_yet_sent_is_dropped_whole_and_one_sent_is_kept() {
        let mut input = StrokeInput::default();
        let sample = StrokeEvent::Sample(PendingSample {
            pixel: [1, 1],
            t: 0.0,
            pressure: 1.0,
        });
        input.push(StrokeEvent::Begin(1));
        input.push(sample.clone());
        assert_eq!(input.send(1, 10).len(), 1);
        input.push(sample.clone());
        input.push(StrokeEvent::End);
        assert!(!input.drop_unsent_stroke(), "the begun stroke was sent");
        input.push(StrokeEvent::Begin(2));
        input.push(sample);
        assert!(input.drop_unsent_stroke());
        assert_eq!(input.send(2, 10).len(), 1, "the first stroke's last sample");
        let (resolved, _) = input.picked(2, &[Some(Vec3::ZERO)]);
        assert_eq!(resolved.last(), Some(&Resolved::End));
        assert!(!resolved.contains(&Resolved::Begin(2)));
    }

    #[test]
    fn samples_past_the_room_wait_for_the_next_frame_and_an_older_frame_keeps_its_markers() {
        let mut input = StrokeInput::default();
        input.push(StrokeEvent::Begin(()));
        for i in 0..5 {
            input.push(StrokeEvent::Sample(PendingSample {
                pixel: [i, i],
                t: 0.0,
                pressure: 1.0,
            }));
        }
        assert_eq!(input.send(1, 2).len(), 2);
        assert_eq!(input.send(2, 2).len(), 2);
        assert_eq!(input.send(3, 2).len(), 1);
        // Frame 1's results never came: frame 2's carry on, frame 1's begin is kept.
        let some = |n: usize| vec![Some(Vec3::ZERO); n];
        let (resolved, used) = input.picked(2, &some(2));
        assert_eq!(used, 2);
        assert_eq!(resolved.len(), 3, "{resolved:?}");
        assert_eq!(resolved[0], Resolved::Begin(()));
        assert_eq!(input.picked(3, &some(1)).0.len(), 1);
        assert!(input.is_idle());
    }
}
