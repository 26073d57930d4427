//! The game interface over the engine: a `.rules` file loaded as a
//! [`Game`], its options, states and moves copied out of the engine as
//! ground terms, legal moves with notation, outcomes, display, perft and
//! random playouts. Nothing here knows any particular game.

pub mod actions;
pub mod check;
pub mod coverage;
pub mod explain;
pub mod metrics;
pub mod observe;
pub mod play;
pub mod record;
pub mod solve;
pub mod spec;
mod step;
pub mod view;

use crate::engine::Cell;
use crate::engine::{Arg, Engine, QueryError, Tmpl, Value};
use crate::gdl::step::{Fluents, Seen};
use crate::syntax::render;
pub use actions::{ActionSpace, ClickSpace};
pub use check::Played;
pub use observe::Observer;
pub use play::{Play, Shown, Step};
pub use spec::Spec;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
pub use step::{Next, Status};
pub use view::View;

const DRIVER: &str = include_str!("driver.pl");

/// The predicates every game defines.
pub const REQUIRED: &[(&str, u32)] =
    &[("title", 1), ("players", 2), ("initial_state", 2), ("to_move", 2), ("move", 3), ("game_over", 2)];

/// Why a game cannot be loaded or played.
#[derive(Debug)]
pub enum GameError {
    /// The file cannot be read, or no game has that name.
    NotFound(String),
    /// Syntax errors: the rendered diagnostics, and where the first error
    /// is (file, line, column; both from 1).
    Load { text: String, at: Option<(String, usize, usize)> },
    /// Required predicates missing or with the wrong arity.
    Interface(Vec<String>),
    /// A bad `--option`.
    Option(String),
    /// A move that is not legal here.
    IllegalMove { text: String, legal: Vec<String> },
    /// A typed prefix that begins several legal moves (`candidates`).
    AmbiguousMove { text: String, candidates: Vec<String> },
    /// The rules raised an error or broke the interface at run time.
    Rules(String),
    /// A query of the rules passed a resource limit (steps, time, memory).
    Limit(String),
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::NotFound(m) | GameError::Option(m) | GameError::Rules(m) | GameError::Limit(m) => {
                write!(f, "{m}")
            }
            GameError::Load { text, .. } => write!(f, "{}", text.trim_end()),
            GameError::Interface(problems) => write!(f, "not a valid game:\n  {}", problems.join("\n  ")),
            GameError::IllegalMove { text, legal } => {
                write!(f, "`{text}` is not a legal move here; legal moves: {}", legal.join(" "))
            }
            GameError::AmbiguousMove { text, candidates } => {
                write!(f, "`{text}` is ambiguous: it begins {}; type more of the move", candidates.join(" and "))
            }
        }
    }
}

impl std::error::Error for GameError {}

fn rules_error(what: &str, e: QueryError) -> GameError {
    match e {
        QueryError::Limit { .. } => GameError::Limit(format!("{what}: {e}")),
        e => GameError::Rules(format!("{what}: {e}")),
    }
}

/// A load error: the diagnostics rendered, with the first error's place.
pub(crate) fn load_error(file: &str, src: &str, diags: &[crate::syntax::Diagnostic]) -> GameError {
    GameError::Load { text: render(file, src, diags), at: crate::syntax::diag::first_error_at(file, src, diags) }
}

/// The values an option accepts.
#[derive(Clone, Debug, PartialEq)]
pub enum Allowed {
    Between(i64, i64),
    OneOf(Vec<String>),
    Any,
    /// Any text, passed to the rules as an atom (a FEN, say).
    Text,
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Allowed::Between(l, h) => write!(f, "{l}..{h}"),
            Allowed::OneOf(v) => write!(f, "one of {}", v.join(", ")),
            Allowed::Any => write!(f, "any term"),
            Allowed::Text => write!(f, "any text"),
        }
    }
}

/// A game option: `option(Name, Default, Allowed, Help)`.
#[derive(Clone, Debug)]
pub struct OptionSpec {
    pub name: String,
    pub default: String,
    pub allowed: Allowed,
    pub help: String,
}

impl OptionSpec {
    /// A value of this option (as a person writes it) as a term's text: a
    /// text option's value is quoted as an atom, any other is a term.
    pub fn term_text(&self, value: &str) -> String {
        match self.allowed {
            Allowed::Text => crate::engine::format_atom(value, true),
            _ => value.to_string(),
        }
    }
}

/// A position: a ground term. A GDL game's network holds the positions
/// its step makes as their fluents' numbers, and lays the term out only
/// when it is asked for ([`State::term`]): a loop of steps never does.
#[derive(Clone, Debug)]
pub struct State {
    term: OnceLock<Tmpl>,
    fluents: Option<Fluents>,
}

impl State {
    /// The position of a term.
    pub fn new(term: Tmpl) -> State {
        State { term: OnceLock::from(term), fluents: None }
    }

    fn of_fluents(fluents: Fluents) -> State {
        State { term: OnceLock::new(), fluents: Some(fluents) }
    }

    /// The position's term.
    pub fn term(&self) -> &Tmpl {
        self.term.get_or_init(|| self.fluents.as_ref().expect("a position has a term or fluents").tmpl())
    }

    /// The position as a network's step reads it.
    fn seen(&self) -> Seen<'_> {
        match &self.fluents {
            Some(f) => Seen::Fluents(f),
            None => Seen::Term(self.term()),
        }
    }
}

/// Positions are equal when their terms are.
impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        if let (Some(a), Some(b)) = (&self.fluents, &other.fluents)
            && let Some(same) = a.same(b)
        {
            return same;
        }
        self.term() == other.term()
    }
}

/// A move: a ground term, shared (a listed action space's move is made
/// and recorded without copying the term).
#[derive(Clone, Debug, PartialEq)]
pub struct Move(pub std::sync::Arc<Tmpl>);

impl Move {
    pub fn new(t: Tmpl) -> Move {
        Move(std::sync::Arc::new(t))
    }
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    Winner(String),
    Draw,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Winner(p) => write!(f, "{p} wins"),
            Outcome::Draw => write!(f, "draw"),
        }
    }
}

