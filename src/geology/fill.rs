//! Depression filling before a run's first iteration (docs/geology.md, "Depression filling"):
//! priority-flood with an ε step (Barnes, Lehman & Mulla 2014). The outlets are the seeds; a
//! texel popped from the queue raises each unvisited neighbour q = p + k to
//! `max(z_q, z_p + ε·δ_k)`, so every texel drains to an outlet down a path that falls at least
//! ε a metre. The queue pops the lowest height first and, on equal heights, the lowest
//! row-major index, so the result does not depend on how the queue is built. CPU only: the
//! flood is one ordered sweep, run once before the iterations on either backend.

use super::cpu::{inside, outlet, OFFSETS};
use super::shared::GeologyPush;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A queue entry: height (ordered totally) then index.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry(OrderedHeight, u32);

#[derive(Clone, Copy, PartialEq)]
struct OrderedHeight(f32);

impl Eq for OrderedHeight {}

impl PartialOrd for OrderedHeight {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedHeight {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// ε·δ_k (m) for neighbour k: ε·τ on the axes, ε·τ·√2 on the diagonals (`p.diag`).
pub fn raise_step(p: &GeologyPush, eps: f32, k: usize) -> f32 {
    eps * if k & 1 == 1 { p.diag } else { p.tau }
}

/// Fills the depressions of the `p.size` grid `z` (m) in place, with slope `eps` (m/m, 0 for
/// flat fills). Outlets ([`outlet`]) never change; no texel is lowered. Returns how many texels
/// were raised.
pub fn priority_flood(z: &mut [f32], p: &GeologyPush, eps: f32) -> usize {
    let [w, h] = p.size;
    let mut visited = vec![false; z.len()];
    let mut queue = BinaryHeap::new();
    for (i, seen) in visited.iter_mut().enumerate() {
        let (x, y) = (i as i32 % w, i as i32 / w);
        if outlet([x, y], p, z[i]) {
            *seen = true;
            queue.push(Reverse(Entry(OrderedHeight(z[i]), i as u32)));
        }
    }
    let mut raised = 0;
    while let Some(Reverse(Entry(OrderedHeight(zp), i))) = queue.pop() {
        let (x, y) = (i as i32 % w, i as i32 / w);
        for (k, [dx, dy]) in OFFSETS.iter().enumerate() {
            let (qx, qy) = (x + dx, y + dy);
            if !inside(qx, qy, w, h) || visited[(qy * w + qx) as usize] {
                continue;
            }
            let q = (qy * w + qx) as usize;
            visited[q] = true;
            let floor = zp + raise_step(p, eps, k);
            if z[q] < floor {
                z[q] = floor;
                raised += 1;
            }
            queue.push(Reverse(Entry(OrderedHeight(z[q]), q as u32)));
        }
    }
    raised
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geology::cpu::{receiver, NO_RECEIVER};
    use crate::geology::params::DEFAULTS;

    /// Rough ground with pits: a deterministic hash, some texels dug deep.
    fn pitted(w: i32, h: i32) -> Vec<f32> {
        (0..w * h)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2_654_435_761) >> 8;
                let base = (v % 1000) as f32 * 0.01 + 3.0 * ((i % w) as f32 * 0.3).sin();
                if v % 7 == 0 {
                    base - 5.0
                } else {
                    base
                }
            })
            .collect()
    }

    fn push(w: i32, h: i32, base: Option<f32>) -> GeologyPush {
        DEFAULTS.push([w as u32, h as u32], 2.0, base)
    }

    /// The same flood with a frontier scanned whole for its lowest (height, index) entry each
    /// time: no heap, the order the queue is documented to pop.
    fn scanned_flood(z: &mut [f32], p: &GeologyPush, eps: f32) {
        let [w, h] = p.size;
        let mut visited = vec![false; z.len()];
        let mut frontier: Vec<usize> = Vec::new();
        for i in 0..z.len() {
            if outlet([i as i32 % w, i as i32 / w], p, z[i]) {
                visited[i] = true;
                frontier.push(i);
            }
        }
        while !frontier.is_empty() {
            let (at, _) = frontier
                .iter()
                .enumerate()
                .min_by(|a, b| z[*a.1].total_cmp(&z[*b.1]).then(a.1.cmp(b.1)))
                .unwrap();
            let i = frontier.swap_remove(at);
            let (x, y) = (i as i32 % w, i as i32 / w);
            for (k, [dx, dy]) in OFFSETS.iter().enumerate() {
                let (qx, qy) = (x + dx, y + dy);
                if !inside(qx, qy, w, h) || visited[(qy * w + qx) as usize] {
                    continue;
                }
                let q = (qy * w + qx) as usize;
                visited[q] = true;
                z[q] = z[q].max(z[i] + raise_step(p, eps, k));
                frontier.push(q);
            }
        }
    }

    /// Planchon & Darboux (2001) with ε = 0: the water surface starts at infinity off the
    /// outlets and falls to `max(z, lowest neighbour's surface)` until nothing moves.
    fn planchon_darboux(z: &[f32], p: &GeologyPush) -> Vec<f32> {
        let [w, h] = p.size;
        let mut s: Vec<f32> = (0..z.len())
            .map(|i| match outlet([i as i32 % w, i as i32 / w], p, z[i]) {
                true => z[i],
                false => f32::INFINITY,
            })
            .collect();
        loop {
            let mut moved = false;
            for i in 0..z.len() {
                let (x, y) = (i as i32 % w, i as i32 / w);
                let lowest = OFFSETS
                    .iter()
                    .filter_map(|[dx, dy]| {
                        let (qx, qy) = (x + dx, y + dy);
                        inside(qx, qy, w, h).then(|| s[(qy * w + qx) as usize])
                    })
                    .fold(f32::INFINITY, f32::min);
                let v = z[i].max(lowest);
                if v < s[i] {
                    s[i] = v;
                    moved = true;
                }
            }
            if !moved {
                return s;
            }
        }
    }

    #[test]
    fn the_flood_matches_a_scanned_frontier_bit_for_bit() {
        for (eps, base) in [(0.0, None), (1e-3, None), (0.05, Some(2.0))] {
            let p = push(37, 23, base);
            let z0 = pitted(37, 23);
            let (mut a, mut b) = (z0.clone(), z0.clone());
            let raised = priority_flood(&mut a, &p, eps);
            scanned_flood(&mut b, &p, eps);
            assert!(raised > 20, "ε {eps}: {raised} raised");
            assert_eq!(
                a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                b.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "ε {eps}"
            );
        }
    }

    #[test]
    fn a_flat_fill_is_the_spill_surface_of_planchon_darboux() {
        let p = push(41, 29, None);
        let z0 = pitted(41, 29);
        let mut z = z0.clone();
        priority_flood(&mut z, &p, 0.0);
        assert_eq!(z, planchon_darboux(&z0, &p));
    }

    /// With ε > 0 every texel drains: following receivers (the model's step 1) from any texel
    /// reaches an outlet, no texel is lowered, and the outlets stay as they were.
    #[test]
    fn with_a_slope_every_texel_drains_to_an_outlet() {
        let (w, h) = (48, 33);
        let p = push(w, h, Some(1.0));
        let z0 = pitted(w, h);
        let mut z = z0.clone();
        priority_flood(&mut z, &p, 1e-3);
        for i in 0..z.len() {
            let (x, y) = (i as i32 % w, i as i32 / w);
            assert!(z[i] >= z0[i]);
            if outlet([x, y], &p, z0[i]) {
                assert_eq!(z[i].to_bits(), z0[i].to_bits());
            }
        }
        let pits = |z: &[f32]| {
            (0..z.len())
                .filter(|&i| {
                    let (x, y) = (i as i32 % w, i as i32 / w);
                    !outlet([x, y], &p, z[i]) && receiver(z, &p, x, y) == NO_RECEIVER
                })
                .count()
        };
        assert!(pits(&z0) > 10, "the fixture has {} pits", pits(&z0));
        assert_eq!(pits(&z), 0);
        for start in 0..z.len() {
            let (mut x, mut y) = (start as i32 % w, start as i32 / w);
            let mut steps = 0;
            while !outlet([x, y], &p, z[(y * w + x) as usize]) {
                let k = receiver(&z, &p, x, y) as usize;
                x += OFFSETS[k][0];
                y += OFFSETS[k][1];
                steps += 1;
                assert!(steps <= z.len(), "texel {start} never reaches an outlet");
            }
        }
    }
}
