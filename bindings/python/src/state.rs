//! `State`: a position of a game, with the moves that led to it (a
//! `game::Play`, as every front end keeps a game in progress). It changes
//! in place when a move is applied (`clone()` keeps a copy), and remembers
//! what it has asked the rules (whose turn, the moves) until then.

use crate::errors::{AmbiguousMove, IllegalMove, OrRaise, to_py};
use crate::games::{Actions, Clicks, Core, Engine, Game, MAX_CLICKS, Numbered};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::sync::Arc;
use tabula::game::explain::{self, Verdict};
use tabula::game::{self, GameError, Move, Outcome, Play, Shown};

/// What the rules said of a position: its result and whose turn it is are
/// asked with the move that leads to it (in one release of the GIL), the
/// legal moves, their actions, texts and clicks when first needed (a
/// learning agent asks only for the actions, found without the moves
/// being copied out of the engine).
#[derive(Clone, Default)]
struct Known {
    /// The result (`Some(None)`: not over).
    outcome: Option<Option<Outcome>>,
    mover: Option<String>,
    /// Whether chance makes the move (`chance/1`).
    chance: bool,
    moves: Option<Vec<Move>>,
    texts: Option<Vec<String>>,
    actions: Option<Vec<usize>>,
    /// Each legal move's clicks, as targets (with click actions).
    clicks: Option<Vec<Vec<usize>>>,
    /// The mark a GDL game's network gave with the position
    /// (`game::Next::mark`).
    mark: Option<u64>,
}

/// A position of a game.
#[pyclass(module = "tabula")]
#[derive(Clone)]
pub struct State {
    core: Arc<Core>,
    /// The position and the moves made; each move is named (its notation
    /// found) only when it is shown.
    play: Play,
    known: Known,
    /// With click actions: the targets clicked so far of the move being
    /// made.
    clicked: Vec<usize>,
}

