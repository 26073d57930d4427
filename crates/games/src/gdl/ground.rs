//! The grounded path: a game whose rules ground to a bounded size is also
//! compiled into a network of propositions (a propnet), which answers the
//! hot questions of play — each role's legal actions, the next state, the
//! end and the goal values — in native code, while the translation stays
//! the reference and answers everything else (display, percepts, sampling).
//!
//! Grounding: [`Domains`] over-approximates every relation of the state
//! (negations dropped); each rule is instantiated over those domains; a
//! ground rule is an AND of literals, a proposition the OR of its rules.
//! Propositions are evaluated in dependency order, a recursive group
//! (positive, as GDL's stratification makes it) iterated to its least
//! fixpoint. Negated literals whose atom no domain holds are true; static
//! literals are decided while grounding.
//!
//! The network plugs into the translation's engine ([`install`]): builtins
//! that read the state's fluent list, and clauses loaded in front of the
//! translation's own (`gdl_legal/3`, `gdl_next_fluents/3`...) that use
//! them, falling through to the translation when a state holds a fluent
//! the network does not know.

use super::check::Analysis;
use super::eval::{Domains, Facts, G};
use super::{Flat, FlatClause, Term};
use crate::engine::host::FastMap;
use crate::engine::host::Machine;
use crate::engine::host::{Store, hash_cells};
use crate::engine::{Cell, Engine, Tmpl};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

pub(crate) mod step;

/// Most facts the domains and the ground rules' instances may have, and
/// tuple matches spent on them. Past these a network would be slower than
/// the translation anyway (in the corpus, every game that needs more
/// plays faster as its translation), so the attempt stops early.
const MAX_FACTS: usize = 300_000;
const MAX_STEPS: u64 = 8_000_000;
/// Most literals the ground rules may have in all.
const MAX_LITS: usize = 4_000_000;

/// A literal: a proposition's number times two, plus one when negated.
type Lit = u32;

/// One step of an evaluation: propositions evaluated once each, in order
/// (a range of `code`), or a recursive group of them (a range of `groups`)
/// iterated until nothing changes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum Step {
    Run(u32, u32),
    Group(u32, u32),
}

/// A game's rules as a network of propositions. It travels as JSON (to
/// the shards of a cluster run, built once): [`Net::to_json`],
/// [`Net::from_json`], which checks it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Net {
    /// Propositions: the fluents first (`true`), then the actions
    /// (`does`), then the derived ones.
    props: usize,
    /// The fluents, as terms of the translation (text).
    fluents: Vec<String>,
    /// The roles, in order, and each role's actions with their
    /// propositions (`does`) and legality (`legal`, or `NONE`).
    roles: Vec<String>,
    actions: Vec<Vec<(String, u32, u32)>>,
    /// Each role's gates: literals taken out of the rules of its actions'
    /// legality, for [`Legal`] to read when it lists them (see
    /// [`Builder::gate_legal`]); the first is `NONE`, always open. And each
    /// action's gate (its number among its role's): an action is legal when
    /// its `legal` proposition holds and its gate is open.
    gates: Vec<Vec<Lit>>,
    gate_of: Vec<Vec<u32>>,
    /// For each fluent, the proposition that it is next (or `NONE`).
    next: Vec<u32>,
    terminal: u32,
    /// Each role's goal values and their propositions.
    goals: Vec<Vec<(String, u32)>>,
    /// Each derived proposition's rules (a range of `rules`), each rule's
    /// literals (a range of `lits`).
    rule_start: Vec<u32>,
    lit_start: Vec<u32>,
    lits: Vec<Lit>,
    /// The evaluation order: of the propositions that do not depend on
    /// the move, then of those that do; the members of recursive groups.
    state_steps: Vec<Step>,
    move_steps: Vec<Step>,
    groups: Vec<u32>,
    /// The propositions of `Step::Run`s, each as its number, the length
    /// of its rules, then each rule as its length and its literals: read
    /// in one pass.
    code: Vec<u32>,
    /// Whether the game is GDL-II (percepts or chance: a state records its
    /// rounds, which native playouts do not).
    gdl_ii: bool,
    /// What evaluating by changes needs, made on first use (`None` for a
    /// network with a recursive group: evaluated whole each time).
    #[serde(skip)]
    fanout: std::sync::OnceLock<Option<Fanout>>,
}

/// A network turned round for evaluation by changes (as Sancho and other
/// propnet players do): for each proposition, the rules that read it, so
/// that a change of a fluent or an action reaches only what depends on it.
/// Each rule counts its literals that do not hold and each proposition its
/// rules that do; a count that reaches or leaves zero changes the rule,
/// and that change travels on in turn. Counts cannot settle a recursive
/// group (its members could hold each other up): a change that reaches
/// one marks the group, which is evaluated whole again, earliest group
/// first, once the changes before it have travelled.
#[derive(Debug)]
struct Fanout {
    /// Each rule's proposition.
    head: Vec<u32>,
    /// For each proposition, what a change of it reaches (see [`Span`]).
    spans: Vec<Span>,
    readers: Vec<u32>,
    /// Each proposition's recursive group (or `NONE`), and each group's
    /// members (a range of the network's `groups`), in the order of
    /// evaluation.
    group: Vec<u32>,
    members: Vec<(u32, u32)>,
    /// Each rule's proposition's group (or `NONE`), where there are groups.
    rule_group: Vec<u32>,
    /// The legal actions watched (the class of [`Legal`] they are kept
    /// in, and their number in their role), as `Span::watch` says.
    watch: Vec<(u32, u32)>,
    /// Whether each proposition is the next value of one fluent at most,
    /// so that [`Differ`] can be kept.
    differ_kept: bool,
}

/// What a change of a proposition reaches, read in one place: the rules
/// that read it (`readers[pos..neg]` as it is, `readers[neg..end]`
/// negated), the actions it is the legality of (`watch[watch..watch_end]`,
/// so that each role's legal actions are kept as the values change:
/// [`Legal`]), and the fluent it is the next value of (or `NONE`), so that
/// the fluents whose next value differs are kept too ([`Differ`]).
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    pos: u32,
    neg: u32,
    end: u32,
    watch: u32,
    watch_end: u32,
    next_of: u32,
}

impl Fanout {
    fn of(net: &Net) -> Option<Fanout> {
        let mut group = vec![NONE; net.props];
        let mut members = Vec::new();
        for step in net.state_steps.iter().chain(&net.move_steps) {
            if let Step::Group(a, b) = *step {
                for &p in &net.groups[a as usize..b as usize] {
                    group[p as usize] = members.len() as u32;
                }
                members.push((a, b));
            }
        }
        let rules = net.lit_start.len() - 1;
        let mut head = vec![0u32; rules];
        for p in 0..net.props {
            for r in net.rule_start[p]..net.rule_start[p + 1] {
                head[r as usize] = p as u32;
            }
        }
        // Each proposition's readers, those of the literal as it is
        // before those of its negation: counted by literal (a
        // proposition's two literals are neighbours), then placed.
        let lits = 2 * net.props;
        let mut count = vec![0u32; lits + 1];
        for &l in &net.lits {
            count[l as usize + 1] += 1;
        }
        for l in 0..lits {
            count[l + 1] += count[l];
        }
        let mut spans: Vec<Span> = (0..net.props)
            .map(|p| Span {
                pos: count[2 * p],
                neg: count[2 * p + 1],
                end: count[2 * p + 2],
                next_of: NONE,
                ..Span::default()
            })
            .collect();
        let mut readers = vec![0u32; net.lits.len()];
        for r in 0..rules {
            for &l in &net.lits[net.lit_start[r] as usize..net.lit_start[r + 1] as usize] {
                readers[count[l as usize] as usize] = r as u32;
                count[l as usize] += 1;
            }
        }
        let rule_group = match members.is_empty() {
            true => Vec::new(),
            false => head.iter().map(|&p| group[p as usize]).collect(),
        };
        let mut watched: Vec<(u32, u32, u32)> = Vec::new();
        let mut first_class = 0;
        for (role, acts) in net.actions.iter().enumerate() {
            for (i, &(_, _, legal)) in acts.iter().enumerate() {
                if legal != NONE {
                    watched.push((legal, first_class + net.gate_of[role][i], i as u32));
                }
            }
            first_class += net.gates[role].len() as u32;
        }
        watched.sort_unstable();
        let mut at = 0;
        for (p, span) in spans.iter_mut().enumerate() {
            span.watch = at;
            while watched.get(at as usize).is_some_and(|w| w.0 as usize == p) {
                at += 1;
            }
            span.watch_end = at;
        }
        let watch = watched.into_iter().map(|(_, class, i)| (class, i)).collect();
        // A proposition that is the next value of two fluents (none is, as
        // the network is built) would leave the fluents that differ to be
        // found by reading them all.
        let mut differ_kept = true;
        for (x, &p) in net.next.iter().enumerate() {
            if p != NONE {
                differ_kept &= spans[p as usize].next_of == NONE;
                spans[p as usize].next_of = x as u32;
            }
        }
        Some(Fanout { head, spans, readers, group, members, rule_group, watch, differ_kept })
    }
}

/// The fluents whose next value (with the actions set now) differs from
/// their value: the changes that moving on makes, kept up to date by
/// evaluation by changes instead of read off every fluent each round.
#[derive(Default)]
struct Differ {
    members: Vec<u32>,
    /// Each fluent's place in `members` (or `NONE`).
    place: Vec<u32>,
}

impl Differ {
    /// The set of the values `v` (rewritten).
    fn fill(&mut self, next: &[u32], v: &[bool]) {
        self.members.clear();
        self.place.clear();
        self.place.resize(next.len(), NONE);
        for x in 0..next.len() as u32 {
            self.update(x, next, v);
        }
    }

    /// Fluent `x` in the set or not, as its values say now.
    #[inline]
    fn update(&mut self, x: u32, next: &[u32], v: &[bool]) {
        let p = next[x as usize];
        let differs = (p != NONE && v[p as usize]) != v[x as usize];
        let at = self.place[x as usize];
        if differs && at == NONE {
            self.place[x as usize] = self.members.len() as u32;
            self.members.push(x);
        } else if !differs && at != NONE {
            let last = self.members.pop().expect("x is a member");
            if last != x {
                self.members[at as usize] = last;
                self.place[last as usize] = at;
            }
            self.place[x as usize] = NONE;
        }
    }
}

/// Each role's legal actions as sets of bits, kept up to date by
/// evaluation by changes: a playout draws the k-th legal action without
/// reading every action's legality. A role's actions are kept by their
/// gates ([`Net::gates`]), a set for each gate (action `i` of the role is
/// bit `i` of its set's words, when its `legal` proposition holds), and
/// the role's legal actions are those of the sets whose gate is open, in
/// the order of the gates, then of the actions.
#[derive(Default)]
struct Legal {
    /// Where each role's sets start (one more entry than roles).
    first: Vec<usize>,
    /// Each set's first word (the sets of a role have as many words as
    /// it has actions, by 64), and its count of members.
    word: Vec<usize>,
    count: Vec<u32>,
    bits: Vec<u64>,
}