impl Outcome {
    /// The JSON shape of `--json` and the server: `{"result": "winner",
    /// "player": P}` or `{"result": "draw"}`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Outcome::Winner(p) => serde_json::json!({"result": "winner", "player": p}),
            Outcome::Draw => serde_json::json!({"result": "draw"}),
        }
    }
}

/// How a random playout ended: the game is over, or it was cut off after
/// the most plies asked for (with the position reached).
#[derive(Clone, Debug)]
pub enum PlayoutEnd {
    Over(Outcome),
    Cut(State),
}

/// How a random playout draws its moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draw {
    /// Uniformly among the legal moves.
    Uniform,
    /// By the rules' own playout policy (`playout_move/2`) where they
    /// define one and it gives a move; uniformly otherwise.
    Policy,
}

/// A legal move in a position, with its notation and the position it
/// leads to.
#[derive(Clone, Debug)]
pub struct LegalMove {
    pub mv: Move,
    pub text: String,
    pub next: State,
}

/// A game loaded from a `.rules` file.
pub struct Game {
    engine: Engine,
    /// What the game was built from: its rules and any engine extension
    /// (to build the game again, in another thread).
    spec: Spec,
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub options: Vec<OptionSpec>,
    has_notation: bool,
    /// The optional interface predicates the rules define, found once at
    /// load (`has` is asked on every move): bit `i` for `OPTIONAL[i]`.
    optional: u64,
    /// How random playouts draw their moves (see `PlayoutPlan`).
    plan: PlayoutPlan,
    /// The names of the roles of a GDL game's network, by their numbers
    /// (found at its first native step).
    native_roles: Vec<String>,
    /// How a `'$status'/3` answer is read without the engine's help (see
    /// `step::StatusCells`): made at the first status.
    status_cells: Option<step::StatusCells>,
}

/// How a game's random playouts draw moves, found for the options its
/// states are made with (`initial_state/2`). Drawing integer actions until
/// one is legal needs the actions of those options: a game that has made
/// states with two sets of options, or none, lists the moves.
#[derive(Clone, Debug, Default)]
enum PlayoutPlan {
    /// No state made yet: the moves are listed.
    #[default]
    Unknown,
    /// Every state so far was made with these options; the plan is found
    /// at the first playout.
    For(Tmpl),
    /// The plan for these options: `'$playout_plan'/3`'s answer, or
    /// `None` where listing the moves is the better way.
    Made(Tmpl, Option<Tmpl>),
    /// States made with more than one set of options: the moves are
    /// listed.
    Mixed,
}

/// The optional predicates of the game interface (and of the adapters):
/// at most 64.
const _: () = assert!(OPTIONAL.len() <= 64);
const OPTIONAL: &[(&str, u32)] = &[
    ("option", 4),
    ("describe", 1),
    ("display", 2),
    ("score", 3),
    ("value", 3),
    ("playout_plies", 2),
    ("playout_move", 2),
    ("prior_playouts", 2),
    ("sample_state", 3),
    ("move", 2),
    ("hidden_move", 1),
    ("chance", 1),
    ("private_move", 1),
    ("view", 3),
    ("move_clicks", 3),
    ("choose_move", 3),
    ("action_space", 2),
    ("notation", 3),
    ("position_text", 2),
    ("action_count", 2),
    ("action", 3),
    ("observation", 3),
];

/// Where the games are: `--games DIR`, `$TABULA_GAMES`, `./games`, or the
/// `games` folder of the workspace this crate was built in.
pub fn games_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(d) = explicit {
        return d.to_path_buf();
    }
    if let Some(d) = std::env::var_os("TABULA_GAMES") {
        return PathBuf::from(d);
    }
    let local = PathBuf::from("games");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../games")
}

/// The games in the games folder (`.rules` and `.kif` files), sorted by
/// name.
pub fn list_games(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rules" || x == "kif"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Resolves a game name or a path to a `.rules` or `.kif` file.
pub fn find_game(name: &str, dir: &Path) -> Result<PathBuf, GameError> {
    let as_path = PathBuf::from(name);
    if name.ends_with(".rules") || name.ends_with(".pl") || name.ends_with(".kif") || name.contains('/') {
        if as_path.is_file() {
            return Ok(as_path);
        }
        return Err(GameError::NotFound(format!("no such file: {name}")));
    }
    for ext in ["rules", "kif"] {
        let p = dir.join(format!("{name}.{ext}"));
        if p.is_file() {
            return Ok(p);
        }
    }
    let known: Vec<String> =
        list_games(dir).iter().filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned())).collect();
    Err(GameError::NotFound(format!(
        "no game named `{name}` in {}; known games: {}",
        dir.display(),
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    )))
}

/// A seeded walk through random choices: the same seed picks the same
/// moves on every machine (the checks, the observation layout and the
/// GGP player's look-ahead walk with it).
#[derive(Clone, Debug)]
pub struct Walk(u64);

impl Walk {
    pub fn new(seed: u64) -> Walk {
        Walk(seed)
    }

    /// One of `n` choices (`n` > 0).
    pub fn pick(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// What random playouts gave: how many, their plies, each player's wins
/// and the draws.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub played: u64,
    pub plies: u64,
    pub draws: u64,
    pub wins: Vec<(String, u64)>,
}

impl Tally {
    /// A tally with a line for each player (in seat order), all zero.
    pub fn new(players: &[String]) -> Tally {
        Tally { wins: players.iter().map(|p| (p.clone(), 0)).collect(), ..Tally::default() }
    }

    /// Counts one playout.
    pub fn record(&mut self, plies: u64, outcome: Outcome) {
        self.played += 1;
        self.plies += plies;
        match outcome {
            Outcome::Winner(p) => self.add_wins(p, 1),
            Outcome::Draw => self.draws += 1,
        }
    }

    /// Adds another tally's counts.
    pub fn merge(&mut self, other: Tally) {
        self.played += other.played;
        self.plies += other.plies;
        self.draws += other.draws;
        for (p, n) in other.wins {
            self.add_wins(p, n);
        }
    }

