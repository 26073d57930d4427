//! The translated program as text: static facts, the rules with their
//! bodies ordered for Prolog, then the generic interface (`prelude.pl`).

use super::check::Analysis;
use super::eval::{Facts, G};
use super::{Flat, FlatClause, PRELUDE, Term};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// GDL's relations that the interface calls, with fixed arguments.
const OWN: &[&str] = &["role", "init", "legal", "next", "terminal", "goal", "base", "input", "sees"];

/// The predicate a relation becomes: `gdl_legal` for GDL's own, `r_NAME`
/// for the game's (so no relation clashes with a builtin).
pub fn pred_name(rel: &str) -> String {
    if OWN.contains(&rel) { format!("gdl_{rel}") } else { format!("r_{rel}") }
}

/// Orders a body for Prolog, given the variables bound before it. The
/// written order is kept except that: each `not` and `distinct` comes as
/// soon as its variables are bound; a literal whose variables are all bound
/// (a test) comes next; then a lookup of a computed relation by a bound
/// argument (indexed) that finds at most two facts on average, such as
/// `(succ ?x ?y)` with `?y` bound; calls back into the rule's own stratum
/// (recursion) come after everything else, so a recursive call comes with
/// the arguments the others bound (`(nextrank ?y0 ?y)` before
/// `(above ?p ?x ?y0)`), and a recursion down a chain ends; last of all, a
/// relation computed during play asked with no argument bound, while
/// another literal can bind one.
pub fn order<'a>(body: &'a [Flat], bound: &HashSet<String>, a: &Analysis, stratum: Option<usize>) -> Vec<&'a Flat> {
    let mut bound = bound.clone();
    let mut left: Vec<&Flat> = body.iter().collect();
    let mut out = Vec::with_capacity(left.len());
    fn vars(l: &Flat) -> Vec<&str> {
        let mut vs = Vec::new();
        l.vars(&mut vs);
        vs
    }
    let all_bound = |l: &Flat, bound: &HashSet<String>| vars(l).iter().all(|v| bound.contains(*v));
    while !left.is_empty() {
        if let Some(i) = left.iter().position(|l| !matches!(l, Flat::Pos(_)) && all_bound(l, &bound)) {
            out.push(left.remove(i));
            continue;
        }
        let rank = |l: &Flat| -> Option<u8> {
            let Flat::Pos(atom) = l else { return None };
            let recursive = stratum.is_some() && a.stratum.get(&atom.rel) == stratum.as_ref();
            let indexed = a.is_static(&atom.rel)
                && atom.args.iter().enumerate().any(|(i, t)| {
                    ground_now(t, &bound) && a.fanout.get(&atom.rel).is_none_or(|f| f.get(i).is_none_or(|&f| f <= 2.0))
                });
            // A relation too large to compute at load, asked with no
            // argument bound, generates that whole relation (`(isList
            // ?newtail)` before the `(append_el ?el ?tail ?newtail)` that
            // computes `?newtail`): it waits for a literal that can bind one
            // of its variables, recursive or not.
            let generator = a.on_demand.contains(&atom.rel)
                && !atom.args.iter().any(|t| ground_now(t, &bound))
                && vars(l)
                    .iter()
                    .any(|v| !bound.contains(*v) && left.iter().any(|o| !std::ptr::eq(*o, l) && vars(o).contains(v)));
            Some(match () {
                _ if generator => 4,
                _ if recursive => 3,
                _ if all_bound(l, &bound) => 0,
                _ if indexed => 1,
                _ => 2,
            })
        };
        let best = left.iter().enumerate().filter_map(|(i, l)| rank(l).map(|r| (r, i))).min().map(|(_, i)| i);
        // Only unsafe literals are left (already reported): keep them.
        let l = left.remove(best.unwrap_or(0));
        bound.extend(vars(l).into_iter().map(str::to_string));
        out.push(l);
    }
    out
}

