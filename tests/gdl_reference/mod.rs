//! A second GDL evaluator, written to check tabula's and deliberately
//! simple: it shares no code with `crates/games/src/gdl` (its own reader, its own
//! terms) and evaluates another way. tabula computes the relations that do
//! not depend on the state bottom-up at load and runs the rest as a Prolog
//! program with reordered bodies; this evaluator answers every query top
//! down, in the order the rules are written, remembering the answers of
//! each call (per game for static relations, per state for the others);
//! a call to a recursive relation is run again and again, with the answers
//! found so far for the calls it makes back into its own component, until
//! no call of the component finds a new answer (a naive fixpoint over the
//! calls actually made). Slow, but short enough to be read and trusted.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A ground term: a symbol, or a function of ground terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum G {
    S(u32),
    F(u32, Box<[G]>),
}

/// A term that may hold variables (numbered within their clause).
#[derive(Clone, Debug)]
enum P {
    S(u32),
    V(usize),
    F(u32, Vec<P>),
}

/// A body literal.
#[derive(Clone, Debug)]
enum L {
    Call(usize, Vec<P>),
    Not(Box<L>),
    Distinct(P, P),
    Or(Vec<L>),
    And(Vec<L>),
}

#[derive(Debug)]
struct Clause {
    head: Vec<P>,
    body: Vec<L>,
    vars: usize,
}

/// When a relation's answers change: never (static), with the state, or
/// with the joint move too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    Static,
    State,
    Move,
}

struct Rel {
    clauses: Vec<Clause>,
    /// The relations of its strongly connected component, if it is
    /// recursive (it is in that set); computed to a fixpoint.
    component: Option<Rc<Vec<usize>>>,
    scope: Scope,
}

/// A game read from KIF.
pub struct Kif {
    names: Vec<String>,
    symbols: HashMap<String, u32>,
    rels: Vec<Rel>,
    rel_ids: HashMap<(String, usize), usize>,
    roles: Vec<G>,
}

/// An s-expression.
enum Sx {
    A(String),
    L(Vec<Sx>),
}

fn read(src: &str) -> Result<Vec<Sx>, String> {
    let mut stack: Vec<Vec<Sx>> = vec![Vec::new()];
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' => stack.push(Vec::new()),
            ')' => {
                let list = stack.pop().ok_or("unbalanced )")?;
                stack.last_mut().ok_or("unbalanced )")?.push(Sx::L(list));
            }
            c if c.is_whitespace() => {}
            c => {
                let mut word = c.to_string();
                while let Some(&d) = chars.peek() {
                    if d.is_whitespace() || d == '(' || d == ')' || d == ';' {
                        break;
                    }
                    word.push(d);
                    chars.next();
                }
                stack.last_mut().ok_or("unbalanced )")?.push(Sx::A(word.to_lowercase()));
            }
        }
    }
    if stack.len() != 1 {
        return Err("unbalanced (".into());
    }
    Ok(stack.pop().unwrap())
}

/// Reads one clause's terms, numbering its variables.
struct ClauseReader<'k> {
    kif: &'k mut Kif,
    vars: HashMap<String, usize>,
}

impl ClauseReader<'_> {
    fn term(&mut self, s: &Sx) -> Result<P, String> {
        match s {
            Sx::A(a) if a.starts_with('?') => {
                let n = self.vars.len();
                Ok(P::V(*self.vars.entry(a.clone()).or_insert(n)))
            }
            Sx::A(a) => Ok(P::S(self.kif.symbol(a))),
            Sx::L(items) => match items.split_first() {
                Some((Sx::A(f), args)) if !f.starts_with('?') => {
                    let args = args.iter().map(|a| self.term(a)).collect::<Result<_, _>>()?;
                    Ok(P::F(self.kif.symbol(f), args))
                }
                _ => Err("a function term must start with a symbol".into()),
            },
        }
    }

    /// A relation applied to arguments: `(rel args...)` or a bare `rel`.
    fn atom(&mut self, s: &Sx) -> Result<(usize, Vec<P>), String> {
        let (name, args) = match s {
            Sx::A(a) => (a.clone(), Vec::new()),
            Sx::L(items) => match items.split_first() {
                Some((Sx::A(f), args)) => {
                    (f.clone(), args.iter().map(|a| self.term(a)).collect::<Result<Vec<_>, _>>()?)
                }
                _ => return Err("a literal must start with a relation name".into()),
            },
        };
        Ok((self.kif.rel(&name, args.len()), args))
    }

    fn literal(&mut self, s: &Sx) -> Result<L, String> {
        if let Sx::L(items) = s
            && let Some((Sx::A(op), args)) = items.split_first()
        {
            match (op.as_str(), args) {
                ("not", [x]) => return Ok(L::Not(Box::new(self.literal(x)?))),
                ("distinct", [x, y]) => return Ok(L::Distinct(self.term(x)?, self.term(y)?)),
                ("or", _) => return Ok(L::Or(args.iter().map(|a| self.literal(a)).collect::<Result<_, _>>()?)),
                ("and", _) => return Ok(L::And(args.iter().map(|a| self.literal(a)).collect::<Result<_, _>>()?)),
                _ => {}
            }
        }
        let (rel, args) = self.atom(s)?;
        Ok(L::Call(rel, args))
    }
}

