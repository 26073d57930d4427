//! The database: predicates keyed by name/arity, their compiled clauses
//! and their argument indexes.

use super::atoms::Atom;
use super::term::{Cell, Store, Tmpl};
use crate::syntax::Span;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::rc::Rc;

/// A small fast hasher for integer keys.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64)
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A compiled clause: the head and body goals as one template.
#[derive(Debug)]
pub struct ClauseCode {
    /// Template cells; `cells[2]` is the head, `cells[body_start..]` the
    /// body goals.
    pub tmpl: Tmpl,
    /// Where the body goals start in `tmpl.cells`, and how many there are.
    pub body_start: usize,
    pub body_len: usize,
    /// First-argument key, `None` when the first argument is a variable.
    pub key: Option<Key>,
    /// Where the clause was read from.
    pub span: Option<(Rc<str>, Span)>,
    /// Register-machine code, compiled on the first call.
    pub vm: std::cell::OnceCell<super::vm::Code>,
    /// The same code with native runs, made once the clause is hot (see
    /// `Instr::Warm`): what calls take from then on.
    pub hot: std::cell::OnceCell<super::vm::Code>,
    /// For a clause whose body starts with a cut (`d(U * V, X, DU * V + U *
    /// DV) :- !, ...`) and whose head cannot fail on a call whose first
    /// argument has the clause's key (or is unbound), given unbound and
    /// distinct variables at the arguments where this mask has a bit (see
    /// [`ClauseCode::neck_cut_mask`]): a call that has them enters the
    /// clause without a choice point for the clauses after it, which the
    /// cut would remove before anything could try them.
    pub neck: Option<u64>,
}

