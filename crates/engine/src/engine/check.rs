//! Load-time warnings (singleton variables, calls to undefined predicates
//! with a suggestion) and readable messages for ISO error terms.

use super::Engine;
use super::atoms::atom;
use super::db::Entry;
use super::machine::Machine;
use super::term::Cell;
use super::write::WriteOpts;
use crate::syntax::{Ast, Clause, Diagnostic};

/// Warns about variables that occur once in a clause.
pub fn singletons(clause: &Clause, out: &mut Vec<Diagnostic>) {
    for (name, spans) in &clause.vars {
        if spans.len() == 1 && !name.starts_with('_') {
            out.push(
                Diagnostic::warning(
                    spans[0],
                    format!("singleton variable `{name}`"),
                    "occurs only once in this clause",
                )
                .with_help(format!("if it is meant to be unused, write `_{name}` or `_`")),
            );
        }
    }
}

/// Which arguments of a meta-predicate are goals, and how many arguments
/// are added when they are called.
fn meta_args(name: &str, arity: usize) -> Vec<(usize, usize)> {
    match (name, arity) {
        (",", 2) | (";", 2) | ("->", 2) | ("*->", 2) | ("|", 2) => vec![(0, 0), (1, 0)],
        ("\\+", 1) | ("call", 1) | ("once", 1) | ("ignore", 1) | ("not", 1) => vec![(0, 0)],
        ("forall", 2) => vec![(0, 0), (1, 0)],
        ("findall", 3) | ("findall", 4) | ("bagof", 3) | ("setof", 3) | ("aggregate_all", 3) => {
            vec![(1, 0)]
        }
        ("catch", 3) => vec![(0, 0), (2, 0)],
        ("call", n) if n >= 1 => vec![(0, n - 1)],
        ("maplist", n) if n >= 2 => vec![(0, n - 1)],
        ("include", 3) | ("exclude", 3) | ("partition", 4) => vec![(0, 1)],
        ("foldl", n) if (4..=6).contains(&n) => vec![(0, n - 1)],
        ("predsort", 3) => vec![(0, 3)],
        _ => vec![],
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = if a[i - 1] == b[j - 1] { 0 } else { 1 };
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Warns about calls to predicates that are defined nowhere.
pub fn undefined_calls(e: &mut Engine, clauses: &[Clause], out: &mut Vec<Diagnostic>) {
    let m = &mut e.m;
    let defined = |m: &Machine, name: &str, arity: usize| -> bool {
        let Some(a) = m.atoms.lookup(name) else {
            return false;
        };
        match m.db.get(a, arity as u32) {
            Some(Entry::User(i)) => {
                let p = &m.db.preds[i];
                !p.clauses.is_empty() || p.dynamic
            }
            Some(_) => true,
            None => false,
        }
    };
    let mut reported: Vec<(String, usize)> = Vec::new();
    for clause in clauses {
        let body = match &clause.term {
            Ast::Compound(n, a, _) if n == ":-" && a.len() == 2 => &a[1],
            Ast::Compound(n, a, _) if n == ":-" && a.len() == 1 => &a[0],
            _ => continue,
        };
        let mut stack: Vec<(&Ast, usize)> = vec![(body, 0)];
        while let Some((g, extra)) = stack.pop() {
            let Some((name, arity)) = g.key() else {
                continue;
            };
            let arity = arity + extra;
            if extra == 0 {
                for (i, k) in meta_args(name, arity) {
                    let mut arg = &g.args()[i];
                    // Strip Var^ in bagof/setof goals.
                    while let Ast::Compound(c, a, _) = arg {
                        if c == "^" && a.len() == 2 && (name == "bagof" || name == "setof") {
                            arg = &a[1];
                        } else {
                            break;
                        }
                    }
                    stack.push((arg, k));
                }
            }
            if defined(m, name, arity) || name.starts_with('$') {
                continue;
            }
            if reported.iter().any(|(n, a)| n == name && *a == arity) {
                continue;
            }
            reported.push((name.to_string(), arity));
            let mut d = Diagnostic::warning(
                g.span(),
                format!("call to undefined predicate `{name}/{arity}`"),
                "this predicate is defined nowhere",
            );
            if let Some(s) = suggest(m, name, arity) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            out.push(d);
        }
    }
}

fn suggest(m: &Machine, name: &str, arity: usize) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for (&(a, n), entry) in m.db.iter() {
        if let Entry::User(i) = entry
            && m.db.preds[*i].clauses.is_empty()
            && !m.db.preds[*i].dynamic
        {
            continue;
        }
        let cand = m.atoms.name(a);
        if cand.starts_with('$') {
            continue;
        }
        let score = if cand == name {
            if n as usize == arity {
                continue;
            }
            1
        } else if n as usize == arity {
            let d = edit_distance(cand, name);
            if d > 2 || d * 3 > name.len().max(2) {
                continue;
            }
            d + 1
        } else {
            continue;
        };
        let text = format!("{cand}/{n}");
        if best.as_ref().is_none_or(|(s, t)| score < *s || (score == *s && text < *t)) {
            best = Some((score, text));
        }
    }
    best.map(|(_, t)| t)
}

fn kind_of(m: &Machine, c: Cell) -> &'static str {
    match m.store.deref(c) {
        Cell::Int(_) => "an integer",
        Cell::Flt(_) => "a float",
        Cell::Atom(_) => "an atom",
        Cell::Text(_) => "a string",
        Cell::Str(_) | Cell::Lst(_) => "a compound",
        Cell::Ref(_) => "a variable",
        Cell::Fun(..) => "a term",
    }
}

