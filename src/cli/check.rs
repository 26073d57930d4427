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

/// Checks every file; exit code 1 if any has an error.
pub fn run(a: CheckArgs) -> Result<i32, CliError> {
    let mut failed = false;
    for given in &a.files {
        let path = match locate(given, a.games.as_deref()) {
            Ok(p) => p,
            Err(msg) => {
                eprintln!("error: {msg}");
                failed = true;
                continue;
            }
        };
        let path = &path;
        let name = path.display().to_string();
        let src = match read_source(path) {
            Ok(s) => s,
            Err(CliError(msg)) => {
                eprintln!("error: {msg}");
                failed = true;
                continue;
            }
        };
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        if is_gdl(path) {
            // A GDL file: its own checks, then the game checks on the translation.
            let stem = path.file_stem().map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
            match crate::gdl::translate_game(&stem, &src) {
                Err(diags) => {
                    failed = true;
                    eprint!("{}", render(&name, &src, &diags));
                    let errors = diags.iter().filter(|d| d.is_error()).count();
                    println!("{name}: {}, {}", plural(errors, "error"), plural(diags.len() - errors, "warning"));
                }
                Ok(t) => {
                    eprint!("{}", render(&name, &src, &t.warnings));
                    eprintln!("{name}: {}", crate::gdl::path_note(&t.net));
                    let warnings = t.warnings.len();
                    match game_problems(t.into_game(path)) {
                        Err(problems) => {
                            failed = true;
                            for p in &problems {
                                eprintln!("{name}: error: {p}");
                            }
                            let (e, w) = (plural(problems.len(), "game error"), plural(warnings, "warning"));
                            println!("{name}: {e}, {w}");
                        }
                        Ok(played) => {
                            println!("{name}: game ok ({})", plural(warnings, "warning"));
                            println!("{name}: {played}");
                        }
                    }
                }
            }
            continue;
        }
        let mut engine = Engine::new();
        let report = engine.load(&name, &src);
        let errors = report.diagnostics.iter().filter(|d| d.is_error()).count();
        let warnings = report.diagnostics.len() - errors;
        eprint!("{}", render(&name, &src, &report.diagnostics));
        // A file that defines at least half of the game predicates is
        // checked as a game.
        let missing: Vec<String> = REQUIRED
            .iter()
            .filter(|(n, a)| !engine.defined_arities(n).contains(a))
            .map(|(n, a)| format!("{n}/{a}"))
            .collect();
        let defined = REQUIRED.iter().filter(|(n, _)| !engine.defined_arities(n).is_empty()).count();
        let is_game = errors == 0 && defined * 2 >= REQUIRED.len();
        let mut played = None;
        if is_game {
            match game_problems(Game::from_engine(crate::game::Spec::new(path, src.as_str()), engine)) {
                Ok(p) => played = Some(p),
                Err(problems) => {
                    failed = true;
                    for p in &problems {
                        eprintln!("{name}: error: {p}");
                    }
                    println!("{name}: {}, {}", plural(problems.len(), "game error"), plural(warnings, "warning"));
                    continue;
                }
            }
        }
        if errors > 0 {
            failed = true;
            println!("{name}: {}, {}", plural(errors, "error"), plural(warnings, "warning"));
        } else {
            let what = if is_game { "game ok" } else { "ok" };
            println!("{name}: {what} ({})", plural(warnings, "warning"));
            if let Some(p) = played {
                println!("{name}: {p}");
            }
            // A `.rules` file that is not yet a game (one being written) is
            // told what a game still needs.
            if !is_game && path.extension().is_some_and(|e| e == "rules") {
                let lacking = if missing.len() == REQUIRED.len() {
                    "it defines none of the game predicates".to_string()
                } else {
                    format!("{} still missing", missing.join(", "))
                };
                let all: Vec<String> = REQUIRED.iter().map(|(n, a)| format!("{n}/{a}")).collect();
                eprintln!("{name}: note: not checked as a game: {lacking}; a game defines {}", all.join(", "));
            }
        }
    }
    Ok(if failed { 1 } else { 0 })
}

/// The game-interface checks: required predicates, then a few seeded
/// random games checking the invariants.
fn game_problems(loaded: Result<Game, crate::game::GameError>) -> Result<Played, Vec<String>> {
    let mut game = loaded.map_err(|e| match e {
        crate::game::GameError::Interface(p) => p,
        other => vec![other.to_string()],
    })?;
    let options = game.options_term(&[]).map_err(|e| vec![e.to_string()])?;
    game.players(&options).map_err(|e| vec![e.to_string()])?;
    let (problems, played) = game.check_play(&options, 5, 400, 1);
    if problems.is_empty() { Ok(played) } else { Err(problems) }
}
