//! The `tabula` command line: argument parsing (clap) and dispatch, one
//! file per subcommand.

mod analyze;
mod check;
mod coverage;
mod explain;
mod games;
mod ggp;
mod matches;
mod play;
mod query;
mod serve;
mod shards;
mod solve;
mod translate;

use crate::plan::Batch;
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
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
    /// Play a game in the terminal.
    Play(play::PlayArgs),
    #[command(flatten)]
    Batch(crate::plan::Batch),
    /// Combine the shard files of a `match`, `tournament`, `selfplay`, `perft`, `bench` or `analyze` run with
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
    /// Why a move is not legal, from the rules: for each clause of
    /// `move/3`, the first goal that failed and the values of its
    /// variables, and inside the predicates it calls. Exit code 1 for an
    /// illegal move, 0 for a legal one.
    Explain(explain::ExplainArgs),
    /// Which rules random games never use: the clauses that never ran and
    /// the goals that never succeeded, over random games.
    Coverage(coverage::CoverageArgs),
    /// The exact value of a small game (or of a position) under perfect
    /// play, a win for whom or a draw, and the moves that keep it.
    /// Exit code 3 when it is too large for the memory or time given.
    Solve(solve::SolveArgs),
    /// A language server for `.rules` and `.kif` files, over stdio (for
    /// an editor to start): diagnostics as you type, symbols, go to
    /// definition, references, hover, completion, quick fixes.
    Lsp(LspArgs),
}

#[derive(clap::Args, Debug)]
pub struct LspArgs {
    /// Talk over stdin and stdout (the only way; accepted because editors
    /// pass it).
    #[arg(long)]
    pub stdio: bool,
}

/// An error that ends a command: printed to stderr, exit code 2. It is
/// the error of reading a command line into a plan (`PlanError`, the
/// batch work's crate's): the jobs' errors reach a person the same way.
pub use crate::plan::PlanError as CliError;

/// A progress bar or spinner on a terminal; nothing otherwise.
pub fn progress(len: Option<u64>, message: &str) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = match len {
        Some(n) => {
            let b = indicatif::ProgressBar::new(n);
            b.set_style(
                indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        }
        None => indicatif::ProgressBar::new_spinner(),
    };
    bar.set_message(message.to_string());
    Some(bar)
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
            Command::Play(a) => play::run(a),
            Command::Batch(Batch::Perft(a)) => games::perft(a),
            Command::Batch(Batch::Bench(a)) => games::bench(a),
            Command::Batch(Batch::Match(a)) => matches::run(a),
            Command::Batch(Batch::Tournament(a)) => matches::tournament(a),
            Command::Batch(Batch::Selfplay(a)) => matches::selfplay(a),
            Command::Batch(Batch::Analyze(a)) => analyze::run(a),
            Command::Merge(a) => shards::merge(a),
            Command::Serve(a) => serve::run(a),
            Command::Translate(a) => translate::run(a),
            Command::Ggp(a) => ggp::run(a),
            Command::Lsp(_) => crate::lsp::run(),
            Command::Coverage(a) => coverage::run(a),
            Command::Solve(a) => solve::run(a),
            Command::Explain(a) => explain::run(a),
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
