//! The reports of `match`, `perft` and `bench`, as text and as JSON: one
//! writer for a whole run on one machine, a merge of shard files and a run
//! on a Ray cluster, so all three print the same thing.

use super::{Games, Job, Part, Task};
use serde_json::{Value as Json, json};
use std::fmt::Write;

pub use tabula_games::game::metrics::wilson;

/// How a result was made: in how many shards, in how many seconds (the
/// time of a whole run, or of a cluster run, or its shards' seconds added
/// up), and whether it was stopped before its end.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub seconds: f64,
    pub shards: u64,
    /// `seconds` are the shards' seconds added up.
    pub added: bool,
    pub interrupted: bool,
}

impl Timing {
    /// A run in one piece.
    pub fn whole(seconds: f64, interrupted: bool) -> Timing {
        Timing { seconds, shards: 1, added: false, interrupted }
    }

    /// What the text says after the seconds.
    fn note(&self) -> String {
        match (self.shards, self.added) {
            (0 | 1, _) => String::new(),
            (n, true) => format!(" ({n} shards, their seconds added up)"),
            (n, false) => format!(" ({n} shards)"),
        }
    }
}

/// The games of a match or tournament as JSON: their number and length,
/// and a row per controller with its score and Wilson interval.
fn games_json(job: &Job, specs: &[String], think: Option<f64>, games: &Games, timing: Timing) -> Json {
    let Games { played, plies, unfinished, controllers } = games;
    // A draw is worth a share of the game among its players.
    let draw_share = 1.0 / job.players.len().max(1) as f64;
    let rows: Vec<Json> = specs
        .iter()
        .zip(controllers)
        .map(|(spec, r)| {
            let games = (r.wins + r.draws + r.losses) as f64;
            let score = if games > 0.0 { (r.wins as f64 + r.draws as f64 * draw_share) / games } else { 0.0 };
            let (lo, hi) = wilson(score, games);
            json!({"spec": spec, "think": think, "wins": r.wins, "draws": r.draws, "losses": r.losses,
                   "score": score, "ci95": [lo, hi], "max_move_seconds": r.slowest})
        })
        .collect();
    json!({"game": job.game, "games": played, "seed": job.seed, "seconds": timing.seconds,
           "average_length": *plies as f64 / (*played).max(1) as f64, "unfinished": unfinished,
           "interrupted": timing.interrupted, "controllers": rows})
}

