//! Integer actions: every move a game can ever have, numbered from 0 —
//! what OpenSpiel and PettingZoo number their moves by. A game says them
//! in one of two ways:
//!
//! - `action_space(Options, Moves)` lists them in a fixed order (move *i*
//!   of the list is action *i*); a GDL game has it from its `input`
//!   relation;
//! - `action_count(Options, N)` with `action(Options, Move, Index)`, which
//!   turns a move into its index and an index into its move, for a game
//!   whose moves are too many to list (Domin-Up places 36 tiles anywhere
//!   on an unbounded table).
//!
//! A game that does neither but says how a person clicks a move
//! (`move_clicks/3`, with `view/3`) is played by click actions instead
//! ([`ClickSpace`]): one action per site clicked, so a move is several
//! actions, as OpenSpiel's Amazons is three (the amazon, its square, the
//! arrow) and its checkers one per jump.

use super::{Game, GameError, Move, State};
use crate::engine::host::hash_cells;
use crate::engine::{Arg, Cell, FlatKey, Scanned, Tmpl, Value};
use std::collections::HashMap;

/// The end of a chain of actions.
const NONE: u32 = u32::MAX;

/// A game's moves, numbered.
#[derive(Clone, Debug)]
pub struct ActionSpace {
    kind: Kind,
    /// A number of its own (a copy shares it), by which a native step
    /// keeps the actions it has numbered in it.
    pub(super) id: u64,
}

/// The number of the next action space made.
static SPACES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn new_space(kind: Kind) -> ActionSpace {
    ActionSpace { kind, id: SPACES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) }
}

#[derive(Clone, Debug)]
enum Kind {
    /// `action_space/2`: the moves, and the table that finds a move's
    /// action.
    Listed { moves: Vec<Move>, table: MoveTable },
    /// `action_count/2` and `action/3`, with the options to pass them.
    Coded { count: usize, options: Tmpl },
}

/// Finds the action of a listed move's cells. Each move is kept as the
/// words of its cells ([`Cell::words`]), all in one array, and found by
/// the hash of its words in an open-addressing table at most half full:
/// a lookup reads a slot or two, then the move's words. (It replaced a
/// hash map of the moves, which went through the map, the move's `Arc`
/// and its cells' buffer. perf put about a tenth of a Python ply in the
/// lookups before and after alike: what they cost is mostly the cache
/// the Python loop takes between two plies, 2026-12-07.)
///
/// A move that has a [`FlatKey`] (most do: `m(1, 2, 1, 3)`) is found by
/// its key too, in a table of its own: a legal move the rules give is
/// then looked up where it is in the engine, with no copy
/// ([`ActionSpace::listed_action_of`]). Callgrind put the copy, the hash
/// and the lookup of each legal move at about 480 instructions, a fifth
/// of a Breakthrough step loop's ply outside the rules (2026-12-07).
#[derive(Clone, Debug)]
struct MoveTable {
    slots: Vec<Slot>,
    /// Each action's words: `words[starts[a]..starts[a + 1]]`.
    words: Vec<u64>,
    starts: Vec<u32>,
    /// The moves with keys, by key, open addressing, at most half full
    /// (an empty slot's key is all zeros, which no key is).
    keyed: Vec<(FlatKey, u32)>,
}

/// A slot of [`MoveTable`]: a move's hash and its action (`NONE`: empty).
#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u64,
    action: u32,
}

const EMPTY: Slot = Slot { hash: 0, action: NONE };