/// A message a person can read for an error term.
pub fn describe_error(m: &mut Machine, ball: Cell) -> String {
    let q = |m: &mut Machine, c: Cell| m.format_term(c, &WriteOpts::writeq());
    let ball = m.store.deref(ball);
    let (formal, context) = match ball {
        Cell::Str(p) if m.store.heap[p] == Cell::Fun(atom::ERROR, 2) => {
            (m.store.deref(m.store.heap[p + 1]), m.store.deref(m.store.heap[p + 2]))
        }
        _ => return format!("Unhandled exception: {}", q(m, ball)),
    };
    let mut prefix = String::new();
    // context(Culprit, Message): the message, when given, says why (as
    // SWI-Prolog prints it, in brackets after the error).
    let mut why = String::new();
    if let Cell::Str(p) = context
        && m.store.heap[p] == Cell::Fun(atom::CONTEXT, 2)
    {
        let pi = m.store.deref(m.store.heap[p + 1]);
        if !matches!(pi, Cell::Ref(_)) {
            prefix = format!("{}: ", q(m, pi));
        }
        let msg = m.store.deref(m.store.heap[p + 2]);
        if matches!(msg, Cell::Atom(_) | Cell::Text(_)) {
            why = format!(" ({})", m.format_term(msg, &WriteOpts::write()));
        }
    }
    let args: Vec<Cell> = match formal {
        Cell::Str(p) => {
            let Cell::Fun(_, n) = m.store.heap[p] else { unreachable!() };
            (0..n as usize).map(|i| m.store.heap[p + 1 + i]).collect()
        }
        _ => vec![],
    };
    let name = m.store.functor(formal).map(|(f, _)| m.atoms.name(f).to_string()).unwrap_or_default();
    let body = match (name.as_str(), args.len()) {
        ("instantiation_error", 0) => "Arguments are not sufficiently instantiated".to_string(),
        ("type_error", 2) => {
            let (t, c) = (q(m, args[0]), q(m, args[1]));
            format!("Type error: `{t}` expected, found `{c}` ({})", kind_of(m, args[1]))
        }
        ("domain_error", 2) => {
            let (t, c) = (q(m, args[0]), q(m, args[1]));
            format!("Domain error: `{t}` expected, found `{c}`")
        }
        ("existence_error", 2) if m.store.deref(args[0]) == Cell::Atom(atom::PROCEDURE) => {
            prefix.clear();
            let pi = q(m, args[1]);
            // Where the call was made, when the machine saw it.
            match &m.unknown_from {
                Some((called, from)) if *called == pi => format!("Unknown procedure: {pi}, called from {from}"),
                _ => format!("Unknown procedure: {pi}"),
            }
        }
        ("existence_error", 2) => {
            let (t, c) = (q(m, args[0]), q(m, args[1]));
            format!("Existence error: {t} `{c}` does not exist")
        }
        ("evaluation_error", 1) => format!("Arithmetic: evaluation error: {}", q(m, args[0])),
        ("representation_error", 1) => format!("Cannot represent due to `{}`", q(m, args[0])),
        ("permission_error", 3) => {
            let (a, t, c) = (q(m, args[0]), q(m, args[1]), q(m, args[2]));
            format!("No permission to {a} {t} `{c}`")
        }
        ("resource_error", 1) => format!("Not enough resources: {}", q(m, args[0])),
        ("syntax_error", 1) => format!("Syntax error: {}", m.format_term(args[0], &WriteOpts::write())),
        ("format", 1) => format!("Format error: {}", m.format_term(args[0], &WriteOpts::write())),
        _ => format!("Unknown error term: {}", q(m, formal)),
    };
    format!("{prefix}{body}{why}")
}
