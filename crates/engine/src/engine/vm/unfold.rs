//! Unfolding: a call of a predicate of one clause replaced, in the
//! calling clause's code, by that clause's body.
//!
//! `piece_move(P, R, C, B, X1, ...)` called from `move/3` runs as if
//! `move/3`'s clause said what `piece_move/12`'s body says: no call, no
//! twelve arguments put and taken again, no frame of its own. The
//! clause's template is rewritten before it is compiled (the clause
//! itself, what `clause/2`, the tracer and `listing/1` see, is
//! unchanged): the call becomes `'$step'` (the inference the call
//! counted: `statistics/2`, step limits and the playout plan, which
//! weighs inferences, see the same counts), then the unifications of its
//! head, then its body with the callee's variables renamed apart.
//!
//! A callee is unfolded when that means the same thing: a static
//! predicate read from a program's text, of exactly one clause, with no
//! `!` anywhere in it (its cut would cut the caller's clause), not
//! calling itself (a loop is not unrolled), not the caller's own predicate
//! nor one being unfolded around it, and small (see `MAX_CALLEE`). A head argument that is a variable met
//! first there takes the call's argument where that is a variable or a
//! constant; any other head argument is unified with the call's by `=/2`,
//! as the head would have been, in the head's order. Calls are unfolded
//! in the callee's body too, down to `MAX_DEPTH`.
//!
//! (A call of a small table of facts is looked up in place instead:
//! `Instr::Facts`, which the compiler makes, see `compile::fact_table`.)
//!
//! Such a clause's code starts with `Instr::Guard`: a predicate unfolded
//! or looked up somewhere whose clauses change afterwards (a later file,
//! `consult`, an `assert` while a file loads) moves `Db::inline_epoch` on,
//! and code made before then runs its clause's code made without either.

use super::compile::parts;
use crate::engine::atoms::{Atom, atom};
use crate::engine::db::{ClauseCode, Db, Entry};
use crate::engine::machine::Control;
use crate::engine::term::Cell;

/// Unfolded calls nest at most this deep (a callee's body's calls are
/// unfolded in turn).
const MAX_DEPTH: usize = 3;
/// The largest callee unfolded, in template cells (`piece_move/12`, a
/// clause of 24 goals, has 159).
const MAX_CALLEE: usize = 400;
/// The largest template an unfolded clause may grow to.
const MAX_TOTAL: usize = 4000;
/// Control constructs nested deeper than this are left as they are.
const MAX_NEST: usize = 100;

/// A term of the rewritten clause: a variable (by its number in the new
/// template) or a constant, a compound, or a list cell.
#[derive(Clone)]
enum T {
    Leaf(Cell),
    Comp(Atom, Vec<T>),
    List(Box<[T; 2]>),
}

impl T {
    /// Name and arguments of a goal (`None` for a variable or a number).
    fn parts(&self) -> Option<(Atom, &[T])> {
        match self {
            T::Leaf(Cell::Atom(a)) => Some((*a, &[])),
            T::Comp(f, args) => Some((*f, args)),
            T::List(l) => Some((atom::DOT, &l[..])),
            _ => None,
        }
    }
}

/// The variables of a template being read into the new one: each
/// variable's term there, given the first time it is met.
struct Rename {
    map: Vec<Option<T>>,
}

impl Rename {
    /// Reads the subterm at `i` of a template; a variable not met before
    /// becomes a new variable of the new template (counted in `nvars`).
    fn read(&mut self, cells: &[Cell], i: usize, nvars: &mut usize) -> T {
        match cells[i] {
            Cell::Ref(k) => self.map[k]
                .get_or_insert_with(|| {
                    *nvars += 1;
                    T::Leaf(Cell::Ref(*nvars - 1))
                })
                .clone(),
            Cell::Str(p) => {
                let Cell::Fun(f, n) = cells[p] else { unreachable!("Str points at Fun") };
                T::Comp(f, (p + 1..p + 1 + n as usize).map(|a| self.read(cells, a, nvars)).collect())
            }
            Cell::Lst(p) => T::List(Box::new([self.read(cells, p, nvars), self.read(cells, p + 1, nvars)])),
            c => T::Leaf(c),
        }
    }
}

struct Unfolder<'a> {
    db: &'a Db,
    /// Variables in the new template.
    nvars: usize,
    /// The predicates being unfolded around the goal at hand, the
    /// caller's own first.
    path: Vec<usize>,
    /// Cells the new template has grown by, about.
    grown: usize,
    /// Predicates unfolded.
    used: Vec<usize>,
}