    fn add_wins(&mut self, p: String, n: u64) {
        match self.wins.iter_mut().find(|(q, _)| *q == p) {
            Some(r) => r.1 += n,
            None => self.wins.push((p, n)),
        }
    }
}

/// How a move of a game's history is shown to the players other than its
/// mover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Secrecy {
    /// Shown at once.
    Open,
    /// Made where `hidden_move/1` held (a simultaneous choice, made by the
    /// named mover): shown once a move that is not hidden is made.
    Hidden(String),
    /// Made where `private_move/1` held: never shown.
    Private(String),
}

impl Game {
    /// How the move about to be made in `s` by `mover` is shown to the
    /// others.
    pub fn secrecy(&mut self, s: &State, mover: &str) -> Result<Secrecy, GameError> {
        Ok(if self.private_move(s)? {
            Secrecy::Private(mover.to_string())
        } else if self.hidden_move(s)? {
            Secrecy::Hidden(mover.to_string())
        } else {
            Secrecy::Open
        })
    }
}

/// Who made move `i` of a game, if that move is still hidden from the
/// other players: a private move, or a hidden one followed only by hidden
/// moves (its round is not over).
pub fn still_hidden(history: &[Secrecy], i: usize) -> Option<&str> {
    match history.get(i)? {
        Secrecy::Open => None,
        Secrecy::Private(mover) => Some(mover),
        Secrecy::Hidden(mover) => history[i..].iter().all(|s| matches!(s, Secrecy::Hidden(_))).then_some(mover),
    }
}

/// The hidden moves of `history` that a move shown as `next` reveals: a
/// move that is not hidden ends the round of the hidden ones before it.
pub fn revealed(history: &[Secrecy], next: &Secrecy) -> Vec<usize> {
    if matches!(next, Secrecy::Hidden(_)) {
        return Vec::new();
    }
    (0..history.len())
        .filter(|&i| matches!(history[i], Secrecy::Hidden(_)) && still_hidden(history, i).is_some())
        .collect()
}

/// Whether a path names a GDL file.
pub fn is_gdl(path: &Path) -> bool {
    path.extension().is_some_and(|x| x.eq_ignore_ascii_case("kif"))
}

impl Game {
    /// A game whose rules, `spec`'s, `engine` has loaded (with `spec`'s
    /// extension installed).
    pub fn from_engine(spec: Spec, mut engine: Engine) -> Result<Game, GameError> {
        let path = spec.path().to_path_buf();
        let file = path.display().to_string();
        let driver = engine.load("game driver", DRIVER);
        debug_assert!(!driver.has_errors());
        let problems = interface_problems(&engine);
        if !problems.is_empty() {
            return Err(GameError::Interface(problems));
        }
        let name = path.file_stem().map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
        let has_notation = engine.defined_arities("notation").contains(&2);
        let optional = OPTIONAL
            .iter()
            .enumerate()
            .filter(|(_, (n, a))| engine.defined_arities(n).contains(a))
            .fold(0u64, |bits, (i, _)| bits | 1 << i);
        let mut game = Game {
            engine,
            spec,
            name,
            title: String::new(),
            description: None,
            options: Vec::new(),
            has_notation,
            optional,
            plan: PlayoutPlan::Unknown,
            native_roles: Vec::new(),
            status_cells: None,
        };
        let t = game.call1("title", &[Arg::Out], "title/1")?;
        game.title = game.engine.value(&t[0]).as_text().map_or_else(|| game.engine.term_text(&t[0]), str::to_string);
        if game.has("describe", 1)
            && let Ok(d) = game.call1("describe", &[Arg::Out], "describe/1")
        {
            game.description = game.engine.value(&d[0]).as_text().map(str::to_string);
        }
        game.options = game.read_options()?;
        Ok(game)
    }

    /// What the game was built from: send it to another thread and
    /// [`Spec::build`] the same game there.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The file the rules came from.
    pub fn path(&self) -> &Path {
        self.spec.path()
    }

    /// The text of the rules (for a GDL game, its translation).
    pub fn source(&self) -> &str {
        self.spec.source()
    }

