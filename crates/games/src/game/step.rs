//! A step of a game in one query: where a position stands
//! ([`Game::status`]: its result, or whose turn it is and whether chance
//! moves) and the position after a move with where it stands
//! ([`Game::after`]), what a front end asks at every ply (Python's
//! `State`), where asking `game_over/2`, `to_move/2`, `chance/1` and
//! `move/3` one by one would copy the position into the engine four times.
//! A GDL game on its network of propositions answers both without a query
//! ([`crate::gdl::step`]), where it can.

use super::{ActionSpace, Game, GameError, Move, Outcome, State, Walk, value_text};
use crate::engine::host::atom;
use crate::engine::{Arg, Cell, Scanned, Tmpl, Value};
use crate::gdl::step::{self, Standing};

/// A position after a move, and where it stands
/// ([`Game::after_listing`]).
#[derive(Clone, Debug)]
pub struct Next {
    pub state: State,
    pub status: Status,
    /// Its legal actions, where they came with the move.
    pub actions: Option<Vec<usize>>,
    /// The mark of a position a GDL game's network made: give it back
    /// with the position to spare the network reading it again.
    pub mark: Option<u64>,
}

/// Where a position stands ([`Game::status`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// The result, once the game is over.
    pub outcome: Option<Outcome>,
    /// Whose turn it is, while it is not.
    pub mover: Option<String>,
    /// Whether chance makes the move (`chance/1`).
    pub chance: bool,
}

impl Game {
    /// Where a position stands: its result, or whose turn it is and
    /// whether chance moves. One query, where [`Game::outcome`],
    /// [`Game::to_move`] and [`Game::chance`] are three; an error is
    /// theirs.
    pub fn status(&mut self, s: &State) -> Result<Status, GameError> {
        if let Some(st) = step::status(&mut self.engine, s.seen()) {
            return Ok(self.native_status(st));
        }
        let chance = self.chance_atom();
        let r = self.engine.call("$status", &[Arg::In(s.term()), Arg::In(&chance), Arg::Out], 1);
        match r.ok().and_then(|mut r| r.pop()) {
            Some(r) => self.status_of(&r[0]),
            // Failed, or an error: asked again one by one, for its message.
            None => self.status_slowly(s),
        }
    }

    /// The position after the legal move `m` of `s`, and where it stands:
    /// [`Game::play`] then [`Game::status`], in one query.
    pub fn after(&mut self, s: &State, m: &Move) -> Result<(State, Status), GameError> {
        self.after_listing(s, None, m, None).map(|n| (n.state, n.status))
    }

    /// [`Game::after`], with the legal actions of the position after
    /// (numbered in `space`) where they come at no extra cost: a GDL
    /// game's network lists them with the move (`None` otherwise: ask
    /// [`Game::legal_actions`]). `mark` is the one that came with `s`, if
    /// it was made so: it spares the network reading `s` again.
    pub fn after_listing(
        &mut self,
        s: &State,
        mark: Option<u64>,
        m: &Move,
        space: Option<&ActionSpace>,
    ) -> Result<Next, GameError> {
        self.after_with(s, mark, m, None, space)
    }

    /// [`Game::after_listing`] of the move of integer action `action` (of
    /// a listed space), which must be legal in `s`.
    pub fn after_action(
        &mut self,
        s: &State,
        mark: Option<u64>,
        space: &ActionSpace,
        action: usize,
    ) -> Result<Next, GameError> {
        let m = listed_move(space, action)?;
        self.after_with(s, mark, m, Some(action), Some(space))
    }

    /// [`Game::after_action`], with the legal actions of the position
    /// after listed too where the game goes on with a player to move: what
    /// a front end that steps by integer actions asks for next, as it must
    /// check the next action it is given. The rules answer the move, the
    /// status and the listing in one query (`'$after_scan'/4`: the position
    /// is copied into the engine once, and the next one not at all). A
    /// listing that fails, or gives a move the space lacks, leaves them
    /// unlisted, for the caller to list (and meet the error) when it asks.
    pub fn after_action_listed(
        &mut self,
        s: &State,
        mark: Option<u64>,
        space: &ActionSpace,
        action: usize,
    ) -> Result<Next, GameError> {
        let m = listed_move(space, action)?;
        let next = match self.native_after(s, mark, m, Some(action), Some(space)) {
            Some(next) => next,
            None => match self.after_scan(s, m, space) {
                Some(next) => return Ok(next),
                None => self.after_by_rules(s, m)?,
            },
        };
        let goes_on = next.status.outcome.is_none() && !next.status.chance;
        Ok(match next.actions {
            None if goes_on => Next { actions: self.legal_actions(space, &next.state).ok(), ..next },
            _ => next,
        })
    }

