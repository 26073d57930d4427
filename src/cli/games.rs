//! `tabula list`, `rules`, `moves`, `perft` and `bench`.

use super::CliError;
use super::setup::{GameArgs, StartArgs, open, progress};
use crate::engine::Tmpl;
use crate::game::{Game, State, Tally, games_dir, list_games};
use serde_json::{Value as Json, json};
use std::path::PathBuf;
use std::time::Instant;

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
        match Game::load(&path) {
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
}

pub fn perft(a: PerftArgs) -> Result<i32, CliError> {
    let mut s = open(&a.game)?;
    let state = s.start(&a.start, a.seed)?;
    let options_json: serde_json::Map<String, Json> = s
        .game
        .options
        .iter()
        .map(|o| (o.name.clone(), Json::String(option_value(&s.option_pairs, &o.name, &o.default))))
        .collect();
    if a.divide {
        let legal = s.game.legal_moves(&state)?;
        let bar = progress(Some(legal.len() as u64), "perft");
        let mut rows = Vec::new();
        let mut total = 0;
        for m in &legal {
            let n = if a.depth <= 1 { 1 } else { s.game.perft(&m.next, a.depth - 1)? };
            total += n;
            rows.push((m.text.clone(), n));
            if let Some(b) = &bar {
                b.inc(1);
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        if a.json {
            let divide: Vec<Json> = rows.iter().map(|(m, n)| json!({"move": m, "nodes": n})).collect();
            println!(
                "{}",
                json!({"game": s.game.name, "options": options_json, "depth": a.depth, "divide": divide, "nodes": total})
            );
        } else {
            for (m, n) in rows {
                println!("{m} {n}");
            }
            println!("total {total}");
        }
        return Ok(0);
    }
    let bar = progress(None, "perft");
    let mut depths = Vec::new();
    for d in 1..=a.depth {
        if let Some(b) = &bar {
            b.set_message(format!("perft depth {d}"));
            b.tick();
        }
        let start = Instant::now();
        let n = s.game.perft(&state, d)?;
        let secs = start.elapsed().as_secs_f64();
        if !a.json {
            if let Some(b) = &bar {
                b.suspend(|| print_depth(d, n, secs));
            } else {
                print_depth(d, n, secs);
            }
        }
        depths.push(json!({"depth": d, "nodes": n, "seconds": secs}));
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if a.json {
        println!("{}", json!({"game": s.game.name, "options": options_json, "depths": depths}));
    }
    Ok(0)
}

fn print_depth(d: u32, n: u64, secs: f64) {
    let rate = if secs > 0.0 { n as f64 / secs } else { 0.0 };
    println!("{d} {n} {secs:.3} {rate:.0}");
}

fn option_value(given: &[(String, String)], name: &str, default: &str) -> String {
    given.iter().find(|(k, _)| k == name).map_or_else(|| default.to_string(), |(_, v)| v.clone())
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
    /// Play for this many seconds instead.
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
}

/// What `bench` threads share: which playout comes next and when to stop.
struct Bench<'a> {
    limit: Option<u64>,
    deadline: Option<Instant>,
    fresh: bool,
    seed: u64,
    next: &'a std::sync::atomic::AtomicU64,
    bar: Option<&'a indicatif::ProgressBar>,
}

impl Bench<'_> {
    /// Plays playouts until the limit or the deadline, taking the next
    /// playout number each time.
    fn run(&self, game: &mut Game, options: &Tmpl, state: &State) -> Result<Tally, CliError> {
        let mut t = Tally::default();
        loop {
            let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if self.limit.is_some_and(|n| i >= n) || self.deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(t);
            }
            // Each playout gets its own seed (and from the initial state,
            // a game with a random setup, like a deal of tiles, is dealt
            // anew).
            let from = if self.fresh { None } else { Some(state) };
            let (len, outcome) = game.seeded_playout(options, from, self.seed.wrapping_add(i))?;
            t.record(len, outcome);
            if let Some(b) = self.bar {
                b.inc(1);
            }
        }
    }
}

pub fn bench(a: BenchArgs) -> Result<i32, CliError> {
    let mut s = open(&a.game)?;
    let state = s.start(&a.start, a.seed)?;
    let fresh = a.start.state.is_none() && a.start.after.is_none();
    let limit = match (a.playouts, a.seconds) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(1000),
    };
    let deadline = a.seconds.map(|t| Instant::now() + std::time::Duration::from_secs_f64(t.max(0.0)));
    let threads = a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let bar = progress(limit, "playouts");
    let next = std::sync::atomic::AtomicU64::new(0);
    let work = Bench { limit, deadline, fresh, seed: a.seed, next: &next, bar: bar.as_ref() };
    let start = Instant::now();
    let mut tallies = Vec::new();
    if threads == 1 {
        tallies.push(work.run(&mut s.game, &s.options, &state)?);
    } else {
        // Each thread loads its own engine and reads the options and the
        // start from their text.
        let (options_text, state_text) = (s.game.engine().term_text(&s.options), s.game.engine().term_text(&state.0));
        let (path, source) = (s.game.path.clone(), s.game.source.clone());
        let results: Vec<Result<Tally, CliError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (path, source, options_text, state_text, work) =
                        (&path, &source, &options_text, &state_text, &work);
                    std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(scope, move || {
                        let (mut game, _) = Game::from_source(path, source)?;
                        let options = game.engine().parse_term(options_text)?;
                        let state = State(game.engine().parse_term(state_text)?);
                        work.run(&mut game, &options, &state)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h.join().unwrap_or_else(|_| Err(CliError("a bench thread failed".into()))),
                    Err(e) => Err(CliError(format!("cannot start a bench thread: {e}"))),
                })
                .collect()
        });
        for r in results {
            tallies.push(r?);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut total = Tally::new(&s.players);
    for t in tallies {
        total.merge(t);
    }
    let Tally { played, plies, draws, wins: results } = total;
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let avg = if played > 0 { plies as f64 / played as f64 } else { 0.0 };
    if a.json {
        let mut res: serde_json::Map<String, Json> = results.iter().map(|(p, n)| (p.clone(), json!(n))).collect();
        res.insert("draw".into(), json!(draws));
        println!(
            "{}",
            json!({"game": s.game.name, "playouts": played, "seconds": secs, "playouts_per_second": played as f64 / secs,
                   "plies_per_second": plies as f64 / secs, "average_length": avg, "results": res})
        );
    } else {
        println!(
            "{played} playouts in {secs:.2} s: {:.1} playouts/s, {:.0} plies/s",
            played as f64 / secs,
            plies as f64 / secs
        );
        println!("average length {avg:.2} plies");
        for (p, n) in &results {
            println!("{p} wins {n} ({:.1}%)", 100.0 * *n as f64 / played.max(1) as f64);
        }
        println!("draws {draws} ({:.1}%)", 100.0 * draws as f64 / played.max(1) as f64);
    }
    Ok(0)
}
