//! A step of a game in one query: where a position stands
//! ([`Game::status`]: its result, or whose turn it is and whether chance
//! moves) and the position after a move with where it stands
//! ([`Game::after`]), what a front end asks at every ply (Python's
//! `State`), where asking `game_over/2`, `to_move/2`, `chance/1` and
//! `move/3` one by one would copy the position into the engine four times.

use super::{Game, GameError, Move, Outcome, State, value_text};
use crate::engine::host::atom;
use crate::engine::{Arg, Cell, Tmpl, Value};

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
        let chance = self.chance_atom();
        let r = self.engine.call("$status", &[Arg::In(&s.0), Arg::In(&chance), Arg::Out], 1);
        match r.ok().and_then(|mut r| r.pop()) {
            Some(r) => self.status_of(&r[0]),
            // Failed, or an error: asked again one by one, for its message.
            None => self.status_slowly(s),
        }
    }

    /// The position after the legal move `m` of `s`, and where it stands:
    /// [`Game::play`] then [`Game::status`], in one query.
    pub fn after(&mut self, s: &State, m: &Move) -> Result<(State, Status), GameError> {
        let chance = self.chance_atom();
        let r = self.engine.call("$after", &[Arg::In(&s.0), Arg::In(&m.0), Arg::In(&chance), Arg::Out, Arg::Out], 1);
        match r.ok().and_then(|mut r| r.pop()) {
            Some(mut r) if r[0].nvars == 0 => {
                let status = self.status_of(&r[1])?;
                Ok((State(r.swap_remove(0)), status))
            }
            _ => {
                let next = self.play(s, m)?;
                let status = self.status_slowly(&next)?;
                Ok((next, status))
            }
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
