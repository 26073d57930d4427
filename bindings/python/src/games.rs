//! `tabula.load(name_or_path, **options)` and the `Game` it returns: the
//! rules loaded once, with the options fixed, shared by all its states.

use crate::errors::OrRaise;
use crate::state::State;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tabula::engine::Tmpl;
use tabula::game::{self, ActionSpace, ClickSpace, GameError, Observer};

include!(concat!(env!("OUT_DIR"), "/games.rs"));

/// The rules and what is computed from them once.
pub struct Engine {
    pub game: game::Game,
    pub options: Tmpl,
    pub players: Vec<String>,
    observer: Option<Result<Observer, String>>,
}

/// How a game's integer actions are made: each a whole move (the rules
/// number them), or each a click of a move's sites one at a time
/// (`move_clicks/3`, as a person plays on the web board).
#[derive(Clone)]
pub enum Actions {
    Moves(Arc<Numbered>),
    Clicks(Arc<Clicks>),
}

impl Actions {
    pub fn len(&self) -> usize {
        match self {
            Actions::Moves(n) => n.space.len(),
            Actions::Clicks(c) => c.len(),
        }
    }
}

/// Click actions: the game layer's [`ClickSpace`].
pub type Clicks = ClickSpace;

/// The most clicks of a move an observation shows.
pub const MAX_CLICKS: usize = 8;

/// The action space, with each move's notation when the rules list the
/// moves.
pub struct Numbered {
    pub space: ActionSpace,
    pub texts: Option<Vec<String>>,
}

// SAFETY: the engine keeps its terms and atom names behind `Rc`s that are
// all owned by the engine itself: none is handed out by the methods this
// crate calls (they return plain data: templates, strings, numbers), so
// moving the whole engine to another thread moves every reference count
// with it. The engine is only ever used under the mutex of its `Core`.
unsafe impl Send for Engine {}

impl Engine {
    /// The rules' numbering of the moves, if they have one.
    fn numbered(&mut self) -> Result<Option<Arc<Numbered>>, GameError> {
        let Some(space) = self.game.action_space(&self.options)? else { return Ok(None) };
        let texts = match space.listed_moves() {
            Some(moves) => Some(moves.iter().map(|m| self.game.move_text(m)).collect::<Result<_, _>>()?),
            None => None,
        };
        Ok(Some(Arc::new(Numbered { space, texts })))
    }

    /// How actions are made: the rules' numbered moves, else clicks on
    /// the sites of the board when the rules say how a move is clicked
    /// (`move_clicks/3`) and draw the board (`view/3`).
    pub fn actions(&mut self) -> Result<Actions, GameError> {
        if let Some(n) = self.numbered()? {
            return Ok(Actions::Moves(n));
        }
        match self.game.click_space(&self.options)? {
            Some(clicks) => Ok(Actions::Clicks(Arc::new(clicks))),
            None => Err(GameError::Rules(format!(
                "{} does not number its moves: integer actions (OpenSpiel, PettingZoo) need \
                 action_space(Options, Moves), or action_count(Options, N) with action(Options, Move, Index), \
                 in its rules (for a GDL game, an `input` relation), or move_clicks/3 and view/3 to play by clicks",
                self.game.name
            ))),
        }
    }

    /// How observations are made, found on first use.
    pub fn observer(&mut self) -> Result<Observer, GameError> {
        if self.observer.is_none() {
            self.observer = Some(self.game.observer(&self.options, 0).map_err(|e| e.to_string()));
        }
        self.observer.clone().expect("just computed").map_err(GameError::Rules)
    }
}

/// How many actions `Core::action_list` keeps as Python integers.
const MAX_CACHED_INTS: usize = 1 << 16;

