//! The game layer's step on the network: where a state stands, its legal
//! actions and the state after one, answered from the state's template
//! (`gdl(Fluents, [], [])`, as the game layer holds it) with nothing put on
//! the engine's heap and no clause of the prelude run — what a learning
//! agent's loop asks at every ply, and where the five queries of the
//! translation's rounds cost twenty times the network's own work.
//!
//! The answers are the translation's: the same rounds (the role that
//! chooses, a lone action played for the others), the same result. The
//! state after a move is its fluents' numbers ([`Fluents`]), laid out as
//! a template only when something asks for the term, and then exactly as
//! the engine would copy it out (equal states are equal templates,
//! whichever way they were made): a loop of steps never lays one out. Each entry
//! answers `None` where it does not: the network turned off, a GDL-II game
//! (a state records its rounds), a state in the middle of a round (choices
//! pending), two roles choosing at once for [`after`], a fluent or action
//! the network does not know, a state that breaks GDL's rules (the
//! translation then reports it). The caller asks the rules instead.

use super::{NONE, Runtime};
use crate::engine::host::{atom, hash_cells};
use crate::engine::{Cell, Engine, Tmpl};
use std::sync::Arc;

/// A state as a network holds it: its fluents' numbers, in the standard
/// order of their terms, with the layout that makes its template.
#[derive(Clone)]
pub struct Fluents {
    list: Arc<[u32]>,
    layout: Arc<Layout>,
}

impl Fluents {
    /// The state's template, `gdl(Fluents, [], [])`, as the engine would
    /// copy it out.
    pub fn tmpl(&self) -> Tmpl {
        self.layout.tmpl(&self.list)
    }

    /// Whether two states are the same one, where the same runtime made
    /// both (`None` otherwise: compare their templates).
    pub fn same(&self, other: &Fluents) -> Option<bool> {
        Arc::ptr_eq(&self.layout, &other.layout).then(|| self.list == other.list)
    }
}

impl std::fmt::Debug for Fluents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fluents({:?})", self.list)
    }
}

/// How a runtime's fluents are laid out in a state's template.
struct Layout {
    /// The functor `gdl/3`.
    gdl: Cell,
    /// Each fluent's cells, and whether they are a compound of atoms and
    /// numbers (copied as they are).
    terms: Vec<Tmpl>,
    flat: Vec<bool>,
}

impl Layout {
    /// The template of the state of fluents `list` (in the standard
    /// order): `gdl(Fluents, [], [])`, laid out as the engine copies a
    /// term out (a list cell's head, then its tail, then the head's own
    /// cells, then the next list cell), so that it equals the same state
    /// made by the rules.
    fn tmpl(&self, list: &[u32]) -> Tmpl {
        let nil = Cell::Atom(atom::NIL);
        let mut cells = Vec::with_capacity(5 + list.len() * 7);
        cells.extend_from_slice(&[Cell::Str(1), self.gdl, nil, nil, nil]);
        if !list.is_empty() {
            cells[2] = Cell::Lst(5);
        }
        for (k, &f) in list.iter().enumerate() {
            let q = cells.len();
            let t = &self.terms[f as usize].cells;
            if self.flat[f as usize] {
                // Its cells after the root point nowhere.
                cells.extend_from_slice(&[Cell::Str(q + 2), nil]);
                cells.extend_from_slice(&t[1..]);
            } else {
                // The fluent's cells after its root land from q + 2 on.
                let moved = |c: Cell| match c {
                    Cell::Str(p) => Cell::Str(p + q + 1),
                    Cell::Lst(p) => Cell::Lst(p + q + 1),
                    c => c,
                };
                cells.push(moved(t[0]));
                cells.push(nil);
                cells.extend(t[1..].iter().map(|&c| moved(c)));
            }
            if k + 1 < list.len() {
                cells[q + 1] = Cell::Lst(cells.len());
            }
        }
        Tmpl { cells, nvars: 0 }
    }
}

/// A state as the step is given it: the fluents a network made, or a
/// template.
#[derive(Clone, Copy)]
pub enum Seen<'a> {
    Fluents(&'a Fluents),
    Term(&'a Tmpl),
}

/// The state whose fluents are in the runtime's values, as it was given
/// or made last.
enum Last {
    Fluents(Arc<[u32]>),
    Term(Tmpl),
}

/// Where a state stands, as the network sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The game is over: won by a role (its number), or drawn (`None`).
    Over(Option<usize>),
    /// The role (its number) to choose.
    ToMove(usize),
}

