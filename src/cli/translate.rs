//! `tabula translate FILE.kif`: the program a GDL game becomes, as a
//! rules-language file that also runs in SWI-Prolog.

use super::{CliError, read_source};
use crate::game::{find_game, games_dir, is_gdl};
use crate::syntax::render;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct TranslateArgs {
    /// A GDL game: a `.kif` file, or the name of one in the games folder.
    pub game: String,
    /// The folder of the games.
    #[arg(long, value_name = "DIR")]
    pub games: Option<PathBuf>,
    /// Write the program to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Prints the translation; exit code 1 when the file has errors.
pub fn run(a: TranslateArgs) -> Result<i32, CliError> {
    let path = find_game(&a.game, &games_dir(a.games.as_deref()))?;
    if !is_gdl(&path) {
        return Err(CliError(format!("{} is not a GDL file (.kif)", path.display())));
    }
    let src = read_source(&path)?;
    let file = path.display().to_string();
    let name = path.file_stem().map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
    match crate::gdl::translate_game(&name, &src) {
        Ok(t) => {
            eprint!("{}", render(&file, &src, &t.warnings));
            eprintln!("{}", crate::gdl::path_note(&t.net));
            match &a.output {
                Some(out) => std::fs::write(out, &t.program)
                    .map_err(|e| CliError(format!("cannot write {}: {e}", out.display())))?,
                None => print!("{}", t.program),
            }
            Ok(0)
        }
        Err(diags) => {
            eprint!("{}", render(&file, &src, &diags));
            let n = diags.iter().filter(|d| d.is_error()).count();
            eprintln!("{file}: {n} error{}", if n == 1 { "" } else { "s" });
            Ok(1)
        }
    }
}