fn literal_rels(l: &L, out: &mut Vec<usize>) {
    match l {
        L::Call(r, _) => out.push(*r),
        L::Not(x) => literal_rels(x, out),
        L::Distinct(..) => {}
        L::Or(xs) | L::And(xs) => xs.iter().for_each(|x| literal_rels(x, out)),
    }
}

pub const TRUE: usize = 0;
pub const DOES: usize = 1;

impl Kif {
    pub fn parse(src: &str) -> Result<Kif, String> {
        let mut kif = Kif {
            names: Vec::new(),
            symbols: HashMap::new(),
            rels: Vec::new(),
            rel_ids: HashMap::new(),
            roles: Vec::new(),
        };
        kif.rel("true", 1);
        kif.rel("does", 2);
        for s in read(src)? {
            let mut r = ClauseReader { kif: &mut kif, vars: HashMap::new() };
            let (rel, head, body) = match &s {
                Sx::L(items) if matches!(items.first(), Some(Sx::A(a)) if a == "<=") => {
                    let (rel, head) = r.atom(items.get(1).ok_or("a rule without a head")?)?;
                    let body = items[2..].iter().map(|l| r.literal(l)).collect::<Result<Vec<_>, _>>()?;
                    (rel, head, body)
                }
                _ => {
                    let (rel, head) = r.atom(&s)?;
                    (rel, head, Vec::new())
                }
            };
            let vars = r.vars.len();
            if rel == TRUE || rel == DOES {
                return Err("a rule for true or does".into());
            }
            kif.rels[rel].clauses.push(Clause { head, body, vars });
        }
        kif.classify();
        let role = kif.relation("role", 1).ok_or("no role")?;
        kif.roles = kif.rels[role]
            .clauses
            .iter()
            .map(|c| if c.body.is_empty() { ground(&c.head[0], &[]) } else { None })
            .collect::<Option<_>>()
            .ok_or("roles must be facts")?;
        Ok(kif)
    }

    fn symbol(&mut self, name: &str) -> u32 {
        if let Some(&s) = self.symbols.get(name) {
            return s;
        }
        self.names.push(name.to_string());
        self.symbols.insert(name.to_string(), self.names.len() as u32 - 1);
        self.names.len() as u32 - 1
    }

    fn rel(&mut self, name: &str, arity: usize) -> usize {
        let key = (name.to_string(), arity);
        if let Some(&r) = self.rel_ids.get(&key) {
            return r;
        }
        self.rels.push(Rel { clauses: Vec::new(), component: None, scope: Scope::Static });
        self.rel_ids.insert(key, self.rels.len() - 1);
        self.rels.len() - 1
    }

    /// Scopes, and the recursive relations' components, from the
    /// dependency graph (by reachability: games have few relations).
    fn classify(&mut self) {
        let n = self.rels.len();
        let deps: Vec<Vec<usize>> = self
            .rels
            .iter()
            .map(|r| {
                let mut out = Vec::new();
                r.clauses.iter().flat_map(|c| &c.body).for_each(|l| literal_rels(l, &mut out));
                out.sort();
                out.dedup();
                out
            })
            .collect();
        let reach: Vec<Vec<bool>> = (0..n)
            .map(|start| {
                let mut seen = vec![false; n];
                let mut todo = deps[start].clone();
                while let Some(r) = todo.pop() {
                    if !seen[r] {
                        seen[r] = true;
                        todo.extend(&deps[r]);
                    }
                }
                seen
            })
            .collect();
        for (r, (rel, from)) in self.rels.iter_mut().zip(&reach).enumerate() {
            rel.scope = if r == DOES || from[DOES] {
                Scope::Move
            } else if r == TRUE || from[TRUE] {
                Scope::State
            } else {
                Scope::Static
            };
            if from[r] {
                let component: Vec<usize> = (0..n).filter(|&s| from[s] && reach[s][r]).collect();
                rel.component = Some(Rc::new(component));
            }
        }
    }