impl<'a> Unfolder<'a> {
    /// The clause of predicate `i`, if a call of it may be unfolded here.
    fn callee(&self, i: usize) -> Option<&'a ClauseCode> {
        let db: &'a Db = self.db;
        let p = &db.preds[i];
        if p.dynamic || p.abolished || p.clauses.len() != 1 || self.path.contains(&i) || self.path.len() > MAX_DEPTH {
            return None;
        }
        let c = &p.clauses[0];
        let cells = &c.tmpl.cells;
        let fits = cells.len() <= MAX_CALLEE && self.grown + cells.len() <= MAX_TOTAL;
        // A predicate that calls itself (a loop) is not unrolled: its
        // first round in the caller's code saved one call and made the
        // caller's code larger (Othello's `closes_rest/5`: 5% more
        // instructions a playout).
        let own = if p.arity == 0 { Cell::Atom(p.name) } else { Cell::Fun(p.name, p.arity) };
        let head = match cells[2] {
            Cell::Str(h) => h,
            _ => 2,
        };
        let recursive = cells.iter().enumerate().skip(3).any(|(j, &c)| j != head && c == own);
        let cut = cells.contains(&Cell::Atom(atom::CUT));
        // A call of a predicate defined nowhere stays in its clause's code:
        // the error names the clause that made the call.
        let unknown = (c.body_start..c.body_start + c.body_len).any(|g| calls_unknown(db, cells, g, 0));
        let plain = c.span.is_some() && c.body_start == 3 && !cut && !recursive && !unknown;
        (plain && fits).then_some(&**c)
    }

    /// The goal with the calls it makes unfolded, where they may be.
    fn goal(&mut self, g: T, nest: usize) -> T {
        let Some((f, args)) = g.parts() else { return g };
        if nest > MAX_NEST {
            return g;
        }
        let n = args.len();
        // Which arguments are goals run in place.
        let goals: &[usize] = match self.db.get(f, n as u32) {
            Some(Entry::Control(c)) => goal_args(c),
            Some(Entry::User(i)) => {
                if self.callee(i).is_none() {
                    return g;
                }
                let args = match g {
                    T::Comp(_, args) => args,
                    T::List(l) => {
                        let [h, t] = *l;
                        vec![h, t]
                    }
                    T::Leaf(_) => Vec::new(),
                };
                return self.unfold(i, args);
            }
            _ => &[],
        };
        if goals.is_empty() {
            return g;
        }
        let T::Comp(f, mut args) = g else { return g };
        for &k in goals {
            let a = std::mem::replace(&mut args[k], T::Leaf(Cell::Atom(atom::TRUE)));
            args[k] = self.goal(a, nest + 1);
        }
        T::Comp(f, args)
    }

    /// The call of predicate `i` with these arguments, unfolded: its
    /// step, its head's unifications and its body, as one conjunction.
    fn unfold(&mut self, i: usize, args: Vec<T>) -> T {
        let c = self.callee(i).expect("checked by the caller");
        let cells = &c.tmpl.cells;
        self.grown += cells.len();
        if !self.used.contains(&i) {
            self.used.push(i);
        }
        let mut names = Rename { map: vec![None; c.tmpl.nvars] };
        let mut goals = vec![T::Leaf(Cell::Atom(atom::STEP))];
        let (_, head) = parts(cells, 2);
        // A head variable met first takes the call's argument where that
        // is a variable or a constant; anything else is unified as the
        // head would unify it.
        for (&h, a) in head.iter().zip(args) {
            match (cells[h], &a) {
                (Cell::Ref(k), T::Leaf(_)) if names.map[k].is_none() => names.map[k] = Some(a),
                _ => {
                    let t = names.read(cells, h, &mut self.nvars);
                    goals.push(T::Comp(atom::EQ, vec![a, t]));
                }
            }
        }
        let body: Vec<T> =
            (c.body_start..c.body_start + c.body_len).map(|g| names.read(cells, g, &mut self.nvars)).collect();
        self.path.push(i);
        for g in body {
            let g = self.goal(g, 0);
            goals.push(g);
        }
        self.path.pop();
        conj(goals)
    }
}

/// The arguments of a control construct that are goals run in place
/// (the compiler's inline constructs).
fn goal_args(c: Control) -> &'static [usize] {
    match c {
        Control::Conj | Control::Disj | Control::IfThen | Control::SoftIf => &[0, 1],
        Control::Not => &[0],
        Control::Findall | Control::Findall4 => &[1],
        _ => &[],
    }
}

