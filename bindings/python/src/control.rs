//! `tabula.Controller("mcts:500")`: the computer players of the CLI, each
//! decision seeded.

use crate::errors::{OptionError, OrRaise};
use crate::state::State;
use pyo3::prelude::*;
use tabula::ai;

/// A computer player: `random`, `greedy`, `minimax[:DEPTH]`,
/// `mcts[:PLAYOUTS]`, `guided[:ITERATIONS]`, `uct[:PLAYOUTS]` or `rules[:LEVEL]`, with an optional budget of
/// seconds a move.
#[pyclass(module = "tabula")]
pub struct Controller {
    controller: ai::Controller,
    seed: u64,
    decisions: u64,
    threads: usize,
}

#[pymethods]
impl Controller {
    #[new]
    #[pyo3(signature = (spec, think = None, seed = 0, threads = 1))]
    fn new(spec: &str, think: Option<f64>, seed: u64, threads: usize) -> PyResult<Controller> {
        let controller = ai::Controller::parse(spec, think).map_err(OptionError::new_err)?;
        if controller.is_human() {
            return Err(OptionError::new_err("a human is not a computer player: choose moves with State.apply"));
        }
        Ok(Controller { controller, seed, decisions: 0, threads: threads.max(1) })
    }

    /// The move this player makes in `state`, in notation (the state does
    /// not change). With hidden information it decides from positions
    /// `sample_state/3` draws for the player to move, never the true one.
    fn choose(&mut self, py: Python<'_>, state: &State) -> PyResult<String> {
        let seed = self.seed.wrapping_add(self.decisions.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        self.decisions += 1;
        let (core, s, ctl, threads) = (state.core(), state.position(), &self.controller, self.threads);
        core.with(py, |e| {
            let players = e.players.clone();
            let choice = ai::choose(&mut e.game, &players, s, ctl, seed, threads)?;
            e.game.notation(s, &choice.mv)
        })
        .or_raise()
    }

    fn __repr__(&self) -> String {
        format!("<tabula.Controller {}>", self.controller)
    }
}
