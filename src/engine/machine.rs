//! The resolution loop: an iterative solver with an explicit continuation
//! (goal vectors on the heap, linked by `Node`s), a choice-point stack, a
//! trail, first-argument indexing and last-call optimisation. Control
//! constructs (`,` `;` `->` `*->` `\+` `call/N` `catch/3` `findall/3`) are
//! handled here without Rust recursion.

use super::atoms::{Atom, Atoms, atom};
use super::db::{Candidates, ClauseCode, Db, Entry, Key};
use super::term::{Cell, Store, Tmpl};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::Cell as Mut;
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
    Ite,
    SoftCut,
    ExitCatch,
    FaAdd,
    Sample,
    Halt0,
    Halt1,
}

/// A run of goals to solve, on the heap at `base..base+len`, and what
/// comes after them.
#[derive(Debug)]
pub struct Node {
    pub base: Mut<usize>,
    pub len: u32,
    /// Choice-stack height a `!` among these goals cuts back to.
    pub barrier: usize,
    pub next: Option<Rc<Node>>,
    pub next_pos: u32,
}

impl Drop for Node {
    // Long continuations (deep non-tail recursion) are freed in a loop, not
    // by recursive drops.
    fn drop(&mut self) {
        let mut next = self.next.take();
        while let Some(n) = next {
            match Rc::try_unwrap(n) {
                Ok(mut n) => next = n.next.take(),
                Err(_) => break,
            }
        }
    }
}

/// Finished continuation nodes kept for reuse at most.
const SPARE_NODES: usize = 64;

/// What to do when backtracking into a choice point.
#[derive(Debug)]
pub enum Alt {
    /// Try the remaining candidate clauses of a call.
    Clauses { goal: Cell, clauses: Rc<Vec<Rc<ClauseCode>>>, cands: Candidates, next: usize },
    /// Run this goal (the other branch of `;`).
    Goal(Cell),
    /// A `catch/3` frame: only unwound into by exceptions.
    Catch { catcher: Cell, recovery: Cell },
    /// The end of a `findall/3`: collect the bag and continue.
    Findall { bag: usize, result: Cell, tail: Cell },
    /// The end of a `'$sample'/3`: the bag holds the solution kept.
    Sample { bag: usize, result: Cell },
    /// Successive integers for `between/3`.
    Between { var: Cell, next: i64, hi: i64 },
    /// Alternative sets of unifications (for nondeterministic builtins).
    Unify { alts: Rc<Vec<Vec<(Cell, Cell)>>>, next: usize },
    /// Clauses for `clause/2` and `retract/1`.
    ClauseIter { head: Cell, body: Cell, clauses: Rc<Vec<Rc<ClauseCode>>>, next: usize, retract: Option<(Atom, u32)> },
    /// Removed by a soft cut: skipped when backtracking.
    Dead,
    /// Register machine: the remaining candidate clauses of a call.
    VmClauses { clauses: Rc<Vec<Rc<ClauseCode>>>, cands: Candidates, next: usize },
    /// Register machine: the other branch of a disjunction in a clause.
    Else,
}