/// Whether the goal at cell `g` of a template calls a predicate that is
/// defined nowhere, itself or in the control constructs it is made of.
fn calls_unknown(db: &Db, cells: &[Cell], g: usize, nest: usize) -> bool {
    if !matches!(cells[g], Cell::Atom(_) | Cell::Str(_)) {
        return false;
    }
    let (f, args) = parts(cells, g);
    match db.get(f, args.len() as u32) {
        None => true,
        Some(Entry::Control(c)) if nest < MAX_NEST => {
            goal_args(c).iter().any(|&k| calls_unknown(db, cells, args[k], nest + 1))
        }
        _ => false,
    }
}

/// The goals as one right-nested conjunction.
fn conj(mut goals: Vec<T>) -> T {
    let mut acc = goals.pop().unwrap_or(T::Leaf(Cell::Atom(atom::TRUE)));
    while let Some(g) = goals.pop() {
        acc = T::Comp(atom::COMMA, vec![g, acc]);
    }
    acc
}

/// The clause's template with the calls it makes unfolded (see the module
/// comment): its cells, variables and body goals, laid out as
/// `compile_clause` lays a clause out. `None` where nothing is unfolded.
/// The predicates unfolded are marked (`Pred::inlined`).
pub fn unfold(db: &Db, c: &ClauseCode) -> Option<(Vec<Cell>, usize, usize)> {
    if db.no_unfold {
        return None;
    }
    let cells = &c.tmpl.cells;
    let (name, args) = parts(cells, 2);
    let own = db.get(name, args.len() as u32);
    let mut u = Unfolder { db, nvars: c.tmpl.nvars, path: Vec::new(), grown: cells.len(), used: Vec::new() };
    if let Some(Entry::User(i)) = own {
        u.path.push(i);
    }
    let mut names = Rename { map: (0..c.tmpl.nvars).map(|k| Some(T::Leaf(Cell::Ref(k)))).collect() };
    let head = names.read(cells, 2, &mut u.nvars);
    let mut goals = Vec::new();
    for g in c.body_start..c.body_start + c.body_len {
        let g = names.read(cells, g, &mut u.nvars);
        let g = u.goal(g, 0);
        flatten(g, &mut goals);
    }
    if u.used.is_empty() {
        return None;
    }
    for &i in &u.used {
        db.preds[i].inlined.set(true);
    }
    let mut out = vec![Cell::Str(1), Cell::Fun(atom::NECK, 1 + goals.len() as u32)];
    out.resize(3 + goals.len(), Cell::Atom(atom::TRUE));
    write(&mut out, 2, &head);
    for (k, g) in goals.iter().enumerate() {
        write(&mut out, 3 + k, g);
    }
    Some((out, u.nvars, goals.len()))
}

/// A goal as the body goals it is a conjunction of (`true` left out, as
/// a clause's own body is read).
fn flatten(g: T, out: &mut Vec<T>) {
    match g {
        T::Comp(f, args) if f == atom::COMMA && args.len() == 2 => {
            for a in args {
                flatten(a, out);
            }
        }
        T::Leaf(Cell::Atom(a)) if a == atom::TRUE => {}
        g => out.push(g),
    }
}