/// The report as one JSON document.
pub fn report_json(job: &Job, result: &Part, timing: Timing) -> Json {
    let Timing { seconds, shards, .. } = timing;
    let options: serde_json::Map<String, Json> =
        job.options.iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect();
    let mut doc = match (&job.task, result) {
        (Task::Match { controllers: specs, think, .. }, Part::Match(games)) => {
            let mut doc = games_json(job, specs, *think, games, timing);
            doc["options"] = Json::Object(options);
            doc
        }
        (Task::Selfplay { controllers: specs, think, explore, .. }, Part::Selfplay { games, positions }) => {
            let mut doc = games_json(job, specs, *think, games, timing);
            doc["options"] = Json::Object(options);
            doc["positions"] = json!(positions);
            doc["explore"] = json!(explore);
            doc
        }
        (
            Task::Tournament { controllers: specs, think, games: per_pairing, .. },
            Part::Tournament { games, ahead, drawn },
        ) => {
            let mut doc = games_json(job, specs, *think, games, timing);
            doc["options"] = Json::Object(options);
            let k = specs.len();
            let rated = super::ratings(ahead, drawn);
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by(|&a, &b| rated[b].0.total_cmp(&rated[a].0));
            if let Some(rows) = doc["controllers"].as_array_mut() {
                for (rank, &c) in order.iter().enumerate() {
                    let (elo, lo, hi) = rated[c];
                    rows[c]["rank"] = json!(rank + 1);
                    rows[c]["elo"] = json!(elo);
                    rows[c]["elo_ci95"] = json!([lo, hi]);
                }
            }
            // The row's score against the column: wins and half the draws.
            let table: Vec<Json> = (0..k)
                .map(|i| {
                    Json::Array(
                        (0..k)
                            .map(|j| {
                                let n = ahead[i][j] + ahead[j][i] + drawn[i][j];
                                if i == j || n == 0 {
                                    Json::Null
                                } else {
                                    json!((ahead[i][j] as f64 + 0.5 * drawn[i][j] as f64) / n as f64)
                                }
                            })
                            .collect(),
                    )
                })
                .collect();
            let pairings = super::pairings(k, job.players.len()).len();
            doc["pairings"] = json!(pairings);
            doc["games_per_pairing"] = json!(per_pairing);
            doc["table"] = Json::Array(table);
            doc
        }
        (Task::Perft { depth, divide: true, .. }, Part::Perft { divide, .. }) => {
            let rows: Vec<Json> = divide.iter().map(|(m, n)| json!({"move": m, "nodes": n})).collect();
            let total: u64 = divide.iter().map(|(_, n)| n).sum();
            json!({"game": job.game, "options": options, "depth": depth, "divide": rows, "nodes": total})
        }
        (Task::Perft { .. }, Part::Perft { nodes, seconds: secs, .. }) => {
            let depths: Vec<Json> = nodes
                .iter()
                .zip(secs)
                .enumerate()
                .map(|(i, (n, s))| json!({"depth": i + 1, "nodes": n, "seconds": s}))
                .collect();
            json!({"game": job.game, "options": options, "depths": depths})
        }
        (Task::Bench { .. }, Part::Bench { played, plies, draws, wins, seconds: playing }) => {
            // The seconds spent playing, without the engines' loading (a
            // GDL game's can take seconds), for a run and for shards added
            // up; a cluster's wall time when it gives one; the run's seconds
            // in a file of an earlier version.
            let own = *playing > 0.0 && (shards <= 1 || timing.added);
            let secs = if own { *playing } else { seconds }.max(1e-9);
            let mut res: serde_json::Map<String, Json> = wins.iter().map(|(p, n)| (p.clone(), json!(n))).collect();
            res.insert("draw".into(), json!(draws));
            json!({"game": job.game, "options": options, "playouts": played, "seconds": secs,
                   "playouts_per_second": *played as f64 / secs, "plies_per_second": *plies as f64 / secs,
                   "average_length": if *played > 0 { *plies as f64 / *played as f64 } else { 0.0 },
                   "results": res})
        }
        (Task::Analyze { .. }, Part::Analyze { games }) => match super::metrics_of(&job.task, &job.players, games) {
            Ok(m) => json!({"game": job.game, "options": options, "seed": job.seed, "seconds": seconds,
                            "interrupted": timing.interrupted, "metrics": m}),
            Err(e) => json!({"game": job.game, "error": e.0}),
        },
        _ => json!({"game": job.game, "error": "the result does not match the job"}),
    };
    if shards > 1 {
        doc["shards"] = json!(shards);
    }
    doc
}

