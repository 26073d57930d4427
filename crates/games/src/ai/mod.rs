//! Computer players over the game layer, for every game: `random`,
//! `greedy` (best `value/3` after one move), `minimax[:DEPTH]` (alpha-beta,
//! paranoid for more than two players, iterative deepening, transposition
//! table), `mcts[:PLAYOUTS]` (UCT with random playouts, per-player
//! rewards; a playout still going after a few plies is scored by `value/3`
//! where the rules define it), `guided[:ITERATIONS]` (UCT guided by
//! `value/3` where the rules define it and hide nothing, else as `mcts`),
//! `uct[:PLAYOUTS]` (plain UCT: random playouts to the end, `value/3`
//! unused) and `rules[:LEVEL]` (the game's own `choose_move/3`).
//!
//! Every decision is seeded: the same seed (and thread count) gives the
//! same move, unless a time budget (`--think`) cuts the search short.
//! In a game with hidden information (one that defines `sample_state/3`)
//! a controller never looks at the true state: it decides from states that
//! `sample_state/3` draws for the player to move.

mod mcts;
mod minimax;

use crate::game::{Game, GameError, Move, Outcome, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt;
use std::time::{Duration, Instant};

/// The kinds of player.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Human,
    Random,
    Greedy,
    /// Search depth (default [`DEFAULT_DEPTH`], or as deep as time allows
    /// under `--think`).
    Minimax(Option<u32>),
    /// Playouts per move (default [`DEFAULT_PLAYOUTS`], or as many as time
    /// allows under `--think`).
    Mcts(Option<u32>),
    /// Iterations per move of the search guided by `value/3` (as `Mcts`
    /// where the game has no `value/3` or hides something).
    Guided(Option<u32>),
    /// Playouts per move of plain UCT: uniformly random playouts to the
    /// end, `value/3` unused (as `Mcts` in a game without it).
    Uct(Option<u32>),
    /// The level passed to `choose_move/3`.
    Rules(i64),
}

pub const DEFAULT_DEPTH: u32 = 3;
pub const DEFAULT_PLAYOUTS: u32 = 1000;
/// Seconds a move for `minimax` and `mcts` given neither a size nor
/// `--think` (a move then takes under about 2 seconds).
pub const DEFAULT_THINK: f64 = 1.5;

/// Who chooses the moves of a seat, with an optional time budget per move.
#[derive(Clone, Debug, PartialEq)]
pub struct Controller {
    pub kind: Kind,
    pub think: Option<f64>,
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Human => write!(f, "human"),
            Kind::Random => write!(f, "random"),
            Kind::Greedy => write!(f, "greedy"),
            Kind::Minimax(None) => write!(f, "minimax"),
            Kind::Minimax(Some(d)) => write!(f, "minimax:{d}"),
            Kind::Mcts(None) => write!(f, "mcts"),
            Kind::Mcts(Some(n)) => write!(f, "mcts:{n}"),
            Kind::Guided(None) => write!(f, "guided"),
            Kind::Guided(Some(n)) => write!(f, "guided:{n}"),
            Kind::Uct(None) => write!(f, "uct"),
            Kind::Uct(Some(n)) => write!(f, "uct:{n}"),
            Kind::Rules(l) => write!(f, "rules:{l}"),
        }
    }
}

const CONTROLLERS: &str =
    "human, random, greedy, minimax[:DEPTH], mcts[:PLAYOUTS], guided[:ITERATIONS], uct[:PLAYOUTS] or rules[:LEVEL]";

impl Controller {
    /// Whether this controller can play `game`: the `rules` controller
    /// needs the game's own `choose_move/3`. Front ends ask before the
    /// first move, so a seat the game cannot serve is refused at the start.
    pub fn serves(&self, game: &Game) -> Result<(), String> {
        match self.kind {
            Kind::Rules(_) if !game.has("choose_move", 3) => Err(format!(
                "{} has no choose_move/3 for the rules controller; use random, greedy, minimax or mcts",
                game.name
            )),
            _ => Ok(()),
        }
    }

