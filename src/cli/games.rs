//! `tabula list`, `rules`, `moves`, `perft` and `bench`.

use super::{CliError, progress};
use crate::game::{games_dir, list_games};
use crate::plan::open::{GameArgs, StartArgs, find_file, open};
use crate::plan::{BenchArgs, PerftArgs, bench_job, perft_job};
use crate::work::{self, Hooks, Shard, Task, Unit};
use serde_json::{Value as Json, json};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// The folder of the games.
    #[arg(long, value_name = "DIR")]
    pub games: Option<PathBuf>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

pub fn list(a: ListArgs) -> Result<i32, CliError> {
    let dir = games_dir(a.games.as_deref());
    let mut rows = Vec::new();
    for path in list_games(&dir) {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        match crate::loader::load(&path) {
            Ok((mut g, _)) => {
                let seats = g.options_term(&[]).and_then(|o| g.players(&o)).map(|p| p.join(", ")).unwrap_or_default();
                rows.push((name, g.title.clone(), seats));
            }
            Err(e) => {
                let first = e.to_string().lines().next().unwrap_or("").to_string();
                rows.push((name, format!("(does not load: {first})"), String::new()))
            }
        }
    }
    if a.json {
        let games: Vec<Json> = rows.iter().map(|(n, t, s)| json!({"name": n, "title": t, "seats": s})).collect();
        println!("{}", json!({ "games": games }));
    } else if rows.is_empty() {
        println!("no games in {}", dir.display());
    } else {
        let wn = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let wt = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
        for (n, t, s) in rows {
            println!("{n:<wn$}  {t:<wt$}  {s}");
        }
    }
    Ok(0)
}

#[derive(clap::Args, Debug)]
pub struct RulesArgs {
    #[command(flatten)]
    pub game: GameArgs,
}

pub fn rules(a: RulesArgs) -> Result<i32, CliError> {
    let s = open(&a.game)?;
    println!("{}", s.game.title);
    if let Some(d) = &s.game.description {
        println!("\n{d}");
    }
    println!("\nSeats: {}", s.players.join(", "));
    if s.game.options.is_empty() {
        println!("Options: none");
    } else {
        println!("Options (--option NAME=VALUE):");
        for o in &s.game.options {
            println!("  {}={}  ({})", o.name, o.default, o.allowed);
            if !o.help.is_empty() {
                println!("      {}", o.help);
            }
        }
    }
    Ok(0)
}

#[derive(clap::Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    pub game: GameArgs,
    #[command(flatten)]
    pub start: StartArgs,
    /// Seed of the random generator (for games that deal or shuffle).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

pub fn moves(a: MovesArgs) -> Result<i32, CliError> {
    let mut s = open(&a.game)?;
    let state = s.start(&a.start, a.seed)?;
    if let Some(o) = s.game.outcome(&state)? {
        if a.json {
            println!("{}", json!({ "game_over": o.to_json() }));
        } else {
            println!("game over: {o}");
        }
        return Ok(0);
    }
    let to_move = s.game.to_move(&state)?;
    let legal = s.game.legal_moves(&state)?;
    let texts: Vec<String> = legal.iter().map(|m| m.text.clone()).collect();
    if a.json {
        println!("{}", json!({ "to_move": to_move, "moves": texts }));
    } else {
        let n = texts.len();
        println!("{to_move} to move, {n} legal move{}:", if n == 1 { "" } else { "s" });
        println!("{}", texts.join(" "));
    }
    Ok(0)
}

fn threads(given: Option<usize>) -> usize {
    given.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1)
}

pub fn perft(a: PerftArgs) -> Result<i32, CliError> {
    let (job, s) = perft_job(&a, &find_file)?;
    let shard = a.shard.unwrap_or(Shard::WHOLE);
    let bar = if a.divide { progress(None, "perft") } else { None };
    let tick = |_| {
        if let Some(b) = &bar {
            b.tick();
        }
    };
    // A whole run prints each depth as it is counted.
    let live = a.shard.is_none() && !a.json && !a.divide;
    if live {
        println!("{}", work::PERFT_HEADER);
    }
    let depth_done = |d: u32, n: u64, secs: f64| {
        if live {
            println!("{}", work::perft_line(d, n, secs));
        }
    };
    let hooks = Hooks { tick: &tick, depth_done: &depth_done, ..Hooks::default() };
    let done = work::run(&Unit { spec: s.game.spec(), job: &job, shard, threads: threads(a.threads), hooks: &hooks })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !live {
        super::shards::print(&done, a.shard.is_some(), a.json)?;
    }
    Ok(0)
}

pub fn bench(a: BenchArgs) -> Result<i32, CliError> {
    let (job, s) = bench_job(&a, &find_file)?;
    let Task::Bench { playouts, .. } = job.task else { unreachable!("a bench job") };
    let shard = a.shard.unwrap_or(Shard::WHOLE);
    let time = match (a.playouts, a.seconds) {
        (None, Some(t)) => Some(std::time::Duration::from_secs_f64(t.max(0.0))),
        _ => None,
    };
    let bar = progress((playouts != u64::MAX).then(|| shard.len(playouts)), "playouts");
    let tick = |n: u64| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    };
    let hooks = Hooks { tick: &tick, time, ..Hooks::default() };
    let done = work::run(&Unit { spec: s.game.spec(), job: &job, shard, threads: threads(a.threads), hooks: &hooks })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    super::shards::print(&done, a.shard.is_some(), a.json)?;
    Ok(0)
}
