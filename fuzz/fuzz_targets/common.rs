//! What the targets share: limits that keep any one input to a moment.

use std::time::Duration;
use tabula::engine::Limits;

/// Steps, time and memory one input may use in the engine: a runaway
/// goal is stopped, never a hang.
pub fn limits() -> Limits {
    Limits { max_steps: Some(200_000), timeout: Some(Duration::from_secs(1)), max_memory: 64 << 20 }
}

#[allow(dead_code)] // the query target has no game
/// Loads a game from `text` (`name` says what kind of file it is) and, if
/// it loads, sets it up and lists the first moves, within [`limits`].
pub fn game(name: &str, text: &str) {
    let Ok((mut game, _)) = tabula::loader::load_text(std::path::Path::new(name), text) else { return };
    game.engine().set_limits(limits());
    // The interpreter runs the clauses: Cranelift, built with the
    // sanitizers, would spend the input's moment compiling them (the seed
    // corpus's games took minutes), and it is the readers that are fuzzed.
    game.engine().set_native(false);
    let Ok(options) = game.options_term(&[]) else { return };
    let Ok(start) = game.initial_state(&options, 0) else { return };
    let _ = game.outcome(&start);
    if let Ok(moves) = game.legal_moves(&start) {
        for m in moves.iter().take(4) {
            let _ = game.outcome(&m.next);
        }
    }
}