impl MoveTable {
    /// The table of `moves`; a move listed twice is an error (which gives
    /// its second action).
    fn new(moves: &[Move]) -> Result<MoveTable, usize> {
        let size = (2 * moves.len()).next_power_of_two().max(8);
        let mut t = MoveTable {
            slots: vec![EMPTY; size],
            words: Vec::new(),
            starts: Vec::with_capacity(moves.len() + 1),
            keyed: vec![(FlatKey([0; 4]), NONE); size],
        };
        t.starts.push(0);
        for (a, m) in moves.iter().enumerate() {
            let cells = &m.0.cells;
            let hash = hash_cells(cells);
            let found = t.slot_of(hash, cells);
            if t.slots[found].action != NONE {
                return Err(a);
            }
            t.slots[found] = Slot { hash, action: a as u32 };
            t.words.extend(cells.iter().flat_map(|c| c.words()));
            t.starts.push(t.words.len() as u32);
            if let Some(k) = FlatKey::of_cells(cells) {
                let at = t.key_slot(&k);
                t.keyed[at] = (k, a as u32);
            }
        }
        Ok(t)
    }

    /// The slot of `keyed` that holds the move of key `k`, or the empty
    /// slot where it would go.
    #[inline]
    fn key_slot(&self, k: &FlatKey) -> usize {
        let mask = self.keyed.len() - 1;
        let mut i = k.hash64() as usize & mask;
        loop {
            let (key, action) = &self.keyed[i];
            if *action == NONE || key == k {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    fn find_key(&self, k: &FlatKey) -> Option<usize> {
        let (_, action) = self.keyed[self.key_slot(k)];
        (action != NONE).then_some(action as usize)
    }

    /// The slot that holds the move of `cells` (hashed `hash`), or the
    /// empty slot where it would go.
    #[inline]
    fn slot_of(&self, hash: u64, cells: &[Cell]) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s.action == NONE || (s.hash == hash && self.is(s.action as usize, cells)) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether `action` is the move of `cells`.
    fn is(&self, action: usize, cells: &[Cell]) -> bool {
        let words = &self.words[self.starts[action] as usize..self.starts[action + 1] as usize];
        words.len() == 2 * cells.len() && cells.iter().zip(words.chunks_exact(2)).all(|(c, w)| c.words() == w)
    }

    fn find(&self, cells: &[Cell]) -> Option<usize> {
        let s = self.slots[self.slot_of(hash_cells(cells), cells)];
        (s.action != NONE).then_some(s.action as usize)
    }
}

impl ActionSpace {
    /// Numbers `moves`; a move listed twice is an error (which gives it).
    pub fn listed(moves: Vec<Move>) -> Result<ActionSpace, Move> {
        match MoveTable::new(&moves) {
            Ok(table) => Ok(new_space(Kind::Listed { moves, table })),
            Err(a) => Err(moves[a].clone()),
        }
    }

    /// How many actions there are.
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Listed { moves, .. } => moves.len(),
            Kind::Coded { count, .. } => *count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The action of a listed move (no engine needed); `None` for a move
    /// the list does not have, and for every move of a coded space.
    pub fn listed_action(&self, m: &Move) -> Option<usize> {
        self.listed_action_of_cells(&m.0.cells)
    }

    /// [`ActionSpace::listed_action`] of a ground move given as a
    /// template's cells.
    /// The action of an answer of [`Engine::scan`] (a move the rules
    /// gave, where it is in the engine); `None` if the space does not have
    /// it, or it is not ground (or is cyclic).
    pub(super) fn listed_action_of(&self, answer: &mut Scanned) -> Option<usize> {
        let Kind::Listed { table, .. } = &self.kind else { return None };
        match answer.key() {
            // A move with a key has it in the table too, if the space has it.
            Some(k) => table.find_key(&k),
            None => answer.cells().filter(|&(_, nvars)| nvars == 0).and_then(|(cells, _)| table.find(cells)),
        }
    }

    pub(super) fn listed_action_of_cells(&self, cells: &[Cell]) -> Option<usize> {
        match &self.kind {
            Kind::Listed { table, .. } => table.find(cells),
            Kind::Coded { .. } => None,
        }
    }

    /// The moves in action order, when the rules list them.
    pub fn listed_moves(&self) -> Option<&[Move]> {
        match &self.kind {
            Kind::Listed { moves, .. } => Some(moves),
            Kind::Coded { .. } => None,
        }
    }
}

impl Game {
    /// Whether the rules number their moves (`action_space/2`, or
    /// `action_count/2` with `action/3`).
    pub fn has_action_space(&self) -> bool {
        self.has("action_space", 2) || (self.has("action_count", 2) && self.has("action", 3))
    }

    /// The game's moves, numbered; `None` when the rules do not number
    /// them. Listed moves must be ground, and listed once.
    pub fn action_space(&mut self, options: &Tmpl) -> Result<Option<ActionSpace>, GameError> {
        if self.has("action_space", 2) {
            return self.listed_space(options).map(Some);
        }
        if !self.has_action_space() {
            return Ok(None);
        }
        let r = self.call1("action_count", &[Arg::In(options), Arg::Out], "action_count/2")?;
        match self.engine.value(&r[0]).as_int() {
            Some(n) if n >= 0 => Ok(Some(new_space(Kind::Coded { count: n as usize, options: options.clone() }))),
            _ => {
                let t = self.engine.term_text(&r[0]);
                Err(GameError::Rules(format!("action_count/2 must give a whole number, not {t}")))
            }
        }
    }

    fn listed_space(&mut self, options: &Tmpl) -> Result<ActionSpace, GameError> {
        let r = self.call1("action_space", &[Arg::In(options), Arg::Out], "action_space/2")?;
        let Some(items) = self.engine.list_terms(&r[0]) else {
            let t = self.engine.term_text(&r[0]);
            return Err(GameError::Rules(format!("action_space/2 must give a list of moves, not {t}")));
        };
        if let Some(m) = items.iter().find(|m| m.nvars > 0) {
            let t = self.engine.term_text(m);
            return Err(GameError::Rules(format!("action_space/2 lists a move that is not ground: {t}")));
        }
        ActionSpace::listed(items.into_iter().map(Move::new).collect()).map_err(|m| {
            let t = self.move_text(&m).unwrap_or_else(|_| self.engine.term_text(&m.0));
            GameError::Rules(format!("action_space/2 lists the move {t} twice"))
        })
    }

    /// The actions of the legal moves of `s`, in the order of
    /// [`Game::moves`]. With a listed space and `move/2`, each move is
    /// looked up as the engine finds it, with no move copied out of the
    /// engine (what a learning agent's step asks, every ply). A legal move
    /// the space does not have is an error.
    pub fn legal_actions(&mut self, space: &ActionSpace, s: &State) -> Result<Vec<usize>, GameError> {
        if matches!(space.kind, Kind::Listed { .. }) {
            let number = |t: &Tmpl| space.listed_action_of_cells(&t.cells);
            if let Some(actions) = crate::gdl::step::legal_actions(&mut self.engine, s.seen(), (space.id, &number)) {
                return Ok(actions);
            }
        }
        if matches!(space.kind, Kind::Coded { .. }) || !self.has("move", 2) {
            let moves = self.moves(s)?;
            let mut out = Vec::with_capacity(moves.len());
            for m in &moves {
                match self.action_of(space, m)? {
                    Some(a) => out.push(a),
                    None => return Err(self.no_action(m)),
                }
            }
            return Ok(out);
        }
        let mut out = Vec::new();
        // The first move the space lacks, or that is not ground.
        let mut stray: Option<Tmpl> = None;
        let scanned = self.engine.scan("move", &[Arg::In(s.term()), Arg::Out], |answer| {
            match space.listed_action_of(answer) {
                Some(a) => out.push(a),
                None => stray = answer.cells().map(|(cells, nvars)| Tmpl { cells: cells.into(), nvars }),
            }
            stray.is_none()
        });
        scanned.map_err(|e| super::rules_error("move/2", e))?;
        match stray {
            None => Ok(out),
            Some(t) if t.nvars == 0 => Err(self.no_action(&Move::new(t))),
            Some(t) => {
                let t = self.engine.term_text(&t);
                Err(GameError::Rules(format!("move/2 gave a move that is not ground: {t}")))
            }
        }
    }

    /// The error of a legal move without an action.
    fn no_action(&mut self, m: &Move) -> GameError {
        let t = self.move_text(m).unwrap_or_else(|_| self.engine.term_text(&m.0));
        GameError::Rules(format!("the legal move {t} has no integer action (`tabula check` finds such moves)"))
    }

    /// The action of a move; `None` if the space does not have it.
    pub fn action_of(&mut self, space: &ActionSpace, m: &Move) -> Result<Option<usize>, GameError> {
        match &space.kind {
            Kind::Listed { .. } => Ok(space.listed_action(m)),
            Kind::Coded { count, options } => {
                let r = self
                    .engine
                    .call("action", &[Arg::In(options), Arg::In(&m.0), Arg::Out], 1)
                    .map_err(|e| super::rules_error("action/3", e))?;
                let Some(r) = r.into_iter().next() else { return Ok(None) };
                match self.engine.value(&r[0]) {
                    Value::Int(i) if i >= 0 && (i as usize) < *count => Ok(Some(i as usize)),
                    _ => {
                        let (t, mt) = (self.engine.term_text(&r[0]), self.engine.term_text(&m.0));
                        Err(GameError::Rules(format!(
                            "action/3 numbers the move {mt} {t}, which is not a whole number in 0..{count}"
                        )))
                    }
                }
            }
        }
    }

    /// The move of an action; `None` if there is no such action.
    pub fn move_of(&mut self, space: &ActionSpace, action: usize) -> Result<Option<Move>, GameError> {
        match &space.kind {
            Kind::Listed { moves, .. } => Ok(moves.get(action).cloned()),
            Kind::Coded { count, options } => {
                if action >= *count {
                    return Ok(None);
                }
                let i = super::int_term(action as i64);
                let r = self
                    .engine
                    .call("action", &[Arg::In(options), Arg::Out, Arg::In(&i)], 1)
                    .map_err(|e| super::rules_error("action/3", e))?;
                match r.into_iter().next() {
                    Some(mut r) if r[0].nvars == 0 => Ok(Some(Move::new(r.pop().expect("one output")))),
                    Some(r) => {
                        let t = self.engine.term_text(&r[0]);
                        Err(GameError::Rules(format!("action/3 gives action {action} a move that is not ground: {t}")))
                    }
                    None => Ok(None),
                }
            }
        }
    }
}

/// Click actions: action *i* clicks target *i* (a site of the start
/// position's board, as the views of every seat and of a spectator list
/// them), and the last action ends a move whose clicks could also go on.
/// A move is made by the clicks `move_clicks/3` gives it, one action each.
#[derive(Clone, Debug)]
pub struct ClickSpace {
    targets: Vec<String>,
    index: HashMap<String, usize>,
}

impl ClickSpace {
    /// The sites that can be clicked, in action order.
    pub fn targets(&self) -> &[String] {
        &self.targets
    }

    /// The action that clicks site `id`.
    pub fn target(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The action that ends a move.
    pub fn end(&self) -> usize {
        self.targets.len()
    }

    /// How many actions there are: the targets and the end.
    pub fn len(&self) -> usize {
        self.targets.len() + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

impl Game {
    /// Whether the rules say how a move is clicked on a board they draw.
    pub fn has_click_space(&self) -> bool {
        self.has("move_clicks", 3) && self.has_view()
    }

    /// The click actions of the game with these options (its sites in
    /// the start position dealt with seed 0); `None` where the rules do
    /// not say how a move is clicked.
    pub fn click_space(&mut self, options: &Tmpl) -> Result<Option<ClickSpace>, GameError> {
        if !self.has_click_space() {
            return Ok(None);
        }
        let players = self.players(options)?;
        let start = self.initial_state(options, 0)?;
        let mut targets: Vec<String> = Vec::new();
        let mut index = HashMap::new();
        for viewer in players.iter().map(String::as_str).chain(["spectator"]) {
            for site in self.view(&start, viewer)?.map(|v| v.sites).unwrap_or_default() {
                if !index.contains_key(&site.id) {
                    index.insert(site.id.clone(), targets.len());
                    targets.push(site.id);
                }
            }
        }
        Ok(Some(ClickSpace { targets, index }))
    }

    /// Each of `moves` (the legal moves of `s`) as its click actions. An
    /// error if a move clicks what is no target, or two moves are clicked
    /// alike (clicks could not tell them apart).
    pub fn click_actions(
        &mut self,
        space: &ClickSpace,
        s: &State,
        moves: &[Move],
    ) -> Result<Vec<Vec<usize>>, GameError> {
        let mut out = Vec::with_capacity(moves.len());
        for m in moves {
            let Some(clicks) = self.move_clicks(s, m)? else {
                return Err(GameError::Rules("the rules have no move_clicks/3".into()));
            };
            let mut ids = Vec::with_capacity(clicks.len());
            for c in clicks {
                let Some(i) = space.target(&c) else {
                    let t = self.notation(s, m)?;
                    return Err(GameError::Rules(format!(
                        "move_clicks/3 of {t}: {c} is not a site of the start position's board, so it has no click action"
                    )));
                };
                ids.push(i);
            }
            out.push(ids);
        }
        let mut order: Vec<usize> = (0..out.len()).collect();
        order.sort_by(|&a, &b| out[a].cmp(&out[b]));
        if let Some(w) = order.windows(2).find(|w| out[w[0]] == out[w[1]]) {
            let (a, b) = (self.notation(s, &moves[w[0]])?, self.notation(s, &moves[w[1]])?);
            return Err(GameError::Rules(format!(
                "the legal moves {a} and {b} are clicked alike (move_clicks/3): click actions cannot tell them apart"
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::host::atom;
    use crate::game::Outcome;

    /// `m(X, Y)` of two integers.
    fn flat(x: i64, y: i64) -> Move {
        Move::new(Tmpl { cells: vec![Cell::Str(1), Cell::Fun(atom::MINUS, 2), Cell::Int(x), Cell::Int(y)], nvars: 0 })
    }

    fn one(c: Cell) -> Move {
        Move::new(Tmpl { cells: vec![c], nvars: 0 })
    }

    #[test]
    fn every_listed_move_has_its_action_and_no_other_move_has_one() {
        // 1,000 moves in 2,048 slots: hashes share slots, and the probes
        // wrap around the table's end.
        let moves: Vec<Move> = (0..1000).map(|i| flat(i / 40, i % 40)).collect();
        let space = ActionSpace::listed(moves.clone()).expect("no move twice");
        for (a, m) in moves.iter().enumerate() {
            assert_eq!(space.listed_action(m), Some(a));
        }
        assert_eq!(space.listed_action(&flat(25, 0)), None);
        assert_eq!(space.listed_action(&flat(0, 40)), None);
        // Same cells, other kinds: an atom is not the integer of its number.
        assert_eq!(space.listed_action(&one(Cell::Int(0))), None);
    }

    #[test]
    fn a_move_listed_twice_is_named() {
        let moves = vec![flat(1, 2), flat(3, 4), flat(1, 2)];
        let Err(again) = ActionSpace::listed(moves) else { panic!("a move listed twice must be refused") };
        assert_eq!(again, flat(1, 2));
    }

    #[test]
    fn cells_are_told_apart_by_kind_and_floats_by_their_bits() {
        let moves = vec![one(Cell::Int(0)), one(Cell::Flt(0.0)), one(Cell::Flt(-0.0)), one(Cell::Atom(atom::NIL))];
        let space = ActionSpace::listed(moves.clone()).expect("four different terms");
        for (a, m) in moves.iter().enumerate() {
            assert_eq!(space.listed_action(m), Some(a));
        }
        assert_eq!(space.listed_action(&one(Cell::Flt(1.0))), None);
    }

    /// A game whose moves are of every shape: those with a key (flat
    /// terms of atoms and small integers), found where the engine has
    /// them, and those without (nested, float, list, large
    /// integer, more arguments than a key holds), copied out and found by
    /// their cells.
    const SHAPES: &str = r#"
        title(shapes).
        players(_, [one, two]).
        initial_state(_, s(0)).
        to_move(_, one).
        game_over(s(1), winner(one)).
        move(s(0), M, s(1)) :- legal(M).
        move(s(0), M) :- legal(M).
        action_space(_, [m(1, 2), pass, 7, m(1, f(2)), m(1.5), big(1000000000000), [a, b],
                         m(a, b, c, d, e, f, g), m(-536870912), m(536870912), m(a, 1, b, 2, c, 3),
                         m(x, 2.5), m(2, 1), m(-536870913), f(pass)]).
        legal(m(2, 1)). legal(m(1.5)). legal(m(a, 1, b, 2, c, 3)). legal(pass). legal(f(pass)).
        legal(m(a, b, c, d, e, f, g)). legal(m(-536870912)). legal(7). legal(m(536870912)).
        legal([a, b]). legal(big(1000000000000)). legal(m(1, f(2))). legal(m(x, 2.5)). legal(m(1, 2)).
        legal(m(-536870913)).
    "#;

    fn shapes(extra: &str) -> (Game, ActionSpace, State) {
        let src = format!("{SHAPES}{extra}");
        let (mut game, _) = crate::loader::load_text(std::path::Path::new("shapes.rules"), &src).expect("loads");
        let opts = game.options_term(&[]).expect("no options");
        let space = game.action_space(&opts).expect("a space").expect("listed");
        let s = game.initial_state(&opts, 0).expect("a start");
        (game, space, s)
    }

    #[test]
    fn legal_moves_of_every_shape_are_numbered_as_their_cells_say() {
        let (mut game, space, s) = shapes("");
        let moves = game.moves(&s).expect("moves");
        assert_eq!(moves.len(), 15);
        // Each legal move's action, by its cells copied out.
        let by_cells: Vec<usize> = moves.iter().map(|m| space.listed_action(m).expect("in the space")).collect();
        assert_eq!(by_cells, [12, 4, 10, 1, 14, 7, 8, 2, 9, 6, 5, 3, 11, 0, 13]);
        // The same by the scan, keys read in place where moves have them.
        assert_eq!(game.legal_actions(&space, &s).expect("actions"), by_cells);
        // And by the step that lists the next position's actions (none
        // here: the game is over after any move).
        let next = game.after_action_listed(&s, None, &space, 0).expect("a step");
        assert_eq!(next.status.outcome, Some(Outcome::Winner("one".into())));
    }

    #[test]
    fn a_legal_move_the_space_lacks_is_named_with_a_key_or_without() {
        for (extra, named) in [("legal(m(3, 3)).", "m(3,3)"), ("legal(m(1, f(3))).", "m(1,f(3))")] {
            let (mut game, space, s) = shapes(extra);
            let err = game.legal_actions(&space, &s).expect_err("a move without an action").to_string();
            assert!(err.contains(named) && err.contains("has no integer action"), "{err}");
        }
        // A move that is not ground is no action either.
        let (mut game, space, s) = shapes("legal(m(_, 1)).");
        let err = game.legal_actions(&space, &s).expect_err("a move with a variable").to_string();
        assert!(err.contains("not ground"), "{err}");
    }

    #[test]
    fn a_long_move_is_found_by_all_its_cells() {
        // Longer than the words kept on the stack for most moves.
        let long = |last: i64| {
            let mut cells = vec![Cell::Str(1), Cell::Fun(atom::MINUS, 20)];
            cells.extend((0..19).map(Cell::Int));
            cells.push(Cell::Int(last));
            Move::new(Tmpl { cells, nvars: 0 })
        };
        let space = ActionSpace::listed(vec![long(100), long(200)]).expect("two moves");
        assert_eq!(space.listed_action(&long(200)), Some(1));
        assert_eq!(space.listed_action(&long(300)), None);
    }
}