    /// Reads a controller as written on the command line (`minimax:3`).
    pub fn parse(s: &str, think: Option<f64>) -> Result<Controller, String> {
        let s = s.trim();
        let (name, arg) = s.split_once(':').map_or((s, None), |(a, b)| (a, Some(b.trim())));
        let number = |what: &str, a: &str| -> Result<u32, String> {
            match a.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(format!("{name}:{what} needs a whole number of at least 1, not `{a}`")),
            }
        };
        let kind = match (name, arg) {
            ("human", None) => Kind::Human,
            ("random", None) => Kind::Random,
            ("greedy", None) => Kind::Greedy,
            ("minimax", None) => Kind::Minimax(None),
            ("minimax", Some(d)) => Kind::Minimax(Some(number("DEPTH", d)?)),
            ("mcts", None) => Kind::Mcts(None),
            ("mcts", Some(n)) => Kind::Mcts(Some(number("PLAYOUTS", n)?)),
            ("guided", None) => Kind::Guided(None),
            ("guided", Some(n)) => Kind::Guided(Some(number("ITERATIONS", n)?)),
            ("uct", None) => Kind::Uct(None),
            ("uct", Some(n)) => Kind::Uct(Some(number("PLAYOUTS", n)?)),
            ("rules", None) => Kind::Rules(1),
            ("rules", Some(l)) => {
                Kind::Rules(l.parse().map_err(|_| format!("rules:LEVEL needs a whole number, not `{l}`"))?)
            }
            _ => return Err(format!("unknown controller `{s}`: use {CONTROLLERS}")),
        };
        if let Some(t) = think
            && !(t.is_finite() && t > 0.0)
        {
            return Err(format!("--think takes a positive number of seconds, not {t}"));
        }
        // A search given no size is bounded by time.
        let think = match kind {
            Kind::Minimax(None) | Kind::Mcts(None) | Kind::Guided(None) | Kind::Uct(None) => {
                think.or(Some(DEFAULT_THINK))
            }
            _ => think,
        };
        Ok(Controller { kind, think })
    }

    pub fn is_human(&self) -> bool {
        self.kind == Kind::Human
    }

    /// A rough order of strength, to pick the strongest configured AI
    /// (for hints).
    /// Whether this controller looks ahead (a search, or the game's own
    /// player), so that its move is worth giving as a hint.
    pub fn looks_ahead(&self) -> bool {
        matches!(self.kind, Kind::Minimax(_) | Kind::Mcts(_) | Kind::Guided(_) | Kind::Uct(_) | Kind::Rules(_))
    }

    pub fn strength(&self) -> (u32, u64) {
        let budget = self.think.map_or(0, |t| (t * 1000.0) as u64);
        match self.kind {
            Kind::Human => (0, 0),
            Kind::Random => (1, 0),
            Kind::Greedy => (2, 0),
            Kind::Rules(l) => (3, l.max(0) as u64),
            Kind::Minimax(d) => (4, budget.max(d.unwrap_or(DEFAULT_DEPTH) as u64)),
            Kind::Uct(n) => (5, budget.max(n.unwrap_or(DEFAULT_PLAYOUTS) as u64)),
            Kind::Guided(n) => (5, budget.max(n.unwrap_or(DEFAULT_PLAYOUTS) as u64)),
            Kind::Mcts(n) => (6, budget.max(n.unwrap_or(DEFAULT_PLAYOUTS) as u64)),
        }
    }
}

/// What a controller decided, and how it got there.
#[derive(Clone, Debug)]
pub struct Choice {
    pub mv: Move,
    /// A short account of the search (depth reached, playouts, time).
    pub info: String,
    /// The visits of each move at the root, for a search that counts them
    /// (`mcts`); empty otherwise.
    pub visits: Vec<(Move, f64)>,
    /// What the search expects the chosen move to bring the mover, as a
    /// reward in [0, 1] (a win 1, a loss 0), for a search that estimates
    /// it (`mcts`); `None` otherwise.
    pub value: Option<f64>,
}

impl Choice {
    /// A choice with no visit counts.
    pub fn plain(mv: Move, info: String) -> Choice {
        Choice { mv, info, visits: Vec::new(), value: None }
    }
}

/// Rewards in [0, 1] per seat for a finished game: 1 to the winner, a share
/// of 1 to everybody on a draw.
fn rewards(o: &Outcome, players: &[String]) -> Vec<f64> {
    match o {
        Outcome::Winner(p) => players.iter().map(|q| if q == p { 1.0 } else { 0.0 }).collect(),
        Outcome::Draw => vec![1.0 / players.len() as f64; players.len()],
    }
}

/// The index of seat `p`, or an error naming it.
pub fn seat(players: &[String], p: &str) -> Result<usize, GameError> {
    players
        .iter()
        .position(|q| q == p)
        .ok_or_else(|| GameError::Rules(format!("to_move/2 names `{p}`, which is not one of the seats")))
}

/// The index of the seat to move in `state`, or `None` where chance moves
/// (`chance/1`: a move drawn uniformly at random, whoever sits anywhere).
pub fn seat_to_move(game: &mut Game, players: &[String], state: &State) -> Result<Option<usize>, GameError> {
    if game.chance(state)? {
        return Ok(None);
    }
    seat(players, &game.to_move(state)?).map(Some)
}

/// The time a decision may take, measured from its start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    start: Instant,
    deadline: Option<Instant>,
}

impl Clock {
    fn new(think: Option<f64>) -> Clock {
        let start = Instant::now();
        // A little is kept back for the bookkeeping around the search.
        Clock { start, deadline: think.map(|t| start + Duration::from_secs_f64(t * 0.95)) }
    }

    fn over(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn left(&self) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(Instant::now()))
    }

    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

