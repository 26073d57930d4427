//! The exceptions: `TabulaError` and one subclass per kind of failure, so
//! that Python code catches what it can handle. A load error carries the
//! file, line and column of its first error.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tabula::game::GameError;

create_exception!(tabula, TabulaError, PyException, "Every error of tabula.");
create_exception!(
    tabula,
    RulesError,
    TabulaError,
    "A rules file that does not load, or rules that fail at run time (file, line, column when known)."
);
create_exception!(
    tabula,
    IllegalMove,
    TabulaError,
    "A move that is not legal in the position (legal: the legal moves)."
);
create_exception!(
    tabula,
    AmbiguousMove,
    IllegalMove,
    "A typed move that begins several legal moves (candidates: those moves)."
);
create_exception!(tabula, LimitError, TabulaError, "A query that passed a resource limit (steps, time or memory).");
create_exception!(
    tabula,
    OptionError,
    TabulaError,
    "A game option that the game does not have, or a value it does not allow."
);
create_exception!(tabula, UnknownGame, TabulaError, "No game of that name, or no such file.");

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TabulaError", py.get_type::<TabulaError>())?;
    m.add("RulesError", py.get_type::<RulesError>())?;
    m.add("IllegalMove", py.get_type::<IllegalMove>())?;
    m.add("AmbiguousMove", py.get_type::<AmbiguousMove>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("OptionError", py.get_type::<OptionError>())?;
    m.add("UnknownGame", py.get_type::<UnknownGame>())?;
    Ok(())
}

/// A rules error with its place: `file`, `line`, `column` attributes
/// (`None` when not known).
pub fn rules_error(py: Python<'_>, message: String, at: Option<(String, usize, usize)>) -> PyErr {
    let err = RulesError::new_err(message);
    let value = err.value(py);
    let (file, line, column) = match at {
        Some((f, l, c)) => (Some(f), Some(l), Some(c)),
        None => (None, None, None),
    };
    // Setting attributes on a fresh exception object cannot fail.
    let _ = value.setattr("file", file);
    let _ = value.setattr("line", line);
    let _ = value.setattr("column", column);
    err
}

/// The Python exception of a game-layer error.
pub fn to_py(e: GameError) -> PyErr {
    let message = e.to_string();
    Python::attach(|py| match e {
        GameError::NotFound(_) => UnknownGame::new_err(message),
        GameError::Option(_) => OptionError::new_err(message),
        GameError::Limit(_) => LimitError::new_err(message),
        GameError::IllegalMove { legal, .. } => {
            let err = IllegalMove::new_err(message);
            let _ = err.value(py).setattr("legal", legal);
            let _ = err.value(py).setattr("why", py.None());
            err
        }
        GameError::AmbiguousMove { candidates, .. } => {
            let err = AmbiguousMove::new_err(message);
            let _ = err.value(py).setattr("legal", candidates.clone());
            let _ = err.value(py).setattr("candidates", candidates);
            let _ = err.value(py).setattr("why", py.None());
            err
        }
        GameError::Load { at, .. } => rules_error(py, message, at),
        GameError::Interface(_) | GameError::Rules(_) => rules_error(py, message, None),
    })
}

/// `Result` over game-layer errors, as Python exceptions.
pub trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, GameError> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
