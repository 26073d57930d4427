//! `tabula analyze GAME`: what a game is like, from batches of games
//! between computer players (see `game::metrics`): balance, draws,
//! completion, duration, branching factor, lead changes and drama, board
//! coverage and pieces, decisive moves; `--compare` two variants side by
//! side; `--plots DIR` draws them as SVG. The games are a job of
//! [`crate::work`]: played on several threads, or in shards (`--shard`,
//! `tabula merge`, the Ray cluster).

use super::{CliError, progress};
use crate::game::metrics;
use crate::plan::open::find_file;
use crate::plan::{AnalyzeArgs, analyze_job};
use crate::work::{self, Hooks, Shard, Unit, Variant};

pub fn run(a: AnalyzeArgs) -> Result<i32, CliError> {
    if !a.compare.is_empty() && a.compare.len() != 2 {
        return Err(CliError(
            "--compare takes two variants: give it twice (e.g. --compare rows=6 --compare rows=8)".into(),
        ));
    }
    if a.shard.is_some() && !a.compare.is_empty() {
        return Err(CliError("a shard is one variant's: run each --compare variant as a run of its own".into()));
    }
    let variants: Vec<Vec<String>> = if a.compare.is_empty() {
        vec![Vec::new()]
    } else {
        a.compare
            .iter()
            .map(|c| c.split(',').map(|o| o.trim().to_string()).filter(|o| !o.is_empty()).collect())
            .collect()
    };
    let shard = a.shard.unwrap_or(Shard::WHOLE);
    let mut done = Vec::new();
    let mut name = String::new();
    for extra in &variants {
        let (job, session) = analyze_job(&a, extra, &find_file)?;
        name = session.game.name.clone();
        let games = shard.len(a.games) as usize;
        let threads = (a.threads)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, games.max(1));
        let bar = progress(Some(games as u64), "games");
        let tick = |n: u64| {
            if let Some(b) = &bar {
                b.inc(n);
            }
        };
        let hooks = Hooks { tick: &tick, ..Hooks::default() };
        let file = work::run(&Unit { spec: session.game.spec(), job: &job, shard, threads, hooks: &hooks })?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        if a.shard.is_some() {
            super::shards::print(&file, true, false)?;
            return Ok(0);
        }
        let work::Part::Analyze { games } = &file.result else {
            return Err(CliError("an analysis gave another result".into()));
        };
        let label = if extra.is_empty() { session.game.name.clone() } else { extra.join(",") };
        done.push(Variant { label, metrics: work::metrics_of(&job.task, &job.players, games)? });
    }
    if let Some(dir) = &a.plots {
        std::fs::create_dir_all(dir).map_err(|e| CliError(format!("cannot make {}: {e}", dir.display())))?;
        for (plot, svg) in work::plots(&name, &done)? {
            let path = dir.join(format!("{name}-{plot}.svg"));
            std::fs::write(&path, svg).map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
            if !a.json {
                eprintln!("wrote {}", path.display());
            }
        }
    }
    let diffs = (done.len() == 2).then(|| metrics::compare(&done[0].metrics, &done[1].metrics));
    if a.json {
        let vs: Vec<serde_json::Value> =
            done.iter().map(|v| serde_json::json!({"variant": v.label, "metrics": v.metrics})).collect();
        println!("{}", serde_json::json!({"game": name, "variants": vs, "differences": diffs}));
        return Ok(0);
    }
    for v in &done {
        print!("{}", work::metrics_text(&v.label, &v.metrics));
    }
    if let Some(d) = diffs {
        print!("{}", work::compared(&done[0].label, &done[1].label, &d));
    }
    Ok(0)
}
