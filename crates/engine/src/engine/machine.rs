//! The machine the register machine (`vm/`) runs on: the store, the
//! database, the builtins, the choice-point stack, exceptions, limits and
//! findall bags.

use super::atoms::{Atom, Atoms, atom};
use super::db::{Candidates, ClauseCode, Db, Entry};
use super::term::{Cell, Cyclic, Store, Tmpl};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::rc::Rc;
use std::time::Instant;

/// Control constructs handled by the solver itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    True,
    Fail,
    Cut,
    Conj,
    Disj,
    IfThen,
    SoftIf,
    Not,
    Call(u8),
    Findall,
    Findall4,
    Catch,
    Throw,
    Sample,
    Halt0,
    Halt1,
}

/// What to do when backtracking into a choice point.
#[derive(Debug)]
pub enum Alt {
    /// A `catch/3` frame: only unwound into by exceptions.
    Catch { catcher: Cell, recovery: Cell },
    /// The end of a `findall/3`: collect the bag and continue.
    Findall { bag: u32, result: Cell, tail: Cell },
    /// The end of a `'$sample'/3`: the bag holds the solution kept.
    Sample { bag: u32, result: Cell },
    /// `member/2` on a proper list: the list cell (its address) of the
    /// next element that may unify with `x`.
    Member { x: Cell, at: usize },
    /// Successive integers for `between/3`.
    Between { var: Cell, next: i64, hi: i64 },
    /// Register machine: the facts of a table (`Instr::Facts`) from `next`
    /// on, for a call whose first argument was unbound (the arguments are
    /// the saved registers).
    Facts { t: std::rc::Rc<super::vm::Facts>, next: u32 },
    /// Alternative sets of unifications (for nondeterministic builtins).
    Unify { alts: Rc<Vec<Vec<(Cell, Cell)>>>, next: usize },
    /// Clauses for `clause/2` and `retract/1`.
    ClauseIter(Box<ClauseIter>),
    /// Removed by a soft cut: skipped when backtracking.
    Dead,
    /// Register machine: the remaining candidate clauses of a call (`None`:
    /// every clause).
    VmClauses { clauses: Rc<Vec<Rc<ClauseCode>>>, cands: Option<Candidates>, next: usize },
    /// Register machine: the other branch of a disjunction in a clause.
    Else,
}

/// Where `clause/2` or `retract/1` resumes (boxed: rare, and the largest
/// alternative, so every other choice point stays small).
#[derive(Debug)]
pub struct ClauseIter {
    pub head: Cell,
    pub body: Cell,
    pub clauses: Rc<Vec<Rc<ClauseCode>>>,
    pub next: usize,
    pub retract: Option<(Atom, u32)>,
    /// `'$clause'/3`: unified with where the clause was read from.
    pub src: Option<Cell>,
}

/// A choice point.
#[derive(Debug)]
pub struct Choice {
    pub alt: Alt,
    pub heap: usize,
    pub trail: usize,
    /// What the register machine restores.
    pub vm: super::vm::VmSave,
}

/// Why a query stopped without an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Exc {
    /// An uncaught Prolog exception (the ball).
    Throw(Tmpl),
    /// `halt/0,1` was called.
    Halt(i32),
    /// A limit was hit: `steps`, `time` or `memory`. Not catchable.
    Limit(Atom),
}

pub type Res = Result<bool, Exc>;

/// Resource limits for a query.
#[derive(Clone, Debug)]
pub struct Limits {
    pub max_steps: Option<u64>,
    pub timeout: Option<std::time::Duration>,
    /// Bytes a query's data may use at most: the heap, the stacks, the
    /// findall bags, the output and the text of atoms and strings.
    pub max_memory: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_steps: None, timeout: None, max_memory: 4 << 30 }
    }
}

/// What one solution's entry in a findall bag costs, in cells.
const BAG_ENTRY: usize = 1;

