//! A game in progress: [`Play`] holds where a game started, every move
//! made since (who made it, what it is called, who may see it) and the
//! position now, and does what every front end does with them: make a
//! move typed or chosen, draw chance's moves, take moves back, show a move
//! to a viewer as that viewer may see it, write the record and replay one.
//! The front ends (the terminal, a server session, batch jobs, the GGP
//! player, Python's `State`) keep only what is theirs: seats and
//! controllers, tokens, event streams, files, caches.
//!
//! A move may be made by its term alone ([`Play::make_term`]: what a
//! search or a learning agent does, where naming every move would cost a
//! query each); its notation is then found the first time it is shown.

use super::record::Record;
use super::{Game, GameError, LegalMove, Move, Secrecy, State, revealed, still_hidden};
use rand::Rng;

/// One move of a game in progress.
#[derive(Clone, Debug)]
pub struct Step {
    /// The position the move was made in.
    pub before: State,
    pub mv: Move,
    /// The move in the game's notation, once named.
    text: Option<String>,
    /// Who made it (chance's seat for a chance move).
    pub mover: String,
    /// Whether it was chance's move (`chance/1`).
    pub chance: bool,
    /// The position after it in the game's own notation (chess: FEN),
    /// where the rules give one and the play keeps them.
    pub position: Option<String>,
}

impl Step {
    /// The move in the game's notation: every move [`Play::make`] made or
    /// [`Play::undo`] took back has it; one made by its term has it once
    /// [`Play::name`] named it.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

/// A game in progress: its start, its moves, the position now.
#[derive(Clone, Debug)]
pub struct Play {
    start: State,
    state: State,
    steps: Vec<Step>,
    /// How each move is shown to the players other than its mover.
    secrecy: Vec<Secrecy>,
    /// Whether each move's `position_text/2` is kept (for records).
    keep_positions: bool,
}

/// A move as a viewer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown<'a> {
    /// The move's notation.
    Move(&'a str),
    /// A move the viewer may not see (yet): only who made it.
    Chosen(&'a str),
}

impl Shown<'_> {
    /// As the terminal and the web board write it: the move, or
    /// `(mover has chosen)`.
    pub fn written(self) -> String {
        match self {
            Shown::Move(text) => text.to_string(),
            Shown::Chosen(mover) => format!("({mover} has chosen)"),
        }
    }
}

/// A move taken back by [`Play::undo`].
#[derive(Clone, Debug)]
pub struct Undone {
    pub step: Step,
    /// Its notation.
    pub text: String,
    /// Whether it was still hidden from the players other than its mover.
    pub hidden: bool,
}

impl Play {
    /// A game starting at `start`.
    pub fn new(start: State) -> Play {
        Play { state: start.clone(), start, steps: Vec::new(), secrecy: Vec::new(), keep_positions: false }
    }

    /// The same game, keeping the position after each move in the game's
    /// notation (`position_text/2`) for its record.
    pub fn keeping_positions(mut self) -> Play {
        self.keep_positions = true;
        self
    }

    /// The position now.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Puts the game in a position its moves did not lead to, keeping the
    /// moves as they were: a position a viewer cannot tell from the real
    /// one (`sample_state/3`), or one a GDL-II player believes it is in.
    pub fn set_state(&mut self, s: State) {
        self.state = s;
    }

    /// The position the game started from.
    pub fn start(&self) -> &State {
        &self.start
    }

    /// The moves made, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The number of moves made.
    pub fn ply(&self) -> usize {
        self.steps.len()
    }

    /// Makes `m`, a legal move of the position now. Returns the earlier
    /// moves it reveals (hidden choices of a round it ends), by index.
    pub fn make(&mut self, game: &mut Game, m: &LegalMove) -> Result<Vec<usize>, GameError> {
        let mover = game.to_move(&self.state)?;
        let chance = game.chance(&self.state)?;
        self.push(game, mover, chance, m.mv.clone(), m.next.clone(), Some(m.text.clone()))
    }

    /// Makes `mv`, a legal move of the position now leading to `next`, by
    /// `mover` (chance's seat where `chance`), as the caller already knows
    /// them; the move is named when first shown. Returns the earlier moves
    /// it reveals, by index.
    pub fn make_term(
        &mut self,
        game: &mut Game,
        mover: String,
        chance: bool,
        mv: Move,
        next: State,
    ) -> Result<Vec<usize>, GameError> {
        self.push(game, mover, chance, mv, next, None)
    }