/// How many clauses with compiled code have been dropped, in every
/// machine of the process: a clause's code is then held only by its
/// machine's `Vm::codes`, and a query's start frees it (see
/// `Machine::sweep_codes`). Unchanged since the last sweep, there is
/// nothing for that sweep to free, and it is skipped.
pub static CODES_RELEASED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Drop for ClauseCode {
    fn drop(&mut self) {
        if self.vm.get().is_some() || self.hot.get().is_some() {
            CODES_RELEASED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl ClauseCode {
    /// Bytes the clause holds, about: its template, and the register code
    /// compiled from it (about twice the template).
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<ClauseCode>() + 3 * self.tmpl.cells.len() * std::mem::size_of::<Cell>()
    }

    /// The `neck` of a clause (head and body goals laid out as
    /// `compile_clause` makes them): `None` unless the body starts with `!`
    /// and the head's first argument matches every term with its key (a
    /// variable, an atom, an integer, or a compound or list cell of
    /// distinct variables); else the arguments, after the first, whose
    /// head term can fail to unify: any but a variable that occurs once in
    /// the head. Unbound and distinct variables there, the head matches
    /// (a first argument with the key takes apart without binding, and a
    /// fresh variable matches anything). At most four such arguments, the
    /// first 64, so that a call checks them at a glance.
    pub fn neck_cut_mask(cells: &[Cell], body_len: usize) -> Option<u64> {
        if body_len == 0 || cells.get(3) != Some(&Cell::Atom(super::atoms::atom::CUT)) {
            return None;
        }
        let Cell::Str(h) = cells[2] else { return None };
        let Cell::Fun(_, n) = cells[h] else { return None };
        let args = &cells[h + 1..h + 1 + n as usize];
        // How often each variable occurs in the head.
        let mut vars = Vec::new();
        super::vm::compile::vars_of(cells, 2, &mut vars);
        let once = |v: usize| vars.iter().filter(|&&w| w == v).count() == 1;
        let distinct_vars =
            |sub: &[Cell]| sub.iter().enumerate().all(|(i, c)| matches!(c, Cell::Ref(_)) && !sub[..i].contains(c));
        let first_matches = match args.first() {
            None => false,
            Some(Cell::Ref(_) | Cell::Atom(_) | Cell::Int(_)) => true,
            Some(&Cell::Str(p)) => match cells[p] {
                Cell::Fun(_, k) => distinct_vars(&cells[p + 1..p + 1 + k as usize]),
                _ => false,
            },
            Some(&Cell::Lst(p)) => distinct_vars(&cells[p..p + 2]),
            Some(_) => false,
        };
        if !first_matches || args.len() > 64 {
            return None;
        }
        let mut mask = 0u64;
        for (k, a) in args.iter().enumerate().skip(1) {
            if !matches!(*a, Cell::Ref(v) if once(v)) {
                mask |= 1 << k;
            }
        }
        (mask.count_ones() <= 4).then_some(mask)
    }

    /// The indexing key of head argument `k` (`None`: a variable).
    pub fn arg_key(&self, k: usize) -> Option<Key> {
        match self.tmpl.cells[2] {
            Cell::Str(p) => Key::of(self.tmpl.cells[p + 1 + k], &self.tmpl.cells),
            _ => None,
        }
    }
}

/// The first-argument indexing key of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Atom(Atom),
    Int(i64),
    Flt(u64),
    Fun(Atom, u32),
    Lst,
    Text,
}

impl Key {
    /// The key of a dereferenced cell; `None` for a variable.
    #[inline(always)]
    pub fn of(c: Cell, heap: &[Cell]) -> Option<Key> {
        Some(match c {
            Cell::Ref(_) => return None,
            Cell::Atom(a) => Key::Atom(a),
            Cell::Int(i) => Key::Int(i),
            Cell::Flt(f) => Key::Flt(f.to_bits()),
            Cell::Str(p) => match heap[p] {
                Cell::Fun(f, n) => Key::Fun(f, n),
                _ => return None,
            },
            Cell::Lst(_) => Key::Lst,
            Cell::Text(_) => Key::Text,
            Cell::Fun(f, n) => Key::Fun(f, n),
        })
    }
}

/// Clause numbers that may match a call.
pub type Candidates = Rc<[u32]>;

/// The first-argument index of a predicate.
#[derive(Debug)]
pub struct Index {
    /// Candidates by key: a short list is searched in order, a long one
    /// is hashed.
    few: Vec<(Key, Candidates)>,
    many: FastMap<Key, Candidates>,
    /// Clauses whose first argument is a variable (match any key not listed).
    var_only: Candidates,
    all: Candidates,
    /// The candidates of the two commonest keys, `[]` and a list cell.
    nil: Candidates,
    lst: Candidates,
}

impl Index {
    /// The index of the clauses whose keys (at one argument) are `keys`.
    fn build(keys: &[Option<Key>]) -> Index {
        let all: Candidates = (0..keys.len() as u32).collect();
        let var_only: Vec<u32> = keys.iter().enumerate().filter(|(_, c)| c.is_none()).map(|(i, _)| i as u32).collect();
        // The clauses of each key, keys in order of first appearance
        // (linear in the clauses: a table of facts is indexed at once).
        let mut order: Vec<Key> = Vec::new();
        let mut by_key: FastMap<Key, Vec<u32>> = FastMap::default();
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = *k {
                by_key
                    .entry(k)
                    .or_insert_with(|| {
                        order.push(k);
                        Vec::new()
                    })
                    .push(i as u32);
            }
        }
        // A key's candidates: its clauses and those with a variable there,
        // in clause order.
        let mut few: Vec<(Key, Candidates)> = order
            .iter()
            .map(|k| {
                let own = &by_key[k];
                let mut list = Vec::with_capacity(own.len() + var_only.len());
                let (mut a, mut b) = (own.iter().peekable(), var_only.iter().peekable());
                while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
                    list.push(if x < y { a.next() } else { b.next() }.copied().expect("peeked"));
                }
                list.extend(a.chain(b));
                (*k, list.into())
            })
            .collect();
        let var_only: Candidates = var_only.into();
        let find = |k: Key| few.iter().find(|(x, _)| *x == k).map_or_else(|| var_only.clone(), |(_, c)| c.clone());
        let (nil, lst) = (find(Key::Atom(super::atoms::atom::NIL)), find(Key::Lst));
        let many = if few.len() > 8 { few.drain(..).collect() } else { FastMap::default() };
        Index { few, many, var_only, all, nil, lst }
    }

    /// The clauses to try for a dereferenced first argument: the same as
    /// `select(Key::of(c))`, with the commonest cases first.
    #[inline(always)]
    pub fn select_cell(&self, c: Cell, heap: &[Cell]) -> &Candidates {
        match c {
            Cell::Ref(_) => &self.all,
            Cell::Lst(_) => &self.lst,
            Cell::Atom(super::atoms::atom::NIL) => &self.nil,
            Cell::Atom(a) => self.select_key(Key::Atom(a)),
            Cell::Int(i) => self.select_key(Key::Int(i)),
            _ => self.select(Key::of(c, heap)),
        }
    }

    /// The clauses to try for a first argument with this key.
    #[inline]
    pub fn select(&self, key: Option<Key>) -> &Candidates {
        match key {
            None => &self.all,
            Some(Key::Lst) => &self.lst,
            Some(Key::Atom(super::atoms::atom::NIL)) => &self.nil,
            Some(k) => self.select_key(k),
        }
    }

    /// `select` of a key that is not a list cell or `[]`.
    #[inline(always)]
    fn select_key(&self, k: Key) -> &Candidates {
        if self.many.is_empty() {
            for (x, c) in &self.few {
                if *x == k {
                    return c;
                }
            }
            &self.var_only
        } else {
            self.many.get(&k).unwrap_or(&self.var_only)
        }
    }
}