/// The solutions a `findall/3` (or a sample) collects: templates (as
/// `Store::copy_out` lays them out) end to end in one buffer, so adding a
/// solution allocates nothing once the buffers have grown.
#[derive(Default)]
pub struct Bag {
    cells: Vec<Cell>,
    /// Each solution: where its cells end, and its number of variables.
    items: Vec<(usize, usize)>,
}

impl Bag {
    /// The cells `bag_cells` counts for this bag: what its buffers hold
    /// room for (a buffer grows by doubling, so up to twice what it
    /// uses).
    fn size(&self) -> usize {
        self.cells.capacity() + self.items.capacity() * BAG_ENTRY
    }

    /// Each solution's cells and number of variables, in order.
    fn solutions(&self) -> impl Iterator<Item = (&[Cell], usize)> {
        let mut start = 0;
        self.items.iter().map(move |&(end, nvars)| {
            let cells = &self.cells[start..end];
            start = end;
            (cells, nvars)
        })
    }
}

/// Emptied bags kept for reuse (each below `BAG_KEEP` cells).
const BAG_POOL: usize = 8;
const BAG_KEEP: usize = 1 << 16;

/// A deterministic builtin: reads its arguments, may bind them.
pub type BuiltinFn = fn(&mut Machine, &[Cell]) -> Res;

/// The abstract machine: store, database, stacks.
pub struct Machine {
    pub atoms: Atoms,
    pub store: Store,
    pub db: Db,
    pub builtins: Vec<(Atom, u32, BuiltinFn)>,
    pub choices: Vec<Choice>,
    /// A goal a builtin asked to run next (`push_call`).
    pub(crate) pending: Option<Cell>,
    /// Scratch stack of template unification.
    pub(crate) hwork: Vec<(usize, Cell)>,
    /// The buffer of `sort/2,4` and `msort/2` (kept between calls).
    pub(crate) sort_work: Vec<(Cell, Cell)>,
    /// The key buffers of sorting (kept between calls).
    pub(crate) sort_keys: super::builtins::SortKeys,
    pub bags: Vec<Bag>,
    /// Emptied bags whose buffers the next ones reuse.
    bag_pool: Vec<Bag>,
    /// The variables of a solution being added (kept between calls).
    bag_vars: Vec<usize>,
    /// Cells the buffers of `bags` hold room for (`Bag::size`).
    pub bag_cells: usize,
    pub steps: u64,
    /// The step at which a call next runs `check_limits` in full: the
    /// next multiple of 4,096 (the time and memory checks), or the step
    /// limit if that comes first.
    pub step_at: u64,
    pub limits: Limits,
    pub(crate) deadline: Option<Instant>,
    pub out: String,
    /// When set, output is written to stdout as soon as it is produced.
    pub echo: bool,
    pub rng: ChaCha8Rng,
    /// The builtin being run, for error contexts.
    pub context: (Atom, u32),
    /// Heap size that triggers the next garbage collection (set with
    /// `set_gc_at`).
    pub gc_at: usize,
    /// The smaller of `gc_at` and the memory limit in heap cells: a call
    /// that finds the heap above it takes the slow path.
    pub heap_at: usize,
    /// Variables the host holds (query variables): GC roots.
    pub roots: Vec<Cell>,
    /// Statistics.
    pub gc_runs: u64,
    /// Global variables (`nb_setval/2`), and the bytes their values hold.
    pub globals: std::collections::HashMap<Atom, Tmpl>,
    pub globals_bytes: usize,
    /// The builtins that change the database, flags, operators or global
    /// variables, while queries are read-only: their own functions, put
    /// back when writing is allowed again.
    pub(crate) writes_withheld: Vec<(usize, BuiltinFn)>,
    /// Data of the builtins a host added (`Engine::add_builtin`), which
    /// they take out and put back.
    pub ext: Option<Box<dyn std::any::Any>>,
    /// Where each line of each file loaded starts (byte offsets), to name
    /// the line of a clause in a message.
    pub line_starts: Vec<(Rc<str>, Vec<u32>)>,
    /// The last compiled call that found no predicate: where it was made
    /// (the instruction after it), and the predicate it named.
    pub unknown_call: Option<(super::vm::Cont, Atom, u32)>,
    /// Where the last unknown procedure was called from, in a person's
    /// terms (`the clause of move/3 at hexapawn.rules:57`), with the
    /// procedure it was.
    pub unknown_from: Option<(String, String)>,
    /// The text of each file loaded, by name (where the tracer places
    /// goals).
    pub(crate) sources: std::collections::HashMap<Rc<str>, Rc<str>>,
    /// The tracer, while a trace is on (`Engine::set_trace`).
    pub(crate) tracer: Option<Box<super::trace::Tracer>>,
    /// The file being loaded, if any (clauses may then be added to static
    /// predicates by directives).
    pub loading: Option<Rc<str>>,
    /// The register machine's stacks.
    pub vm: super::vm::Vm,
    pub(crate) vm_goal: Option<Cell>,
}