/// A symbol as a Prolog constant: an integer when it reads as one, else an
/// atom.
fn sym_text(s: &str) -> String {
    let int = s == "0"
        || (s.len() <= 18
            && s.starts_with(|c: char| c.is_ascii_digit() && c != '0')
            && s.bytes().all(|b| b.is_ascii_digit()));
    if int { s.to_string() } else { atom_text(s) }
}

/// An atom, quoted when it must be.
pub fn atom_text(s: &str) -> String {
    const OPERATORS: &[&str] = &[
        "is",
        "mod",
        "rem",
        "xor",
        "div",
        "rdiv",
        "divmod",
        "dynamic",
        "discontiguous",
        "initialization",
        "meta_predicate",
        "module_transparent",
        "multifile",
        "public",
        "thread_local",
        "table",
        "as",
        "volatile",
    ];
    let plain = s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !OPERATORS.contains(&s);
    if plain {
        return s.to_string();
    }
    let mut q = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => q.push_str("\\'"),
            '\\' => q.push_str("\\\\"),
            _ => q.push(c),
        }
    }
    q.push('\'');
    q
}

fn term_text(t: &Term, names: &HashMap<String, String>) -> String {
    match t {
        Term::Sym(s, _) => sym_text(s),
        Term::Var(v, _) => names[v].clone(),
        Term::Fn(f, args, _) => {
            let args: Vec<String> = args.iter().map(|a| term_text(a, names)).collect();
            format!("{}({})", atom_text(f), args.join(", "))
        }
    }
}

pub(super) fn g_text(g: &G, symbols: &[String]) -> String {
    match g {
        G::S(s) => sym_text(&symbols[*s as usize]),
        G::F(f, args) => {
            let args: Vec<String> = args.iter().map(|a| g_text(a, symbols)).collect();
            format!("{}({})", atom_text(&symbols[*f as usize]), args.join(", "))
        }
    }
}

/// A Prolog variable name for a GDL variable, distinct from `taken`.
fn var_name(v: &str, taken: &HashSet<String>) -> String {
    let mut base: String = v.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if !base.starts_with(|c: char| c.is_ascii_alphabetic()) {
        base = format!("V{base}");
    }
    let mut chars = base.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase()).unwrap_or('V');
    let base = format!("{first}{}", chars.as_str());
    if !taken.contains(&base) {
        return base;
    }
    (1..).map(|i| format!("{base}_{i}")).find(|n| !taken.contains(n)).expect("a free name")
}

/// Which arguments of a call are bound (ground) when it is made.
type Mode = Vec<bool>;

/// The mode GDL's own relations are called in by the interface: `legal`
/// and `goal` with the role bound, the others with nothing bound.
fn entry_mode(rel: &str, arity: usize) -> Mode {
    match rel {
        "legal" | "goal" | "sees" => vec![true, false],
        _ => vec![false; arity],
    }
}

/// The predicate for a relation called in a mode: each mode a relation is
/// called in gets its own version, its bodies ordered knowing what is
/// bound (`member` becomes `memberchk` where the fluent is ground), and a
/// version with every argument bound stops at its first proof (GDL is
/// set-based: a ground question has one answer). The interface's mode
/// keeps the plain name.
fn mode_name(rel: &str, mode: &[bool], a: &Analysis) -> String {
    let plain = pred_name(rel);
    if a.is_static(rel) || mode == entry_mode(rel, mode.len()).as_slice() {
        return plain;
    }
    let m: String = mode.iter().map(|&b| if b { 'b' } else { 'f' }).collect();
    format!("{plain}__{m}")
}

/// What clause emission shares: the analysis, the variable names of the
/// clause, and the modes of the calls it makes.
struct Ctx<'a> {
    a: &'a Analysis,
    names: HashMap<String, String>,
    calls: Vec<(String, Mode)>,
    uses: (bool, bool),
    /// Variables the goals after the current one (and the head) use.
    later: HashSet<String>,
}