/// A user predicate.
#[derive(Debug)]
pub struct Pred {
    pub name: Atom,
    pub arity: u32,
    pub clauses: Rc<Vec<Rc<ClauseCode>>>,
    pub dynamic: bool,
    /// Defined by the prelude (library) rather than the user's program.
    pub library: bool,
    /// Removed by `abolish/1`: code that named it by number looks it up
    /// by name again.
    pub abolished: bool,
    index: Option<Index>,
    /// Indexes on the other arguments (`args[k]` for argument `k + 1`),
    /// built the first time the first argument leaves a call more than one
    /// clause.
    args: Vec<ArgIndex>,
    /// Bit `k`: argument `k` (below 64) has a useful index.
    maybe: u64,
    /// Indexes on several arguments together, built when a call binds
    /// them and no one of them leaves few clauses (a table of
    /// `cell(X, Y, Piece)` facts called with `X` and `Y`).
    combos: Vec<Combo>,
    /// The arguments (bits) of a combined index a call found missing:
    /// `build_indexes` builds it.
    want: std::cell::Cell<u64>,
    /// Where each clause's code starts, once compiled: a copy of
    /// `clauses[c].vm`'s start that a call reads with two dependent loads
    /// fewer. Valid while `clauses` is unchanged (the clauses own the
    /// code): emptied with the indexes whenever they change.
    entry: Vec<std::cell::Cell<Option<super::vm::Cont>>>,
    /// Where a call goes at once, by the class of its first argument
    /// (`Switch`), when that class alone leaves exactly one clause whose
    /// code is compiled: the predicate's switch on the first argument.
    /// Valid, like `entry`, while `clauses` is unchanged.
    switch: [std::cell::Cell<Option<super::vm::Cont>>; 3],
    /// Where a call goes, leaving a choice point for every other clause,
    /// when every call has every clause for candidates (no clause has a
    /// constant or compound first argument, and no other argument tells
    /// clauses apart): the first clause's code, once recorded. Valid, like
    /// `entry`, while `clauses` is unchanged.
    try_all: std::cell::Cell<Option<super::vm::Cont>>,
    /// Whether a clause may have a `neck` (set when one that has is added,
    /// kept through removals): a call of a predicate without one does not
    /// look for it.
    pub necks: bool,
    /// Whether a clause's code has this predicate's clause unfolded into
    /// it, or its facts looked up in place (see `vm::unfold`): a change to
    /// its clauses then moves the database's `inline_epoch` on, which that
    /// code checks.
    pub inlined: std::cell::Cell<bool>,
    /// The database's `inline_epoch`.
    epoch: Rc<std::cell::Cell<u32>>,
}