/// The report as text, as the command prints it.
pub fn report_text(job: &Job, result: &Part, timing: Timing) -> String {
    let doc = report_json(job, result, timing);
    let shards = timing.shards;
    let mut out = String::new();
    let split = timing.note();
    let f = |v: &Json| v.as_f64().unwrap_or(0.0);
    let u = |v: &Json| v.as_u64().unwrap_or(0);
    match &job.task {
        Task::Match { games, max_plies, .. } | Task::Selfplay { games, max_plies, .. } => {
            let what = match &job.task {
                Task::Selfplay { .. } => "self-play, ",
                _ => "",
            };
            games_header(&mut out, job, &doc, (what, *games, *max_plies), timing);
            let _ = writeln!(
                out,
                "{:<16} {:>5} {:>5} {:>6} {:>6} {:>6}  {:<14} {:>12}",
                "controller", "games", "wins", "draws", "losses", "score", "95% CI", "slowest move"
            );
            for r in doc["controllers"].as_array().into_iter().flatten() {
                let (w, d, l) = (u(&r["wins"]), u(&r["draws"]), u(&r["losses"]));
                let _ = writeln!(
                    out,
                    "{:<16} {:>5} {:>5} {:>6} {:>6} {:>6.3}  [{:.2}, {:.2}]  {:>10.3} s",
                    controller_name(r),
                    w + d + l,
                    w,
                    d,
                    l,
                    f(&r["score"]),
                    f(&r["ci95"][0]),
                    f(&r["ci95"][1]),
                    f(&r["max_move_seconds"])
                );
            }
            if let Some(n) = doc["positions"].as_u64() {
                let _ = writeln!(out, "{n} positions");
            }
        }
        Task::Tournament { controllers, games, max_plies, .. } => {
            let pairings = u(&doc["pairings"]);
            let what = format!(
                "a round robin of {} controllers, {pairings} pairing{} of {games} game{}: ",
                controllers.len(),
                if pairings == 1 { "" } else { "s" },
                if *games == 1 { "" } else { "s" }
            );
            games_header(&mut out, job, &doc, (&what, pairings * games, *max_plies), timing);
            let _ = writeln!(
                out,
                "{:>4}  {:<16} {:>6}  {:<14} {:>5} {:>5} {:>6} {:>6} {:>6}  {:>12}",
                "rank", "controller", "Elo", "95% CI", "games", "wins", "draws", "losses", "score", "slowest move"
            );
            let rows: Vec<&Json> = doc["controllers"].as_array().map(|v| v.iter().collect()).unwrap_or_default();
            let mut ranked = rows.clone();
            ranked.sort_by_key(|r| u(&r["rank"]));
            for r in &ranked {
                let (w, d, l) = (u(&r["wins"]), u(&r["draws"]), u(&r["losses"]));
                let _ = writeln!(
                    out,
                    "{:>4}  {:<16} {:>+6.0}  [{:>+5.0}, {:>+5.0}] {:>5} {:>5} {:>6} {:>6} {:>6.3}  {:>10.3} s",
                    u(&r["rank"]),
                    controller_name(r),
                    f(&r["elo"]),
                    f(&r["elo_ci95"][0]),
                    f(&r["elo_ci95"][1]),
                    w + d + l,
                    w,
                    d,
                    l,
                    f(&r["score"]),
                    f(&r["max_move_seconds"])
                );
            }
            // The table: each row's score against each column.
            let _ = writeln!(out, "\nscore of the row against the column (wins and half the draws):");
            let names: Vec<String> = rows.iter().map(|r| controller_name(r)).collect();
            let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(6);
            let _ = write!(out, "{:<width$}", "");
            for n in &names {
                let _ = write!(out, " {n:>width$}");
            }
            out.push('\n');
            for (i, n) in names.iter().enumerate() {
                let _ = write!(out, "{n:<width$}");
                for j in 0..names.len() {
                    let cell = match doc["table"][i][j].as_f64() {
                        Some(x) => format!("{x:.3}"),
                        None => "-".to_string(),
                    };
                    let _ = write!(out, " {cell:>width$}");
                }
                out.push('\n');
            }
        }
        Task::Perft { divide: true, .. } => {
            for r in doc["divide"].as_array().into_iter().flatten() {
                let _ = writeln!(out, "{} {}", r["move"].as_str().unwrap_or(""), u(&r["nodes"]));
            }
            let _ = writeln!(out, "total {}", u(&doc["nodes"]));
        }
        Task::Perft { .. } => {
            let _ = writeln!(out, "{PERFT_HEADER}");
            for r in doc["depths"].as_array().into_iter().flatten() {
                out.push_str(&perft_line(u(&r["depth"]) as u32, u(&r["nodes"]), f(&r["seconds"])));
                out.push('\n');
            }
            if shards > 1 {
                let _ = writeln!(out, "{shards} shards: the seconds of each depth are theirs added up");
            }
        }
        Task::Analyze { .. } => match &result {
            Part::Analyze { games } => match super::metrics_of(&job.task, &job.players, games) {
                Ok(m) => {
                    let options: Vec<String> = job.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    let label = if options.is_empty() {
                        job.game.clone()
                    } else {
                        format!("{} ({})", job.game, options.join(", "))
                    };
                    out.push_str(&super::metrics_text(&label, &m));
                    let stopped = if timing.interrupted { ", interrupted" } else { "" };
                    let _ = writeln!(out, "  {} games in {:.1} s{split}{stopped}", games.len(), timing.seconds);
                }
                Err(e) => {
                    let _ = writeln!(out, "error: {e}");
                }
            },
            _ => out.push_str("error: the result does not match the job\n"),
        },
        Task::Bench { .. } => {
            let (played, secs) = (u(&doc["playouts"]), f(&doc["seconds"]));
            let _ = writeln!(
                out,
                "{played} playouts in {secs:.2} s{split}: {:.1} playouts/s, {:.0} plies/s",
                f(&doc["playouts_per_second"]),
                f(&doc["plies_per_second"])
            );
            let _ = writeln!(out, "average length {:.2} plies", f(&doc["average_length"]));
            for p in &job.players {
                let n = u(&doc["results"][p]);
                let _ = writeln!(out, "{p} wins {n} ({:.1}%)", 100.0 * n as f64 / played.max(1) as f64);
            }
            let draws = u(&doc["results"]["draw"]);
            let _ = writeln!(out, "draws {draws} ({:.1}%)", 100.0 * draws as f64 / played.max(1) as f64);
        }
    }
    out
}