/// The goals of a conjunction, each knowing which variables the goals
/// after it use (plus `outer`: the head's, for a clause body).
fn goals_text(body: &[&Flat], bound: &mut HashSet<String>, outer: &HashSet<String>, cx: &mut Ctx) -> Vec<String> {
    (0..body.len())
        .map(|i| {
            let mut later = outer.clone();
            for l in &body[i + 1..] {
                let mut vs = Vec::new();
                l.vars(&mut vs);
                later.extend(vs.into_iter().map(str::to_string));
            }
            cx.later = later;
            goal_text(body[i], bound, cx)
        })
        .collect()
}

/// The variables bound by a clause's head in `mode`.
fn head_bound(c: &FlatClause, mode: &[bool]) -> HashSet<String> {
    let mut bound = HashSet::new();
    for (t, &b) in c.head.args.iter().zip(mode) {
        if b {
            let mut vs = Vec::new();
            t.vars(&mut vs);
            bound.extend(vs.into_iter().map(str::to_string));
        }
    }
    bound
}

/// A clause's body as goals: `body` (ordered) names the variables, with
/// singletons marked `_`; the first `emit` of its literals become goals
/// (the others only name variables: a reachability step's next goal).
struct Emitted {
    names: HashMap<String, String>,
    goals: Vec<String>,
    /// Whether the goals use the state `S` and the joint move `M`.
    uses: (bool, bool),
}

fn emit_body(
    c: &FlatClause,
    body: &[&Flat],
    emit: usize,
    mut bound: HashSet<String>,
    a: &Analysis,
    calls: &mut Vec<(String, Mode)>,
) -> Emitted {
    let mut occurrences = Vec::new();
    c.head.vars(&mut occurrences);
    for l in body {
        l.vars(&mut occurrences);
    }
    let mut count: HashMap<&str, usize> = HashMap::new();
    for v in &occurrences {
        *count.entry(v).or_default() += 1;
    }
    let mut taken: HashSet<String> = ["S", "M"].iter().map(|s| s.to_string()).collect();
    let mut names = HashMap::new();
    for v in &occurrences {
        if !names.contains_key(*v) {
            let n = var_name(v, &taken);
            taken.insert(n.clone());
            let shown = if count[v] == 1 { format!("_{n}") } else { n };
            names.insert(v.to_string(), shown);
        }
    }
    let mut cx = Ctx { a, names, calls: Vec::new(), uses: (false, false), later: HashSet::new() };
    let mut outer = Vec::new();
    c.head.vars(&mut outer);
    for l in &body[emit..] {
        l.vars(&mut outer);
    }
    let outer: HashSet<String> = outer.into_iter().map(str::to_string).collect();
    let goals = goals_text(&body[..emit], &mut bound, &outer, &mut cx);
    calls.append(&mut cx.calls);
    Emitted { names: cx.names, goals, uses: cx.uses }
}

/// The head arguments of clause `c`, with `S` and `M` where the relation
/// takes them.
fn head_args(c: &FlatClause, e: &Emitted, a: &Analysis) -> Vec<String> {
    let mut args: Vec<String> = c.head.args.iter().map(|t| term_text(t, &e.names)).collect();
    if a.takes_s.contains(&c.head.rel) {
        args.push(if e.uses.0 { "S" } else { "_" }.to_string());
    }
    if a.takes_m.contains(&c.head.rel) {
        args.push(if e.uses.1 { "M" } else { "_" }.to_string());
    }
    args
}

fn rule_text(head: &str, goals: &[String]) -> String {
    if goals.is_empty() { format!("{head}.\n") } else { format!("{head} :-\n    {}.\n", goals.join(",\n    ")) }
}

/// One clause of a state- or move-dependent relation, in one mode.
fn clause_text(c: &FlatClause, mode: &[bool], name: &str, a: &Analysis, calls: &mut Vec<(String, Mode)>) -> String {
    let bound = head_bound(c, mode);
    let body = order(&c.body, &bound, a, a.stratum.get(&c.head.rel).copied());
    let mut e = emit_body(c, &body, body.len(), bound, a, calls);
    if mode.iter().all(|&b| b) {
        e.goals.push("!".to_string());
    }
    let head = call_text(name, &head_args(c, &e, a));
    rule_text(&head, &e.goals)
}