impl State {
    pub fn new(core: Arc<Core>, state: game::State) -> State {
        State { core, play: Play::new(state), known: Known::default(), clicked: Vec::new() }
    }

    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }

    pub fn position(&self) -> &game::State {
        self.play.state()
    }

    /// Asks for the result and the player to move, once.
    fn status(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.known.outcome.is_some() {
            return Ok(());
        }
        let s = self.play.state();
        self.known = self.core.with(py, |e| examine(e, s)).or_raise()?;
        Ok(())
    }

    fn over(&mut self, py: Python<'_>) -> PyResult<bool> {
        self.status(py)?;
        Ok(matches!(self.known.outcome, Some(Some(_))))
    }

    /// The legal moves (none when the game is over).
    fn moves(&mut self, py: Python<'_>) -> PyResult<&Vec<Move>> {
        self.status(py)?;
        if self.known.moves.is_none() {
            let over = matches!(self.known.outcome, Some(Some(_)));
            let s = self.play.state();
            let moves = if over { Vec::new() } else { self.core.with(py, |e| e.game.moves(s)).or_raise()? };
            self.known.moves = Some(moves);
        }
        Ok(self.known.moves.as_ref().expect("just listed"))
    }

    fn texts(&mut self, py: Python<'_>) -> PyResult<&Vec<String>> {
        if self.known.texts.is_none()
            && let Some(texts) = self.texts_of_actions(py)
        {
            self.known.texts = Some(texts);
        }
        if self.known.texts.is_none() {
            self.moves(py)?;
            let (s, moves) = (self.play.state(), self.known.moves.as_ref().expect("listed"));
            let texts = self
                .core
                .with(py, |e| moves.iter().map(|m| e.game.notation(s, m)).collect::<Result<Vec<_>, _>>())
                .or_raise()?;
            self.known.texts = Some(texts);
        }
        Ok(self.known.texts.as_ref().expect("just set"))
    }

    /// The legal moves' texts as their actions' (listed once for the
    /// game), where a move's notation does not depend on the position:
    /// no move copied out of the engine, none named again. `None` where
    /// that is not so, or a legal move has no action (the moves then say).
    fn texts_of_actions(&mut self, py: Python<'_>) -> Option<Vec<String>> {
        let (n, actions) = self.numbered_texts(py)?;
        let texts = n.texts.as_ref().expect("numbered_texts has them");
        Some(actions.iter().map(|&a| texts[a].clone()).collect())
    }

    /// The numbering of the moves with their texts, and the legal actions,
    /// where a move's notation does not depend on the position (its text
    /// is its action's); `None` otherwise.
    fn numbered_texts(&mut self, py: Python<'_>) -> Option<(Arc<Numbered>, &Vec<usize>)> {
        if !self.core.has_actions || self.core.notation_needs_position {
            return None;
        }
        let Ok(Actions::Moves(n)) = self.core.actions(py) else { return None };
        n.texts.as_ref()?;
        let actions = self.move_actions(py).ok()?;
        Some((n, actions))
    }

    /// Each legal move's clicks, as targets.
    fn move_clicks(&mut self, py: Python<'_>, targets: &Clicks) -> PyResult<&Vec<Vec<usize>>> {
        if self.known.clicks.is_none() {
            self.moves(py)?;
            let (s, moves) = (self.play.state(), self.known.moves.as_ref().expect("listed"));
            let clicks = self.core.with(py, |e| e.game.click_actions(targets, s, moves)).or_raise()?;
            self.known.clicks = Some(clicks);
        }
        Ok(self.known.clicks.as_ref().expect("just set"))
    }

    /// With click actions: the actions that continue the clicks made so
    /// far (ascending), and the legal move those clicks make, if one does.
    fn next_clicks(&mut self, py: Python<'_>, targets: &Clicks) -> PyResult<(Vec<usize>, Option<usize>)> {
        let n = self.clicked.len();
        let clicked = self.clicked.clone();
        let clicks = self.move_clicks(py, targets)?;
        let mut next = Vec::new();
        let mut made = None;
        for (i, c) in clicks.iter().enumerate().filter(|(_, c)| c.starts_with(&clicked)) {
            match c.get(n) {
                Some(&t) => next.push(t),
                None => made = Some(i),
            }
        }
        next.sort_unstable();
        next.dedup();
        if made.is_some() && !next.is_empty() {
            next.push(targets.end());
        }
        Ok((next, made))
    }

    /// The legal moves' actions, in the order of the moves.
    fn move_actions(&mut self, py: Python<'_>) -> PyResult<&Vec<usize>> {
        if self.known.actions.is_none() {
            let space = self.core.space(py)?;
            self.status(py)?;
            let actions = if self.known.moves.is_none() && space.space.listed_moves().is_some() {
                // Listed, the moves not asked for: the engine finds each
                // move's action without the moves being copied out.
                let over = matches!(self.known.outcome, Some(Some(_)));
                let s = self.play.state();
                if over {
                    Vec::new()
                } else {
                    self.core.with(py, |e| e.game.legal_actions(&space.space, s)).or_raise()?
                }
            } else {
                self.moves(py)?;
                let (s, moves) = (self.play.state(), self.known.moves.as_ref().expect("listed"));
                self.core
                    .with(py, |e| -> Result<Vec<usize>, GameError> {
                        moves
                            .iter()
                            .map(|m| e.game.action_of(&space.space, m)?.ok_or_else(|| no_action(e, s, m)))
                            .collect()
                    })
                    .or_raise()?
            };
            self.known.actions = Some(actions);
        }
        Ok(self.known.actions.as_ref().expect("just set"))
    }

    /// Legal move `i` of the position (its `i`th action's, when only the
    /// actions were asked for).
    fn legal_move(&mut self, py: Python<'_>, i: usize) -> PyResult<Move> {
        if let Some(moves) = &self.known.moves {
            return Ok(moves[i].clone());
        }
        let a = self.known.actions.as_ref().expect("the actions were listed")[i];
        let space = self.core.space(py)?;
        Ok(space.space.listed_moves().expect("a listed space")[a].clone())
    }

    /// A click action: it continues the move being clicked, and makes the
    /// move when the clicks name one and no other goes on from them, or
    /// when it is the end action.
    fn click(&mut self, py: Python<'_>, targets: &Clicks, action: i64) -> PyResult<()> {
        let (next, made) = self.next_clicks(py, targets)?;
        let ends = next.is_empty() || next.last() == Some(&targets.end());
        let Some(a) = usize::try_from(action).ok().filter(|a| next.contains(a) || (ends && *a == targets.end())) else {
            let what = usize::try_from(action).ok().and_then(|a| self.core.action_text(py, a).ok());
            let what = what.map_or_else(|| format!("action {action}"), |t| format!("{t} (action {action})"));
            return Err(self.illegal(py, what));
        };
        if a == targets.end() {
            let i = made.expect("the end action is legal only where a move is made");
            let m = self.known.moves.as_ref().expect("listed with the clicks")[i].clone();
            return self.make(py, m, None);
        }
        self.clicked.push(a);
        let (next, made) = self.next_clicks(py, targets)?;
        if next.is_empty()
            && let Some(i) = made
        {
            let m = self.known.moves.as_ref().expect("listed with the clicks")[i].clone();
            self.make(py, m, None)?;
        }
        Ok(())
    }

    /// Makes the legal move `mv`, and asks the rules about the position it
    /// leads to (in the same release of the GIL): where it stands, and its
    /// legal actions where they come with the move (a GDL game's network)
    /// or the move was given by its integer action (a listed space).
    /// `action` is the move's integer action, where it is known.
    fn make(&mut self, py: Python<'_>, mv: Move, action: Option<usize>) -> PyResult<()> {
        let mover = self.known.mover.clone().unwrap_or_default();
        let (chance, mark) = (self.known.chance, self.known.mark);
        let space = match self.core.has_actions {
            true => self.core.space(py).ok(),
            false => None,
        };
        let play = &mut self.play;
        let known = self
            .core
            .with(py, |e| -> Result<_, GameError> {
                let space = space.as_ref().map(|n| &n.space);
                let next = match (action, space) {
                    // The next position's actions come too: the next
                    // action must be checked against them.
                    (Some(a), Some(sp)) if sp.listed_moves().is_some() => {
                        e.game.after_action_listed(play.state(), mark, sp, a)?
                    }
                    _ => e.game.after_listing(play.state(), mark, &mv, space)?,
                };
                play.make_term(&mut e.game, mover, chance, mv, next.state)?;
                Ok(Known { actions: next.actions, mark: next.mark, ..known_of(next.status) })
            })
            .or_raise()?;
        self.known = known;
        self.clicked.clear();
        Ok(())
    }

    /// Which legal move a person typed (`Game::match_text`).
    fn find_typed(&mut self, py: Python<'_>, typed: &str) -> PyResult<usize> {
        if self.known.texts.is_none()
            && let Some((n, actions)) = self.numbered_texts(py)
        {
            // The texts are the actions': read where they are, no copy.
            let texts = n.texts.as_ref().expect("numbered_texts has them");
            // A legal move's text as given (what a program types).
            if let Some(i) = actions.iter().position(|&a| texts[a] == typed) {
                return Ok(i);
            }
            let refs: Vec<&str> = actions.iter().map(|&a| texts[a].as_str()).collect();
            return game::match_typed(&refs, typed).map_err(to_py);
        }
        self.texts(py)?;
        let texts = self.known.texts.as_ref().expect("just listed");
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        match &self.known.moves {
            Some(moves) => {
                let moves: Vec<&Move> = moves.iter().collect();
                self.core.with(py, |e| e.game.match_text(&moves, &refs, typed)).or_raise()
            }
            // Named by their actions: a notation that needs no position.
            None => game::match_typed(&refs, typed).map_err(to_py),
        }
    }

    /// The moves made, as `viewer` may see them (a move still hidden from
    /// the viewer is `?`); all in notation for `None`.
    fn seen_moves(&mut self, py: Python<'_>, viewer: Option<&str>) -> PyResult<Vec<String>> {
        let play = &mut self.play;
        self.core
            .with(py, |e| {
                (0..play.ply())
                    .map(|i| match viewer {
                        None => play.name(&mut e.game, i).map(str::to_string),
                        Some(v) => play.shown(&mut e.game, i, v).map(|shown| match shown {
                            Shown::Move(text) => text.to_string(),
                            Shown::Chosen(_) => "?".to_string(),
                        }),
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .or_raise()
    }

    fn illegal(&mut self, py: Python<'_>, what: String) -> PyErr {
        let legal = self.texts(py).cloned().unwrap_or_default();
        to_py(GameError::IllegalMove { text: what, legal })
    }
}

/// The result of `s`, and if it is not over, the player to move.
fn examine(e: &mut Engine, s: &game::State) -> Result<Known, GameError> {
    e.game.status(s).map(known_of)
}

fn known_of(s: game::Status) -> Known {
    Known { outcome: Some(s.outcome), mover: s.mover, chance: s.chance, ..Known::default() }
}

/// The error of a legal move without an integer action.
fn no_action(e: &mut Engine, s: &game::State, m: &Move) -> GameError {
    let t = e.game.notation(s, m).unwrap_or_else(|_| e.game.engine().term_text(&m.0));
    GameError::Rules(format!("the legal move {t} has no integer action (`tabula check` finds such moves)"))
}

/// A state from its pickle: the position, the start and the moves made
/// (each with its mover and whether chance made it), as terms. The moves
/// are made again from the start, so a pickle too is held to the rules.
#[pyfunction]
#[pyo3(signature = (game, term, start, moves, clicked = Vec::new()))]
pub fn _state_again(
    py: Python<'_>,
    game: &Game,
    term: &str,
    start: &str,
    moves: Vec<(String, String, bool)>,
    clicked: Vec<usize>,
) -> PyResult<State> {
    let play = game
        .core
        .with(py, |e| -> Result<_, GameError> {
            let mut play = Play::new(e.game.parse_state(start)?);
            for (mover, m, chance) in moves {
                let mv = Move::new(e.game.engine().parse_term(&m).map_err(|err| GameError::Rules(err.to_string()))?);
                let next = e.game.play(play.state(), &mv)?;
                play.make_term(&mut e.game, mover, chance, mv, next)?;
            }
            // The position may be a sample of one the moves led to.
            play.set_state(e.game.parse_state(term)?);
            Ok(play)
        })
        .or_raise()?;
    Ok(State { core: game.core.clone(), play, known: Known::default(), clicked })
}

fn outcome_dict<'py>(py: Python<'py>, o: &Outcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match o {
        Outcome::Winner(p) => {
            d.set_item("result", "winner")?;
            d.set_item("player", p)?;
        }
        Outcome::Draw => d.set_item("result", "draw")?,
    }
    Ok(d)
}

#[pymethods]
impl State {
    /// The seat to move, or `None` when the game is over.
    #[getter(to_move)]
    fn mover(&mut self, py: Python<'_>) -> PyResult<Option<String>> {
        self.status(py)?;
        Ok(self.known.mover.clone())
    }

    /// The index of the seat to move in `Game.players`, or -1 when over or
    /// where chance moves (`is_chance_node`).
    #[getter]
    fn current_player(&mut self, py: Python<'_>) -> PyResult<i64> {
        self.status(py)?;
        Ok(match &self.known.mover {
            Some(m) => self.core.players.iter().position(|p| p == m).map_or(-1, |i| i as i64),
            None => -1,
        })
    }

    /// Whether chance makes the next move (`chance/1`): one of the legal
    /// moves, uniformly at random; `to_move` then names the chance role.
    fn is_chance_node(&mut self, py: Python<'_>) -> PyResult<bool> {
        self.status(py)?;
        Ok(self.known.chance)
    }

    fn is_over(&mut self, py: Python<'_>) -> PyResult<bool> {
        self.over(py)
    }

    /// `None` while the game goes on; then `{"result": "winner", "player":
    /// P}` or `{"result": "draw"}`.
    fn outcome<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.status(py)?;
        match &self.known.outcome {
            Some(Some(o)) => Ok(Some(outcome_dict(py, o)?)),
            _ => Ok(None),
        }
    }

    /// Each seat's result, zero-sum: 1 to the winner and -1/(n-1) to the
    /// others, 0 to all on a draw, 0 to all while the game goes on.
    fn returns(&mut self, py: Python<'_>) -> PyResult<Vec<f64>> {
        self.status(py)?;
        let n = self.core.players.len();
        Ok(match &self.known.outcome {
            Some(Some(Outcome::Winner(w))) => {
                let lose = -1.0 / (n.max(2) - 1) as f64;
                self.core.players.iter().map(|p| if p == w { 1.0 } else { lose }).collect()
            }
            _ => vec![0.0; n],
        })
    }

    /// The legal moves in notation, in the order the rules give them.
    fn legal_moves<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let core = Arc::clone(&self.core);
        if self.known.texts.is_none()
            && let Some((n, actions)) = self.numbered_texts(py)
        {
            return core.action_text_list(py, n.texts.as_ref().expect("numbered_texts has them"), actions);
        }
        PyList::new(py, self.texts(py)?)
    }

    /// The legal moves as integer actions, ascending.
    fn legal_actions<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.over(py)? {
            return Ok(PyList::empty(py));
        }
        if let Actions::Clicks(c) = self.core.actions(py)? {
            let (next, made) = self.next_clicks(py, &c)?;
            // A move with nothing to click (a pass) is made by ending it.
            let next = if next.is_empty() && made.is_some() { vec![c.end()] } else { next };
            return self.core.action_list(py, &next);
        }
        self.move_actions(py)?;
        let a = self.known.actions.as_ref().expect("just listed");
        if a.is_sorted() {
            return self.core.action_list(py, a);
        }
        let mut a = a.clone();
        a.sort_unstable();
        self.core.action_list(py, &a)
    }

    /// Makes a move: its notation (or a unique prefix, or its number in
    /// `legal_moves()` from 1, as typed in `tabula play`), or an integer
    /// action. An illegal move raises `IllegalMove` and changes nothing.
    fn apply(&mut self, py: Python<'_>, mv: &Bound<'_, PyAny>) -> PyResult<()> {
        // A text is told first: asking it for an integer would make (and
        // drop) an exception, which costs more than the rest of the call.
        if !mv.is_instance_of::<PyString>()
            && let Ok(action) = mv.extract::<i64>()
        {
            return self.apply_action(py, action);
        }
        let Ok(text) = mv.extract::<String>() else {
            return Err(PyTypeError::new_err("a move is its notation (str) or an integer action (int)"));
        };
        if self.over(py)? {
            return Err(self.illegal(py, text));
        }
        if !self.clicked.is_empty() {
            return Err(IllegalMove::new_err(format!(
                "a move is being made by clicks ({} so far): finish it with its actions before `{text}`",
                self.clicked.len()
            )));
        }
        let i = match self.find_typed(py, &text) {
            Ok(i) => i,
            Err(err) if err.is_instance_of::<IllegalMove>(py) && !err.is_instance_of::<AmbiguousMove>(py) => {
                // Why, from the rules (`IllegalMove.why`).
                let (s, mover) = (self.play.state(), self.known.mover.clone().unwrap_or_default());
                let verdict = self.core.with(py, |e| {
                    let file = e.game.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    e.game.judge(&e.options, s, &text).ok().map(|v| (v, file))
                });
                if let Some((Verdict::Refused { whys, sampled }, file)) = verdict {
                    err.value(py).setattr("why", explain::refusal(&whys, sampled, &mover, &file))?;
                }
                return Err(err);
            }
            Err(err) => return Err(err),
        };
        let m = self.legal_move(py, i)?;
        let action = self.known.actions.as_ref().map(|a| a[i]);
        self.make(py, m, action)
    }

    /// Makes the move of an integer action (it must be legal here).
    fn apply_action(&mut self, py: Python<'_>, action: i64) -> PyResult<()> {
        if self.over(py)? {
            return Err(self.illegal(py, format!("action {action}")));
        }
        if let Actions::Clicks(c) = self.core.actions(py)? {
            return self.click(py, &c, action);
        }
        let i = self.move_actions(py)?.iter().position(|&a| a as i64 == action);
        match i {
            Some(i) => {
                let m = self.legal_move(py, i)?;
                self.make(py, m, usize::try_from(action).ok())
            }
            None => {
                let what = match usize::try_from(action).ok().map(|a| self.core.action_text(py, a)) {
                    Some(Ok(t)) => format!("{t} (action {action})"),
                    _ => format!("action {action} (the actions are 0..{})", self.core.actions(py)?.len()),
                };
                Err(self.illegal(py, what))
            }
        }
    }

    /// The integer action of a legal move given in notation.
    fn move_to_action(&mut self, py: Python<'_>, mv: &str) -> PyResult<usize> {
        let i = self.find_typed(py, mv)?;
        Ok(self.move_actions(py)?[i])
    }

    /// A copy, to change without changing this one.
    #[pyo3(name = "clone")]
    fn clone_py(&self) -> State {
        self.clone()
    }

    fn __copy__(&self) -> State {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> State {
        self.clone()
    }

    /// Each seat's score (`score/3`), by seat.
    fn scores<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.play.state();
        let players = self.core.players.clone();
        let scores = self.core.with(py, |e| e.game.scores(s, &players)).or_raise()?;
        let d = PyDict::new(py);
        for (p, v) in scores {
            match (v.parse::<i64>(), v.parse::<f64>()) {
                (Ok(i), _) => d.set_item(p, i)?,
                (_, Ok(f)) => d.set_item(p, f)?,
                _ => d.set_item(p, v)?,
            }
        }
        Ok(d)
    }

    /// The position as `display/2` draws it for `viewer` (a seat, or
    /// `spectator`).
    #[pyo3(signature = (viewer = "spectator"))]
    fn display(&self, py: Python<'_>, viewer: &str) -> PyResult<String> {
        let s = self.play.state();
        self.core.with(py, |e| e.game.display(s, viewer)).or_raise()
    }

    /// The position in its game's standard notation (`position_text/2`:
    /// chess's FEN, draughts' PDN FEN); `None` if the rules do not say.
    fn position_text(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let s = self.play.state();
        self.core.with(py, |e| e.game.position_text(s)).or_raise()
    }

    /// What `viewer` sees (`view/3`) as a dict of sites, pieces, stacks,
    /// hands...; `None` if the game does not draw its board.
    #[pyo3(signature = (viewer = "spectator"))]
    fn view<'py>(&self, py: Python<'py>, viewer: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let s = self.play.state();
        let v = self.core.with(py, |e| e.game.view(s, viewer)).or_raise()?;
        let Some(v) = v else { return Ok(None) };
        let json = serde_json::to_string(&v).expect("a view serialises");
        Ok(Some(py.import("json")?.call_method1("loads", (json,))?))
    }

    /// A position `viewer` cannot tell apart from this one, what it cannot
    /// see drawn at random with `seed` (`sample_state/3`); the same
    /// position in a game without hidden pieces. The moves made are kept.
    #[pyo3(signature = (viewer, seed = 0))]
    fn sample(&self, py: Python<'_>, viewer: &str, seed: u64) -> PyResult<State> {
        let s = self.play.state();
        let sampled = self
            .core
            .with(py, |e| {
                e.game.seed(seed);
                e.game.sample_state(s, viewer)
            })
            .or_raise()?;
        Ok(State {
            core: self.core.clone(),
            play: {
                let mut play = self.play.clone();
                play.set_state(sampled);
                play
            },
            known: Known::default(),
            clicked: self.clicked.clone(),
        })
    }

    /// What `viewer` observes, as numbers (see `Game.observation_layout`).
    /// With click actions, the clicks of the move being made follow, one
    /// target in each of `MAX_CLICKS` rows (shown to the mover only).
    fn observation(&mut self, py: Python<'_>, viewer: &str) -> PyResult<Vec<f32>> {
        self.status(py)?;
        let (s, mover) = (self.play.state(), self.known.mover.as_deref());
        let mut numbers = self
            .core
            .with(py, |e| {
                let o = e.observer()?;
                e.game.observation_with_mover(&o, s, viewer, mover)
            })
            .or_raise()?;
        if let Ok(Actions::Clicks(c)) = self.core.actions(py) {
            let n = c.targets().len();
            let base = numbers.len();
            numbers.resize(base + MAX_CLICKS * n, 0.0);
            if self.known.mover.as_deref() == Some(viewer) {
                for (k, &t) in self.clicked.iter().take(MAX_CLICKS).enumerate() {
                    numbers[base + k * n + t] = 1.0;
                }
            }
        }
        Ok(numbers)
    }

    /// What `viewer` knows, as text: the board as it draws for the viewer,
    /// then every move made, a move still hidden from the viewer as `?`.
    /// Two positions a viewer cannot tell apart have the same text.
    fn information_state(&mut self, py: Python<'_>, viewer: &str) -> PyResult<String> {
        let board = self.display(py, viewer)?;
        let seen = self.seen_moves(py, Some(viewer))?;
        let moves: Vec<String> = self.play.steps().iter().zip(&seen).map(|(s, m)| format!("{} {m}", s.mover)).collect();
        let mut text = format!("{board}moves: {}", moves.join(", "));
        if !self.clicked.is_empty()
            && self.known.mover.as_deref() == Some(viewer)
            && let Ok(Actions::Clicks(c)) = self.core.actions(py)
        {
            let clicked: Vec<&str> = self.clicked.iter().map(|&t| c.targets()[t].as_str()).collect();
            text.push_str(&format!("\nclicked: {}", clicked.join(" ")));
        }
        Ok(text)
    }

    /// The moves made, in notation, as `viewer` saw them (a move not yet
    /// shown to the viewer is `?`); every move for the default viewer,
    /// `None`.
    #[pyo3(signature = (viewer = None))]
    fn history(&mut self, py: Python<'_>, viewer: Option<&str>) -> PyResult<Vec<String>> {
        self.seen_moves(py, viewer)
    }

    /// The seats that made the moves of `history()`.
    fn movers(&self) -> Vec<String> {
        self.play.steps().iter().map(|s| s.mover.clone()).collect()
    }

    /// The position as a term (`Game.state(term)` reads it back).
    #[getter]
    fn term(&self, py: Python<'_>) -> String {
        let s = self.play.state();
        self.core.with(py, |e| e.game.engine().term_text(s.term()))
    }

    /// Leaves of the move tree `depth` plies deep.
    fn perft(&self, py: Python<'_>, depth: u32) -> PyResult<u64> {
        let s = self.play.state();
        self.core.with(py, |e| e.game.perft(s, depth)).or_raise()
    }

    /// Plays uniformly random moves (seeded) to the end in place.
    #[pyo3(signature = (seed = 0))]
    fn random_playout(&mut self, py: Python<'_>, seed: u64) -> PyResult<()> {
        let mut walk = game::Walk::new(seed);
        while !self.over(py)? {
            let moves = self.moves(py)?;
            if moves.is_empty() {
                return Err(to_py(GameError::Rules("no legal move in a position that is not over".into())));
            }
            let m = moves[walk.pick(moves.len())].clone();
            self.make(py, m, None)?;
        }
        Ok(())
    }

    /// Pickled as its game, its position, its start and the moves made (as
    /// terms).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let restore = py.import("tabula._tabula")?.getattr("_state_again")?;
        let game = Py::new(py, Game { core: self.core.clone() })?;
        let play = &self.play;
        let (term, start, moves) = self.core.with(py, |e| {
            let mut text = |t: &tabula::engine::Tmpl| e.game.engine().term_text(t);
            let moves: Vec<(String, String, bool)> =
                play.steps().iter().map(|s| (s.mover.clone(), text(&s.mv.0), s.chance)).collect();
            (text(play.state().term()), text(play.start().term()), moves)
        });
        Ok((restore, (game, term, start, moves, self.clicked.clone()).into_pyobject(py)?.into_any()))
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.display(py, "spectator")
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<tabula.State of {} after {} moves: {}>", self.core.name, self.play.ply(), self.term(py))
    }

    /// The same position of the same game (loaded alike).
    fn __eq__(&self, py: Python<'_>, other: &State) -> bool {
        if self.clicked != other.clicked {
            return false;
        }
        if Arc::ptr_eq(&self.core, &other.core) {
            return self.play.state() == other.play.state();
        }
        // Two loads of a game number their atoms apart: compare the terms.
        self.core.loaded_as == other.core.loaded_as && self.term(py) == other.term(py)
    }

    /// Hashed by the written term, as `__eq__` compares across loads.
    fn __hash__(&self, py: Python<'_>) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.term(py).hash(&mut h);
        h.finish()
    }
}