/// Writes `t` into `cells[slot]`, its arguments after the cells there are.
fn write(cells: &mut Vec<Cell>, slot: usize, t: &T) {
    match t {
        T::Leaf(c) => cells[slot] = *c,
        T::Comp(f, args) => {
            let p = cells.len();
            cells.push(Cell::Fun(*f, args.len() as u32));
            cells.resize(p + 1 + args.len(), Cell::Atom(atom::TRUE));
            cells[slot] = Cell::Str(p);
            for (k, a) in args.iter().enumerate() {
                write(cells, p + 1 + k, a);
            }
        }
        T::List(l) => {
            let p = cells.len();
            cells.resize(p + 2, Cell::Atom(atom::TRUE));
            cells[slot] = Cell::Lst(p);
            write(cells, p, &l[0]);
            write(cells, p + 1, &l[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::Engine;

    /// The engine's code for `name/arity`'s first clause, as it runs (a
    /// `Guard` without the code it holds).
    fn code(e: &mut Engine, name: &str, arity: u32) -> String {
        let a = e.m.atoms.intern(name);
        let p = e.m.db.pred(a, arity).unwrap();
        let c = p.clauses[0].clone();
        let code = super::super::run::clause_code_for_test(&mut e.m, &c);
        let shown: Vec<String> = code
            .iter()
            .map(|i| match i {
                super::super::Instr::Guard(_) => "Guard".to_string(),
                i => format!("{i:?}"),
            })
            .collect();
        shown.join(", ")
    }

    /// The answers to a query, and the inferences it took.
    fn answers(e: &mut Engine, q: &str) -> (Vec<String>, u64) {
        let a = e
            .query(q)
            .unwrap()
            .map(|a| match a {
                Ok(a) => a.bindings.iter().map(|b| b.text.clone()).collect::<Vec<_>>().join(" "),
                Err(e) => e.to_string(),
            })
            .collect();
        (a, e.steps())
    }

    fn engines(src: &str) -> (Engine, Engine) {
        let mut on = Engine::new();
        let mut off = Engine::new();
        off.set_unfold(false);
        assert!(!on.load("t", src).has_errors());
        assert!(!off.load("t", src).has_errors());
        (on, off)
    }

    const PROGRAM: &str = "
        p(X, Y) :- q(X, Z), r(Z, Y).
        q(A, B) :- B is A + 1.
        r(A, B) :- ( A > 2 -> B = big ; B = small(A) ).
        s(X) :- t(f(X, Y), Y).
        t(f(a, b), b).
        u(X) :- w(X, 0).
        w(X, N) :- ( N > 3 -> X = N ; N1 is N + 1, w(X, N1) ).
        c(X) :- d(X).
        d(X) :- m(X, [1, 2, 3]), !.
        m(X, [X|_]).
        m(X, [_|T]) :- m(X, T).
        e(X) :- m(X, [1, 2]).
        col(red, 1, r).
        col(green, 2, g).
        col(blue, 3, b).
        f1(C, N, L) :- col(C, N, L).
        f2(N) :- col(green, N, _).
        f3(X) :- col(X, 1, r).
        f4(C, X) :- col(C, X, X).
        f5(C, X, Y) :- X = Y, col(C, X, Y).
        f6(I, W) :- num(I, W), atom(W).
        f7(X) :- col(C, N, X), N > 1, atom(C).
        num(1, one).
        num(2, two).
        g1(C, N) :- col(C, N, _), N >= 2.
        g2(P) :- col(C, _, L), num(N, W), P = C-L-N-W.
        g3(C) :- col(C, N, _), !, N > 0.
        g4(X) :- pair(X, X).
        g5(L) :- col(C, N, L), N > 1, atom_length(C, K), K > 4.
        g6(L) :- findall(C-N, col(C, N, _), L).
        g7(C) :- col(C, _, x).
        g8(X) :- col(_, N, _), X is 6 // (N - 2).
        g9(C, N) :- ( col(C, N, _), N > 1 -> true ; C = none ).
        rr(0, []) :- !.
        rr(N, [C|T]) :- col(C, _, _), N1 is N - 1, rr(N1, T).
        rs(0, []) :- !.
        rs(N, [D|T]) :- col(C, K, _), K =< N, N1 is N - 1, D = C, rs(N1, T).
        e1(C) :- col(C, N, _), N > 1.
        q2(A, B) :- e1(A), e1(B).
        pair(a, a).
        pair(b, c).
        pair(d, d).
    ";

    #[test]
    fn a_call_of_a_predicate_of_one_clause_runs_its_body_in_place() {
        let (mut on, mut off) = engines(PROGRAM);
        let c = code(&mut on, "p", 2);
        assert!(c.starts_with("Warm") || c.starts_with("Guard"), "{c}");
        assert!(c.contains("Guard, ") && c.contains("Step") && !c.contains("Call(") && !c.contains("Execute("), "{c}");
        let queries = [
            "p(1, Y)",
            "p(5, Y)",
            "p(X, Y)",
            "p(a, Y)",
            "p(1, small(2))",
            "p(1, big)",
            "s(X)",
            "s(b)",
            "s(a)",
            "u(X)",
            "c(X)",
            "e(X)",
        ];
        // The same answers and errors, in as many inferences.
        for q in queries {
            assert_eq!(answers(&mut on, q), answers(&mut off, q), "{q}");
        }
    }

    #[test]
    fn a_call_of_a_table_of_facts_is_looked_up_in_place() {
        let (mut on, mut off) = engines(PROGRAM);
        let mut eager = Engine::new();
        eager.set_native_after(0);
        assert!(!eager.load("t", PROGRAM).has_errors());
        for p in ["f1", "f5"] {
            let c = code(&mut on, p, 3);
            assert!(c.contains("Guard, ") && c.contains("Facts("), "{p}: {c}");
        }
        // A first argument met first there is unbound: the facts are
        // tried one after another.
        assert!(code(&mut on, "f7", 1).contains("fresh: true"), "{}", code(&mut on, "f7", 1));
        let queries = [
            "f1(red, N, L)",
            "f1(blue, 3, b)",
            "f1(blue, 2, L)",
            "f1(pink, N, L)",
            "f1(f(x), N, L)",
            "f1(1, N, L)",
            "f1(C, N, L)",
            "f1(C, 2, L)",
            "f2(N)",
            "f3(X)",
            "f4(red, X)",
            "f5(red, X, Y)",
            "f6(2, W)",
            "f6(2.0, W)",
            "f6(I, W)",
            "f7(X)",
            "X = red, f1(X, N, L), f1(green, M, _)",
            "g1(C, N)",
            "g1(blue, N)",
            "g2(P)",
            "g3(C)",
            "g4(X)",
            "g5(L)",
            "g6(L)",
            "g7(C)",
            "g8(X)",
            "g9(C, N)",
            "g1(C, N), !",
            "findall(X, (g2(X), X = _-_-2-_), L)",
            // Choice points of one clause's calls in two activations: a
            // failure resumes the newest, whichever clause made it.
            "rr(2, L)",
            "rr(3, L), L = [blue|_]",
            "rs(2, L)",
            "rs(3, L)",
            "q2(A, B)",
            "q2(A, B), A \\== B",
        ];
        // The same answers, in as many inferences, interpreted and native.
        for q in queries {
            let reference = answers(&mut off, q);
            assert_eq!(answers(&mut on, q), reference, "{q}");
            assert_eq!(answers(&mut eager, q), reference, "{q}, native");
        }
    }

    #[test]
    fn recursion_cuts_and_several_clauses_are_called() {
        let (mut on, _) = engines(PROGRAM);
        // w/2 calls itself (a loop is not unrolled), d/1 has a cut, m/2 two
        // clauses.
        let w = code(&mut on, "w", 2);
        assert!(w.contains("Execute(") && !w.contains("Guard"), "{w}");
        for p in ["u", "c", "d", "e"] {
            let c = code(&mut on, p, 1);
            assert!((c.contains("Execute(") || c.contains("Call(")) && !c.contains("Guard"), "{p}: {c}");
        }
    }

    #[test]
    fn a_call_of_an_unknown_procedure_is_reported_from_its_own_clause() {
        let mut e = Engine::new();
        assert!(!e.load("t", "p(X) :- q(X).\nq(X) :- undefined_here(X).").has_errors());
        assert!(!code(&mut e, "p", 1).contains("Guard"), "{}", code(&mut e, "p", 1));
        let (answers, _) = answers(&mut e, "p(1)");
        assert!(answers[0].contains("undefined_here/1") && answers[0].contains("q/1"), "{answers:?}");
    }

    #[test]
    fn code_made_before_a_callee_changes_makes_the_call() {
        let mut e = Engine::new();
        assert!(!e.load("one", "p(X) :- q(X).\nq(1).").has_errors());
        assert_eq!(answers(&mut e, "p(X)").0, ["1"]);
        assert!(code(&mut e, "p", 1).contains("Guard"));
        // A second file adds a clause to q/1: p/1's code, made with q/1's
        // one clause in it, must see both.
        e.load("two", "q(2).");
        assert_eq!(answers(&mut e, "p(X)").0, ["1", "2"]);
        // A table of facts looked up, then given a second fact with the
        // same first argument.
        assert!(!e.load("three", "r(X, Y) :- t(X, Y).\nt(a, 1).\nt(b, 2).").has_errors());
        assert_eq!(answers(&mut e, "r(a, Y)").0, ["1"]);
        assert!(code(&mut e, "r", 2).contains("Facts("));
        e.load("four", "t(a, 3).");
        assert_eq!(answers(&mut e, "r(a, Y)").0, ["1", "3"]);
        // A table of facts tried fact by fact, then given another fact.
        assert!(!e.load("five", "v(X) :- k(Y, N), N > 1, X = Y.\nk(a, 1).\nk(b, 2).").has_errors());
        assert_eq!(answers(&mut e, "v(X)").0, ["b"]);
        assert!(code(&mut e, "v", 1).contains("fresh: true"));
        e.load("six", "k(c, 3).");
        assert_eq!(answers(&mut e, "v(X)").0, ["b", "c"]);
    }
}