impl Machine {
    pub fn new() -> Machine {
        let mut m = Machine {
            atoms: Atoms::new(),
            store: Store::default(),
            db: Db::default(),
            builtins: Vec::new(),
            choices: Vec::new(),
            pending: None,
            hwork: Vec::new(),
            sort_work: Vec::new(),
            sort_keys: Default::default(),
            bags: Vec::new(),
            bag_pool: Vec::new(),
            bag_vars: Vec::new(),
            bag_cells: 0,
            steps: 0,
            step_at: 0,
            limits: Limits::default(),
            deadline: None,
            out: String::new(),
            echo: false,
            rng: ChaCha8Rng::seed_from_u64(0),
            context: (atom::TRUE, 0),
            // Both set below.
            gc_at: 0,
            heap_at: 0,
            roots: Vec::new(),
            gc_runs: 0,
            globals: std::collections::HashMap::new(),
            globals_bytes: 0,
            writes_withheld: Vec::new(),
            ext: None,
            line_starts: Vec::new(),
            unknown_call: None,
            unknown_from: None,
            sources: Default::default(),
            tracer: None,
            loading: None,
            vm: super::vm::Vm::default(),
            vm_goal: None,
        };
        use Control::*;
        let controls: &[(&str, u32, Control)] = &[
            ("true", 0, True),
            ("otherwise", 0, True),
            ("fail", 0, Fail),
            ("false", 0, Fail),
            ("!", 0, Cut),
            (",", 2, Conj),
            (";", 2, Disj),
            ("|", 2, Disj),
            ("->", 2, IfThen),
            ("*->", 2, SoftIf),
            ("\\+", 1, Not),
            ("not", 1, Not),
            ("findall", 3, Findall),
            ("findall", 4, Findall4),
            ("catch", 3, Catch),
            ("throw", 1, Throw),
            ("$sample", 3, Sample),
            ("halt", 0, Halt0),
            ("halt", 1, Halt1),
        ];
        for &(name, n, c) in controls {
            let a = m.atoms.intern(name);
            m.db.insert(a, n, Entry::Control(c));
        }
        for n in 1..=8u32 {
            m.db.insert(atom::CALL, n, Entry::Control(Call(n as u8)));
        }
        super::builtins::register(&mut m);
        m.set_gc_at(1 << 22);
        m
    }

    /// Registers a Rust builtin.
    pub fn add_builtin(&mut self, name: &str, arity: u32, f: BuiltinFn) {
        let a = self.atoms.intern(name);
        self.db.insert(a, arity, Entry::Builtin(self.builtins.len()));
        self.builtins.push((a, arity, f));
    }

    // ----- errors -------------------------------------------------------

