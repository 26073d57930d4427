//! `tabula explain GAME MOVE`: why a move is not legal, from the rules:
//! for each clause of `move/3`, the first goal that failed with the
//! values of its variables, and inside the file's own predicates it calls
//! (see `game::explain`). In a game with hidden information the rules are
//! run on a position the mover cannot tell from this one, and no value is
//! shown, so nothing the mover may not see is told.

use super::CliError;
use crate::game::explain;
use crate::plan::open::{GameArgs, StartArgs, open};

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub game: GameArgs,
    /// The move, as a player types it (its notation), or as a term.
    #[arg(value_name = "MOVE")]
    pub mv: String,
    #[command(flatten)]
    pub start: StartArgs,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: ExplainArgs) -> Result<i32, CliError> {
    let mut s = open(&a.game)?;
    let state = s.start(&a.start, a.seed)?;
    if let Some(o) = s.game.outcome(&state)? {
        return Err(CliError(format!("the game is over ({o}): no move is legal")));
    }
    let legal = s.game.legal_moves(&state)?;
    let mover = s.game.to_move(&state)?;
    let legal_text = |text: &str| {
        if a.json {
            println!("{}", serde_json::json!({"move": text, "legal": true}));
        } else {
            println!("`{text}` is a legal move for {mover} here");
        }
        Ok(0)
    };
    // The move as written; else a legal move typed as `play` takes it (a
    // prefix, or its number in the list).
    let Some(mv) = s.game.move_named(&s.options, &a.mv)? else {
        if let Ok(k) = s.game.match_move(&legal, &a.mv) {
            return legal_text(&legal[k].text);
        }
        return Err(CliError(format!(
            "`{}` names no move of {}: type a move as the game writes its moves (e.g. {}), or as a term",
            a.mv,
            s.game.name,
            legal.iter().take(3).map(|m| m.text.as_str()).collect::<Vec<_>>().join(", ")
        )));
    };
    if let Some(l) = legal.iter().find(|l| l.mv == mv) {
        return legal_text(&l.text);
    }
    // What the mover may see, and no more: the rules run on a position
    // the mover cannot tell from this one, and no value is shown (a value
    // there may be a hidden piece dealt anew, not the real one).
    let (seen, sampled) = if s.game.hidden() { (s.game.sample_state(&state, &mover)?, true) } else { (state, false) };
    let mut whys = s.game.explain(&seen, &mv)?;
    if sampled {
        explain::forget_values(&mut whys);
    }
    if whys.iter().all(|w| matches!(w, explain::Why::Head { .. })) {
        return Err(CliError(format!(
            "`{}` is no move of {}: no clause of move/3 takes a move of that form (moves here: {})",
            a.mv,
            s.game.name,
            legal.iter().take(3).map(|m| m.text.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    let file = s.game.spec().path().display().to_string();
    if a.json {
        let j = serde_json::json!({"move": a.mv, "legal": false, "mover": mover, "as_the_mover_sees_it": sampled, "clauses": whys});
        println!("{j}");
        return Ok(1);
    }
    println!("`{}` is not a legal move for {mover} here:", a.mv);
    if sampled {
        println!(
            "(the rules run on a position {mover} cannot tell from this one, hidden pieces dealt anew; values are not shown)"
        );
    }
    print!("{}", explain::written(&whys, &file));
    Ok(1)
}
