//! Garbage collection of the heap segment above the newest choice point:
//! mark from the register machine's roots (the argument registers and the
//! live environments' slots), the host's roots and the old cells bound
//! since that choice point (found on the trail), then slide the live cells
//! down. Backtracking never needs the collected
//! segment, so choice points are untouched. This keeps deterministic loops
//! in constant memory.
//!
//! The marks are a bitmap, a bit per cell, with a running count of marked
//! cells before each 64-cell word: a cell's new address is found from its
//! word's count and the marked bits before it, and the sliding pass skips
//! a word with no mark in one step. A collection thus costs about the live
//! cells plus a sixty-fourth of the garbage, not a pass over every cell.

use super::machine::Machine;
use super::term::Cell;

/// Fewest heap cells between collections.
const MIN_GAP: usize = 1 << 19;

/// The marks of a heap segment starting at `base`.
struct Marks {
    base: usize,
    bits: Vec<u64>,
    /// Marked cells in the words before each word (after `count`).
    before: Vec<usize>,
}

impl Marks {
    fn new(base: usize, size: usize) -> Marks {
        Marks { base, bits: vec![0; size.div_ceil(64)], before: Vec::new() }
    }

    /// Marks heap cell `a` (inside the segment): false when it already was.
    #[inline]
    fn set(&mut self, a: usize) -> bool {
        let i = a - self.base;
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        let was = self.bits[w] & bit != 0;
        self.bits[w] |= bit;
        !was
    }

    /// Counts the marks: the live cells.
    fn count(&mut self) -> usize {
        let mut n = 0;
        self.before = self
            .bits
            .iter()
            .map(|w| {
                let b = n;
                n += w.count_ones() as usize;
                b
            })
            .collect();
        n
    }

    /// The new address of marked cell `a` (after `count`).
    #[inline]
    fn forward(&self, a: usize) -> usize {
        let i = a - self.base;
        let below = self.bits[i / 64] & ((1u64 << (i % 64)) - 1);
        self.base + self.before[i / 64] + below.count_ones() as usize
    }
}

/// Compacts the heap above the newest choice point, keeping what `roots`
/// reach; `roots` are relocated in place.
pub fn compact(m: &mut Machine, roots: &mut [Cell]) {
    let mark = m.choices.last().map_or(0, |c| c.heap);
    let top = m.store.heap.len();
    m.gc_runs += 1;
    if top <= mark {
        m.set_gc_at(top + MIN_GAP);
        return;
    }
    let mut marks = Marks::new(mark, top - mark);
    let heap = &m.store.heap;
    let mut stack: Vec<Cell> = roots.to_vec();
    let trail_from = m.choices.last().map_or(0, |c| c.trail);
    let old_cells: Vec<usize> = m.store.trail[trail_from..].iter().copied().filter(|&a| a < mark).collect();
    for &a in &old_cells {
        stack.push(heap[a]);
    }

    // Mark.
    while let Some(c) = stack.pop() {
        match c {
            Cell::Ref(a) if a >= mark && a < top && marks.set(a) => {
                let v = heap[a];
                if v != Cell::Ref(a) {
                    stack.push(v);
                }
            }
            // A stale slot of a frame may point anywhere: only well-formed
            // terms inside the segment are followed.
            Cell::Str(p) if p >= mark && p < top => {
                let Cell::Fun(_, n) = heap[p] else { continue };
                if p + n as usize >= top {
                    continue;
                }
                marks.set(p);
                for (i, &c) in (p + 1..).zip(&heap[p + 1..=p + n as usize]) {
                    if marks.set(i) {
                        stack.push(c);
                    }
                }
            }
            Cell::Lst(p) if p >= mark && p + 1 < top => {
                for (i, &c) in (p..).zip(&heap[p..p + 2]) {
                    if marks.set(i) {
                        stack.push(c);
                    }
                }
            }
            _ => {}
        }
    }

    let live = mark + marks.count();
    let reloc = |c: Cell| -> Cell {
        match c {
            Cell::Ref(a) if a >= mark && a < top => Cell::Ref(marks.forward(a)),
            Cell::Str(p) if p >= mark && p < top => Cell::Str(marks.forward(p)),
            Cell::Lst(p) if p >= mark && p < top => Cell::Lst(marks.forward(p)),
            other => other,
        }
    };

    // Slide, a word of marks at a time (cells only move down, so each is
    // read before anything is written over it).
    let heap = &mut m.store.heap;
    let mut next = mark;
    for (w, &bits) in marks.bits.iter().enumerate() {
        let mut bits = bits;
        while bits != 0 {
            let i = mark + w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            heap[next] = reloc(heap[i]);
            next += 1;
        }
    }
    debug_assert_eq!(next, live);
    heap.truncate(live);
    for &a in &old_cells {
        heap[a] = reloc(heap[a]);
    }
    for r in roots.iter_mut() {
        *r = reloc(*r);
    }
    m.set_gc_at(live + live.max(MIN_GAP));
    if m.store.heap.capacity() > 4 * m.gc_at {
        m.store.heap.shrink_to(2 * m.gc_at);
    }
}