/// A choice point.
#[derive(Debug)]
pub struct Choice {
    pub alt: Alt,
    pub heap: usize,
    pub trail: usize,
    pub cont: Option<Rc<Node>>,
    pub pos: u32,
    /// Cut barrier for the alternative.
    pub barrier: usize,
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

/// What one solution in a findall bag costs beyond its cells (its
/// allocation and its place in the bag), in cells.
const BAG_ENTRY: usize = 5;

/// A deterministic builtin: reads its arguments, may bind them.
pub type BuiltinFn = fn(&mut Machine, &[Cell]) -> Res;

/// The abstract machine: store, database, stacks.
pub struct Machine {
    pub atoms: Atoms,
    pub store: Store,
    pub db: Db,
    pub builtins: Vec<(Atom, u32, BuiltinFn)>,
    pub choices: Vec<Choice>,
    pub cont: Option<Rc<Node>>,
    pub pos: u32,
    /// Finished continuation nodes no one else holds, reused by
    /// `push_goals` instead of allocating.
    spare: Vec<Rc<Node>>,
    pub(crate) pending: Option<(Cell, usize)>,
    frame: Vec<Option<Cell>>,
    /// Scratch stack of head unification (both solvers).
    pub(crate) hwork: Vec<(usize, Cell)>,
    pub bags: Vec<Vec<Tmpl>>,
    /// Cells held in `bags`, with each solution's allocation counted as
    /// `BAG_ENTRY` cells more.
    pub bag_cells: usize,
    pub steps: u64,
    pub limits: Limits,
    pub(crate) deadline: Option<Instant>,
    pub out: String,
    /// When set, output is written to stdout as soon as it is produced.
    pub echo: bool,
    pub rng: ChaCha8Rng,
    /// The builtin being run, for error contexts.
    pub context: (Atom, u32),
    /// Heap size that triggers the next garbage collection.
    pub gc_at: usize,
    /// Variables the host holds (query variables): GC roots.
    pub roots: Vec<Cell>,
    /// Statistics.
    pub gc_runs: u64,
    /// Global variables (`nb_setval/2`).
    pub globals: std::collections::HashMap<Atom, Tmpl>,
    /// The file being loaded, if any (clauses may then be added to static
    /// predicates by directives).
    pub loading: Option<Rc<str>>,
    /// The register machine, used instead of the term solver when `vm_on`.
    pub vm: super::vm::Vm,
    pub vm_on: bool,
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
            cont: None,
            pos: 0,
            spare: Vec::new(),
            pending: None,
            frame: Vec::new(),
            hwork: Vec::new(),
            bags: Vec::new(),
            bag_cells: 0,
            steps: 0,
            limits: Limits::default(),
            deadline: None,
            out: String::new(),
            echo: false,
            rng: ChaCha8Rng::seed_from_u64(0),
            context: (atom::TRUE, 0),
            gc_at: 1 << 22,
            roots: Vec::new(),
            gc_runs: 0,
            globals: std::collections::HashMap::new(),
            loading: None,
            vm: super::vm::Vm::default(),
            vm_on: std::env::var("TABULA_ENGINE").map_or(true, |v| v != "term"),
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
            ("$ite", 3, Ite),
            ("$softcut", 3, SoftCut),
            ("$exit_catch", 1, ExitCatch),
            ("$fa_add", 2, FaAdd),
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
        let ball = self.store.new_struct(atom::ERROR, &[formal, ctx]);
        Exc::Throw(self.store.copy_out(ball, &mut Vec::new()))
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
        self.deadline = self.limits.timeout.map(|d| Instant::now() + d);
        if self.vm_on {
            return self.vm_start(goal);
        }
        let base = self.store.heap.len();
        self.store.heap.push(goal);
        self.cont = Some(Rc::new(Node { base: Mut::new(base), len: 1, barrier: 0, next: None, next_pos: 0 }));
        self.pos = 0;
    }

    /// Looks for the next answer: `Ok(true)` when one is found (bindings
    /// are on the heap), `Ok(false)` when there are no more.
    pub fn solve(&mut self, retry: bool) -> Res {
        if self.vm_on {
            return self.vm_solve(retry);
        }
        if retry && !self.backtrack()? {
            return Ok(false);
        }
        loop {
            if self.store.heap.len() > self.gc_at {
                super::gc::collect(self);
            }
            let (goal, barrier) = match self.pending.take() {
                Some(p) => p,
                None => {
                    let Some(node) = self.cont.as_ref() else {
                        return Ok(true);
                    };
                    let g = self.store.heap[node.base.get() + self.pos as usize];
                    let b = node.barrier;
                    if self.pos + 1 >= node.len {
                        self.pos = node.next_pos;
                        let mut done = self.cont.take().expect("a node");
                        match Rc::get_mut(&mut done) {
                            // No choice point holds it: its allocation is
                            // kept for the next `push_goals`.
                            Some(n) => {
                                self.cont = n.next.take();
                                if self.spare.len() < SPARE_NODES {
                                    self.spare.push(done);
                                }
                            }
                            None => self.cont = done.next.clone(),
                        }
                    } else {
                        self.pos += 1;
                    }
                    (g, b)
                }
            };
            let ok = match self.step(goal, barrier) {
                Ok(ok) => ok,
                Err(e) => self.handle(e)?,
            };
            if !ok && !self.backtrack()? {
                return Ok(false);
            }
        }
    }