/// The classes of a first argument a predicate's `switch` tells apart:
/// a list cell, `[]`, and anything else (where only a predicate of one
/// clause has an entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    Other = 0,
    Lst = 1,
    Nil = 2,
}

impl Switch {
    /// The class of a dereferenced first argument.
    #[inline(always)]
    pub fn of(c: Cell) -> Switch {
        match c {
            Cell::Lst(_) => Switch::Lst,
            Cell::Atom(super::atoms::atom::NIL) => Switch::Nil,
            _ => Switch::Other,
        }
    }
}

/// A call whose best single argument leaves more clauses than this gets
/// an index on its bound arguments together, and a predicate at most
/// `MAX_COMBOS` of them (one per set of arguments calls bind).
const COMBO_FROM: usize = 4;
const MAX_COMBOS: usize = 4;

/// An index on several arguments together: clause numbers by a hash of
/// the keys at those arguments. Two sets of keys with the same hash only
/// share their candidates (unification tells them apart).
#[derive(Debug)]
struct Combo {
    /// The arguments (bits).
    mask: u64,
    by_hash: FastMap<u64, Candidates>,
    /// The clauses with a variable at one of the arguments: candidates of
    /// every call (merged, in clause order, into each list above).
    open: Candidates,
}

impl Combo {
    fn build(mask: u64, clauses: &[Rc<ClauseCode>]) -> Combo {
        let mut open = Vec::new();
        let mut by_hash: FastMap<u64, Vec<u32>> = FastMap::default();
        for (i, c) in clauses.iter().enumerate() {
            match Combo::hash(mask, |k| c.arg_key(k)) {
                Some(h) => by_hash.entry(h).or_default().push(i as u32),
                None => open.push(i as u32),
            }
        }
        let by_hash = by_hash
            .into_iter()
            .map(|(h, own)| {
                let mut list: Vec<u32> = own.into_iter().chain(open.iter().copied()).collect();
                list.sort_unstable();
                (h, list.into())
            })
            .collect();
        Combo { mask, by_hash, open: open.into() }
    }

    /// The hash of the keys at the arguments of `mask` (`None` when one is
    /// a variable).
    fn hash(mask: u64, key: impl Fn(usize) -> Option<Key>) -> Option<u64> {
        let mut h = FastHasher::default();
        let mut m = mask;
        while m != 0 {
            let k = m.trailing_zeros() as usize;
            m &= m - 1;
            key(k)?.hash(&mut h);
        }
        Some(h.finish())
    }

    fn select(&self, args: &[Cell], store: &Store) -> &Candidates {
        match Combo::hash(self.mask, |k| Key::of(store.deref(args[k]), &store.heap)) {
            Some(h) => self.by_hash.get(&h).unwrap_or(&self.open),
            None => &self.open,
        }
    }
}

/// An index on an argument other than the first.
#[derive(Debug)]
enum ArgIndex {
    /// The clauses have fewer than two keys there: it tells nothing.
    Useless,
    Built(Index),
}

impl Pred {
    pub fn new(name: Atom, arity: u32, epoch: Rc<std::cell::Cell<u32>>) -> Pred {
        Pred {
            name,
            arity,
            clauses: Rc::new(Vec::new()),
            dynamic: false,
            library: false,
            abolished: false,
            index: None,
            args: Vec::new(),
            maybe: 0,
            combos: Vec::new(),
            want: std::cell::Cell::new(0),
            entry: Vec::new(),
            switch: Default::default(),
            try_all: Default::default(),
            necks: false,
            inlined: std::cell::Cell::new(false),
            epoch,
        }
    }

    /// The first argument's index, built on first use after a change.
    fn first_index(&mut self) -> &Index {
        self.index.get_or_insert_with(|| {
            let keys: Vec<Option<Key>> = self.clauses.iter().map(|c| c.key).collect();
            Index::build(&keys)
        })
    }

