//! The `tabula` command line: argument parsing (clap) and dispatch, one
//! file per subcommand.

mod check;
mod games;
mod ggp;
mod matches;
mod play;
mod query;
mod serve;
mod setup;
mod shards;
mod translate;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// tabula: board games defined as logic programs.
#[derive(Parser, Debug)]
#[command(name = "tabula", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a query against a program and print its answers as Prolog does.
    ///
    /// Without GOAL, an interactive prompt opens (with history); type `;`
    /// after an answer for the next one. Exit code: 0 when the goal
    /// succeeded, 1 when it failed, 2 on an error.
    Query(query::QueryArgs),
    /// Load files and report every syntax error and warning; for games,
    /// also check the game interface and play a few random games.
    Check(check::CheckArgs),
    /// The games found, with title and seats.
    List(games::ListArgs),
    /// A game's description and its options.
    Rules(games::RulesArgs),
    /// The legal moves, in notation.
    Moves(games::MovesArgs),
    /// Perft counts (leaves of the move tree) for depths 1..DEPTH.
    Perft(games::PerftArgs),
    /// Uniformly random playouts: speed, average length, results by seat.
    ///
    /// From the initial state each playout gets its own setup (seed + i), so
    /// a game dealt at random is dealt anew; with --state or --after every
    /// playout starts from that one position.
    Bench(games::BenchArgs),
    /// Play a game in the terminal.
    Play(play::PlayArgs),
    /// Games between computer players, seats rotated: wins, draws, losses
    /// and a 95% confidence interval per controller (Ctrl-C: report the
    /// games played so far).
    Match(matches::MatchArgs),
    /// A round robin of computer players: every set of as many as the game
    /// has seats plays --games games, seats rotated; ratings (Elo scale,
    /// Bradley-Terry) with 95% intervals and the table of scores.
    Tournament(matches::TournamentArgs),
    /// Games between computer players (default `mcts:200` in every seat)
    /// whose positions are written for learning: observations, legal
    /// action masks, the search's visit distributions, the final returns
    /// (NumPy .npy files in --out).
    Selfplay(matches::SelfplayArgs),
    /// Combine the shard files of a `match`, `tournament`, `perft` or `bench` run with
    /// `--shard I/N` into the report of the whole run.
    Merge(shards::MergeArgs),
    /// Serve games and queries over TCP (newline-delimited JSON).
    Serve(serve::ServeArgs),
    /// Print the program a GDL game (.kif) becomes: a rules-language file
    /// that also runs in SWI-Prolog.
    Translate(translate::TranslateArgs),
    /// Play General Game Playing matches: a GGP protocol player over HTTP
    /// (INFO, START, PLAY, STOP, ABORT, PREVIEW), one match at a time.
    Ggp(ggp::GgpArgs),
}

/// A `match`, `tournament`, `selfplay`, `perft` or `bench` run as the command line describes it: a
/// job to split into shards elsewhere (the Python package runs them on a
/// Ray cluster), with the rules it runs.
pub struct Plan {
    pub job: crate::work::Job,
    /// The game, to build in each shard (with a GDL game's network).
    pub spec: crate::game::Spec,
    /// `--json` was given.
    pub json: bool,
    /// Where self-play writes its positions (`--out`).
    pub out: Option<PathBuf>,
}

/// Reads a `match`, `perft` or `bench` command line (without `tabula`)
/// into a [`Plan`], with exactly the command's arguments and errors; the
/// game is found by `find`.
pub fn plan(argv: &[String], find: &setup::Finder) -> Result<Plan, CliError> {
    let cli = Cli::try_parse_from(std::iter::once("tabula".to_string()).chain(argv.iter().cloned()))
        .map_err(|e| CliError(e.render().to_string().trim_end().trim_start_matches("error: ").to_string()))?;
    let mut out = None;
    let (job, session, json, shard) = match cli.command {
        Command::Match(a) => {
            let (job, s) = matches::job(&a, find)?;
            (job, s, a.common.json, a.common.shard)
        }
        Command::Tournament(a) => {
            let (job, s) = matches::tournament_job(&a, find)?;
            (job, s, a.common.json, a.common.shard)
        }
        Command::Selfplay(a) => {
            let (job, s) = matches::selfplay_job(&a, find)?;
            out = Some(a.out.clone());
            (job, s, a.common.json, a.common.shard)
        }
        Command::Perft(a) => {
            let (job, s) = games::perft_job(&a, find)?;
            (job, s, a.json, a.shard)
        }
        Command::Bench(a) => {
            if a.playouts.is_none() && a.seconds.is_some() {
                return Err(CliError(
                    "a run in shards plays a number of playouts: give --playouts, not --seconds".into(),
                ));
            }
            let (job, s) = games::bench_job(&a, find)?;
            (job, s, a.json, a.shard)
        }
        _ => {
            let name = argv.first().map_or("", String::as_str);
            return Err(CliError(format!(
                "`{name}` does not split into shards: the commands that do are match, tournament, selfplay, perft and bench"
            )));
        }
    };
    if shard.is_some() {
        return Err(CliError("the run is split into shards for you: leave out --shard".into()));
    }
    Ok(Plan { job, spec: session.game.spec().clone(), json, out })
}

/// An error that ends a command: printed to stderr, exit code 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// A size in bytes: a number with an optional K, M or G (powers of 1024).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("`{s}` is not a size: write a number of bytes, or one with K, M or G (e.g. 512M)")),
    };
    let n: usize = digits.parse().map_err(|_| format!("`{s}` is not a size: it needs a number (e.g. 512M)"))?;
    match n.checked_mul(1 << shift) {
        Some(0) | None => Err(format!("`{s}` is not a size this machine can use")),
        Some(v) => Ok(v),
    }
}

/// Reads a source file with a clear error.
pub fn read_source(path: &PathBuf) -> Result<String, CliError> {
    let bytes = std::fs::read(path).map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        CliError(format!(
            "{} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    // The engine never recurses on Prolog data, but the parser recurses on
    // bracket nesting (bounded); a large stack keeps every input safe.
    let child = std::thread::Builder::new().stack_size(256 << 20).spawn(|| {
        let cli = match Cli::try_parse() {
            Ok(c) => c,
            Err(e) => {
                let code = if e.use_stderr() { 2 } else { 0 };
                let _ = e.print();
                return code;
            }
        };
        let result = match cli.command {
            Command::Query(a) => query::run(a),
            Command::Check(a) => check::run(a),
            Command::List(a) => games::list(a),
            Command::Rules(a) => games::rules(a),
            Command::Moves(a) => games::moves(a),
            Command::Perft(a) => games::perft(a),
            Command::Bench(a) => games::bench(a),
            Command::Play(a) => play::run(a),
            Command::Match(a) => matches::run(a),
            Command::Tournament(a) => matches::tournament(a),
            Command::Selfplay(a) => matches::selfplay(a),
            Command::Merge(a) => shards::merge(a),
            Command::Serve(a) => serve::run(a),
            Command::Translate(a) => translate::run(a),
            Command::Ggp(a) => ggp::run(a),
        };
        match result {
            Ok(code) => code,
            Err(CliError(msg)) => {
                eprintln!("error: {msg}");
                2
            }
        }
    });
    match child.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => {
            eprintln!("error: internal failure");
            3
        }
    }
}