    /// The engine running the rules (for queries against them).
    pub fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }

    fn call1(&mut self, name: &str, args: &[Arg], what: &str) -> Result<Vec<Tmpl>, GameError> {
        let mut r = self.engine.call(name, args, 1).map_err(|e| rules_error(what, e))?;
        r.pop().ok_or_else(|| GameError::Rules(format!("{what} failed")))
    }

    fn read_options(&mut self) -> Result<Vec<OptionSpec>, GameError> {
        if !self.has("option", 4) {
            return Ok(Vec::new());
        }
        let sols = self
            .engine
            .call("option", &[Arg::Out, Arg::Out, Arg::Out, Arg::Out], usize::MAX)
            .map_err(|e| rules_error("option/4", e))?;
        let mut out = Vec::new();
        for s in sols {
            let name = self.engine.value(&s[0]).as_atom().map(str::to_string).ok_or_else(|| {
                GameError::Rules(format!("option/4: the name must be an atom, not {}", self.engine.term_text(&s[0])))
            })?;
            let default = self.engine.term_text(&s[1]);
            let allowed = match self.engine.value(&s[2]) {
                Value::Compound(f, a) if f == "between" && a.len() == 2 => match (a[0].as_int(), a[1].as_int()) {
                    (Some(l), Some(h)) => Allowed::Between(l, h),
                    _ => return Err(GameError::Rules(format!("option {name}: between/2 needs two integers"))),
                },
                Value::Compound(f, a) if f == "oneof" && a.len() == 1 => match &a[0] {
                    Value::List(items) => {
                        let texts = items.iter().map(value_text).collect();
                        Allowed::OneOf(texts)
                    }
                    _ => return Err(GameError::Rules(format!("option {name}: oneof/1 needs a list"))),
                },
                Value::Atom(a) if a == "any" => Allowed::Any,
                Value::Atom(a) if a == "text" => match self.engine.value(&s[1]) {
                    Value::Atom(_) | Value::Str(_) => Allowed::Text,
                    _ => return Err(GameError::Rules(format!("option {name}: the default of a text must be an atom"))),
                },
                _ => {
                    return Err(GameError::Rules(format!(
                        "option {name}: allowed values must be between(Low, High), oneof(List), any or text, not {}",
                        self.engine.term_text(&s[2])
                    )));
                }
            };
            let help = self.engine.value(&s[3]).as_text().map(str::to_string).unwrap_or_default();
            let default = if allowed == Allowed::Text { value_text(&self.engine.value(&s[1])) } else { default };
            out.push(OptionSpec { name, default, allowed, help });
        }
        Ok(out)
    }

    /// The options term `[Name=Value, ...]` with defaults filled in, after
    /// checking `given` (`name=value` pairs) against the game's options.
    pub fn options_term(&mut self, given: &[(String, String)]) -> Result<Tmpl, GameError> {
        let mut values: Vec<(String, String)> =
            self.options.iter().map(|o| (o.name.clone(), o.term_text(&o.default))).collect();
        for (k, v) in given {
            let Some(spec) = self.options.iter().find(|o| &o.name == k).cloned() else {
                let names: Vec<&str> = self.options.iter().map(|o| o.name.as_str()).collect();
                return Err(GameError::Option(format!(
                    "{} has no option `{k}`; its options are: {}",
                    self.name,
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                )));
            };
            if spec.allowed == Allowed::Text {
                values.iter_mut().find(|(n, _)| n == k).expect("known option").1 = spec.term_text(v);
                continue;
            }
            let t =
                self.engine.parse_term(v).map_err(|_| GameError::Option(format!("option {k}: `{v}` is not a term")))?;
            let val = self.engine.value(&t);
            let ok = match &spec.allowed {
                Allowed::Between(l, h) => val.as_int().is_some_and(|i| *l <= i && i <= *h),
                Allowed::OneOf(items) => items.contains(&value_text(&val)),
                Allowed::Any | Allowed::Text => true,
            };
            if !ok {
                return Err(GameError::Option(format!("option {k}: `{v}` is not allowed (allowed: {})", spec.allowed)));
            }
            let text = self.engine.term_text(&t);
            values.iter_mut().find(|(n, _)| n == k).expect("known option").1 = text;
        }
        let list: Vec<String> = values.iter().map(|(k, v)| format!("{k}=({v})")).collect();
        self.engine.parse_term(&format!("[{}]", list.join(", "))).map_err(|e| GameError::Rules(e.to_string()))
    }

    /// The seats in turn order.
    pub fn players(&mut self, options: &Tmpl) -> Result<Vec<String>, GameError> {
        let r = self.call1("players", &[Arg::In(options), Arg::Out], "players/2")?;
        match self.engine.value(&r[0]) {
            Value::List(items) if !items.is_empty() => Ok(items.iter().map(value_text).collect()),
            _ => Err(GameError::Rules(format!(
                "players/2 must give a non-empty list, not {}",
                self.engine.term_text(&r[0])
            ))),
        }
    }

    /// The start position (uses the engine's random generator: seed first).
    pub fn initial_state(&mut self, options: &Tmpl, seed: u64) -> Result<State, GameError> {
        self.use_options(options);
        self.engine.set_seed(seed);
        let r = self.call1("initial_state", &[Arg::In(options), Arg::Out], "initial_state/2")?;
        self.ground_state(r.into_iter().next().expect("one output"), "initial_state/2")
    }

    fn ground_state(&mut self, t: Tmpl, what: &str) -> Result<State, GameError> {
        if t.nvars > 0 {
            return Err(GameError::Rules(format!(
                "{what} gave a state that is not ground: {}",
                self.engine.term_text(&t)
            )));
        }
        Ok(State::new(t))
    }

    /// Reads a state term given by the user (`--state`), checking it.
    pub fn parse_state(&mut self, text: &str) -> Result<State, GameError> {
        let t = self.engine.parse_term(text).map_err(|e| GameError::Rules(format!("--state: {e}")))?;
        let s = self.ground_state(t, "--state")?;
        if self.outcome(&s)?.is_none() {
            self.to_move(&s)?;
        }
        Ok(s)
    }

    /// A state a person gave (`--state`): one the rules can play from
    /// (whose turn it is, and its moves), or an error that says what is
    /// wrong with it.
    pub fn given_state(&mut self, text: &str) -> Result<State, GameError> {
        let fails = |e: GameError| match e {
            GameError::Rules(m) if m.starts_with("--state") => GameError::Rules(m),
            e => GameError::Rules(format!("--state: the rules cannot play from this state: {e}")),
        };
        let s = self.parse_state(text).map_err(fails)?;
        if self.outcome(&s)?.is_none() && self.legal_moves(&s).map_err(fails)?.is_empty() {
            return Err(GameError::Rules(
                "--state: no legal move in this state, and game_over/2 does not end it: is it a state of this game?"
                    .into(),
            ));
        }
        Ok(s)
    }

    /// Whose turn it is.
    pub fn to_move(&mut self, s: &State) -> Result<String, GameError> {
        let r = self.call1("to_move", &[Arg::In(s.term()), Arg::Out], "to_move/2")?;
        Ok(value_text(&self.engine.value(&r[0])))
    }

    /// The result if the game is over.
    pub fn outcome(&mut self, s: &State) -> Result<Option<Outcome>, GameError> {
        let r = self
            .engine
            .call("game_over", &[Arg::In(s.term()), Arg::Out], 1)
            .map_err(|e| rules_error("game_over/2", e))?;
        let Some(r) = r.into_iter().next() else { return Ok(None) };
        let v = self.engine.value(&r[0]);
        self.outcome_of(v, &r[0]).map(Some)
    }

    /// A result `game_over/2` gave (as a value, and as the term itself).
    pub(crate) fn outcome_of(&mut self, v: Value, t: &Tmpl) -> Result<Outcome, GameError> {
        match v {
            Value::Compound(f, a) if f == "winner" && a.len() == 1 => Ok(Outcome::Winner(value_text(&a[0]))),
            Value::Atom(a) if a == "draw" => Ok(Outcome::Draw),
            _ => Err(GameError::Rules(format!(
                "game_over/2 must give winner(Player) or draw, not {}",
                self.engine.term_text(t)
            ))),
        }
    }

    /// Every legal move with its notation and the next state.
    pub fn legal_moves(&mut self, s: &State) -> Result<Vec<LegalMove>, GameError> {
        let succ = self.successors(s)?;
        let mut out = Vec::with_capacity(succ.len());
        for (mv, next) in succ {
            let text = self.notation(s, &mv)?;
            out.push(LegalMove { mv, text, next });
        }
        Ok(out)
    }

    /// Every legal move and the state it leads to, without notation (what
    /// a search needs).
    pub fn successors(&mut self, s: &State) -> Result<Vec<(Move, State)>, GameError> {
        let sols = self
            .engine
            .call("move", &[Arg::In(s.term()), Arg::Out, Arg::Out], usize::MAX)
            .map_err(|e| rules_error("move/3", e))?;
        let mut out = Vec::with_capacity(sols.len());
        for mut sol in sols {
            let next = sol.pop().expect("next");
            let mv = sol.pop().expect("move");
            if mv.nvars > 0 {
                return Err(GameError::Rules(format!(
                    "move/3 gave a move that is not ground: {}",
                    self.engine.term_text(&mv)
                )));
            }
            out.push((Move::new(mv), self.ground_state(next, "move/3")?));
        }
        Ok(out)
    }

    /// The moves of the player to move, without their successors: the
    /// optional `move/2` when the rules define it, else from `move/3`.
    pub fn moves(&mut self, s: &State) -> Result<Vec<Move>, GameError> {
        if !self.has("move", 2) {
            return Ok(self.successors(s)?.into_iter().map(|(m, _)| m).collect());
        }
        let sols = self
            .engine
            .call("move", &[Arg::In(s.term()), Arg::Out], usize::MAX)
            .map_err(|e| rules_error("move/2", e))?;
        let mut out = Vec::with_capacity(sols.len());
        for mut sol in sols {
            let mv = sol.pop().expect("one output");
            if mv.nvars > 0 {
                let t = self.engine.term_text(&mv);
                return Err(GameError::Rules(format!("move/2 gave a move that is not ground: {t}")));
            }
            out.push(Move::new(mv));
        }
        Ok(out)
    }

    /// The state after the legal move `m` (`move/3` with the move given:
    /// only its successor is built). A move that is not legal here is an
    /// error.
    pub fn play(&mut self, s: &State, m: &Move) -> Result<State, GameError> {
        let r = self
            .engine
            .call("move", &[Arg::In(s.term()), Arg::In(&m.0), Arg::Out], 1)
            .map_err(|e| rules_error("move/3", e))?;
        match r.into_iter().next() {
            Some(mut sol) => self.ground_state(sol.pop().expect("one output"), "move/3"),
            None => {
                let text = self.move_text(m)?;
                let legal = self.legal_moves(s)?.into_iter().map(|l| l.text).collect();
                Err(GameError::IllegalMove { text, legal })
            }
        }
    }

    /// Whether the game hides information (it defines `sample_state/3`).
    pub fn hidden(&self) -> bool {
        self.has("sample_state", 3)
    }

    /// A state `viewer` cannot tell apart from `s` (`sample_state/3`, drawn
    /// with the engine's generator); `s` itself in a game without hidden
    /// information.
    pub fn sample_state(&mut self, s: &State, viewer: &str) -> Result<State, GameError> {
        if !self.hidden() {
            return Ok(s.clone());
        }
        let v = self.atom(viewer)?;
        let r = self.call1("sample_state", &[Arg::In(s.term()), Arg::In(&v), Arg::Out], "sample_state/3")?;
        self.ground_state(r.into_iter().next().expect("one output"), "sample_state/3")
    }

    /// Whether the move about to be made in `s` stays hidden from the
    /// other players until a move that is not hidden is made after it
    /// (`hidden_move/1`: a simultaneous round, whose choices are shown when
    /// the last one is made).
    pub fn hidden_move(&mut self, s: &State) -> Result<bool, GameError> {
        self.holds("hidden_move", s)
    }

    /// Whether chance makes the move in `s` (`chance/1`): one of the legal
    /// moves, drawn uniformly at random by whoever runs the game; no seat
    /// chooses it (`to_move/2` names the chance role, which is not a seat).
    pub fn chance(&mut self, s: &State) -> Result<bool, GameError> {
        self.holds("chance", s)
    }

    /// Whether the move made in `s` is never shown to the other players
    /// (`private_move/1`): they learn only what `display/2` and `view/3`
    /// show them of its effects. The game's record still holds it.
    pub fn private_move(&mut self, s: &State) -> Result<bool, GameError> {
        self.holds("private_move", s)
    }

    /// Whether the optional `name(State)` holds (false where the rules do
    /// not define it).
    fn holds(&mut self, name: &'static str, s: &State) -> Result<bool, GameError> {
        if !self.has(name, 1) {
            return Ok(false);
        }
        let r = self.engine.call(name, &[Arg::In(s.term())], 1).map_err(|e| rules_error(&format!("{name}/1"), e))?;
        Ok(!r.is_empty())
    }

    /// `value(State, Player, Value)` as a number, if the game defines it.
    pub fn value(&mut self, s: &State, player: &str) -> Result<Option<f64>, GameError> {
        if !self.has("value", 3) {
            return Ok(None);
        }
        let p = self.atom(player)?;
        let r = self.call1("value", &[Arg::In(s.term()), Arg::In(&p), Arg::Out], "value/3")?;
        match self.engine.value(&r[0]) {
            Value::Int(i) => Ok(Some(i as f64)),
            Value::Float(f) => Ok(Some(f)),
            _ => Err(GameError::Rules(format!("value/3 must give a number, not {}", self.engine.term_text(&r[0])))),
        }
    }

    /// How many plies `mcts` plays a random playout from `s` before it
    /// scores the playout by `value/3` (`playout_plies(State, Plies)`, an
    /// integer, or `end` for none: `u64::MAX`), if the rules say.
    pub fn playout_plies(&mut self, s: &State) -> Result<Option<u64>, GameError> {
        if !self.has("playout_plies", 2) {
            return Ok(None);
        }
        let r = self.call1("playout_plies", &[Arg::In(s.term()), Arg::Out], "playout_plies/2")?;
        match self.engine.value(&r[0]) {
            Value::Int(n) if n >= 0 => Ok(Some(n as u64)),
            Value::Atom(a) if a == "end" => Ok(Some(u64::MAX)),
            _ => Err(GameError::Rules(format!(
                "playout_plies/2 must give a number of plies (0 or more) or `end`, not {}",
                self.engine.term_text(&r[0])
            ))),
        }
    }

    /// How many playouts `mcts` counts each root move's `value/3` score
    /// for, before its own playouts from that move (`prior_playouts(State,
    /// N)`, an integer, 0 or more), if the rules say: a prior where the
    /// moves are too many for the playouts to try each more than once or
    /// twice.
    pub fn prior_playouts(&mut self, s: &State) -> Result<Option<u32>, GameError> {
        if !self.has("prior_playouts", 2) {
            return Ok(None);
        }
        let r = self.call1("prior_playouts", &[Arg::In(s.term()), Arg::Out], "prior_playouts/2")?;
        match self.engine.value(&r[0]) {
            Value::Int(n) if (0..=1_000_000).contains(&n) => Ok(Some(n as u32)),
            _ => Err(GameError::Rules(format!(
                "prior_playouts/2 must give a number of playouts (0 to 1000000), not {}",
                self.engine.term_text(&r[0])
            ))),
        }
    }

    /// The move the rules' playout policy picks in `s`
    /// (`playout_move(State, Move)`), if they define one and it gives one.
    pub fn playout_move(&mut self, s: &State) -> Result<Option<Move>, GameError> {
        if !self.has("playout_move", 2) {
            return Ok(None);
        }
        let mut r = self
            .engine
            .call("playout_move", &[Arg::In(s.term()), Arg::Out], 1)
            .map_err(|e| rules_error("playout_move/2", e))?;
        Ok(r.pop().and_then(|mut m| m.pop()).map(Move::new))
    }

    /// A player name as a term.
    fn atom(&mut self, name: &str) -> Result<Tmpl, GameError> {
        Ok(self.engine.atom_term(name))
    }

    /// How the legal move `m` of `s` is written: `notation/3` when the
    /// rules define it (chess's algebraic notation needs the position),
    /// else as `move_text`.
    pub fn notation(&mut self, s: &State, m: &Move) -> Result<String, GameError> {
        if !self.has("notation", 3) {
            return self.move_text(m);
        }
        let r = self.call1("notation", &[Arg::In(s.term()), Arg::In(&m.0), Arg::Out], "notation/3")?;
        Ok(value_text(&self.engine.value(&r[0])))
    }

    /// How a move is written without its position (the labels of integer
    /// actions): `notation/2`, else the move term as `writeq` writes it.
    pub fn move_text(&mut self, m: &Move) -> Result<String, GameError> {
        if !self.has_notation {
            return Ok(self.engine.term_text(&m.0));
        }
        let r = self.call1("notation", &[Arg::In(&m.0), Arg::Out], "notation/2")?;
        Ok(value_text(&self.engine.value(&r[0])))
    }

    /// The position in its game's standard notation (chess: FEN), if the
    /// rules define `position_text/2`; records write it after each move.
    pub fn position_text(&mut self, s: &State) -> Result<Option<String>, GameError> {
        if !self.has("position_text", 2) {
            return Ok(None);
        }
        let r = self.call1("position_text", &[Arg::In(s.term()), Arg::Out], "position_text/2")?;
        Ok(Some(value_text(&self.engine.value(&r[0]))))
    }

    /// The position as `display/2` draws it for `viewer`.
    pub fn display(&mut self, s: &State, viewer: &str) -> Result<String, GameError> {
        if !self.has("display", 2) {
            return Ok(format!("{}\n", self.engine.term_text(s.term())));
        }
        let v = self.atom(viewer)?;
        self.engine.take_output();
        self.call1("display", &[Arg::In(s.term()), Arg::In(&v)], "display/2")?;
        Ok(self.engine.take_output())
    }

    /// Whether the rules draw the board (`view/3`).
    pub fn has_view(&self) -> bool {
        self.has("view", 3)
    }

    /// What `viewer` (a player or `spectator`) sees of `s`, if the rules
    /// define `view/3`.
    pub fn view(&mut self, s: &State, viewer: &str) -> Result<Option<View>, GameError> {
        if !self.has_view() {
            return Ok(None);
        }
        let v = self.atom(viewer)?;
        let r = self.call1("view", &[Arg::In(s.term()), Arg::In(&v), Arg::Out], "view/3")?;
        View::read(&mut self.engine, &r[0]).map(Some).map_err(GameError::Rules)
    }

    /// The sites (or hand ids) a person clicks to make `m` in `s`, each as
    /// `writeq/1` writes it, if the rules define `move_clicks/3`.
    pub fn move_clicks(&mut self, s: &State, m: &Move) -> Result<Option<Vec<String>>, GameError> {
        if !self.has("move_clicks", 3) {
            return Ok(None);
        }
        let r = self.call1("move_clicks", &[Arg::In(s.term()), Arg::In(&m.0), Arg::Out], "move_clicks/3")?;
        let Some(list) = self.engine.list_terms(&r[0]) else {
            let t = self.engine.term_text(&r[0]);
            return Err(GameError::Rules(format!("move_clicks/3 must give a list, not {t}")));
        };
        let mut clicks = Vec::new();
        for c in &list {
            let t = self.engine.term_text(c);
            if c.nvars > 0 {
                return Err(GameError::Rules(format!("move_clicks/3: the click {t} is not ground")));
            }
            clicks.push(t);
        }
        Ok(Some(clicks))
    }

    /// `score(State, Player, Score)` for each player that has one.
    pub fn scores(&mut self, s: &State, players: &[String]) -> Result<Vec<(String, String)>, GameError> {
        if !self.has("score", 3) {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for p in players {
            let pt = self.atom(p)?;
            let r = self
                .engine
                .call("score", &[Arg::In(s.term()), Arg::In(&pt), Arg::Out], 1)
                .map_err(|e| rules_error("score/3", e))?;
            if let Some(r) = r.into_iter().next() {
                out.push((p.clone(), self.engine.term_text(&r[0])));
            }
        }
        Ok(out)
    }

    /// Leaves of the move tree `depth` plies deep.
    pub fn perft(&mut self, s: &State, depth: u32) -> Result<u64, GameError> {
        let d = int_term(depth.into());
        let r = self.call1("$perft", &[Arg::In(s.term()), Arg::In(&d), Arg::Out], "perft")?;
        self.engine
            .value(&r[0])
            .as_int()
            .map(|n| n as u64)
            .ok_or_else(|| GameError::Rules("perft gave no count".into()))
    }

    /// Leaves of the move tree at each depth from 1 to `depth`, in one walk
    /// of the tree (`'$perft_counts'/3`): what [`Game::perft`] gives for
    /// each depth, without walking the shallower levels again.
    pub fn perft_counts(&mut self, s: &State, depth: u32) -> Result<Vec<u64>, GameError> {
        let d = int_term(depth.into());
        let r = self.call1("$perft_counts", &[Arg::In(s.term()), Arg::In(&d), Arg::Out], "perft")?;
        let counts = match self.engine.value(&r[0]) {
            Value::List(items) => items.iter().map(|v| v.as_int().map(|n| n as u64)).collect(),
            _ => None,
        };
        counts.ok_or_else(|| GameError::Rules("perft gave no counts".into()))
    }

    /// One game of uniformly random moves from `s`: its length in plies and
    /// its result.
    pub fn playout(&mut self, s: &State) -> Result<(u64, Outcome), GameError> {
        match self.random_playout(s, u64::MAX, None, Draw::Uniform)? {
            Some((plies, PlayoutEnd::Over(o))) => Ok((plies, o)),
            _ => Err(GameError::Rules("random playout: did not end".into())),
        }
    }

    /// One uniformly random game seeded with `seed`, from `from`, or from a
    /// start position dealt with the seed: its length and result.
    pub fn seeded_playout(
        &mut self,
        options: &Tmpl,
        from: Option<&State>,
        seed: u64,
    ) -> Result<(u64, Outcome), GameError> {
        let start = match from {
            Some(s) => s.clone(),
            None => self.initial_state(options, seed)?,
        };
        self.seed(seed);
        self.playout(&start)
    }

    /// Random moves from `s` until the game ends or `max_plies` are played,
    /// drawn as `draw` says; `None` if `time` runs out first.
    pub fn random_playout(
        &mut self,
        s: &State,
        max_plies: u64,
        time: Option<std::time::Duration>,
        draw: Draw,
    ) -> Result<Option<(u64, PlayoutEnd)>, GameError> {
        let (zero, max) = (int_term(0), int_term(max_plies.min(1_000_000_000_000) as i64));
        // Before the time limit: the plan must not depend on the clock.
        self.find_playout_plan();
        let saved = self.engine.limits().clone();
        if time.is_some() {
            self.engine.set_limits(crate::engine::Limits { timeout: time, ..saved.clone() });
        }
        let plan = match &self.plan {
            PlayoutPlan::Made(_, p) => p.as_ref(),
            _ => None,
        };
        let args = [Arg::In(s.term()), Arg::In(&zero), Arg::In(&max), Arg::Out, Arg::Out, Arg::Out];
        let r = match plan {
            _ if draw == Draw::Policy && self.has("playout_move", 2) => {
                let none = self.engine.atom_term("none");
                let with: Vec<Arg> = std::iter::once(Arg::In(plan.unwrap_or(&none))).chain(args).collect();
                self.engine.call("$policy_playout", &with, 1)
            }
            Some(p) => {
                let with: Vec<Arg> = std::iter::once(Arg::In(p)).chain(args).collect();
                self.engine.call("$playout_with", &with, 1)
            }
            None => self.engine.call("$playout", &args, 1),
        };
        self.engine.set_limits(saved);
        let mut r = match r {
            Ok(mut sols) => sols.pop().ok_or_else(|| GameError::Rules("random playout failed".into()))?,
            Err(QueryError::Limit { resource, .. }) if resource == "time" && time.is_some() => return Ok(None),
            Err(e) => return Err(rules_error("random playout", e)),
        };
        let last = State::new(r.pop().expect("last state"));
        let plies = self.engine.value(&r[0]).as_int().unwrap_or(0) as u64;
        let end = match self.engine.value(&r[1]) {
            Value::Compound(f, a) if f == "over" && a.len() == 1 => match &a[0] {
                Value::Compound(w, p) if w == "winner" && p.len() == 1 => {
                    PlayoutEnd::Over(Outcome::Winner(value_text(&p[0])))
                }
                _ => PlayoutEnd::Over(Outcome::Draw),
            },
            _ => PlayoutEnd::Cut(last),
        };
        Ok(Some((plies, end)))
    }

    /// Says that the states this game plays are made with `options` (as
    /// `initial_state/2` does), so that its random playouts may draw
    /// integer actions, numbered for those options.
    pub fn use_options(&mut self, options: &Tmpl) {
        self.plan = match std::mem::take(&mut self.plan) {
            PlayoutPlan::Unknown => PlayoutPlan::For(options.clone()),
            PlayoutPlan::For(o) if o == *options => PlayoutPlan::For(o),
            PlayoutPlan::Made(o, p) if o == *options => PlayoutPlan::Made(o, p),
            _ => PlayoutPlan::Mixed,
        };
    }

    /// The options every state of this game was made with, as text (for
    /// a copy of the game in another thread); `None` when there were none,
    /// or more than one set.
    pub fn options_in_use(&mut self) -> Option<String> {
        match &self.plan {
            PlayoutPlan::For(o) | PlayoutPlan::Made(o, _) => Some(self.engine.term_text(o)),
            _ => None,
        }
    }

    /// Finds how random playouts draw their moves (`'$playout_plan'/3`),
    /// once for the options of the game's states, measured in the start
    /// position dealt with seed 0. The plan is the options' alone (not the
    /// position of the first playout, nor the machine: costs are counted
    /// in inferences), and finding it draws nothing from the random
    /// generator, so a seed draws the same moves in a whole match and in
    /// its shards, on every machine.
    fn find_playout_plan(&mut self) {
        let PlayoutPlan::For(o) = &self.plan else { return };
        let o = o.clone();
        let plan = self.engine.keeping_rng(|e| {
            e.set_seed(0);
            let s = e.call("initial_state", &[Arg::In(&o), Arg::Out], 1).ok()?.pop()?.pop()?;
            e.call("$playout_plan", &[Arg::In(&o), Arg::In(&s), Arg::Out], 1).ok()?.pop()?.pop()
        });
        self.plan = PlayoutPlan::Made(o, plan);
    }

    /// Sets the seed of the engine's random generator.
    pub fn seed(&mut self, seed: u64) {
        self.engine.set_seed(seed);
    }

    /// The move a person typed: its notation (ignoring case and spaces), a
    /// unique prefix of one, or its number in the list (from 1).
    pub fn match_move(&mut self, legal: &[LegalMove], typed: &str) -> Result<usize, GameError> {
        let texts: Vec<&str> = legal.iter().map(|m| m.text.as_str()).collect();
        let moves: Vec<&Move> = legal.iter().map(|m| &m.mv).collect();
        self.match_text(&moves, &texts, typed)
    }

    /// Which of `moves`, written `texts`, a person typed (`match_typed`);
    /// in a game whose notation needs the position (`notation/3`), the
    /// move may also be typed as `notation/2` writes it (chess: `e2e4`
    /// beside `e4`).
    pub fn match_text(&mut self, moves: &[&Move], texts: &[&str], typed: &str) -> Result<usize, GameError> {
        match match_typed(texts, typed) {
            Err(e) if self.has_notation && self.has("notation", 3) => {
                let t: String = typed.chars().filter(|c| !c.is_whitespace()).collect();
                for (i, m) in moves.iter().enumerate() {
                    if self.move_text(m)?.eq_ignore_ascii_case(&t) {
                        return Ok(i);
                    }
                }
                Err(e)
            }
            found => found,
        }
    }

    /// The game's own AI (`choose_move(State, Level, Move)`), if it has one.
    pub fn choose_move(&mut self, s: &State, level: i64) -> Result<Move, GameError> {
        let l = self.engine.parse_term(&level.to_string()).map_err(|e| GameError::Rules(e.to_string()))?;
        let r = self.call1("choose_move", &[Arg::In(s.term()), Arg::In(&l), Arg::Out], "choose_move/3")?;
        Ok(Move::new(r.into_iter().next().expect("one output")))
    }

    /// Whether the rules define `name/arity` (for the interface's optional
    /// predicates, as found at load).
    pub fn has(&self, name: &str, arity: u32) -> bool {
        match OPTIONAL.iter().position(|&(n, a)| a == arity && n == name) {
            Some(i) => self.optional & 1 << i != 0,
            None => self.engine.defined_arities(name).contains(&arity),
        }
    }
}

