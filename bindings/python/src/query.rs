//! `tabula.query(file, goal)`: the answers of a goal against a program, as
//! `tabula query` gives them, within limits.

use crate::errors::{LimitError, RulesError, rules_error};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::time::Duration;
use tabula::engine::{Engine, Limits, QueryError};
use tabula::syntax::{diag::first_error_at, render};

/// Every answer (at most `limit`) of `goal` against the program in `file`,
/// each a dict of variable name to the value as `writeq/1` writes it. A
/// query stops with `LimitError` past `max_steps` inference steps or
/// `timeout` seconds.
#[pyfunction]
#[pyo3(signature = (file, goal, limit = 100, max_steps = None, timeout = 10.0, seed = 0))]
pub fn query(
    py: Python<'_>,
    file: &str,
    goal: &str,
    limit: usize,
    max_steps: Option<u64>,
    timeout: Option<f64>,
    seed: u64,
) -> PyResult<Vec<HashMap<String, String>>> {
    let src = std::fs::read_to_string(file)
        .map_err(|e| crate::errors::UnknownGame::new_err(format!("cannot read {file}: {e}")))?;
    let goal = goal.trim().trim_end_matches('.').trim().to_string();
    let goal_text = goal.clone();
    let file = file.to_string();
    enum Failed {
        Load(String, Option<(String, usize, usize)>),
        Query(QueryError),
    }
    let r = py.detach(move || {
        let mut engine = Engine::new();
        engine.set_seed(seed);
        let report = engine.load(&file, &src);
        if report.has_errors() {
            let at = first_error_at(&file, &src, &report.diagnostics);
            return Err(Failed::Load(render(&file, &src, &report.diagnostics), at));
        }
        let timeout = timeout.filter(|t| t.is_finite() && *t > 0.0).map(Duration::from_secs_f64);
        engine.set_limits(Limits { max_steps, timeout, ..Limits::default() });
        let mut answers = Vec::new();
        let mut q = engine.query(&goal).map_err(Failed::Query)?;
        while answers.len() < limit {
            match q.next() {
                Some(Ok(a)) => answers.push(a.bindings.into_iter().map(|b| (b.name, b.text)).collect()),
                Some(Err(e)) => return Err(Failed::Query(e)),
                None => break,
            }
        }
        Ok(answers)
    });
    r.map_err(|f| match f {
        Failed::Load(text, at) => rules_error(py, text.trim_end().to_string(), at),
        Failed::Query(e @ QueryError::Limit { .. }) => LimitError::new_err(e.to_string()),
        Failed::Query(QueryError::Syntax(d)) => {
            let text = render("query", &goal_text, std::slice::from_ref(&d));
            rules_error(py, text.trim_end().to_string(), None)
        }
        Failed::Query(e) => RulesError::new_err(e.to_string()),
    })
}
