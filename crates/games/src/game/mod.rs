//! The game interface over the engine: a `.rules` file loaded as a
//! [`Game`], its options, states and moves copied out of the engine as
//! ground terms, legal moves with notation, outcomes, display, perft and
//! random playouts. Nothing here knows any particular game.

pub mod actions;
pub mod observe;
pub mod play;
pub mod record;
pub mod spec;
pub mod view;

use crate::engine::term::Cell;
use crate::engine::{Arg, Engine, QueryError, Tmpl, Value};
use crate::syntax::render;
pub use actions::ActionSpace;
pub use observe::Observer;
pub use play::{Play, Shown, Step};
pub use spec::Spec;
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
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
            Allowed::Text => crate::engine::write::format_atom(value, true),
            _ => value.to_string(),
        }
    }
}

/// A position: a ground term.
#[derive(Clone, Debug, PartialEq)]
pub struct State(pub Tmpl);

/// A move: a ground term.
#[derive(Clone, Debug, PartialEq)]
pub struct Move(pub Tmpl);

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// load (`has` is asked on every move).
    optional: HashSet<(&'static str, u32)>,
}

/// The optional predicates of the game interface (and of the adapters).
const OPTIONAL: &[(&str, u32)] = &[
    ("option", 4),
    ("describe", 1),
    ("display", 2),
    ("score", 3),
    ("value", 3),
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

/// What `check`'s random games were like: how they ended, how long they
/// were, how many moves a position had, the slowest ply.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Played {
    pub games: u32,
    /// Wins of each player, in seat order.
    pub wins: Vec<(String, u32)>,
    pub draws: u32,
    /// Games cut off at the ply limit.
    pub unfinished: u32,
    /// Positions played through (plies) and their legal moves, added up.
    pub plies: u64,
    pub moves: u64,
    pub most_moves: usize,
    /// The slowest ply (its checks included): seconds, game and ply (from 1).
    pub slowest: (f64, u32, u32),
}

impl Played {
    fn ended(&mut self, o: &Outcome) {
        match o {
            Outcome::Draw => self.draws += 1,
            Outcome::Winner(p) => match self.wins.iter_mut().find(|(w, _)| w == p) {
                Some((_, n)) => *n += 1,
                None => self.wins.push((p.clone(), 1)),
            },
        }
    }

    fn position(&mut self, moves: usize, seconds: f64, game: u32, ply: u32) {
        self.plies += 1;
        self.moves += moves as u64;
        self.most_moves = self.most_moves.max(moves);
        if seconds > self.slowest.0 {
            self.slowest = (seconds, game + 1, ply + 1);
        }
    }
}

