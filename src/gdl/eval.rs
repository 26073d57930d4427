//! Bottom-up evaluation of the static relations (those that depend on
//! neither the state nor the moves), stratum by stratum to a fixpoint.
//! Their facts are written into the translation, so recursion such as
//! `succ` chains or `smaller` terminates whatever the order of its
//! literals, and lookups use the engine's indexing.

// Errors are the cold path; a `Diagnostic` by value keeps the code plain.
#![allow(clippy::result_large_err)]

use super::check::Analysis;
use super::emit::order;
use super::{Atom, Flat, FlatClause, Term};
use crate::syntax::{Diagnostic, Span};
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
    Pos(usize, Vec<P>),
    Distinct(P, P),
    Not(Vec<Vec<Goal>>),
}

/// The facts of one relation, in the order found, with an index on the
/// first argument.
#[derive(Default)]
struct Rel {
    tuples: Vec<Rc<[G]>>,
    set: HashSet<Rc<[G]>>,
    by_first: HashMap<G, Vec<usize>>,
}

impl Rel {
    fn insert(&mut self, t: Rc<[G]>) -> bool {
        if self.set.contains(&t) {
            return false;
        }
        if let Some(f) = t.first() {
            self.by_first.entry(f.clone()).or_default().push(self.tuples.len());
        }
        self.set.insert(t.clone());
        self.tuples.push(t);
        true
    }
}

/// The static facts, relation by relation, as ground terms with their
/// symbol table.
pub struct Facts {
    pub symbols: Vec<String>,
    pub relations: Vec<(String, Vec<Rc<[G]>>)>,
}

impl Facts {
    /// For each relation with arguments, its facts per distinct first
    /// argument.
    pub fn fanout(&self) -> HashMap<String, f64> {
        self.relations
            .iter()
            .filter(|(_, ts)| ts.first().is_some_and(|t| !t.is_empty()))
            .map(|(r, ts)| {
                let firsts: HashSet<&G> = ts.iter().map(|t| &t[0]).collect();
                (r.clone(), ts.len() as f64 / firsts.len() as f64)
            })
            .collect()
    }
}

struct Eval<'a> {
    symbols: Vec<String>,
    sym_index: HashMap<String, u32>,
    rel_index: HashMap<&'a str, usize>,
    rels: Vec<Rel>,
    steps: u64,
    facts: usize,
}

enum Stop {
    TooLong,
}

/// Computes every static relation the game reaches.
pub fn static_facts(clauses: &[FlatClause], a: &Analysis) -> Result<Facts, Diagnostic> {
    let mut ev = Eval {
        symbols: Vec::new(),
        sym_index: HashMap::new(),
        rel_index: HashMap::new(),
        rels: Vec::new(),
        steps: 0,
        facts: 0,
    };
    let mut order_rels = Vec::new();
    for stratum in &a.strata {
        for r in stratum {
            if a.is_static(r) {
                ev.rel_index.insert(r.as_str(), ev.rels.len());
                ev.rels.push(Rel::default());
                order_rels.push(r.as_str());
            }
        }
    }
    for stratum in &a.strata {
        let rules: Vec<Compiled> = clauses
            .iter()
            .filter(|c| stratum.contains(&c.head.rel) && a.is_static(&c.head.rel))
            .map(|c| {
                let mut vars = HashMap::new();
                let body = ev.goals(&order(&c.body, &HashSet::new(), a, None), &mut vars);
                let head = c.head.args.iter().map(|t| ev.pattern(t, &mut vars)).collect();
                Compiled { clause: c, rel: ev.rel_index[c.head.rel.as_str()], head, body, nvars: vars.len() }
            })
            .collect();
        if rules.is_empty() {
            continue;
        }
        // Naive iteration: every rule again until nothing new is found.
        loop {
            let mut changed = false;
            for Compiled { clause: c, rel, head, body, nvars } in &rules {
                let mut found = Vec::new();
                let mut env = vec![None; *nvars];
                let r = ev.solve(body, &mut env, &mut |env| {
                    found.push(head.iter().map(|p| build(p, env)).collect::<Rc<[G]>>())
                });
                if r.is_err() {
                    return Err(too_big(c.span, &c.head, "take too long to compute"));
                }
                for t in found {
                    if t.iter().any(|g| depth(g) > MAX_DEPTH) {
                        return Err(too_big(c.span, &c.head, "build terms nested too deeply"));
                    }
                    if ev.rels[*rel].insert(t) {
                        changed = true;
                        ev.facts += 1;
                        if ev.facts > MAX_FACTS {
                            return Err(too_big(c.span, &c.head, "have too many facts"));
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    let relations =
        order_rels.iter().map(|r| (r.to_string(), std::mem::take(&mut ev.rels[ev.rel_index[r]].tuples))).collect();
    Ok(Facts { symbols: ev.symbols, relations })
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

impl Eval<'_> {
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
                    Goal::Pos(self.rel_index[atom.rel.as_str()], args)
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
    fn solve(
        &mut self,
        goals: &[Goal],
        env: &mut Vec<Option<G>>,
        found: &mut dyn FnMut(&[Option<G>]),
    ) -> Result<(), Stop> {
        let Some((first, rest)) = goals.split_first() else {
            found(env);
            return Ok(());
        };
        match first {
            Goal::Pos(rel, args) => {
                let candidates: Vec<usize> = match args.first().and_then(|p| ground(p, env)) {
                    Some(key) => self.rels[*rel].by_first.get(&key).cloned().unwrap_or_default(),
                    None => (0..self.rels[*rel].tuples.len()).collect(),
                };
                for i in candidates {
                    self.steps += 1;
                    if self.steps > MAX_STEPS {
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
                    self.solve(alt, &mut scratch, &mut |_| holds = true)?;
                    if holds {
                        break;
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