/// What the step keeps between calls.
pub(crate) struct Cache {
    /// The functor `gdl/3`.
    gdl: Cell,
    /// The state whose fluents are in the runtime's values (the one read
    /// or made last), so the state a step made is not read again by the
    /// next; and its mark (see [`after`]), a new one each time the values
    /// change.
    last: Option<Last>,
    mark: u64,
    /// The layout of the states the step makes (made when first needed).
    layout: Option<Arc<Layout>>,
    /// Each role's actions' places in the standard order.
    action_rank: Vec<Vec<u32>>,
    /// The action space numbered last.
    space: Option<Numbered>,
    /// Scratch: a fluent's canonical copy; legal actions as bits.
    scratch: Vec<Cell>,
    bits: Vec<u64>,
    /// Scratch: the fluents a move turned on.
    on: Vec<u32>,
}

impl Cache {
    pub(super) fn new(engine: &mut Engine) -> Result<Cache, String> {
        let t = engine.parse_term("gdl(a, b, c)").map_err(|e| format!("gdl/3: {e}"))?;
        let Cell::Str(k) = t.cells[0] else { return Err("gdl/3 is not a compound".into()) };
        Ok(Cache {
            gdl: t.cells[k],
            last: None,
            mark: 0,
            layout: None,
            action_rank: Vec::new(),
            space: None,
            scratch: Vec::new(),
            bits: Vec::new(),
            on: Vec::new(),
        })
    }

    /// Whether the runtime's values hold `s` already: its mark says so
    /// (nothing compared), or it is the state read or made last.
    fn holds(&self, s: Seen, mark: Option<u64>) -> bool {
        let marked = mark == Some(self.mark);
        let same = match (&self.last, s) {
            (Some(Last::Fluents(last)), Seen::Fluents(f)) => marked || *last == f.list,
            (Some(Last::Term(last)), Seen::Term(t)) => marked || last.cells == t.cells,
            _ => return false,
        };
        debug_assert!(!marked || self.holds(s, None), "a mark given with another state");
        same
    }

    /// The runtime's values no longer hold the state `last` (another state
    /// was read).
    pub(super) fn forget(&mut self) {
        self.last = None;
        self.mark += 1;
    }
}

/// The actions numbered in an action space.
struct Numbered {
    /// The space's number.
    id: u64,
    /// Each role's actions' numbers (`NONE`: not in the space).
    numbers: Vec<Vec<u32>>,
    /// For each role, each number's action (`NONE`: not the role's).
    back: Vec<Vec<u32>>,
}

/// The runtime of an engine, if it has one that answers.
fn runtime(engine: &mut Engine) -> Option<&mut Runtime> {
    engine.ext_mut::<Runtime>().filter(|rt| rt.enabled && !rt.net.gdl_ii && rt.goal_numbers.is_some())
}

/// The roles' terms, in the order of their numbers (empty where the
/// network does not answer).
pub fn roles(engine: &mut Engine) -> Vec<Tmpl> {
    runtime(engine).map(|rt| rt.roles.terms.clone()).unwrap_or_default()
}

/// Where `s` stands.
pub fn status(engine: &mut Engine, s: Seen) -> Option<Standing> {
    let rt = runtime(engine)?;
    rt.read(s, None)?;
    rt.standing()
}

/// An action space: its number, and what numbers an action term in it
/// (asked once for each action of the game, the first time the space is
/// seen).
pub type Space<'a> = (u64, &'a dyn Fn(&Tmpl) -> Option<usize>);

/// The legal actions of `s` (of the role to choose, in the standard order
/// of the actions, as `move/2` lists them) numbered in an action space.
pub fn legal_actions(engine: &mut Engine, s: Seen, space: Space) -> Option<Vec<usize>> {
    let rt = runtime(engine)?;
    rt.read(s, None)?;
    // Over, the rules say what is legal (a game may list moves still).
    let Standing::ToMove(r) = rt.standing()? else { return None };
    rt.numbered_legal(r, space)
}

