//! `tabula check FILE...`: load each file and report every syntax error
//! and warning. (The game-interface checks come with the game layer.)

use super::{CliError, read_source};
use crate::engine::Engine;
use crate::syntax::render;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Files to check.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Checks every file; exit code 1 if any has an error.
pub fn run(a: CheckArgs) -> Result<i32, CliError> {
    let mut failed = false;
    for path in &a.files {
        let name = path.display().to_string();
        let src = match read_source(path) {
            Ok(s) => s,
            Err(CliError(msg)) => {
                eprintln!("error: {msg}");
                failed = true;
                continue;
            }
        };
        let mut engine = Engine::new();
        let report = engine.load(&name, &src);
        let errors = report.diagnostics.iter().filter(|d| d.is_error()).count();
        let warnings = report.diagnostics.len() - errors;
        eprint!("{}", render(&name, &src, &report.diagnostics));
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        if errors > 0 {
            failed = true;
            println!("{name}: {}, {}", plural(errors, "error"), plural(warnings, "warning"));
        } else {
            println!("{name}: ok ({})", plural(warnings, "warning"));
        }
    }
    Ok(if failed { 1 } else { 0 })
}