/// A controller as the reports name it: its spec, with its time a move.
fn controller_name(r: &Json) -> String {
    let spec = r["spec"].as_str().unwrap_or("");
    match r["think"].as_f64() {
        Some(t) => format!("{spec} ({t} s)"),
        None => spec.to_string(),
    }
}

/// The first line of a match's or tournament's report: `what` the games
/// were, how many of `total` were played, and their length.
fn games_header(out: &mut String, job: &Job, doc: &Json, (what, total, max_plies): (&str, u64, u32), timing: Timing) {
    let played = doc["games"].as_u64().unwrap_or(0);
    let unfinished = doc["unfinished"].as_u64().unwrap_or(0);
    let _ = writeln!(
        out,
        "{}: {what}{played} games{}, seats rotated, seed {}, {:.1} s{}, average length {:.1} plies{}",
        job.game,
        if timing.interrupted { format!(" of {total} (interrupted)") } else { String::new() },
        job.seed,
        timing.seconds,
        timing.note(),
        doc["average_length"].as_f64().unwrap_or(0.0),
        if unfinished > 0 {
            format!(", {unfinished} unfinished after {max_plies} plies (counted as draws)")
        } else {
            String::new()
        }
    );
}

/// The header of perft's lines.
pub const PERFT_HEADER: &str = "depth nodes seconds nodes/s";

/// One depth of perft: depth, leaves, seconds, leaves per second.
pub fn perft_line(d: u32, n: u64, secs: f64) -> String {
    let rate = if secs > 0.0 { n as f64 / secs } else { 0.0 };
    format!("{d} {n} {secs:.3} {rate:.0}")
}

#[cfg(test)]
mod tests {
    use super::wilson;

    #[test]
    fn wilson_interval_of_the_cli_example() {
        let (lo, hi) = wilson(39.0 / 40.0, 40.0);
        assert!((lo - 0.871).abs() < 0.005 && (hi - 0.996).abs() < 0.005, "{lo} {hi}");
        assert_eq!(wilson(0.5, 0.0), (0.0, 1.0));
    }
}
