//! A batch run as a command line gives it: `match`, `tournament`,
//! `selfplay`, `perft` or `bench`, its arguments read (clap), its game
//! found and opened with its options ([`open`]), and the [`Job`] it is
//! made ([`Plan`]). The command line runs a plan on this machine
//! ([`crate::work::run`]); the Python package splits one into shards for a
//! Ray cluster. Each reads the same arguments into the same job, with the
//! same errors.

pub mod open;

use crate::ai::Controller;
use crate::game::Game;
use crate::work::{self, Job, Shard, Task};
use clap::{Parser, Subcommand};
use open::{Finder, GameArgs, Session, StartArgs, open_with};
use std::path::PathBuf;

/// An error reading a command line into a plan: what to tell the person.
#[derive(Debug)]
pub struct PlanError(pub String);

impl<E: std::fmt::Display> From<E> for PlanError {
    fn from(e: E) -> Self {
        PlanError(e.to_string())
    }
}

/// The commands that make a job.
#[derive(Subcommand, Debug)]
pub enum Batch {
    /// Perft counts (leaves of the move tree) for depths 1..DEPTH.
    Perft(PerftArgs),
    /// Uniformly random playouts: speed, average length, results by seat.
    ///
    /// From the initial state each playout gets its own setup (seed + i), so
    /// a game dealt at random is dealt anew; with --state or --after every
    /// playout starts from that one position.
    Bench(BenchArgs),
    /// Games between computer players, seats rotated: wins, draws, losses
    /// and a 95% confidence interval per controller (Ctrl-C: report the
    /// games played so far).
    Match(MatchArgs),
    /// A round robin of computer players: every set of as many as the game
    /// has seats plays --games games, seats rotated; ratings (Elo scale,
    /// Bradley-Terry) with 95% intervals and the table of scores.
    Tournament(TournamentArgs),
    /// Games between computer players (default `mcts:200` in every seat)
    /// whose positions are written for learning: observations, legal
    /// action masks, the search's visit distributions, the final returns
    /// (NumPy .npy files in --out).
    Selfplay(SelfplayArgs),
    /// What a game is like, from batches of games between computer
    /// players: balance, draws, completion, duration, branching factor,
    /// lead changes and drama, board coverage and pieces, decisive moves;
    /// two variants compared; plots.
    Analyze(AnalyzeArgs),
}

/// A batch command line alone (as `tabula` reads it, without the other
/// commands).
#[derive(Parser, Debug)]
#[command(name = "tabula")]
struct Line {
    #[command(subcommand)]
    batch: Batch,
}

/// A batch run as its command line describes it, to split into shards
/// elsewhere (the Python package runs them on a Ray cluster): the job and
/// the rules it runs.
pub struct Plan {
    pub job: crate::work::Job,
    /// The game, to build in each shard (with a GDL game's network).
    pub spec: crate::game::Spec,
    /// `--json` was given.
    pub json: bool,
    /// Where self-play writes its positions (`--out`).
    pub out: Option<PathBuf>,
}

/// Reads a batch command line (without `tabula`) into a [`Plan`], with
/// exactly the command's arguments and errors; the game is found by
/// `find`.
pub fn plan(argv: &[String], find: &Finder) -> Result<Plan, PlanError> {
    const BATCH: [&str; 6] = ["match", "tournament", "selfplay", "perft", "bench", "analyze"];
    let name = argv.first().map_or("", String::as_str);
    if !BATCH.contains(&name) {
        return Err(PlanError(format!(
            "`{name}` does not split into shards: the commands that do are {}",
            BATCH.join(", ")
        )));
    }
    let line = Line::try_parse_from(std::iter::once("tabula".to_string()).chain(argv.iter().cloned()))
        .map_err(|e| PlanError(e.render().to_string().trim_end().trim_start_matches("error: ").to_string()))?;
    let mut out = None;
    let (job, session, json, shard) = match line.batch {
        Batch::Match(a) => {
            let (job, s) = match_job(&a, find)?;
            (job, s, a.common.json, a.common.shard)
        }
        Batch::Tournament(a) => {
            let (job, s) = tournament_job(&a, find)?;
            (job, s, a.common.json, a.common.shard)
        }
        Batch::Selfplay(a) => {
            let (job, s) = selfplay_job(&a, find)?;
            out = Some(a.out.clone());
            (job, s, a.common.json, a.common.shard)
        }
        Batch::Perft(a) => {
            let (job, s) = perft_job(&a, find)?;
            (job, s, a.json, a.shard)
        }
        Batch::Bench(a) => {
            if a.playouts.is_none() && a.seconds.is_some() {
                return Err(PlanError(
                    "a run in shards plays a number of playouts: give --playouts, not --seconds".into(),
                ));
            }
            let (job, s) = bench_job(&a, find)?;
            (job, s, a.json, a.shard)
        }
        Batch::Analyze(a) => {
            if !a.compare.is_empty() {
                return Err(PlanError(
                    "a run in shards analyzes one variant: run each --compare variant as a run of its own (its options with -o)".into(),
                ));
            }
            if a.plots.is_some() {
                return Err(PlanError(
                    "a run in shards draws no plots: give --plots to `tabula analyze` on one machine".into(),
                ));
            }
            let (job, s) = analyze_job(&a, &[], find)?;
            (job, s, a.json, a.shard)
        }
    };
    if shard.is_some() {
        return Err(PlanError("the run is split into shards for you: leave out --shard".into()));
    }
    Ok(Plan { job, spec: session.game.spec().clone(), json, out })
}