    fn after_with(
        &mut self,
        s: &State,
        mark: Option<u64>,
        m: &Move,
        action: Option<usize>,
        space: Option<&ActionSpace>,
    ) -> Result<Next, GameError> {
        match self.native_after(s, mark, m, action, space) {
            Some(next) => Ok(next),
            None => self.after_by_rules(s, m),
        }
    }

    /// The step on a GDL game's network, where it takes it.
    fn native_after(
        &mut self,
        s: &State,
        mark: Option<u64>,
        m: &Move,
        action: Option<usize>,
        space: Option<&ActionSpace>,
    ) -> Option<Next> {
        let number = |t: &Tmpl| space.and_then(|sp| sp.listed_action_of_cells(&t.cells));
        let listed = space.filter(|sp| sp.listed_moves().is_some()).map(|sp| (sp.id, &number as _));
        let a = step::after(&mut self.engine, s.seen(), mark, &m.0, action, listed)?;
        let status = self.native_status(a.standing);
        Some(Next { state: State::of_fluents(a.next), status, actions: a.actions, mark: Some(a.mark) })
    }

    /// The move, the status and the next position's listed actions in one
    /// query of the rules (`'$after_scan'/4`, which answers the next
    /// position, then its status, then its moves by `move/2`). `None`
    /// where the rules have no `move/2`, or the move or the status fails,
    /// errs or is not ground: the query one by one says why.
    fn after_scan(&mut self, s: &State, m: &Move, space: &ActionSpace) -> Option<Next> {
        if !self.has("move", 2) {
            return None;
        }
        let chance = self.chance_atom();
        let (mut next, mut status) = (None, None);
        let mut actions = Vec::with_capacity(32);
        // Whether every move listed is ground and in the space.
        let mut whole = true;
        let scanned = self.engine.scan(
            "$after_scan",
            &[Arg::In(s.term()), Arg::In(&m.0), Arg::In(&chance), Arg::Out],
            |answer| {
                let copy =
                    |answer: &mut Scanned| answer.cells().map(|(cells, nvars)| Tmpl { cells: cells.into(), nvars });
                if next.is_none() {
                    next = copy(answer);
                    next.is_some()
                } else if status.is_none() {
                    status = copy(answer);
                    status.is_some()
                } else {
                    match space.listed_action_of(answer) {
                        Some(a) => actions.push(a),
                        None => whole = false,
                    }
                    whole
                }
            },
        );
        let (next, status) = (next.filter(|t| t.nvars == 0)?, status?);
        let status = self.status_of(&status).ok()?;
        let goes_on = status.outcome.is_none() && !status.chance;
        let actions = (goes_on && whole && scanned.is_ok()).then_some(actions);
        Some(Next { state: State::new(next), status, actions, mark: None })
    }

    /// The step by `'$after'/5`, or, where that fails or errs, by `move/3`
    /// and the status asked one by one (for their messages).
    fn after_by_rules(&mut self, s: &State, m: &Move) -> Result<Next, GameError> {
        let chance = self.chance_atom();
        let r =
            self.engine.call("$after", &[Arg::In(s.term()), Arg::In(&m.0), Arg::In(&chance), Arg::Out, Arg::Out], 1);
        let (state, status) = match r.ok().and_then(|mut r| r.pop()) {
            Some(mut r) if r[0].nvars == 0 => {
                let status = self.status_of(&r[1])?;
                (State::new(r.swap_remove(0)), status)
            }
            _ => {
                let next = self.play(s, m)?;
                let status = self.status_slowly(&next)?;
                (next, status)
            }
        };
        Ok(Next { state, status, actions: None, mark: None })
    }

    /// A uniformly random game from `s` to its end, played by the steps a
    /// front end takes at each ply (a learning agent's loop): where the
    /// state stands, its legal actions, one drawn by `walk`, and the state
    /// after it ([`Game::status`], [`Game::legal_actions`],
    /// [`Game::after_action_listed`], which brings the next legal
    /// actions). The plies played. It measures what such a loop costs in
    /// the engine, beside [`Game::playout`]'s own. The actions must be
    /// listed.
    pub fn step_playout(&mut self, space: &ActionSpace, s: &State, walk: &mut Walk) -> Result<u64, GameError> {
        if space.listed_moves().is_none() {
            return Err(GameError::Rules("a step loop needs the actions listed (action_space/2)".into()));
        }
        let status = self.status(s)?;
        let mut at = Next { state: s.clone(), status, actions: None, mark: None };
        let mut plies = 0;
        while at.status.outcome.is_none() {
            let actions = match at.actions.take() {
                Some(actions) => actions,
                None => self.legal_actions(space, &at.state)?,
            };
            if actions.is_empty() {
                let mover = at.status.mover.unwrap_or_default();
                return Err(GameError::Rules(format!("{mover} is to move, with no legal move")));
            }
            let a = actions[walk.pick(actions.len())];
            at = self.after_action_listed(&at.state, at.mark, space, a)?;
            plies += 1;
        }
        Ok(plies)
    }