/// `a` as a Python integer.
fn int(py: Python<'_>, a: usize) -> Bound<'_, PyAny> {
    let Ok(i) = a.into_pyobject(py);
    i.into_any()
}

/// A loaded game, shared by its states.
pub struct Core {
    engine: Mutex<Engine>,
    /// The name or path it was loaded by, and the options given (to load
    /// it again: pickling).
    pub loaded_as: (String, Vec<(String, String)>),
    /// How actions are made, once found (asked on every move).
    actions: OnceLock<Actions>,
    /// The first `MAX_CACHED_INTS` actions as Python integers, made once:
    /// a list of legal actions is built from them, no integer made anew.
    action_ints: OnceLock<Box<[Py<PyAny>]>>,
    /// Each action's text as a Python string, made once, where a move's
    /// notation does not depend on the position (`Numbered::texts`): a
    /// list of legal moves is built from them.
    action_strs: OnceLock<Box<[Py<PyString>]>>,
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub players: Vec<String>,
    pub options: Vec<(String, String)>,
    pub hidden: bool,
    pub has_view: bool,
    pub has_actions: bool,
    pub has_observation: bool,
    pub has_hidden_moves: bool,
    pub has_private_moves: bool,
    pub has_chance: bool,
    /// Whether a move's notation depends on the position (`notation/3`);
    /// if not, a listed move's text is its action's.
    pub notation_needs_position: bool,
}

impl Core {
    /// Runs `f` on the engine with the GIL released.
    pub fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Engine) -> R + Send) -> R {
        py.detach(|| {
            let mut e = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut e)
        })
    }

    /// How actions are made (an error if neither way is open).
    pub fn actions(&self, py: Python<'_>) -> PyResult<Actions> {
        if let Some(a) = self.actions.get() {
            return Ok(a.clone());
        }
        let a = self.with(py, Engine::actions).or_raise()?;
        Ok(self.actions.get_or_init(|| a).clone())
    }

    /// `actions` as a Python list of integers.
    pub fn action_list<'py>(&self, py: Python<'py>, actions: &[usize]) -> PyResult<Bound<'py, PyList>> {
        let ints = match self.action_ints.get() {
            Some(ints) => ints,
            None => {
                let n = self.actions(py)?.len().min(MAX_CACHED_INTS);
                let made = (0..n).map(|a| int(py, a).unbind()).collect();
                self.action_ints.get_or_init(|| made)
            }
        };
        PyList::new(py, actions.iter().map(|&a| ints.get(a).map_or_else(|| int(py, a), |i| i.bind(py).clone())))
    }

    /// The texts of `actions` (each a move's notation that does not
    /// depend on the position) as a Python list, from strings made once.
    pub fn action_text_list<'py>(
        &self,
        py: Python<'py>,
        texts: &[String],
        actions: &[usize],
    ) -> PyResult<Bound<'py, PyList>> {
        let strs = self.action_strs.get_or_init(|| texts.iter().map(|t| PyString::new(py, t).unbind()).collect());
        PyList::new(py, actions.iter().map(|&a| strs[a].bind(py).clone()))
    }

    /// What an action does: the notation of its move, or the click.
    pub fn action_text(&self, py: Python<'_>, action: usize) -> PyResult<String> {
        let n = match self.actions(py)? {
            Actions::Moves(n) => n,
            Actions::Clicks(c) => {
                return match c.targets().get(action) {
                    Some(t) => Ok(format!("click {t}")),
                    None if action == c.end() => Ok("end".to_string()),
                    None => Err(pyo3::exceptions::PyIndexError::new_err(format!(
                        "action {action} is not in 0..{}",
                        c.len()
                    ))),
                };
            }
        };
        if let Some(t) = n.texts.as_ref().and_then(|t| t.get(action)) {
            return Ok(t.clone());
        }
        let m = self
            .with(py, |e| -> Result<_, GameError> {
                match e.game.move_of(&n.space, action)? {
                    Some(m) => Ok(Some(e.game.move_text(&m)?)),
                    None => Ok(None),
                }
            })
            .or_raise()?;
        m.ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!("action {action} is not in 0..{}", n.space.len()))
        })
    }

    /// The rules' numbering of the moves (an error for a game played by
    /// clicks).
    pub fn space(&self, py: Python<'_>) -> PyResult<Arc<Numbered>> {
        match self.actions(py)? {
            Actions::Moves(n) => Ok(n),
            Actions::Clicks(_) => Err(crate::errors::to_py(GameError::Rules(format!(
                "{} does not number its moves: it is played by clicks (action_kind() is \"clicks\")",
                self.name
            )))),
        }
    }
}

/// A game: its rules loaded, with its options set.
#[pyclass(module = "tabula", frozen)]
pub struct Game {
    pub core: Arc<Core>,
}

