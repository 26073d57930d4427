//! `tabula match GAME`: games between computer players with the seats
//! rotated, wins/draws/losses per controller with a 95% confidence
//! interval, played on several threads (the results do not depend on how
//! many: game `g` is seeded with `seed + g`). The games are a job of
//! [`crate::work`], so `--shard I/N` plays a part of them.

use super::CliError;
use super::setup::{Finder, GameArgs, Session, find_file, open_with, progress};
use crate::ai::Controller;
use crate::work::{self, Hooks, Job, Shard, Task};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(clap::Args, Debug)]
pub struct MatchArgs {
    /// A game in the games folder (e.g. `breakthrough`) or a path to a .rules file.
    pub game: String,
    /// A game option, `NAME=VALUE` (see `tabula rules GAME`); repeatable.
    #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// The folder of the games (`--games` is the number of games here).
    #[arg(long = "games-dir", value_name = "DIR")]
    pub games_dir: Option<std::path::PathBuf>,
    /// A player: SEAT=CONTROLLER, or CONTROLLER for the next seat in turn
    /// order (`random`, `greedy`, `minimax[:DEPTH]`, `mcts[:PLAYOUTS]`,
    /// `rules[:LEVEL]`). Seats not given play `random`.
    #[arg(long = "seat", value_name = "[SEAT=]CONTROLLER", required = true)]
    pub seats: Vec<String>,
    /// Number of games; the controllers move one seat on after each game.
    #[arg(long, default_value_t = 40)]
    pub games: usize,
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

/// The controllers of a match in seat order, from `--seat` as given:
/// `SEAT=CONTROLLER`, or `CONTROLLER` for the next seat without one.
pub fn seat_controllers(game: &str, players: &[String], seats: &[String]) -> Result<Vec<String>, CliError> {
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
    Ok(specs.into_iter().map(|s| s.unwrap_or_else(|| "random".to_string())).collect())
}

/// The match's job, as the command line gives it, with the game found by
/// `find`.
pub fn job(a: &MatchArgs, find: &Finder) -> Result<(Job, Session), CliError> {
    let args = GameArgs { game: a.game.clone(), options: a.options.clone(), games: a.games_dir.clone() };
    let mut session = open_with(&args, find)?;
    let controllers = seat_controllers(&session.game.name, &session.players, &a.seats)?;
    for c in &controllers {
        let parsed = Controller::parse(c, a.think).map_err(CliError)?;
        if parsed.is_human() {
            return Err(CliError(format!("a match is between computer players; `{parsed}` is not one")));
        }
    }
    let task = Task::Match { controllers, think: a.think, games: a.games as u64, max_plies: a.max_plies };
    let job = Job::new(&mut session.game, &session.option_pairs, a.seed, task)?;
    Ok((job, session))
}

pub fn run(a: MatchArgs) -> Result<i32, CliError> {
    let (job, session) = job(&a, &find_file)?;
    let shard = a.shard.unwrap_or(Shard::WHOLE);
    let games = shard.len(a.games as u64) as usize;
    let threads =
        a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).clamp(1, games.max(1));
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
    let done = work::run(&session.game.path, &session.game.source, &job, shard, threads, &hooks)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // Interrupted: the report covers the games played, and the exit code
    // says it is not the whole match.
    let code = if done.interrupted { 130 } else { 0 };
    super::shards::print(&done, a.shard.is_some(), a.json)?;
    Ok(code)
}
