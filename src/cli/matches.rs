//! `tabula match GAME`: games between computer players with the seats
//! rotated, wins/draws/losses per controller with a 95% confidence
//! interval, played on several threads (the results do not depend on how
//! many: game `g` is seeded with `seed + g`); `tabula tournament GAME`: a
//! round robin of controllers with their ratings. The games are a job of
//! [`crate::work`], so `--shard I/N` plays a part of them.

use super::{CliError, progress};
use crate::plan::open::{Session, find_file};
use crate::plan::{Common, MatchArgs, SelfplayArgs, TournamentArgs, match_job, selfplay_job, tournament_job};
use crate::work::{self, Hooks, Job, Shard, Unit};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    let (job, session) = match_job(&a, &find_file)?;
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
