//! Clause templates → register-machine code.
//!
//! The input is a clause as `ClauseCode` stores it: a template whose cell 2
//! is the head and whose cells from 3 on are the body goals (control
//! constructs keep their goal arguments; a variable goal is `call(X)`).

use super::{
    AOp, ASTACK, ArgDst, ArgFast, Arith, Arith2, Arith2Op, ArithOp, Expr, FIRST, Instr, IsChain, NO_PRED, Opd, PERM,
    TestFast, TestOp, Tm, TypeTest, UArg, VOID,
};
use crate::engine::atoms::{Atom, atom};
use crate::engine::db::{Db, Entry};
use crate::engine::machine::Control;
use crate::engine::term::{Cell, subtree_ends};
use std::rc::Rc;

/// Control constructs nested deeper than this are called, not inlined.
const MAX_INLINE_DEPTH: usize = 200;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Loc {
    X(u32),
    Y(u32),
    Void,
}

/// What a body goal is.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    True,
    Fail,
    Cut,
    Conj,
    Disj,
    IfThen(bool),
    Not,
    /// `findall/3` (`findall/4` when true) compiled in place.
    Findall(bool),
    Meta(u32),
    Control(Control),
    Builtin(u32),
    User,
}

/// How a `!` in the goal being compiled cuts.
#[derive(Clone, Copy)]
enum CutKind {
    Clause,
    Level(u32),
}

/// A goal's name, arity and argument cells.
pub(crate) fn parts(cells: &[Cell], i: usize) -> (Atom, Vec<usize>) {
    match cells[i] {
        Cell::Atom(a) => (a, Vec::new()),
        Cell::Str(p) => {
            let Cell::Fun(f, n) = cells[p] else { unreachable!("Str points at Fun") };
            (f, (p + 1..p + 1 + n as usize).collect())
        }
        Cell::Lst(p) => (atom::DOT, vec![p, p + 1]),
        // A variable goal: `call(X)` with the variable as argument.
        _ => (atom::CALL, vec![i]),
    }
}

fn kind(db: &Db, cells: &[Cell], i: usize, depth: usize) -> Kind {
    if let Cell::Ref(_) = cells[i] {
        return Kind::Meta(1);
    }
    let (f, args) = parts(cells, i);
    let n = args.len() as u32;
    match db.get(f, n) {
        Some(Entry::Control(c)) => match c {
            Control::True => Kind::True,
            Control::Fail => Kind::Fail,
            Control::Cut => Kind::Cut,
            Control::Call(n) => Kind::Meta(n as u32),
            Control::Conj | Control::Disj | Control::IfThen | Control::SoftIf | Control::Not
                if depth >= MAX_INLINE_DEPTH =>
            {
                Kind::Meta(0)
            }
            Control::Conj => Kind::Conj,
            Control::Disj => Kind::Disj,
            Control::IfThen => Kind::IfThen(false),
            Control::SoftIf => Kind::IfThen(true),
            Control::Not => Kind::Not,
            Control::Findall | Control::Findall4
                if depth < MAX_INLINE_DEPTH && inline_goal(db, cells, args[1], depth + 1) =>
            {
                Kind::Findall(c == Control::Findall4)
            }
            other => Kind::Control(other),
        },
        Some(Entry::Builtin(b)) => Kind::Builtin(b as u32),
        _ => Kind::User,
    }
}

/// The largest table of facts looked up in place: facts, and arguments.
const MAX_FACTS: usize = 8;
const MAX_FACT_ARGS: usize = 4;

/// Predicate `i` as a table of facts a call may look up in place
/// (`Instr::Facts`, `done` left to set): static, read from a program's
/// text, of two to `MAX_FACTS` facts whose arguments (one to
/// `MAX_FACT_ARGS`) are atoms and integers, no two with the same first
/// argument (so a call whose first argument is bound has one candidate at
/// most, as the first-argument index gives it). A predicate of one clause
/// is unfolded instead (see `unfold`).
fn fact_table(db: &Db, i: usize) -> Option<super::Facts> {
    let p = &db.preds[i];
    let n = p.arity as usize;
    if p.dynamic || p.abolished || !(2..=MAX_FACTS).contains(&p.clauses.len()) || !(1..=MAX_FACT_ARGS).contains(&n) {
        return None;
    }
    let (mut keys, mut rest) = (Vec::new(), Vec::new());
    for c in p.clauses.iter() {
        let cells = &c.tmpl.cells;
        let Cell::Str(h) = cells[2] else { return None };
        let row = &cells[h + 1..h + 1 + n];
        let constants = row.iter().all(|a| matches!(a, Cell::Atom(_) | Cell::Int(_)));
        if c.span.is_none() || c.body_len != 0 || !constants || keys.contains(&row[0]) {
            return None;
        }
        keys.push(row[0]);
        rest.extend_from_slice(&row[1..]);
    }
    Some(super::Facts { keys: keys.into(), rest: rest.into(), arity: n as u32, done: 0, fresh: false })
}

fn is_inline_control(k: Kind) -> bool {
    matches!(k, Kind::Conj | Kind::Disj | Kind::IfThen(_) | Kind::Not | Kind::Findall(_))
}

/// Whether the goal of a findall (at `g`) can run in place, in the
/// clause's code: a variable (called) or a callable term whose control
/// constructs hold callable terms all through. Anything else (`(p, 3)`) is
/// called as a term, which rejects it whole before it runs, as calling it
/// does.
fn inline_goal(db: &Db, cells: &[Cell], g: usize, depth: usize) -> bool {
    match cells[g] {
        Cell::Ref(_) | Cell::Atom(_) => true,
        Cell::Str(_) => match kind(db, cells, g, depth) {
            Kind::Conj | Kind::Disj | Kind::IfThen(_) | Kind::Not => {
                parts(cells, g).1.iter().all(|&a| inline_goal(db, cells, a, depth + 1))
            }
            Kind::Meta(0) => false,
            _ => true,
        },
        _ => false,
    }
}

