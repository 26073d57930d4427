//! The static checks of a GDL program, all reported at once: GDL's own
//! relations used with their arities and in their places, one arity per
//! relation and per function, rules safe, no recursion through `not`,
//! `init`, `legal`, `goal` and `terminal` independent of `does`, every
//! relation used in a body defined. What passes is analysed for the
//! translation: which relations depend on the state (`true`) and on the
//! joint move (`does`), and the order of their strata.

use super::{Atom, Flat, FlatClause, Term};
use crate::syntax::{Diagnostic, Span};
use std::collections::{HashMap, HashSet};

/// GDL's own relations and their arities.
pub const KEYWORDS: &[(&str, usize)] = &[
    ("role", 1),
    ("init", 1),
    ("true", 1),
    ("does", 2),
    ("next", 1),
    ("legal", 2),
    ("terminal", 0),
    ("goal", 2),
    ("base", 1),
    ("input", 2),
    ("sees", 2),
];

/// The relations a game must define.
/// The relations a game must define. `init` may be left out: the game
/// then starts from the empty state (sudoku and the nonograms of the
/// corpus do, building their boards with `next`).
const REQUIRED: &[&str] = &["role", "legal", "next", "terminal", "goal"];

/// What the translation needs to know of the relations.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Every relation with its arity.
    pub arity: HashMap<String, usize>,
    /// Relations that depend on the state (take the fluent list).
    pub takes_s: HashSet<String>,
    /// Relations that depend on the joint move.
    pub takes_m: HashSet<String>,
    /// Strongly connected components of the dependency graph, each after
    /// those it depends on.
    pub strata: Vec<Vec<String>>,
    /// Each relation's component (an index into `strata`).
    pub stratum: HashMap<String, usize>,
    /// Relations the game interface reaches.
    pub reachable: HashSet<String>,
    /// For each computed relation, how many facts a lookup by each of its
    /// arguments finds on average (known once they are computed).
    pub fanout: HashMap<String, Vec<f64>>,
    /// Static relations too large to compute when the game loads: their
    /// rules run during play (known once the others are computed).
    pub on_demand: HashSet<String>,
}

impl Analysis {
    /// Relations computed once, bottom-up: reached, and independent of the
    /// state and the move (GDL's `legal`, `goal`, `terminal` and `next`
    /// always take the state, whatever they use).
    pub fn is_static(&self, rel: &str) -> bool {
        self.reachable.contains(rel)
            && !self.takes_s.contains(rel)
            && !self.takes_m.contains(rel)
            && !self.on_demand.contains(rel)
    }
}

fn keyword_arity(rel: &str) -> Option<usize> {
    KEYWORDS.iter().find(|(k, _)| *k == rel).map(|&(_, a)| a)
}

/// Every positive atom of a body, with whether it is under a `not`.
pub(super) fn body_atoms<'a>(body: &'a [Flat], negated: bool, out: &mut Vec<(&'a Atom, bool, Span)>) {
    for l in body {
        match l {
            Flat::Pos(a) => out.push((a, negated, a.span)),
            Flat::Distinct(..) => {}
            Flat::Not(alts, s) => {
                let start = out.len();
                for alt in alts {
                    body_atoms(alt, true, out);
                }
                // A negated atom is reported at its `not`.
                for e in &mut out[start..] {
                    e.2 = *s;
                }
            }
        }
    }
}

fn terms<'a>(t: &'a Term, out: &mut Vec<&'a Term>) {
    out.push(t);
    if let Term::Fn(_, args, _) = t {
        args.iter().for_each(|a| terms(a, out));
    }
}