    /// Bytes the running query's data uses (see `Limits::max_memory`).
    pub fn memory_used(&self) -> usize {
        use std::mem::size_of;
        let vm = &self.vm;
        (self.store.heap.len() + vm.ys.len() + vm.saved.len() + self.bag_cells) * size_of::<Cell>()
            + self.store.trail.len() * size_of::<usize>()
            + vm.envs.len() * size_of::<super::vm::Env>()
            + self.choices.len() * size_of::<Choice>()
            + self.out.len()
            + self.atoms.bytes
            + self.store.text_bytes
    }

    /// A memory error if the query's data plus `extra` bytes would pass
    /// the limit (builtins call it before they allocate in proportion to
    /// their input).
    pub fn check_memory(&mut self, extra: usize) -> Result<(), Exc> {
        if self.memory_used().saturating_add(extra) > self.limits.max_memory {
            return Err(Exc::Limit(atom::MEMORY));
        }
        Ok(())
    }

    /// A new findall bag.
    pub(crate) fn bag_new(&mut self) -> usize {
        self.bags.push(Vec::new());
        self.bags.len() - 1
    }

    /// Adds a solution to a bag, within the memory limit.
    pub(crate) fn bag_add(&mut self, bag: usize, t: Tmpl) -> Result<(), Exc> {
        self.bag_cells += t.cells.len() + BAG_ENTRY;
        self.bags[bag].push(t);
        self.check_memory(0)
    }

    /// Takes the newest bag, which is number `bag`.
    pub(crate) fn bag_take(&mut self, bag: usize) -> Vec<Tmpl> {
        let items = self.bags.pop().unwrap_or_default();
        debug_assert_eq!(self.bags.len(), bag);
        self.bag_cells -= items.iter().map(|t| t.cells.len() + BAG_ENTRY).sum::<usize>();
        items
    }

    /// The newest bag, number `bag`, as a list ending in `tail` on the
    /// heap (within the memory limit).
    pub(crate) fn bag_list(&mut self, bag: usize, tail: Cell) -> Result<Cell, Exc> {
        let items = self.bag_take(bag);
        let size: usize = items.iter().map(|t| t.cells.len() + 2).sum();
        self.check_memory(size * std::mem::size_of::<Cell>())?;
        let mut cells = Vec::with_capacity(items.len());
        let mut frame = Vec::new();
        for t in &items {
            frame.clear();
            cells.push(self.store.copy_in(t, &mut frame));
        }
        Ok(self.store.new_partial_list(&cells, tail))
    }

    /// Drops the bags from number `n` on.
    pub(crate) fn bags_truncate(&mut self, n: usize) {
        for b in self.bags.drain(n.min(self.bags.len())..) {
            self.bag_cells -= b.iter().map(|t| t.cells.len() + BAG_ENTRY).sum::<usize>();
        }
    }

    #[inline]
    pub(crate) fn check_limits(&mut self) -> Result<(), Exc> {
        if let Some(max) = self.limits.max_steps
            && self.steps > max
        {
            return Err(Exc::Limit(atom::STEPS));
        }
        // The heap at every step, everything else now and then.
        if self.store.heap.len() * std::mem::size_of::<Cell>() > self.limits.max_memory {
            return Err(Exc::Limit(atom::MEMORY));
        }
        if self.steps & 0xfff == 0 {
            if let Some(d) = self.deadline
                && Instant::now() > d
            {
                return Err(Exc::Limit(atom::TIME));
            }
            self.check_memory(0)?;
        }
        Ok(())
    }

