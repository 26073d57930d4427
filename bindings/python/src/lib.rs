//! The Python module `tabula._tabula`: thin PyO3 wrappers over the game
//! layer of the `tabula` crate (which knows nothing of Python). Every call
//! into the engine releases the GIL; every error is a Python exception.

mod control;
mod errors;
mod games;
mod query;
mod state;
mod work;

use pyo3::prelude::*;

#[pymodule]
fn _tabula(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<games::Game>()?;
    m.add_class::<state::State>()?;
    m.add_class::<control::Controller>()?;
    m.add_function(wrap_pyfunction!(games::load, m)?)?;
    m.add_function(wrap_pyfunction!(games::games, m)?)?;
    m.add_function(wrap_pyfunction!(games::_load_again, m)?)?;
    m.add_function(wrap_pyfunction!(state::_state_again, m)?)?;
    m.add_function(wrap_pyfunction!(query::query, m)?)?;
    m.add_function(wrap_pyfunction!(work::_plan, m)?)?;
    m.add_function(wrap_pyfunction!(work::_run_shard, m)?)?;
    m.add_function(wrap_pyfunction!(work::_run_selfplay_shard, m)?)?;
    m.add_function(wrap_pyfunction!(work::_merge, m)?)?;
    Ok(())
}
