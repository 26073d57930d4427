//! Terms in the engine: a heap of cells with a trail, and self-contained
//! term templates (compiled clauses, findall results, exception balls).
//! Every traversal here uses an explicit stack, never Rust recursion, so
//! arbitrarily deep terms cannot overflow the Rust stack.

use super::atoms::{Atom, atom};
use super::stack::Stack;
use std::cmp::Ordering;

/// One heap cell. `Str` and `Lst` point at other cells; `Ref` to itself is
/// an unbound variable.
///
/// The layout is fixed (`repr(u32)`: a 32-bit tag, then the variant's
/// fields as in a C struct), as the native code reads and writes cells
/// (`vm::native`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(u32)]
pub enum Cell {
    /// A variable: unbound when it points at its own cell.
    Ref(usize),
    Atom(Atom),
    Int(i64),
    Flt(f64),
    /// A compound term: points at its `Fun` header, arguments follow.
    Str(usize),
    /// A compound header: name and arity.
    Fun(Atom, u32),
    /// A list cell `[H|T]`: points at two cells, head and tail.
    Lst(usize),
    /// A string object.
    Text(u32),
}

impl Cell {
    /// The cell as two words: the low word's low half is the tag (as
    /// `repr(u32)` numbers the variants) and its high half a 32-bit
    /// payload, the high word a 64-bit payload; a word the variant leaves
    /// unused is 0 here (padding in memory). Two cells are the same term
    /// cell exactly when their words are equal (a float by its bits). The
    /// native code sees cells this way (`vm::native`).
    #[inline]
    pub const fn words(self) -> [u64; 2] {
        match self {
            Cell::Ref(a) => [0, a as u64],
            Cell::Atom(a) => [1 | (a.0 as u64) << 32, 0],
            Cell::Int(i) => [2, i as u64],
            Cell::Flt(f) => [3, f.to_bits()],
            Cell::Str(p) => [4, p as u64],
            Cell::Fun(f, n) => [5 | (f.0 as u64) << 32, n as u64],
            Cell::Lst(p) => [6, p as u64],
            Cell::Text(t) => [7 | (t as u64) << 32, 0],
        }
    }

    /// An atom, number or string (a dereferenced cell that is neither a
    /// variable nor a compound).
    #[inline]
    pub fn is_atomic(self) -> bool {
        matches!(self, Cell::Atom(_) | Cell::Int(_) | Cell::Flt(_) | Cell::Text(_))
    }
}

/// A self-contained term: `cells[0]` is the root; `Ref(k)` is variable
/// number `k`; `Str`/`Lst` point inside `cells`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tmpl {
    pub cells: Vec<Cell>,
    pub nvars: usize,
}

impl Tmpl {
    /// A 64-bit hash of the term: equal terms copied out of one engine hash
    /// alike (the layout of a template is canonical).
    pub fn hash64(&self) -> u64 {
        hash_cells(&self.cells)
    }
}

/// [`Tmpl::hash64`] of a template's cells (such as a scratch copy's), by
/// their words ([`Cell::words`]).
pub fn hash_cells(cells: &[Cell]) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3 ^ cells.len() as u64;
    for c in cells {
        // One multiply a cell: the two words folded first (a rotation
        // keeps the high word's small payloads off the low word's tag).
        let [lo, hi] = c.words();
        h = (h ^ lo ^ hi.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 31;
    }
    h
}

/// A small ground term packed into four words, to be found in a table
/// without being copied out of the engine: an atom or a small integer, or
/// a compound of at most [`FlatKey::ARGS`] arguments each of which is one
/// ([`Store::flat_key`] on the heap, [`FlatKey::of_cells`] on a template,
/// alike for the same term). A move such as `m(1, 2, 1, 3)` is one; a
/// term with a variable, a float, a string, a list or a nested compound
/// is not. Two terms with keys are the same term exactly when their keys
/// are equal. No key is all zeros (a table's empty slot may be).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlatKey(pub [u64; 4]);

impl FlatKey {
    /// The most arguments of a compound with a key.
    pub const ARGS: usize = 6;

    /// The key of an atomic term (dereferenced).
    #[inline]
    fn atomic(c: Cell) -> Option<FlatKey> {
        Some(FlatKey([u64::from(Self::pack(c)?), 0, 0, 0]))
    }

    /// The key of the compound `f/n` whose arguments are `arg(i)` (from
    /// 0, dereferenced).
    #[inline]
    fn compound(f: Atom, n: u32, arg: impl Fn(usize) -> Cell) -> Option<FlatKey> {
        if n as usize > Self::ARGS {
            return None;
        }
        // The root's word has a bit of its own: no atom's or integer's.
        let mut w = [1 << 63 | u64::from(n) << 32 | u64::from(f.0), 0, 0, 0];
        for i in 0..n as usize {
            w[1 + i / 2] |= u64::from(Self::pack(arg(i))?) << (32 * (i % 2));
        }
        Some(FlatKey(w))
    }

