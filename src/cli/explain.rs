//! `tabula explain GAME MOVE`: why a move is not legal, from the rules:
//! for each clause of `move/3`, the first goal that failed with the
//! values of its variables, and inside the file's own predicates it calls
//! (see `game::explain`). In a game with hidden information the rules are
//! run on a position the mover cannot tell from this one, and no value is
//! shown, so nothing the mover may not see is told.

use super::CliError;
use crate::game::explain::{self, Verdict};
use crate::plan::open::{GameArgs, PositionArgs, open};

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub game: GameArgs,
    /// The move, as a player types it (its notation), or as a term.
    #[arg(value_name = "MOVE")]
    pub mv: String,
    #[command(flatten)]
    pub at: PositionArgs,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: ExplainArgs) -> Result<i32, CliError> {
    let mut s = open(&a.game)?;
    let state = s.position(&a.at, a.seed)?;
    if let Some(o) = s.game.outcome(&state)? {
        return Err(CliError(format!("the game is over ({o}): no move is legal")));
    }
    let mover = s.game.to_move(&state)?;
    let (whys, sampled) = match s.game.judge(&s.options, &state, &a.mv)? {
        Verdict::Legal(text) => {
            if a.json {
                println!("{}", serde_json::json!({"move": text, "legal": true}));
            } else {
                println!("`{text}` is a legal move for {mover} here");
            }
            return Ok(0);
        }
        Verdict::NoSuchMove => {
            let legal = s.game.legal_moves(&state)?;
            return Err(CliError(format!(
                "`{}` is no move of {}: no move of the game is written so, or of that form \
                 (type a move as the game writes its moves, e.g. {}, or as a term)",
                a.mv,
                s.game.name,
                legal.iter().take(3).map(|m| m.text.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
        Verdict::Refused { whys, sampled } => (whys, sampled),
    };
    let file = s.game.spec().path().display().to_string();
    if a.json {
        let j = serde_json::json!({"move": a.mv, "legal": false, "mover": mover, "as_the_mover_sees_it": sampled, "clauses": whys});
        println!("{j}");
        return Ok(1);
    }
    println!("`{}` is not a legal move for {mover} here:", a.mv);
    print!("{}", explain::refusal(&whys, sampled, &mover, &file));
    Ok(1)
}
