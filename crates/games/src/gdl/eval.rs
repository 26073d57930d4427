//! Bottom-up evaluation of the static relations (those that depend on
//! neither the state nor the moves), stratum by stratum to a fixpoint.
//! Their facts are written into the translation, so recursion such as
//! `succ` chains or `smaller` terminates whatever the order of its
//! literals, and lookups use the engine's indexing.
//!
//! The evaluation is semi-naive: after a stratum's first round, a rule is
//! run once for each of its literals of the stratum, with that literal
//! taking only the facts found in the round before (a new fact needs at
//! least one of them), so a chain of N steps costs N rounds of new facts,
//! not N rounds of all of them. Every argument of a relation is indexed.

// Errors are the cold path; a `Diagnostic` by value keeps the code plain.
#![allow(clippy::result_large_err)]

use super::check::Analysis;
use super::{Atom, Flat, FlatClause, Term};
use crate::syntax::{Diagnostic, Span};
use rustc_hash::FxHashMap;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Most facts the static relations may have in all.
const MAX_FACTS: usize = 2_000_000;
/// Most tuple matches spent computing them.
const MAX_STEPS: u64 = 20_000_000;
/// Deepest term a static fact may hold (deeper means a relation that grows
/// without end, like `(<= (nat (s ?x)) (nat ?x))`).
const MAX_DEPTH: usize = 64;

/// A ground term, symbols interned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum G {
    S(u32),
    F(u32, Rc<[G]>),
}

/// A term of a rule, variables numbered.
#[derive(Clone, Debug)]
enum P {
    V(usize),
    S(u32),
    F(u32, Vec<P>),
}

/// A rule ready to run: its relation's number, head patterns, ordered
/// body and number of variables.
struct Compiled<'a> {
    clause: &'a FlatClause,
    rel: usize,
    head: Vec<P>,
    body: Vec<Goal>,
    nvars: usize,
}

enum Goal {
    /// A relation's facts; with `delta`, only those of the round before.
    Pos(usize, Vec<P>, bool),
    Distinct(P, P),
    Not(Vec<Vec<Goal>>),
}

/// The facts of one relation, in the order found, with an index on each
/// argument (the positions of the facts with each value there, in order).
#[derive(Default)]
struct Rel {
    tuples: Vec<Rc<[G]>>,
    /// Each fact's position.
    set: FxHashMap<Rc<[G]>, usize>,
    by_arg: Vec<FxHashMap<G, Vec<usize>>>,
}

impl Rel {
    fn insert(&mut self, t: Rc<[G]>) -> bool {
        if self.set.contains_key(&t) {
            return false;
        }
        if self.by_arg.len() < t.len() {
            self.by_arg.resize_with(t.len(), FxHashMap::default);
        }
        for (i, g) in t.iter().enumerate() {
            self.by_arg[i].entry(g.clone()).or_default().push(self.tuples.len());
        }
        self.set.insert(t.clone(), self.tuples.len());
        self.tuples.push(t);
        true
    }
}

/// The static facts, relation by relation, as ground terms with their
/// symbol table.
pub struct Facts {
    pub symbols: Vec<String>,
    pub relations: Vec<(String, Vec<Rc<[G]>>)>,
    /// Static relations too large to compute when the game loads (or that
    /// use one), with why: their rules run during play instead, like
    /// those of the state.
    pub on_demand: Vec<(String, Diagnostic)>,
}

impl Facts {
    /// For each relation with arguments, its facts per distinct value of
    /// each argument.
    pub fn fanout(&self) -> HashMap<String, Vec<f64>> {
        self.relations
            .iter()
            .filter(|(_, ts)| ts.first().is_some_and(|t| !t.is_empty()))
            .map(|(r, ts)| {
                let per_arg = (0..ts[0].len())
                    .map(|i| {
                        let values: HashSet<&G> = ts.iter().map(|t| &t[i]).collect();
                        ts.len() as f64 / values.len() as f64
                    })
                    .collect();
                (r.clone(), per_arg)
            })
            .collect()
    }
}