    /// The clauses that may match a call with these arguments, when the
    /// indexes that needs are built (`None`: `build_indexes` first). By the
    /// first argument, or, when that leaves more than one clause, by the
    /// bound argument that leaves the fewest (as SWI-Prolog's just-in-time
    /// indexes do). The candidates keep clause order, so the logical
    /// update view is kept.
    #[inline(always)]
    pub fn select(&self, args: &[Cell], store: &Store) -> Option<&Candidates> {
        let index = self.index.as_ref()?;
        let best = match args.first() {
            Some(&a) => index.select_cell(store.deref(a), &store.heap),
            None => index.select(None),
        };
        // Other arguments only where one tells clauses apart (or before
        // their indexes are built).
        if best.len() > 1 && args.len() > 1 && (self.maybe != 0 || self.args.is_empty()) {
            if self.args.is_empty() {
                return None;
            }
            // From the first of them that is bound: when none is (an
            // output, as the last argument of a recursive d/3 in deriv),
            // the first argument's candidates stand.
            let mut m = self.maybe;
            while m != 0 {
                if !matches!(store.deref(args[m.trailing_zeros() as usize]), Cell::Ref(_)) {
                    return self.select_other(best, args, store, m);
                }
                m &= m - 1;
            }
        }
        Some(best)
    }