/// A relation that calls itself, once a clause, as the last goal of that
/// clause with every argument bound, called with every argument bound (a
/// question of reachability: `connected` over a board's adjacency), as a
/// search that visits each question once: its clauses without the
/// recursive call become `NAME_base/2` (the question holds at once) and
/// `NAME_step/3` (the question holds if this one does), and
/// `gdl_reach/4` searches breadth first. Run top-down as written, such a
/// relation loops on a cycle (linesOfAction). Only for left recursion
/// (see below); `None` where it does not apply.
fn reach_text(
    rel: &str,
    mode: &[bool],
    clauses: &[&FlatClause],
    a: &Analysis,
    calls: &mut Vec<(String, Mode)>,
) -> Option<String> {
    let stratum = a.stratum.get(rel).copied();
    if !mode.iter().all(|&b| b) || a.strata.get(stratum?)?.len() != 1 {
        return None;
    }
    let same = |l: &Flat| matches!(l, Flat::Pos(x) if a.stratum.get(&x.rel).copied() == stratum);
    let nested = |l: &Flat| matches!(l, Flat::Not(alts, _) if alts.iter().flatten().any(same));
    let mut plans = Vec::new();
    let mut recursive = false;
    for c in clauses {
        let bound = head_bound(c, mode);
        let body = order(&c.body, &bound, a, stratum);
        let own = body.iter().filter(|l| same(l)).count();
        if own > 1 || body.iter().any(|l| nested(l)) || (own == 1 && !body.last().is_some_and(|l| same(l))) {
            return None;
        }
        if own == 1 {
            // Only where the rule's author wrote the recursive call first
            // (left recursion: written for GDL's bottom-up semantics). A
            // recursion written later walks down a chain (a ray, a count)
            // and runs faster as it is.
            if !c.body.first().is_some_and(same) {
                return None;
            }
            // Every argument of the recursive call bound by then.
            let mut before = bound.clone();
            for l in &body[..body.len() - 1] {
                if let Flat::Pos(x) = l {
                    let mut vs = Vec::new();
                    x.vars(&mut vs);
                    before.extend(vs.into_iter().map(str::to_string));
                }
            }
            let Some(Flat::Pos(x)) = body.last() else { return None };
            if !x.args.iter().all(|t| ground_now(t, &before)) {
                return None;
            }
            recursive = true;
        }
        plans.push((c, body, own == 1, bound));
    }
    if !recursive {
        return None;
    }
    let name = mode_name(rel, mode, a);
    let (base, step) = (format!("{name}_base"), format!("{name}_step"));
    let env = |e: &Emitted| -> String {
        let mut xs = Vec::new();
        if a.takes_s.contains(rel) {
            xs.push(if e.uses.0 { "S" } else { "_" });
        }
        if a.takes_m.contains(rel) {
            xs.push(if e.uses.1 { "M" } else { "_" });
        }
        call_text("e", &xs.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    };
    let mut out = String::new();
    // The relation itself: its arguments as the question.
    let arity = mode.len();
    let vars: Vec<String> = (1..=arity).map(|i| format!("A{i}")).collect();
    let mut extra = Vec::new();
    if a.takes_s.contains(rel) {
        extra.push("S".to_string());
    }
    if a.takes_m.contains(rel) {
        extra.push("M".to_string());
    }
    let mut params = vars.clone();
    params.extend(extra.iter().cloned());
    let _ = writeln!(
        out,
        "{} :-\n    gdl_reach({}, {}, {}, {}).",
        call_text(&name, &params),
        atom_text(&base),
        atom_text(&step),
        call_text("k", &vars),
        call_text("e", &extra)
    );
    for (c, body, rec, bound) in plans {
        let emit = if rec { body.len() - 1 } else { body.len() };
        let e = emit_body(c, &body, emit, bound, a, calls);
        let question = call_text("k", &c.head.args.iter().map(|t| term_text(t, &e.names)).collect::<Vec<_>>());
        let head = if rec {
            let Some(Flat::Pos(x)) = body.last() else { return None };
            let next = call_text("k", &x.args.iter().map(|t| term_text(t, &e.names)).collect::<Vec<_>>());
            format!("{}({question}, {}, {next})", atom_text(&step), env(&e))
        } else {
            format!("{}({question}, {})", atom_text(&base), env(&e))
        };
        out.push_str(&rule_text(&head, &e.goals));
    }
    Some(out)
}

fn call_text(pred: &str, args: &[String]) -> String {
    if args.is_empty() { atom_text(pred) } else { format!("{}({})", atom_text(pred), args.join(", ")) }
}

/// Whether only the existence of a match matters: no variable the literal
/// binds is used after it (or in the head), so its first match is as good
/// as any, and `memberchk` may stand for `member`.
fn existential(atom: &super::Atom, bound: &HashSet<String>, later: &HashSet<String>) -> bool {
    let mut vs = Vec::new();
    atom.vars(&mut vs);
    vs.iter().all(|v| bound.contains(*v) || !later.contains(*v))
}

fn ground_now(t: &Term, bound: &HashSet<String>) -> bool {
    let mut vs = Vec::new();
    t.vars(&mut vs);
    vs.iter().all(|v| bound.contains(*v))
}

fn goal_text(l: &Flat, bound: &mut HashSet<String>, cx: &mut Ctx) -> String {
    match l {
        Flat::Pos(atom) => {
            let args: Vec<String> = atom.args.iter().map(|t| term_text(t, &cx.names)).collect();
            let text = match atom.rel.as_str() {
                "true" => {
                    // The fluents are an ordered set (sorted, no repeats).
                    cx.uses.0 = true;
                    let check = if ground_now(&atom.args[0], bound) {
                        "ord_memberchk"
                    } else if existential(atom, bound, &cx.later) {
                        "memberchk"
                    } else {
                        "member"
                    };
                    format!("{check}({}, S)", args[0])
                }
                "does" => {
                    cx.uses.1 = true;
                    let check = if ground_now(&atom.args[0], bound) || existential(atom, bound, &cx.later) {
                        "memberchk"
                    } else {
                        "member"
                    };
                    format!("{check}(does({}, {}), M)", args[0], args[1])
                }
                rel => {
                    let mut args = args;
                    let mode: Mode = atom.args.iter().map(|t| ground_now(t, bound)).collect();
                    if cx.a.takes_s.contains(rel) {
                        cx.uses.0 = true;
                        args.push("S".into());
                    }
                    if cx.a.takes_m.contains(rel) {
                        cx.uses.1 = true;
                        args.push("M".into());
                    }
                    let name = mode_name(rel, &mode, cx.a);
                    if !cx.a.is_static(rel) {
                        cx.calls.push((rel.to_string(), mode));
                    }
                    call_text(&name, &args)
                }
            };
            let mut vs = Vec::new();
            atom.vars(&mut vs);
            bound.extend(vs.into_iter().map(str::to_string));
            text
        }
        Flat::Distinct(x, y, _) => format!("{} \\== {}", term_text(x, &cx.names), term_text(y, &cx.names)),
        Flat::Not(alts, _) => {
            let alts: Vec<Vec<String>> = alts
                .iter()
                .map(|alt| {
                    let mut inner_bound = bound.clone();
                    let ordered = order(alt, bound, cx.a, None);
                    goals_text(&ordered, &mut inner_bound, &HashSet::new(), cx)
                })
                .collect();
            // `\+` binds looser than `\==`, so one goal needs no brackets.
            match alts.as_slice() {
                [one] if one.len() == 1 => format!("\\+ {}", one[0]),
                _ => {
                    let texts: Vec<String> = alts.iter().map(|g| g.join(", ")).collect();
                    format!("\\+ ( {} )", texts.join(" ; "))
                }
            }
        }
    }
}

/// Whether a relation's answers are worth keeping for the state they were
/// computed in (`gdl_memo/5`): a relation of the game's own that depends
/// on the state and not on the moves, not recursive, that some call asks
/// with every argument unbound (so the program searches its whole
/// extension anyway), and that two calls or more search. alexChess asks
/// `legal1`, all the moves not breaking a pin, once for each of twenty
/// `legal2` rules (an `or` written out as rules), in each state.
fn memo(rel: &str, clauses: &[FlatClause], a: &Analysis, searches: usize) -> bool {
    fn mentions(body: &[Flat], rel: &str) -> bool {
        body.iter().any(|l| match l {
            Flat::Pos(x) => x.rel == rel,
            Flat::Not(alts, _) => alts.iter().any(|alt| mentions(alt, rel)),
            Flat::Distinct(..) => false,
        })
    }
    searches >= 2
        && !OWN.contains(&rel)
        && a.arity.get(rel).is_some_and(|&n| n > 0)
        && a.takes_s.contains(rel)
        && !a.takes_m.contains(rel)
        && a.stratum.get(rel).and_then(|&k| a.strata.get(k)).is_some_and(|s| s.len() == 1)
        && !clauses.iter().any(|c| c.head.rel == rel && mentions(&c.body, rel))
}

/// Every state- or move-dependent relation in every mode it is called in,
/// from the interface's calls on: each relation's versions together.
fn rules_text(clauses: &[FlatClause], a: &Analysis) -> String {
    let mut todo: Vec<(String, Mode)> = ["terminal", "goal", "legal", "next", "sees"]
        .iter()
        .filter(|r| a.arity.contains_key(**r))
        .rev()
        .map(|r| (r.to_string(), entry_mode(r, a.arity.get(*r).copied().unwrap_or(0))))
        .collect();
    let mut done: HashSet<(String, Mode)> = HashSet::new();
    let mut versions: Vec<(String, Mode, String)> = Vec::new();
    // How many calls, over every version, search a relation (an argument
    // unbound).
    let mut searches: HashMap<String, usize> = HashMap::new();
    while let Some((rel, mode)) = todo.pop() {
        if a.is_static(&rel) || !done.insert((rel.clone(), mode.clone())) {
            continue;
        }
        let mut calls = Vec::new();
        let own: Vec<&FlatClause> = clauses.iter().filter(|c| c.head.rel == rel).collect();
        let text = match reach_text(&rel, &mode, &own, a, &mut calls) {
            Some(t) => t,
            None => {
                calls.clear();
                let name = mode_name(&rel, &mode, a);
                own.iter().map(|c| clause_text(c, &mode, &name, a, &mut calls)).collect()
            }
        };
        for (callee, m) in &calls {
            if m.iter().any(|&b| !b) {
                *searches.entry(callee.clone()).or_default() += 1;
            }
        }
        versions.push((rel, mode, text));
        todo.extend(calls.into_iter().rev());
    }
    // Relations whose answers are kept for the state (`memo`): a version
    // that searches (an argument unbound) asks the kept answers instead.
    let memo: HashSet<String> = versions
        .iter()
        .filter(|(rel, mode, _)| {
            mode.iter().all(|&b| !b) && memo(rel, clauses, a, searches.get(rel).copied().unwrap_or(0))
        })
        .map(|(rel, _, _)| rel.clone())
        .collect();
    for (rel, mode, text) in &mut versions {
        if !memo.contains(rel) || mode.iter().all(|&b| b) {
            continue;
        }
        let name = mode_name(rel, mode, a);
        let all = format!("{}__all", pred_name(rel));
        let params = |prefix: &str| -> Vec<String> { (1..=mode.len()).map(|i| format!("{prefix}{i}")).collect() };
        let (outer, inner) = (params("A"), params("B"));
        let with_s = |mut xs: Vec<String>| {
            xs.push("S".to_string());
            xs
        };
        let mut out = rule_text(
            &call_text(&name, &with_s(outer.clone())),
            &[
                format!(
                    "gdl_memo({}, S, {}, {}, As)",
                    atom_text(&pred_name(rel)),
                    call_text("k", &inner),
                    call_text(&all, &with_s(inner.clone()))
                ),
                format!("member({}, As)", call_text("k", &outer)),
            ],
        );
        if mode.iter().all(|&b| !b) {
            // The relation's own rules, searching every answer once a state.
            let own: Vec<&FlatClause> = clauses.iter().filter(|c| c.head.rel == *rel).collect();
            for c in own {
                out.push_str(&clause_text(c, mode, &all, a, &mut Vec::new()));
            }
        }
        *text = out;
    }
    // Versions of one relation together, relations in the order written.
    let mut order_of: HashMap<&str, usize> = HashMap::new();
    for c in clauses {
        let n = order_of.len();
        order_of.entry(c.head.rel.as_str()).or_insert(n);
    }
    versions.sort_by_key(|(rel, mode, _)| (order_of.get(rel.as_str()).copied(), mode != &entry_mode(rel, mode.len())));
    versions.into_iter().map(|(_, _, t)| t + "\n").collect()
}

/// The whole program.
pub fn program(name: &str, description: Option<&str>, clauses: &[FlatClause], a: &Analysis, facts: &Facts) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "% {name}: translated from the Game Description Language by `tabula translate`.\n\
         % The game's relations come first (a relation NAME is the predicate r_NAME,\n\
         % GDL's own are gdl_legal, gdl_next...; the state's fluents S and the joint\n\
         % move M are the last arguments where a relation depends on them), then the\n\
         % game interface, the same for every GDL game.\n"
    );
    let _ = writeln!(out, "title({}).", atom_text(name));
    if let Some(d) = description {
        let _ = writeln!(out, "describe({}).", atom_text(d));
    }
    let roles: Vec<String> = facts
        .relations
        .iter()
        .filter(|(r, _)| r == "role")
        .flat_map(|(_, ts)| ts.iter().map(|t| g_text(&t[0], &facts.symbols)))
        .collect();
    let _ = writeln!(out, "gdl_roles([{}]).", roles.join(", "));
    // The seats: every role but GDL-II's `random` (chance).
    let players: Vec<&str> = roles.iter().map(String::as_str).filter(|r| *r != "random").collect();
    let _ = writeln!(out, "gdl_players([{}]).\n", players.join(", "));
    let empty: Vec<&str> = facts.relations.iter().filter(|(_, ts)| ts.is_empty()).map(|(r, _)| r.as_str()).collect();
    for r in &empty {
        let _ = writeln!(out, ":- dynamic({}/{}).", atom_text(&pred_name(r)), a.arity[*r]);
    }
    if !facts.relations.iter().any(|(r, ts)| r == "base" && !ts.is_empty()) {
        // The board drawing asks for `base` fluents; a game need not say.
        let _ = writeln!(out, ":- dynamic(gdl_base/1).");
    }
    // GDL-II: percepts (`sees`), or chance (the role `random`).
    let sees = clauses.iter().any(|c| c.head.rel == "sees");
    let _ = writeln!(out, "gdl_ii({}).", sees || roles.iter().any(|r| r == "random"));
    if !sees {
        let _ = writeln!(out, ":- dynamic(gdl_sees/4).");
    }
    if !facts.relations.iter().any(|(r, _)| r == "init") {
        // No `init`: the game starts from the empty state.
        let _ = writeln!(out, ":- dynamic(gdl_init/1).");
    }
    let _ = writeln!(out, "% Relations that depend on neither the state nor the moves, computed.\n");
    for (rel, tuples) in &facts.relations {
        for t in tuples {
            let args: Vec<String> = t.iter().map(|g| g_text(g, &facts.symbols)).collect();
            let _ = writeln!(out, "{}.", call_text(&pred_name(rel), &args));
        }
    }
    if facts.relations.iter().any(|(r, ts)| r == "input" && !ts.is_empty()) {
        // GDL's `input` lists every action a role can ever take: the
        // integer actions of OpenSpiel and PettingZoo.
        let _ = writeln!(
            out,
            "\n% Every action any role can ever take (GDL's `input`), sorted: action I\n\
             % of the Python adapters is the I-th.\n\
             action_space(_, Actions) :-\n    findall(A, gdl_input(_, A), As),\n    sort(As, Actions)."
        );
    }
    let _ = writeln!(out, "\n% The rules.\n");
    out.push_str(&rules_text(clauses, a));
    out.push_str(PRELUDE);
    out
}