    /// An argument's 32 bits (never 0): 01 then an atom's number, or 10
    /// then an integer in -2^29..2^29 offset to be positive.
    #[inline]
    fn pack(c: Cell) -> Option<u32> {
        const HALF: i64 = 1 << 29;
        match c {
            Cell::Atom(a) if a.0 < 1 << 30 => Some(1 << 30 | a.0),
            Cell::Int(i) if (-HALF..HALF).contains(&i) => Some(2 << 30 | (i + HALF) as u32),
            _ => None,
        }
    }

    /// The key of a template's term (cells laid out as `copy_out` lays
    /// them: a compound's arguments right after its functor).
    pub fn of_cells(cells: &[Cell]) -> Option<FlatKey> {
        match *cells.first()? {
            Cell::Str(p) => match cells.get(p) {
                Some(&Cell::Fun(f, n)) if cells.len() > p + n as usize => Self::compound(f, n, |i| cells[p + 1 + i]),
                _ => None,
            },
            c => Self::atomic(c),
        }
    }

    /// A 64-bit hash of the key.
    #[inline]
    pub fn hash64(&self) -> u64 {
        let [a, b, c, d] = self.0;
        let h = (a ^ b.rotate_left(21)).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (c ^ d.rotate_left(43));
        let h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^ h >> 31
    }
}

/// Constant arguments a probe compares (the first ones of a compound).
const PROBE_KEYS: usize = 4;

/// A term prepared for scanning a list (see [`Store::probe`]).
pub struct Probe {
    x: Cell,
    functor: Option<(Atom, u32)>,
    keys: [(u32, Key); PROBE_KEYS],
    n: usize,
}

/// A probed argument: a constant, or a compound's functor.
#[derive(Clone, Copy)]
enum Key {
    Atom(Atom),
    Int(i64),
    Fun(Atom, u32),
}

/// The subterms of a term, depth first, left to right, each dereferenced
/// (`next`). A walk that grows past the heap's size checks the term once:
/// if it is cyclic, a compound met again is not entered again, so that the
/// walk ends (having met every subterm at least once).
pub struct TermWalk {
    root: Cell,
    stack: Vec<Cell>,
    /// `None` once the term has been checked.
    count: Option<HeapCount>,
    seen: Option<super::db::FastMap<usize, ()>>,
}

impl TermWalk {
    pub fn new(store: &Store, root: Cell) -> TermWalk {
        TermWalk { root, stack: vec![root], count: Some(HeapCount::new(store)), seen: None }
    }

    pub fn next(&mut self, store: &Store) -> Option<Cell> {
        let c = store.deref(self.stack.pop()?);
        if let Cell::Str(p) | Cell::Lst(p) = c {
            if self.count.as_mut().is_some_and(HeapCount::step) {
                self.count = None;
                if !store.acyclic(self.root) {
                    self.seen = Some(Default::default());
                }
            }
            if let Some(seen) = &mut self.seen
                && seen.insert(p, ()).is_some()
            {
                return Some(c);
            }
            store.push_args(c, &mut self.stack);
        }
        Some(c)
    }
}

/// The pairs of compound terms (by address, either order) that a walk
/// over two rational trees has met: each is taken apart once.
#[derive(Debug, Default)]
pub struct CompoundPairs(super::db::FastMap<(usize, usize), ()>);

impl CompoundPairs {
    /// Records the pair: false when it was met before.
    pub fn insert(&mut self, p: usize, q: usize) -> bool {
        self.0.insert((p.min(q), p.max(q)), ()).is_none()
    }

    /// Runs a walk over two terms that binds nothing (`walk(seen)`): first
    /// without `seen`, counting with [`CompoundPairs::enter`];
    /// if that runs out (`None`: the terms may be cyclic), again on
    /// rational trees.
    pub fn walk<T>(walk: impl Fn(Option<&mut CompoundPairs>) -> Option<T>) -> T {
        walk(None).unwrap_or_else(|| walk(Some(&mut CompoundPairs::default())).expect("a rational-tree walk ends"))
    }

    /// A pair of compounds `p`, `q` met by such a walk: whether to take it
    /// apart (not when met before, on rational trees), or `None` when a
    /// walk without `seen` has taken apart more than the heap has cells.
    #[inline]
    pub fn enter(seen: &mut Option<&mut CompoundPairs>, count: &mut HeapCount, p: usize, q: usize) -> Option<bool> {
        match seen {
            Some(seen) => Some(seen.insert(p, q)),
            None if count.step() => None,
            None => Some(true),
        }
    }
}

/// A term that cannot be copied because it is cyclic (`X = f(X)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cyclic;

/// Counts the compounds a walk takes apart (list cells, structures, or
/// pairs of them), down from the heap's size, so that no walk runs forever
/// on a cyclic term (`L = [a|L]`, `X = f(X)`): every compound is on the
/// heap at its own address, so a walk of a list that passes more cells
/// than the heap has has come round again, and a walk of acyclic terms
/// takes apart more compounds only where they share subterms. (One
/// decrement a compound: list walks are hot in game code.)
pub struct HeapCount {
    left: usize,
}

impl HeapCount {
    pub fn new(store: &Store) -> HeapCount {
        HeapCount { left: store.heap.len() + 1 }
    }

    /// Counts one compound: true when that is more than the heap has
    /// (once: a walk that goes on must stop counting).
    #[inline(always)]
    pub fn step(&mut self) -> bool {
        self.left -= 1;
        self.left == 0
    }
}