/// The state after the legal action `m` of the role to choose in `s`, and
/// where it stands; `None` also where `m` is not legal (the rules say why).
/// With an action space, the legal actions of the state after too, as
/// [`legal_actions`] would give them (`None` where it would). The state
/// after comes with a mark: given back with that state (`mark`), it tells
/// the runtime that its values still hold it, which spares comparing the
/// state with the one they hold (what a loop of steps does at every ply).
/// `action` is `m`'s number in the space, where the caller knows it (the
/// move is then not looked up).
pub fn after(
    engine: &mut Engine,
    s: Seen,
    mark: Option<u64>,
    m: &Tmpl,
    action: Option<usize>,
    space: Option<Space>,
) -> Option<After> {
    let rt = runtime(engine)?;
    rt.read(s, mark)?;
    let Standing::ToMove(r) = rt.standing()? else { return None };
    // One role chooses; the others have one action each.
    if (0..rt.counts.len()).any(|q| q != r && rt.counts[q] > 1) {
        return None;
    }
    let i = match (action, space) {
        (Some(a), Some(space)) => {
            rt.number_actions(space);
            let i = *rt.step.space.as_ref().expect("numbered").back[r].get(a)?;
            (i != NONE).then_some(i)?
        }
        _ => rt.action_of(r, m)?,
    };
    if !rt.net.legal_on(r, i as usize, &rt.vals.v) {
        return None;
    }
    rt.does.clear();
    for q in 0..rt.counts.len() {
        let a = if q == r { i } else { rt.nth_legal(q, 0) };
        rt.does.push(rt.does_props[q][a as usize]);
    }
    rt.move_on();
    let list: Arc<[u32]> = Arc::from(&rt.state[..]);
    rt.step.last = Some(Last::Fluents(list.clone()));
    rt.step.mark += 1;
    let next = Fluents { list, layout: rt.layout() };
    let standing = rt.standing()?;
    let actions = match (standing, space) {
        (Standing::ToMove(r), Some(space)) => rt.numbered_legal(r, space),
        _ => None,
    };
    Some(After { next, mark: rt.step.mark, standing, actions })
}

/// What [`after`] gives.
pub struct After {
    pub next: Fluents,
    pub mark: u64,
    pub standing: Standing,
    pub actions: Option<Vec<usize>>,
}

impl Runtime {
    /// Reads the state `s` into the values (nothing to do for the state
    /// they hold: its mark says so, or it is the same state); `None` for a
    /// template that is not `gdl(Fluents, [], [])` of fluents the network
    /// knows.
    fn read(&mut self, s: Seen, mark: Option<u64>) -> Option<()> {
        let f = match s {
            Seen::Fluents(f) if self.step.layout.as_ref().is_some_and(|l| Arc::ptr_eq(l, &f.layout)) => f,
            // Made by another runtime: its mark is not this one's.
            Seen::Fluents(f) => return self.read_tmpl(&f.tmpl(), None),
            Seen::Term(t) => return self.read_tmpl(t, mark),
        };
        if self.step.holds(s, mark) {
            return Some(());
        }
        self.step.forget();
        self.list_state();
        self.state.clear();
        self.state.extend_from_slice(&f.list);
        self.set_listed();
        self.step.last = Some(Last::Fluents(f.list.clone()));
        Some(())
    }

    /// [`Runtime::read`] of a template.
    fn read_tmpl(&mut self, s: &Tmpl, mark: Option<u64>) -> Option<()> {
        if self.step.holds(Seen::Term(s), mark) {
            return Some(());
        }
        self.step.forget();
        self.list_state();
        let cells = &s.cells;
        let Cell::Str(k) = cells[0] else { return None };
        let nil = Cell::Atom(atom::NIL);
        if cells[k] != self.step.gdl || cells[k + 2] != nil || cells[k + 3] != nil {
            return None;
        }
        self.state.clear();
        let mut c = cells[k + 1];
        loop {
            match c {
                Cell::Lst(p) => {
                    let f = self.fluents.find_in(cells, cells[p], &mut self.step.scratch)?;
                    self.state.push(f);
                    c = cells[p + 1];
                }
                c if c == nil => break,
                _ => return None,
            }
        }
        self.set_listed();
        self.step.last = Some(Last::Term(s.clone()));
        Some(())
    }

