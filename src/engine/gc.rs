//! Garbage collection of the heap segment above the newest choice point:
//! mark from the register machine's roots (the argument registers and the
//! live environments' slots), the host's roots and the old cells bound
//! since that choice point (found on the trail), then slide the live cells
//! down. Backtracking never needs the collected
//! segment, so choice points are untouched. This keeps deterministic loops
//! in constant memory.

use super::machine::Machine;
use super::term::Cell;

/// Fewest heap cells between collections.
const MIN_GAP: usize = 1 << 19;

/// Compacts the heap above the newest choice point, keeping what `roots`
/// reach; `roots` are relocated in place.
pub fn compact(m: &mut Machine, roots: &mut [Cell]) {
    let mark = m.choices.last().map_or(0, |c| c.heap);
    let top = m.store.heap.len();
    m.gc_runs += 1;
    if top <= mark {
        m.gc_at = top + MIN_GAP;
        return;
    }
    let size = top - mark;
    let mut marked = vec![false; size];
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
            Cell::Ref(a) if a >= mark && a < top && !marked[a - mark] => {
                marked[a - mark] = true;
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
                marked[p - mark] = true;
                for i in p + 1..=p + n as usize {
                    if !marked[i - mark] {
                        marked[i - mark] = true;
                        stack.push(heap[i]);
                    }
                }
            }
            Cell::Lst(p) if p >= mark && p + 1 < top => {
                for i in p..p + 2 {
                    if !marked[i - mark] {
                        marked[i - mark] = true;
                        stack.push(heap[i]);
                    }
                }
            }
            _ => {}
        }
    }

    // Forwarding addresses.
    let mut fwd = vec![0usize; size];
    let mut next = mark;
    for i in 0..size {
        if marked[i] {
            fwd[i] = next;
            next += 1;
        }
    }
    let reloc = |c: Cell| -> Cell {
        match c {
            Cell::Ref(a) if a >= mark && a < top => Cell::Ref(fwd[a - mark]),
            Cell::Str(p) if p >= mark && p < top => Cell::Str(fwd[p - mark]),
            Cell::Lst(p) if p >= mark && p < top => Cell::Lst(fwd[p - mark]),
            other => other,
        }
    };

    // Slide.
    let heap = &mut m.store.heap;
    for i in 0..size {
        if marked[i] {
            heap[fwd[i]] = reloc(heap[mark + i]);
        }
    }
    heap.truncate(next);
    for &a in &old_cells {
        heap[a] = reloc(heap[a]);
    }
    for r in roots.iter_mut() {
        *r = reloc(*r);
    }
    let live = next;
    m.gc_at = live + live.max(MIN_GAP);
    if m.store.heap.capacity() > 4 * m.gc_at {
        m.store.heap.shrink_to(2 * m.gc_at);
    }
}