    fn push(
        &mut self,
        game: &mut Game,
        mover: String,
        chance: bool,
        mv: Move,
        next: State,
        text: Option<String>,
    ) -> Result<Vec<usize>, GameError> {
        let secrecy = game.secrecy(&self.state, &mover)?;
        let position = if self.keep_positions { game.position_text(&next)? } else { None };
        let shown = revealed(&self.secrecy, &secrecy);
        let before = std::mem::replace(&mut self.state, next);
        self.steps.push(Step { before, mv, text, mover, chance, position });
        self.secrecy.push(secrecy);
        Ok(shown)
    }

    /// Makes the move a person typed (its notation, a unique prefix or its
    /// number among the legal moves): the move made. A typed move that is
    /// no legal move is an error that lists them; nothing is played.
    pub fn make_typed(&mut self, game: &mut Game, typed: &str) -> Result<LegalMove, GameError> {
        let legal = game.legal_moves(&self.state)?;
        let k = game.match_move(&legal, typed)?;
        self.make(game, &legal[k])?;
        Ok(legal.into_iter().nth(k).expect("a legal move"))
    }

    /// Chance's moves (`chance/1`), drawn uniformly with `rng` while the
    /// game is not over and chance is to move: the moves made, by index.
    pub fn chance_moves(&mut self, game: &mut Game, rng: &mut impl Rng) -> Result<Vec<usize>, GameError> {
        let mut made = Vec::new();
        while game.outcome(&self.state)?.is_none() && game.chance(&self.state)? {
            let legal = game.legal_moves(&self.state)?;
            if legal.is_empty() {
                return Err(GameError::Rules("no legal move in a position that is not over".into()));
            }
            let k = rng.gen_range(0..legal.len());
            self.make(game, &legal[k])?;
            made.push(self.steps.len() - 1);
        }
        Ok(made)
    }

    /// Takes back the last move, then goes on taking back while `again`
    /// says so of the seat to move in the position reached (a computer
    /// seat, say); chance's moves go back with the move they followed.
    /// Returns the moves taken back, the last made first.
    pub fn undo(&mut self, game: &mut Game, mut again: impl FnMut(&str) -> bool) -> Result<Vec<Undone>, GameError> {
        let mut undone = Vec::new();
        while let Some(i) = self.steps.len().checked_sub(1) {
            let hidden = self.hidden_mover(i).is_some();
            let text = self.name(game, i)?.to_string();
            let step = self.steps.pop().expect("a move");
            self.secrecy.pop();
            self.state = step.before.clone();
            undone.push(Undone { step, text, hidden });
            if game.chance(&self.state)? {
                continue;
            }
            let mover = game.to_move(&self.state)?;
            if !again(&mover) {
                break;
            }
        }
        Ok(undone)
    }

    /// Who made move `i`, while it is still hidden from the other players
    /// (a private move, or a choice whose round is not over).
    pub fn hidden_mover(&self, i: usize) -> Option<&str> {
        still_hidden(&self.secrecy, i)
    }

    /// Move `i` in the game's notation (`notation/3`, in the position it
    /// was made in), found once and kept.
    pub fn name(&mut self, game: &mut Game, i: usize) -> Result<&str, GameError> {
        let step = &mut self.steps[i];
        if step.text.is_none() {
            step.text = Some(game.notation(&step.before, &step.mv)?);
        }
        Ok(step.text.as_deref().expect("just named"))
    }

    /// Move `i` as `viewer` (a seat, or `spectator`) may see it.
    pub fn shown(&mut self, game: &mut Game, i: usize, viewer: &str) -> Result<Shown<'_>, GameError> {
        if self.hidden_mover(i).is_some_and(|mover| mover != viewer) {
            return Ok(Shown::Chosen(&self.steps[i].mover));
        }
        self.name(game, i).map(Shown::Move)
    }

    /// Every move as `viewer` may see it, written as [`Shown::written`].
    pub fn history(&mut self, game: &mut Game, viewer: &str) -> Result<Vec<String>, GameError> {
        (0..self.ply()).map(|i| self.shown(game, i, viewer).map(Shown::written)).collect()
    }

    /// `record` with this game's moves (their notation), and the position
    /// after each where the play keeps them.
    pub fn fill_record(&mut self, game: &mut Game, record: &mut Record) -> Result<(), GameError> {
        record.moves = (0..self.ply()).map(|i| Ok((self.name(game, i)?.to_string(), 0))).collect::<Result<_, _>>()?;
        record.positions = self.steps.iter().map_while(|s| s.position.clone()).collect();
        Ok(())
    }