/// Runs every check; problems go to `errors`.
pub fn check(clauses: &[FlatClause], errors: &mut Vec<Diagnostic>) -> Analysis {
    let mut a = Analysis::default();
    let mut first_use: HashMap<String, Span> = HashMap::new();
    let mut functions: HashMap<String, (usize, Span)> = HashMap::new();
    let defined: HashSet<&str> = clauses.iter().map(|c| c.head.rel.as_str()).collect();
    let mut reported_undefined = HashSet::new();

    let mut arity_of = |atom: &Atom, errors: &mut Vec<Diagnostic>, a: &mut Analysis| {
        let n = atom.args.len();
        if let Some(k) = keyword_arity(&atom.rel) {
            if k != n {
                errors.push(Diagnostic::error(
                    atom.span,
                    format!("`{}` takes {k} argument{}, not {n}", atom.rel, plural(k)),
                    "here",
                ));
            }
            a.arity.insert(atom.rel.clone(), k);
            return;
        }
        match a.arity.get(&atom.rel) {
            Some(&m) if m != n => errors.push(
                Diagnostic::error(
                    atom.span,
                    format!("`{}` is used with {n} argument{} here, but with {m} before", atom.rel, plural(n)),
                    "here",
                )
                .with_related(first_use[&atom.rel], format!("{m} here")),
            ),
            Some(_) => {}
            None => {
                a.arity.insert(atom.rel.clone(), n);
                first_use.insert(atom.rel.clone(), atom.span);
            }
        }
    };

    for c in clauses {
        let head = &c.head;
        match head.rel.as_str() {
            "true" | "does" => errors.push(
                Diagnostic::error(head.rel_span, format!("`{}` cannot be defined", head.rel), "in a head").with_help(
                    if head.rel == "true" {
                        "`true` is what holds in the current state: define `init` and `next` instead"
                    } else {
                        "`does` is the players' moves: define `legal` instead"
                    },
                ),
            ),
            "distinct" | "not" | "or" | "and" | "<=" => errors.push(Diagnostic::error(
                head.rel_span,
                format!("`{}` cannot be the head of a rule", head.rel),
                "in a head",
            )),
            "role" if !c.body.is_empty() => {
                errors.push(Diagnostic::error(c.span, "roles are facts, not rules", "a rule for `role`"))
            }
            _ => {}
        }
        arity_of(head, errors, &mut a);
        let mut atoms = Vec::new();
        body_atoms(&c.body, false, &mut atoms);
        for (atom, _, _) in &atoms {
            arity_of(atom, errors, &mut a);
            match atom.rel.as_str() {
                "init" | "next" | "sees" => errors.push(
                    Diagnostic::error(
                        atom.rel_span,
                        format!("`{}` cannot be used in a rule body", atom.rel),
                        "in a body",
                    )
                    .with_help("to test what holds in the current state, use `true`"),
                ),
                "true" | "does" => {}
                r if !defined.contains(r) && reported_undefined.insert(r.to_string()) => errors.push(
                    Diagnostic::error(atom.rel_span, format!("`{r}` is never defined"), "no facts or rules for this")
                        .with_help("a relation used in a body needs facts or rules (check the spelling)"),
                ),
                _ => {}
            }
        }
        // Functions: one arity each.
        let mut all_terms = Vec::new();
        head.args.iter().for_each(|t| terms(t, &mut all_terms));
        for (atom, _, _) in &atoms {
            atom.args.iter().for_each(|t| terms(t, &mut all_terms));
        }
        for t in all_terms {
            if let Term::Fn(f, args, span) = t {
                match functions.get(f) {
                    Some(&(m, first)) if m != args.len() => errors.push(
                        Diagnostic::error(
                            *span,
                            format!(
                                "function `{f}` has {} argument{} here, but {m} before",
                                args.len(),
                                plural(args.len())
                            ),
                            "here",
                        )
                        .with_related(first, format!("{m} here")),
                    ),
                    Some(_) => {}
                    None => {
                        functions.insert(f.clone(), (args.len(), *span));
                    }
                }
            }
        }
        safety(c, errors);
    }
    for r in REQUIRED {
        if !defined.contains(r) {
            errors.push(
                Diagnostic::error(Span::new(0, 0), format!("the game defines no `{r}`"), "in this file")
                    .with_help(format!("a GDL game needs {}", REQUIRED.join(", "))),
            );
        }
    }
    dependencies(clauses, &mut a, errors);
    a
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Every variable of the head, of a `not` and of a `distinct` must occur in
/// a positive literal of the body.
fn safety(c: &FlatClause, errors: &mut Vec<Diagnostic>) {
    let mut bound = Vec::new();
    for l in &c.body {
        if let Flat::Pos(a) = l {
            a.vars(&mut bound);
        }
    }
    let bound: HashSet<&str> = bound.into_iter().collect();
    let mut unsafe_at = |vars: Vec<&str>, span: Span, what: &str| {
        let mut seen = HashSet::new();
        for v in vars {
            if !bound.contains(v) && seen.insert(v) {
                errors.push(
                    Diagnostic::error(span, format!("unsafe variable `?{v}` in {what}"), "here")
                        .with_help(format!("`?{v}` must also occur in a positive literal of the rule's body")),
                );
            }
        }
    };
    let mut head_vars = Vec::new();
    c.head.vars(&mut head_vars);
    unsafe_at(head_vars, c.head.span, "the head");
    for l in &c.body {
        if !matches!(l, Flat::Pos(_)) {
            let mut vs = Vec::new();
            l.vars(&mut vs);
            unsafe_at(vs, l.span(), if matches!(l, Flat::Not(..)) { "a `not`" } else { "a `distinct`" });
        }
    }
}

/// The dependency graph: strata, recursion through `not`, what depends on
/// the state and on the moves, what the interface reaches.
fn dependencies(clauses: &[FlatClause], a: &mut Analysis, errors: &mut Vec<Diagnostic>) {
    let mut names: Vec<String> = a.arity.keys().cloned().collect();
    names.sort();
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    // Edges head → body relation, with the place of each negative one.
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    let mut negative: Vec<(usize, usize, Span)> = Vec::new();
    for c in clauses {
        let Some(&h) = index.get(c.head.rel.as_str()) else { continue };
        let mut atoms = Vec::new();
        body_atoms(&c.body, false, &mut atoms);
        for (atom, neg, span) in atoms {
            if let Some(&b) = index.get(atom.rel.as_str()) {
                edges[h].push(b);
                if neg {
                    negative.push((h, b, span));
                }
            }
        }
    }
    let comp = tarjan(&edges);
    let n_comp = comp.iter().copied().max().map_or(0, |m| m + 1);
    a.strata = vec![Vec::new(); n_comp];
    for (i, &k) in comp.iter().enumerate() {
        a.strata[k].push(names[i].clone());
        a.stratum.insert(names[i].clone(), k);
    }
    for &(h, b, span) in &negative {
        if comp[h] == comp[b] {
            errors.push(
                Diagnostic::error(
                    span,
                    format!("`{}` depends on itself through `not`", names[h]),
                    format!("`{}` negated here", names[b]),
                )
                .with_help("GDL rules must be stratified: no recursion through negation"),
            );
        }
    }
    // What depends on the state and on the moves (dependencies first, so
    // one pass in stratum order settles all but recursion, which loops).
    for k in ["true", "legal", "goal", "terminal", "next", "sees"] {
        a.takes_s.insert(k.to_string());
    }
    for k in ["does", "next", "sees"] {
        a.takes_m.insert(k.to_string());
    }
    loop {
        let mut changed = false;
        for (h, out) in edges.iter().enumerate() {
            for &b in out {
                for set in [&mut a.takes_s, &mut a.takes_m] {
                    if set.contains(&names[b]) && !set.contains(&names[h]) && names[h] != "init" && names[h] != "role" {
                        set.insert(names[h].clone());
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    // init is fixed before the game starts (role too, but a rule for it is
    // already an error); legal, goal and terminal cannot look at the moves
    // being made.
    for c in clauses {
        let rel = c.head.rel.as_str();
        let forbidden: &[&HashSet<String>] = match rel {
            "init" => &[&a.takes_s, &a.takes_m],
            "legal" | "goal" | "terminal" => &[&a.takes_m],
            _ => continue,
        };
        let mut atoms = Vec::new();
        body_atoms(&c.body, false, &mut atoms);
        if let Some((atom, _, _)) = atoms.iter().find(|(x, _, _)| forbidden.iter().any(|s| s.contains(&x.rel))) {
            let on = if atom.rel == "does" || a.takes_m.contains(&atom.rel) {
                "the moves (`does`)"
            } else {
                "the state (`true`)"
            };
            errors.push(
                Diagnostic::error(atom.span, format!("`{rel}` cannot depend on {on}"), format!("`{}` here", atom.rel))
                    .with_help(match rel {
                        "init" => "the initial state is fixed before any move",
                        _ => "only `next` (and what it uses) may depend on `does`",
                    }),
            );
        }
    }
    // Reached from the interface.
    // `init` where the game has one; `base` (every fluent there can be) is
    // read by the board drawing, `input` (every action there can be) by
    // the integer actions; `sees` (GDL-II's percepts) by the players.
    let mut stack: Vec<usize> =
        REQUIRED.iter().chain(&["init", "base", "input", "sees"]).filter_map(|r| index.get(r).copied()).collect();
    let mut seen = vec![false; names.len()];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        a.reachable.insert(names[i].clone());
        stack.extend(edges[i].iter().copied());
    }
}

/// Tarjan's strongly connected components, iteratively; components are
/// numbered so that every edge goes to the same or a lower number.
fn tarjan(edges: &[Vec<usize>]) -> Vec<usize> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![usize::MAX; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut next_comp = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some(&(v, i)) = work.last() {
            if index[v] == usize::MAX {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(i) {
                if let Some(top) = work.last_mut() {
                    top.1 += 1;
                }
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = next_comp;
                    if w == v {
                        break;
                    }
                }
                next_comp += 1;
            }
        }
    }
    comp
}
