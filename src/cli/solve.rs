//! `tabula solve GAME`: the exact value of a small game (or of a
//! position) under perfect play, and the moves that keep it (see
//! `game::solve`).

use super::CliError;
use crate::game::solve::{self, Budget, Solution, SolveError};
use crate::plan::open::{GameArgs, PositionArgs, open};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    pub game: GameArgs,
    #[command(flatten)]
    pub at: PositionArgs,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The table of positions may hold this much (e.g. 512M, 4G): a game
    /// that needs more is "too large" (exit code 3).
    #[arg(long, value_parser = super::parse_size, default_value = "1G")]
    pub max_memory: usize,
    /// Give up after S seconds ("too large", exit code 3).
    #[arg(long, value_name = "S")]
    pub timeout: Option<f64>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: SolveArgs) -> Result<i32, CliError> {
    let mut s = open(&a.game)?;
    let state = s.position(&a.at, a.seed)?;
    let deadline = match a.timeout {
        Some(t) if !(t > 0.0 && t.is_finite()) => {
            return Err(CliError("--timeout must be a positive number of seconds".into()));
        }
        Some(t) => Some(Instant::now() + Duration::from_secs_f64(t)),
        None => None,
    };
    let budget = Budget { positions: (a.max_memory / solve::BYTES_PER_POSITION).max(1), deadline };
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or(indicatif::ProgressStyle::default_spinner()),
    );
    let mut progress = |nodes: u64, positions: usize| {
        bar.set_message(format!("{nodes} nodes searched, {positions} positions stored"));
        bar.tick();
    };
    let solved = solve::solve(&mut s.game, &s.options, &state, budget, &mut progress);
    bar.finish_and_clear();
    match solved {
        Ok(sol) => {
            if a.json {
                println!("{}", serde_json::to_string(&sol)?);
            } else {
                print!("{}", report(&s.game.name, &sol));
            }
            Ok(0)
        }
        Err(e @ SolveError::TooLarge { .. }) => {
            if a.json {
                println!("{}", serde_json::json!({"too_large": e.to_string()}));
            } else {
                eprintln!("{}: {e}; give more with --max-memory or --timeout, or solve a smaller variant", s.game.name);
            }
            Ok(3)
        }
        Err(e) => Err(CliError(format!("{}: {e}", s.game.name))),
    }
}

fn report(name: &str, s: &Solution) -> String {
    let value = match &s.winner {
        Some(w) => format!("{w} wins"),
        None => "a draw".to_string(),
    };
    let keep = match &s.winner {
        Some(w) if *w == s.to_move => "win",
        Some(_) => "lose no faster than the others",
        None => "keep the draw",
    };
    let best: Vec<&str> = s.best_moves().map(|m| m.text.as_str()).collect();
    let mut out = format!("{name}: {value} with perfect play ({} to move)\n", s.to_move);
    if s.winner.as_ref().is_some_and(|w| *w != s.to_move) {
        out.push_str(&format!("  every move of {} loses ({})\n", s.to_move, s.moves.len()));
    } else {
        out.push_str(&format!("  moves that {keep}: {} ({} of {})\n", best.join(" "), best.len(), s.moves.len()));
    }
    out.push_str(&format!("  a line of perfect play: {}\n", s.line.join(" ")));
    out.push_str(&format!("  {} positions stored, {} nodes searched, {:.2} s\n", s.positions, s.nodes, s.seconds));
    out
}
