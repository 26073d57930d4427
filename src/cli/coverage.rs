//! `tabula coverage GAME`: which rules random games never use. Plays
//! random games (as `check` does) with every clause and body goal of the
//! `.rules` file counted, then lists the clauses that never ran and the
//! goals that never succeeded: the dead rules a designer left behind, or
//! the ones random play does not reach.

use super::CliError;
use crate::game::coverage::{self, Coverage};
use crate::plan::open::find_file;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CoverageArgs {
    /// A game in the games folder (e.g. `breakthrough`) or a path to a .rules file.
    pub game: String,
    /// Random games to play.
    #[arg(long, default_value_t = 20)]
    pub games: u32,
    /// A game still going after this many plies is cut off.
    #[arg(long, default_value_t = 400)]
    pub max_plies: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Every clause and goal with its counts, not only those never used.
    #[arg(long)]
    pub all: bool,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
    /// The folder of the games.
    #[arg(long = "games-dir", value_name = "DIR")]
    pub games_dir: Option<PathBuf>,
}

pub fn run(a: CoverageArgs) -> Result<i32, CliError> {
    let (path, src) = find_file(&a.game, a.games_dir.as_deref())?;
    if crate::game::is_gdl(&path) {
        return Err(CliError(format!(
            "{}: coverage counts the clauses of a .rules file; a GDL game's are its translation's",
            path.display()
        )));
    }
    let c = coverage::measure(&path, &src, a.games, a.max_plies, a.seed, &crate::engine::Limits::default(), &|| false)?;
    if a.json {
        println!("{}", serde_json::to_string(&c)?);
        return Ok(0);
    }
    print!("{}", report(&path.display().to_string(), &c, a.all));
    Ok(0)
}

/// The report a person reads.
fn report(file: &str, c: &Coverage, all: bool) -> String {
    let ran = c.clauses.iter().filter(|k| k.entered > 0).count();
    let goals: usize = c.clauses.iter().filter(|k| k.entered > 0).map(|k| k.goals.len()).sum();
    let succeeded = goals - c.dead_goals().count();
    let mut out = format!(
        "{file}: {} random games: {ran} of {} clauses ran; in those, {succeeded} of {goals} goals succeeded\n",
        c.games,
        c.clauses.len(),
    );
    for k in &c.clauses {
        if k.entered == 0 {
            out.push_str(&format!("{file}:{}: a clause of {} never ran\n", k.line, k.predicate));
            continue;
        }
        if all {
            out.push_str(&format!("{file}:{}: a clause of {} ran {} times\n", k.line, k.predicate, k.entered));
        }
        for g in &k.goals {
            let line = format!("{file}:{}:{}: `{}` in {}", g.line, g.column, g.goal, k.predicate);
            if g.called == 0 {
                out.push_str(&format!("{line}: never called\n"));
            } else if g.succeeded == 0 {
                out.push_str(&format!("{line}: called {} times, never succeeded\n", g.called));
            } else if all {
                out.push_str(&format!("{line}: called {} times, succeeded {} times\n", g.called, g.succeeded));
            }
        }
    }
    out
}