impl Legal {
    /// The sets of the values `v` (every word rewritten).
    fn fill(&mut self, net: &Net, v: &[bool]) {
        self.first.clear();
        self.first.push(0);
        self.word.clear();
        self.count.clear();
        let mut words = 0;
        for (role, acts) in net.actions.iter().enumerate() {
            for _ in &net.gates[role] {
                self.word.push(words);
                self.count.push(0);
                words += acts.len().div_ceil(64);
            }
            self.first.push(self.word.len());
        }
        self.bits.clear();
        self.bits.resize(words, 0);
        for (role, acts) in net.actions.iter().enumerate() {
            for (i, &(_, _, legal)) in acts.iter().enumerate() {
                if legal != NONE && v[legal as usize] {
                    self.set(self.first[role] as u32 + net.gate_of[role][i], i as u32, true);
                }
            }
        }
    }

    /// Action `i` in set `class` (`on`) or not.
    #[inline]
    fn set(&mut self, class: u32, i: u32, on: bool) {
        let (c, i) = (class as usize, i as usize);
        let word = &mut self.bits[self.word[c] + i / 64];
        let bit = 1u64 << (i % 64);
        if (*word & bit != 0) != on {
            *word ^= bit;
            if on {
                self.count[c] += 1;
            } else {
                self.count[c] -= 1;
            }
        }
    }

    /// `role`'s sets whose gates are open in `v`, with their counts.
    fn open<'a>(&'a self, net: &'a Net, role: usize, v: &'a [bool]) -> impl Iterator<Item = (usize, u32)> + 'a {
        (self.first[role]..self.first[role + 1])
            .zip(&net.gates[role])
            .filter(move |&(_, &g)| gate_open(g, v))
            .map(|(c, _)| (c, self.count[c]))
    }

    /// How many actions `role` has legal in `v`.
    fn count(&self, net: &Net, role: usize, v: &[bool]) -> u32 {
        self.open(net, role, v).map(|(_, n)| n).sum()
    }

    /// Each of `role`'s legal actions in `v`, in the order of
    /// [`Legal::nth`].
    fn each(&self, net: &Net, role: usize, v: &[bool], mut f: impl FnMut(u32)) {
        let words = net.actions[role].len().div_ceil(64);
        for (c, _) in self.open(net, role, v) {
            for (w, &word) in self.bits[self.word[c]..self.word[c] + words].iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    f((w * 64) as u32 + word.trailing_zeros());
                    word &= word - 1;
                }
            }
        }
    }

    /// The number of `role`'s `k`-th legal action in `v` (counting from 0,
    /// in the order of the gates, then of the actions).
    fn nth(&self, net: &Net, role: usize, v: &[bool], mut k: u32) -> u32 {
        let words = net.actions[role].len().div_ceil(64);
        for (c, n) in self.open(net, role, v) {
            if k >= n {
                k -= n;
                continue;
            }
            for (w, &word) in self.bits[self.word[c]..self.word[c] + words].iter().enumerate() {
                let ones = word.count_ones();
                if k < ones {
                    let mut word = word;
                    for _ in 0..k {
                        word &= word - 1;
                    }
                    return (w * 64) as u32 + word.trailing_zeros();
                }
                k -= ones;
            }
        }
        unreachable!("k is below the role's count of legal actions")
    }
}

/// Whether gate `g` (a literal, or `NONE`: always open) is open in `v`.
#[inline]
fn gate_open(g: Lit, v: &[bool]) -> bool {
    g == NONE || v[(g / 2) as usize] != (g & 1 == 1)
}

const NONE: u32 = u32::MAX;

/// Why a game takes the translation's path instead.
pub type NotGrounded = String;

impl Net {
    /// How many propositions and literals the network has.
    pub fn size(&self) -> (usize, usize) {
        (self.props, self.lits.len())
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a network is plain data")
    }

    /// A network from [`Net::to_json`]'s text, checked: every proposition,
    /// range and literal it refers to is in it, so a damaged one is an
    /// error here, never a fault during play.
    pub fn from_json(text: &str) -> Result<Net, String> {
        let net: Net = serde_json::from_str(text).map_err(|e| format!("not a network of propositions: {e}"))?;
        net.checked()
    }

    /// The network, if it is whole (one read by serde elsewhere).
    pub fn checked(self) -> Result<Net, String> {
        self.check().map_err(|e| format!("a damaged network of propositions: {e}"))?;
        Ok(self)
    }