/// What `match`, `tournament` and `selfplay` share.
#[derive(clap::Args, Debug)]
pub struct Common {
    /// A game in the games folder (e.g. `breakthrough`) or a path to a .rules file.
    pub game: String,
    /// A game option, `NAME=VALUE` (see `tabula rules GAME`); repeatable.
    #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// The folder of the games (`--games` is the number of games here).
    #[arg(long = "games-dir", value_name = "DIR")]
    pub games_dir: Option<std::path::PathBuf>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Time budget of the computer players, in seconds per move.
    #[arg(long, value_name = "SECONDS")]
    pub think: Option<f64>,
    /// Games played at once (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// A game still going after this many plies counts as a draw.
    #[arg(long, default_value_t = 2000)]
    pub max_plies: u32,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
    /// Play only shard I of N (I from 0 to N-1: the games g with g mod N =
    /// I) and print its result as JSON, for `tabula merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

#[derive(clap::Args, Debug)]
pub struct MatchArgs {
    #[command(flatten)]
    pub common: Common,
    /// A player: SEAT=CONTROLLER, or CONTROLLER for the next seat in turn
    /// order (`random`, `greedy`, `minimax[:DEPTH]`, `mcts[:PLAYOUTS]`, `guided[:ITERATIONS]`, `uct[:PLAYOUTS]`,
    /// `rules[:LEVEL]`). Seats not given play `random`.
    #[arg(long = "seat", value_name = "[SEAT=]CONTROLLER", required = true)]
    pub seats: Vec<String>,
    /// Number of games; the controllers move one seat on after each game.
    #[arg(long, default_value_t = 40)]
    pub games: u64,
}

#[derive(clap::Args, Debug)]
pub struct TournamentArgs {
    #[command(flatten)]
    pub common: Common,
    /// A controller in the tournament (`random`, `greedy`,
    /// `minimax[:DEPTH]`, `mcts[:PLAYOUTS]`, `guided[:ITERATIONS]`, `uct[:PLAYOUTS]`, `rules[:LEVEL]`); give one for
    /// each, at least as many as the game has seats.
    #[arg(long = "player", short = 'p', value_name = "CONTROLLER", required = true)]
    pub players: Vec<String>,
    /// Games of each pairing; its controllers move one seat on after each
    /// game.
    #[arg(long, default_value_t = 20)]
    pub games: u64,
}

#[derive(clap::Args, Debug)]
pub struct SelfplayArgs {
    #[command(flatten)]
    pub common: Common,
    /// A player, as in `match` (default for every seat: `mcts:200`).
    #[arg(long = "seat", value_name = "[SEAT=]CONTROLLER")]
    pub seats: Vec<String>,
    /// Number of games; the controllers move one seat on after each game.
    #[arg(long, default_value_t = 10)]
    pub games: u64,
    /// The first plies of each game play a move drawn from the search's
    /// visits (the others its most visited move), so that games differ.
    #[arg(long, default_value_t = 10)]
    pub explore: u32,
    /// The folder to write the positions into (NumPy `.npy` files, named
    /// by shard: `shard-I-of-N-observations.npy`, ...).
    #[arg(long, value_name = "DIR", default_value = "selfplay")]
    pub out: std::path::PathBuf,
}

/// The controllers of a match in seat order, from `--seat` as given:
/// `SEAT=CONTROLLER`, or `CONTROLLER` for the next seat without one
/// (`None`: a seat not given).
pub fn seat_controllers(game: &str, players: &[String], seats: &[String]) -> Result<Vec<Option<String>>, PlanError> {
    let n = players.len();
    let mut specs: Vec<Option<String>> = vec![None; n];
    let mut next_free = 0;
    for s in seats {
        let i = match s.split_once('=') {
            Some((seat, _)) => players.iter().position(|p| p == seat).ok_or_else(|| {
                PlanError(format!("no seat `{seat}` in {game}; the seats are {}", players.join(", ")))
            })?,
            None => {
                while next_free < n && specs[next_free].is_some() {
                    next_free += 1;
                }
                if next_free == n {
                    return Err(PlanError(format!("more --seat than the {n} seats of {game}")));
                }
                next_free
            }
        };
        specs[i] = Some(s.split_once('=').map_or(s.as_str(), |(_, c)| c).trim().to_string());
    }
    Ok(specs)
}

/// The controllers given, none of them human, each one `game` can serve.
fn computer_specs(game: &Game, specs: Vec<String>, think: Option<f64>) -> Result<Vec<String>, PlanError> {
    for c in &specs {
        let parsed = Controller::parse(c, think).map_err(PlanError)?;
        if parsed.is_human() {
            return Err(PlanError(format!("games between computer players only; `{parsed}` is not one")));
        }
        parsed.serves(game).map_err(PlanError)?;
    }
    Ok(specs)
}

fn open_game(c: &Common, find: &Finder) -> Result<Session, PlanError> {
    open_with(&GameArgs { game: c.game.clone(), options: c.options.clone(), games: c.games_dir.clone() }, find)
}

/// The match's job, as the command line gives it, with the game found by
/// `find`.
pub fn match_job(a: &MatchArgs, find: &Finder) -> Result<(Job, Session), PlanError> {
    let c = &a.common;
    let mut session = open_game(c, find)?;
    let specs = seat_controllers(&session.game.name, &session.players, &a.seats)?;
    let specs = specs.into_iter().map(|s| s.unwrap_or_else(|| "random".into())).collect();
    let controllers = computer_specs(&session.game, specs, c.think)?;
    let task = Task::Match { controllers, think: c.think, games: a.games, max_plies: c.max_plies };
    let job = Job::new(&mut session.game, &session.option_pairs, c.seed, task)?;
    Ok((job, session))
}

/// The tournament's job, as the command line gives it.
pub fn tournament_job(a: &TournamentArgs, find: &Finder) -> Result<(Job, Session), PlanError> {
    let c = &a.common;
    let mut session = open_game(c, find)?;
    let specs = a.players.iter().map(|p| p.trim().to_string()).collect();
    let controllers = computer_specs(&session.game, specs, c.think)?;
    work::check_size(&session.game.name, controllers.len(), session.players.len())?;
    let task = Task::Tournament { controllers, think: c.think, games: a.games, max_plies: c.max_plies };
    let job = Job::new(&mut session.game, &session.option_pairs, c.seed, task)?;
    Ok((job, session))
}

/// The self-play job, as the command line gives it.
pub fn selfplay_job(a: &SelfplayArgs, find: &Finder) -> Result<(Job, Session), PlanError> {
    let c = &a.common;
    let mut session = open_game(c, find)?;
    // Seats not given search (a match's default, random, teaches nothing).
    let specs = seat_controllers(&session.game.name, &session.players, &a.seats)?;
    let specs = specs.into_iter().map(|s| s.unwrap_or_else(|| "mcts:200".into())).collect();
    let controllers = computer_specs(&session.game, specs, c.think)?;
    let task =
        Task::Selfplay { controllers, think: c.think, games: a.games, max_plies: c.max_plies, explore: a.explore };
    let job = Job::new(&mut session.game, &session.option_pairs, c.seed, task)?;
    Ok((job, session))
}

#[derive(clap::Args, Debug)]
pub struct PerftArgs {
    #[command(flatten)]
    pub game: GameArgs,
    /// Count leaves for depths 1..DEPTH.
    pub depth: u32,
    #[command(flatten)]
    pub start: StartArgs,
    /// The count under each first move, at DEPTH.
    #[arg(long)]
    pub divide: bool,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
    /// Threads counting at once (default: every core). The tree is cut a
    /// few plies deep and its subtrees shared out.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Count only shard I of N (I from 0 to N-1: a share of the subtrees)
    /// and print its result as JSON, for `tabula merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

/// The start position as a term, or `None` for the initial state.
fn start_text(s: &mut Session, start: &StartArgs, seed: u64) -> Result<Option<String>, PlanError> {
    if start.state.is_none() && start.after.is_none() {
        return Ok(None);
    }
    let state = s.start(start, seed)?;
    Ok(Some(s.game.engine().term_text(state.term())))
}

/// The perft's job, with the game found by `find`.
pub fn perft_job(a: &PerftArgs, find: &Finder) -> Result<(Job, Session), PlanError> {
    let mut s = open_with(&a.game, find)?;
    let start = start_text(&mut s, &a.start, a.seed)?;
    let task = Task::Perft { depth: a.depth, start, divide: a.divide };
    Ok((Job::new(&mut s.game, &s.option_pairs, a.seed, task)?, s))
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub game: GameArgs,
    #[command(flatten)]
    pub start: StartArgs,
    /// Number of random playouts (default 1000 unless --seconds is given).
    #[arg(long)]
    pub playouts: Option<u64>,
    /// Play for this many seconds instead (each thread once its engine is
    /// loaded). Either way the rate counts the seconds spent playing.
    #[arg(long)]
    pub seconds: Option<f64>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
    /// Threads playing at once (default: every core). Playout i is seeded
    /// with seed + i, so the results do not depend on the thread count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Play only shard I of N (I from 0 to N-1: the playouts i with i mod N
    /// = I) and print its result as JSON, for `tabula merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

/// The bench's job, with the game found by `find`.
pub fn bench_job(a: &BenchArgs, find: &Finder) -> Result<(Job, Session), PlanError> {
    let mut s = open_with(&a.game, find)?;
    let start = start_text(&mut s, &a.start, a.seed)?;
    let playouts = match (a.playouts, a.seconds) {
        (Some(n), _) => n,
        (None, Some(_)) if a.shard.is_some() => {
            return Err(PlanError(
                "a shard is a fixed share of the playouts: give --playouts, not --seconds, with --shard".into(),
            ));
        }
        // Until the time is up.
        (None, Some(_)) => u64::MAX,
        (None, None) => 1000,
    };
    Ok((Job::new(&mut s.game, &s.option_pairs, a.seed, Task::Bench { playouts, start })?, s))
}

#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// A game in the games folder (e.g. `breakthrough`) or a path to a .rules file.
    pub game: String,
    /// A game option, `NAME=VALUE` (see `tabula rules GAME`); repeatable.
    #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// The folder of the games (`--games` is the number of games here).
    #[arg(long = "games-dir", value_name = "DIR")]
    pub games_dir: Option<PathBuf>,
    /// Games to play (for each variant).
    #[arg(long, default_value_t = 200)]
    pub games: u64,
    /// A game still going after this many plies is cut off (not completed).
    #[arg(long, default_value_t = 400)]
    pub max_plies: u32,
    /// Who plays a seat: SEAT=CONTROLLER, or CONTROLLER for the next seat
    /// in turn order (default: random); repeatable. The seats are not
    /// rotated.
    #[arg(long = "seat", value_name = "[SEAT=]CONTROLLER")]
    pub seats: Vec<String>,
    /// Time budget of the computer players, in seconds per move.
    #[arg(long, value_name = "SECONDS")]
    pub think: Option<f64>,
    /// Find the decisive moves with this search (`mcts:200`,
    /// `guided:50`): at every position it estimates the mover's result; a
    /// move after which the estimate is off by half the range or more is
    /// decisive. Two-seat games; it costs a search a position.
    #[arg(long, value_name = "CONTROLLER")]
    pub decisive: Option<String>,
    /// Game `g` is played with the seed plus g.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Two variants side by side: each `--compare` is a set of options
    /// (`rows=6,cols=6`) added to the game's; give it twice.
    #[arg(long, value_name = "OPTIONS")]
    pub compare: Vec<String>,
    /// Draw the plots into this folder (SVG): the lengths of the games,
    /// the branching factor over a game, the seats' win rates.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Games played at once (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
    /// Play only shard I of N (I from 0 to N-1: the games g with g mod N =
    /// I) and print its result as JSON, for `tabula merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

/// The analysis job, as the command line gives it, with `extra` options
/// (a variant's) added to the game's and the game found by `find`.
pub fn analyze_job(a: &AnalyzeArgs, extra: &[String], find: &Finder) -> Result<(Job, Session), PlanError> {
    let mut options = a.options.clone();
    options.extend(extra.iter().cloned());
    let mut session = open_with(&GameArgs { game: a.game.clone(), options, games: a.games_dir.clone() }, find)?;
    if a.games == 0 {
        return Err(PlanError("--games must be at least 1".into()));
    }
    let specs = seat_controllers(&session.game.name, &session.players, &a.seats)?;
    let specs = specs.into_iter().map(|s| s.unwrap_or_else(|| "random".into())).collect();
    let controllers = computer_specs(&session.game, specs, a.think)?;
    if let Some(d) = &a.decisive {
        let judge = Controller::parse(d, None)?;
        crate::game::metrics::check_judge(&judge, session.players.len())?;
        judge.serves(&session.game)?;
    }
    let task = Task::Analyze {
        controllers,
        think: a.think,
        games: a.games,
        max_plies: a.max_plies,
        decisive: a.decisive.clone(),
    };
    let job = Job::new(&mut session.game, &session.option_pairs, a.seed, task)?;
    Ok((job, session))
}