    /// Runs one goal. `Ok(false)` means it failed.
    fn step(&mut self, goal: Cell, barrier: usize) -> Res {
        self.steps += 1;
        self.check_limits()?;
        let g = self.store.deref(goal);
        let (key, p) = match g {
            Cell::Atom(a) => ((a, 0), 0),
            Cell::Str(p) => match self.store.heap[p] {
                Cell::Fun(f, n) => ((f, n), p),
                _ => unreachable!("Str points at Fun"),
            },
            Cell::Ref(_) => return Err(self.inst_error_in(atom::CALL, 1)),
            Cell::Lst(_) => ((atom::DOT, 2), 0),
            other => {
                self.context = (atom::CALL, 1);
                return Err(self.type_error(atom::CALLABLE, other));
            }
        };
        match self.db.get(key.0, key.1) {
            Some(Entry::User(i)) => self.call_pred(g, i),
            Some(Entry::Builtin(i)) => {
                let (name, arity, f) = self.builtins[i];
                self.context = (name, arity);
                let mut args = [Cell::Int(0); 8];
                let n = arity as usize;
                args[..n].copy_from_slice(&self.store.heap[p + 1..p + 1 + n]);
                f(self, &args[..n])
            }
            Some(Entry::Control(c)) => self.control(c, p, barrier),
            None => {
                if let Cell::Lst(_) = g {
                    self.context = (atom::CALL, 1);
                    return Err(self.type_error(atom::CALLABLE, g));
                }
                self.context = (atom::CALL, 1);
                let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(key.0), Cell::Int(key.1 as i64)]);
                Err(self.existence_error(atom::PROCEDURE, pi))
            }
        }
    }

    fn inst_error_in(&mut self, name: Atom, arity: u32) -> Exc {
        self.context = (name, arity);
        self.inst_error()
    }

    /// Pushes a choice point.
    #[inline]
    fn push_choice(&mut self, alt: Alt, barrier: usize) {
        let heap = self.store.heap.len();
        let vm = self.vm_save();
        self.choices.push(Choice {
            alt,
            heap,
            trail: self.store.trail.len(),
            cont: self.cont.clone(),
            pos: self.pos,
            barrier,
            vm,
        });
        self.store.hb = heap;
    }

    /// Removes every choice point above height `h`.
    pub fn cut(&mut self, h: usize) {
        if self.choices.len() > h {
            for c in &self.choices[h..] {
                if let Alt::Findall { bag, .. } | Alt::Sample { bag, .. } = c.alt {
                    self.bags_truncate(bag);
                    break;
                }
            }
            self.choices.truncate(h);
            self.store.hb = self.choices.last().map_or(0, |c| c.heap);
        }
    }

    /// Pushes `len` goals stored at `base` to run next.
    #[inline]
    fn push_goals(&mut self, base: usize, len: u32, barrier: usize) {
        let next = self.cont.take();
        let node = match self.spare.pop() {
            Some(mut rc) => {
                let n = Rc::get_mut(&mut rc).expect("a spare node is not shared");
                n.base.set(base);
                (n.len, n.barrier, n.next, n.next_pos) = (len, barrier, next, self.pos);
                rc
            }
            None => Rc::new(Node { base: Mut::new(base), len, barrier, next, next_pos: self.pos }),
        };
        self.cont = Some(node);
        self.pos = 0;
    }

    /// Runs `goals` (built on the heap here) next, with cut barrier `barrier`.
    fn push_goal_list(&mut self, goals: &[Cell], barrier: usize) {
        let base = self.store.heap.len();
        self.store.heap.extend_from_slice(goals);
        self.push_goals(base, goals.len() as u32, barrier);
    }

    fn call_pred(&mut self, goal: Cell, i: usize) -> Res {
        let key = match goal {
            Cell::Str(p) => Key::of(self.store.deref(self.store.heap[p + 1]), &self.store.heap),
            _ => None,
        };
        let (cands, clauses) = self.db.preds[i].candidates(key);
        match cands.len() {
            0 => Ok(false),
            1 => {
                let clause = clauses[cands[0] as usize].clone();
                let barrier = self.choices.len();
                Ok(self.resolve(&clause, goal, barrier))
            }
            _ => {
                let (cands, clauses) = (cands.clone(), clauses.clone());
                self.try_clauses(goal, clauses, cands, 0, false)
            }
        }
    }

    /// Unifies the clause head with the goal and schedules its body, whose
    /// `!` cuts back to `barrier`.
    #[inline]
    fn resolve(&mut self, clause: &ClauseCode, goal: Cell, barrier: usize) -> bool {
        if !self.unify_head(clause, goal) {
            return false;
        }
        match clause.body_len {
            0 => {}
            1 => {
                // A single goal runs next without a continuation node.
                let root = clause.body_start;
                let g = self.store.build(&clause.tmpl.cells, root, clause.ends[root] as usize, &mut self.frame);
                self.pending = Some((g, barrier));
            }
            n => {
                let base = self.store.heap.len();
                self.store.heap.resize(base + n, Cell::Int(0));
                for k in 0..n {
                    let root = clause.body_start + k;
                    let v = self.store.build(&clause.tmpl.cells, root, clause.ends[root] as usize, &mut self.frame);
                    self.store.heap[base + k] = v;
                }
                self.push_goals(base, n as u32, barrier);
            }
        }
        true
    }

    /// Tries candidate clauses from `i` on. `resumed`: the choice point for
    /// this call is already on top of the stack.
    fn try_clauses(
        &mut self,
        goal: Cell,
        clauses: Rc<Vec<Rc<ClauseCode>>>,
        cands: Candidates,
        mut i: usize,
        resumed: bool,
    ) -> Res {
        let mut have_cp = resumed;
        loop {
            let more = i + 1 < cands.len();
            if more && !have_cp {
                let barrier = self.choices.len();
                self.push_choice(
                    Alt::Clauses { goal, clauses: clauses.clone(), cands: cands.clone(), next: i + 1 },
                    barrier,
                );
                have_cp = true;
            } else if have_cp {
                let top = self.choices.len() - 1;
                if more {
                    if let Alt::Clauses { next, .. } = &mut self.choices[top].alt {
                        *next = i + 1;
                    }
                } else {
                    // Last candidate: the choice point goes.
                    self.choices.pop();
                    self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                    have_cp = false;
                }
            }
            let barrier = self.choices.len() - have_cp as usize;
            if self.resolve(&clauses[cands[i] as usize], goal, barrier) {
                return Ok(true);
            }
            if !more {
                return Ok(false);
            }
            let top = &self.choices[self.choices.len() - 1];
            let (h, t) = (top.heap, top.trail);
            self.store.undo_to(t);
            self.store.heap.truncate(h);
            i += 1;
        }
    }

    /// Unifies a clause head (a template) with a goal on the heap, filling
    /// `self.frame` with the clause's variables.
    fn unify_head(&mut self, clause: &ClauseCode, goal: Cell) -> bool {
        let cells = &clause.tmpl.cells;
        self.frame.clear();
        self.frame.resize(clause.tmpl.nvars, None);
        let head = cells[2];
        let Cell::Str(hp) = head else {
            return true; // an atom head matches by indexing on name/arity
        };
        let Cell::Str(gp) = goal else {
            return false;
        };
        let Cell::Fun(_, n) = cells[hp] else { unreachable!("head Str points at Fun") };
        let mut work = std::mem::take(&mut self.hwork);
        work.clear();
        for k in (0..n as usize).rev() {
            let h = self.store.heap[gp + 1 + k];
            // A variable seen for the first time just takes the argument.
            if let Cell::Ref(v) = cells[hp + 1 + k]
                && self.frame[v].is_none()
            {
                self.frame[v] = Some(h);
                continue;
            }
            work.push((hp + 1 + k, h));
        }
        let mut ok = true;
        while let Some((ti, h)) = work.pop() {
            let t = cells[ti];
            match t {
                Cell::Ref(k) => match self.frame[k] {
                    None => self.frame[k] = Some(h),
                    Some(v) => {
                        if !self.store.unify(v, h) {
                            ok = false;
                            break;
                        }
                    }
                },
                Cell::Str(tp) => {
                    let h = self.store.deref(h);
                    match h {
                        Cell::Ref(a) => {
                            let v = self.store.build(cells, ti, clause.ends[ti] as usize, &mut self.frame);
                            self.store.bind(a, v);
                        }
                        Cell::Str(q) => {
                            if cells[tp] != self.store.heap[q] {
                                ok = false;
                                break;
                            }
                            let Cell::Fun(_, m) = cells[tp] else { unreachable!() };
                            for k in (0..m as usize).rev() {
                                work.push((tp + 1 + k, self.store.heap[q + 1 + k]));
                            }
                        }
                        _ => {
                            ok = false;
                            break;
                        }
                    }
                }
                Cell::Lst(tp) => {
                    let h = self.store.deref(h);
                    match h {
                        Cell::Ref(a) => {
                            let v = self.store.build(cells, ti, clause.ends[ti] as usize, &mut self.frame);
                            self.store.bind(a, v);
                        }
                        Cell::Lst(q) => {
                            work.push((tp + 1, self.store.heap[q + 1]));
                            work.push((tp, self.store.heap[q]));
                        }
                        _ => {
                            ok = false;
                            break;
                        }
                    }
                }
                c => {
                    let h = self.store.deref(h);
                    match h {
                        Cell::Ref(a) => self.store.bind(a, c),
                        _ => {
                            if h != c && !self.store.unify(h, c) {
                                ok = false;
                                break;
                            }
                        }
                    }
                }
            }
        }
        self.hwork = work;
        ok
    }

    /// Backtracks to the newest choice point and resumes it. `Ok(false)`
    /// when there is none left.
    fn backtrack(&mut self) -> Res {
        loop {
            let Some(top) = self.choices.last_mut() else {
                return Ok(false);
            };
            self.store.undo_to(top.trail);
            self.store.heap.truncate(top.heap);
            self.cont = top.cont.clone();
            self.pos = top.pos;
            let barrier = top.barrier;
            match &mut top.alt {
                Alt::Clauses { goal, clauses, cands, next } => {
                    let (goal, clauses, cands, next) = (*goal, clauses.clone(), cands.clone(), *next);
                    match self.try_clauses(goal, clauses, cands, next, true) {
                        Ok(true) => return Ok(true),
                        Ok(false) => continue,
                        Err(e) => {
                            if self.handle(e)? {
                                return Ok(true);
                            }
                        }
                    }
                }
                Alt::Goal(g) => {
                    let g = *g;
                    self.choices.pop();
                    self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                    self.pending = Some((g, barrier));
                    return Ok(true);
                }
                Alt::VmClauses { .. } | Alt::Else | Alt::Sample { .. } => {
                    unreachable!("a register-machine choice point in the term solver")
                }
                Alt::Catch { .. } | Alt::Dead => {
                    self.choices.pop();
                    self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                }
                Alt::Findall { bag, result, tail } => {
                    let (bag, result, tail) = (*bag, *result, *tail);
                    self.choices.pop();
                    self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                    let list = self.bag_list(bag, tail)?;
                    if self.store.unify(list, result) {
                        return Ok(true);
                    }
                }
                Alt::Between { var, next, hi } => {
                    let (var, v, hi) = (*var, *next, *hi);
                    if v >= hi {
                        self.choices.pop();
                        self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                    } else {
                        *next = v + 1;
                    }
                    if self.store.unify(var, Cell::Int(v)) {
                        return Ok(true);
                    }
                }
                Alt::Unify { alts, next } => {
                    let (alts, i) = (alts.clone(), *next);
                    if i + 1 >= alts.len() {
                        self.choices.pop();
                        self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                    } else {
                        *next = i + 1;
                    }
                    if alts[i].iter().all(|&(a, b)| self.store.unify(a, b)) {
                        return Ok(true);
                    }
                }
                Alt::ClauseIter { .. } => match super::builtins::resume_clause_iter(self) {
                    Ok(true) => return Ok(true),
                    Ok(false) => continue,
                    Err(e) => {
                        if self.handle(e)? {
                            return Ok(true);
                        }
                    }
                },
            }
        }
    }

    /// Handles an exception: unwinds to a matching active `catch/3` and
    /// runs its recovery (`Ok(true)`), or passes the exception on.
    fn handle(&mut self, e: Exc) -> Res {
        let Exc::Throw(ball) = e else {
            return Err(e);
        };
        // A catch frame is active while its exit marker is still ahead.
        let mut active = Vec::new();
        let mut node = self.cont.clone();
        let mut pos = self.pos as usize;
        while let Some(n) = node {
            let base = n.base.get();
            for k in pos..n.len as usize {
                if let Cell::Str(p) = self.store.heap[base + k]
                    && self.store.heap[p] == Cell::Fun(atom::EXIT_CATCH, 1)
                    && let Cell::Int(h) = self.store.heap[p + 1]
                {
                    active.push(h as usize);
                }
            }
            pos = n.next_pos as usize;
            node = n.next.clone();
        }
        while let Some(cp) = self.choices.pop() {
            self.store.hb = self.choices.last().map_or(0, |c| c.heap);
            match cp.alt {
                Alt::Findall { bag, .. } => self.bags_truncate(bag),
                Alt::Catch { catcher, recovery }
                    if active.contains(&self.choices.len()) && self.catches(&cp, catcher, &ball) =>
                {
                    self.cont = cp.cont;
                    self.pos = cp.pos;
                    self.pending = Some((recovery, self.choices.len()));
                    return Ok(true);
                }
                _ => {}
            }
        }
        Err(Exc::Throw(ball))
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

    /// Control constructs.
    fn control(&mut self, c: Control, p: usize, barrier: usize) -> Res {
        let arg = |m: &Machine, i: usize| m.store.heap[p + 1 + i];
        match c {
            Control::True => Ok(true),
            Control::Fail => Ok(false),
            Control::Cut => {
                self.cut(barrier);
                Ok(true)
            }
            Control::Conj => {
                self.push_goals(p + 1, 2, barrier);
                Ok(true)
            }
            Control::Disj => {
                let left = self.store.deref(arg(self, 0));
                let right = arg(self, 1);
                if let Cell::Str(q) = left {
                    match self.store.heap[q] {
                        Cell::Fun(atom::ARROW, 2) => {
                            let (c, t) = (self.store.heap[q + 1], self.store.heap[q + 2]);
                            return Ok(self.if_then_else(c, t, right, barrier, false));
                        }
                        Cell::Fun(atom::SOFT, 2) => {
                            let (c, t) = (self.store.heap[q + 1], self.store.heap[q + 2]);
                            return Ok(self.if_then_else(c, t, right, barrier, true));
                        }
                        _ => {}
                    }
                }
                self.push_choice(Alt::Goal(right), barrier);
                self.pending = Some((left, barrier));
                Ok(true)
            }
            Control::IfThen => {
                let (c, t) = (arg(self, 0), arg(self, 1));
                Ok(self.if_then_else(c, t, Cell::Atom(atom::FAIL), barrier, false))
            }
            Control::SoftIf => {
                self.push_goals(p + 1, 2, barrier);
                Ok(true)
            }
            Control::Not => {
                let goal = arg(self, 0);
                Ok(self.if_then_else(goal, Cell::Atom(atom::FAIL), Cell::Atom(atom::TRUE), barrier, false))
            }
            Control::Call(n) => {
                let goal = if n == 1 {
                    arg(self, 0)
                } else {
                    let extra: Vec<Cell> = (1..n as usize).map(|i| arg(self, i)).collect();
                    self.add_args(arg(self, 0), &extra, n as u32)?
                };
                self.check_callable_ctx(goal, atom::CALL, n as u32)?;
                self.pending = Some((goal, self.choices.len()));
                Ok(true)
            }
            Control::Findall | Control::Findall4 => {
                let (template, goal, result) = (arg(self, 0), arg(self, 1), arg(self, 2));
                let tail = if c == Control::Findall4 { arg(self, 3) } else { Cell::Atom(atom::NIL) };
                let ar = if c == Control::Findall4 { 4 } else { 3 };
                self.check_callable_ctx(goal, atom::FINDALL, ar)?;
                self.check_partial_list(result, atom::FINDALL, ar)?;
                let bag = self.bag_new();
                self.push_choice(Alt::Findall { bag, result, tail }, barrier);
                let add = self.store.new_struct(atom::FA_ADD, &[Cell::Int(bag as i64), template]);
                let b = self.choices.len();
                self.push_goal_list(&[goal, add], b);
                Ok(true)
            }
            Control::Sample => {
                // The term solver samples from the whole list.
                let args = [arg(self, 0), arg(self, 1), arg(self, 2)];
                let slow = self.atoms.intern("$sample_all");
                let g = self.store.new_struct(slow, &args);
                self.pending = Some((g, barrier));
                Ok(true)
            }
            Control::FaAdd => {
                let Cell::Int(bag) = arg(self, 0) else { unreachable!("bag number") };
                let t = self.store.copy_out(arg(self, 1), &mut Vec::new());
                self.bag_add(bag as usize, t)?;
                Ok(false)
            }
            Control::Catch => {
                let (goal, catcher, recovery) = (arg(self, 0), arg(self, 1), arg(self, 2));
                let h = self.choices.len();
                self.push_choice(Alt::Catch { catcher, recovery }, barrier);
                let exit = self.store.new_struct(atom::EXIT_CATCH, &[Cell::Int(h as i64)]);
                self.push_goal_list(&[goal, exit], h + 1);
                Ok(true)
            }
            Control::ExitCatch => {
                let Cell::Int(h) = arg(self, 0) else { unreachable!("catch height") };
                let h = h as usize;
                if self.choices.len() == h + 1 && matches!(self.choices[h].alt, Alt::Catch { .. }) {
                    self.choices.pop();
                    self.store.hb = self.choices.last().map_or(0, |c| c.heap);
                }
                Ok(true)
            }
            Control::Throw => {
                let ball = self.store.deref(arg(self, 0));
                if let Cell::Ref(_) = ball {
                    return Err(self.inst_error_in(atom::THROW, 1));
                }
                Err(Exc::Throw(self.store.copy_out(ball, &mut Vec::new())))
            }
            Control::Ite => {
                let (Cell::Int(h), Cell::Int(b)) = (arg(self, 0), arg(self, 1)) else { unreachable!("ite marks") };
                self.cut(h as usize);
                self.pending = Some((arg(self, 2), b as usize));
                Ok(true)
            }
            Control::SoftCut => {
                let (Cell::Int(h), Cell::Int(b)) = (arg(self, 0), arg(self, 1)) else { unreachable!("softcut marks") };
                if let Some(cp) = self.choices.get_mut(h as usize) {
                    cp.alt = Alt::Dead;
                }
                self.pending = Some((arg(self, 2), b as usize));
                Ok(true)
            }
            Control::Halt0 => Err(Exc::Halt(0)),
            Control::Halt1 => match self.store.deref(arg(self, 0)) {
                Cell::Int(i) => Err(Exc::Halt(i as i32)),
                Cell::Ref(_) => Err(self.inst_error_in(atom::HALT, 1)),
                other => {
                    self.context = (atom::HALT, 1);
                    Err(self.type_error(atom::INTEGER, other))
                }
            },
        }
    }

    /// `(C -> T ; E)` and `(C *-> T ; E)`.
    fn if_then_else(&mut self, c: Cell, t: Cell, e: Cell, barrier: usize, soft: bool) -> bool {
        let h = self.choices.len();
        self.push_choice(Alt::Goal(e), barrier);
        let marker = if soft { atom::SOFTCUT } else { atom::ITE };
        let then = self.store.new_struct(marker, &[Cell::Int(h as i64), Cell::Int(barrier as i64), t]);
        self.push_goal_list(&[c, then], h + 1);
        true
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

    /// `G` with `extra` arguments appended (for `call/N`, `maplist`...).
    pub fn add_args(&mut self, g: Cell, extra: &[Cell], n: u32) -> Result<Cell, Exc> {
        match self.store.deref(g) {
            Cell::Atom(f) => Ok(self.store.new_struct(f, extra)),
            Cell::Str(q) => {
                let Cell::Fun(f, m) = self.store.heap[q] else { unreachable!() };
                let mut args: Vec<Cell> = self.store.heap[q + 1..q + 1 + m as usize].to_vec();
                args.extend_from_slice(extra);
                Ok(self.store.new_struct(f, &args))
            }
            Cell::Lst(q) => {
                let mut args = vec![self.store.heap[q], self.store.heap[q + 1]];
                args.extend_from_slice(extra);
                Ok(self.store.new_struct(atom::DOT, &args))
            }
            Cell::Ref(_) => Err(self.inst_error_in(atom::CALL, n)),
            other => {
                self.context = (atom::CALL, n);
                Err(self.type_error(atom::CALLABLE, other))
            }
        }
    }

    /// Pushes a choice point for a nondeterministic builtin.
    pub fn push_alt(&mut self, alt: Alt) {
        let b = self.choices.len();
        self.push_choice(alt, b);
    }

    /// Runs a goal for a builtin that needs to call Prolog: it is queued to
    /// run next, with the given cut barrier semantics of `call/1`.
    pub fn push_call(&mut self, goal: Cell) {
        self.pending = Some((goal, self.choices.len()));
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
