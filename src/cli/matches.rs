//! `tabula match GAME`: games between computer players with the seats
//! rotated, wins/draws/losses per controller with a 95% confidence
//! interval, played on several threads (the results do not depend on how
//! many: game `g` is seeded with `seed + g`).

use super::CliError;
use super::setup::{GameArgs, open, progress};
use crate::ai::{self, Controller};
use crate::game::{Game, Outcome};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
}

/// One finished game: the controller (by index) in each seat, the outcome,
/// its length, and the slowest move of each controller.
struct GameResult {
    by_seat: Vec<usize>,
    outcome: Option<Outcome>,
    plies: u32,
    slowest: Vec<f64>,
}

/// Plays game `g`: controller `(i + g) mod n` takes seat `i`.
fn play_one(
    game: &mut Game,
    options: &crate::engine::Tmpl,
    players: &[String],
    controllers: &[Controller],
    g: usize,
    seed: u64,
    max_plies: u32,
) -> Result<GameResult, CliError> {
    let n = players.len();
    let by_seat: Vec<usize> = (0..n).map(|i| (i + g) % n).collect();
    let game_seed = seed.wrapping_add(g as u64);
    let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
    let mut state = game.initial_state(options, game_seed)?;
    let mut slowest = vec![0.0; controllers.len()];
    for ply in 0..max_plies {
        if let Some(o) = game.outcome(&state)? {
            return Ok(GameResult { by_seat, outcome: Some(o), plies: ply, slowest });
        }
        let mover = game.to_move(&state)?;
        let seat = ai::seat(players, &mover)?;
        let c = by_seat[seat];
        let legal = game.legal_moves(&state)?;
        let started = Instant::now();
        let choice = ai::choose(game, players, &state, &controllers[c], rng.r#gen(), 1)?;
        slowest[c] = f64::max(slowest[c], started.elapsed().as_secs_f64());
        let k = ai::position_of(game, &legal, &choice)?;
        state = legal[k].next.clone();
    }
    let outcome = game.outcome(&state)?;
    Ok(GameResult { by_seat, outcome, plies: max_plies, slowest })
}

/// Wilson's 95% interval for a proportion `p` of `n` trials.
fn wilson(p: f64, n: f64) -> (f64, f64) {
    if n == 0.0 {
        return (0.0, 1.0);
    }
    let z = 1.96_f64;
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

pub fn run(a: MatchArgs) -> Result<i32, CliError> {
    let session = open(&GameArgs { game: a.game.clone(), options: a.options.clone(), games: a.games_dir.clone() })?;
    let players = session.players.clone();
    let n = players.len();
    // Controllers in seat order, as given.
    let mut specs: Vec<Option<String>> = vec![None; n];
    let mut next_free = 0;
    for s in &a.seats {
        let i = match s.split_once('=') {
            Some((seat, _)) => players.iter().position(|p| p == seat).ok_or_else(|| {
                CliError(format!("no seat `{seat}` in {}; the seats are {}", session.game.name, players.join(", ")))
            })?,
            None => {
                while next_free < n && specs[next_free].is_some() {
                    next_free += 1;
                }
                if next_free == n {
                    return Err(CliError(format!("more --seat than the {n} seats of {}", session.game.name)));
                }
                next_free
            }
        };
        let spec = s.split_once('=').map_or(s.as_str(), |(_, c)| c);
        specs[i] = Some(spec.to_string());
    }
    let controllers: Vec<Controller> = specs
        .iter()
        .map(|s| Controller::parse(s.as_deref().unwrap_or("random"), a.think))
        .collect::<Result<_, _>>()
        .map_err(CliError)?;
    if let Some(c) = controllers.iter().find(|c| c.is_human()) {
        return Err(CliError(format!("a match is between computer players; `{c}` is not one")));
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, a.games.max(1));
    let bar = progress(Some(a.games as u64), "games");
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
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<GameResult, CliError>>>> = Mutex::new((0..a.games).map(|_| None).collect());
    let (path, source) = (session.game.path.clone(), session.game.source.clone());
    let option_pairs = session.option_pairs.clone();
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    let started = Instant::now();
    let (next, results_ref, failure_ref, bar_ref) = (&next, &results, &failure, &bar);
    let (path, source, option_pairs, players, controllers) = (&path, &source, &option_pairs, &players, &controllers);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let worker = || -> Result<(), CliError> {
                let (mut game, _) = Game::from_source(path, source)?;
                let options = game.options_term(option_pairs)?;
                loop {
                    if stop.load(Ordering::SeqCst) {
                        return Ok(());
                    }
                    let g = next.fetch_add(1, Ordering::SeqCst);
                    if g >= a.games {
                        return Ok(());
                    }
                    let r = play_one(&mut game, &options, players, controllers, g, a.seed, a.max_plies);
                    let failed = r.is_err();
                    results_ref.lock().map_err(|_| CliError("a match thread failed".into()))?[g] = Some(r);
                    if let Some(b) = bar_ref {
                        b.inc(1);
                    }
                    if failed {
                        // Stop handing out games; the error is reported below.
                        next.store(a.games, Ordering::SeqCst);
                        return Ok(());
                    }
                }
            };
            let failure = failure_ref;
            let spawned = std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(scope, move || {
                if let Err(e) = worker() {
                    *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    next.store(a.games, Ordering::SeqCst);
                }
            });
            if let Err(e) = spawned {
                *failure.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(CliError(format!("cannot start a match thread: {e}")));
            }
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let secs = started.elapsed().as_secs_f64();
    let results = results.into_inner().map_err(|_| CliError("a match thread failed".into()))?;
    // Tally per controller.
    let m = controllers.len();
    let (mut wins, mut draws, mut losses) = (vec![0usize; m], vec![0usize; m], vec![0usize; m]);
    let mut slowest = vec![0.0_f64; m];
    let (mut plies, mut unfinished, mut played) = (0u64, 0usize, 0usize);
    for r in results {
        let Some(r) = r else { continue };
        let r = r?;
        played += 1;
        plies += r.plies as u64;
        for (c, t) in r.slowest.iter().enumerate() {
            slowest[c] = slowest[c].max(*t);
        }
        match &r.outcome {
            Some(Outcome::Winner(p)) => {
                for (seat, &c) in r.by_seat.iter().enumerate() {
                    if players[seat] == *p {
                        wins[c] += 1;
                    } else {
                        losses[c] += 1;
                    }
                }
            }
            Some(Outcome::Draw) | None => {
                unfinished += usize::from(r.outcome.is_none());
                for &c in &r.by_seat {
                    draws[c] += 1;
                }
            }
        }
    }
    let interrupted = stop.load(Ordering::SeqCst);
    if played < a.games && !interrupted {
        return Err(CliError(format!("only {played} of {} games were played", a.games)));
    }
    // Interrupted: the report covers the games played, and the exit code
    // says it is not the whole match.
    let code = if interrupted { 130 } else { 0 };
    let draw_share = 1.0 / n as f64;
    let rows: Vec<serde_json::Value> = (0..m)
        .map(|c| {
            let games = (wins[c] + draws[c] + losses[c]) as f64;
            let score = if games > 0.0 { (wins[c] as f64 + draws[c] as f64 * draw_share) / games } else { 0.0 };
            let (lo, hi) = wilson(score, games);
            json!({"spec": controllers[c].to_string(), "think": controllers[c].think, "wins": wins[c], "draws": draws[c],
                   "losses": losses[c], "score": score, "ci95": [lo, hi], "max_move_seconds": slowest[c]})
        })
        .collect();
    if a.json {
        println!(
            "{}",
            json!({"game": session.game.name, "games": played, "seed": a.seed, "seconds": secs,
                   "average_length": plies as f64 / played.max(1) as f64, "unfinished": unfinished,
                   "interrupted": interrupted, "controllers": rows})
        );
        return Ok(code);
    }
    println!(
        "{}: {played} games{}, seats rotated, seed {}, {:.1} s, average length {:.1} plies{}",
        session.game.name,
        if interrupted { format!(" of {} (interrupted)", a.games) } else { String::new() },
        a.seed,
        secs,
        plies as f64 / played.max(1) as f64,
        if unfinished > 0 {
            format!(", {unfinished} unfinished after {} plies (counted as draws)", a.max_plies)
        } else {
            String::new()
        }
    );
    println!(
        "{:<16} {:>5} {:>5} {:>6} {:>6} {:>6}  {:<14} {:>12}",
        "controller", "games", "wins", "draws", "losses", "score", "95% CI", "slowest move"
    );
    for r in &rows {
        let spec = match r["think"].as_f64() {
            Some(t) => format!("{} ({t} s)", r["spec"].as_str().unwrap_or("")),
            None => r["spec"].as_str().unwrap_or("").to_string(),
        };
        let (w, d, l) =
            (r["wins"].as_u64().unwrap_or(0), r["draws"].as_u64().unwrap_or(0), r["losses"].as_u64().unwrap_or(0));
        println!(
            "{:<16} {:>5} {:>5} {:>6} {:>6} {:>6.3}  [{:.2}, {:.2}]  {:>10.3} s",
            spec,
            w + d + l,
            w,
            d,
            l,
            r["score"].as_f64().unwrap_or(0.0),
            r["ci95"][0].as_f64().unwrap_or(0.0),
            r["ci95"][1].as_f64().unwrap_or(0.0),
            r["max_move_seconds"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::wilson;

    #[test]
    fn wilson_interval_of_the_cli_example() {
        let (lo, hi) = wilson(39.0 / 40.0, 40.0);
        assert!((lo - 0.871).abs() < 0.005 && (hi - 0.996).abs() < 0.005, "{lo} {hi}");
        assert_eq!(wilson(0.5, 0.0), (0.0, 1.0));
    }
}