    /// `select` when the first argument leaves more than one clause: the
    /// bound argument that leaves the fewest, or, when that still leaves
    /// many, the bound arguments together. `maybe`: the arguments with
    /// useful indexes from the first bound one on (those before it are
    /// unbound).
    fn select_other<'a>(
        &'a self,
        first: &'a Candidates,
        args: &[Cell],
        store: &Store,
        maybe: u64,
    ) -> Option<&'a Candidates> {
        let mut best = first;
        let mut maybe = maybe;
        let mut bound = u64::from(!matches!(store.deref(args[0]), Cell::Ref(_)));
        while maybe != 0 {
            let k = maybe.trailing_zeros() as usize;
            maybe &= maybe - 1;
            let a = store.deref(args[k]);
            let (false, ArgIndex::Built(index)) = (matches!(a, Cell::Ref(_)), &self.args[k - 1]) else {
                continue;
            };
            bound |= 1 << k;
            let c = index.select_cell(a, &store.heap);
            if c.len() < best.len() {
                best = c;
                if best.len() <= 1 {
                    break;
                }
            }
        }
        if best.len() > COMBO_FROM && bound.count_ones() >= 2 {
            match self.combos.iter().find(|c| c.mask == bound) {
                Some(combo) => {
                    let c = combo.select(args, store);
                    if c.len() < best.len() {
                        best = c;
                    }
                }
                None if self.combos.len() < MAX_COMBOS => {
                    self.want.set(bound);
                    return None;
                }
                None => {}
            }
        }
        Some(best)
    }

    /// The start of clause `c`'s code, when compiled and recorded.
    #[inline(always)]
    pub fn entry(&self, c: usize) -> Option<super::vm::Cont> {
        self.entry.get(c)?.get()
    }

    /// Records the start of clause `c`'s code (compiled from `clauses[c]`),
    /// and in the switch where it is the one clause a call can take.
    pub fn set_entry(&mut self, c: usize, code: super::vm::Cont) {
        if self.entry.len() < self.clauses.len() {
            self.entry.resize(self.clauses.len(), std::cell::Cell::new(None));
        }
        self.entry[c].set(Some(code));
        let only = [c as u32];
        let (lst, nil) = match &self.index {
            _ if self.clauses.len() == 1 => {
                self.switch[Switch::Other as usize].set(Some(code));
                (true, true)
            }
            Some(ix) => (*ix.lst == only, *ix.nil == only),
            None => (false, false),
        };
        if lst {
            self.switch[Switch::Lst as usize].set(Some(code));
        }
        if nil {
            self.switch[Switch::Nil as usize].set(Some(code.past_nil_test()));
        }
        if c == 0 && self.every_call_takes_all() {
            self.try_all.set(Some(code));
        }
    }

    /// Whether `select` gives every call of this predicate all its
    /// clauses, now that its indexes are built: more than one clause, none
    /// with a key in its first argument, and no other argument with a
    /// useful index.
    fn every_call_takes_all(&self) -> bool {
        let Some(ix) = &self.index else { return false };
        self.clauses.len() > 1
            && ix.few.is_empty()
            && ix.many.is_empty()
            && (self.arity <= 1 || (!self.args.is_empty() && self.maybe == 0))
    }

    /// The first clause's code when every call takes every clause (see
    /// `try_all`).
    #[inline(always)]
    pub fn try_all(&self) -> Option<super::vm::Cont> {
        self.try_all.get()
    }

    /// The code a call whose first argument is of class `k` goes to
    /// without looking at its candidates (see `switch`).
    #[inline(always)]
    pub fn switch(&self, k: Switch) -> Option<super::vm::Cont> {
        self.switch[k as usize].get()
    }

    /// Forgets the indexes, entries and switch after a change of clauses.
    fn changed(&mut self) {
        if self.inlined.replace(false) {
            self.epoch.set(self.epoch.get().wrapping_add(1));
        }
        self.index = None;
        self.args.clear();
        self.combos.clear();
        self.want.set(0);
        self.entry.clear();
        self.switch = Default::default();
        self.try_all.set(None);
    }

    /// Builds the indexes `select` found missing for a call of `arity`
    /// arguments: the first argument's, then the others' (each marked
    /// useless where the clauses have fewer than two keys).
    pub fn build_indexes(&mut self, arity: usize) {
        if self.index.is_none() {
            self.first_index();
            return;
        }
        let want = self.want.replace(0);
        if want != 0 {
            self.combos.push(Combo::build(want, &self.clauses));
            return;
        }
        self.maybe = 0;
        let mut args: Vec<ArgIndex> = (1..arity.max(1))
            .map(|k| {
                let keys: Vec<Option<Key>> = self.clauses.iter().map(|c| c.arg_key(k)).collect();
                let distinct = keys.iter().flatten().collect::<std::collections::HashSet<_>>().len();
                if distinct >= 2 && k < 64 {
                    self.maybe |= 1 << k;
                    ArgIndex::Built(Index::build(&keys))
                } else {
                    ArgIndex::Useless
                }
            })
            .collect();
        // Not empty once built, even with no other argument.
        if args.is_empty() {
            args.push(ArgIndex::Useless);
        }
        self.args = args;
    }

    pub fn add(&mut self, c: ClauseCode, front: bool) {
        self.necks |= c.neck.is_some();
        let v = Rc::make_mut(&mut self.clauses);
        if front {
            v.insert(0, Rc::new(c));
        } else {
            v.push(Rc::new(c));
        }
        self.changed();
    }

    /// Adds a clause at position `i`.
    pub fn insert(&mut self, i: usize, c: ClauseCode) {
        self.necks |= c.neck.is_some();
        let v = Rc::make_mut(&mut self.clauses);
        v.insert(i.min(v.len()), Rc::new(c));
        self.changed();
    }

    /// Removes the clause that is `c` (by identity).
    pub fn remove(&mut self, c: &Rc<ClauseCode>) -> bool {
        let Some(i) = self.clauses.iter().position(|x| Rc::ptr_eq(x, c)) else {
            return false;
        };
        Rc::make_mut(&mut self.clauses).remove(i);
        self.changed();
        true
    }

    pub fn clear(&mut self) {
        self.clauses = Rc::new(Vec::new());
        self.changed();
    }
}

/// What a goal's name/arity refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A control construct the solver handles itself.
    Control(super::machine::Control),
    /// A deterministic builtin written in Rust.
    Builtin(usize),
    /// A user (or library) predicate, by number.
    User(usize),
}