struct Eval {
    symbols: Vec<String>,
    sym_index: HashMap<String, u32>,
    rel_index: HashMap<String, usize>,
    rels: Vec<Rel>,
    /// Each relation's facts found in the round before (a range of its
    /// tuples), for the literals that take only those.
    delta: Vec<(usize, usize)>,
    steps: u64,
    facts: usize,
    /// The limits: most facts, most tuple matches.
    max_facts: usize,
    max_steps: u64,
}

/// What a body's solver calls with each solution (an `Err` stops it).
type Found<'f> = dyn FnMut(&[Option<G>]) -> Result<(), Stop> + 'f;

enum Stop {
    TooLong,
    /// One rule alone finds more facts than the limit allows.
    TooMany,
    /// A negation's goal holds: no need for more solutions.
    Holds,
}

/// Computes every static relation the game reaches.
pub fn static_facts(clauses: &[FlatClause], a: &Analysis) -> Result<Facts, Diagnostic> {
    let mut ev = Eval {
        symbols: Vec::new(),
        sym_index: HashMap::new(),
        rel_index: HashMap::new(),
        rels: Vec::new(),
        delta: Vec::new(),
        steps: 0,
        facts: 0,
        max_facts: MAX_FACTS,
        max_steps: MAX_STEPS,
    };
    let mut order_rels = Vec::new();
    for stratum in &a.strata {
        for r in stratum {
            if a.is_static(r) {
                ev.rel_index.insert(r.clone(), ev.rels.len());
                ev.rels.push(Rel::default());
                order_rels.push(r.as_str());
            }
        }
    }
    ev.delta = vec![(0, 0); ev.rels.len()];
    let mut on_demand: Vec<(String, Diagnostic)> = Vec::new();
    for stratum in &a.strata {
        let in_stratum = |rel: &String| stratum.contains(rel) && a.is_static(rel);
        let clauses: Vec<&FlatClause> = clauses.iter().filter(|c| in_stratum(&c.head.rel)).collect();
        if clauses.is_empty() {
            continue;
        }
        let stratum_rels: Vec<usize> =
            clauses.iter().map(|c| ev.rel_index[c.head.rel.as_str()]).collect::<HashSet<_>>().into_iter().collect();
        // A relation that uses one computed on demand is too.
        let uses = |c: &&FlatClause| {
            let mut atoms = Vec::new();
            super::check::body_atoms(&c.body, false, &mut atoms);
            atoms
                .iter()
                .find(|(atom, _, _)| on_demand.iter().any(|(r, _)| *r == atom.rel))
                .map(|(atom, _, _)| atom.rel.clone())
        };
        // Why this stratum is computed during play, if it is.
        let warning = match clauses.iter().find_map(|c| uses(c).map(|r| (c, r))) {
            Some((c, r)) => Some(Diagnostic::warning(
                c.span,
                format!("`{}` uses `{r}`, which is computed during play: it is computed during play too", c.head.rel),
                "this rule",
            )),
            None => {
                let steps = ev.steps;
                match ev.stratum(&clauses, stratum, &stratum_rels) {
                    Ok(()) => None,
                    Err(Failed::Endless(d)) => return Err(d),
                    Err(Failed::Limit(d)) => {
                        // Back to before this stratum, with its step budget.
                        for &rel in &stratum_rels {
                            ev.facts -= ev.rels[rel].tuples.len();
                            ev.rels[rel] = Rel::default();
                        }
                        ev.steps = steps;
                        // Not an error: the game plays, its relation asked
                        // as needed.
                        Some(
                            Diagnostic::warning(
                                d.span,
                                d.message.replace("the static relations ", "this relation would ")
                                    + "; it is computed during play instead, when it is asked",
                                "this rule",
                            )
                            .with_help(
                                "relations that depend on neither `true` nor `does` are computed when the game \
                                 loads, up to a limit; past it, their rules run top-down like the state's \
                                 (slower, and a recursion that needs the bottom-up order may not end)",
                            ),
                        )
                    }
                }
            }
        };
        if let Some(d) = warning {
            for c in &clauses {
                if !on_demand.iter().any(|(r, _)| *r == c.head.rel) {
                    on_demand.push((c.head.rel.clone(), d.clone()));
                }
            }
        }
    }
    let relations = order_rels
        .iter()
        .filter(|r| !on_demand.iter().any(|(o, _)| o == *r))
        .map(|r| (r.to_string(), std::mem::take(&mut ev.rels[ev.rel_index[*r]].tuples)))
        .collect();
    Ok(Facts { symbols: ev.symbols, relations, on_demand })
}