/// The heap and trail.
#[derive(Debug, Default)]
pub struct Store {
    /// The heap and the trail are `Stack`s, whose length and buffer
    /// native code reads (and grows while there is room).
    pub heap: Stack<Cell>,
    pub trail: Stack<usize>,
    /// Heap top at the newest choice point: variables below it are trailed
    /// when bound.
    pub hb: usize,
    /// String objects (`"text"`), by number, and their bytes in all.
    pub texts: Vec<std::rc::Rc<str>>,
    pub text_bytes: usize,
    /// Scratch stacks reused by unification and copying.
    pairs: Vec<(Cell, Cell)>,
    copy_work: Vec<(Cell, usize)>,
    /// Scratch cells of `copy_out` (the template gets an exact-size copy).
    copy_cells: Vec<Cell>,
    /// The compound pairs met by a unification of rational trees.
    rational: CompoundPairs,
}

impl Store {
    /// The cell at heap address `a`, which a live term holds: read without
    /// a bounds check (see "The heap invariant" in `crates/engine/src/engine/README.md`;
    /// debug builds, and so the test suite, check it).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn at(&self, a: usize) -> Cell {
        debug_assert!(a < self.heap.len(), "heap address {a} at or above the top {}", self.heap.len());
        // SAFETY: every address held by a live term is below the heap top:
        // terms are built upwards, backtracking cuts the heap back only to
        // a choice point's top, with every cell that survives (bindings
        // undone by the trail, registers restored) older than that, and
        // garbage collection relocates every live address.
        unsafe { *self.heap.get_unchecked(a) }
    }

    #[inline]
    pub fn deref(&self, mut c: Cell) -> Cell {
        while let Cell::Ref(a) = c {
            let v = self.at(a);
            if let Cell::Ref(b) = v {
                if b == a {
                    return c;
                }
            } else {
                return v;
            }
            c = v;
        }
        c
    }

    /// A fresh unbound variable.
    #[inline]
    pub fn new_var(&mut self) -> Cell {
        let a = self.heap.len();
        self.heap.push(Cell::Ref(a));
        Cell::Ref(a)
    }

    /// Binds the unbound variable at `a` to `v`.
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) fn bind(&mut self, a: usize, v: Cell) {
        debug_assert!(a < self.heap.len(), "binding {a} at or above the top {}", self.heap.len());
        // SAFETY: `a` is an unbound variable of a live term (see `at`).
        unsafe { *self.heap.get_unchecked_mut(a) = v };
        if a < self.hb {
            self.trail.push(a);
        }
    }

    /// Undoes bindings back to trail length `mark`.
    pub fn undo_to(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let a = self.trail.pop().expect("trail is longer than mark");
            if a < self.heap.len() {
                self.heap[a] = Cell::Ref(a);
            }
        }
    }

    /// Builds `name(args...)` on the heap.
    pub fn new_struct(&mut self, name: Atom, args: &[Cell]) -> Cell {
        if args.is_empty() {
            return Cell::Atom(name);
        }
        let p = self.heap.len();
        self.heap.push(Cell::Fun(name, args.len() as u32));
        self.heap.extend_from_slice(args);
        Cell::Str(p)
    }

    pub fn new_list_cell(&mut self, head: Cell, tail: Cell) -> Cell {
        let p = self.heap.len();
        self.heap.push(head);
        self.heap.push(tail);
        Cell::Lst(p)
    }

    /// Builds a proper list.
    pub fn new_list(&mut self, items: &[Cell]) -> Cell {
        self.new_partial_list(items, Cell::Atom(atom::NIL))
    }

    pub fn new_partial_list(&mut self, items: &[Cell], tail: Cell) -> Cell {
        if items.is_empty() {
            return tail;
        }
        let p = self.heap.len();
        for (i, &it) in items.iter().enumerate() {
            self.heap.push(it);
            if i + 1 < items.len() {
                self.heap.push(Cell::Lst(p + 2 * (i + 1)));
            } else {
                self.heap.push(tail);
            }
        }
        Cell::Lst(p)
    }

    /// Name and arity of a callable or compound cell (after deref).
    pub fn functor(&self, c: Cell) -> Option<(Atom, usize)> {
        match c {
            Cell::Atom(a) => Some((a, 0)),
            Cell::Str(p) => match self.heap[p] {
                Cell::Fun(f, n) => Some((f, n as usize)),
                _ => None,
            },
            Cell::Lst(_) => Some((atom::DOT, 2)),
            _ => None,
        }
    }

    /// Pushes the arguments of a compound cell (after deref) on `stack`,
    /// last first, so that popping visits them left to right.
    #[inline]
    pub fn push_args(&self, c: Cell, stack: &mut Vec<Cell>) {
        match c {
            Cell::Str(p) => {
                if let Cell::Fun(_, n) = self.heap[p] {
                    stack.extend(self.heap[p + 1..p + 1 + n as usize].iter().rev());
                }
            }
            Cell::Lst(p) => {
                stack.push(self.heap[p + 1]);
                stack.push(self.heap[p]);
            }
            _ => {}
        }
    }

    /// The elements of a list and what ends it (`[]` for a proper list; a
    /// list cell for a cyclic list, which is no list either).
    pub fn list_walk(&self, c: Cell) -> (Vec<Cell>, Cell) {
        let mut v = Vec::new();
        let (_, end) = self.list_each(c, |e| v.push(e));
        (v, end)
    }

    /// The length of a list and what ends it (as [`Store::list_walk`]).
    pub fn list_end(&self, c: Cell) -> (usize, Cell) {
        self.list_each(c, |_| {})
    }

    /// Calls `f` on each element of a list: their number and what ends it.
    pub fn list_each(&self, c: Cell, mut f: impl FnMut(Cell)) -> (usize, Cell) {
        let mut n = 0;
        let mut cycle = HeapCount::new(self);
        let mut l = self.deref(c);
        while let Cell::Lst(p) = l {
            if cycle.step() {
                break;
            }
            f(self.at(p));
            n += 1;
            l = self.deref(self.at(p + 1));
        }
        (n, l)
    }

    /// Argument `i` (0-based) of a compound cell.
    #[inline]
    pub fn arg(&self, c: Cell, i: usize) -> Cell {
        match c {
            Cell::Str(p) => self.heap[p + 1 + i],
            Cell::Lst(p) => self.heap[p + i],
            _ => panic!("arg of a non-compound"),
        }
    }

    /// Unifies two terms; bindings are trailed as needed. On failure some
    /// bindings may remain: the caller backtracks.
    #[inline]
    pub fn unify(&mut self, a: Cell, b: Cell) -> bool {
        let (a, b) = (self.deref(a), self.deref(b));
        match self.unify_flat(a, b) {
            Some(ok) => ok,
            None => self.unify_terms(a, b),
        }
    }

    /// Unifies two dereferenced cells when no work stack is needed (a
    /// variable on either side, or an atom or integer): `None` for the
    /// rest. A variable is bound to the older one.
    #[inline(always)]
    fn unify_flat(&mut self, a: Cell, b: Cell) -> Option<bool> {
        Some(match (a, b) {
            (Cell::Ref(x), Cell::Ref(y)) => {
                if x < y {
                    self.bind(y, a);
                } else if x > y {
                    self.bind(x, b);
                }
                true
            }
            (Cell::Ref(x), _) => {
                self.bind(x, b);
                true
            }
            (_, Cell::Ref(y)) => {
                self.bind(y, a);
                true
            }
            (Cell::Atom(x), Cell::Atom(y)) => x == y,
            (Cell::Int(x), Cell::Int(y)) => x == y,
            // An atom or integer against anything of another kind.
            (Cell::Atom(_) | Cell::Int(_), _) | (_, Cell::Atom(_) | Cell::Int(_)) => false,
            _ => return None,
        })
    }

    /// What [`Store::probe_may_unify`] compares elements with: `x`, and for
    /// a compound its functor and, for its first arguments that are
    /// constants or compounds, the constant or the functor, read once.
    pub fn probe(&self, x: Cell) -> Probe {
        let x = self.deref(x);
        let mut p = Probe { x, functor: None, keys: [(0, Key::Int(0)); PROBE_KEYS], n: 0 };
        if let Cell::Str(s) = x {
            let Cell::Fun(f, arity) = self.at(s) else { unreachable!("Str points at Fun") };
            p.functor = Some((f, arity));
            for i in 1..=arity as usize {
                if p.n == PROBE_KEYS {
                    break;
                }
                let key = match self.deref(self.at(s + i)) {
                    Cell::Atom(a) => Key::Atom(a),
                    Cell::Int(i) => Key::Int(i),
                    Cell::Str(q) => match self.at(q) {
                        Cell::Fun(g, m) => Key::Fun(g, m),
                        _ => unreachable!("Str points at Fun"),
                    },
                    _ => continue,
                };
                p.keys[p.n] = (i as u32, key);
                p.n += 1;
            }
        }
        p
    }

    /// [`Store::may_unify`] of the probed term and `e`.
    #[inline(always)]
    pub fn probe_may_unify(&self, p: &Probe, e: Cell) -> bool {
        let Some((f, n)) = p.functor else { return self.may_unify(p.x, e) };
        match self.deref(e) {
            Cell::Str(s) => {
                matches!(self.at(s), Cell::Fun(g, m) if g == f && m == n)
                    && p.keys[..p.n].iter().all(|&(i, k)| match (self.deref(self.at(s + i as usize)), k) {
                        (Cell::Ref(_), _) => true,
                        (Cell::Int(a), Key::Int(b)) => a == b,
                        (Cell::Atom(a), Key::Atom(b)) => a == b,
                        (Cell::Str(q), Key::Fun(g, m)) => matches!(self.at(q), Cell::Fun(h, j) if h == g && j == m),
                        _ => false,
                    })
            }
            Cell::Ref(_) => true,
            _ => false,
        }
    }

    /// A quick test that never binds: false when `a` and `b` certainly do
    /// not unify (different constants, or compounds whose functors or
    /// constant arguments differ); true when they may.
    pub fn may_unify(&self, a: Cell, b: Cell) -> bool {
        let clash = |x: Cell, y: Cell| match (x, y) {
            (Cell::Atom(x), Cell::Atom(y)) => x != y,
            (Cell::Int(x), Cell::Int(y)) => x != y,
            (Cell::Atom(_), Cell::Int(_)) | (Cell::Int(_), Cell::Atom(_)) => true,
            _ => false,
        };
        match (self.deref(a), self.deref(b)) {
            (Cell::Str(p), Cell::Str(q)) => {
                if self.at(p) != self.at(q) {
                    return false;
                }
                let Cell::Fun(_, n) = self.at(p) else { return true };
                (1..=n as usize).all(|i| !clash(self.deref(self.at(p + i)), self.deref(self.at(q + i))))
            }
            (x, y) => !clash(x, y),
        }
    }

    /// Unifies a term with an atomic constant (a clause's constant
    /// argument).
    #[inline(always)]
    pub fn unify_const(&mut self, v: Cell, c: Cell) -> bool {
        match self.deref(v) {
            Cell::Ref(r) => {
                self.bind(r, c);
                true
            }
            v => v == c || (matches!(c, Cell::Text(_) | Cell::Flt(_)) && self.unify_terms(v, c)),
        }
    }

    fn unify_terms(&mut self, a: Cell, b: Cell) -> bool {
        let base = self.pairs.len();
        // Two structures (the commonest case) are taken apart here: when
        // their arguments are variables and constants, no pair waits.
        let ok = match (a, b) {
            (Cell::Str(p), Cell::Str(q)) => {
                self.unify_structs(p, q) && (self.pairs.len() == base || self.unify_loop(base))
            }
            _ => {
                self.pairs.push((a, b));
                self.unify_loop(base)
            }
        };
        self.pairs.truncate(base);
        ok
    }

    /// Unifies the structures at `p` and `q`: their functors, then the
    /// arguments first to last, variables and atoms or integers in place;
    /// compound (or other) pairs are left on `pairs`, the last on top, so a
    /// chain through last arguments takes no stack.
    #[inline(always)]
    fn unify_structs(&mut self, p: usize, q: usize) -> bool {
        if p == q {
            return true;
        }
        let (Cell::Fun(f, n), Cell::Fun(g, m)) = (self.at(p), self.at(q)) else {
            return false;
        };
        if f != g || n != m {
            return false;
        }
        for i in 1..=n as usize {
            let (x, y) = (self.deref(self.at(p + i)), self.deref(self.at(q + i)));
            match self.unify_flat(x, y) {
                Some(true) => {}
                Some(false) => return false,
                None => self.pairs.push((x, y)),
            }
        }
        true
    }

    /// Unifies the pairs on `pairs` above `base`. Taking apart more
    /// compound pairs than the heap has cells happens only when the terms
    /// are cyclic (or share much): the rest is then unified as rational
    /// trees, a pair of compounds met again being skipped (assumed to
    /// unify, as it does if the rest does), so that it ends.
    fn unify_loop(&mut self, base: usize) -> bool {
        self.unify_pairs::<false>(base)
    }

    #[inline(always)]
    fn unify_pairs<const RATIONAL: bool>(&mut self, base: usize) -> bool {
        let mut count = HeapCount::new(self);
        while self.pairs.len() > base {
            let (a, b) = self.pairs.pop().expect("pairs not empty");
            let a = self.deref(a);
            let b = self.deref(b);
            match self.unify_flat(a, b) {
                Some(true) => continue,
                Some(false) => return false,
                None => {}
            }
            match (a, b) {
                (Cell::Flt(x), Cell::Flt(y)) => {
                    if x.to_bits() != y.to_bits() && x != y {
                        return false;
                    }
                }
                (Cell::Text(x), Cell::Text(y)) => {
                    if x != y && !self.texts_equal(x, y) {
                        return false;
                    }
                }
                (Cell::Lst(p), Cell::Lst(q)) | (Cell::Str(p), Cell::Str(q)) if p != q => {
                    if RATIONAL {
                        if !self.rational.insert(p, q) {
                            continue;
                        }
                    } else if count.step() {
                        self.pairs.push((a, b));
                        return self.unify_rational(base);
                    }
                    if let Cell::Lst(_) = a {
                        self.pairs.push((self.at(p + 1), self.at(q + 1)));
                        self.pairs.push((self.at(p), self.at(q)));
                    } else if !self.unify_structs(p, q) {
                        return false;
                    }
                }
                (Cell::Lst(_), Cell::Lst(_)) | (Cell::Str(_), Cell::Str(_)) => {}
                _ => return false,
            }
        }
        true
    }

    /// `unify_loop` on rational trees (cyclic terms).
    #[cold]
    #[inline(never)]
    fn unify_rational(&mut self, base: usize) -> bool {
        let ok = self.unify_pairs::<true>(base);
        self.rational = CompoundPairs::default();
        ok
    }

    fn texts_equal(&self, x: u32, y: u32) -> bool {
        self.texts[x as usize] == self.texts[y as usize]
    }

    /// Stores a string object.
    pub fn new_text(&mut self, s: &str) -> Cell {
        self.text_bytes += s.len();
        self.texts.push(std::rc::Rc::from(s));
        Cell::Text((self.texts.len() - 1) as u32)
    }

    pub fn text(&self, id: u32) -> &str {
        &self.texts[id as usize]
    }

    /// Copies a heap term into a self-contained template; variables are
    /// numbered in order of first appearance and their heap addresses
    /// appended to `vars` (which may already hold some, shared between
    /// several copies).
    pub fn copy_out(&mut self, root: Cell, vars: &mut Vec<usize>) -> Result<Tmpl, Cyclic> {
        self.copy_out_scratch(root, vars)?;
        Ok(Tmpl { nvars: vars.len(), cells: self.copy_cells.as_slice().into() })
    }

    /// Whether a term is finite: `X = f(X)` (no occurs check, as in every
    /// Prolog) makes one that is not. A walk that takes apart no more
    /// compounds than the heap has cells shows it at once, with no memory
    /// but its stack (a query's answer is checked so, however long); past
    /// that (a cyclic term, or one that shares much) the term is walked
    /// again remembering the compounds on the path from the root.
    pub fn acyclic(&self, root: Cell) -> bool {
        let mut count = HeapCount::new(self);
        let mut stack = vec![root];
        while let Some(c) = stack.pop() {
            let c = self.deref(c);
            if let Cell::Str(_) | Cell::Lst(_) = c {
                if count.step() {
                    return self.acyclic_by_path(root);
                }
                self.push_args(c, &mut stack);
            }
        }
        true
    }

    fn acyclic_by_path(&self, root: Cell) -> bool {
        // A compound's address: on the path (true) or done (false).
        let mut seen: super::db::FastMap<usize, bool> = Default::default();
        // A cell to visit, or (`true`) a compound to leave.
        let mut stack = vec![(root, false)];
        while let Some((c, leave)) = stack.pop() {
            let c = self.deref(c);
            let p = match c {
                Cell::Str(p) | Cell::Lst(p) => p,
                _ => continue,
            };
            if leave {
                seen.insert(p, false);
                continue;
            }
            match seen.get(&p) {
                Some(true) => return false,
                Some(false) => continue,
                None => {}
            }
            seen.insert(p, true);
            stack.push((c, true));
            let args = match c {
                Cell::Str(p) => match self.heap[p] {
                    Cell::Fun(_, n) => p + 1..p + 1 + n as usize,
                    _ => unreachable!("Str points at Fun"),
                },
                _ => p..p + 2,
            };
            stack.extend(self.heap[args].iter().rev().map(|&a| (a, false)));
        }
        true
    }

    /// The cells of the last `copy_out_scratch`.
    pub fn last_copy(&self) -> &[Cell] {
        &self.copy_cells
    }

    /// `copy_out` of an atomic term, or of a compound whose arguments are
    /// atomic or compounds of atomic arguments (a move such as
    /// `m(2, 1, 2, 2)`, a position such as `s(white, 8, 8, b(w, ...))`),
    /// into `out` (cleared): the cells `copy_out` would give, laid out as
    /// its walk lays them (the compound arguments last to first), without
    /// its work list; false for any other term (`out` then holds a part of
    /// it).
    #[inline]
    fn copy_flat(&self, root: Cell, out: &mut Vec<Cell>) -> bool {
        out.clear();
        let p = match self.deref(root) {
            Cell::Str(p) => p,
            c => {
                out.push(c);
                return c.is_atomic();
            }
        };
        let Cell::Fun(f, n) = self.heap[p] else { unreachable!("Str points at Fun") };
        out.extend_from_slice(&[Cell::Str(1), Cell::Fun(f, n)]);
        let mut nested = false;
        for i in 0..n as usize {
            let a = self.deref(self.heap[p + 1 + i]);
            match a {
                // A compound argument's heap address, for now.
                Cell::Str(_) => nested = true,
                a if a.is_atomic() => {}
                _ => return false,
            }
            out.push(a);
        }
        if nested {
            for i in (0..n as usize).rev() {
                let Cell::Str(q) = out[2 + i] else { continue };
                let Cell::Fun(g, m) = self.heap[q] else { unreachable!("Str points at Fun") };
                out[2 + i] = Cell::Str(out.len());
                out.push(Cell::Fun(g, m));
                for j in 0..m as usize {
                    let b = self.deref(self.heap[q + 1 + j]);
                    if !b.is_atomic() {
                        return false;
                    }
                    out.push(b);
                }
            }
        }
        true
    }

    /// The [`FlatKey`] of the term at `root`, read where it is.
    #[inline]
    pub fn flat_key(&self, root: Cell) -> Option<FlatKey> {
        match self.deref(root) {
            Cell::Str(p) => {
                let Cell::Fun(f, n) = self.heap[p] else { unreachable!("Str points at Fun") };
                FlatKey::compound(f, n, |i| self.deref(self.heap[p + 1 + i]))
            }
            c => FlatKey::atomic(c),
        }
    }

    /// `copy_out` into a buffer the store keeps (no allocation once it has
    /// grown): the template's cells, valid until the next copy. A copy
    /// larger than the heap is either of a term with shared subterms or of
    /// a cyclic one, which cannot be copied: the term is checked once then.
    pub fn copy_out_scratch(&mut self, root: Cell, vars: &mut Vec<usize>) -> Result<&[Cell], Cyclic> {
        // The common answer (an atom, or a compound of atoms and numbers,
        // which has no variable) without the general walk.
        let mut cells = std::mem::take(&mut self.copy_cells);
        let flat = self.copy_flat(root, &mut cells);
        self.copy_cells = cells;
        if flat {
            return Ok(&self.copy_cells);
        }
        self.copy_walk(root, vars)
    }

    /// `copy_out_scratch` by the general walk, for any term.
    fn copy_walk(&mut self, root: Cell, vars: &mut Vec<usize>) -> Result<&[Cell], Cyclic> {
        // Mark known variables so each is found in constant time.
        for (k, &a) in vars.iter().enumerate() {
            self.heap[a] = Cell::Fun(atom::VAR_, k as u32);
        }
        let mut cells = std::mem::take(&mut self.copy_cells);
        cells.clear();
        cells.push(Cell::Atom(atom::NIL));
        let mut work = std::mem::take(&mut self.copy_work);
        work.clear();
        work.push((root, 0));
        let mut check_at = self.heap.len() + 1024;
        let mut cyclic = false;
        while let Some((c, dst)) = work.pop() {
            if cells.len() > check_at {
                check_at = usize::MAX;
                // The marks of the variables met so far are still in place:
                // `acyclic` reads them as constants.
                if !self.acyclic(root) {
                    cyclic = true;
                    break;
                }
            }
            let c = self.deref(c);
            cells[dst] = match c {
                Cell::Ref(a) => {
                    let k = vars.len();
                    vars.push(a);
                    self.heap[a] = Cell::Fun(atom::VAR_, k as u32);
                    Cell::Ref(k)
                }
                Cell::Fun(_, k) => Cell::Ref(k as usize),
                Cell::Str(p) => {
                    let Cell::Fun(f, n) = self.heap[p] else { unreachable!("Str points at Fun") };
                    let q = cells.len();
                    cells.push(Cell::Fun(f, n));
                    for i in 0..n as usize {
                        // Atomic arguments are copied at once; the others
                        // (and variables, marked or not) go through `work`.
                        let a = self.deref(self.heap[p + 1 + i]);
                        if a.is_atomic() {
                            cells.push(a);
                        } else {
                            cells.push(Cell::Atom(atom::NIL));
                            work.push((a, q + 1 + i));
                        }
                    }
                    Cell::Str(q)
                }
                Cell::Lst(p) => {
                    let q = cells.len();
                    let (h, t) = (self.deref(self.at(p)), self.deref(self.at(p + 1)));
                    cells.push(if h.is_atomic() { h } else { Cell::Atom(atom::NIL) });
                    cells.push(if t.is_atomic() { t } else { Cell::Atom(atom::NIL) });
                    if !t.is_atomic() {
                        work.push((t, q + 1));
                    }
                    if !h.is_atomic() {
                        work.push((h, q));
                    }
                    Cell::Lst(q)
                }
                other => other,
            };
        }
        for &a in vars.iter() {
            self.heap[a] = Cell::Ref(a);
        }
        self.copy_work = work;
        self.copy_cells = cells;
        if cyclic {
            self.copy_cells.clear();
            return Err(Cyclic);
        }
        Ok(&self.copy_cells)
    }

    /// Copies a template onto the heap with fresh variables (or the values
    /// already in `frame`, which is filled in as variables are created).
    pub fn copy_in(&mut self, t: &Tmpl, frame: &mut Vec<Option<Cell>>) -> Cell {
        self.copy_in_cells(&t.cells, t.nvars, frame)
    }

    /// `copy_in` of a template given as its cells and number of variables.
    pub fn copy_in_cells(&mut self, cells: &[Cell], nvars: usize, frame: &mut Vec<Option<Cell>>) -> Cell {
        if frame.len() < nvars {
            frame.resize(nvars, None);
        }
        // Templates are laid out depth first: everything below the root is
        // the block from cell 1 on.
        self.build(cells, 0, cells.len(), frame)
    }

    /// Builds template cell `root` of `cells` on the heap, taking variable
    /// values from `frame` and filling it in for new ones. A structure's
    /// cells (its whole subtree) are `cells[p..end]`, where `p` is where
    /// `root` points: they are copied in one pass, pointers relocated.
    #[inline]
    pub fn build(&mut self, cells: &[Cell], root: usize, end: usize, frame: &mut [Option<Cell>]) -> Cell {
        match cells[root] {
            Cell::Ref(k) => match frame[k] {
                Some(v) => self.deref(v),
                None => {
                    let v = self.new_var();
                    frame[k] = Some(v);
                    v
                }
            },
            Cell::Str(p) => Cell::Str(self.copy_block(cells, p, end, frame)),
            Cell::Lst(p) => Cell::Lst(self.copy_block(cells, p, end, frame)),
            other => other,
        }
    }

    /// Appends `cells[start..end]` to the heap, relocating pointers and
    /// binding template variables through `frame`; returns where
    /// `cells[start]` landed.
    #[inline]
    fn copy_block(&mut self, cells: &[Cell], start: usize, end: usize, frame: &mut [Option<Cell>]) -> usize {
        let base = self.heap.len();
        let block = &cells[start..end];
        self.heap.extend_with(block.len(), |i| match block[i] {
            Cell::Ref(k) => match frame[k] {
                Some(v) => v,
                None => {
                    let v = Cell::Ref(base + i);
                    frame[k] = Some(v);
                    v
                }
            },
            Cell::Str(q) => Cell::Str(q - start + base),
            Cell::Lst(q) => Cell::Lst(q - start + base),
            other => other,
        });
        base
    }
}