    pub fn roles(&self) -> &[G] {
        &self.roles
    }

    /// A relation by name and arity, if the game uses it.
    pub fn relation(&self, name: &str, arity: usize) -> Option<usize> {
        self.rel_ids.get(&(name.to_string(), arity)).copied()
    }

    /// A term written as KIF: `(cell 1 2 x)`.
    pub fn text(&self, g: &G) -> String {
        match g {
            G::S(s) => self.names[*s as usize].clone(),
            G::F(f, args) => {
                let mut out = format!("({}", self.names[*f as usize]);
                for a in args.iter() {
                    out.push(' ');
                    out.push_str(&self.text(a));
                }
                out.push(')');
                out
            }
        }
    }
}

type Answers = Rc<Vec<Vec<G>>>;

/// A call: a relation, and which of its arguments are bound to what.
type Call = (usize, Vec<Option<G>>);

/// The calls of one recursive component being computed: for each, the
/// answers of the round before (what calls see) and all found so far.
struct Frame {
    component: Rc<Vec<usize>>,
    calls: Vec<Call>,
    answers: HashMap<Call, (Answers, HashSet<Vec<G>>)>,
    grew: bool,
}

/// Answers queries about one game: static answers are kept for the whole
/// game, the others until the state (or the joint move) changes.
pub struct Eval<'k> {
    kif: &'k Kif,
    state: Vec<G>,
    joint: Vec<(G, G)>,
    memo: HashMap<Call, Answers>,
    /// The recursive components being computed, innermost last (a
    /// component calls only into components below it).
    frames: Vec<Frame>,
    steps: u64,
    budget: u64,
}

impl<'k> Eval<'k> {
    /// An evaluator that gives up after `budget` steps.
    pub fn new(kif: &'k Kif, budget: u64) -> Eval<'k> {
        Eval { kif, state: Vec::new(), joint: Vec::new(), memo: HashMap::new(), frames: Vec::new(), steps: 0, budget }
    }

    pub fn roles(&self) -> &'k [G] {
        &self.kif.roles
    }

    fn forget(&mut self, from: Scope) {
        let rels = &self.kif.rels;
        self.memo.retain(|(r, _), _| rels[*r].scope < from);
    }

    /// Makes `fluents` the true facts (and forgets the joint move).
    pub fn set_state(&mut self, fluents: &[G]) {
        if self.state == fluents {
            self.set_joint(&[]);
            return;
        }
        self.state = fluents.to_vec();
        self.joint.clear();
        self.forget(Scope::State);
    }

    pub fn set_joint(&mut self, joint: &[(G, G)]) {
        self.joint = joint.to_vec();
        self.forget(Scope::Move);
    }

    /// Every answer of a 0-, 1- or 2-argument query: the distinct argument
    /// tuples, sorted.
    pub fn ask(&mut self, name: &str, args: &[Option<G>]) -> Result<Vec<Vec<G>>, String> {
        let Some(rel) = self.kif.relation(name, args.len()) else {
            return Ok(Vec::new());
        };
        let mut all = (*self.call(rel, args)?).clone();
        all.retain(|t| t.iter().zip(args).all(|(g, a)| a.as_ref().is_none_or(|a| a == g)));
        all.sort();
        all.dedup();
        Ok(all)
    }

    /// The answers of `rel` called with these arguments bound (a superset
    /// of the matching tuples: the caller unifies).
    fn call(&mut self, rel: usize, args: &[Option<G>]) -> Result<Answers, String> {
        self.steps += 1;
        if self.steps > self.budget {
            return Err(format!("gave up after {} steps", self.budget));
        }
        if rel == DOES {
            return Ok(Rc::new(self.joint.iter().map(|(r, a)| vec![r.clone(), a.clone()]).collect()));
        }
        let key = (rel, args.to_vec());
        if let Some(a) = self.memo.get(&key) {
            return Ok(a.clone());
        }
        if rel == TRUE {
            let found: Vec<Vec<G>> = self
                .state
                .iter()
                .filter(|f| args[0].as_ref().is_none_or(|a| a == *f))
                .map(|f| vec![f.clone()])
                .collect();
            let answers = Rc::new(found);
            self.memo.insert(key, answers.clone());
            return Ok(answers);
        }
        if let Some(component) = self.kif.rels[rel].component.clone() {
            return self.recursive(component, key);
        }
        let answers: Answers = Rc::new(self.answers(&key)?.into_iter().collect());
        self.memo.insert(key, answers.clone());
        Ok(answers)
    }