    /// Replays `moves` (as a record holds them: notation and line) from
    /// the position now, checking each. The error names the line of the
    /// first move that is not legal, or made after the game was over.
    pub fn replay(&mut self, game: &mut Game, moves: &[(String, usize)]) -> Result<(), (usize, GameError)> {
        for (typed, line) in moves {
            if game.outcome(&self.state).map_err(|e| (*line, e))?.is_some() {
                let why = format!("the game was already over before `{typed}`");
                return Err((*line, GameError::Rules(why)));
            }
            self.make_typed(game, typed).map_err(|e| (*line, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Spec;
    use rand::SeedableRng;
    use std::path::Path;

    /// Chance deals 1 to 3, then `a` picks 1 or 2 unseen by `b`, then `b`
    /// picks: `a` wins when the sum is even.
    const GUESS: &str = "
        title('Guess').
        players(_, [a, b]).
        initial_state(_, s(dealer, none, [])).
        to_move(s(P, _, _), P).
        chance(s(dealer, _, _)).
        hidden_move(s(a, _, _)).
        move(s(dealer, none, []), deal(N), s(a, N, [])) :- member(N, [1, 2, 3]).
        move(s(a, N, []), pick(X), s(b, N, [X])) :- member(X, [1, 2]).
        move(s(b, N, [X]), pick(Y), s(over, N, [X, Y])) :- member(Y, [1, 2]).
        game_over(s(over, N, [X, Y]), winner(W)) :- ( (N + X + Y) mod 2 =:= 0 -> W = a ; W = b ).
    ";

    fn guess() -> (Game, Play) {
        let (mut game, _) = Spec::new(Path::new("guess.rules"), GUESS).build().unwrap();
        let o = game.options_term(&[]).unwrap();
        let start = game.initial_state(&o, 0).unwrap();
        (game, Play::new(start))
    }

    #[test]
    fn a_hidden_choice_is_shown_to_the_others_once_its_round_is_over() {
        let (mut g, mut p) = guess();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(p.chance_moves(&mut g, &mut rng).unwrap(), vec![0]);
        assert!(p.steps()[0].chance && p.steps()[0].mover == "dealer");
        assert!(p.chance_moves(&mut g, &mut rng).unwrap().is_empty(), "a is to move, not chance");
        p.make_typed(&mut g, "pick(1)").unwrap();
        assert_eq!(p.shown(&mut g, 1, "b").unwrap(), Shown::Chosen("a"));
        assert_eq!(p.shown(&mut g, 1, "spectator").unwrap(), Shown::Chosen("a"));
        assert_eq!(p.shown(&mut g, 1, "a").unwrap(), Shown::Move("pick(1)"));
        let legal = g.legal_moves(p.state()).unwrap();
        let reveal = p.make(&mut g, &legal[1]).unwrap();
        assert_eq!(reveal, vec![1], "b's open move ends the round");
        assert_eq!(p.shown(&mut g, 1, "b").unwrap(), Shown::Move("pick(1)"));
        assert_eq!(p.history(&mut g, "b").unwrap()[1..], ["pick(1)", "pick(2)"]);
        assert!(g.outcome(p.state()).unwrap().is_some());
        assert_eq!(p.ply(), 3);
    }

    #[test]
    fn undo_takes_chance_moves_back_with_the_move_they_followed() {
        let (mut g, mut p) = guess();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        p.chance_moves(&mut g, &mut rng).unwrap();
        p.make_typed(&mut g, "pick(2)").unwrap();
        p.make_typed(&mut g, "pick(1)").unwrap();
        let back = p.undo(&mut g, |_| false).unwrap();
        assert_eq!(back.iter().map(|u| (u.text.as_str(), u.hidden)).collect::<Vec<_>>(), [("pick(1)", false)]);
        // a's choice is still hidden when it is taken back.
        let back = p.undo(&mut g, |_| false).unwrap();
        assert_eq!(back.iter().map(|u| (u.text.as_str(), u.hidden)).collect::<Vec<_>>(), [("pick(2)", true)]);
        // Back to the deal: chance's move goes too, and nothing is left.
        let back = p.undo(&mut g, |_| false).unwrap();
        assert_eq!(back.len(), 1);
        assert!(back[0].step.chance);
        assert_eq!(p.ply(), 0);
        assert_eq!(p.state(), p.start());
        assert!(p.undo(&mut g, |_| false).unwrap().is_empty());
    }

    #[test]
    fn undo_goes_on_while_asked_to() {
        let (mut g, mut p) = guess();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        p.chance_moves(&mut g, &mut rng).unwrap();
        p.make_typed(&mut g, "pick(2)").unwrap();
        p.make_typed(&mut g, "pick(2)").unwrap();
        // b is a computer: taking back its move reaches b's turn, so it
        // goes on to a's move, back to a person's turn.
        let back = p.undo(&mut g, |seat| seat == "b").unwrap();
        assert_eq!(back.iter().map(|u| u.step.mover.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(g.to_move(p.state()).unwrap(), "a");
        // The deal goes back with nothing after it.
        assert_eq!(p.undo(&mut g, |_| true).unwrap().len(), 1);
        assert_eq!(p.ply(), 0);
    }

    #[test]
    fn a_record_replays_to_the_same_position_and_a_bad_move_names_its_line() {
        let (mut g, mut p) = guess();
        let start = p.start().clone();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        p.chance_moves(&mut g, &mut rng).unwrap();
        p.make_typed(&mut g, "pick(1)").unwrap();
        p.make_typed(&mut g, "pick(2)").unwrap();
        let mut record = Record::default();
        p.fill_record(&mut g, &mut record).unwrap();
        assert_eq!(record.moves.len(), 3);
        assert!(record.positions.is_empty(), "the game has no position_text/2");
        let mut again = Play::new(start.clone());
        again.replay(&mut g, &record.moves).unwrap();
        assert_eq!(again.state(), p.state());
        let moves = vec![(record.moves[0].0.clone(), 7), ("pick(3)".to_string(), 8)];
        let (line, e) = Play::new(start.clone()).replay(&mut g, &moves).unwrap_err();
        assert_eq!(line, 8);
        assert!(matches!(e, GameError::IllegalMove { .. }), "{e}");
        let mut past_end = record.moves.clone();
        past_end.push(("pick(1)".to_string(), 9));
        let (line, e) = Play::new(start).replay(&mut g, &past_end).unwrap_err();
        assert_eq!(line, 9);
        assert!(e.to_string().contains("already over"), "{e}");
    }

    #[test]
    fn a_move_made_by_its_term_is_named_when_first_shown() {
        let (mut g, mut p) = guess();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        p.chance_moves(&mut g, &mut rng).unwrap();
        let legal = g.legal_moves(p.state()).unwrap();
        let (mv, next) = (legal[0].mv.clone(), legal[0].next.clone());
        assert_eq!(p.make_term(&mut g, "a".into(), false, mv, next).unwrap(), Vec::<usize>::new());
        assert_eq!(p.steps()[1].text(), None, "not named yet");
        assert_eq!(p.shown(&mut g, 1, "b").unwrap(), Shown::Chosen("a"), "hidden all the same");
        assert_eq!(p.steps()[1].text(), None, "a hidden move shown to another is not named");
        assert_eq!(p.shown(&mut g, 1, "a").unwrap(), Shown::Move("pick(1)"));
        assert_eq!(p.steps()[1].text(), Some("pick(1)"));
        assert_eq!(p.history(&mut g, "b").unwrap()[1], "(a has chosen)");
    }

    #[test]
    fn status_and_after_say_what_the_queries_one_by_one_say() {
        use crate::game::Status;
        let (mut g, p) = guess();
        let s = p.state().clone();
        let dealer = Status { outcome: None, mover: Some("dealer".into()), chance: true };
        assert_eq!(g.status(&s).unwrap(), dealer);
        let deals = g.legal_moves(&s).unwrap();
        let (next, st) = g.after(&s, &deals[1].mv).unwrap();
        assert_eq!(next, deals[1].next);
        assert_eq!(st, Status { outcome: None, mover: Some("a".into()), chance: false });
        let e = g.after(&next, &deals[0].mv).unwrap_err();
        assert!(matches!(e, GameError::IllegalMove { .. }), "a deal when a is to pick: {e}");
        let mut s = next;
        for _ in 0..2 {
            let m = g.legal_moves(&s).unwrap().remove(0);
            let (n, st) = g.after(&s, &m.mv).unwrap();
            assert_eq!(st.outcome, g.outcome(&n).unwrap());
            s = n;
        }
        let st = g.status(&s).unwrap();
        assert!(st.outcome.is_some() && st.mover.is_none(), "{st:?}");
        // Where to_move/2 fails, the error is to_move/2's.
        let broken =
            "title(b). players(_, [a]). initial_state(_, s). to_move(t, a). move(s, go, s). game_over(t, draw).";
        let (mut g, _) = Spec::new(Path::new("broken.rules"), broken).build().unwrap();
        let o = g.options_term(&[]).unwrap();
        let s = g.initial_state(&o, 0).unwrap();
        assert_eq!(g.status(&s).unwrap_err().to_string(), g.to_move(&s).unwrap_err().to_string());
    }
}