/// Where a game named `name` is: a path, the folder `$TABULA_GAMES`, or
/// the games compiled into the module.
pub fn source(name: &str) -> Result<(PathBuf, String), GameError> {
    let looks_like_path = name.contains('/') || [".rules", ".kif", ".pl"].iter().any(|x| name.ends_with(x));
    if looks_like_path {
        let p = PathBuf::from(name);
        let text = std::fs::read_to_string(&p).map_err(|e| GameError::NotFound(format!("cannot read {name}: {e}")))?;
        return Ok((p, text));
    }
    if let Some(dir) = std::env::var_os("TABULA_GAMES")
        && let Ok(p) = game::find_game(name, Path::new(&dir))
        && let Ok(text) = std::fs::read_to_string(&p)
    {
        return Ok((p, text));
    }
    for ext in ["rules", "kif"] {
        let file = format!("{name}.{ext}");
        if let Some((_, text)) = GAMES.iter().find(|(f, _)| *f == file) {
            return Ok((PathBuf::from("games").join(file), text.to_string()));
        }
    }
    Err(GameError::NotFound(format!("no game named `{name}`; known games: {}", game_names().join(", "))))
}

fn game_names() -> Vec<String> {
    GAMES.iter().filter_map(|(f, _)| Path::new(f).file_stem().map(|s| s.to_string_lossy().into_owned())).collect()
}

/// An option value as the rules read it: Python's `True` is `true`.
fn option_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(if v.extract::<bool>()? { "true" } else { "false" }.to_string());
    }
    Ok(v.str()?.to_string())
}

/// Loads a game by name (a game of the games folder) or path (a `.rules`
/// or `.kif` file), with its options as keyword arguments.
#[pyfunction]
#[pyo3(signature = (name_or_path, **options))]
pub fn load(py: Python<'_>, name_or_path: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<Game> {
    let mut given = Vec::new();
    for (k, v) in options.into_iter().flat_map(|d| d.iter()) {
        given.push((k.extract::<String>()?, option_text(&v)?));
    }
    let name = name_or_path.to_string();
    let loaded_as = (name.clone(), given.clone());
    let core = py
        .detach(move || -> Result<Core, GameError> {
            let (path, text) = source(&name)?;
            let (mut g, _warnings) = tabula::loader::load_text(&path, &text)?;
            let options = g.options_term(&given)?;
            let players = g.players(&options)?;
            let chosen = g
                .options
                .iter()
                .map(|o| {
                    let v =
                        given.iter().rev().find(|(k, _)| *k == o.name).map_or(o.default.clone(), |(_, v)| v.clone());
                    (o.name.clone(), v)
                })
                .collect();
            Ok(Core {
                name: g.name.clone(),
                title: g.title.clone(),
                description: g.description.clone(),
                players: players.clone(),
                options: chosen,
                hidden: g.hidden(),
                has_view: g.has_view(),
                has_actions: g.has_action_space(),
                has_observation: g.has("observation", 3),
                has_hidden_moves: g.has("hidden_move", 1),
                has_private_moves: g.has("private_move", 1),
                has_chance: g.has("chance", 1),
                notation_needs_position: g.has("notation", 3),
                actions: OnceLock::new(),
                action_ints: OnceLock::new(),
                action_strs: OnceLock::new(),
                loaded_as,
                engine: Mutex::new(Engine { game: g, options, players, observer: None }),
            })
        })
        .or_raise()?;
    Ok(Game { core: Arc::new(core) })
}

/// Loads a game again from how it was loaded (unpickling).
#[pyfunction]
pub fn _load_again(py: Python<'_>, name_or_path: &str, options: Vec<(String, String)>) -> PyResult<Game> {
    let d = PyDict::new(py);
    for (k, v) in options {
        d.set_item(k, v)?;
    }
    load(py, name_or_path, Some(&d))
}