    fn check(&self) -> Result<(), String> {
        let n = self.props;
        let prop = |p: u32, what: &str| {
            if (p as usize) < n { Ok(()) } else { Err(format!("{what} {p} of {n} propositions")) }
        };
        let prop_or_none = |p: u32, what: &str| if p == NONE { Ok(()) } else { prop(p, what) };
        let lit = |l: Lit| prop(l / 2, "literal of proposition");
        let range = |a: u32, b: u32, len: usize, what: &str| {
            if a <= b && b as usize <= len { Ok(()) } else { Err(format!("{what} {a}..{b} of {len}")) }
        };
        if self.fluents.len() > n || self.next.len() != self.fluents.len() {
            return Err("its fluents do not match its propositions".into());
        }
        if self.actions.len() != self.roles.len() || self.goals.len() != self.roles.len() {
            return Err("its roles, actions and goals do not match".into());
        }
        for &p in &self.next {
            prop_or_none(p, "next")?;
        }
        prop_or_none(self.terminal, "terminal")?;
        for &(_, does, legal) in self.actions.iter().flatten() {
            prop(does, "action")?;
            prop_or_none(legal, "legal")?;
        }
        if self.gates.len() != self.roles.len() || self.gate_of.len() != self.roles.len() {
            return Err("its gates do not match its roles".into());
        }
        for ((gates, of), acts) in self.gates.iter().zip(&self.gate_of).zip(&self.actions) {
            if gates.first() != Some(&NONE) || of.len() != acts.len() || of.iter().any(|&g| g as usize >= gates.len()) {
                return Err("its gates do not match its actions".into());
            }
            for &g in &gates[1..] {
                lit(g)?;
            }
        }
        for &(_, p) in self.goals.iter().flatten() {
            prop(p, "goal")?;
        }
        if self.rule_start.len() != n + 1 || self.lit_start.first() != Some(&0) {
            return Err("its rules do not match its propositions".into());
        }
        for w in self.rule_start.windows(2) {
            range(w[0], w[1], self.lit_start.len() - 1, "rules")?;
        }
        for w in self.lit_start.windows(2) {
            range(w[0], w[1], self.lits.len(), "literals")?;
        }
        for &l in &self.lits {
            lit(l)?;
        }
        for &p in &self.groups {
            prop(p, "member of a recursive group")?;
        }
        for step in self.state_steps.iter().chain(&self.move_steps) {
            match *step {
                Step::Group(a, b) => range(a, b, self.groups.len(), "group")?,
                Step::Run(a, b) => {
                    range(a, b, self.code.len(), "code")?;
                    // The layout `run_code` reads: proposition, length, then
                    // each rule as its length and literals.
                    let code = &self.code[a as usize..b as usize];
                    let mut i = 0;
                    while i < code.len() {
                        let (&p, &len) = code.get(i).zip(code.get(i + 1)).ok_or("code cut short")?;
                        prop(p, "proposition")?;
                        let end = i + 2 + len as usize;
                        let mut j = i + 2;
                        while j < end {
                            let k = *code.get(j).ok_or("code cut short")? as usize;
                            let body =
                                code.get(j + 1..j + 1 + k).filter(|_| j + 1 + k <= end).ok_or("code cut short")?;
                            for &l in body {
                                lit(l)?;
                            }
                            j += 1 + k;
                        }
                        if j != end {
                            return Err("code cut short".into());
                        }
                        i = end;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Builds the network of a checked game, or says why it cannot.
pub fn build(clauses: &[FlatClause], a: &Analysis, facts: &Facts) -> Result<Net, NotGrounded> {
    if let Some((rel, _)) = facts.on_demand.first() {
        return Err(format!("`{rel}` is computed during play"));
    }
    for rel in ["legal", "terminal", "goal"] {
        if a.takes_m.contains(rel) {
            return Err(format!("`{rel}` depends on the moves"));
        }
    }
    let mut dom = Domains::compute(clauses, a, facts, MAX_FACTS, MAX_STEPS)?;
    let mut b = Builder { props: HashMap::new(), rules: Vec::new(), lits: 0 };
    // Fluents and actions first, so that their numbers are fixed.
    let fluents: Vec<G> = dom.tuples("true").iter().map(|t| t[0].clone()).collect();
    for f in &fluents {
        b.prop("true", std::slice::from_ref(f));
    }
    let roles: Vec<G> = dom.tuples("role").iter().map(|t| t[0].clone()).collect();
    let mut by_role: Vec<Vec<G>> = vec![Vec::new(); roles.len()];
    for t in dom.tuples("does") {
        if let Some(r) = roles.iter().position(|r| *r == t[0]) {
            by_role[r].push(t[1].clone());
        }
    }
    for (r, acts) in by_role.iter().enumerate() {
        for act in acts {
            b.prop("does", &[roles[r].clone(), act.clone()]);
        }
    }
    let inputs = b.props.len();
    let dynamic = |rel: &str| a.reachable.contains(rel) && !a.is_static(rel);
    for c in clauses.iter().filter(|c| dynamic(&c.head.rel)) {
        let (names, rows) = dom.bindings(c)?;
        for row in rows {
            let env: HashMap<&str, &G> = names.iter().map(String::as_str).zip(row.iter()).collect();
            let head: Vec<G> = c
                .head
                .args
                .iter()
                .map(|t| ground(t, &env, &dom))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("a rule of `{}` has a symbol no fact has", c.head.rel))?;
            let mut body = Vec::new();
            let mut holds = true;
            for l in &c.body {
                match b.literal(l, &env, &dom, &dynamic)? {
                    Value::True => {}
                    Value::False => {
                        holds = false;
                        break;
                    }
                    Value::Lit(x) => body.push(x),
                }
            }
            if holds {
                let p = b.prop(&c.head.rel, &head);
                b.add_rule(p, body)?;
            }
        }
    }
    let text = |g: &G| super::emit::g_text(g, dom.symbols());
    let prop_of = |b: &Builder, rel: &str, args: &[G]| b.props.get(&(rel.to_string(), args.to_vec())).copied();
    let actions: Vec<Vec<(String, u32, u32)>> = by_role
        .iter()
        .enumerate()
        .map(|(r, acts)| {
            acts.iter()
                .map(|act| {
                    let args = [roles[r].clone(), act.clone()];
                    let does = prop_of(&b, "does", &args).expect("every action has its proposition");
                    (text(act), does, prop_of(&b, "legal", &args).unwrap_or(NONE))
                })
                .collect()
        })
        .collect();
    let next: Vec<u32> = fluents.iter().map(|f| prop_of(&b, "next", std::slice::from_ref(f)).unwrap_or(NONE)).collect();
    let terminal = prop_of(&b, "terminal", &[]).unwrap_or(NONE);
    let mut goals: Vec<Vec<(String, u32)>> = vec![Vec::new(); roles.len()];
    for ((rel, args), &p) in &b.props {
        if rel == "goal"
            && let Some(r) = roles.iter().position(|r| *r == args[0])
        {
            goals[r].push((text(&args[1]), p));
        }
    }
    for g in &mut goals {
        g.sort_by_key(|(_, p)| *p);
    }
    let outputs: Vec<u32> = next
        .iter()
        .copied()
        .chain([terminal])
        .chain(goals.iter().flatten().map(|g| g.1))
        .filter(|&p| p != NONE)
        .collect();
    let (gates, gate_of) = b.gate_legal(fluents.len(), &actions, &outputs);
    let mut net = b.finish(inputs, fluents.len());
    (net.gates, net.gate_of) = (gates, gate_of);
    net.fluents = fluents.iter().map(text).collect();
    net.roles = roles.iter().map(text).collect();
    net.gdl_ii = net.roles.iter().any(|r| r == "random") || clauses.iter().any(|c| c.head.rel == "sees");
    (net.actions, net.next, net.terminal, net.goals) = (actions, next, terminal, goals);
    Ok(net)
}

/// What a literal comes to once its variables are bound.
enum Value {
    True,
    False,
    Lit(Lit),
}

struct Builder {
    /// Every proposition by its relation and arguments.
    props: HashMap<(String, Vec<G>), u32>,
    /// The rules of each proposition (empty for fluents and actions).
    rules: Vec<Vec<Vec<Lit>>>,
    lits: usize,
}

impl Builder {
    fn prop(&mut self, rel: &str, args: &[G]) -> u32 {
        let n = self.props.len() as u32;
        let p = *self.props.entry((rel.to_string(), args.to_vec())).or_insert(n);
        if p as usize == self.rules.len() {
            self.rules.push(Vec::new());
        }
        p
    }

    fn add_rule(&mut self, p: u32, body: Vec<Lit>) -> Result<(), NotGrounded> {
        self.lits += body.len() + 1;
        if self.lits > MAX_LITS {
            return Err(format!("the ground rules have more than {MAX_LITS} literals"));
        }
        self.rules[p as usize].push(body);
        Ok(())
    }

    /// Takes gates out of the rules. A gate is a literal of a fluent that a
    /// derived proposition needs: every rule of the proposition has it, or
    /// reads a proposition with that gate. In a game of turns nearly all of
    /// a role's legal actions need that it is the role's turn (in
    /// Breakthrough, 154 rules read `control(white)`, and `can_move(white)`
    /// reads them all). That fluent changes every ply, and every legal
    /// action of both roles with it. Taken out, the gated propositions keep
    /// their values for when the gate is open, and a ply reaches only what
    /// its move changes; the legal actions are read with their gates
    /// ([`Net::legal_on`], [`Legal`]).
    ///
    /// A proposition keeps its gate only where every rule that reads it
    /// has the gate itself (it is false when the gate is shut, whatever the
    /// proposition's value) or is a rule of a proposition with the same
    /// gate; and it is not the game's `next`, `terminal` or `goal` (read
    /// as they are). `outputs` lists those. Gates are found bottom-up (a
    /// proposition's gate is justified by its rules, never by itself), then
    /// taken from those whose readers do not allow them, until both hold.
    /// Gives each role's gates (the first `NONE`: open) and each action's.
    fn gate_legal(
        &mut self,
        fluents: usize,
        actions: &[Vec<(String, u32, u32)>],
        outputs: &[u32],
    ) -> (Vec<Vec<Lit>>, Vec<Vec<u32>>) {
        let n = self.rules.len();
        let mut fixed = vec![false; n];
        for &p in outputs {
            fixed[p as usize] = true;
        }
        // The rules that read each proposition (head, rule).
        let mut readers: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (h, rules) in self.rules.iter().enumerate() {
            for (k, body) in rules.iter().enumerate() {
                for &l in body {
                    readers[(l / 2) as usize].push((h as u32, k as u32));
                }
            }
        }
        let mut gate = vec![NONE; n];
        // Whether a literal of a rule gives it gate `g`.
        let gives = |l: Lit, g: Lit, gate: &[Lit]| l == g || (l & 1 == 0 && gate[(l / 2) as usize] == g);
        loop {
            let mut found = false;
            for p in 0..n {
                let rules = &self.rules[p];
                if gate[p] != NONE || fixed[p] || rules.is_empty() || p < fluents {
                    continue;
                }
                // The gates of the first rule, that every other gives too.
                let mut own: Vec<Lit> = rules[0]
                    .iter()
                    .filter_map(|&l| {
                        if (l / 2) < fluents as u32 {
                            Some(l)
                        } else if l & 1 == 0 {
                            Some(gate[(l / 2) as usize]).filter(|&g| g != NONE)
                        } else {
                            None
                        }
                    })
                    .collect();
                // The most read first (the one whose changes cost most).
                own.sort_unstable_by_key(|&g| (std::cmp::Reverse(readers[(g / 2) as usize].len()), g));
                own.dedup();
                if let Some(&g) =
                    own.iter().find(|&&g| rules[1..].iter().all(|body| body.iter().any(|&l| gives(l, g, &gate))))
                {
                    gate[p] = g;
                    found = true;
                }
            }
            if !found {
                break;
            }
        }
        loop {
            let mut dropped = false;
            for p in 0..n {
                let g = gate[p];
                if g == NONE {
                    continue;
                }
                let justified = self.rules[p].iter().all(|body| body.iter().any(|&l| gives(l, g, &gate)));
                let allowed = readers[p]
                    .iter()
                    .all(|&(h, k)| gate[h as usize] == g || self.rules[h as usize][k as usize].contains(&g));
                if !justified || !allowed {
                    gate[p] = NONE;
                    dropped = true;
                }
            }
            if !dropped {
                break;
            }
        }
        for (p, &g) in gate.iter().enumerate() {
            if g != NONE {
                for body in &mut self.rules[p] {
                    body.retain(|&l| l != g);
                }
            }
        }
        let mut gates = Vec::new();
        let mut gate_of = Vec::new();
        for acts in actions {
            let mut role_gates = vec![NONE];
            let of = acts
                .iter()
                .map(|&(_, _, p)| {
                    let g = if p == NONE { NONE } else { gate[p as usize] };
                    let k = role_gates.iter().position(|&x| x == g).unwrap_or_else(|| {
                        role_gates.push(g);
                        role_gates.len() - 1
                    });
                    k as u32
                })
                .collect();
            gates.push(role_gates);
            gate_of.push(of);
        }
        (gates, gate_of)
    }

    /// A fresh proposition (of a negated conjunction or disjunction).
    fn aux(&mut self) -> u32 {
        let n = self.props.len() as u32;
        self.props.insert((String::new(), vec![G::S(n)]), n);
        self.rules.push(Vec::new());
        n
    }

    /// A body literal, bound by `env`: decided now when it is static.
    fn literal(
        &mut self,
        l: &Flat,
        env: &HashMap<&str, &G>,
        dom: &Domains,
        dynamic: &dyn Fn(&str) -> bool,
    ) -> Result<Value, NotGrounded> {
        let unbound = || "a negation has a variable no positive literal binds".to_string();
        Ok(match l {
            Flat::Pos(atom) => {
                let Some(args) = atom.args.iter().map(|t| ground(t, env, dom)).collect::<Option<Vec<G>>>() else {
                    // A symbol no fact has: the literal never holds.
                    return Ok(Value::False);
                };
                let state = matches!(atom.rel.as_str(), "true" | "does") || dynamic(&atom.rel);
                if !state {
                    if dom.has(&atom.rel, &args) { Value::True } else { Value::False }
                } else if !dom.has(&atom.rel, &args) {
                    Value::False
                } else {
                    Value::Lit(self.prop(&atom.rel, &args) * 2)
                }
            }
            Flat::Distinct(x, y, _) => {
                let bound = |t: &Term| {
                    let mut vs = Vec::new();
                    t.vars(&mut vs);
                    vs.iter().all(|v| env.contains_key(v))
                };
                if !bound(x) || !bound(y) {
                    return Err(unbound());
                }
                // An unknown symbol is distinct from any known term.
                match (ground(x, env, dom), ground(y, env, dom)) {
                    (Some(gx), Some(gy)) if gx == gy => Value::False,
                    (None, None) if term_key(x, env) == term_key(y, env) => Value::False,
                    _ => Value::True,
                }
            }
            Flat::Not(alts, _) => {
                let mut lits = Vec::new();
                for alt in alts {
                    let mut vs = Vec::new();
                    alt.iter().for_each(|l| l.vars(&mut vs));
                    if !vs.iter().all(|v| env.contains_key(v)) {
                        return Err(unbound());
                    }
                    match self.conjunction(alt, env, dom, dynamic)? {
                        Value::True => return Ok(Value::False),
                        Value::False => {}
                        Value::Lit(x) => lits.push(x),
                    }
                }
                match lits.as_slice() {
                    [] => Value::True,
                    [x] => Value::Lit(x ^ 1),
                    _ => {
                        let p = self.aux();
                        for x in lits {
                            self.add_rule(p, vec![x])?;
                        }
                        Value::Lit(p * 2 + 1)
                    }
                }
            }
        })
    }

    fn conjunction(
        &mut self,
        alt: &[Flat],
        env: &HashMap<&str, &G>,
        dom: &Domains,
        dynamic: &dyn Fn(&str) -> bool,
    ) -> Result<Value, NotGrounded> {
        let mut lits = Vec::new();
        for l in alt {
            match self.literal(l, env, dom, dynamic)? {
                Value::True => {}
                Value::False => return Ok(Value::False),
                Value::Lit(x) => lits.push(x),
            }
        }
        Ok(match lits.as_slice() {
            [] => Value::True,
            [x] => Value::Lit(*x),
            _ => {
                let p = self.aux();
                self.add_rule(p, lits)?;
                Value::Lit(p * 2)
            }
        })
    }

    /// The network of the rules built, its first `fluent_count`
    /// propositions fluents and the next ones up to `inputs` actions (the
    /// caller fills in what they mean).
    fn finish(self, inputs: usize, fluent_count: usize) -> Net {
        let n = self.rules.len();
        let mut rule_start = Vec::with_capacity(n + 1);
        let mut lit_start = vec![0u32];
        let mut lits = Vec::with_capacity(self.lits);
        for rules in &self.rules {
            rule_start.push((lit_start.len() - 1) as u32);
            for body in rules {
                // An AND stops at its first false literal: the positive
                // ones first (a fluent or an action holds in few states),
                // fluents and actions before derived propositions, the
                // negated ones last.
                let start = lits.len();
                lits.extend(body.iter().copied());
                lits[start..].sort_by_key(|&l| (l & 1, (l / 2) as usize >= inputs));
                lit_start.push(lits.len() as u32);
            }
        }
        rule_start.push((lit_start.len() - 1) as u32);
        // Dependencies between derived propositions; which depend on the
        // move.
        let deps = |p: usize| {
            (rule_start[p]..rule_start[p + 1])
                .flat_map(|r| lits[lit_start[r as usize] as usize..lit_start[r as usize + 1] as usize].iter())
                .map(|l| (l / 2) as usize)
        };
        let order = components(n, inputs, &deps);
        let mut on_move = vec![false; n];
        on_move[fluent_count..inputs].fill(true);
        let mut state_steps: Vec<Step> = Vec::new();
        let mut move_steps: Vec<Step> = Vec::new();
        let mut groups = Vec::new();
        let mut code: Vec<u32> = Vec::new();
        for comp in &order {
            let moves = comp.iter().any(|&p| deps(p).any(|d| on_move[d]));
            for &p in comp {
                on_move[p] = moves;
            }
            let recursive = comp.len() > 1 || deps(comp[0]).any(|d| d == comp[0]);
            let steps = if moves { &mut move_steps } else { &mut state_steps };
            if recursive {
                let start = groups.len() as u32;
                groups.extend(comp.iter().map(|&p| p as u32));
                steps.push(Step::Group(start, groups.len() as u32));
                continue;
            }
            let p = comp[0];
            let start = code.len() as u32;
            code.push(p as u32);
            code.push(0);
            for r in rule_start[p]..rule_start[p + 1] {
                let body = &lits[lit_start[r as usize] as usize..lit_start[r as usize + 1] as usize];
                code.push(body.len() as u32);
                code.extend_from_slice(body);
            }
            code[start as usize + 1] = code.len() as u32 - start - 2;
            match steps.last_mut() {
                Some(Step::Run(_, end)) if *end == start => *end = code.len() as u32,
                _ => steps.push(Step::Run(start, code.len() as u32)),
            }
        }
        Net {
            props: n,
            fluents: Vec::new(),
            roles: Vec::new(),
            actions: Vec::new(),
            gates: Vec::new(),
            gate_of: Vec::new(),
            next: Vec::new(),
            terminal: NONE,
            goals: Vec::new(),
            rule_start,
            lit_start,
            lits,
            state_steps,
            move_steps,
            groups,
            code,
            gdl_ii: false,
            fanout: std::sync::OnceLock::new(),
        }
    }
}

/// A term with its variables bound, if every symbol is known.
fn ground(t: &Term, env: &HashMap<&str, &G>, dom: &Domains) -> Option<G> {
    match t {
        Term::Sym(s, _) => dom.sym(s).map(G::S),
        Term::Var(v, _) => env.get(v.as_str()).map(|g| (*g).clone()),
        Term::Fn(f, args, _) => {
            let f = dom.sym(f)?;
            Some(G::F(f, args.iter().map(|a| ground(a, env, dom)).collect::<Option<Rc<[G]>>>()?))
        }
    }
}

/// A term's text with its variables bound (to compare terms with unknown
/// symbols).
fn term_key(t: &Term, env: &HashMap<&str, &G>) -> String {
    match t {
        Term::Sym(s, _) => s.clone(),
        Term::Var(v, _) => format!("{:?}", env.get(v.as_str())),
        Term::Fn(f, args, _) => {
            format!("({f} {})", args.iter().map(|a| term_key(a, env)).collect::<Vec<_>>().join(" "))
        }
    }
}

/// The strongly connected components of the derived propositions
/// (`first..n`), each after those it depends on (Tarjan's algorithm,
/// without recursion).
fn components<I: Iterator<Item = usize>>(n: usize, first: usize, deps: &dyn Fn(usize) -> I) -> Vec<Vec<usize>> {
    const UNSEEN: u32 = u32::MAX;
    struct Walk {
        index: Vec<u32>,
        low: Vec<u32>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: u32,
        /// Each frame: a proposition and its dependencies still to visit.
        frames: Vec<(usize, Vec<usize>)>,
    }
    impl Walk {
        fn enter(&mut self, p: usize, todo: Vec<usize>) {
            self.index[p] = self.counter;
            self.low[p] = self.counter;
            self.counter += 1;
            self.stack.push(p);
            self.on_stack[p] = true;
            self.frames.push((p, todo));
        }
    }
    let mut w = Walk {
        index: vec![UNSEEN; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        frames: Vec::new(),
    };
    let mut out = Vec::new();
    for root in first..n {
        if w.index[root] != UNSEEN {
            continue;
        }
        w.enter(root, deps(root).filter(|&d| d >= first).collect());
        while let Some((p, todo)) = w.frames.last_mut() {
            let p = *p;
            if let Some(d) = todo.pop() {
                if w.index[d] == UNSEEN {
                    w.enter(d, deps(d).filter(|&d| d >= first).collect());
                } else if w.on_stack[d] {
                    w.low[p] = w.low[p].min(w.index[d]);
                }
                continue;
            }
            w.frames.pop();
            if let Some(&(parent, _)) = w.frames.last() {
                w.low[parent] = w.low[parent].min(w.low[p]);
            }
            if w.low[p] == w.index[p] {
                let mut comp = Vec::new();
                loop {
                    let q = w.stack.pop().expect("on the stack");
                    w.on_stack[q] = false;
                    comp.push(q);
                    if q == p {
                        break;
                    }
                }
                out.push(comp);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------

/// A network's values for one state (and move).
#[derive(Default)]
struct Values {
    v: Vec<bool>,
    /// The fluents set now (their numbers), sorted.
    state: Vec<u32>,
    /// Whether `v` holds the state's derived values.
    fresh: bool,
    /// Literals read so far (the measure of the network's work).
    work: u64,
    /// Evaluation by changes, once `v` is whole: each rule's literals that
    /// do not hold, each proposition's rules that do; the changes to pass
    /// on (in order: a proposition's changes are passed on as they came).
    missing: Vec<u32>,
    support: Vec<u32>,
    queue: Vec<u32>,
    /// The recursive groups a change reached, to evaluate again (earliest
    /// first), and whether each is among them.
    pending: std::collections::BinaryHeap<std::cmp::Reverse<u32>>,
    dirty: Vec<bool>,
    /// Scratch: a group's values before it is evaluated again.
    before: Vec<bool>,
    /// Scratch: the fluents of a state being set.
    mark: Vec<bool>,
    /// Each role's legal actions, and the fluents whose next value
    /// differs, kept with `v` while it is `fresh`.
    legal: Legal,
    differ: Differ,
}

impl Values {
    fn new(props: usize) -> Values {
        Values { v: vec![false; props], ..Values::default() }
    }
}

impl Net {
    fn holds(&self, p: u32, v: &[bool]) -> bool {
        let (r0, r1) = (self.rule_start[p as usize], self.rule_start[p as usize + 1]);
        (r0..r1).any(|r| {
            self.lits[self.lit_start[r as usize] as usize..self.lit_start[r as usize + 1] as usize]
                .iter()
                .all(|&l| v[(l / 2) as usize] != (l & 1 == 1))
        })
    }

    /// Evaluates the propositions of a stretch of `code`; adds the
    /// literals it reads to `work`.
    fn run_code(&self, code: &[u32], v: &mut [bool], work: &mut u64) {
        let mut i = 0;
        while i < code.len() {
            let (p, len) = (code[i] as usize, code[i + 1] as usize);
            let end = i + 2 + len;
            let mut j = i + 2;
            let mut holds = false;
            while j < end {
                let n = code[j] as usize;
                let body = &code[j + 1..j + 1 + n];
                match body.iter().position(|&l| v[(l / 2) as usize] == (l & 1 == 1)) {
                    Some(k) => *work += k as u64 + 1,
                    None => {
                        *work += n as u64;
                        holds = true;
                        break;
                    }
                }
                j += 1 + n;
            }
            v[p] = holds;
            i = end;
        }
    }

    fn run(&self, steps: &[Step], v: &mut [bool], work: &mut u64) {
        for step in steps {
            match *step {
                Step::Run(a, b) => self.run_code(&self.code[a as usize..b as usize], v, work),
                Step::Group(a, b) => {
                    let members = &self.groups[a as usize..b as usize];
                    for &p in members {
                        v[p as usize] = false;
                    }
                    loop {
                        let mut changed = false;
                        for &p in members {
                            *work += 1;
                            if !v[p as usize] && self.holds(p, v) {
                                v[p as usize] = true;
                                changed = true;
                            }
                        }
                        if !changed {
                            break;
                        }
                    }
                }
            }
        }
    }

    /// The network's fanout, where it can be evaluated by changes.
    fn fanout(&self) -> Option<&Fanout> {
        self.fanout.get_or_init(|| Fanout::of(self)).as_ref()
    }

    /// Evaluates the whole network for the state in `vals.state` (no
    /// action taken) and, where it can be evaluated by changes, counts
    /// what holds, for [`Net::change`] to keep up to date.
    fn evaluate_whole(&self, vals: &mut Values) {
        self.run(&self.state_steps, &mut vals.v, &mut vals.work);
        vals.fresh = true;
        let Some(f) = self.fanout() else { return };
        // The propositions that depend on the move, with no action taken
        // (the state's alone evaluates only those that do not).
        self.run(&self.move_steps, &mut vals.v, &mut vals.work);
        let v = &vals.v;
        vals.missing.clear();
        vals.missing.extend(self.lit_start.windows(2).map(|w| {
            self.lits[w[0] as usize..w[1] as usize].iter().filter(|&&l| v[(l / 2) as usize] == (l & 1 == 1)).count()
                as u32
        }));
        vals.support.clear();
        vals.support.resize(self.props, 0);
        for (r, &m) in vals.missing.iter().enumerate() {
            if m == 0 {
                vals.support[f.head[r] as usize] += 1;
            }
        }
        vals.legal.fill(self, &vals.v);
        vals.differ.fill(&self.next, &vals.v);
        vals.work += self.lits.len() as u64;
    }

    /// Sets input proposition `q` (a fluent or an action) to `on`, and
    /// passes the change on to every proposition that depends on it (only
    /// where the network is evaluated by changes, with counts made).
    fn change(&self, f: &Fanout, vals: &mut Values, q: u32, on: bool) {
        if vals.v[q as usize] == on {
            return;
        }
        vals.v[q as usize] = on;
        vals.queue.push(q * 2 + u32::from(on));
        vals.dirty.resize(f.members.len(), false);
        loop {
            self.pass_on(f, vals);
            let Some(std::cmp::Reverse(g)) = vals.pending.pop() else { break };
            vals.dirty[g as usize] = false;
            self.evaluate_group(f, vals, g);
        }
    }

    /// Passes on the changes queued, until none is left (the recursive
    /// groups they reach are marked).
    fn pass_on(&self, f: &Fanout, vals: &mut Values) {
        if f.members.is_empty() { self.pass_on_in::<false>(f, vals) } else { self.pass_on_in::<true>(f, vals) }
    }

    /// [`Net::pass_on`], for a network with recursive groups (`GROUPS`) or
    /// without (whose rules need no look at their group).
    fn pass_on_in<const GROUPS: bool>(&self, f: &Fanout, vals: &mut Values) {
        // In order of the changes, so each rule's count moves one step at a
        // time from one exact value to the next.
        let mut next = 0;
        while let Some(&e) = vals.queue.get(next) {
            next += 1;
            let (q, on) = ((e / 2) as usize, e & 1 == 1);
            let span = f.spans[q];
            for &(class, i) in &f.watch[span.watch as usize..span.watch_end as usize] {
                vals.legal.set(class, i, on);
            }
            // The fluent this is, and the one it is the next value of.
            if q < self.next.len() {
                vals.differ.update(q as u32, &self.next, &vals.v);
            }
            if span.next_of != NONE {
                vals.differ.update(span.next_of, &self.next, &vals.v);
            }
            let (a, mid, b) = (span.pos as usize, span.neg as usize, span.end as usize);
            vals.work += (b - a) as u64;
            // The literals that now hold (q as it is, when q came on; its
            // negation, when it went off), then those that no longer do.
            let (now, no_longer) = if on { (a..mid, mid..b) } else { (mid..b, a..mid) };
            // The vectors as slices, read once: a store through one of
            // them then does not make the compiler load the others again.
            let Values { v, missing, support, queue, pending, dirty, .. } = vals;
            let (v, missing, support, head) = (&mut v[..], &mut missing[..], &mut support[..], &f.head[..]);
            let group_of = |r: usize, pending: &mut std::collections::BinaryHeap<_>, dirty: &mut Vec<bool>| {
                // A rule of a recursive group: the group is evaluated whole
                // (a member's change comes from that evaluation).
                let g = f.rule_group[r];
                if g == NONE {
                    return false;
                }
                if g != f.group[q] && !dirty[g as usize] {
                    dirty[g as usize] = true;
                    pending.push(std::cmp::Reverse(g));
                }
                true
            };
            // A rule changes when its count of literals that do not hold
            // reaches or leaves 0; its proposition when its count of rules
            // that hold does (each holds exactly when its count is above 0).
            for &r in &f.readers[now] {
                let r = r as usize;
                if GROUPS && group_of(r, pending, dirty) {
                    continue;
                }
                missing[r] -= 1;
                if missing[r] == 0 {
                    let p = head[r] as usize;
                    support[p] += 1;
                    if support[p] == 1 {
                        v[p] = true;
                        queue.push(p as u32 * 2 + 1);
                    }
                }
            }
            for &r in &f.readers[no_longer] {
                let r = r as usize;
                if GROUPS && group_of(r, pending, dirty) {
                    continue;
                }
                missing[r] += 1;
                if missing[r] == 1 {
                    let p = head[r] as usize;
                    support[p] -= 1;
                    if support[p] == 0 {
                        v[p] = false;
                        queue.push(p as u32 * 2);
                    }
                }
            }
        }
        vals.queue.clear();
    }

    /// Evaluates recursive group `g` again, from nothing to its least
    /// fixpoint, and queues the changes of its members.
    fn evaluate_group(&self, f: &Fanout, vals: &mut Values, g: u32) {
        let (a, b) = f.members[g as usize];
        let members = &self.groups[a as usize..b as usize];
        vals.before.clear();
        vals.before.extend(members.iter().map(|&p| vals.v[p as usize]));
        self.run(&[Step::Group(a, b)], &mut vals.v, &mut vals.work);
        for (&p, &was) in members.iter().zip(&vals.before) {
            let is = vals.v[p as usize];
            if is != was {
                vals.queue.push(p * 2 + u32::from(is));
            }
        }
    }

    /// Sets the state's fluents and computes what follows from them.
    fn set_state(&self, vals: &mut Values, state: &[u32]) {
        if vals.fresh && vals.state == state {
            return;
        }
        match self.fanout() {
            // Pass on what changed since the last state (one move away in
            // play; a jump costs about a whole evaluation).
            Some(f) if vals.fresh => {
                vals.mark.resize(self.fluents.len(), false);
                for &x in state {
                    vals.mark[x as usize] = true;
                }
                let old = std::mem::take(&mut vals.state);
                for &x in &old {
                    if !vals.mark[x as usize] {
                        self.change(f, vals, x, false);
                    }
                }
                for &x in state {
                    vals.mark[x as usize] = false;
                    self.change(f, vals, x, true);
                }
                vals.state = old;
            }
            _ => {
                for &x in &vals.state {
                    vals.v[x as usize] = false;
                }
                for &x in state {
                    vals.v[x as usize] = true;
                }
                vals.state.clear();
                vals.state.extend_from_slice(state);
                self.evaluate_whole(vals);
                return;
            }
        }
        vals.state.clear();
        vals.state.extend_from_slice(state);
    }

    /// Moves the network on to the state after the actions `does`, by
    /// changes: the fluents whose next value differs from their value now
    /// are changed, nothing else is read. `vals.state` is then out of date
    /// (the caller lists the state when it needs it). False where the
    /// network is not evaluated by changes.
    fn advance(&self, vals: &mut Values, does: &[u32], changes: &mut Vec<u32>) -> bool {
        let Some(f) = self.fanout().filter(|_| vals.fresh) else { return false };
        does.iter().for_each(|&d| self.change(f, vals, d, true));
        changes.clear();
        if f.differ_kept {
            changes.extend_from_slice(&vals.differ.members);
        } else {
            for (x, &p) in self.next.iter().enumerate() {
                let next = p != NONE && vals.v[p as usize];
                if next != vals.v[x] {
                    changes.push(x as u32);
                }
            }
        }
        does.iter().for_each(|&d| self.change(f, vals, d, false));
        for &x in changes.iter() {
            let on = !vals.v[x as usize];
            self.change(f, vals, x, on);
        }
        vals.work += self.next.len() as u64 / 8;
        true
    }

    /// Which fluents hold next after the actions `does` (propositions).
    fn next_state(&self, vals: &mut Values, does: &[u32], out: &mut Vec<bool>) {
        let by_changes = self.fanout().filter(|_| vals.fresh);
        match by_changes {
            Some(f) => does.iter().for_each(|&d| self.change(f, vals, d, true)),
            None => {
                for &d in does {
                    vals.v[d as usize] = true;
                }
                self.run(&self.move_steps, &mut vals.v, &mut vals.work);
            }
        }
        out.clear();
        out.extend(self.next.iter().map(|&p| p != NONE && vals.v[p as usize]));
        match by_changes {
            Some(f) => does.iter().for_each(|&d| self.change(f, vals, d, false)),
            None => {
                for &d in does {
                    vals.v[d as usize] = false;
                }
            }
        }
    }

    fn on(&self, p: u32, vals: &Values) -> bool {
        p != NONE && vals.v[p as usize]
    }

    /// Whether action `i` of role `r` is legal in `v`: its `legal`
    /// proposition holds and its gate is open.
    fn legal_on(&self, r: usize, i: usize, v: &[bool]) -> bool {
        let p = self.actions[r][i].2;
        p != NONE && v[p as usize] && gate_open(self.gates[r][self.gate_of[r][i] as usize], v)
    }
}

// ---------------------------------------------------------------------------
// The network in an engine
// ---------------------------------------------------------------------------

/// Terms of the engine, found fast: a flat term (an atom, a number, or a
/// compound whose arguments are) by its cells, read straight off the heap;
/// any other by its canonical copy.
#[derive(Default)]
struct TermIndex {
    terms: Vec<Tmpl>,
    /// Each term's flat cells (empty for the others).
    flat_cells: Vec<Vec<Cell>>,
    flat: FastMap<u64, Vec<u32>>,
    deep: FastMap<u64, Vec<u32>>,
    /// The term last found at each heap address (hashed into the table),
    /// checked against the heap before it is believed: a state's list is
    /// read several times a move.
    seen: Vec<(usize, u32)>,
}

/// Entries of [`TermIndex::seen`] (a power of two).
const SEEN: usize = 1024;

/// Most arguments a flat term has.
const FLAT_ARGS: usize = 8;

fn flat_arg(c: Cell) -> bool {
    matches!(c, Cell::Atom(_) | Cell::Int(_))
}

/// A template's flat cells: its functor and arguments (or itself).
fn tmpl_flat(t: &Tmpl) -> Option<Vec<Cell>> {
    match t.cells[0] {
        c if flat_arg(c) => Some(vec![c]),
        Cell::Str(k) => {
            let Cell::Fun(_, n) = t.cells[k] else { return None };
            let cells = &t.cells[k..=k + n as usize];
            (n as usize <= FLAT_ARGS && cells[1..].iter().all(|&c| flat_arg(c))).then(|| cells.to_vec())
        }
        _ => None,
    }
}

/// A heap term's flat cells, into `buf`: how many, if it is flat.
fn heap_flat(store: &Store, c: Cell, buf: &mut [Cell; FLAT_ARGS + 1]) -> Option<usize> {
    match store.deref(c) {
        c if flat_arg(c) => {
            buf[0] = c;
            Some(1)
        }
        Cell::Str(p) => {
            let f @ Cell::Fun(_, n) = store.heap[p] else { return None };
            let n = n as usize;
            if n > FLAT_ARGS {
                return None;
            }
            buf[0] = f;
            for (i, slot) in buf[1..=n].iter_mut().enumerate() {
                let a = store.deref(store.heap[p + 1 + i]);
                if !flat_arg(a) {
                    return None;
                }
                *slot = a;
            }
            Some(n + 1)
        }
        _ => None,
    }
}

impl TermIndex {
    /// Whether the compound at heap address `p` is flat term `i`.
    fn same_flat(&self, store: &Store, p: usize, i: u32) -> bool {
        let cells = &self.flat_cells[i as usize];
        cells.len() > 1
            && store.heap[p] == cells[0]
            && cells[1..].iter().enumerate().all(|(k, &a)| store.deref(store.heap[p + 1 + k]) == a)
    }

    fn add(&mut self, t: Tmpl) -> u32 {
        let i = self.terms.len() as u32;
        match tmpl_flat(&t) {
            Some(cells) => {
                self.flat.entry(hash_cells(&cells)).or_default().push(i);
                self.flat_cells.push(cells);
            }
            None => {
                self.deep.entry(t.hash64()).or_default().push(i);
                self.flat_cells.push(Vec::new());
            }
        }
        self.terms.push(t);
        i
    }

    /// The number of the ground term `c` of the machine's heap, if known.
    fn find(&mut self, store: &mut Store, c: Cell, vars: &mut Vec<usize>) -> Option<u32> {
        let c = store.deref(c);
        if let Cell::Str(p) = c {
            if self.seen.is_empty() {
                self.seen = vec![(usize::MAX, 0); SEEN];
            }
            let (at, i) = self.seen[p & (SEEN - 1)];
            if at == p && self.same_flat(store, p, i) {
                return Some(i);
            }
        }
        let mut buf = [Cell::Int(0); FLAT_ARGS + 1];
        if let Some(n) = heap_flat(store, c, &mut buf) {
            let cells = &buf[..n];
            let i =
                self.flat.get(&hash_cells(cells))?.iter().copied().find(|&i| self.flat_cells[i as usize] == cells)?;
            if let Cell::Str(p) = c {
                self.seen[p & (SEEN - 1)] = (p, i);
            }
            return Some(i);
        }
        vars.clear();
        let cells = store.copy_out_scratch(c, vars).ok()?;
        if !vars.is_empty() {
            return None;
        }
        self.deep.get(&hash_cells(cells))?.iter().copied().find(|&i| self.terms[i as usize].cells == cells)
    }
}

/// What the builtins keep in the engine.
struct Runtime {
    net: Arc<Net>,
    /// Off, every builtin fails: the translation's clauses answer.
    enabled: bool,
    vals: Values,
    fluents: TermIndex,
    /// The fluents in the standard order of their terms, and each one's
    /// place in it.
    fluent_order: Vec<u32>,
    fluent_rank: Vec<u32>,
    roles: TermIndex,
    /// Each role's actions, and their order.
    actions: Vec<TermIndex>,
    action_order: Vec<Vec<u32>>,
    goal_values: Vec<Vec<Tmpl>>,
    /// The goal values as numbers (`None` if one is not an integer: no
    /// native playouts then), and which roles are players (not `random`).
    goal_numbers: Option<Vec<Vec<i64>>>,
    players: Vec<bool>,
    /// Each role's actions' propositions: legal (or `NONE`) and does.
    legal_props: Vec<Vec<u32>>,
    does_props: Vec<Vec<u32>>,
    /// Scratch of playouts: each role's legal actions, the fluents a round
    /// changes.
    legal: Vec<Vec<u32>>,
    counts: Vec<usize>,
    changes: Vec<u32>,
    /// Scratch: a state's fluents, the actions of a move, a next state.
    state: Vec<u32>,
    does: Vec<u32>,
    next: Vec<bool>,
    vars: Vec<usize>,
    /// Whether a playout moved the network on (by changes) without
    /// listing the state in `state` and in the values' `state`.
    stale: bool,
    /// Whether [`Runtime::count_legal`] counted from the kept sets.
    kept: bool,
    /// The game layer's step ([`step`]).
    step: step::Cache,
}

/// Shares a network between engines (threads build their own engine).
pub type Shared = Arc<Net>;

/// The clauses that route the translation's hot predicates through the
/// network; each falls through to the translation's own clauses when the
/// network does not know the state.
const FRONT: &str = "\
gdl_legal(R, A, Fs) :- '$gdl_legal'(Fs, Pairs), !, member(R-A, Pairs).
gdl_is_legal(R, A, Fs) :- '$gdl_is_legal'(Fs, R, A, T), !, T == true.
gdl_terminal(Fs) :- '$gdl_terminal'(Fs, T), !, T == true.
gdl_goal(R, V, Fs) :- '$gdl_goals'(Fs, Pairs), !, member(R-V, Pairs).
gdl_next(F, Fs, Joint) :- '$gdl_next'(Fs, Joint, Next), !, member(F, Next).
gdl_actions(R, Fs, Actions) :- '$gdl_actions'(Fs, R, As), !, Actions = As.
gdl_next_fluents(Fs, Joint, Next) :- '$gdl_next'(Fs, Joint, N), !, Next = N.
'$playout'(How, S, P0, Max, P, E, Last) :-
    '$gdl_playout'(S, P0, Max, P1, E1, S1),
    !,
    (   E1 == broken
    ->  (   game_over(S1, R)
        ->  P = P1, E = over(R), Last = S1
        ;   '$random_move'(How, S1, _),
            throw(error(no_legal_move(S1), '$playout'/6))
        )
    ;   P = P1, E = E1, Last = S1
    ).
gdl_kinds(Fs, Kinds) :-
    '$gdl_kinds'(Fs, K),
    !,
    (   K == broken
    ->  gdl_roles(Roles),
        gdl_kinds(Roles, Fs, Kinds)
    ;   K \\== terminal,
        Kinds = K
    ).
";

/// Puts the network into an engine that has loaded the game's
/// translation.
pub fn install(engine: &mut Engine, net: &Shared) -> Result<(), String> {
    let mut parse = |t: &str| engine.parse_term(t).map_err(|e| format!("`{t}`: {e}"));
    let mut fluents = TermIndex::default();
    for f in &net.fluents {
        fluents.add(parse(f)?);
    }
    let mut roles = TermIndex::default();
    for r in &net.roles {
        roles.add(parse(r)?);
    }
    let mut actions = Vec::new();
    for acts in &net.actions {
        let mut idx = TermIndex::default();
        for (a, _, _) in acts {
            idx.add(parse(a)?);
        }
        actions.push(idx);
    }
    let mut goal_values = Vec::new();
    for gs in &net.goals {
        goal_values.push(gs.iter().map(|(v, _)| parse(v)).collect::<Result<Vec<_>, _>>()?);
    }
    let goal_numbers = net.goals.iter().map(|gs| gs.iter().map(|(v, _)| v.parse::<i64>().ok()).collect()).collect();
    let players = net.roles.iter().map(|r| r != "random").collect();
    let fluent_order = engine.standard_order(&fluents.terms);
    let mut fluent_rank = vec![0; fluent_order.len()];
    for (k, &f) in fluent_order.iter().enumerate() {
        fluent_rank[f as usize] = k as u32;
    }
    let action_order = actions.iter().map(|idx| engine.standard_order(&idx.terms)).collect();
    let rt = Runtime {
        net: net.clone(),
        vals: Values::new(net.props),
        enabled: true,
        fluents,
        fluent_order,
        fluent_rank,
        roles,
        actions,
        action_order,
        goal_values,
        goal_numbers,
        players,
        legal_props: net.actions.iter().map(|acts| acts.iter().map(|a| a.2).collect()).collect(),
        does_props: net.actions.iter().map(|acts| acts.iter().map(|a| a.1).collect()).collect(),
        legal: vec![Vec::new(); net.roles.len()],
        counts: vec![0; net.roles.len()],
        changes: Vec::new(),
        state: Vec::new(),
        does: Vec::new(),
        next: Vec::new(),
        vars: Vec::new(),
        stale: false,
        kept: false,
        step: step::Cache::new(engine)?,
    };
    engine.set_ext(Box::new(rt));
    engine.add_builtin("$gdl_legal", 2, bi_legal);
    engine.add_builtin("$gdl_terminal", 2, bi_terminal);
    engine.add_builtin("$gdl_goals", 2, bi_goals);
    engine.add_builtin("$gdl_next", 3, bi_next);
    engine.add_builtin("$gdl_actions", 3, bi_actions);
    engine.add_builtin("$gdl_kinds", 2, bi_kinds);
    engine.add_builtin("$gdl_is_legal", 4, bi_is_legal);
    engine.add_builtin("$gdl_playout", 6, bi_playout);
    let report = engine.load_front("grounded rules", FRONT);
    if report.has_errors() {
        return Err(format!("{:?}", report.diagnostics));
    }
    Ok(())
}

/// The network's runtime in an engine, if it has one.
fn runtime(engine: &mut Engine) -> Option<&mut Runtime> {
    engine.ext_mut::<Runtime>()
}

/// A network is an extension of the engine running its game's
/// translation: it answers the translation's hot predicates.
impl crate::engine::Extension for Net {
    fn install(self: Arc<Self>, engine: &mut Engine) -> Result<(), String> {
        install(engine, &self)
    }

    fn set_enabled(&self, engine: &mut Engine, on: bool) {
        set_enabled(engine, on);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Turns the network of an engine on or off (off, the translation answers
/// everything).
pub fn set_enabled(engine: &mut Engine, on: bool) {
    if let Some(rt) = runtime(engine) {
        rt.enabled = on;
    }
}

/// The literals the network of an engine has read so far.
pub fn work(engine: &mut Engine) -> u64 {
    runtime(engine).map_or(0, |rt| rt.vals.work)
}

/// Runs `f` with the runtime taken out of the machine; fails (no answer)
/// where the machine has none.
fn with_rt(m: &mut Machine, f: impl FnOnce(&mut Machine, &mut Runtime) -> Option<bool>) -> Option<bool> {
    let mut ext = m.ext.take()?;
    let out = ext.downcast_mut::<Runtime>().filter(|rt| rt.enabled).and_then(|rt| f(m, rt));
    m.ext = Some(ext);
    out
}

impl Runtime {
    /// Reads a fluent list into `self.state` and evaluates it; `None` when
    /// a fluent is unknown (or the list is not a ground list).
    fn read_state(&mut self, m: &mut Machine, list: Cell) -> Option<()> {
        self.step.forget();
        self.list_state();
        self.state.clear();
        let mut c = m.store.deref(list);
        loop {
            match c {
                Cell::Lst(p) => {
                    let head = m.store.heap[p];
                    self.state.push(self.fluents.find(&mut m.store, head, &mut self.vars)?);
                    c = m.store.deref(m.store.heap[p + 1]);
                }
                Cell::Atom(a) if a == crate::engine::host::atom::NIL => break,
                _ => return None,
            }
        }
        self.set_listed();
        Some(())
    }

    /// Sets the values to the fluents in `state`, read off a state's list
    /// (sorted: then so are the fluents' ranks; sorted here if not).
    fn set_listed(&mut self) {
        let rank = &self.fluent_rank;
        if !self.state.windows(2).all(|w| rank[w[0] as usize] < rank[w[1] as usize]) {
            self.state.sort_unstable_by_key(|&f| rank[f as usize]);
            self.state.dedup();
        }
        self.net.set_state(&mut self.vals, &self.state);
    }

    fn build(m: &mut Machine, t: &Tmpl) -> Cell {
        m.store.copy_in(t, &mut Vec::new())
    }

    /// The legal actions of role `r`, in standard order.
    fn legal_of(&self, r: usize) -> impl Iterator<Item = u32> + '_ {
        self.action_order[r].iter().copied().filter(move |&i| self.net.legal_on(r, i as usize, &self.vals.v))
    }
}

/// A builtin's answer: runs `f` on the state `fs` (read and evaluated)
/// and unifies what it builds with `out`; fails where the network does not
/// answer (no runtime, turned off, or a state or term it does not know).
fn answer(
    m: &mut Machine,
    fs: Cell,
    out: Cell,
    f: impl FnOnce(&mut Machine, &mut Runtime) -> Option<Cell>,
) -> crate::engine::host::Res {
    Ok(with_rt(m, |m, rt| {
        rt.read_state(m, fs)?;
        let c = f(m, rt)?;
        Some(m.store.unify(out, c))
    })
    .unwrap_or(false))
}

/// `Key-Value`, the key a template.
fn pair(m: &mut Machine, key: &Tmpl, value: Cell) -> Cell {
    let key = Runtime::build(m, key);
    m.store.new_struct(crate::engine::host::atom::MINUS, &[key, value])
}

fn word(m: &mut Machine, w: &str) -> Cell {
    Cell::Atom(m.atoms.intern(w))
}

/// `'$gdl_legal'(+Fluents, -Pairs)`: every role's legal actions, Role-Action.
fn bi_legal(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    answer(m, a[0], a[1], |m, rt| {
        let mut items = Vec::new();
        for r in 0..rt.net.roles.len() {
            let legal: Vec<u32> = rt.legal_of(r).collect();
            for i in legal {
                let act = Runtime::build(m, &rt.actions[r].terms[i as usize]);
                items.push(pair(m, &rt.roles.terms[r], act));
            }
        }
        Some(m.store.new_list(&items))
    })
}

/// `'$gdl_terminal'(+Fluents, -TrueOrFalse)`.
fn bi_terminal(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    answer(m, a[0], a[1], |m, rt| Some(word(m, if rt.net.on(rt.net.terminal, &rt.vals) { "true" } else { "false" })))
}

/// `'$gdl_goals'(+Fluents, -Pairs)`: every goal value that holds, Role-Value.
fn bi_goals(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    answer(m, a[0], a[1], |m, rt| {
        let mut items = Vec::new();
        for (r, gs) in rt.net.goals.iter().enumerate() {
            for (k, &(_, p)) in gs.iter().enumerate() {
                if rt.net.on(p, &rt.vals) {
                    let v = Runtime::build(m, &rt.goal_values[r][k]);
                    items.push(pair(m, &rt.roles.terms[r], v));
                }
            }
        }
        Some(m.store.new_list(&items))
    })
}

/// `'$gdl_actions'(+Fluents, +Role, -Actions)`: Role's legal actions, in
/// the standard order.
fn bi_actions(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    let role = a[1];
    answer(m, a[0], a[2], |m, rt| {
        let r = rt.roles.find(&mut m.store, role, &mut rt.vars)? as usize;
        let legal: Vec<u32> = rt.legal_of(r).collect();
        let items: Vec<Cell> = legal.iter().map(|&i| Runtime::build(m, &rt.actions[r].terms[i as usize])).collect();
        Some(m.store.new_list(&items))
    })
}

/// `'$gdl_is_legal'(+Fluents, +Role, +Action, -TrueOrFalse)`.
fn bi_is_legal(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    let (role, act) = (a[1], a[2]);
    answer(m, a[0], a[3], |m, rt| {
        let r = rt.roles.find(&mut m.store, role, &mut rt.vars)? as usize;
        // An action no rule can make legal is not.
        let legal = rt.actions[r]
            .find(&mut m.store, act, &mut rt.vars)
            .is_some_and(|i| rt.net.legal_on(r, i as usize, &rt.vals.v));
        Some(word(m, if legal { "true" } else { "false" }))
    })
}

/// `'$gdl_kinds'(+Fluents, -Kinds)`: each role with `many` or `one(Action)`
/// (as `gdl_kinds/2`), or `terminal` or `broken` when a role has none.
fn bi_kinds(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    answer(m, a[0], a[1], |m, rt| {
        let one = m.atoms.intern("one");
        let mut items = Vec::new();
        for r in 0..rt.net.roles.len() {
            let mut legal = rt.legal_of(r);
            let kind = match (legal.next(), legal.next()) {
                (None, _) => {
                    return Some(word(m, if rt.net.on(rt.net.terminal, &rt.vals) { "terminal" } else { "broken" }));
                }
                (Some(_), Some(_)) => word(m, "many"),
                (Some(i), None) => {
                    let act = Runtime::build(m, &rt.actions[r].terms[i as usize]);
                    m.store.new_struct(one, &[act])
                }
            };
            items.push(pair(m, &rt.roles.terms[r], kind));
        }
        Some(m.store.new_list(&items))
    })
}

/// `'$gdl_next'(+Fluents, +Joint, -Next)`: the next state's fluents after
/// the joint move (`does(Role, Action)` terms), in the standard order.
fn bi_next(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    let joint = a[1];
    answer(m, a[0], a[2], |m, rt| {
        rt.does.clear();
        let mut c = m.store.deref(joint);
        loop {
            match c {
                Cell::Lst(p) => {
                    let d = m.store.deref(m.store.heap[p]);
                    let Cell::Str(s) = d else { return None };
                    match m.store.heap[s] {
                        Cell::Fun(f, 2) if m.atoms.name(f) == "does" => {}
                        _ => return None,
                    }
                    let (role, act) = (m.store.heap[s + 1], m.store.heap[s + 2]);
                    let r = rt.roles.find(&mut m.store, role, &mut rt.vars)? as usize;
                    let i = rt.actions[r].find(&mut m.store, act, &mut rt.vars)? as usize;
                    rt.does.push(rt.net.actions[r][i].1);
                    c = m.store.deref(m.store.heap[p + 1]);
                }
                Cell::Atom(x) if x == crate::engine::host::atom::NIL => break,
                _ => return None,
            }
        }
        let mut next = std::mem::take(&mut rt.next);
        rt.net.next_state(&mut rt.vals, &rt.does, &mut next);
        let items: Vec<Cell> = rt
            .fluent_order
            .iter()
            .filter(|&&f| next[f as usize])
            .map(|&f| Runtime::build(m, &rt.fluents.terms[f as usize]))
            .collect();
        rt.next = next;
        Some(m.store.new_list(&items))
    })
}

/// How a native playout ended.
enum End {
    Winner(usize),
    Draw,
    Cut,
    /// A state that breaks GDL's rules (a role without a legal action, or
    /// without a goal value at the end): the translation reports it.
    Broken,
}

impl Runtime {
    /// Random rounds from the state read last until the game ends, `max`
    /// plies are played, or the state breaks GDL's rules: the plies played
    /// and how it ended, the state reached in `self.state`. A round is as
    /// many plies as roles choose in it (at least one), as in the
    /// translation's rounds.
    fn playout(&mut self, m: &mut Machine, plies: i64, max: i64) -> Result<(i64, End), crate::engine::Exc> {
        let result = self.rounds(m, plies, max);
        self.list_state();
        result
    }

    /// Lists the state in `state` (and in the values' `state`) after a
    /// playout that moved the network on by changes.
    fn list_state(&mut self) {
        if std::mem::take(&mut self.stale) {
            let v = &self.vals.v;
            self.state.clear();
            self.state.extend(self.fluent_order.iter().copied().filter(|&f| v[f as usize]));
            self.vals.state.clone_from(&self.state);
        }
    }

    /// The result of the terminal state in the values: the player with
    /// the highest goal value wins (`Some(Some(role))`), a tie at the top
    /// is a draw (`Some(None)`); `None` when a player has no goal value
    /// (or the values are not numbers), which breaks GDL's rules.
    fn result(&self) -> Option<Option<usize>> {
        let goals = self.goal_numbers.as_ref()?;
        let net = &self.net;
        let mut best: Option<(i64, usize, bool)> = None;
        for (r, gs) in goals.iter().enumerate().filter(|(r, _)| self.players[*r]) {
            let values = gs.iter().zip(&net.goals[r]).filter(|(_, (_, p))| net.on(*p, &self.vals));
            let v = values.map(|(v, _)| *v).max()?;
            best = match best {
                Some((b, w, tie)) if v <= b => Some((b, w, tie || v == b)),
                _ => Some((v, r, false)),
            };
        }
        let (_, w, tie) = best?;
        Some((!tie).then_some(w))
    }

    /// Each role's count of legal actions in the values, into `counts`:
    /// from the sets that evaluation by changes keeps, else by reading
    /// each action's legality, gate by gate, into `legal` (the same
    /// actions either way, for [`Runtime::nth_legal`]). False when a role
    /// has none (the counts of the roles after it are not made).
    fn count_legal(&mut self) -> bool {
        let net = &*self.net;
        self.kept = self.vals.fresh && net.fanout().is_some();
        for r in 0..net.roles.len() {
            let n = if self.kept {
                self.vals.legal.count(net, r, &self.vals.v) as usize
            } else {
                let legal = &mut self.legal[r];
                legal.clear();
                let v = &self.vals.v;
                for (g, &gate) in net.gates[r].iter().enumerate() {
                    if gate_open(gate, v) {
                        legal.extend(
                            self.legal_props[r]
                                .iter()
                                .zip(&net.gate_of[r])
                                .enumerate()
                                .filter(|&(_, (&p, &of))| of as usize == g && p != NONE && v[p as usize])
                                .map(|(i, _)| i as u32),
                        );
                    }
                }
                legal.len()
            };
            self.counts[r] = n;
            if n == 0 {
                return false;
            }
        }
        true
    }

    /// Each of role `r`'s legal actions as [`Runtime::count_legal`]
    /// counted them, in the order of [`Runtime::nth_legal`].
    fn each_legal(&self, r: usize, f: impl FnMut(u32)) {
        if self.kept {
            self.vals.legal.each(&self.net, r, &self.vals.v, f);
        } else {
            self.legal[r].iter().copied().for_each(f);
        }
    }

    /// Role `r`'s `k`-th legal action as [`Runtime::count_legal`] counted
    /// them.
    fn nth_legal(&self, r: usize, k: usize) -> u32 {
        if self.kept { self.vals.legal.nth(&self.net, r, &self.vals.v, k as u32) } else { self.legal[r][k] }
    }

    /// Moves the values on to the state after the joint move in `does` by
    /// evaluating the network whole (one not evaluated by changes), the
    /// state listed in `state`.
    fn move_on_whole(&mut self) {
        let net = self.net.clone();
        let mut next = std::mem::take(&mut self.next);
        net.next_state(&mut self.vals, &self.does, &mut next);
        self.state.clear();
        self.state.extend(self.fluent_order.iter().copied().filter(|&f| next[f as usize]));
        self.next = next;
        net.set_state(&mut self.vals, &self.state);
    }

    /// The rounds of [`Runtime::playout`].
    fn rounds(&mut self, m: &mut Machine, mut plies: i64, max: i64) -> Result<(i64, End), crate::engine::Exc> {
        let net = self.net.clone();
        let mut work = self.vals.work;
        loop {
            if net.on(net.terminal, &self.vals) {
                return Ok(match self.result() {
                    Some(Some(w)) => (plies, End::Winner(w)),
                    Some(None) => (plies, End::Draw),
                    None => (plies, End::Broken),
                });
            }
            if plies >= max {
                return Ok((plies, End::Cut));
            }
            // Each role's count of legal actions, then the k-th drawn.
            if !self.count_legal() {
                return Ok((plies, End::Broken));
            }
            let choosers = self.counts.iter().filter(|&&n| n > 1).count();
            plies += choosers.max(1) as i64;
            self.does.clear();
            for r in 0..net.roles.len() {
                let n = self.counts[r];
                let k = if n == 1 { 0 } else { rand::Rng::gen_range(&mut m.rng, 0..n) };
                let i = self.nth_legal(r, k);
                self.does.push(self.does_props[r][i as usize]);
            }
            if net.advance(&mut self.vals, &self.does, &mut self.changes) {
                self.stale = true;
            } else {
                self.move_on_whole();
            }
            // A round counts as engine steps in proportion to the literals
            // read (about what the engine does in the time), so that time
            // and step limits are checked as often as in the engine.
            m.steps += 1 + (self.vals.work - work) / 256;
            work = self.vals.work;
            if m.steps >= m.step_at {
                m.check_limits()?;
            }
        }
    }

    /// `gdl(Fluents, [], [])` of the state in `self.state`.
    fn state_term(&self, m: &mut Machine) -> Cell {
        let items: Vec<Cell> = self.state.iter().map(|&f| Runtime::build(m, &self.fluents.terms[f as usize])).collect();
        let list = m.store.new_list(&items);
        let nil = Cell::Atom(crate::engine::host::atom::NIL);
        let gdl = m.atoms.intern("gdl");
        m.store.new_struct(gdl, &[list, nil, nil])
    }
}

/// `'$gdl_playout'(+State, +Plies0, +Max, -Plies, -End, -Last)`: the
/// translation's `'$playout'/7` played on the network, for a state at the
/// start of a round of a game that is not GDL-II; fails otherwise.
fn bi_playout(m: &mut Machine, a: &[Cell]) -> crate::engine::host::Res {
    let (s, p0, max, out_plies, out_end, out_last) = (a[0], a[1], a[2], a[3], a[4], a[5]);
    let nil = Cell::Atom(crate::engine::host::atom::NIL);
    let (Cell::Int(p0), Cell::Int(max)) = (m.store.deref(p0), m.store.deref(max)) else { return Ok(false) };
    let Cell::Str(p) = m.store.deref(s) else { return Ok(false) };
    let Cell::Fun(f, 3) = m.store.heap[p] else { return Ok(false) };
    if m.atoms.name(f) != "gdl"
        || m.store.deref(m.store.heap[p + 2]) != nil
        || m.store.deref(m.store.heap[p + 3]) != nil
    {
        return Ok(false);
    }
    let fs = m.store.heap[p + 1];
    let mut ext = match m.ext.take() {
        Some(e) => e,
        None => return Ok(false),
    };
    let result = (|| {
        let rt = ext.downcast_mut::<Runtime>()?;
        if !rt.enabled || rt.net.gdl_ii || rt.goal_numbers.is_none() {
            return None;
        }
        rt.read_state(m, fs)?;
        Some(rt.playout(m, p0, max).map(|(plies, end)| {
            let last = rt.state_term(m);
            let end = match end {
                End::Winner(r) => {
                    let role = Runtime::build(m, &rt.roles.terms[r]);
                    let winner = m.atoms.intern("winner");
                    let w = m.store.new_struct(winner, &[role]);
                    let over = m.atoms.intern("over");
                    m.store.new_struct(over, &[w])
                }
                End::Draw => {
                    let draw = Cell::Atom(m.atoms.intern("draw"));
                    let over = m.atoms.intern("over");
                    m.store.new_struct(over, &[draw])
                }
                End::Cut => Cell::Atom(m.atoms.intern("cut")),
                End::Broken => Cell::Atom(m.atoms.intern("broken")),
            };
            (plies, end, last)
        }))
    })();
    m.ext = Some(ext);
    match result {
        None => Ok(false),
        Some(Err(e)) => Err(e),
        Some(Ok((plies, end, last))) => Ok(m.store.unify(out_plies, Cell::Int(plies))
            && m.store.unify(out_end, end)
            && m.store.unify(out_last, last)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Lamps in a row, one switched a move; the row lights up to the end
    /// when every lamp from the first is on: `lit` is recursive both ways
    /// (a group whose members hold each other up).
    const LAMPS: &str = "
        (role a)
        (init (on 1))
        (num 1) (num 2) (num 3) (num 4) (num 5)
        (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
        (<= (legal a (switch ?x)) (num ?x))
        (<= (next (on ?x)) (true (on ?x)) (not (does a (switch ?x))))
        (<= (next (on ?x)) (does a (switch ?x)) (not (true (on ?x))))
        (<= (lit 1) (true (on 1)))
        (<= (lit ?y) (lit ?x) (succ ?x ?y) (true (on ?y)))
        (<= (lit ?x) (lit ?y) (succ ?x ?y) (true (on ?x)))
        (<= (dark ?x) (num ?x) (not (lit ?x)))
        (<= terminal (lit 5))
        (<= (goal a 100) (lit 5))
        (<= (goal a 0) (dark 5))
    ";

    fn net_of(file: &str) -> Shared {
        let src = if file == "lamps" {
            LAMPS.to_string()
        } else {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../games").join(file);
            std::fs::read_to_string(&path).expect("a game of the games folder")
        };
        super::super::translate_with(file, &src, true).expect("it translates").net.expect("it grounds")
    }

    /// Each role's legal actions as the kept sets have them.
    fn kept_legal(net: &Net, vals: &Values) -> Vec<Vec<u32>> {
        (0..net.roles.len())
            .map(|r| {
                let mut l: Vec<u32> =
                    (0..vals.legal.count(net, r, &vals.v)).map(|k| vals.legal.nth(net, r, &vals.v, k)).collect();
                l.sort_unstable();
                l
            })
            .collect()
    }

    /// Each role's legal actions, read off the values one by one.
    fn read_legal(net: &Net, v: &[bool]) -> Vec<Vec<u32>> {
        net.actions
            .iter()
            .enumerate()
            .map(|(r, acts)| (0..acts.len() as u32).filter(|&i| net.legal_on(r, i as usize, v)).collect())
            .collect()
    }

    /// In a game of turns the turn is the gate of a role's moves: taken
    /// out of the rules of their legality (and of Breakthrough's
    /// `can_move`, which reads them all), it is read by a handful of rules
    /// instead of one for every move (159 in Breakthrough 8x8), and a ply
    /// reaches only the moves it changes.
    #[test]
    fn the_turn_is_the_gate_of_the_moves() {
        for (file, turn, moves) in [("breakthrough-8x8.kif", "control(white)", 154), ("tictactoe.kif", "turn(x)", 9)] {
            let net = net_of(file);
            let x = net.fluents.iter().position(|f| f == turn).expect("the turn is a fluent") as u32;
            let gate = net.gates[0].iter().position(|&g| g == x * 2).expect("a gate") as u32;
            assert_eq!(net.gate_of[0].iter().filter(|&&g| g == gate).count(), moves, "{file}");
            let span = net.fanout().expect("a fanout").spans[x as usize];
            assert!(span.end - span.pos < 8, "{file}: {turn} has {} readers", span.end - span.pos);
        }
    }

    /// Evaluation by changes gives what a whole evaluation gives, over
    /// states that jump about (any set of fluents, reachable or not) and
    /// every action of a round: the derived propositions, each role's
    /// legal actions as kept by changes ([`Legal`]), and the next state
    /// both ways ([`Net::next_state`] and [`Net::advance`]).
    #[test]
    fn evaluation_by_changes_agrees_with_a_whole_evaluation() {
        for file in ["tictactoe.kif", "breakthrough-6x6.kif", "connect-four.kif", "nim.kif", "lamps"] {
            let net = net_of(file);
            let groups = net.fanout().expect("a fanout").members.len();
            assert_eq!(groups > 0, file == "lamps", "{file}: {groups} recursive groups");
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let fluents = net.fluents.len() as u32;
            let mut changing = Values::new(net.props);
            let mut state: Vec<u32> = Vec::new();
            let (mut out, mut expected, mut changes) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..300 {
                // A few fluents flipped, or now and then a new state.
                if round % 50 == 0 {
                    state = (0..fluents).filter(|_| rng.gen_bool(0.3)).collect();
                } else {
                    for _ in 0..rng.gen_range(1..4) {
                        let f = rng.gen_range(0..fluents);
                        match state.binary_search(&f) {
                            Ok(i) => drop(state.remove(i)),
                            Err(i) => state.insert(i, f),
                        }
                    }
                }
                net.set_state(&mut changing, &state);
                let mut whole = Values::new(net.props);
                net.set_state(&mut whole, &state);
                assert_eq!(changing.v, whole.v, "{file}, round {round}");
                assert_eq!(kept_legal(&net, &changing), read_legal(&net, &whole.v), "{file}, round {round}: legal");
                let mut differ = changing.differ.members.clone();
                differ.sort_unstable();
                let read: Vec<u32> =
                    (0..fluents).filter(|&x| net.on(net.next[x as usize], &whole) != whole.v[x as usize]).collect();
                assert_eq!(differ, read, "{file}, round {round}: the fluents whose next value differs");
                let does: Vec<u32> = net.actions.iter().map(|acts| acts[rng.gen_range(0..acts.len())].1).collect();
                net.next_state(&mut changing, &does, &mut out);
                net.next_state(&mut whole, &does, &mut expected);
                assert_eq!(out, expected, "{file}, round {round}: the next state");
                // Moving on by changes reaches the same next state.
                assert!(net.advance(&mut changing, &does, &mut changes));
                let reached: Vec<bool> = (0..fluents as usize).map(|f| changing.v[f]).collect();
                assert_eq!(reached, expected, "{file}, round {round}: moved on by changes");
                let next: Vec<u32> = (0..fluents).filter(|&f| expected[f as usize]).collect();
                let mut again = Values::new(net.props);
                net.set_state(&mut again, &next);
                assert_eq!(changing.v, again.v, "{file}, round {round}: after moving on");
                assert_eq!(
                    kept_legal(&net, &changing),
                    read_legal(&net, &again.v),
                    "{file}, round {round}: legal after"
                );
                // The values' list of the state is the caller's to bring
                // up to date after `advance`.
                changing.state = next.clone();
                state = next;
            }
        }
    }
}
