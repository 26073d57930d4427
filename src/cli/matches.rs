//! `tabula match GAME`: games between computer players with the seats
//! rotated, wins/draws/losses per controller with a 95% confidence
//! interval, played on several threads (the results do not depend on how
//! many: game `g` is seeded with `seed + g`); `tabula tournament GAME`: a
//! round robin of controllers with their ratings. The games are a job of
//! [`crate::work`], so `--shard I/N` plays a part of them.

use super::CliError;
use super::setup::{Finder, GameArgs, Session, find_file, open_with, progress};
use crate::ai::Controller;
use crate::game::Game;
use crate::work::{self, Hooks, Job, Shard, Task, Unit};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What `match` and `tournament` share.
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
    /// order (`random`, `greedy`, `minimax[:DEPTH]`, `mcts[:PLAYOUTS]`,
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
    /// `minimax[:DEPTH]`, `mcts[:PLAYOUTS]`, `rules[:LEVEL]`); give one for
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
pub fn seat_controllers(game: &str, players: &[String], seats: &[String]) -> Result<Vec<Option<String>>, CliError> {
    let n = players.len();
    let mut specs: Vec<Option<String>> = vec![None; n];
    let mut next_free = 0;
    for s in seats {
        let i = match s.split_once('=') {
            Some((seat, _)) => players
                .iter()
                .position(|p| p == seat)
                .ok_or_else(|| CliError(format!("no seat `{seat}` in {game}; the seats are {}", players.join(", "))))?,
            None => {
                while next_free < n && specs[next_free].is_some() {
                    next_free += 1;
                }
                if next_free == n {
                    return Err(CliError(format!("more --seat than the {n} seats of {game}")));
                }
                next_free
            }
        };
        specs[i] = Some(s.split_once('=').map_or(s.as_str(), |(_, c)| c).trim().to_string());
    }
    Ok(specs)
}

/// The controllers given, none of them human, each one `game` can serve.
fn computer_specs(game: &Game, specs: Vec<String>, think: Option<f64>) -> Result<Vec<String>, CliError> {
    for c in &specs {
        let parsed = Controller::parse(c, think).map_err(CliError)?;
        if parsed.is_human() {
            return Err(CliError(format!("games between computer players only; `{parsed}` is not one")));
        }
        parsed.serves(game).map_err(CliError)?;
    }
    Ok(specs)
}

fn open_game(c: &Common, find: &Finder) -> Result<Session, CliError> {
    open_with(&GameArgs { game: c.game.clone(), options: c.options.clone(), games: c.games_dir.clone() }, find)
}

/// The match's job, as the command line gives it, with the game found by
/// `find`.
pub fn job(a: &MatchArgs, find: &Finder) -> Result<(Job, Session), CliError> {
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
pub fn tournament_job(a: &TournamentArgs, find: &Finder) -> Result<(Job, Session), CliError> {
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
pub fn selfplay_job(a: &SelfplayArgs, find: &Finder) -> Result<(Job, Session), CliError> {
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

pub fn selfplay(a: SelfplayArgs) -> Result<i32, CliError> {
    let (job, session) = selfplay_job(&a, &find_file)?;
    let c = &a.common;
    let shard = c.shard.unwrap_or(Shard::WHOLE);
    let games = shard.len(a.games) as usize;
    let threads =
        c.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).clamp(1, games.max(1));
    let bar = progress(Some(games as u64), "games");
    let tick = |n: u64| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    };
    let hooks = Hooks { tick: &tick, ..Hooks::default() };
    let (done, positions) =
        work::run_selfplay(&Unit { spec: session.game.spec(), job: &job, shard, threads, hooks: &hooks })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let prefix = format!("shard-{}-of-{}", shard.index, shard.count);
    positions.write(&a.out, &prefix)?;
    if c.shard.is_none() && !c.json {
        eprintln!("wrote {} positions to {}", positions.len(), a.out.join(format!("{prefix}-*.npy")).display());
    }
    super::shards::print(&done, c.shard.is_some(), c.json)?;
    Ok(0)
}

pub fn run(a: MatchArgs) -> Result<i32, CliError> {
    let (job, session) = job(&a, &find_file)?;
    play(&job, &session, &a.common, a.games)
}

pub fn tournament(a: TournamentArgs) -> Result<i32, CliError> {
    let (job, session) = tournament_job(&a, &find_file)?;
    let pairings = work::pairings(a.players.len(), session.players.len()).len() as u64;
    play(&job, &session, &a.common, pairings * a.games)
}

/// Plays the `total` games of a match or tournament (or its shard's) and
/// prints the report (or the shard file).
fn play(job: &Job, session: &Session, c: &Common, total: u64) -> Result<i32, CliError> {
    let shard = c.shard.unwrap_or(Shard::WHOLE);
    let games = shard.len(total) as usize;
    let threads =
        c.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).clamp(1, games.max(1));
    let bar = progress(Some(games as u64), "games");
    // Ctrl-C: no new game starts, the games being played finish and the
    // games played so far are reported; a second Ctrl-C quits at once.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\nstopping after the games being played (Ctrl-C again to quit now)");
    });
    let tick = |n: u64| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    };
    let hooks = Hooks { tick: &tick, stop: &stop, ..Hooks::default() };
    let done = work::run(&Unit { spec: session.game.spec(), job, shard, threads, hooks: &hooks })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // Interrupted: the report covers the games played, and the exit code
    // says it is not the whole run.
    let code = if done.interrupted { 130 } else { 0 };
    super::shards::print(&done, c.shard.is_some(), c.json)?;
    Ok(code)
}
