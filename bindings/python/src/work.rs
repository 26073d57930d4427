//! Work units from Python: a `match`, `perft`, `bench` or `analyze` command line made
//! a job, one shard of it run in this process (a Ray task calls this), and
//! the shards merged into the command's report. `tabula.cluster` drives
//! them on Ray.

use crate::errors::TabulaError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::{Path, PathBuf};
use tabula::game::{GameError, Spec, find_game};
use tabula::work::{self, Hooks, Job, Shard, Timing, Unit};

fn error(e: impl std::fmt::Display) -> PyErr {
    TabulaError::new_err(e.to_string())
}

/// A game as this module finds it: `--games DIR` when given, otherwise a
/// path, `$TABULA_GAMES` or the games compiled in.
fn find(name: &str, dir: Option<&Path>) -> Result<(PathBuf, String), GameError> {
    match dir {
        Some(d) => {
            let path = find_game(name, d)?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| GameError::NotFound(format!("cannot read {}: {e}", path.display())))?;
            Ok((path, text))
        }
        None => crate::games::source(name),
    }
}

/// Reads a `match`, `tournament`, `selfplay`, `perft`, `bench` or `analyze` command
/// line (as `tabula` takes it, without `tabula`) into `(job, path, rules,
/// json, out, net)`: the job as JSON, the rules it runs, whether `--json`
/// was given, self-play's `--out`, and a grounded GDL game's network (JSON,
/// with the digest of the rules it is for), built once here for every
/// shard. Raises `TabulaError` with the command line's own message.
#[pyfunction]
pub fn _plan(py: Python<'_>, argv: Vec<String>) -> PyResult<Plan> {
    let plan = py.detach(|| tabula::plan::plan(&argv, &find)).map_err(|e| error(e.0))?;
    let job = serde_json::to_string(&plan.job).map_err(error)?;
    let out = plan.out.map(|o| o.display().to_string());
    let net = tabula::gdl::network_json(&plan.spec).map_err(error)?;
    Ok((job, plan.spec.path().display().to_string(), plan.spec.source().to_string(), plan.json, out, net))
}

/// What `_plan` returns.
type Plan = (String, String, String, bool, Option<String>, Option<String>);

/// The game of a shard: the rules given, with the network `_plan` gave
/// (checked to be whole and for these rules).
fn spec(path: &str, rules: &str, net: Option<&str>) -> PyResult<Spec> {
    let spec = Spec::new(Path::new(path), rules);
    match net {
        Some(text) => tabula::gdl::with_network_json(spec, text).map_err(error),
        None => Ok(spec),
    }
}

/// A job read from its JSON, and shard `index` of `count`.
fn job_and_shard(job: &str, index: u64, count: u64) -> PyResult<(Job, Shard)> {
    let job: Job = serde_json::from_str(job).map_err(|e| error(format!("not a job: {e}")))?;
    let shard: Shard = format!("{index}/{count}").parse().map_err(error)?;
    Ok((job, shard))
}

/// Runs shard `index` of `count` of a job (JSON) on the rules given (and
/// the network `_plan` gave, if any), on `threads` threads, with the GIL
/// released; returns the shard file's JSON.
#[pyfunction]
#[pyo3(signature = (job, path, rules, index, count, threads = 1, net = None))]
// The arguments are the Python function's.
#[allow(clippy::too_many_arguments)]
pub fn _run_shard(
    py: Python<'_>,
    job: &str,
    path: &str,
    rules: &str,
    index: u64,
    count: u64,
    threads: usize,
    net: Option<&str>,
) -> PyResult<String> {
    let (job, shard) = job_and_shard(job, index, count)?;
    let spec = spec(path, rules, net)?;
    let hooks = Hooks::default();
    let unit = Unit { spec: &spec, job: &job, shard, threads, hooks: &hooks };
    let done = py.detach(|| work::run(&unit)).map_err(error)?;
    serde_json::to_string(&done).map_err(error)
}

/// `.npy` files: (name, bytes).
type NpyFiles = Vec<(String, Py<PyBytes>)>;

/// Runs shard `index` of `count` of a self-play job: the shard file's
/// JSON, and its positions as `.npy` files, `(name, bytes)`.
#[pyfunction]
#[pyo3(signature = (job, path, rules, index, count, threads = 1, net = None))]
// The arguments are the Python function's.
#[allow(clippy::too_many_arguments)]
pub fn _run_selfplay_shard(
    py: Python<'_>,
    job: &str,
    path: &str,
    rules: &str,
    index: u64,
    count: u64,
    threads: usize,
    net: Option<&str>,
) -> PyResult<(String, NpyFiles)> {
    let (job, shard) = job_and_shard(job, index, count)?;
    let spec = spec(path, rules, net)?;
    let hooks = Hooks::default();
    let unit = Unit { spec: &spec, job: &job, shard, threads, hooks: &hooks };
    let (done, positions) = py.detach(|| work::run_selfplay(&unit)).map_err(error)?;
    let files = positions
        .npy_files()
        .into_iter()
        .map(|(name, bytes)| (name.to_string(), PyBytes::new(py, &bytes).unbind()))
        .collect();
    Ok((serde_json::to_string(&done).map_err(error)?, files))
}

/// Merges shard files, given as `(name, JSON)` pairs, into the report of
/// the whole run: text, or JSON with `json`. `seconds`, when given,
/// replaces the shards' seconds added up (a cluster gives its wall time).
#[pyfunction]
#[pyo3(signature = (shards, json = false, seconds = None))]
pub fn _merge(shards: Vec<(String, String)>, json: bool, seconds: Option<f64>) -> PyResult<String> {
    let mut read = Vec::new();
    for (name, text) in &shards {
        read.push((name.clone(), work::read_shard(name, text).map_err(error)?));
    }
    let m = work::merge(&read).map_err(error)?;
    let timing = Timing {
        seconds: seconds.unwrap_or(m.seconds),
        shards: m.shards,
        added: seconds.is_none(),
        interrupted: false,
    };
    Ok(if json {
        work::report_json(&m.job, &m.result, timing).to_string()
    } else {
        work::report_text(&m.job, &m.result, timing)
    })
}
