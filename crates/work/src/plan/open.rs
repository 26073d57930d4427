//! A game as a command line names it: finding and loading it, its
//! options, its seats and the starting position (`--state`, `--after`).

use super::PlanError;
use crate::game::{Game, GameError, State, find_game, games_dir};
use std::path::{Path, PathBuf};

/// Arguments every game command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct GameArgs {
    /// A game in the games folder (e.g. `breakthrough`) or a path to a .rules file.
    pub game: String,
    /// A game option, `NAME=VALUE` (see `tabula rules GAME`); repeatable.
    #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// The folder of the games (default: $TABULA_GAMES, ./games, or the crate's games/).
    #[arg(long, visible_alias = "games-dir", value_name = "DIR")]
    pub games: Option<PathBuf>,
}

/// Where to start from.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StartArgs {
    /// Start from this state term instead of the initial state.
    #[arg(long, value_name = "TERM")]
    pub state: Option<String>,
    /// Moves played first, in notation, separated by spaces (a move in
    /// brackets, like `(mark 1 1)`, is one move).
    #[arg(long, value_name = "MOVES")]
    pub after: Option<String>,
}

/// Where a command starts: `--state`, `--after`, or where a game record
/// got to (`--record`, then `--after`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PositionArgs {
    #[command(flatten)]
    pub start: StartArgs,
    /// Start from where this game record (`play --record`) got to: its
    /// options, start and moves (then `--after`).
    #[arg(long, value_name = "FILE", conflicts_with = "state")]
    pub record: Option<PathBuf>,
}

/// A loaded game with its options and seats.
pub struct Session {
    pub game: Game,
    pub options: crate::engine::Tmpl,
    pub option_pairs: Vec<(String, String)>,
    pub players: Vec<String>,
}

/// Parses `NAME=VALUE` pairs.
pub fn option_pairs(raw: &[String]) -> Result<Vec<(String, String)>, PlanError> {
    raw.iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(PlanError(format!("--option takes NAME=VALUE, not `{kv}`"))),
        })
        .collect()
}

/// Finds a game's file by name or path (with `--games DIR` if given):
/// its path and text.
pub type Finder = dyn Fn(&str, Option<&Path>) -> Result<(PathBuf, String), GameError>;

/// The command line's finder: a path, or a name in the games folder.
pub fn find_file(name: &str, dir: Option<&Path>) -> Result<(PathBuf, String), GameError> {
    let path = find_game(name, &games_dir(dir))?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| GameError::NotFound(format!("cannot read {}: {e}", path.display())))?;
    Ok((path, text))
}

/// Loads the game named on the command line, printing load warnings.
pub fn open(a: &GameArgs) -> Result<Session, PlanError> {
    open_with(a, &find_file)
}

/// Loads the game named on the command line as `find` finds it.
pub fn open_with(a: &GameArgs, find: &Finder) -> Result<Session, PlanError> {
    let (path, text) = find(&a.game, a.games.as_deref())?;
    let (mut game, warnings) = crate::loader::load_text(&path, &text)?;
    if !warnings.is_empty() {
        eprint!("{warnings}");
    }
    let option_pairs = option_pairs(&a.options)?;
    let options = game.options_term(&option_pairs)?;
    let players = game.players(&options)?;
    Ok(Session { game, options, option_pairs, players })
}

impl Session {
    /// The start position: `--state`, or the initial state, then `--after`.
    pub fn start(&mut self, s: &StartArgs, seed: u64) -> Result<State, PlanError> {
        let state = match &s.state {
            Some(t) => self.game.given_state(t)?,
            None => self.game.initial_state(&self.options, seed)?,
        };
        self.after(state, s)
    }

    /// The position `p` names.
    pub fn position(&mut self, p: &PositionArgs, seed: u64) -> Result<State, PlanError> {
        match &p.record {
            Some(path) => {
                let reached = self.replayed(path)?;
                self.after(reached, &p.start)
            }
            None => self.start(&p.start, seed),
        }
    }

    /// `state` after the moves of `--after`, each checked.
    pub fn after(&mut self, mut state: State, s: &StartArgs) -> Result<State, PlanError> {
        if let Some(after) = &s.after {
            for (i, typed) in split_moves(after).into_iter().enumerate() {
                if self.game.outcome(&state)?.is_some() {
                    return Err(PlanError(format!("--after: the game is over before move {} (`{typed}`)", i + 1)));
                }
                let legal = self.game.legal_moves(&state)?;
                let k = self
                    .game
                    .match_move(&legal, typed)
                    .map_err(|e| PlanError(format!("--after, move {}: {e}", i + 1)))?;
                state = legal[k].next.clone();
            }
        }
        Ok(state)
    }
}

/// Reads a game record (as `play --record` writes it).
pub fn read_record(path: &Path) -> Result<crate::game::record::Record, PlanError> {
    let text = std::fs::read_to_string(path).map_err(|e| PlanError(format!("cannot read {}: {e}", path.display())))?;
    crate::game::record::Record::parse(&text)
        .map_err(|e| PlanError(format!("{}:{}: {}", path.display(), e.line, e.message)))
}

impl Session {
    /// Takes a record's game options (checking that it is of this game).
    pub fn adopt(&mut self, path: &Path, r: &crate::game::record::Record) -> Result<(), PlanError> {
        if r.game != self.game.name {
            return Err(PlanError(format!("{} is a record of {}, not {}", path.display(), r.game, self.game.name)));
        }
        if r.options != self.option_pairs {
            self.options = self.game.options_term(&r.options)?;
            self.option_pairs = r.options.clone();
            self.players = self.game.players(&self.options)?;
        }
        Ok(())
    }

    /// The position a record's game reached: its options and start, and
    /// its moves replayed, each checked.
    pub fn replayed(&mut self, path: &Path) -> Result<State, PlanError> {
        let r = read_record(path)?;
        self.adopt(path, &r)?;
        let start = match &r.start {
            Some(text) => {
                self.game.parse_state(text).map_err(|e| PlanError(format!("{}: start: {e}", path.display())))?
            }
            None => self.game.initial_state(&self.options, r.seed)?,
        };
        let mut play = crate::game::Play::new(start);
        play.replay(&mut self.game, &r.moves)
            .map_err(|(line, e)| PlanError(format!("{}:{line}: {e}", path.display())))?;
        Ok(play.state().clone())
    }
}

/// Moves typed one after another: split at spaces outside brackets, so a
/// move written in KIF, `(mark 1 1)`, is one move.
pub fn split_moves(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, None);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c.is_whitespace() && depth <= 0 => {
                if let Some(s) = start.take() {
                    out.push(&text[s..i]);
                }
                continue;
            }
            _ => {}
        }
        start.get_or_insert(i);
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}