/// For each cell of a depth-first template that points at a structure, the
/// end of that structure's subtree (other cells: 0).
pub fn subtree_ends(cells: &[Cell]) -> Vec<u32> {
    let mut ends = vec![0u32; cells.len()];
    for i in (0..cells.len()).rev() {
        let (p, size) = match cells[i] {
            Cell::Str(p) => match cells[p] {
                Cell::Fun(_, n) => (p, n as usize + 1),
                _ => continue,
            },
            Cell::Lst(p) => (p, 2),
            _ => continue,
        };
        ends[i] = ends[p..p + size].iter().fold((p + size) as u32, |e, &x| e.max(x));
    }
    ends
}

/// The standard order of terms: Var < Number < String < Atom < Compound
/// (as SWI-Prolog implements it).
pub fn type_rank(c: Cell) -> u8 {
    match c {
        Cell::Ref(_) => 0,
        Cell::Flt(_) | Cell::Int(_) => 1,
        // SWI-Prolog orders strings before atoms.
        Cell::Text(_) => 2,
        Cell::Atom(_) => 3,
        Cell::Str(_) | Cell::Lst(_) | Cell::Fun(..) => 5,
    }
}

/// Compares two numbers in standard order (by value; a float before an
/// equal integer).
pub fn compare_numbers(a: Cell, b: Cell) -> Ordering {
    match (a, b) {
        (Cell::Int(x), Cell::Int(y)) => x.cmp(&y),
        (Cell::Flt(x), Cell::Flt(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Cell::Int(x), Cell::Flt(y)) => match (x as f64).partial_cmp(&y).unwrap_or(Ordering::Equal) {
            Ordering::Equal => Ordering::Greater,
            o => o,
        },
        (Cell::Flt(x), Cell::Int(y)) => match x.partial_cmp(&(y as f64)).unwrap_or(Ordering::Equal) {
            Ordering::Equal => Ordering::Less,
            o => o,
        },
        _ => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Terms of every shape the quick copy takes and of the shapes next
    /// to them it leaves to the walk (a variable, a list, a compound three
    /// deep, a float, a string), built on `s`.
    fn shapes(s: &mut Store) -> Vec<Cell> {
        let (f, g, h) = (Atom(900), Atom(901), Atom(902));
        let a = Cell::Atom(Atom(903));
        let v = s.new_var();
        let txt = s.new_text("x");
        let flat = s.new_struct(g, &[Cell::Int(1), a, Cell::Flt(2.5), txt]);
        let flat2 = s.new_struct(h, &[Cell::Int(-7)]);
        let with_var = s.new_struct(g, &[Cell::Int(1), v]);
        let list = s.new_list(&[Cell::Int(1), a]);
        let deep = s.new_struct(h, &[flat]);
        // A variable bound to a compound, met through the binding.
        let bound = s.new_var();
        let Cell::Ref(b) = bound else { unreachable!() };
        s.heap[b] = flat2;
        let board: Vec<Cell> = (0..64).map(|i| if i % 3 == 0 { a } else { Cell::Int(i) }).collect();
        let board = s.new_struct(Atom(904), &board);
        vec![
            a,
            Cell::Int(5),
            txt,
            v,
            flat,
            s.new_struct(f, &[a, flat, Cell::Int(3), flat2, flat]),
            s.new_struct(f, &[board, Cell::Int(8), bound, a]),
            s.new_struct(f, &[flat, with_var]),
            s.new_struct(f, &[list, flat]),
            s.new_struct(f, &[deep]),
            s.new_struct(f, &[flat2, v]),
            list,
            bound,
        ]
    }

    /// The quick copy of a term gives the walk's cells exactly, where it
    /// takes the term; the copy read back in is the same term.
    #[test]
    fn a_quick_copy_is_the_walks() {
        let mut s = Store::default();
        let terms = shapes(&mut s);
        let mut quick = 0;
        for &t in &terms {
            let walked = s.copy_walk(t, &mut Vec::new()).expect("finite").to_vec();
            let mut cells = Vec::new();
            if s.copy_flat(t, &mut cells) {
                assert_eq!(cells, walked, "{t:?}");
                quick += 1;
            }
            let vars = walked.iter().filter(|c| matches!(c, Cell::Ref(_))).count();
            let back = s.copy_in_cells(&walked, vars, &mut Vec::new());
            let again = s.copy_walk(back, &mut Vec::new()).expect("finite").to_vec();
            assert_eq!(again, walked, "{t:?} read back in");
        }
        // The atom, the integer, the string, and the four compounds of
        // atomic terms and compounds of them (one reached by a binding).
        assert_eq!(quick, 7);
    }
}