/// Decides a move for the player to move in `state`. `threads` is how many
/// threads a search may use (MCTS runs one tree per thread and adds their
/// root statistics up). Where chance moves, every controller draws its
/// move uniformly at random.
pub fn choose(
    game: &mut Game,
    players: &[String],
    state: &State,
    ctl: &Controller,
    seed: u64,
    threads: usize,
) -> Result<Choice, GameError> {
    let mover = game.to_move(state)?;
    let clock = Clock::new(ctl.think);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    game.seed(rng.r#gen());
    let chance = game.chance(state)?;
    let choice = match &ctl.kind {
        _ if chance => {
            let legal = game.successors(state)?;
            let k = pick(&mut rng, legal.len())?;
            Choice::plain(legal[k].0.clone(), format!("chance: 1 of {} moves", legal.len()))
        }
        Kind::Human => return Err(GameError::Rules("a human seat has no computer move".into())),
        Kind::Random => {
            let legal = game.successors(state)?;
            let k = pick(&mut rng, legal.len())?;
            Choice::plain(legal[k].0.clone(), format!("1 of {} moves at random", legal.len()))
        }
        Kind::Greedy => greedy(game, state, &mover, &mut rng)?,
        Kind::Rules(level) => {
            ctl.serves(game).map_err(GameError::Rules)?;
            let sample = game.sample_state(state, &mover)?;
            Choice::plain(game.choose_move(&sample, *level)?, format!("choose_move/3 at level {level}"))
        }
        Kind::Minimax(depth) => minimax::choose(game, state, &mover, *depth, clock, &mut rng)?,
        Kind::Mcts(n) | Kind::Guided(n) | Kind::Uct(n) => {
            let budget = match (n, ctl.think) {
                (Some(n), _) => *n,
                (None, Some(_)) => u32::MAX,
                (None, None) => DEFAULT_PLAYOUTS,
            };
            let style = match ctl.kind {
                Kind::Guided(_) if mcts::guided(game) => mcts::Style::Guided,
                Kind::Uct(_) => mcts::Style::Uniform,
                _ => mcts::Style::Cut,
            };
            let search = mcts::Search { budget, style, threads };
            mcts::choose(game, players, state, &mover, search, clock, rng.r#gen())?
        }
    };
    Ok(Choice { info: format!("{}, {:.2} s", choice.info, clock.elapsed()), ..choice })
}

/// A move drawn uniformly among `n` (chance's, or a random player's): its
/// index, or the error of a position with no move that is not over.
pub fn pick(rng: &mut ChaCha8Rng, n: usize) -> Result<usize, GameError> {
    if n == 0 {
        return Err(GameError::Rules("no legal move in a position that is not over".into()));
    }
    Ok(rng.gen_range(0..n))
}

/// The error of a search that finds no move where the game goes on.
pub(crate) const NO_MOVE: &str = "move/3 gives no move in a position that game_over/2 does not end";

/// Win and loss scores, beyond any `value/3`; a win sooner scores higher.
pub(crate) const WIN: f64 = 1.0e9;

/// The score of a finished game for `me`, `ply` moves from the root.
pub(crate) fn terminal_score(o: &Outcome, me: &str, ply: u32) -> f64 {
    match o {
        Outcome::Winner(p) if p == me => WIN - ply as f64,
        Outcome::Winner(_) => -WIN + ply as f64,
        Outcome::Draw => 0.0,
    }
}

/// A position's heuristic score for `me`: `value/3` clamped below the win
/// scores, or 0 without it.
pub(crate) fn heuristic(game: &mut Game, s: &State, me: &str) -> Result<f64, GameError> {
    Ok(game.value(s, me)?.map_or(0.0, |v| v.clamp(-WIN / 10.0, WIN / 10.0)))
}

/// The move with the best `value/3` one move ahead (a win first, a loss
/// last), at random among equals.
fn greedy(game: &mut Game, state: &State, me: &str, rng: &mut ChaCha8Rng) -> Result<Choice, GameError> {
    let sample = game.sample_state(state, me)?;
    let succ = game.successors(&sample)?;
    let mut best: Vec<usize> = Vec::new();
    let mut best_score = f64::NEG_INFINITY;
    for (i, (_, next)) in succ.iter().enumerate() {
        let score = match game.outcome(next)? {
            Some(o) => terminal_score(&o, me, 1),
            None => heuristic(game, next, me)?,
        };
        if score > best_score {
            best_score = score;
            best.clear();
        }
        if score == best_score {
            best.push(i);
        }
    }
    let k = best[pick(rng, best.len())?];
    Ok(Choice::plain(succ[k].0.clone(), format!("value {best_score} after one move")))
}

/// The controllers' moves must be legal in the true position: this finds
/// the chosen move among the legal ones, or says what went wrong.
pub fn position_of(game: &mut Game, legal: &[crate::game::LegalMove], choice: &Choice) -> Result<usize, GameError> {
    legal.iter().position(|l| l.mv == choice.mv).ok_or_else(|| {
        GameError::Rules(format!(
            "the computer chose {}, which is not a legal move here (does sample_state/3 keep the player's own moves?)",
            game.engine().term_text(&choice.mv.0)
        ))
    })
}