/// All predicates and builtins.
#[derive(Debug, Default)]
pub struct Db {
    entries: FastMap<(Atom, u32), Entry>,
    /// The same entries by atom number, for the solver's lookups.
    by_atom: Vec<Vec<(u32, Entry)>>,
    pub preds: Vec<Pred>,
    /// Flags: `(name/arity)` declared discontiguous.
    pub discontiguous: Vec<(Atom, u32)>,
    /// Bytes of the clauses added by `assert` and not yet retracted (a
    /// query's memory limit counts them).
    pub asserted: usize,
    /// Moves on whenever the clauses of a predicate that was unfolded or
    /// looked up in some clause's code change (see `vm::unfold`): code
    /// made at an older epoch runs its clause's code made without either.
    pub inline_epoch: Rc<std::cell::Cell<u32>>,
    /// No call is unfolded (`Engine::set_unfold`).
    pub no_unfold: bool,
}

impl Db {
    /// The user predicate for name/arity, created if new. `None` when the
    /// name is a builtin or control construct.
    pub fn pred_mut(&mut self, name: Atom, arity: u32) -> Option<&mut Pred> {
        match self.get(name, arity) {
            Some(Entry::User(i)) => Some(&mut self.preds[i]),
            Some(_) => None,
            None => {
                let i = self.preds.len();
                self.preds.push(Pred::new(name, arity, self.inline_epoch.clone()));
                self.insert(name, arity, Entry::User(i));
                Some(&mut self.preds[i])
            }
        }
    }

    pub fn pred(&self, name: Atom, arity: u32) -> Option<&Pred> {
        match self.get(name, arity) {
            Some(Entry::User(i)) => Some(&self.preds[i]),
            _ => None,
        }
    }

    /// What `name/arity` refers to.
    #[inline]
    pub fn get(&self, name: Atom, arity: u32) -> Option<Entry> {
        let row = self.by_atom.get(name.0 as usize)?;
        row.iter().find(|(n, _)| *n == arity).map(|&(_, e)| e)
    }

    pub fn insert(&mut self, name: Atom, arity: u32, e: Entry) {
        self.entries.insert((name, arity), e);
        let i = name.0 as usize;
        if self.by_atom.len() <= i {
            self.by_atom.resize(i + 1, Vec::new());
        }
        let row = &mut self.by_atom[i];
        match row.iter_mut().find(|(n, _)| *n == arity) {
            Some(slot) => slot.1 = e,
            None => row.push((arity, e)),
        }
    }

    pub fn remove(&mut self, name: Atom, arity: u32) {
        self.entries.remove(&(name, arity));
        if let Some(row) = self.by_atom.get_mut(name.0 as usize) {
            row.retain(|(n, _)| *n != arity);
        }
    }

    /// Every name/arity with its entry.
    pub fn iter(&self) -> impl Iterator<Item = (&(Atom, u32), &Entry)> {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_keeps_clause_order_with_variable_clauses_merged_in() {
        let [a, b, c] = [10, 11, 12].map(Key::Int);
        let keys: Vec<Option<Key>> = vec![Some(a), None, Some(b), Some(a), None, Some(Key::Lst)];
        let index = Index::build(&keys);
        assert_eq!(index.select(Some(a))[..], [0, 1, 3, 4]);
        assert_eq!(index.select(Some(b))[..], [1, 2, 4]);
        assert_eq!(index.select(Some(c))[..], [1, 4]);
        assert_eq!(index.select(Some(Key::Lst))[..], [1, 4, 5]);
        assert_eq!(index.select(None)[..], [0, 1, 2, 3, 4, 5]);
        // Many keys are hashed; the lists stay the same.
        let keys: Vec<Option<Key>> = (0..40).map(|i| if i % 10 == 9 { None } else { Some(Key::Int(i % 20)) }).collect();
        let index = Index::build(&keys);
        assert!(!index.many.is_empty());
        assert_eq!(index.select(Some(Key::Int(3)))[..], [3, 9, 19, 23, 29, 39]);
    }
}