impl fmt::Display for Played {
    /// One line: "5 random games: white won 3, black 2, 0 draws; 41.2
    /// plies a game, 14.1 moves a position (at most 22); slowest ply 3.1
    /// ms (game 2, ply 17)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u32, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        write!(f, "{}:", plural(self.games, "random game"))?;
        let wins: Vec<String> = self.wins.iter().map(|(p, n)| format!("{p} won {n}")).collect();
        if !wins.is_empty() {
            write!(f, " {},", wins.join(", "))?;
        }
        write!(f, " {}", plural(self.draws, "draw"))?;
        if self.unfinished > 0 {
            write!(f, ", {} cut off at the ply limit", self.unfinished)?;
        }
        if self.games > 0 && self.plies > 0 {
            let per_game = self.plies as f64 / self.games as f64;
            let branching = self.moves as f64 / self.plies as f64;
            write!(f, "; {per_game:.1} plies a game, {branching:.1} moves a position (at most {})", self.most_moves)?;
            let (s, g, p) = self.slowest;
            write!(f, "; slowest ply {:.1} ms (game {g}, ply {p})", s * 1000.0)?;
        }
        Ok(())
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
        let optional =
            OPTIONAL.iter().copied().filter(|(n, a)| engine.defined_arities(n).contains(a)).collect::<HashSet<_>>();
        let mut game = Game {
            engine,
            spec,
            name,
            title: String::new(),
            description: None,
            options: Vec::new(),
            has_notation,
            optional,
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
        Ok(State(t))
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

    /// Whose turn it is.
    pub fn to_move(&mut self, s: &State) -> Result<String, GameError> {
        let r = self.call1("to_move", &[Arg::In(&s.0), Arg::Out], "to_move/2")?;
        Ok(value_text(&self.engine.value(&r[0])))
    }

    /// The result if the game is over.
    pub fn outcome(&mut self, s: &State) -> Result<Option<Outcome>, GameError> {
        let r =
            self.engine.call("game_over", &[Arg::In(&s.0), Arg::Out], 1).map_err(|e| rules_error("game_over/2", e))?;
        let Some(r) = r.into_iter().next() else { return Ok(None) };
        match self.engine.value(&r[0]) {
            Value::Compound(f, a) if f == "winner" && a.len() == 1 => Ok(Some(Outcome::Winner(value_text(&a[0])))),
            Value::Atom(a) if a == "draw" => Ok(Some(Outcome::Draw)),
            _ => Err(GameError::Rules(format!(
                "game_over/2 must give winner(Player) or draw, not {}",
                self.engine.term_text(&r[0])
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
            .call("move", &[Arg::In(&s.0), Arg::Out, Arg::Out], usize::MAX)
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
            out.push((Move(mv), self.ground_state(next, "move/3")?));
        }
        Ok(out)
    }

    /// The moves of the player to move, without their successors: the
    /// optional `move/2` when the rules define it, else from `move/3`.
    pub fn moves(&mut self, s: &State) -> Result<Vec<Move>, GameError> {
        if !self.has("move", 2) {
            return Ok(self.successors(s)?.into_iter().map(|(m, _)| m).collect());
        }
        let sols =
            self.engine.call("move", &[Arg::In(&s.0), Arg::Out], usize::MAX).map_err(|e| rules_error("move/2", e))?;
        let mut out = Vec::with_capacity(sols.len());
        for mut sol in sols {
            let mv = sol.pop().expect("one output");
            if mv.nvars > 0 {
                let t = self.engine.term_text(&mv);
                return Err(GameError::Rules(format!("move/2 gave a move that is not ground: {t}")));
            }
            out.push(Move(mv));
        }
        Ok(out)
    }

    /// The state after the legal move `m` (`move/3` with the move given:
    /// only its successor is built). A move that is not legal here is an
    /// error.
    pub fn play(&mut self, s: &State, m: &Move) -> Result<State, GameError> {
        let r = self
            .engine
            .call("move", &[Arg::In(&s.0), Arg::In(&m.0), Arg::Out], 1)
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
        let r = self.call1("sample_state", &[Arg::In(&s.0), Arg::In(&v), Arg::Out], "sample_state/3")?;
        self.ground_state(r.into_iter().next().expect("one output"), "sample_state/3")
    }

    /// A grounded GDL game: where its network and its translation disagree
    /// in state `s` (moves, in order, with their next states; the end), and
    /// whether the round a native random playout plays from `s` is one of
    /// the translation's.
    fn network_differs(&mut self, s: &State, legal: &[LegalMove]) -> Option<String> {
        let grounded = self.outcome(s).ok()?;
        let native = self.random_playout(s, 1, None).ok().flatten();
        let ext = self.spec.extension()?.clone();
        ext.set_enabled(&mut self.engine, false);
        let plain = self.legal_moves(s);
        let plain_end = self.outcome(s);
        ext.set_enabled(&mut self.engine, true);
        let (plain, plain_end) = (plain.ok()?, plain_end.ok()?);
        let state = self.engine.term_text(&s.0);
        let texts = |l: &[LegalMove]| l.iter().map(|m| m.text.clone()).collect::<Vec<_>>();
        if texts(legal) != texts(&plain) || legal.iter().zip(&plain).any(|(a, b)| a.next != b.next) {
            return Some(format!(
                "the grounded rules give other moves than the translation in {state}: {:?} against {:?}",
                texts(legal),
                texts(&plain)
            ));
        }
        if grounded != plain_end {
            return Some(format!(
                "the grounded rules end the game otherwise than the translation in {state}: {grounded:?} against \
                 {plain_end:?}"
            ));
        }
        // A turn-taking round: the native playout's must be one of the moves.
        if let Some((1, PlayoutEnd::Cut(next))) = native
            && legal.iter().all(|m| self.engine.term_text(&m.next.0).ends_with(",[],[])"))
            && !legal.iter().any(|m| m.next == next)
        {
            let next = self.engine.term_text(&next.0);
            return Some(format!("a native random playout from {state} reached {next}, which no move gives"));
        }
        None
    }

    /// With the optional `move/2` (the moves without their successors):
    /// what is wrong if it does not list, in order, the moves `move/3`
    /// gives.
    fn moves_alone_differ(&mut self, s: &State, legal: &[LegalMove]) -> Option<String> {
        if !self.has("move", 2) {
            return None;
        }
        let alone = match self.engine.call("move", &[Arg::In(&s.0), Arg::Out], usize::MAX) {
            Ok(sols) => sols.into_iter().map(|mut m| m.pop().expect("one output")).collect::<Vec<_>>(),
            Err(e) => return Some(format!("move/2: {e}")),
        };
        let with_next: Vec<&Tmpl> = legal.iter().map(|l| &l.mv.0).collect();
        (alone.iter().collect::<Vec<_>>() != with_next).then(|| {
            let texts = |ms: &[&Tmpl], e: &mut Engine| ms.iter().map(|m| e.term_text(m)).collect::<Vec<_>>().join(" ");
            let a = texts(&alone.iter().collect::<Vec<_>>(), &mut self.engine);
            let b = texts(&with_next, &mut self.engine);
            format!("move/2 gives [{a}] where move/3 gives [{b}]")
        })
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
        let r = self.engine.call(name, &[Arg::In(&s.0)], 1).map_err(|e| rules_error(&format!("{name}/1"), e))?;
        Ok(!r.is_empty())
    }

    /// `value(State, Player, Value)` as a number, if the game defines it.
    pub fn value(&mut self, s: &State, player: &str) -> Result<Option<f64>, GameError> {
        if !self.has("value", 3) {
            return Ok(None);
        }
        let p = self.atom(player)?;
        let r = self.call1("value", &[Arg::In(&s.0), Arg::In(&p), Arg::Out], "value/3")?;
        match self.engine.value(&r[0]) {
            Value::Int(i) => Ok(Some(i as f64)),
            Value::Float(f) => Ok(Some(f)),
            _ => Err(GameError::Rules(format!("value/3 must give a number, not {}", self.engine.term_text(&r[0])))),
        }
    }

    /// A player name as a term.
    fn atom(&mut self, name: &str) -> Result<Tmpl, GameError> {
        self.engine
            .parse_term(&crate::engine::write::format_atom(name, true))
            .map_err(|e| GameError::Rules(e.to_string()))
    }

    /// How the legal move `m` of `s` is written: `notation/3` when the
    /// rules define it (chess's algebraic notation needs the position),
    /// else as `move_text`.
    pub fn notation(&mut self, s: &State, m: &Move) -> Result<String, GameError> {
        if !self.has("notation", 3) {
            return self.move_text(m);
        }
        let r = self.call1("notation", &[Arg::In(&s.0), Arg::In(&m.0), Arg::Out], "notation/3")?;
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
        let r = self.call1("position_text", &[Arg::In(&s.0), Arg::Out], "position_text/2")?;
        Ok(Some(value_text(&self.engine.value(&r[0]))))
    }

    /// The position as `display/2` draws it for `viewer`.
    pub fn display(&mut self, s: &State, viewer: &str) -> Result<String, GameError> {
        if !self.has("display", 2) {
            return Ok(format!("{}\n", self.engine.term_text(&s.0)));
        }
        let v = self.atom(viewer)?;
        self.engine.take_output();
        self.call1("display", &[Arg::In(&s.0), Arg::In(&v)], "display/2")?;
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
        let r = self.call1("view", &[Arg::In(&s.0), Arg::In(&v), Arg::Out], "view/3")?;
        View::read(&mut self.engine, &r[0]).map(Some).map_err(GameError::Rules)
    }

    /// The sites (or hand ids) a person clicks to make `m` in `s`, each as
    /// `writeq/1` writes it, if the rules define `move_clicks/3`.
    pub fn move_clicks(&mut self, s: &State, m: &Move) -> Result<Option<Vec<String>>, GameError> {
        if !self.has("move_clicks", 3) {
            return Ok(None);
        }
        let r = self.call1("move_clicks", &[Arg::In(&s.0), Arg::In(&m.0), Arg::Out], "move_clicks/3")?;
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

    /// What is wrong with `view/3` and `move_clicks/3` in `s`: each view
    /// in itself, hidden pieces shown to the wrong viewer (and anything a
    /// viewer sees change when `sample_state/3` re-deals what it cannot
    /// see), clicks that are no site or hand item of the mover's.
    /// Each problem comes with its kind (the first of each kind is
    /// reported: one broken rule shows in every position).
    fn view_problems(&mut self, s: &State, legal: &[LegalMove], players: &[String]) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mover = self.to_move(s).unwrap_or_default();
        let mut mover_view = None;
        for viewer in players.iter().map(String::as_str).chain(["spectator"]) {
            let v = match self.view(s, viewer) {
                Ok(Some(v)) => v,
                Ok(None) => return out,
                Err(e) => {
                    out.push(("view", e.to_string()));
                    continue;
                }
            };
            out.extend(v.problems());
            // In a game with nothing hidden every hand is public.
            if self.hidden() {
                out.extend(v.leaks(viewer).into_iter().map(|p| ("hands", p)));
            }
            if self.hidden() && viewer != "spectator" {
                match self.sample_state(s, viewer).and_then(|t| self.view(&t, viewer)) {
                    Ok(Some(w)) if w != v => out.push((
                        "sample",
                        format!(
                            "view/3 shows {viewer} something sample_state/3 re-deals: it reveals what {viewer} may not see"
                        ),
                    )),
                    Err(e) => out.push(("sample", e.to_string())),
                    _ => {}
                }
            }
            if viewer == mover {
                mover_view = Some(v);
            }
        }
        let Some(v) = mover_view else { return out };
        let sites = v.site_ids();
        let hand: HashSet<&str> = v.hand_ids(&mover).collect();
        for m in legal {
            match self.move_clicks(s, &m.mv) {
                Ok(Some(clicks)) => {
                    for c in clicks.iter().filter(|c| !sites.contains(c.as_str()) && !hand.contains(c.as_str())) {
                        let why = format!("move_clicks/3 of {}: {c} is no site, and no item of {mover}'s hand", m.text);
                        out.push(("click", why));
                    }
                }
                Ok(None) => break,
                Err(GameError::Rules(e)) if e.ends_with("failed") => {
                    out.push(("clicks", format!("move_clicks/3 fails for the legal move {}", m.text)));
                }
                Err(e) => out.push(("clicks", e.to_string())),
            }
        }
        out
    }

    /// What is wrong with the integer actions of the legal moves: a move
    /// without one, or (numbered by `action/3`) an action that does not
    /// give its move back.
    fn action_problem(&mut self, space: &ActionSpace, legal: &[LegalMove]) -> Option<String> {
        let what = if space.listed_moves().is_some() { "action_space/2" } else { "action/3" };
        for m in legal {
            match self.action_of(space, &m.mv) {
                Ok(Some(a)) => match self.move_of(space, a) {
                    Ok(Some(back)) if back == m.mv => {}
                    Ok(_) => {
                        return Some(format!(
                            "action/3 numbers the move {} {a}, but gives action {a} another move",
                            m.text
                        ));
                    }
                    Err(e) => return Some(e.to_string()),
                },
                Ok(None) => return Some(format!("the legal move {} is not in {what}", m.text)),
                Err(e) => return Some(e.to_string()),
            }
        }
        None
    }

    /// What is wrong with the observations of `s`: one that the rules'
    /// `observation/3` cannot make, or (with hidden information) one that
    /// changes when `sample_state/3` re-deals what its viewer cannot see.
    /// (A derived observation that cannot be made comes of a view the view
    /// checks report.)
    fn observation_problem(&mut self, observer: &Observer, s: &State, players: &[String]) -> Option<String> {
        for viewer in players {
            let seen = match self.observation(observer, s, viewer) {
                Ok(o) => o,
                Err(e) if matches!(observer, Observer::Rules { .. }) => return Some(e.to_string()),
                Err(_) => return None,
            };
            if self.hidden() {
                match self.sample_state(s, viewer).and_then(|t| self.observation(observer, &t, viewer)) {
                    Ok(o) if o != seen => {
                        return Some(format!(
                            "the observation of {viewer} changes when sample_state/3 re-deals what {viewer} \
                             cannot see: it reveals hidden information"
                        ));
                    }
                    Err(e) => return Some(e.to_string()),
                    _ => {}
                }
            }
        }
        None
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
                .call("score", &[Arg::In(&s.0), Arg::In(&pt), Arg::Out], 1)
                .map_err(|e| rules_error("score/3", e))?;
            if let Some(r) = r.into_iter().next() {
                out.push((p.clone(), self.engine.term_text(&r[0])));
            }
        }
        Ok(out)
    }

    /// Leaves of the move tree `depth` plies deep.
    pub fn perft(&mut self, s: &State, depth: u32) -> Result<u64, GameError> {
        let d = self.engine.parse_term(&depth.to_string()).map_err(|e| GameError::Rules(e.to_string()))?;
        let r = self.call1("$perft", &[Arg::In(&s.0), Arg::In(&d), Arg::Out], "perft")?;
        self.engine
            .value(&r[0])
            .as_int()
            .map(|n| n as u64)
            .ok_or_else(|| GameError::Rules("perft gave no count".into()))
    }

    /// One game of uniformly random moves from `s`: its length in plies and
    /// its result.
    pub fn playout(&mut self, s: &State) -> Result<(u64, Outcome), GameError> {
        match self.random_playout(s, u64::MAX, None)? {
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

    /// Random moves from `s` until the game ends or `max_plies` are played;
    /// `None` if `time` runs out first.
    pub fn random_playout(
        &mut self,
        s: &State,
        max_plies: u64,
        time: Option<std::time::Duration>,
    ) -> Result<Option<(u64, PlayoutEnd)>, GameError> {
        let int = |n: u64| Tmpl { cells: vec![Cell::Int(n as i64)], nvars: 0 };
        let (zero, max) = (int(0), int(max_plies.min(1_000_000_000_000)));
        let saved = self.engine.limits().clone();
        if time.is_some() {
            self.engine.set_limits(crate::engine::Limits { timeout: time, ..saved.clone() });
        }
        let r = self.engine.call(
            "$playout",
            &[Arg::In(&s.0), Arg::In(&zero), Arg::In(&max), Arg::Out, Arg::Out, Arg::Out],
            1,
        );
        self.engine.set_limits(saved);
        let mut r = match r {
            Ok(mut sols) => sols.pop().ok_or_else(|| GameError::Rules("random playout failed".into()))?,
            Err(QueryError::Limit { resource, .. }) if resource == "time" && time.is_some() => return Ok(None),
            Err(e) => return Err(rules_error("random playout", e)),
        };
        let last = State(r.pop().expect("last state"));
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
        let r = self.call1("choose_move", &[Arg::In(&s.0), Arg::In(&l), Arg::Out], "choose_move/3")?;
        Ok(Move(r.into_iter().next().expect("one output")))
    }

    /// Plays `games` seeded random games (at most `max_plies` each) and
    /// reports what breaks the interface's rules: states that are not
    /// ground, positions without `to_move/2`, a move or a notation listed
    /// twice, a position with no move that `game_over/2` does not end; and
    /// what the games were like ([`Played`]).
    pub fn check_play(&mut self, options: &Tmpl, games: u32, max_plies: u32, seed: u64) -> (Vec<String>, Played) {
        let mut played = Played::default();
        // Each distinct problem once, with where it was first seen.
        let mut problems: Vec<(String, String)> = Vec::new();
        let mut report = |what: String, g: u32, ply: u32| {
            if !problems.iter().any(|(w, _)| *w == what) {
                problems.push((what, format!("first seen in game {}, ply {}", g + 1, ply + 1)));
            }
        };
        let mut walk = Walk::new(seed);
        let players = match self.players(options) {
            Ok(p) => p,
            Err(e) => {
                report(e.to_string(), 0, 0);
                Vec::new()
            }
        };
        played.wins = players.iter().map(|p| (p.clone(), 0)).collect();
        let mut view_kinds = HashSet::new();
        let space = self.action_space(options).unwrap_or_else(|e| {
            report(e.to_string(), 0, 0);
            None
        });
        // Observations are checked where the game has them (its own
        // observation/3, or a view/3 with fixed sites).
        let observer = match self.observer(options, seed) {
            Ok(o) => Some(o),
            Err(e) if self.has("observation", 3) => {
                report(e.to_string(), 0, 0);
                None
            }
            Err(_) => None,
        };
        'games: for g in 0..games {
            let mut state = match self.initial_state(options, seed + g as u64) {
                Ok(s) => s,
                Err(e) => {
                    report(format!("initial state: {e}"), g, 0);
                    break;
                }
            };
            played.games += 1;
            for ply in 0..max_plies {
                let started = std::time::Instant::now();
                match self.outcome(&state) {
                    Ok(Some(o)) => {
                        played.ended(&o);
                        break;
                    }
                    Ok(None) if ply + 1 == max_plies => played.unfinished += 1,
                    Ok(None) => {}
                    Err(e) => {
                        report(e.to_string(), g, ply);
                        continue 'games;
                    }
                }
                if let Err(e) = self.to_move(&state) {
                    report(format!("to_move/2 fails in a position that is not over ({e})"), g, ply);
                    continue 'games;
                }
                let legal = match self.legal_moves(&state) {
                    Ok(l) => l,
                    Err(e) => {
                        report(e.to_string(), g, ply);
                        continue 'games;
                    }
                };
                if legal.is_empty() {
                    report(
                        "no legal move, and game_over/2 does not end the game (move/3 should offer a pass)".into(),
                        g,
                        ply,
                    );
                    continue 'games;
                }
                if let Some(problem) = self.moves_alone_differ(&state, &legal) {
                    report(problem, g, ply);
                }
                // The first disagreement of the network (each names its
                // state, so each would be new).
                if self.spec.extension().is_some()
                    && !view_kinds.contains("network")
                    && let Some(problem) = self.network_differs(&state, &legal)
                {
                    view_kinds.insert("network");
                    report(problem, g, ply);
                }
                for i in 0..legal.len() {
                    for j in 0..i {
                        if legal[i].mv == legal[j].mv {
                            report(format!("move/3 gives the move {} twice", legal[i].text), g, ply);
                        } else if legal[i].text == legal[j].text {
                            report(format!("two different moves are both written {}", legal[i].text), g, ply);
                        }
                    }
                }
                for (kind, p) in self.view_problems(&state, &legal, &players) {
                    if view_kinds.insert(kind) {
                        report(p, g, ply);
                    }
                }
                if let Some(space) = &space
                    && let Some(p) = self.action_problem(space, &legal)
                {
                    report(p, g, ply);
                }
                if let Some(observer) = &observer
                    && let Some(p) = self.observation_problem(observer, &state, &players)
                    && view_kinds.insert("observation")
                {
                    report(p, g, ply);
                }
                played.position(legal.len(), started.elapsed().as_secs_f64(), g, ply);
                state = legal[walk.pick(legal.len())].next.clone();
            }
        }
        (problems.into_iter().map(|(w, at)| format!("{w} ({at})")).collect(), played)
    }

    /// Whether the rules define `name/arity` (for the interface's optional
    /// predicates, as found at load).
    pub fn has(&self, name: &str, arity: u32) -> bool {
        match OPTIONAL.iter().find(|&&(n, a)| n == name && a == arity) {
            Some(key) => self.optional.contains(key),
            None => self.engine.defined_arities(name).contains(&arity),
        }
    }
}

/// Which of the moves written `texts` a person typed: its notation
/// (ignoring case and spaces), a unique prefix of one, or its number in
/// the list (from 1).
pub fn match_typed(texts: &[&str], typed: &str) -> Result<usize, GameError> {
    // Case counts only where it tells moves apart (chess: `bxc3` is a
    // pawn's capture, `Bxc3` a bishop's): the exact text first.
    let bare = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let t = bare(typed);
    let bared: Vec<String> = texts.iter().map(|x| bare(x)).collect();
    if let Some(i) = bared.iter().position(|x| *x == t) {
        return Ok(i);
    }
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