    /// Every answer one round of `call`'s clauses finds.
    fn answers(&mut self, call: &Call) -> Result<HashSet<Vec<G>>, String> {
        let mut found = HashSet::new();
        for c in &self.kif.rels[call.0].clauses {
            self.clause_answers(c, &call.1, &mut found)?;
        }
        Ok(found)
    }

    /// A call to a recursive relation. Within the computation of its
    /// component, it sees the answers found so far; otherwise it starts
    /// that computation: every call of the component made on the way is
    /// run again until a round finds nothing new, and all are then
    /// complete.
    fn recursive(&mut self, component: Rc<Vec<usize>>, key: Call) -> Result<Answers, String> {
        if let Some(frame) = self.frames.last_mut().filter(|f| f.component == component) {
            if let Some((seen, _)) = frame.answers.get(&key) {
                return Ok(seen.clone());
            }
            frame.calls.push(key.clone());
            frame.answers.insert(key.clone(), (Rc::new(Vec::new()), HashSet::new()));
            frame.grew = true;
            return Ok(Rc::new(Vec::new()));
        }
        self.frames.push(Frame { component, calls: vec![key.clone()], answers: HashMap::new(), grew: true });
        self.frames.last_mut().unwrap().answers.insert(key.clone(), (Rc::new(Vec::new()), HashSet::new()));
        let result = self.rounds();
        let frame = self.frames.pop().unwrap();
        result?;
        for (call, (_, all)) in frame.answers {
            self.memo.insert(call, Rc::new(all.into_iter().collect()));
        }
        Ok(self.memo[&key].clone())
    }

    /// Runs the innermost frame's calls until a round finds nothing new.
    fn rounds(&mut self) -> Result<(), String> {
        while std::mem::take(&mut self.frames.last_mut().unwrap().grew) {
            let mut i = 0;
            while let Some(call) = self.frames.last().unwrap().calls.get(i).cloned() {
                let found = self.answers(&call)?;
                let frame = self.frames.last_mut().unwrap();
                let (seen, all) = frame.answers.get_mut(&call).unwrap();
                let before = all.len();
                all.extend(found);
                if all.len() > before {
                    *seen = Rc::new(all.iter().cloned().collect());
                    frame.grew = true;
                }
                i += 1;
            }
        }
        Ok(())
    }

    /// The head tuples of clause `c` called with `args`.
    fn clause_answers(&mut self, c: &Clause, args: &[Option<G>], found: &mut HashSet<Vec<G>>) -> Result<(), String> {
        let mut env = vec![None; c.vars];
        let mut trail = Vec::new();
        for (p, a) in c.head.iter().zip(args) {
            if let Some(a) = a
                && !unify(p, a, &mut env, &mut trail)
            {
                return Ok(());
            }
        }
        let body: Vec<&L> = c.body.iter().collect();
        let mut error = None;
        self.solve(&body, &mut env, &mut |env| {
            match c.head.iter().map(|p| ground(p, env)).collect::<Option<Vec<G>>>() {
                Some(t) => {
                    found.insert(t);
                }
                None => error = Some("a head variable that the body does not bind".to_string()),
            }
            false
        })?;
        error.map_or(Ok(()), Err)
    }