    /// The layout of the states the step makes.
    fn layout(&mut self) -> Arc<Layout> {
        let (gdl, fluents) = (self.step.gdl, &self.fluents);
        self.step
            .layout
            .get_or_insert_with(|| {
                let terms = fluents.terms.clone();
                let flat = terms
                    .iter()
                    .zip(&fluents.flat_cells)
                    .map(|(t, flat)| matches!(t.cells[0], Cell::Str(1)) && flat.len() == t.cells.len() - 1)
                    .collect();
                Arc::new(Layout { gdl, terms, flat })
            })
            .clone()
    }

    /// Where the state in the values stands: over (a role wins, or a
    /// draw), or the role to choose, as the translation's rounds have it
    /// (the first player with two or more legal actions; when every role
    /// has one, the first player whose action has arguments, else the
    /// first player). Each role's legal actions are counted (see
    /// [`Runtime::count_legal`]). `None` for a state that breaks GDL's
    /// rules.
    fn standing(&mut self) -> Option<Standing> {
        if self.net.on(self.net.terminal, &self.vals) {
            return self.result().map(Standing::Over);
        }
        if !self.count_legal() {
            return None;
        }
        let players = || (0..self.counts.len()).filter(|&r| self.players[r]);
        let chooser = players().find(|&r| self.counts[r] > 1).or_else(|| {
            let compound = |r: usize| {
                let a = self.nth_legal(r, 0);
                matches!(self.actions[r].terms[a as usize].cells[0], Cell::Str(_))
            };
            players().find(|&r| compound(r)).or_else(|| players().next())
        });
        chooser.map(Standing::ToMove)
    }

    /// Role `r`'s legal actions in the standard order, numbered in the
    /// space `space`; `None` if one has no number there.
    fn numbered_legal(&mut self, r: usize, space: Space) -> Option<Vec<usize>> {
        self.number_actions(space);
        // The legal actions' places in the standard order, as bits: read
        // in order, they are the actions sorted.
        let mut bits = std::mem::take(&mut self.step.bits);
        bits.clear();
        bits.resize(self.action_order[r].len().div_ceil(64), 0);
        let rank = &self.step.action_rank[r];
        self.each_legal(r, |i| {
            let k = rank[i as usize] as usize;
            bits[k / 64] |= 1 << (k % 64);
        });
        let (order, numbers) = (&self.action_order[r], &self.step.space.as_ref().expect("numbered").numbers[r]);
        let mut out = Vec::with_capacity(self.counts[r]);
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let a = numbers[order[w * 64 + word.trailing_zeros() as usize] as usize];
                if a == NONE {
                    self.step.bits = bits;
                    return None;
                }
                out.push(a as usize);
                word &= word - 1;
            }
        }
        self.step.bits = bits;
        Some(out)
    }

    /// Numbers every action of every role in the space `space`, unless
    /// it is the space numbered last.
    fn number_actions(&mut self, (space, number): Space) {
        if self.step.action_rank.is_empty() {
            self.step.action_rank = self
                .action_order
                .iter()
                .map(|order| {
                    let mut rank = vec![0; order.len()];
                    for (k, &i) in order.iter().enumerate() {
                        rank[i as usize] = k as u32;
                    }
                    rank
                })
                .collect();
        }
        if self.step.space.as_ref().is_some_and(|n| n.id == space) {
            return;
        }
        let numbers: Vec<Vec<u32>> = self
            .actions
            .iter()
            .map(|idx| idx.terms.iter().map(|t| number(t).map_or(NONE, |a| a as u32)).collect())
            .collect();
        let back = numbers
            .iter()
            .map(|ns| {
                let len = ns.iter().filter(|&&a| a != NONE).max().map_or(0, |&a| a as usize + 1);
                let mut back = vec![NONE; len];
                for (i, &a) in ns.iter().enumerate().filter(|(_, a)| **a != NONE) {
                    back[a as usize] = i as u32;
                }
                back
            })
            .collect();
        self.step.space = Some(Numbered { id: space, numbers, back });
    }

    /// The number of role `r`'s action `m`, if it is one of its actions.
    fn action_of(&mut self, r: usize, m: &Tmpl) -> Option<u32> {
        self.actions[r].find_in(&m.cells, m.cells[0], &mut self.step.scratch)
    }

    /// Moves the values on to the state after the joint move in `does`,
    /// listed in `state`.
    fn move_on(&mut self) {
        let net = self.net.clone();
        if net.advance(&mut self.vals, &self.does, &mut self.changes) {
            // The fluents that changed, merged into the state's list (a
            // move changes a few of them; listing all would read every
            // fluent).
            let (v, rank) = (&self.vals.v, &self.fluent_rank);
            let mut on = std::mem::take(&mut self.step.on);
            on.clear();
            on.extend(self.changes.iter().copied().filter(|&x| v[x as usize]));
            on.sort_unstable_by_key(|&x| rank[x as usize]);
            self.state.clear();
            let mut new = on.iter().copied().peekable();
            for x in self.vals.state.iter().copied().filter(|&x| v[x as usize]) {
                while let Some(y) = new.next_if(|&y| rank[y as usize] < rank[x as usize]) {
                    self.state.push(y);
                }
                self.state.push(x);
            }
            self.state.extend(new);
            self.vals.state.clone_from(&self.state);
            self.step.on = on;
        } else {
            self.move_on_whole();
        }
    }
}