/// The names of the games compiled into the module (and of those in
/// `$TABULA_GAMES`, when set).
#[pyfunction]
pub fn games() -> Vec<String> {
    let mut names = game_names();
    if let Some(dir) = std::env::var_os("TABULA_GAMES") {
        for p in game::list_games(Path::new(&dir)) {
            if let Some(s) = p.file_stem() {
                names.push(s.to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

#[pymethods]
impl Game {
    /// The game's file name without its extension.
    #[getter]
    fn name(&self) -> &str {
        &self.core.name
    }

    #[getter]
    fn title(&self) -> &str {
        &self.core.title
    }

    #[getter]
    fn description(&self) -> Option<&str> {
        self.core.description.as_deref()
    }

    /// The seats in turn order.
    #[getter]
    fn players(&self) -> Vec<String> {
        self.core.players.clone()
    }

    /// Every option of the game with its value (defaults filled in).
    #[getter]
    fn options(&self) -> Vec<(String, String)> {
        self.core.options.clone()
    }

    /// Whether players hide information from each other (hands, or
    /// choices made at once).
    #[getter]
    fn hidden_information(&self) -> bool {
        self.core.hidden || self.core.has_hidden_moves || self.core.has_private_moves
    }

    /// Whether the rules deal hidden pieces (`sample_state/3`).
    #[getter]
    fn has_sampling(&self) -> bool {
        self.core.hidden
    }

    /// Whether chance makes some moves (`chance/1`: a die, a deal during
    /// the game), uniformly at random among the legal ones.
    #[getter]
    fn has_chance(&self) -> bool {
        self.core.has_chance
    }

    /// Whether some moves are made at once (`hidden_move/1`: a round of
    /// choices shown when the last is made).
    #[getter]
    fn simultaneous(&self) -> bool {
        self.core.has_hidden_moves
    }

    /// Whether the rules number their moves (`action_space/2`).
    #[getter]
    fn has_actions(&self) -> bool {
        self.core.has_actions
    }

    /// Whether observations can be asked for: `observation/3`, or
    /// `view/3` to derive them from.
    #[getter]
    fn has_observations(&self) -> bool {
        self.core.has_observation || self.core.has_view
    }

    /// Limits on each question put to the rules (the moves of a position,
    /// a perft, a playout): inference steps, seconds, and megabytes of
    /// data. A question that passes one raises `LimitError`, and the game
    /// goes on. `None` lifts a limit; memory is 4096 MB unless set.
    #[pyo3(signature = (max_steps = None, timeout = None, max_memory_mb = None))]
    fn set_limits(
        &self,
        py: Python<'_>,
        max_steps: Option<u64>,
        timeout: Option<f64>,
        max_memory_mb: Option<usize>,
    ) -> PyResult<()> {
        if let Some(t) = timeout
            && !(t.is_finite() && t > 0.0)
        {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "timeout must be a positive number of seconds, not {t}"
            )));
        }
        let limits = tabula::engine::Limits {
            max_steps,
            timeout: timeout.map(std::time::Duration::from_secs_f64),
            max_memory: max_memory_mb.map_or(tabula::engine::Limits::default().max_memory, |m| m << 20),
        };
        self.core.with(py, |e| e.game.engine().set_limits(limits));
        Ok(())
    }

    /// The start position (its random deal, if any, drawn with `seed`).
    #[pyo3(signature = (seed = 0))]
    fn new_state(&self, py: Python<'_>, seed: u64) -> PyResult<State> {
        let s = self.core.with(py, |e| e.game.initial_state(&e.options, seed)).or_raise()?;
        Ok(State::new(self.core.clone(), s))
    }

    /// A position given as a term (as `State.term` writes it).
    fn state(&self, py: Python<'_>, term: &str) -> PyResult<State> {
        let s = self.core.with(py, |e| e.game.parse_state(term)).or_raise()?;
        Ok(State::new(self.core.clone(), s))
    }

    /// How many integer actions there are.
    fn num_actions(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.core.actions(py)?.len())
    }

    /// What an action is: `"moves"` (action *i* is move *i* of the rules'
    /// numbering) or `"clicks"` (a click on a site of the board, the last
    /// action ending a move; for rules that do not number their moves).
    fn action_kind(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(match self.core.actions(py)? {
            Actions::Moves(_) => "moves",
            Actions::Clicks(_) => "clicks",
        })
    }

    /// Every move in action order, in notation (for rules that list their
    /// moves with `action_space/2`; `action/3` numbers too many to list).
    fn action_space(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let n = self.core.space(py)?;
        n.texts.clone().ok_or_else(|| {
            crate::errors::to_py(GameError::Rules(format!(
                "{} numbers its {} moves with action/3 and does not list them: ask Game.action_to_move(i)",
                self.core.name,
                n.space.len()
            )))
        })
    }

    /// The notation of an action.
    fn action_to_move(&self, py: Python<'_>, action: usize) -> PyResult<String> {
        self.core.action_text(py, action)
    }

    /// The length of an observation (`State.observation`): with click
    /// actions, the clicks of the move being made follow the rules'
    /// numbers ([`MAX_CLICKS`] of them, one number per target each).
    fn observation_size(&self, py: Python<'_>) -> PyResult<usize> {
        let o = self.core.with(py, |e| e.observer()).or_raise()?;
        let clicks = match self.core.actions(py) {
            Ok(Actions::Clicks(c)) => MAX_CLICKS * c.targets().len(),
            _ => 0,
        };
        Ok(clicks
            + match o {
                Observer::Rules { len } => len,
                Observer::Derived(l) => l.len(),
            })
    }

    /// What the numbers of an observation are: for an observation derived
    /// from `view/3`, its sites, kinds of piece, players and whether it has
    /// stacks and hands; for the rules' own, its length.
    fn observation_layout<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let o = self.core.with(py, |e| e.observer()).or_raise()?;
        let d = PyDict::new(py);
        match o {
            Observer::Rules { len } => {
                d.set_item("source", "observation/3")?;
                d.set_item("size", len)?;
            }
            Observer::Derived(l) => {
                d.set_item("source", "view/3")?;
                d.set_item("size", l.len())?;
                d.set_item("sites", l.sites.clone())?;
                d.set_item("kinds", l.kinds.clone())?;
                d.set_item("players", l.players.clone())?;
                d.set_item("stacks", l.stacks)?;
                d.set_item("hands", l.hands)?;
            }
        }
        Ok(d)
    }

    /// Uniformly random games from the start position, in this thread:
    /// how many, their average length, the results and the speed.
    #[pyo3(signature = (playouts = 1000, seed = 0))]
    fn bench<'py>(&self, py: Python<'py>, playouts: u64, seed: u64) -> PyResult<Bound<'py, PyDict>> {
        let (tally, secs) = self
            .core
            .with(py, |e| -> Result<_, GameError> {
                let start = std::time::Instant::now();
                let mut tally = game::Tally::new(&e.players);
                for i in 0..playouts {
                    let (plies, outcome) = e.game.seeded_playout(&e.options, None, seed.wrapping_add(i))?;
                    tally.record(plies, outcome);
                }
                Ok((tally, start.elapsed().as_secs_f64()))
            })
            .or_raise()?;
        let d = PyDict::new(py);
        d.set_item("playouts", tally.played)?;
        d.set_item("plies", tally.plies)?;
        d.set_item("seconds", secs)?;
        d.set_item("playouts_per_second", tally.played as f64 / secs.max(1e-9))?;
        d.set_item("wins", tally.wins.into_iter().collect::<std::collections::HashMap<_, _>>())?;
        d.set_item("draws", tally.draws)?;
        Ok(d)
    }

    /// Random playouts made by the steps a Python loop over `State` takes
    /// (the legal actions, a uniform pick, the move with where it leads),
    /// in Rust for `seconds`: the engine's own cost of that loop, for the
    /// benchmark to set beside the Python loop's. `(playouts, plies,
    /// seconds)`. A game whose actions are not listed has no such loop.
    #[pyo3(signature = (seconds = 1.0, seed = 0))]
    fn _step_playouts(&self, py: Python<'_>, seconds: f64, seed: u64) -> PyResult<(u64, u64, f64)> {
        let space = self.core.space(py)?;
        self.core
            .with(py, |e| -> Result<_, GameError> {
                let start = std::time::Instant::now();
                let mut walk = game::Walk::new(seed);
                let (mut playouts, mut plies) = (0, 0);
                while start.elapsed().as_secs_f64() < seconds {
                    let s = e.game.initial_state(&e.options, seed.wrapping_add(playouts))?;
                    plies += e.game.step_playout(&space.space, &s, &mut walk)?;
                    playouts += 1;
                }
                Ok((playouts, plies, start.elapsed().as_secs_f64()))
            })
            .or_raise()
    }

    /// A game is immutable: a copy is the game itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    /// Pickled as how it was loaded: unpickling loads the rules again.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let restore = py.import("tabula._tabula")?.getattr("_load_again")?;
        Ok((restore, self.core.loaded_as.clone().into_pyobject(py)?.into_any()))
    }

    fn __repr__(&self) -> String {
        let opts: Vec<String> = self.core.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("<tabula.Game {} ({})>", self.core.name, opts.join(", "))
    }
}