    /// Proves the literals in `todo`, calling `k` with each solution;
    /// returns true when `k` asked to stop. A `not` or `distinct` waits
    /// until its variables are bound; the others run in the written order.
    fn solve(
        &mut self,
        todo: &[&L],
        env: &mut Vec<Option<G>>,
        k: &mut dyn FnMut(&[Option<G>]) -> bool,
    ) -> Result<bool, String> {
        if todo.is_empty() {
            return Ok(k(env));
        }
        let filter_ready = |l: &L| matches!(l, L::Not(_) | L::Distinct(..)) && literal_ground(l, env);
        // A negation whose variables no other literal binds asks whether
        // some instance holds.
        let i = todo
            .iter()
            .position(|l| filter_ready(l))
            .or_else(|| todo.iter().position(|l| !matches!(l, L::Not(_) | L::Distinct(..))))
            .or_else(|| todo.iter().position(|l| matches!(l, L::Not(_))));
        let Some(i) = i else {
            return Err("a distinct whose variables no literal binds".into());
        };
        let mut rest: Vec<&L> = todo.to_vec();
        let lit = rest.remove(i);
        match lit {
            L::Distinct(x, y) => {
                if ground(x, env) != ground(y, env) {
                    return self.solve(&rest, env, k);
                }
                Ok(false)
            }
            L::Not(x) => {
                let mut inner = env.clone();
                let holds = self.solve(&[&**x], &mut inner, &mut |_| true)?;
                if !holds {
                    return self.solve(&rest, env, k);
                }
                Ok(false)
            }
            L::Or(xs) => {
                for x in xs {
                    let mut branch = vec![x];
                    branch.extend(&rest);
                    if self.solve(&branch, env, k)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            L::And(xs) => {
                let mut all: Vec<&L> = xs.iter().collect();
                all.extend(&rest);
                self.solve(&all, env, k)
            }
            L::Call(rel, pats) => {
                let args: Vec<Option<G>> = pats.iter().map(|p| ground(p, env)).collect();
                let answers = self.call(*rel, &args)?;
                for t in answers.iter() {
                    let mut trail = Vec::new();
                    if pats.iter().zip(t).all(|(p, g)| unify(p, g, env, &mut trail)) && self.solve(&rest, env, k)? {
                        undo(env, &trail);
                        return Ok(true);
                    }
                    undo(env, &trail);
                }
                Ok(false)
            }
        }
    }
}

fn literal_ground(l: &L, env: &[Option<G>]) -> bool {
    match l {
        L::Call(_, ps) => ps.iter().all(|p| ground(p, env).is_some()),
        L::Not(x) => literal_ground(x, env),
        L::Distinct(x, y) => ground(x, env).is_some() && ground(y, env).is_some(),
        L::Or(xs) | L::And(xs) => xs.iter().all(|x| literal_ground(x, env)),
    }
}

fn ground(p: &P, env: &[Option<G>]) -> Option<G> {
    match p {
        P::S(s) => Some(G::S(*s)),
        P::V(v) => env[*v].clone(),
        P::F(f, args) => Some(G::F(*f, args.iter().map(|a| ground(a, env)).collect::<Option<Box<[G]>>>()?)),
    }
}

fn unify(p: &P, g: &G, env: &mut [Option<G>], trail: &mut Vec<usize>) -> bool {
    match (p, g) {
        (P::S(s), G::S(t)) => s == t,
        (P::V(v), _) => match &env[*v] {
            Some(bound) => bound == g,
            None => {
                env[*v] = Some(g.clone());
                trail.push(*v);
                true
            }
        },
        (P::F(f, ps), G::F(h, gs)) => {
            f == h && ps.len() == gs.len() && ps.iter().zip(gs.iter()).all(|(p, g)| unify(p, g, env, trail))
        }
        _ => false,
    }
}

fn undo(env: &mut [Option<G>], trail: &[usize]) {
    for &v in trail {
        env[v] = None;
    }
}

/// The game interface over an evaluator: GDL's own relations.
impl Eval<'_> {
    pub fn initial(&mut self) -> Result<Vec<G>, String> {
        self.set_state(&[]);
        Ok(self.ask("init", &[None])?.into_iter().map(|mut t| t.remove(0)).collect())
    }

    pub fn terminal(&mut self) -> Result<bool, String> {
        Ok(!self.ask("terminal", &[])?.is_empty())
    }

    pub fn legal(&mut self, role: &G) -> Result<Vec<G>, String> {
        Ok(self.ask("legal", &[Some(role.clone()), None])?.into_iter().map(|mut t| t.remove(1)).collect())
    }

    /// The goal values a role has now (GDL wants exactly one in a
    /// terminal state).
    pub fn goals(&mut self, role: &G) -> Result<Vec<String>, String> {
        let kif = self.kif;
        Ok(self.ask("goal", &[Some(role.clone()), None])?.into_iter().map(|t| kif.text(&t[1])).collect())
    }

    /// The next state after the joint move (the state set before).
    pub fn next(&mut self, joint: &[(G, G)]) -> Result<Vec<G>, String> {
        self.set_joint(joint);
        let next = self.ask("next", &[None])?.into_iter().map(|mut t| t.remove(0)).collect();
        self.set_joint(&[]);
        Ok(next)
    }
}
