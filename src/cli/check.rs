//! `tabula check FILE...`: load each file (or game of the games folder,
//! by name) and report every syntax error
//! and warning; a game (a `.rules` file defining the game interface, or a
//! GDL `.kif` file) is also played in a few random games that check the
//! interface's invariants.

use super::{CliError, read_source};
use crate::engine::Engine;
use crate::game::{Game, Played, REQUIRED, is_gdl};
use crate::syntax::render;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Files to check, or games of the games folder by name (`chess`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The folder of the games (default: $TABULA_GAMES, ./games, or the crate's games/)
    #[arg(long = "games", alias = "games-dir", value_name = "DIR")]
    pub games: Option<PathBuf>,
    /// One JSON object per file: errors, warnings, the game's problems,
    /// and what its random games were like.
    #[arg(long)]
    pub json: bool,
}

/// A file to check: the path as given, or a game of the games folder when
/// no such file exists and the argument is a bare name.
fn locate(given: &std::path::Path, games: Option<&std::path::Path>) -> Result<PathBuf, String> {
    let bare = given.extension().is_none() && given.components().count() == 1;
    if given.exists() || !bare {
        return Ok(given.to_path_buf());
    }
    crate::game::find_game(&given.to_string_lossy(), &crate::game::games_dir(games)).map_err(|e| e.to_string())
}

/// What `check` found in one file.
#[derive(Debug, Default, serde::Serialize)]
struct Checked {
    file: String,
    /// Syntax and static errors, then game errors.
    errors: usize,
    warnings: usize,
    /// Whether the file was checked as a game.
    game: bool,
    /// What is wrong with the game (its random games' problems).
    problems: Vec<String>,
    /// Warnings about the game (options that change nothing).
    cautions: Vec<String>,
    /// What the random games were like.
    played: Option<Played>,
    /// For a `.rules` file not yet a game: what it still needs.
    missing: Vec<String>,
}

impl Checked {
    fn ok(&self) -> bool {
        self.errors == 0
    }

    fn fail(&mut self, problems: Vec<String>) {
        self.errors += problems.len();
        self.problems = problems;
    }

    /// The lines a person reads: problems and notes on stderr (after the
    /// rendered diagnostics), the verdict and the games on stdout.
    fn print(&self) {
        let name = &self.file;
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        for p in &self.problems {
            eprintln!("{name}: error: {p}");
        }
        for c in &self.cautions {
            eprintln!("{name}: warning: {c}");
        }
        let warnings = plural(self.warnings, "warning");
        if !self.problems.is_empty() {
            println!("{name}: {}, {warnings}", plural(self.problems.len(), "game error"));
        } else if self.errors > 0 {
            println!("{name}: {}, {warnings}", plural(self.errors, "error"));
        } else {
            println!("{name}: {} ({warnings})", if self.game { "game ok" } else { "ok" });
        }
        if let Some(p) = &self.played {
            println!("{name}: {p}");
        }
        if !self.missing.is_empty() {
            let lacking = if self.missing.len() == REQUIRED.len() {
                "it defines none of the game predicates".to_string()
            } else {
                format!("{} still missing", self.missing.join(", "))
            };
            let all: Vec<String> = REQUIRED.iter().map(|(n, a)| format!("{n}/{a}")).collect();
            eprintln!("{name}: note: not checked as a game: {lacking}; a game defines {}", all.join(", "));
        }
    }
}

/// Checks every file; exit code 1 if any has an error.
pub fn run(a: CheckArgs) -> Result<i32, CliError> {
    let mut failed = false;
    for given in &a.files {
        let checked = match locate(given, a.games.as_deref()).map_err(CliError).and_then(|p| check(&p)) {
            Ok(c) => c,
            Err(CliError(msg)) => {
                eprintln!("error: {msg}");
                failed = true;
                continue;
            }
        };
        failed |= !checked.ok();
        if a.json {
            println!("{}", serde_json::to_string(&checked).map_err(|e| CliError(e.to_string()))?);
        } else {
            checked.print();
        }
    }
    Ok(if failed { 1 } else { 0 })
}

/// Checks one file: its diagnostics rendered on stderr, the rest found.
fn check(path: &PathBuf) -> Result<Checked, CliError> {
    let name = path.display().to_string();
    let src = read_source(path)?;
    let mut c = Checked { file: name.clone(), ..Checked::default() };
    if is_gdl(path) {
        // A GDL file: its own checks, then the game checks on the translation.
        let stem = path.file_stem().map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
        match crate::gdl::translate_game(&stem, &src) {
            Err(diags) => {
                eprint!("{}", render(&name, &src, &diags));
                c.errors = diags.iter().filter(|d| d.is_error()).count();
                c.warnings = diags.len() - c.errors;
            }
            Ok(t) => {
                eprint!("{}", render(&name, &src, &t.warnings));
                eprintln!("{name}: {}", crate::gdl::path_note(&t.net));
                c.warnings = t.warnings.len();
                c.game = true;
                game_checks(t.into_game(path), &mut c);
            }
        }
        return Ok(c);
    }
    let mut engine = Engine::new();
    let report = engine.load(&name, &src);
    c.errors = report.diagnostics.iter().filter(|d| d.is_error()).count();
    c.warnings = report.diagnostics.len() - c.errors;
    eprint!("{}", render(&name, &src, &report.diagnostics));
    // A file that defines at least half of the game predicates is
    // checked as a game; a `.rules` file that is not yet one (being
    // written) is told what a game still needs.
    let defined = REQUIRED.iter().filter(|(n, _)| !engine.defined_arities(n).is_empty()).count();
    c.game = c.errors == 0 && defined * 2 >= REQUIRED.len();
    if c.game {
        game_checks(Game::from_engine(crate::game::Spec::new(path, src.as_str()), engine), &mut c);
    } else if c.errors == 0 && path.extension().is_some_and(|e| e == "rules") {
        c.missing = (REQUIRED.iter())
            .filter(|(n, a)| !engine.defined_arities(n).contains(a))
            .map(|(n, a)| format!("{n}/{a}"))
            .collect();
    }
    Ok(c)
}

/// The game-interface checks: required predicates, then a few seeded
/// random games checking the invariants, and the options that change
/// nothing.
fn game_checks(loaded: Result<Game, crate::game::GameError>, c: &mut Checked) {
    let mut game = match loaded {
        Ok(g) => g,
        Err(crate::game::GameError::Interface(p)) => return c.fail(p),
        Err(other) => return c.fail(vec![other.to_string()]),
    };
    let options = match game.options_term(&[]) {
        Ok(o) => o,
        Err(e) => return c.fail(vec![e.to_string()]),
    };
    if let Err(e) = game.players(&options) {
        return c.fail(vec![e.to_string()]);
    }
    let (problems, played) = game.check_play(&options, 5, 400, 1);
    if !problems.is_empty() {
        return c.fail(problems);
    }
    c.cautions = game.unread_options();
    if game.has("playout_plies", 2) && !game.has("value", 3) {
        c.cautions.push(
            "playout_plies/2 is read only with value/3, which this game does not define: mcts plays every \
             playout to the end"
                .into(),
        );
    }
    if game.has("prior_playouts", 2) && !game.has("value", 3) {
        c.cautions.push(
            "prior_playouts/2 is read only with value/3, which this game does not define: mcts scores no \
             move before its playouts"
                .into(),
        );
    }
    c.warnings += c.cautions.len();
    c.played = Some(played);
}