    /// A status as a native step gives it.
    fn native_status(&mut self, st: Standing) -> Status {
        if self.native_roles.is_empty() {
            let roles = step::roles(&mut self.engine);
            self.native_roles = roles.iter().map(|t| value_text(&self.engine.value(t))).collect();
        }
        match st {
            Standing::Over(Some(r)) => {
                Status { outcome: Some(Outcome::Winner(self.native_roles[r].clone())), mover: None, chance: false }
            }
            Standing::Over(None) => Status { outcome: Some(Outcome::Draw), mover: None, chance: false },
            Standing::ToMove(r) => Status { outcome: None, mover: Some(self.native_roles[r].clone()), chance: false },
        }
    }

    /// Whether `'$status'` asks `chance/1` (`true` where the rules have it).
    fn chance_atom(&self) -> Tmpl {
        let a = if self.has("chance", 1) { atom::TRUE } else { atom::FALSE };
        Tmpl { cells: vec![Cell::Atom(a)], nvars: 0 }
    }

    fn status_slowly(&mut self, s: &State) -> Result<Status, GameError> {
        Ok(match self.outcome(s)? {
            Some(o) => Status { outcome: Some(o), mover: None, chance: false },
            None => Status { outcome: None, mover: Some(self.to_move(s)?), chance: self.chance(s)? },
        })
    }

    /// A `'$status'/3` answer: `over(Result)` or `to_move(Player, Chance)`.
    fn status_of(&mut self, t: &Tmpl) -> Result<Status, GameError> {
        if self.status_cells.is_none() {
            let mut atom = |name: &str| self.engine.atom_term(name).cells[0];
            let (to_move, yes, no) = (atom("to_move"), atom("true"), atom("false"));
            self.status_cells = Some(StatusCells { to_move, yes, no, players: Vec::new() });
        }
        let cells = self.status_cells.as_mut().expect("made above");
        let fast = cells.to_move(t);
        if let Some((player, chance)) = fast
            && let Some((_, name)) = cells.players.iter().find(|(c, _)| *c == player)
        {
            return Ok(Status { outcome: None, mover: Some(name.clone()), chance });
        }
        let status = self.status_by_value(t)?;
        // The player's name, to read it from the cells next time.
        if let (Some((player, _)), Some(name)) = (fast, &status.mover) {
            let cells = self.status_cells.as_mut().expect("made above");
            if cells.players.len() < 64 {
                cells.players.push((player, name.clone()));
            }
        }
        Ok(status)
    }

    fn status_by_value(&mut self, t: &Tmpl) -> Result<Status, GameError> {
        match self.engine.value(t) {
            Value::Compound(f, mut a) if f == "over" && a.len() == 1 => {
                let o = self.outcome_of(a.pop().expect("one argument"), t)?;
                Ok(Status { outcome: Some(o), mover: None, chance: false })
            }
            Value::Compound(f, a) if f == "to_move" && a.len() == 2 => {
                let chance = a[1].as_atom() == Some("true");
                Ok(Status { outcome: None, mover: Some(value_text(&a[0])), chance })
            }
            _ => Err(GameError::Rules(format!("'$status'/3 gave {}", self.engine.term_text(t)))),
        }
    }
}

/// The cells `to_move(Player, Chance)` is made of, where the player is an
/// atom: a `'$status'/3` answer read at every step without building its
/// value (strings for every name) in the engine.
#[derive(Clone, Debug)]
pub(super) struct StatusCells {
    to_move: Cell,
    yes: Cell,
    no: Cell,
    /// The players met so far: an atom's cell and its name.
    players: Vec<(Cell, String)>,
}

impl StatusCells {
    /// The player's cell and whether chance moves, if `t` is
    /// `to_move(Atom, true)` or `to_move(Atom, false)`.
    fn to_move(&self, t: &Tmpl) -> Option<(Cell, bool)> {
        let &Cell::Str(k) = t.cells.first()? else { return None };
        let Cell::Atom(f) = self.to_move else { return None };
        match t.cells.get(k..k + 3)? {
            &[Cell::Fun(g, 2), player @ Cell::Atom(_), chance] if g == f => {
                let chance = match chance {
                    c if c == self.yes => true,
                    c if c == self.no => false,
                    _ => return None,
                };
                Some((player, chance))
            }
            _ => None,
        }
    }
}

/// The listed move of integer action `action`.
fn listed_move(space: &ActionSpace, action: usize) -> Result<&Move, GameError> {
    space
        .listed_moves()
        .and_then(|ms| ms.get(action))
        .ok_or_else(|| GameError::Rules(format!("no listed move has the action {action}")))
}