impl super::TermIndex {
    /// The number of the term at `root` of a template's `cells`, if known
    /// (a ground term: a template's variable is not).
    fn find_in(&self, cells: &[Cell], root: Cell, scratch: &mut Vec<Cell>) -> Option<u32> {
        let one = [root];
        let flat: Option<&[Cell]> = match root {
            c if super::flat_arg(c) => Some(&one),
            Cell::Str(p) => match cells[p] {
                Cell::Fun(_, n) if (n as usize) <= super::FLAT_ARGS => {
                    let all = &cells[p..=p + n as usize];
                    all[1..].iter().all(|&a| super::flat_arg(a)).then_some(all)
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(key) = flat {
            return self.flat.get(&hash_cells(key))?.iter().copied().find(|&i| self.flat_cells[i as usize] == key);
        }
        canonical(cells, root, scratch)?;
        self.deep.get(&hash_cells(scratch))?.iter().copied().find(|&i| self.terms[i as usize].cells == *scratch)
    }
}

/// The subterm at `root` of a template's cells, copied into `out` as the
/// engine copies a term out (its root first, then depth first, a
/// compound's arguments in place and its compound arguments after them);
/// `None` where it has a variable.
fn canonical(cells: &[Cell], root: Cell, out: &mut Vec<Cell>) -> Option<()> {
    out.clear();
    out.push(Cell::Atom(atom::NIL));
    let mut work = vec![(root, 0usize)];
    while let Some((c, dst)) = work.pop() {
        out[dst] = match c {
            Cell::Ref(_) => return None,
            Cell::Str(p) => {
                let Cell::Fun(_, n) = cells[p] else { return None };
                let q = out.len();
                out.push(cells[p]);
                for i in 0..n as usize {
                    let a = cells[p + 1 + i];
                    if a.is_atomic() {
                        out.push(a);
                    } else {
                        out.push(Cell::Atom(atom::NIL));
                        work.push((a, q + 1 + i));
                    }
                }
                Cell::Str(q)
            }
            Cell::Lst(p) => {
                let q = out.len();
                let (h, t) = (cells[p], cells[p + 1]);
                out.push(if h.is_atomic() { h } else { Cell::Atom(atom::NIL) });
                out.push(if t.is_atomic() { t } else { Cell::Atom(atom::NIL) });
                if !t.is_atomic() {
                    work.push((t, q + 1));
                }
                if !h.is_atomic() {
                    work.push((h, q));
                }
                Cell::Lst(q)
            }
            c => c,
        };
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use crate::game::{Game, Next};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn load(file: &str) -> Game {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../games").join(file);
        crate::loader::load(&path).expect("a game of the games folder").0
    }

    /// The status, legal actions and next state of the rules (the
    /// network's step turned off; the translation answers through the
    /// network's builtins still).
    fn by_rules<T>(g: &mut Game, f: impl FnOnce(&mut Game) -> T) -> T {
        let ext = g.spec().extension().expect("a grounded game").clone();
        ext.set_enabled(g.engine(), false);
        let out = f(g);
        ext.set_enabled(g.engine(), true);
        out
    }

    /// Random games played by the game layer's step on the network agree
    /// with the rules at every ply: where the state stands, the legal
    /// actions in order, and the next state as the same template (so that
    /// equal states compare and hash alike). In a game of turns every ply
    /// is the network's; in rock-paper-scissors (two roles choose at once)
    /// every choice is left to the rules (the first leaves one pending),
    /// where the status and the legal actions of a round's start are the
    /// network's still.
    #[test]
    fn the_networks_step_is_the_rules_step() {
        for (file, all_native) in [
            ("tictactoe.kif", true),
            ("breakthrough-6x6.kif", true),
            ("connect-four.kif", true),
            ("nim.kif", true),
            ("rock-paper-scissors.kif", false),
        ] {
            let mut g = load(file);
            let options = g.options_term(&[]).unwrap();
            let space = g.action_space(&options).unwrap().expect("a GDL game numbers its actions");
            let moves = space.listed_moves().unwrap().to_vec();
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let (mut plies, mut native) = (0, 0);
            for seed in 0..6 {
                let s = g.initial_state(&options, seed).unwrap();
                let first = s.clone();
                let status = g.status(&s).unwrap();
                let mut at = Next { state: s, status, actions: None, mark: None };
                loop {
                    let s = at.state.clone();
                    assert_eq!(at.status, by_rules(&mut g, |g| g.status(&s)).unwrap(), "{file}: status");
                    if at.status.outcome.is_some() {
                        break;
                    }
                    let want = by_rules(&mut g, |g| g.legal_actions(&space, &s)).unwrap();
                    if let Some(listed) = &at.actions {
                        assert_eq!(listed, &want, "{file}: the legal actions listed with the move");
                    }
                    // Asked again (the values hold the state: no read).
                    let actions = g.legal_actions(&space, &s).unwrap();
                    assert_eq!(actions, want, "{file}: legal actions");
                    let a = actions[rng.gen_range(0..actions.len())];
                    let m = &moves[a];
                    let (want, want_status) = by_rules(&mut g, |g| g.after(&s, m)).unwrap();
                    // Now and then another state is read, by the network's
                    // builtins (the start's end, asked through the rules)
                    // or by the step: the mark no longer holds, the state
                    // is read again.
                    match plies % 3 {
                        1 => assert_eq!(g.outcome(&first).unwrap(), None),
                        2 => assert_eq!(g.status(&first).unwrap().outcome, None),
                        _ => {}
                    }
                    // By the move's term, or by its number.
                    at = match plies % 2 {
                        0 => g.after_listing(&s, at.mark, m, Some(&space)).unwrap(),
                        _ => g.after_action(&s, at.mark, &space, a).unwrap(),
                    };
                    native += usize::from(at.mark.is_some());
                    assert_eq!(at.state.term(), want.term(), "{file}: the next state's template");
                    // A position the network holds equals the rules' one,
                    // and another it holds as the same fluents.
                    assert_eq!(at.state, want, "{file}: equal positions");
                    assert_eq!(want, at.state, "{file}: equal positions");
                    if let Some(again) = at.mark.and_then(|_| g.after_action(&s, None, &space, a).ok()) {
                        assert!(again.state == at.state && again.state != s, "{file}: the same position again");
                    }
                    assert_eq!(at.status, want_status, "{file}: the next state's status");
                    plies += 1;
                }
            }
            assert!(plies > 6, "{file}: {plies} plies");
            let want = if all_native { plies } else { 0 };
            assert_eq!(native, want, "{file}: {native} of {plies} plies by the network");
            // An action that is not legal is refused, as the rules refuse it
            // (where there is one at the start).
            let s = g.initial_state(&options, 0).unwrap();
            let legal = g.legal_actions(&space, &s).unwrap();
            let Some(illegal) = (0..moves.len()).find(|a| !legal.contains(a)) else { continue };
            let ours = g.after_action(&s, None, &space, illegal);
            let theirs = by_rules(&mut g, |g| g.after(&s, &moves[illegal]));
            assert!(ours.is_err() && theirs.is_err(), "{file}: action {illegal} played at the start");
            assert_eq!(ours.unwrap_err().to_string(), theirs.unwrap_err().to_string(), "{file}");
        }
    }
}