/// Whether goal `g` is a test: `true`, a builtin that binds nothing when
/// it fails and leaves no choice point (comparisons, type tests,
/// `memberchk/2`...), or a conjunction of tests; with `binds` false, one
/// that binds nothing when it succeeds either (not `memberchk/2`). An
/// if-then-else or a negation whose condition is a test needs no choice
/// point: a failing test jumps to the else branch (see `Cg::tests`).
fn is_test(db: &Db, cells: &[Cell], g: usize, depth: usize, binds: bool) -> bool {
    match kind(db, cells, g, depth) {
        Kind::True => true,
        Kind::Conj => {
            let (_, args) = parts(cells, g);
            is_test(db, cells, args[0], depth + 1, binds) && is_test(db, cells, args[1], depth + 1, binds)
        }
        Kind::Builtin(_) => {
            let (f, args) = parts(cells, g);
            let tests2 = [
                atom::SAME,
                atom::NOT_SAME,
                atom::NOT_UNIFIABLE,
                atom::VARIANT,
                atom::NOT_VARIANT,
                atom::AT_LT,
                atom::AT_GT,
                atom::AT_LE,
                atom::AT_GE,
                atom::ARITH_EQ,
                atom::ARITH_NE,
                atom::LT,
                atom::GT,
                atom::LE,
                atom::GE,
                // These bind on success only: a failed try at an element
                // is undone before the next.
                atom::MEMBERCHK,
                atom::ORD_MEMBERCHK,
            ];
            match args.len() {
                0 => f == atom::STEP,
                1 => TypeTest::ALL.iter().any(|t| t.name() == f) || [atom::IS_LIST, atom::GROUND].contains(&f),
                2 => tests2.contains(&f) && (binds || f != atom::MEMBERCHK),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether goal `g` runs straight through its clause's registers: builtins
/// (and `true`, `fail`), and conjunctions, if-then-elses and negations of
/// them whose conditions are tests. Such a construct calls nothing and
/// pushes no choice point of its own, so its variables can live in X
/// registers and it needs no environment, as a builtin does.
fn is_flat(db: &Db, cells: &[Cell], g: usize, depth: usize) -> bool {
    // Well below the depth where constructs stop being inlined (the
    // compiler goes down two levels where this goes down one).
    if depth >= MAX_INLINE_DEPTH / 4 {
        return false;
    }
    let (_, args) = parts(cells, g);
    let ite = |c: usize, t: usize| is_test(db, cells, c, depth + 1, true) && is_flat(db, cells, t, depth + 1);
    match kind(db, cells, g, depth) {
        Kind::True | Kind::Fail | Kind::Builtin(_) => true,
        Kind::Conj => is_flat(db, cells, args[0], depth + 1) && is_flat(db, cells, args[1], depth + 1),
        Kind::IfThen(_) => ite(args[0], args[1]),
        Kind::Disj => match kind(db, cells, args[0], depth + 1) {
            Kind::IfThen(_) => {
                let (_, ct) = parts(cells, args[0]);
                ite(ct[0], ct[1]) && is_flat(db, cells, args[1], depth + 1)
            }
            _ => false,
        },
        Kind::Not => is_test(db, cells, args[0], depth + 1, true),
        _ => false,
    }
}

fn is_call(k: Kind) -> bool {
    matches!(k, Kind::Meta(_) | Kind::Control(_) | Kind::User)
}

/// The variables of the subterm at `i`, with repeats, depth first.
pub(crate) fn vars_of(cells: &[Cell], i: usize, out: &mut Vec<usize>) {
    let mut stack = vec![i];
    while let Some(j) = stack.pop() {
        match cells[j] {
            Cell::Ref(k) => out.push(k),
            Cell::Str(p) => {
                let Cell::Fun(_, n) = cells[p] else { unreachable!() };
                stack.extend((p + 1..p + 1 + n as usize).rev());
            }
            Cell::Lst(p) => {
                stack.push(p + 1);
                stack.push(p);
            }
            _ => {}
        }
    }
}

struct Info {
    occ: Vec<u32>,
    /// First and last chunk a variable occurs in.
    chunks: Vec<(u32, u32)>,
    in_ctrl: Vec<bool>,
    has_ctrl: bool,
    max_arity: u32,
}

struct Cg<'a> {
    cells: &'a [Cell],
    ends: Vec<u32>,
    db: &'a Db,
    loc: Vec<Loc>,
    /// How often each variable occurs in the clause.
    occ: Vec<u32>,
    seen: Vec<bool>,
    out: Vec<Instr>,
    /// Where the last jump lands (no run is merged across it).
    label: usize,
    env: bool,
    ny: u32,
    nregs: u32,
    /// Whether calls of small fact tables are looked up in place, and
    /// the predicates that were.
    lookups: bool,
    looked_up: Vec<usize>,
}

/// Compiles a clause template (see the module comment) into code, and
/// says how many registers it uses.
pub fn compile(db: &Db, cells: &[Cell], nvars: usize, body_start: usize, body_len: usize) -> (Vec<Instr>, u32) {
    let (code, nregs, _) = compile_with(db, cells, nvars, body_start, body_len, false);
    (code, nregs)
}

/// `compile`, with the calls of small tables of facts looked up in place
/// where `lookups` is set (`Instr::Facts`); the predicates so looked up
/// are the third result.
pub fn compile_with(
    db: &Db,
    cells: &[Cell],
    nvars: usize,
    body_start: usize,
    body_len: usize,
    lookups: bool,
) -> (Vec<Instr>, u32, Vec<usize>) {
    let head = 2;
    let goals: Vec<usize> = (body_start..body_start + body_len).collect();
    let (_, head_args) = parts(cells, head);

    // Classify the variables.
    let mut info = Info {
        occ: vec![0; nvars],
        chunks: vec![(u32::MAX, 0); nvars],
        in_ctrl: vec![false; nvars],
        has_ctrl: false,
        max_arity: head_args.len() as u32,
    };
    let mut vs = Vec::new();
    for &a in &head_args {
        vars_of(cells, a, &mut vs);
    }
    note(&mut info, &vs, 0, false);
    let mut chunk = 0u32;
    let mut calls_before_last = false;
    for (gi, &g) in goals.iter().enumerate() {
        let k = kind(db, cells, g, 0);
        if is_inline_control(k) && is_flat(db, cells, g, 0) {
            // Like a builtin: its variables stay in the chunk.
            vs.clear();
            vars_of(cells, g, &mut vs);
            note(&mut info, &vs, chunk, false);
            max_arity_in(db, cells, g, &mut info.max_arity);
            continue;
        }
        if is_inline_control(k) {
            info.has_ctrl = true;
            vs.clear();
            vars_of(cells, g, &mut vs);
            note(&mut info, &vs, chunk, true);
            max_arity_in(db, cells, g, &mut info.max_arity);
            chunk += 1;
            continue;
        }
        let (_, args) = parts(cells, g);
        info.max_arity = info.max_arity.max(args.len() as u32);
        vs.clear();
        for &a in &args {
            vars_of(cells, a, &mut vs);
        }
        note(&mut info, &vs, chunk, false);
        if is_call(k) {
            if gi + 1 < goals.len() {
                calls_before_last = true;
            }
            chunk += 1;
        }
    }

    // Registers: arguments first, then temporaries; permanent slots.
    let mut ny = 0u32;
    let mut loc: Vec<Loc> = (0..nvars)
        .map(|k| {
            if info.occ[k] <= 1 {
                Loc::Void
            } else if info.in_ctrl[k] || info.chunks[k].0 != info.chunks[k].1 {
                ny += 1;
                Loc::Y(ny - 1)
            } else {
                Loc::X(u32::MAX)
            }
        })
        .collect();
    let mut nx = info.max_arity.max(1);
    let homes = arg_homes(db, cells, &head_args, &goals, &loc, nx);
    for (k, l) in loc.iter_mut().enumerate() {
        if *l == Loc::X(u32::MAX) {
            *l = Loc::X(homes[k].unwrap_or_else(|| {
                nx += 1;
                nx - 1
            }));
        }
    }
    let env = info.has_ctrl || ny > 0 || calls_before_last;
    let mut cg = Cg {
        cells,
        ends: subtree_ends(cells),
        db,
        loc,
        occ: info.occ,
        seen: vec![false; nvars],
        out: Vec::new(),
        label: 0,
        env,
        ny,
        nregs: nx,
        lookups,
        looked_up: Vec::new(),
    };
    if env {
        cg.out.push(Instr::Allocate(0));
    }
    for (i, &a) in head_args.iter().enumerate() {
        cg.get_arg(a, i as u32);
    }
    if goals.is_empty() {
        cg.exit();
    }
    for (gi, &g) in goals.iter().enumerate() {
        cg.goal(g, gi + 1 == goals.len(), CutKind::Clause, 0);
    }
    if env {
        cg.out[0] = Instr::Allocate(cg.ny);
    }
    (cg.out, nx, cg.looked_up)
}

/// Argument registers that temporaries can live in, saving moves: a
/// temporary passed as argument `j` of the first call lives in `Xj` (its
/// put is then nothing), else one first met as head argument `a` lives in
/// `Xa` (its get is nothing). A register is given only where nothing else
/// needs it while the variable lives there: the head has read it before the
/// variable's first occurrence, the builtins before the call leave it
/// alone, and the call's arguments are put into it only after the
/// variable's last use there (or it is that very argument).
fn arg_homes(db: &Db, cells: &[Cell], head_args: &[usize], goals: &[usize], loc: &[Loc], nx: u32) -> Vec<Option<u32>> {
    let nvars = loc.len();
    // Where each variable first occurs in the head (arity: not there),
    // and whether at the top of that argument.
    let mut first_arg = vec![head_args.len(); nvars];
    let mut top_head = vec![None; nvars];
    let mut vs = Vec::new();
    for (a, &h) in head_args.iter().enumerate() {
        if let Cell::Ref(k) = cells[h]
            && first_arg[k] == head_args.len()
        {
            top_head[k] = Some(a as u32);
        }
        vs.clear();
        vars_of(cells, h, &mut vs);
        for &k in &vs {
            first_arg[k] = first_arg[k].min(a);
        }
    }
    // The goals of the first chunk: builtins, then the call (if any).
    let mut pre_arity = 0;
    let mut call_args = Vec::new();
    for &g in goals {
        let k = kind(db, cells, g, 0);
        if is_inline_control(k) && is_flat(db, cells, g, 0) {
            // Its builtins put their arguments like any other.
            let mut arity = 0;
            max_arity_in(db, cells, g, &mut arity);
            pre_arity = pre_arity.max(arity as usize);
            continue;
        }
        if is_inline_control(k) {
            break;
        }
        let (_, args) = parts(cells, g);
        if is_call(k) {
            call_args = args;
            break;
        }
        pre_arity = pre_arity.max(args.len());
    }
    // The last call argument each variable occurs in.
    let mut last_arg = vec![None; nvars];
    for (j, &c) in call_args.iter().enumerate() {
        vs.clear();
        vars_of(cells, c, &mut vs);
        for &k in &vs {
            last_arg[k] = Some(j);
        }
    }
    let mut taken = vec![false; nx as usize];
    let fits = |k: usize, r: usize, taken: &[bool]| {
        r < taken.len()
            && !taken[r]
            && r >= pre_arity
            && (r >= head_args.len() || first_arg[k] >= r)
            && (r >= call_args.len() || cells[call_args[r]] == Cell::Ref(k) || last_arg[k].is_none_or(|j| j < r))
    };
    let mut homes = vec![None; nvars];
    for k in 0..nvars {
        if loc[k] != Loc::X(u32::MAX) {
            continue;
        }
        let at_call = call_args.iter().position(|&c| cells[c] == Cell::Ref(k));
        let home = [at_call, top_head[k].map(|a| a as usize)].into_iter().flatten().find(|&r| fits(k, r, &taken));
        if let Some(r) = home {
            taken[r] = true;
            homes[k] = Some(r as u32);
        }
    }
    homes
}

fn note(info: &mut Info, vs: &[usize], chunk: u32, ctrl: bool) {
    for &k in vs {
        info.occ[k] += 1;
        let c = &mut info.chunks[k];
        c.0 = c.0.min(chunk);
        c.1 = c.1.max(chunk);
        if ctrl {
            info.in_ctrl[k] = true;
        }
    }
}

/// The largest arity of a goal inside inline control constructs.
fn max_arity_in(db: &Db, cells: &[Cell], g: usize, max: &mut u32) {
    let mut stack = vec![(g, 0usize)];
    while let Some((g, depth)) = stack.pop() {
        let k = kind(db, cells, g, depth);
        let (_, args) = parts(cells, g);
        if let Kind::Findall(_) = k {
            // The result (and tail) and the template are put in `X0` and
            // `X1`; the goal runs in place.
            *max = (*max).max(2);
            stack.push((args[1], depth + 1));
        } else if is_inline_control(k) {
            stack.extend(args.iter().map(|&a| (a, depth + 1)));
        } else if k == Kind::Meta(0) {
            *max = (*max).max(1);
        } else {
            *max = (*max).max(args.len() as u32);
        }
    }
}

/// A run with one more element.
fn grown<T: Copy>(run: &[T], x: T) -> Box<[T]> {
    let mut v = Vec::with_capacity(run.len() + 1);
    v.extend_from_slice(run);
    v.push(x);
    v.into_boxed_slice()
}

impl Cg<'_> {
    /// Appends an instruction, merged into the one before where both are
    /// of a run (`GetVarY`, `PutValY`, `UnifyVarY`: one dispatch for the
    /// run instead of one each) and no jump lands between them.
    fn emit(&mut self, i: Instr) -> usize {
        let n = self.out.len();
        if n > 0 && n != self.label {
            let last = &mut self.out[n - 1];
            let merged = match (&mut *last, &i) {
                (Instr::GetVarY(y0, a0), &Instr::GetVarY(y, a)) => {
                    Some(Instr::GetVarYs(Box::new([(*y0, *a0), (y, a)])))
                }
                (Instr::GetVarYs(run), &Instr::GetVarY(y, a)) => Some(Instr::GetVarYs(grown(run, (y, a)))),
                (Instr::PutValY(y0, a0), &Instr::PutValY(y, a)) => {
                    Some(Instr::PutValYs(Box::new([(*y0, *a0), (y, a)])))
                }
                (Instr::PutValYs(run), &Instr::PutValY(y, a)) => Some(Instr::PutValYs(grown(run, (y, a)))),
                (Instr::UnifyVarY(y0), &Instr::UnifyVarY(y)) => Some(Instr::UnifyVarYs(Box::new([*y0, y]))),
                (Instr::UnifyVarYs(run), &Instr::UnifyVarY(y)) => Some(Instr::UnifyVarYs(grown(run, y))),
                _ => None,
            };
            if let Some(m) = merged {
                *last = m;
                return n - 1;
            }
        }
        self.out.push(i);
        n
    }

    /// The next instruction is a jump's target: it starts a run of its own.
    fn label_here(&mut self) {
        self.label = self.out.len();
    }

    /// Leaves the clause: back to the continuation.
    fn exit(&mut self) {
        if self.env {
            self.emit(Instr::Deallocate);
        }
        self.emit(Instr::Proceed);
    }

    fn first(&mut self, k: usize) -> bool {
        !std::mem::replace(&mut self.seen[k], true)
    }

    /// A template for the compound at cell `i`. Variables seen here for the
    /// first time and more than once are initialised before it, so the
    /// template can be walked in any order.
    fn tm(&mut self, i: usize) -> Box<Tm> {
        let (p, lst) = match self.cells[i] {
            Cell::Str(p) => (p, false),
            Cell::Lst(p) => (p, true),
            _ => unreachable!("a compound"),
        };
        let end = self.ends[i] as usize;
        let mut vs = Vec::new();
        vars_of(self.cells, i, &mut vs);
        for (j, &k) in vs.iter().enumerate() {
            if !self.seen[k] && self.loc[k] != Loc::Void && vs[j + 1..].contains(&k) {
                self.seen[k] = true;
                match self.loc[k] {
                    Loc::X(r) => self.emit(Instr::PutVarX(r, r)),
                    Loc::Y(s) => self.emit(Instr::InitY(s)),
                    Loc::Void => unreachable!(),
                };
            }
        }
        let mut cells: Vec<Cell> = Vec::with_capacity(end - p);
        for &c in &self.cells[p..end] {
            cells.push(match c {
                Cell::Str(q) => Cell::Str(q - p),
                Cell::Lst(q) => Cell::Lst(q - p),
                Cell::Ref(k) => Cell::Ref(self.var_code(k)),
                other => other,
            });
        }
        let ends = subtree_ends(&cells).into_boxed_slice();
        Box::new(Tm { lst, cells: cells.into_boxed_slice(), ends })
    }

    fn var_code(&mut self, k: usize) -> usize {
        let first = if self.first(k) { FIRST } else { 0 };
        match self.loc[k] {
            Loc::Void => VOID,
            Loc::X(r) => r as usize | first,
            Loc::Y(s) => s as usize | PERM | first,
        }
    }

    fn get_arg(&mut self, c: usize, a: u32) {
        match self.cells[c] {
            Cell::Ref(k) => {
                let first = self.first(k);
                match (self.loc[k], first) {
                    (Loc::Void, _) => {}
                    (Loc::X(r), true) if r == a => {}
                    (Loc::X(r), true) => drop(self.emit(Instr::GetVarX(r, a))),
                    (Loc::X(r), false) => drop(self.emit(Instr::GetValX(r, a))),
                    (Loc::Y(s), true) => drop(self.emit(Instr::GetVarY(s, a))),
                    (Loc::Y(s), false) => drop(self.emit(Instr::GetValY(s, a))),
                }
            }
            Cell::Lst(_) | Cell::Str(_) => self.compound_arg(c, a, false),
            other => drop(self.emit(Instr::GetConst(other, a))),
        }
    }

    fn put_arg(&mut self, c: usize, a: u32) {
        match self.cells[c] {
            Cell::Ref(k) => {
                let first = self.first(k);
                match (self.loc[k], first) {
                    (Loc::Void, _) => drop(self.emit(Instr::PutVoid(a))),
                    (Loc::X(r), true) => drop(self.emit(Instr::PutVarX(r, a))),
                    (Loc::X(r), false) if r == a => {}
                    (Loc::X(r), false) => drop(self.emit(Instr::PutValX(r, a))),
                    (Loc::Y(s), true) => drop(self.emit(Instr::PutVarY(s, a))),
                    (Loc::Y(s), false) => drop(self.emit(Instr::PutValY(s, a))),
                }
            }
            Cell::Lst(_) | Cell::Str(_) => self.compound_arg(c, a, true),
            other => drop(self.emit(Instr::PutConst(other, a))),
        }
    }

    /// The compound at cell `c` in argument register `a`: `GetList` or
    /// `GetStruct` (`PutList` or `PutStruct` when `put`), then its
    /// arguments.
    fn compound_arg(&mut self, c: usize, a: u32, put: bool) {
        let (from, n) = match self.cells[c] {
            // A list cell of variables (or `[]` as its tail): one
            // instruction for the three.
            Cell::Lst(p) if self.is_uarg(p) && self.is_uarg(p + 1) => {
                let (u, v) = (self.uarg(p), self.uarg(p + 1));
                // A register code (`PERM` for a slot) of a variable.
                let code = |u: UArg| match u {
                    UArg::VarX(x) | UArg::ValX(x) => x as usize,
                    UArg::VarY(y) | UArg::ValY(y) => y as usize | PERM,
                    UArg::Void | UArg::Nil => unreachable!("a variable"),
                };
                self.emit(match (put, u, v) {
                    (true, UArg::ValX(_) | UArg::ValY(_), UArg::Nil) => Instr::PutListValNil(a, code(u)),
                    (true, ..) => Instr::PutList2(a, u, v),
                    (false, UArg::VarX(_) | UArg::VarY(_), UArg::VarX(_) | UArg::VarY(_))
                        if matches!((u, v), (UArg::VarY(_), _) | (_, UArg::VarY(_))) =>
                    {
                        Instr::GetListVarVarXY(a, code(u), code(v))
                    }
                    (false, UArg::VarX(x), UArg::VarX(y)) => Instr::GetListVarVar(a, x, y),
                    (false, UArg::ValX(x), UArg::VarX(y)) => Instr::GetListValVar(a, x, y),
                    (false, UArg::ValX(x), UArg::Void) => Instr::GetListValVoid(a, x),
                    (false, UArg::Void, UArg::VarX(y)) => Instr::GetListVoidVar(a, y),
                    (false, ..) => Instr::GetList2(a, u, v),
                });
                return;
            }
            Cell::Lst(p) => {
                self.emit(if put { Instr::PutList(a) } else { Instr::GetList(a) });
                (p, 2)
            }
            Cell::Str(p) => {
                let Cell::Fun(f, n) = self.cells[p] else { unreachable!("Str points at Fun") };
                self.emit(if put { Instr::PutStruct(f, n, a) } else { Instr::GetStruct(f, n, a) });
                (p + 1, n as usize)
            }
            _ => unreachable!("a compound argument"),
        };
        self.unify_args(from, n);
    }

    /// `A = B` without a builtin call: one side is put in `X0`, the other
    /// unified with it as a head argument would be, so a term met bound is
    /// read in place, not built (a variable seen first here is the side
    /// got, where it takes the other side's value). It uses only `X0`,
    /// which the call to `=/2` would have used too.
    fn unify_inline(&mut self, a: usize, b: usize) {
        let fresh = |c: usize| matches!(self.cells[c], Cell::Ref(k) if !self.seen[k]);
        let (put, get) = if fresh(a) && !fresh(b) { (b, a) } else { (a, b) };
        self.put_arg(put, 0);
        self.get_arg(get, 0);
    }

    /// Whether cell `c` of a list cell can be a `UArg`.
    fn is_uarg(&self, c: usize) -> bool {
        matches!(self.cells[c], Cell::Ref(_) | Cell::Atom(atom::NIL))
    }

    /// Cell `c` of a list cell as a `UArg` (`is_uarg`).
    fn uarg(&mut self, c: usize) -> UArg {
        match self.cells[c] {
            Cell::Ref(k) => {
                let first = self.first(k);
                match (self.loc[k], first) {
                    (Loc::Void, _) => UArg::Void,
                    (Loc::X(r), true) => UArg::VarX(r),
                    (Loc::X(r), false) => UArg::ValX(r),
                    (Loc::Y(s), true) => UArg::VarY(s),
                    (Loc::Y(s), false) => UArg::ValY(s),
                }
            }
            _ => UArg::Nil,
        }
    }

    /// The arguments of a list cell or structure (at `from`, `n` cells) as
    /// `Unify*` instructions; nested compounds as templates.
    fn unify_args(&mut self, from: usize, n: usize) {
        for j in from..from + n {
            match self.cells[j] {
                Cell::Ref(k) => {
                    let first = self.first(k);
                    let i = match (self.loc[k], first) {
                        (Loc::Void, _) => Instr::UnifyVoid,
                        (Loc::X(r), true) => Instr::UnifyVarX(r),
                        (Loc::X(r), false) => Instr::UnifyValX(r),
                        (Loc::Y(s), true) => Instr::UnifyVarY(s),
                        (Loc::Y(s), false) => Instr::UnifyValY(s),
                    };
                    self.emit(i);
                }
                Cell::Str(_) | Cell::Lst(_) => {
                    let t = self.tm(j);
                    self.emit(Instr::UnifyTerm(t));
                }
                other => drop(self.emit(Instr::UnifyConst(other))),
            }
        }
    }

    fn level(&mut self) -> u32 {
        let y = self.ny;
        self.ny += 1;
        self.emit(Instr::GetLevel(y));
        y
    }

    /// Initialises the variables a control construct sees first, so that
    /// every branch sees them (a flat construct's may be in X registers).
    /// A variable that occurs nowhere but in one branch (the condition and
    /// the then-branch of an if-then-else are one) is left to its first
    /// occurrence there, as in a clause's body: no other branch and no
    /// goal after the construct sees it. (A clause with a call unfolded
    /// into a condition has many such: `move/3`'s in `'$try_actions'`.)
    fn init_vars(&mut self, g: usize, depth: usize) {
        let (_, args) = parts(self.cells, g);
        let branches: Vec<Vec<usize>> = match kind(self.db, self.cells, g, depth) {
            Kind::Disj => match kind(self.db, self.cells, args[0], depth + 1) {
                Kind::IfThen(_) => vec![parts(self.cells, args[0]).1, vec![args[1]]],
                _ => vec![vec![args[0]], vec![args[1]]],
            },
            Kind::IfThen(_) | Kind::Findall(_) => vec![vec![args[0], args[1]]],
            Kind::Not => vec![vec![args[0]]],
            _ => Vec::new(),
        };
        // Each branch's occurrences of each variable.
        let counts: Vec<Vec<u32>> = branches
            .iter()
            .map(|b| {
                let (mut vs, mut n) = (Vec::new(), vec![0u32; self.occ.len()]);
                for &t in b {
                    vars_of(self.cells, t, &mut vs);
                }
                for v in vs {
                    n[v] += 1;
                }
                n
            })
            .collect();
        let mut vs = Vec::new();
        vars_of(self.cells, g, &mut vs);
        for k in vs {
            if self.seen[k] || counts.iter().any(|n| n[k] == self.occ[k]) {
                continue;
            }
            match self.loc[k] {
                Loc::Y(s) => drop(self.emit(Instr::InitY(s))),
                Loc::X(r) => drop(self.emit(Instr::PutVarX(r, r))),
                Loc::Void => continue,
            }
            self.seen[k] = true;
        }
    }

    /// Points the jump at `at` (or the failure of the test instruction
    /// there) to `target` (a later instruction: jumps are relative,
    /// forward).
    fn patch(&mut self, at: usize, target: usize) {
        assert!(target > at, "a forward jump");
        debug_assert_eq!(target, self.out.len(), "a jump to the next instruction emitted");
        self.label_here();
        let l = (target - at) as u32;
        match &mut self.out[at] {
            Instr::TryElse(j) | Instr::Jump(j) | Instr::FindallBegin(_, _, j) => *j = l,
            Instr::Arith(a) => a.fail = l,
            Instr::Arith2(a) => a.fail = l,
            Instr::IsChain(a) => a.fail = l,
            Instr::Test(t) => t.fail = l,
            Instr::CallBuiltin(_, _, _, fail) => *fail = l,
            _ => unreachable!("patching a jump"),
        }
    }

    fn goal(&mut self, g: usize, last: bool, cut: CutKind, depth: usize) {
        let k = kind(self.db, self.cells, g, depth);
        let (f, args) = parts(self.cells, g);
        match k {
            Kind::True => {
                if last {
                    self.exit();
                }
            }
            Kind::Fail => drop(self.emit(Instr::Fail)),
            Kind::Cut => {
                match cut {
                    CutKind::Clause if self.env => self.emit(Instr::Cut),
                    CutKind::Clause => self.emit(Instr::CutB0),
                    CutKind::Level(y) => self.emit(Instr::CutTo(y, 1)),
                };
                if last {
                    self.exit();
                }
            }
            Kind::Conj => {
                self.goal(args[0], false, cut, depth + 1);
                self.goal(args[1], last, cut, depth + 1);
            }
            Kind::Disj => {
                self.init_vars(g, depth);
                let (left, right) = (args[0], args[1]);
                let lk = kind(self.db, self.cells, left, depth + 1);
                if let Kind::IfThen(soft) = lk {
                    let (_, ca) = parts(self.cells, left);
                    self.ite(ca[0], ca[1], Some(right), soft, last, cut, depth + 1);
                    return;
                }
                // The left branch's leading tests that bind nothing: when
                // one fails the right branch runs at once, with no choice
                // point made and taken back.
                let mut to_right = Vec::new();
                let (mut rest, mut d) = (Some(left), depth + 1);
                while let Some(g) = rest {
                    if is_test(self.db, self.cells, g, d, false) {
                        self.tests(g, d, &mut to_right);
                        rest = None;
                        break;
                    }
                    let (_, ca) = parts(self.cells, g);
                    if kind(self.db, self.cells, g, d) != Kind::Conj
                        || !is_test(self.db, self.cells, ca[0], d + 1, false)
                    {
                        break;
                    }
                    self.tests(ca[0], d + 1, &mut to_right);
                    (rest, d) = (Some(ca[1]), d + 1);
                }
                to_right.push(self.emit(Instr::TryElse(0)));
                match rest {
                    Some(g) => self.goal(g, last, cut, d),
                    None if last => self.exit(),
                    None => {}
                }
                let jump = (!last).then(|| self.emit(Instr::Jump(0)));
                let here = self.out.len();
                for at in to_right {
                    self.patch(at, here);
                }
                self.goal(right, last, cut, depth + 1);
                if let Some(j) = jump {
                    let here = self.out.len();
                    self.patch(j, here);
                }
            }
            Kind::IfThen(soft) => {
                self.init_vars(g, depth);
                self.ite(args[0], args[1], None, soft, last, cut, depth + 1);
            }
            Kind::Not if is_test(self.db, self.cells, args[0], depth + 1, true) => {
                // A test: no choice point (see `ite`).
                self.init_vars(g, depth);
                let mut fails = Vec::new();
                self.tests(args[0], depth + 1, &mut fails);
                self.emit(Instr::Fail);
                let here = self.out.len();
                for at in fails {
                    self.patch(at, here);
                }
                if last {
                    self.exit();
                }
            }
            Kind::Not => {
                self.init_vars(g, depth);
                let y = self.level();
                let try_at = self.emit(Instr::TryElse(0));
                self.goal(args[0], false, CutKind::Level(y), depth + 1);
                self.emit(Instr::CutTo(y, 0));
                self.emit(Instr::Fail);
                let here = self.out.len();
                self.patch(try_at, here);
                if last {
                    self.exit();
                }
            }
            Kind::Findall(four) => {
                // The bag's choice point, the goal, then the template added
                // to the bag (the goal's solutions are taken by
                // backtracking); a `!` in the goal cuts to the level below
                // the bag's choice point.
                self.init_vars(g, depth);
                let y = self.ny;
                self.ny += 1;
                self.put_arg(args[2], 0);
                if four {
                    self.put_arg(args[3], 1);
                }
                let begin = self.emit(Instr::FindallBegin(y, four, 0));
                self.goal(args[1], false, CutKind::Level(y), depth + 1);
                self.put_arg(args[0], 0);
                self.emit(Instr::FindallAdd(y));
                let here = self.out.len();
                self.patch(begin, here);
                if last {
                    self.exit();
                }
            }
            Kind::Meta(0) => {
                // Nested too deep to inline: called as a term.
                self.put_arg(g, 0);
                self.call_like(Instr::CallMeta(1, last), last);
            }
            Kind::Meta(n) => {
                for (i, &a) in args.iter().enumerate() {
                    self.put_arg(a, i as u32);
                }
                self.call_like(Instr::CallMeta(n, last), last);
            }
            Kind::Control(c) => {
                for (i, &a) in args.iter().enumerate() {
                    self.put_arg(a, i as u32);
                }
                self.call_like(Instr::CallControl(c, last), last);
            }
            Kind::Builtin(_) if f == atom::EQ && args.len() == 2 => {
                self.unify_inline(args[0], args[1]);
                if last {
                    self.exit();
                }
            }
            Kind::Builtin(b) => {
                self.builtin(b, f, &args);
                if last {
                    self.exit();
                }
            }
            Kind::User => {
                // A first argument met here first is unbound (a table of
                // facts is then tried fact by fact).
                let fresh = args.first().is_some_and(|&a| matches!(self.cells[a], Cell::Ref(k) if !self.seen[k]));
                for (i, &a) in args.iter().enumerate() {
                    self.put_arg(a, i as u32);
                }
                let n = args.len() as u32;
                let pred = match self.db.get(f, n) {
                    Some(Entry::User(i)) => i as u32,
                    _ => NO_PRED,
                };
                let facts = if self.lookups && pred != NO_PRED { fact_table(self.db, pred as usize) } else { None };
                if let Some(t) = facts {
                    // The table in place of the call: on past it, and
                    // where it is the last, to the exit.
                    self.looked_up.push(pred as usize);
                    self.emit(Instr::Facts(Rc::new(super::Facts { done: 1, fresh, ..t })));
                    self.label_here();
                    if last {
                        self.exit();
                    }
                } else if last {
                    self.emit(if self.env { Instr::DeallocExecute(pred, f, n) } else { Instr::Execute(pred, f, n) });
                } else {
                    self.emit(Instr::Call(pred, f, n));
                }
            }
        }
    }

    /// A builtin call, after its fast path if it has one. Where the
    /// instructions that can fail are (the fast path, the call).
    fn builtin(&mut self, b: u32, f: Atom, args: &[usize]) -> [Option<usize>; 2] {
        if f == atom::STEP && args.is_empty() {
            // An unfolded call's step (see `unfold`).
            self.emit(Instr::Step);
            return [None, None];
        }
        let fast = self
            .arith(f, args)
            .or_else(|| self.arg_fast(f, args))
            .or_else(|| self.test_fast(f, args))
            .or_else(|| self.random_fast(f, args));
        for (i, &a) in args.iter().enumerate() {
            self.put_arg(a, i as u32);
        }
        let call = self.emit(Instr::CallBuiltin(b, args.len() as u32, self.nregs, 0));
        if let Some(at) = fast {
            // Relative, like jumps.
            let done = (self.out.len() - at) as u32;
            self.label_here();
            match &mut self.out[at] {
                Instr::Arith(a) => a.done = done,
                Instr::Arith2(a) => a.done = done,
                Instr::IsChain(a) => a.done = done,
                Instr::Arg(a) => a.done = done,
                Instr::Test(t) => t.done = done,
                _ => {}
            }
        }
        [fast, Some(call)]
    }

    /// Emits the test `g` (see `is_test`); where the instructions are
    /// whose failure must go to the else branch (see `patch`).
    fn tests(&mut self, g: usize, depth: usize, fails: &mut Vec<usize>) {
        match kind(self.db, self.cells, g, depth) {
            Kind::Conj => {
                let (_, args) = parts(self.cells, g);
                self.tests(args[0], depth + 1, fails);
                self.tests(args[1], depth + 1, fails);
            }
            Kind::Builtin(b) => {
                let (f, args) = parts(self.cells, g);
                fails.extend(self.builtin(b, f, &args).into_iter().flatten());
            }
            _ => {}
        }
    }

    /// The fast path of a type test or of `==`/`\==` on arguments that
    /// are constants or variables with a value (emitted before the general
    /// call, like `arith`). Its position.
    fn test_fast(&mut self, f: Atom, args: &[usize]) -> Option<usize> {
        let op = match (f, args.len()) {
            (atom::SAME, 2) => TestOp::Same(false),
            (atom::NOT_SAME, 2) => TestOp::Same(true),
            (f, 1) => TestOp::Type(TypeTest::ALL.into_iter().find(|t| t.name() == f)?),
            _ => return None,
        };
        let a = self.opd(args[0])?;
        let b = match args.get(1) {
            Some(&c) => self.opd(c)?,
            None => a,
        };
        Some(self.emit(Instr::Test(Box::new(TestFast { op, a, b, done: 0, fail: 0 }))))
    }

    /// A test operand: an atom, an integer or a variable with a value.
    fn opd(&self, c: usize) -> Option<Opd> {
        match self.cells[c] {
            c @ (Cell::Atom(_) | Cell::Int(_)) => Some(Opd::Const(c)),
            Cell::Ref(_) => self.seen_reg(c).map(Opd::Reg),
            _ => None,
        }
    }

    /// The fast path of `is/2` and the arithmetic comparisons, when every
    /// variable of the expressions already has a value; emitted before
    /// the general call, which it skips when it succeeds. Its position.
    fn arith(&mut self, f: Atom, args: &[usize]) -> Option<usize> {
        use std::cmp::Ordering::*;
        let (cmp, negate) = match f {
            atom::IS => (None, false),
            atom::ARITH_EQ => (Some(Equal), false),
            atom::ARITH_NE => (Some(Equal), true),
            atom::LT => (Some(Less), false),
            atom::GE => (Some(Less), true),
            atom::GT => (Some(Greater), false),
            atom::LE => (Some(Greater), true),
            _ => return None,
        };
        if args.len() != 2 {
            return None;
        }
        let rhs = self.expr(args[1])?;
        let op = match cmp {
            None => match self.cells[args[0]] {
                Cell::Ref(k) => {
                    let code = self.reg_code(k)?;
                    if self.seen[k] { ArithOp::IsOld(code) } else { ArithOp::IsNew(code) }
                }
                Cell::Int(i) => ArithOp::IsInt(i),
                _ => return None,
            },
            Some(ord) => ArithOp::Cmp(ord, negate, self.expr(args[0])?),
        };
        // Two leaves, or `is/2` of a chain: the inline forms (`X is A` is
        // `A + 0`).
        let is = match op {
            ArithOp::IsNew(code) => Some((code, true)),
            ArithOp::IsOld(code) => Some((code, false)),
            _ => None,
        };
        let two = |op, a, b| Instr::Arith2(Box::new(Arith2 { op, a, b, done: 0, fail: 0 }));
        let i = match (op, rhs, is) {
            (ArithOp::Cmp(ord, negate, Expr::Leaf(a)), Expr::Leaf(b), _) => two(Arith2Op::Cmp(ord, negate), a, b),
            (_, Expr::Leaves(f, a, b), Some((code, new))) => two(Arith2Op::Is(f, code, new), a, b),
            (_, Expr::Leaf(a), Some((code, new))) => two(Arith2Op::Is(AOp::Add, code, new), a, AOp::Int(0)),
            (_, Expr::Chain(first, rest), Some((code, new))) => {
                Instr::IsChain(Box::new(IsChain { code, new, first, rest, done: 0, fail: 0 }))
            }
            (op, rhs, _) => Instr::Arith(Box::new(Arith { op, rhs, done: 0, fail: 0 })),
        };
        Some(self.emit(i))
    }

    /// The register code of variable `k` (`None` for a void one).
    fn reg_code(&self, k: usize) -> Option<usize> {
        match self.loc[k] {
            Loc::X(r) => Some(r as usize),
            Loc::Y(s) => Some(s as usize | PERM),
            Loc::Void => None,
        }
    }

    /// The register code of a variable that already has a value.
    fn seen_reg(&self, c: usize) -> Option<usize> {
        match self.cells[c] {
            Cell::Ref(k) if self.seen[k] => self.reg_code(k),
            _ => None,
        }
    }

    /// `random_between(A, B, X)` on integer leaves into a variable: the
    /// draw in the run loop (`Arith2Op::Random`), the builtin's for
    /// anything else.
    fn random_fast(&mut self, f: Atom, args: &[usize]) -> Option<usize> {
        if f != atom::RANDOM_BETWEEN || args.len() != 3 {
            return None;
        }
        let (Expr::Leaf(a), Expr::Leaf(b)) = (self.expr(args[0])?, self.expr(args[1])?) else { return None };
        let Cell::Ref(k) = self.cells[args[2]] else { return None };
        let code = self.reg_code(k)?;
        let op = Arith2Op::Random(code, !self.seen[k]);
        Some(self.emit(Instr::Arith2(Box::new(Arith2 { op, a, b, done: 0, fail: 0 }))))
    }

    /// The fast path of `arg(N, T, A)` when N and T already have values
    /// (emitted before the general call, like `arith`). Its position.
    fn arg_fast(&mut self, f: Atom, args: &[usize]) -> Option<usize> {
        if f != atom::ARG || args.len() != 3 {
            return None;
        }
        // An integer, or a variable with a value: an expression leaf.
        let Expr::Leaf(n) = self.expr(args[0])? else { return None };
        let t = self.seen_reg(args[1])?;
        let dst = match self.cells[args[2]] {
            c @ (Cell::Atom(_) | Cell::Int(_)) => ArgDst::Const(c),
            Cell::Ref(k) if !self.seen[k] => ArgDst::New(self.reg_code(k)?),
            _ => ArgDst::Old(self.seen_reg(args[2])?),
        };
        Some(self.emit(Instr::Arg(Box::new(ArgFast { n, t, dst, done: 0 }))))
    }

    /// An integer expression whose variables all have values, as a tree
    /// at most `ASTACK` deep; `None` when it has anything else.
    fn expr(&self, c: usize) -> Option<Expr> {
        self.expr_at(c, 0)
    }

    fn expr_at(&self, c: usize, level: usize) -> Option<Expr> {
        if level > ASTACK {
            return None;
        }
        match self.cells[c] {
            Cell::Int(i) => Some(Expr::Leaf(AOp::Int(i))),
            Cell::Ref(k) => {
                if !self.seen[k] {
                    return None;
                }
                Some(Expr::Leaf(match self.loc[k] {
                    Loc::X(r) => AOp::X(r),
                    Loc::Y(s) => AOp::Y(s),
                    Loc::Void => return None,
                }))
            }
            Cell::Str(p) => {
                let Cell::Fun(f, n) = self.cells[p] else { return None };
                let op = match (f, n) {
                    (atom::PLUS, 2) => AOp::Add,
                    (atom::MINUS, 2) => AOp::Sub,
                    (atom::STAR, 2) => AOp::Mul,
                    (atom::INTDIV, 2) => AOp::IntDiv,
                    (atom::MOD, 2) => AOp::Mod,
                    (atom::MIN, 2) => AOp::Min,
                    (atom::MAX, 2) => AOp::Max,
                    (atom::MINUS, 1) => AOp::Neg,
                    (atom::ABS, 1) => AOp::Abs,
                    _ => return None,
                };
                let a = self.expr_at(p + 1, level + 1)?;
                if n == 1 {
                    return Some(Expr::Un(op, Box::new(a)));
                }
                let b = self.expr_at(p + 2, level + 1)?;
                Some(match (a, b) {
                    (Expr::Leaf(a), Expr::Leaf(b)) => Expr::Leaves(op, a, b),
                    (Expr::Leaves(op1, x, y), Expr::Leaf(z)) => Expr::Chain(x, Box::new([(op1, y), (op, z)])),
                    (Expr::Chain(x, rest), Expr::Leaf(z)) => {
                        let mut rest = rest.into_vec();
                        rest.push((op, z));
                        Expr::Chain(x, rest.into_boxed_slice())
                    }
                    (a, b) => Expr::Bin(op, Box::new([a, b])),
                })
            }
            _ => None,
        }
    }

    /// A call-like instruction: in last position the frame goes first and
    /// the callee returns straight to this clause's continuation.
    fn call_like(&mut self, i: Instr, last: bool) {
        if last && self.env {
            self.emit(Instr::Deallocate);
        }
        self.emit(i);
    }

    /// `(C -> T ; E)`, `(C *-> T ; E)` and, without `E`, `(C -> T)`.
    #[allow(clippy::too_many_arguments)]
    fn ite(&mut self, c: usize, t: usize, e: Option<usize>, soft: bool, last: bool, cut: CutKind, depth: usize) {
        // Where the else branch is taken: a failing test (no choice point;
        // a test has one solution at most, so `*->` is `->`), else the
        // choice point pushed before the condition.
        let mut to_else = Vec::new();
        if is_test(self.db, self.cells, c, depth + 1, true) {
            self.tests(c, depth + 1, &mut to_else);
        } else {
            let y = self.level();
            to_else.push(self.emit(Instr::TryElse(0)));
            self.goal(c, false, CutKind::Level(y), depth + 1);
            self.emit(if soft { Instr::SoftCut(y) } else { Instr::CutTo(y, 0) });
        }
        self.goal(t, last, cut, depth + 1);
        let jump = (!last).then(|| self.emit(Instr::Jump(0)));
        let here = self.out.len();
        for at in to_else {
            self.patch(at, here);
        }
        match e {
            Some(e) => self.goal(e, last, cut, depth + 1),
            None => drop(self.emit(Instr::Fail)),
        }
        if let Some(j) = jump {
            let here = self.out.len();
            self.patch(j, here);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    fn code_of(src: &str, name: &str, arity: u32) -> String {
        let mut e = Engine::new();
        assert!(!e.load("t", src).has_errors());
        let a = e.m.atoms.intern(name);
        let p = e.m.db.pred(a, arity).unwrap();
        let c = &p.clauses[0];
        let (code, _) = compile(&e.m.db, &c.tmpl.cells, c.tmpl.nvars, c.body_start, c.body_len);
        format!("{code:?}")
    }

    /// Runs of slot moves are one instruction each (a jump never lands
    /// inside one: `emit` keeps the moves before a jump's target and after
    /// it apart).
    #[test]
    fn runs_of_slot_moves_are_one_instruction() {
        let src = "p(A, B, C, D) :- q, r(A, B), s(c(A, B, C, D)), r(C, D).\nq.\nr(_, _).\ns(_).";
        let c = code_of(src, "p", 4);
        assert_eq!((c.matches("GetVarYs(").count(), c.matches("GetVarY(").count()), (1, 0), "{c}");
        assert_eq!((c.matches("PutValYs(").count(), c.matches("PutValY(").count()), (2, 0), "{c}");
        // Branches that end in slot moves, joined by jumps.
        let src = "t(A, B, X) :- q, (A > 0 -> X = B ; X = A), u(X, B).\nq.\nu(_, _).";
        let mut e = Engine::new();
        assert!(!e.load("t", &format!("{src}\nv(s(A, B, C), A, B, C) :- q.")).has_errors());
        let answers = |e: &mut Engine, q: &str| {
            e.query(q).unwrap().map(|a| a.unwrap().bindings[0].text.clone()).collect::<Vec<_>>()
        };
        assert_eq!(answers(&mut e, "t(1, 2, X)"), ["2"]);
        assert_eq!(answers(&mut e, "t(0, 2, X)"), ["0"]);
        assert_eq!(answers(&mut e, "v(S, 1, 2, 3)"), ["s(1,2,3)"]);
        assert_eq!(answers(&mut e, "v(s(x, y, z), A, B, C), T = A-B-C"), ["x"]);
    }

    #[test]
    fn append_is_one_chunk_without_environment() {
        let c = code_of("app([H|T], L, [H|R]) :- app(T, L, R).", "app", 3);
        assert!(!c.contains("Allocate"), "{c}");
        assert!(c.contains("Execute"), "{c}");
    }

    #[test]
    fn temporaries_live_in_the_argument_registers_they_are_passed_in() {
        // T goes straight to X0 and R to X2: no moves before the call.
        let c = code_of("app([H|T], L, [H|R]) :- app(T, L, R).", "app", 3);
        let (moves, call) = c.split_once(", Execute(").unwrap();
        assert_eq!(moves, "[GetListVarVar(0, 3, 0), GetListValVar(2, 3, 2)");
        assert!(call.ends_with(", 3)]"), "{c}");
        // A fact compares its arguments in place.
        let c = code_of("same(X, X).", "same", 2);
        assert_eq!(c, "[GetValX(0, 1), Proceed]");
        // Crossing arguments: one of the two must move out of the way.
        let c = code_of("swap(X, Y) :- q(Y, X).\nq(_, _).", "swap", 2);
        assert_eq!(c.matches("Get").count() + c.matches("Put").count(), 3, "{c}");
    }

    #[test]
    fn a_unification_in_the_body_reads_a_bound_side_in_place() {
        // `L = [_, h(a, Z)]` on a bound L: get instructions on it, nothing
        // built and no call to `=/2`.
        let c = code_of("p(L, Z) :- L = [_, h(a, Z)], q(Z).\nq(_).", "p", 2);
        assert!(!c.contains("CallBuiltin"), "{c}");
        assert!(c.contains("GetList(0)") && c.contains("UnifyTerm"), "{c}");
        // A fresh variable on the left takes the right side's value.
        let c = code_of("p(Y) :- X = f(Y), q(X).\nq(_).", "p", 1);
        assert!(c.contains("PutStruct(") && c.contains("GetVarX(2, 0)") && !c.contains("CallBuiltin"), "{c}");
    }

    #[test]
    fn list_cells_of_variables_and_nil_are_one_instruction() {
        let c = code_of("p([X], [Y|_], [a|T], T) :- q([X|Y]).\nq(_).", "p", 4);
        assert!(
            c.starts_with("[GetList2(0, VarX(4), Nil), GetList2(1, VarX(5), Void), GetList(2), UnifyConst("),
            "{c}"
        );
        assert!(c.contains("PutList2(0, ValX(4), ValX(5))"), "{c}");
    }

    #[test]
    fn a_condition_that_is_a_test_needs_no_choice_point() {
        let c = code_of("p(X, Y) :- ( X == a, Y > 1 -> q(X) ; q(Y) ).\nq(_).", "p", 2);
        assert!(!c.contains("TryElse") && !c.contains("GetLevel"), "{c}");
        assert!(c.contains("Test(") && c.contains("Arith2("), "{c}");
        let c = code_of("p(X) :- \\+ memberchk(X, [a]).", "p", 1);
        assert!(!c.contains("TryElse") && c.contains("CallBuiltin"), "{c}");
        // Builtins on both sides too: no environment, the variables stay
        // in registers; one met first inside and nowhere but in the
        // condition and the then-branch is made where it is met.
        let c = code_of("h(T, X, H) :- ( memberchk(c(X, H0), T) -> H = H0 ; H = 0 ).", "h", 3);
        assert!(!c.contains("Allocate") && !c.contains("Y("), "{c}");
        assert!(!c.contains("PutVarX(") && c.contains("UnifyVarX("), "{c}");
        // One the else-branch sees as well is made before the construct.
        let c = code_of("h(T, X, H) :- ( memberchk(c(X, H0), T) -> H = H0 ; H0 = 0, H = H0 ).", "h", 3);
        assert!(c.contains("PutVarX("), "{c}");
        // A condition that calls a predicate keeps its choice point.
        let c = code_of("p(X) :- ( q(X) -> true ; true ).\nq(_).", "p", 1);
        assert!(c.contains("TryElse") && c.contains("CutTo"), "{c}");
    }

    #[test]
    fn a_call_before_the_last_goal_needs_an_environment() {
        let c = code_of("p(X) :- q(X), r(X).\nq(_). r(_).", "p", 1);
        assert!(c.starts_with("[Allocate(1), GetVarY(0, 0)"), "{c}");
        assert!(c.contains("DeallocExecute"), "{c}");
    }

    #[test]
    fn a_findall_runs_its_goal_in_place() {
        // No goal term built and called: the goal's code is in the
        // clause, between the bag's choice point and the template's copy.
        let c = code_of("a(R, L) :- findall(A-R, (p(R, A), A > 1), L).\np(_, _).", "a", 2);
        assert!(!c.contains("CallControl"), "{c}");
        let (begin, rest) = c.split_once("FindallBegin(").unwrap();
        assert!(!begin.contains("PutStruct") && begin.ends_with("PutValY(0, 0), "), "the result list in X0: {c}");
        let (goal, _) = rest.split_once("FindallAdd(").unwrap();
        assert!(goal.contains("Call(") && goal.contains("Arith2("), "{c}");
        // A goal that is not callable all through is called as a term,
        // which rejects it whole, as calling it does.
        let c = code_of("a(L) :- findall(X, (p(X, _), 3), L).\np(_, _).", "a", 1);
        assert!(c.contains("CallControl(Findall") && !c.contains("FindallBegin"), "{c}");
    }
}