/// An integer as a term.
pub(super) fn int_term(n: i64) -> Tmpl {
    Tmpl { cells: vec![Cell::Int(n)], nvars: 0 }
}

/// Which of the moves written `texts` a person typed: its notation
/// (ignoring case and spaces), a unique prefix of one, or its number in
/// the list (from 1).
pub fn match_typed(texts: &[&str], typed: &str) -> Result<usize, GameError> {
    fn bare_chars(s: &str) -> impl Iterator<Item = char> + '_ {
        s.chars().filter(|c| !c.is_whitespace())
    }
    // Case counts only where it tells moves apart (chess: `bxc3` is a
    // pawn's capture, `Bxc3` a bishop's): the exact text first.
    // What a program types is a legal move's text: found without a copy,
    // byte for byte first (as a program gives it), then ignoring spaces.
    if let Some(i) = texts.iter().position(|x| *x == typed) {
        return Ok(i);
    }
    if let Some(i) = texts.iter().position(|x| bare_chars(x).eq(bare_chars(typed))) {
        return Ok(i);
    }
    let bare = |s: &str| bare_chars(s).collect::<String>();
    let t = bare(typed);
    let bared: Vec<String> = texts.iter().map(|x| bare(x)).collect();
    let lower = |s: &str| s.to_lowercase();
    let unique = |hits: Vec<usize>| if hits.len() == 1 { Some(hits[0]) } else { None };
    let lt = lower(&t);
    if let Some(i) = unique((0..bared.len()).filter(|&i| lower(&bared[i]) == lt).collect()) {
        return Ok(i);
    }
    if let Ok(n) = t.parse::<usize>()
        && n >= 1
        && n <= texts.len()
    {
        return Ok(n - 1);
    }
    if !t.is_empty() {
        // A prefix: of one move's text as written, else ignoring case. A
        // prefix of several is ambiguous, not illegal.
        let exact: Vec<usize> = (0..bared.len()).filter(|&i| bared[i].starts_with(&t)).collect();
        let hits = if exact.is_empty() {
            (0..bared.len()).filter(|&i| lower(&bared[i]).starts_with(&lt)).collect()
        } else {
            exact
        };
        match hits[..] {
            [i] => return Ok(i),
            [] => {}
            _ => {
                let candidates = hits.iter().map(|&i| texts[i].to_string()).collect();
                return Err(GameError::AmbiguousMove { text: typed.trim().to_string(), candidates });
            }
        }
    }
    Err(GameError::IllegalMove { text: typed.trim().to_string(), legal: texts.iter().map(|x| x.to_string()).collect() })
}

/// Text of an atom or string value; anything else as written.
fn value_text(v: &Value) -> String {
    match v {
        Value::Atom(a) | Value::Str(a) => a.clone(),
        Value::Int(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

/// Required predicates that are missing or have the wrong arity.
fn interface_problems(e: &Engine) -> Vec<String> {
    let mut problems = Vec::new();
    for &(name, arity) in REQUIRED {
        let arities = e.defined_arities(name);
        if arities.contains(&arity) {
            continue;
        }
        if arities.is_empty() {
            problems.push(format!("required predicate {name}/{arity} is not defined"));
        } else {
            let found: Vec<String> = arities.iter().map(|a| format!("{name}/{a}")).collect();
            problems
                .push(format!("required predicate {name}/{arity} is not defined (found {} instead)", found.join(", ")));
        }
    }
    problems
}