    /// `error(Formal, context(Name/Arity, _))` as an exception.
    pub fn error(&mut self, formal: Cell) -> Exc {
        let (name, arity) = self.context;
        let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(name), Cell::Int(arity as i64)]);
        let v = self.store.new_var();
        let ctx = self.store.new_struct(atom::CONTEXT, &[pi, v]);
        self.error_ball(formal, ctx)
    }

    /// `error(Formal, Context)` as an exception.
    fn error_ball(&mut self, formal: Cell, ctx: Cell) -> Exc {
        let ball = self.store.new_struct(atom::ERROR, &[formal, ctx]);
        if let Ok(t) = self.store.copy_out(ball, &mut Vec::new()) {
            return Exc::Throw(t);
        }
        // The culprit is cyclic (a cyclic list given to length/2...): the
        // error keeps its kind, with a variable for what cannot be copied.
        let formal = self.store.deref(formal);
        if let Some((f, n)) = self.store.functor(formal)
            && n > 0
        {
            let mut args = Vec::with_capacity(n);
            for i in 0..n {
                let a = self.store.arg(formal, i);
                args.push(if self.store.acyclic(a) { a } else { self.store.new_var() });
            }
            let formal = self.store.new_struct(f, &args);
            let ball = self.store.new_struct(atom::ERROR, &[formal, ctx]);
            if let Ok(t) = self.store.copy_out(ball, &mut Vec::new()) {
                return Exc::Throw(t);
            }
        }
        self.cyclic_error()
    }

    /// `representation_error(cyclic_term)`: a term that must be copied
    /// (by findall/3, assertz/1, copy_term/2, throw/1...) is cyclic.
    pub fn cyclic_error(&mut self) -> Exc {
        let what = self.atoms.intern("cyclic_term");
        self.repr_error(what)
    }

    /// `representation_error(cyclic_term)` naming no predicate: a query's
    /// answer is cyclic, so it can be neither written nor copied.
    pub fn cyclic_answer_error(&mut self) -> Exc {
        let what = Cell::Atom(self.atoms.intern("cyclic_term"));
        let formal = self.store.new_struct(atom::REPR_ERROR, &[what]);
        let ctx = self.store.new_var();
        self.error_ball(formal, ctx)
    }

    pub fn inst_error(&mut self) -> Exc {
        self.error(Cell::Atom(atom::INST_ERROR))
    }

    pub fn type_error(&mut self, kind: Atom, culprit: Cell) -> Exc {
        let f = self.store.new_struct(atom::TYPE_ERROR, &[Cell::Atom(kind), culprit]);
        self.error(f)
    }

    pub fn domain_error(&mut self, kind: Atom, culprit: Cell) -> Exc {
        let f = self.store.new_struct(atom::DOMAIN_ERROR, &[Cell::Atom(kind), culprit]);
        self.error(f)
    }

    pub fn eval_error(&mut self, what: Atom) -> Exc {
        let f = self.store.new_struct(atom::EVAL_ERROR, &[Cell::Atom(what)]);
        self.error(f)
    }

    pub fn repr_error(&mut self, what: Atom) -> Exc {
        let f = self.store.new_struct(atom::REPR_ERROR, &[Cell::Atom(what)]);
        self.error(f)
    }

    pub fn existence_error(&mut self, kind: Atom, culprit: Cell) -> Exc {
        let f = self.store.new_struct(atom::EXISTENCE_ERROR, &[Cell::Atom(kind), culprit]);
        self.error(f)
    }

    pub fn permission_error(&mut self, action: Atom, kind: Atom, culprit: Cell) -> Exc {
        let f = self.store.new_struct(atom::PERMISSION_ERROR, &[Cell::Atom(action), Cell::Atom(kind), culprit]);
        self.error(f)
    }

    /// Checks that a term is callable; instantiation or type error if not.
    pub fn check_callable(&mut self, g: Cell) -> Result<(), Exc> {
        match self.store.deref(g) {
            Cell::Ref(_) => Err(self.inst_error()),
            Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => Ok(()),
            other => Err(self.type_error(atom::CALLABLE, other)),
        }
    }

    // ----- running ------------------------------------------------------

    /// Resets the stacks to run `goal` from scratch.
    pub fn start(&mut self, goal: Cell) {
        self.choices.clear();
        self.store.hb = 0;
        self.bags_truncate(0);
        self.pending = None;
        self.steps = 0;
        self.step_at = self.next_step_at();
        self.deadline = self.limits.timeout.map(|d| Instant::now() + d);
        self.vm_start(goal);
    }

    /// Looks for the next answer: `Ok(true)` when one is found (bindings
    /// are on the heap), `Ok(false)` when there are no more.
    pub fn solve(&mut self, retry: bool) -> Res {
        self.vm_solve(retry)
    }

    /// Bytes the running query's data uses (see `Limits::max_memory`),
    /// with what queries leave behind: asserted clauses, global variables,
    /// atoms.
    pub fn memory_used(&self) -> usize {
        use std::mem::size_of;
        let vm = &self.vm;
        (self.store.heap.len() + vm.ys.len() + vm.saved.len() + self.bag_cells) * size_of::<Cell>()
            + self.store.trail.len() * size_of::<usize>()
            + vm.envs.len() * size_of::<super::vm::Env>()
            + self.choices.len() * size_of::<Choice>()
            + self.out.len()
            + self.kept()
    }

    /// Bytes that outlive a query: asserted clauses, global variables, the
    /// text of atoms and strings.
    fn kept(&self) -> usize {
        self.db.asserted + self.globals_bytes + self.atoms.bytes + self.store.text_bytes
    }

    /// Bytes the machine holds between queries: what queries left behind
    /// and the room its stacks keep for the next (see [`Machine::trim`]).
    pub fn footprint(&self) -> usize {
        use std::mem::size_of;
        let vm = &self.vm;
        (self.store.heap.capacity() + vm.ys.capacity() + vm.saved.capacity()) * size_of::<Cell>()
            + self.bag_pool.iter().map(|b| b.size() * size_of::<Cell>()).sum::<usize>()
            + self.store.trail.capacity() * size_of::<usize>()
            + vm.envs.capacity() * size_of::<super::vm::Env>()
            + self.choices.capacity() * size_of::<Choice>()
            + self.out.capacity()
            + self.kept()
    }

    /// Gives back the room a big query's stacks grew to, keeping what a
    /// typical query needs.
    pub fn trim(&mut self) {
        const KEEP: usize = 1 << 16;
        self.store.heap.shrink_to(KEEP);
        self.store.trail.shrink_to(KEEP);
        self.vm.ys.shrink_to(KEEP);
        self.vm.saved.shrink_to(KEEP);
        self.vm.envs.shrink_to(KEEP / 8);
        self.choices.shrink_to(KEEP / 8);
        self.out.shrink_to(KEEP);
        self.bag_pool.clear();
    }

    /// A memory error if the query's data plus `extra` bytes would pass
    /// the limit (builtins call it before they allocate in proportion to
    /// their input).
    pub fn check_memory(&self, extra: usize) -> Result<(), Exc> {
        if self.memory_used().saturating_add(extra) > self.limits.max_memory {
            return Err(Exc::Limit(atom::MEMORY));
        }
        Ok(())
    }

    /// A new findall bag.
    pub(crate) fn bag_new(&mut self) -> usize {
        let bag = self.bag_pool.pop().unwrap_or_default();
        self.bag_cells += bag.size();
        self.bags.push(bag);
        self.bags.len() - 1
    }

    /// Adds a copy of term `t` to a bag as a solution, within the memory
    /// limit.
    pub(crate) fn bag_add(&mut self, bag: usize, t: Cell) -> Result<(), Exc> {
        let mut vars = std::mem::take(&mut self.bag_vars);
        vars.clear();
        let n = match self.store.copy_out_scratch(t, &mut vars) {
            Ok(cells) => cells.len(),
            Err(Cyclic) => {
                self.bag_vars = vars;
                return Err(self.cyclic_error());
            }
        };
        // A buffer that must grow (doubling) is checked against the limit
        // first, so a bag never takes up to twice the limit's memory.
        let b = &self.bags[bag];
        let growth =
            |len: usize, cap: usize, add: usize| if len + add > cap { (2 * cap).max(len + add) - cap } else { 0 };
        let extra =
            growth(b.cells.len(), b.cells.capacity(), n) + growth(b.items.len(), b.items.capacity(), 1) * BAG_ENTRY;
        if extra > 0
            && let Err(e) = self.check_memory(extra * std::mem::size_of::<Cell>())
        {
            self.bag_vars = vars;
            return Err(e);
        }
        let cells = self.store.last_copy();
        let b = &mut self.bags[bag];
        let before = b.size();
        b.cells.extend_from_slice(cells);
        b.items.push((b.cells.len(), vars.len()));
        self.bag_cells += b.size() - before;
        self.bag_vars = vars;
        self.check_memory(0)
    }

    /// Takes the newest bag, which is number `bag` (give it back with
    /// `bag_done`).
    fn bag_take(&mut self, bag: usize) -> Bag {
        let b = self.bags.pop().unwrap_or_default();
        debug_assert_eq!(self.bags.len(), bag);
        self.bag_cells -= b.size();
        b
    }

    /// Keeps an emptied bag's buffers for the next bag.
    fn bag_done(&mut self, mut b: Bag) {
        if self.bag_pool.len() < BAG_POOL && b.cells.capacity() <= BAG_KEEP {
            b.cells.clear();
            b.items.clear();
            self.bag_pool.push(b);
        }
    }

    /// The first solution of the newest bag, number `bag`, built on the
    /// heap (`None` when it has none).
    pub(crate) fn bag_first(&mut self, bag: usize) -> Option<Cell> {
        let b = self.bag_take(bag);
        let first = b.solutions().next().map(|(cells, nvars)| self.store.copy_in_cells(cells, nvars, &mut Vec::new()));
        self.bag_done(b);
        first
    }

    /// The newest bag, number `bag`, as a list ending in `tail` on the
    /// heap (within the memory limit).
    pub(crate) fn bag_list(&mut self, bag: usize, tail: Cell) -> Result<Cell, Exc> {
        let b = self.bag_take(bag);
        let size = b.cells.len() + 2 * b.items.len();
        if let Err(e) = self.check_memory(size * std::mem::size_of::<Cell>()) {
            self.bag_done(b);
            return Err(e);
        }
        let mut cells = Vec::with_capacity(b.items.len());
        let mut frame = Vec::new();
        for (t, nvars) in b.solutions() {
            frame.clear();
            cells.push(self.store.copy_in_cells(t, nvars, &mut frame));
        }
        self.bag_done(b);
        Ok(self.store.new_partial_list(&cells, tail))
    }

    /// Drops the bags from number `n` on.
    pub(crate) fn bags_truncate(&mut self, n: usize) {
        while self.bags.len() > n {
            let b = self.bag_take(self.bags.len() - 1);
            self.bag_done(b);
        }
    }

    /// Whether `check_limits` would find nothing to do at step `steps`,
    /// and no garbage collection is due (the register machine's fast call
    /// skips both then).
    #[inline(always)]
    pub(crate) fn limits_quiet(&self, steps: u64) -> bool {
        steps < self.step_at && self.store.heap.len() <= self.heap_at
    }

    /// `step_at` after a full check at the current step.
    fn next_step_at(&self) -> u64 {
        let periodic = (self.steps | 0xfff) + 1;
        self.limits.max_steps.map_or(periodic, |m| periodic.min(m.saturating_add(1)))
    }

    /// Sets the heap size that triggers the next garbage collection.
    pub(crate) fn set_gc_at(&mut self, at: usize) {
        self.gc_at = at;
        self.heap_at = at.min(self.limits.max_memory / std::mem::size_of::<Cell>());
    }

    /// Counts a step against the limits (steps, time, memory): an error
    /// past one. A host's builtin that loops calls it as it goes.
    #[inline]
    pub fn check_limits(&mut self) -> Result<(), Exc> {
        if let Some(max) = self.limits.max_steps
            && self.steps > max
        {
            return Err(Exc::Limit(atom::STEPS));
        }
        // The heap at every step, everything else now and then.
        if self.store.heap.len() * std::mem::size_of::<Cell>() > self.limits.max_memory {
            return Err(Exc::Limit(atom::MEMORY));
        }
        if self.steps >= self.step_at {
            if let Some(d) = self.deadline
                && Instant::now() > d
            {
                return Err(Exc::Limit(atom::TIME));
            }
            self.check_memory(0)?;
            self.step_at = self.next_step_at();
        }
        Ok(())
    }

    /// Removes every choice point above height `h`. (Inline: a cut with
    /// nothing to remove, as a neck cut entered without a choice point,
    /// costs a comparison.)
    #[inline(always)]
    pub fn cut(&mut self, h: usize) {
        if self.choices.len() > h {
            self.cut_above(h);
        }
    }

    fn cut_above(&mut self, h: usize) {
        for c in &self.choices[h..] {
            if let Alt::Findall { bag, .. } | Alt::Sample { bag, .. } = c.alt {
                self.bags_truncate(bag as usize);
                break;
            }
        }
        self.choices.truncate(h);
        self.store.hb = self.choices.last().map_or(0, |c| c.heap);
    }

    /// Whether a `catch/3` whose choice point `cp` was just popped takes
    /// the ball: the state is restored to the catch's and the catcher is
    /// unified with a copy of the ball (undone if it does not match).
    pub(crate) fn catches(&mut self, cp: &Choice, catcher: Cell, ball: &Tmpl) -> bool {
        self.store.undo_to(cp.trail);
        self.store.heap.truncate(cp.heap);
        let b = self.store.copy_in(ball, &mut Vec::new());
        let mark = self.store.trail.len();
        // Bindings made by a failed match must be undone, and hb is below
        // them, so trail everything here.
        let saved_hb = self.store.hb;
        self.store.hb = usize::MAX;
        let ok = self.store.unify(catcher, b);
        self.store.hb = saved_hb;
        if !ok {
            self.store.undo_to(mark);
        }
        ok
    }

    pub(crate) fn check_callable_ctx(&mut self, g: Cell, name: Atom, arity: u32) -> Result<(), Exc> {
        self.context = (name, arity);
        self.check_callable(g)
    }

    pub(crate) fn check_partial_list(&mut self, l: Cell, name: Atom, arity: u32) -> Result<(), Exc> {
        let mut l = self.store.deref(l);
        loop {
            match l {
                Cell::Lst(p) => l = self.store.deref(self.store.heap[p + 1]),
                Cell::Ref(_) | Cell::Atom(atom::NIL) => return Ok(()),
                _ => {
                    self.context = (name, arity);
                    return Err(self.type_error(atom::LIST, l));
                }
            }
        }
    }

    /// Pushes a choice point for a nondeterministic builtin.
    pub fn push_alt(&mut self, alt: Alt) {
        let heap = self.store.heap.len();
        let vm = self.vm_save();
        self.choices.push(Choice { alt, heap, trail: self.store.trail.len(), vm });
        self.store.hb = heap;
    }

    /// Runs a goal for a builtin that needs to call Prolog: it is queued to
    /// run next, with the given cut barrier semantics of `call/1`.
    pub fn push_call(&mut self, goal: Cell) {
        self.pending = Some(goal);
    }

    /// Writes text to the output sink.
    pub fn emit(&mut self, s: &str) {
        self.out.push_str(s);
        if self.echo && (self.out.len() > 4096 || s.contains('\n')) {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if self.echo && !self.out.is_empty() {
            use std::io::Write;
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(self.out.as_bytes());
            let _ = o.flush();
            self.out.clear();
        }
    }
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}