/// Why a stratum could not be computed at load.
enum Failed {
    /// Past the limits: it is computed during play instead.
    Limit(Diagnostic),
    /// It grows without end: an error of the game.
    Endless(Diagnostic),
}

fn too_big(span: Span, head: &Atom, what: &str) -> Diagnostic {
    Diagnostic::error(span, format!("the static relations {what} (while computing `{}`)", head.rel), "this rule")
        .with_help(format!(
            "relations that depend on neither `true` nor `does` are computed when the game loads \
             (at most {MAX_FACTS} facts, terms nested at most {MAX_DEPTH} deep); one that grows \
             without end cannot be"
        ))
}

fn depth(g: &G) -> usize {
    match g {
        G::S(_) => 1,
        G::F(_, args) => 1 + args.iter().map(depth).max().unwrap_or(0),
    }
}

fn build(p: &P, env: &[Option<G>]) -> G {
    match p {
        P::V(i) => env[*i].clone().expect("safe rules bind every head variable"),
        P::S(s) => G::S(*s),
        P::F(f, args) => G::F(*f, args.iter().map(|a| build(a, env)).collect()),
    }
}

impl<'c> Eval {
    /// A rule ready to run: whole (`delta` None), or with its literal
    /// `delta` first, on the facts of the round before.
    fn compile(&mut self, c: &'c FlatClause, delta: Option<usize>, stratum: &[String]) -> Compiled<'c> {
        let mut vars = HashMap::new();
        let body = match delta {
            None => {
                let all: Vec<&Flat> = c.body.iter().collect();
                self.goals(&self.plan(all, HashSet::new(), stratum), &mut vars)
            }
            Some(i) => {
                let mut bound = Vec::new();
                c.body[i].vars(&mut bound);
                let bound: HashSet<String> = bound.into_iter().map(str::to_string).collect();
                let rest: Vec<&Flat> = c.body.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, l)| l).collect();
                let mut goals = self.goals(&[&c.body[i]], &mut vars);
                if let Some(Goal::Pos(_, _, delta)) = goals.first_mut() {
                    *delta = true;
                }
                let rest = self.plan(rest, bound, stratum);
                goals.extend(self.goals(&rest, &mut vars));
                goals
            }
        };
        let head = c.head.args.iter().map(|t| self.pattern(t, &mut vars)).collect();
        Compiled { clause: c, rel: self.rel_index[c.head.rel.as_str()], head, body, nvars: vars.len() }
    }

    /// The order to solve a body in, bottom-up, from the variables bound
    /// first: a test (`distinct`, `not`) as soon as its variables are bound,
    /// otherwise the literal with the fewest facts to try, estimated from
    /// the facts found so far. A literal that shares no variable with those
    /// before it (a product) comes last; a relation of the stratum being
    /// computed, still growing, counts as large unless an argument is
    /// bound.
    fn plan<'b>(&self, mut left: Vec<&'b Flat>, mut bound: HashSet<String>, stratum: &[String]) -> Vec<&'b Flat> {
        let ground = |t: &Term, bound: &HashSet<String>| {
            let mut vs = Vec::new();
            t.vars(&mut vs);
            vs.iter().all(|v| bound.contains(*v))
        };
        let all_bound = |l: &Flat, bound: &HashSet<String>| {
            let mut vs = Vec::new();
            l.vars(&mut vs);
            vs.iter().all(|v| bound.contains(*v))
        };
        let mut out = Vec::with_capacity(left.len());
        while !left.is_empty() {
            let test = left.iter().position(|l| !matches!(l, Flat::Pos(_)) && all_bound(l, &bound));
            let next = test.or_else(|| {
                let cost = |l: &Flat| -> Option<f64> {
                    let Flat::Pos(atom) = l else { return None };
                    if atom.args.iter().all(|t| ground(t, &bound)) {
                        return Some(1.0);
                    }
                    let some_bound = atom.args.iter().any(|t| ground(t, &bound));
                    if stratum.contains(&atom.rel) {
                        return Some(if some_bound { 1e3 } else { 1e15 });
                    }
                    let r = &self.rels[self.rel_index[atom.rel.as_str()]];
                    let n = r.tuples.len() as f64;
                    if !some_bound {
                        // A product with what is bound already: last.
                        return Some(if bound.is_empty() { n } else { n * 1e6 });
                    }
                    let by_index = atom
                        .args
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| ground(t, &bound))
                        .map(|(i, _)| n / r.by_arg.get(i).map_or(1, |m| m.len().max(1)) as f64)
                        .fold(n, f64::min);
                    Some(by_index)
                };
                left.iter()
                    .enumerate()
                    .filter_map(|(i, l)| cost(l).map(|c| (c, i)))
                    .min_by(|x, y| x.0.total_cmp(&y.0))
                    .map(|(_, i)| i)
            });
            // Only unsafe literals are left (already reported): keep them.
            let l = left.remove(next.unwrap_or(0));
            let mut vs = Vec::new();
            l.vars(&mut vs);
            if matches!(l, Flat::Pos(_)) {
                bound.extend(vs.into_iter().map(str::to_string));
            }
            out.push(l);
        }
        out
    }

    /// Computes one stratum's relations: each rule whole (the first
    /// round), then once for each literal of the stratum with that literal
    /// first, on the facts of the round before, until no fact is new.
    fn stratum(&mut self, clauses: &[&'c FlatClause], stratum: &[String], rels: &[usize]) -> Result<(), Failed> {
        let mut first = Vec::new();
        let mut later = Vec::new();
        for c in clauses {
            first.push(self.compile(c, None, stratum));
            for (i, l) in c.body.iter().enumerate() {
                if let Flat::Pos(atom) = l
                    && stratum.contains(&atom.rel)
                {
                    later.push(self.compile(c, Some(i), stratum));
                }
            }
        }
        let mut rules = &first;
        loop {
            let before: Vec<(usize, usize)> = rels.iter().map(|&r| (r, self.rels[r].tuples.len())).collect();
            for rule in rules {
                self.run(rule)?;
            }
            // The facts of this round are the next round's delta.
            let mut changed = false;
            for (r, len) in before {
                let now = self.rels[r].tuples.len();
                self.delta[r] = (len, now);
                changed |= now > len;
            }
            if !changed {
                return Ok(());
            }
            rules = &later;
        }
    }

    /// Runs a rule and adds the facts it finds.
    fn run(&mut self, rule: &Compiled) -> Result<(), Failed> {
        let Compiled { clause: c, rel, head, body, nvars } = rule;
        let mut found = Vec::new();
        let mut env = vec![None; *nvars];
        // The solutions are kept until the rule is done: at most as many
        // as there is room for facts.
        let room = self.max_facts.saturating_sub(self.facts);
        let r = self.solve(body, &mut env, &mut |env| {
            if found.len() >= room {
                return Err(Stop::TooMany);
            }
            found.push(head.iter().map(|p| build(p, env)).collect::<Rc<[G]>>());
            Ok(())
        });
        match r {
            Ok(()) => {}
            Err(Stop::TooMany) => return Err(Failed::Limit(too_big(c.span, &c.head, "have too many facts"))),
            Err(_) => return Err(Failed::Limit(too_big(c.span, &c.head, "take too long to compute"))),
        }
        for t in found {
            if t.iter().any(|g| depth(g) > MAX_DEPTH) {
                // A relation without end: computed top-down, it would not
                // end either. An error of the game.
                return Err(Failed::Endless(too_big(c.span, &c.head, "build terms nested too deeply")));
            }
            if self.rels[*rel].insert(t) {
                self.facts += 1;
                if self.facts > self.max_facts {
                    return Err(Failed::Limit(too_big(c.span, &c.head, "have too many facts")));
                }
            }
        }
        Ok(())
    }

    fn sym(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.sym_index.get(s) {
            return i;
        }
        let i = self.symbols.len() as u32;
        self.symbols.push(s.to_string());
        self.sym_index.insert(s.to_string(), i);
        i
    }

    fn pattern(&mut self, t: &Term, vars: &mut HashMap<String, usize>) -> P {
        match t {
            Term::Sym(s, _) => P::S(self.sym(s)),
            Term::Var(v, _) => {
                let n = vars.len();
                P::V(*vars.entry(v.clone()).or_insert(n))
            }
            Term::Fn(f, args, _) => {
                let f = self.sym(f);
                P::F(f, args.iter().map(|a| self.pattern(a, vars)).collect())
            }
        }
    }

    fn goals(&mut self, body: &[&Flat], vars: &mut HashMap<String, usize>) -> Vec<Goal> {
        body.iter()
            .map(|l| match l {
                Flat::Pos(atom) => {
                    let args = atom.args.iter().map(|t| self.pattern(t, vars)).collect();
                    Goal::Pos(self.rel_index[atom.rel.as_str()], args, false)
                }
                Flat::Distinct(x, y, _) => Goal::Distinct(self.pattern(x, vars), self.pattern(y, vars)),
                Flat::Not(alts, _) => Goal::Not(
                    alts.iter()
                        .map(|alt| {
                            let refs: Vec<&Flat> = alt.iter().collect();
                            self.goals(&refs, vars)
                        })
                        .collect(),
                ),
            })
            .collect()
    }

    /// Calls `found` with every binding that satisfies the goals.
    fn solve(&mut self, goals: &[Goal], env: &mut Vec<Option<G>>, found: &mut Found) -> Result<(), Stop> {
        let Some((first, rest)) = goals.split_first() else {
            return found(env);
        };
        match first {
            Goal::Pos(rel, args, delta) => {
                let r = &self.rels[*rel];
                let (lo, hi) = if *delta { self.delta[*rel] } else { (0, r.tuples.len()) };
                // Every argument bound: a lookup.
                if let Some(t) = args.iter().map(|p| ground(p, env)).collect::<Option<Rc<[G]>>>() {
                    self.steps += 1;
                    if self.steps > self.max_steps {
                        return Err(Stop::TooLong);
                    }
                    if r.set.get(&t).is_some_and(|&k| lo <= k && k < hi) {
                        self.solve(rest, env, found)?;
                    }
                    return Ok(());
                }
                // The shortest index list of a bound argument, within the
                // range (the lists are in order).
                let mut best: Option<&[usize]> = None;
                for (i, p) in args.iter().enumerate() {
                    if let Some(key) = ground(p, env) {
                        let list = r.by_arg.get(i).and_then(|m| m.get(&key)).map_or(&[][..], Vec::as_slice);
                        let list = &list[list.partition_point(|&k| k < lo)..list.partition_point(|&k| k < hi)];
                        if best.is_none_or(|b| list.len() < b.len()) {
                            best = Some(list);
                        }
                    }
                }
                let candidates: Vec<usize> = match best {
                    Some(list) => list.to_vec(),
                    None => (lo..hi).collect(),
                };
                for i in candidates {
                    self.steps += 1;
                    if self.steps > self.max_steps {
                        return Err(Stop::TooLong);
                    }
                    let tuple = self.rels[*rel].tuples[i].clone();
                    let mut trail = Vec::new();
                    if args.iter().zip(tuple.iter()).all(|(p, g)| unify(p, g, env, &mut trail)) {
                        self.solve(rest, env, found)?;
                    }
                    for v in trail {
                        env[v] = None;
                    }
                }
                Ok(())
            }
            Goal::Distinct(x, y) => {
                if ground(x, env) != ground(y, env) {
                    self.solve(rest, env, found)?;
                }
                Ok(())
            }
            Goal::Not(alts) => {
                let mut holds = false;
                for alt in alts {
                    let mut scratch = env.clone();
                    match self.solve(alt, &mut scratch, &mut |_| Err(Stop::Holds)) {
                        Ok(()) => {}
                        Err(Stop::Holds) => {
                            holds = true;
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                }
                if !holds {
                    self.solve(rest, env, found)?;
                }
                Ok(())
            }
        }
    }
}

/// The ground term a pattern stands for, if all its variables are bound.
fn ground(p: &P, env: &[Option<G>]) -> Option<G> {
    match p {
        P::V(i) => env[*i].clone(),
        P::S(s) => Some(G::S(*s)),
        P::F(f, args) => Some(G::F(*f, args.iter().map(|a| ground(a, env)).collect::<Option<Rc<[G]>>>()?)),
    }
}

fn unify(p: &P, g: &G, env: &mut [Option<G>], trail: &mut Vec<usize>) -> bool {
    match (p, g) {
        (P::V(i), _) => match &env[*i] {
            Some(b) => b == g,
            None => {
                env[*i] = Some(g.clone());
                trail.push(*i);
                true
            }
        },
        (P::S(s), G::S(t)) => s == t,
        (P::F(f, ps), G::F(h, gs)) => {
            f == h && ps.len() == gs.len() && ps.iter().zip(gs.iter()).all(|(p, g)| unify(p, g, env, trail))
        }
        _ => false,
    }
}

/// The facts every relation of the state can have: each relation computed
/// with its negations dropped, `true` taking every fluent `init` or `next`
/// can give and `does` every action `legal` can give. A negation only
/// removes facts, so these are a superset of what holds in any state play
/// reaches: a rule instantiated over them has every ground instance play
/// can use (the grounding of [`super::ground`]).
pub(super) struct Domains {
    ev: Eval,
}

impl Domains {
    /// The domains of `clauses`' relations over the static `facts`, within
    /// `max_facts` facts and `max_steps` tuple matches.
    pub fn compute(
        clauses: &[FlatClause],
        a: &Analysis,
        facts: &Facts,
        max_facts: usize,
        max_steps: u64,
    ) -> Result<Domains, String> {
        let mut ev = Eval {
            symbols: facts.symbols.clone(),
            sym_index: facts.symbols.iter().enumerate().map(|(i, s)| (s.clone(), i as u32)).collect(),
            rel_index: HashMap::new(),
            rels: Vec::new(),
            delta: Vec::new(),
            steps: 0,
            facts: 0,
            max_facts,
            max_steps,
        };
        for (rel, tuples) in &facts.relations {
            let mut r = Rel::default();
            for t in tuples {
                r.insert(t.clone());
            }
            ev.rel_index.insert(rel.clone(), ev.rels.len());
            ev.rels.push(r);
        }
        let dynamic = |rel: &str| a.reachable.contains(rel) && !a.is_static(rel);
        let mut names: Vec<String> = vec!["true".into(), "does".into()];
        for c in clauses.iter().filter(|c| dynamic(&c.head.rel)) {
            if !names.contains(&c.head.rel) {
                names.push(c.head.rel.clone());
            }
        }
        for n in &names {
            if !ev.rel_index.contains_key(n) {
                ev.rel_index.insert(n.clone(), ev.rels.len());
                ev.rels.push(Rel::default());
            }
        }
        let span = Span::new(0, 0);
        let var = |v: &str| Term::Var(v.into(), span);
        let atom = |rel: &str, args: Vec<Term>| Atom { rel: rel.into(), rel_span: span, args, span };
        let bridge = |head: Atom, from: Atom| FlatClause { head, body: vec![Flat::Pos(from)], span };
        let mut relaxed: Vec<FlatClause> = clauses
            .iter()
            .filter(|c| dynamic(&c.head.rel))
            .map(|c| FlatClause {
                head: c.head.clone(),
                body: c.body.iter().filter(|l| !matches!(l, Flat::Not(..))).cloned().collect(),
                span: c.span,
            })
            .collect();
        for (head, from, args) in
            [("true", "init", vec!["F"]), ("true", "next", vec!["F"]), ("does", "legal", vec!["R", "A"])]
        {
            if ev.rel_index.contains_key(from) {
                let args: Vec<Term> = args.iter().map(|v| var(v)).collect();
                relaxed.push(bridge(atom(head, args.clone()), atom(from, args)));
            }
        }
        ev.delta = vec![(0, 0); ev.rels.len()];
        let refs: Vec<&FlatClause> = relaxed.iter().collect();
        let ids: Vec<usize> = names.iter().map(|n| ev.rel_index[n]).collect();
        match ev.stratum(&refs, &names, &ids) {
            Ok(()) => Ok(Domains { ev }),
            Err(Failed::Limit(d) | Failed::Endless(d)) => {
                Err(d.message.replace("the static relations ", "the state's relations, relaxed, "))
            }
        }
    }

    /// Every binding of `c`'s variables that its positive literals and its
    /// `distinct`s allow over the domains: the variables' names, and one
    /// row of values per binding.
    pub fn bindings(&mut self, c: &FlatClause) -> Result<(Vec<String>, Vec<Vec<G>>), String> {
        let mut names: Vec<&str> = Vec::new();
        for l in &c.body {
            if let Flat::Pos(atom) = l {
                atom.vars(&mut names);
            }
        }
        let mut seen = HashSet::new();
        names.retain(|n| seen.insert(*n));
        let span = Span::new(0, 0);
        let positive = FlatClause {
            head: Atom {
                rel: c.head.rel.clone(),
                rel_span: span,
                args: names.iter().map(|n| Term::Var(n.to_string(), span)).collect(),
                span,
            },
            body: c.body.iter().filter(|l| !matches!(l, Flat::Not(..))).cloned().collect(),
            span,
        };
        let rule = self.ev.compile(&positive, None, &[]);
        let mut env = vec![None; rule.nvars];
        let mut rows = Vec::new();
        let room = self.ev.max_facts.saturating_sub(self.ev.facts);
        let r = self.ev.solve(&rule.body, &mut env, &mut |env| {
            if rows.len() >= room {
                return Err(Stop::TooMany);
            }
            rows.push(rule.head.iter().map(|p| build(p, env)).collect::<Vec<G>>());
            Ok(())
        });
        match r {
            Ok(()) => {
                self.ev.facts += rows.len();
                Ok((names.into_iter().map(str::to_string).collect(), rows))
            }
            Err(Stop::TooMany) => Err(format!("`{}` has too many ground instances", c.head.rel)),
            Err(_) => Err(format!("the ground instances of `{}` take too long to compute", c.head.rel)),
        }
    }

    /// Whether `rel` can hold for `tuple` (a static relation: whether it
    /// holds).
    pub fn has(&self, rel: &str, tuple: &[G]) -> bool {
        self.ev.rel_index.get(rel).is_some_and(|&r| self.ev.rels[r].set.contains_key(tuple))
    }

    /// A symbol's number, if any fact or rule has it.
    pub fn sym(&self, s: &str) -> Option<u32> {
        self.ev.sym_index.get(s).copied()
    }

    pub fn symbols(&self) -> &[String] {
        &self.ev.symbols
    }

    /// The facts `rel` can have.
    pub fn tuples(&self, rel: &str) -> &[Rc<[G]>] {
        self.ev.rel_index.get(rel).map_or(&[], |&r| &self.ev.rels[r].tuples)
    }
}
