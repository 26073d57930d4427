//! `analyze` as a job: games between computer players, each kept whole
//! ([`metrics::Played`]) so that shards merge into exactly the games of a
//! run in one piece; their metrics as text, as JSON and as plots (SVG),
//! which the command line writes to files and the web board puts in its
//! analysis page.

use super::{Part, Task, Unit, WorkError, computer_players, run_items};
use crate::ai::Controller;
use crate::game::Game;
use crate::game::metrics::{self, Difference, Metrics, Played, Seating};
use plotters::prelude::*;
use std::fmt::Write;

/// The controllers of an analysis job: one a seat, and the judge.
pub fn seating_of(
    controllers: &[String],
    think: Option<f64>,
    decisive: Option<&str>,
) -> Result<(Vec<Controller>, Option<Controller>), WorkError> {
    let parsed = computer_players(controllers, think)?;
    let judge = decisive.map(|d| Controller::parse(d, None)).transpose().map_err(WorkError)?;
    if let Some(j) = &judge {
        metrics::check_judge(j, controllers.len()).map_err(WorkError)?;
    }
    Ok((parsed, judge))
}

pub(super) fn run_analyze(u: &Unit) -> Result<(Part, bool), WorkError> {
    let (job, shard) = (u.job, u.shard);
    let Task::Analyze { controllers, think, games, max_plies, decisive } = &job.task else {
        unreachable!("an analysis job")
    };
    let (parsed, judge) = seating_of(controllers, *think, decisive.as_deref())?;
    if parsed.len() != job.players.len() {
        return Err(WorkError(format!("{} has {} seats, not {}", job.game, job.players.len(), parsed.len())));
    }
    let seating = Seating { seats: &job.players, controllers: &parsed, judge: judge.as_ref() };
    let total = shard.len(*games) as usize;
    let pairs = job.option_pairs();
    let setup = |game: &mut Game| Ok(game.options_term(&pairs)?);
    let work = |game: &mut Game, options: &crate::engine::Tmpl, g: u64| {
        Ok(metrics::play_one(game, options, &seating, *max_plies, job.seed.wrapping_add(g), g)?)
    };
    let done = run_items(u, (total, &|k| shard.item(k as u64)), &setup, &work)?;
    let interrupted = done.len() < total;
    Ok((Part::Analyze { games: done }, interrupted))
}

/// The metrics of an analysis job's games.
pub fn metrics_of(task: &Task, players: &[String], games: &[Played]) -> Result<Metrics, WorkError> {
    let Task::Analyze { controllers, think, max_plies, decisive, .. } = task else {
        return Err(WorkError("not an analysis".into()));
    };
    let (parsed, judge) = seating_of(controllers, *think, decisive.as_deref())?;
    let seating = Seating { seats: players, controllers: &parsed, judge: judge.as_ref() };
    Ok(metrics::metrics(games, &seating, *max_plies))
}

fn pct(x: f64) -> String {
    format!("{:5.1}%", 100.0 * x)
}

/// The metrics as the command prints them, under `label`.
pub fn text(label: &str, m: &Metrics) -> String {
    let who: Vec<String> = m.seats.iter().map(|s| s.controller.clone()).collect();
    let mut out = format!("{label}: {} games, {}, cut off at {} plies\n", m.games, who.join(" against "), m.max_plies);
    let rate = |name: &str, r: &metrics::Rate| {
        format!("  {name:<14}{}  ({:.1}–{:.1})\n", pct(r.rate), 100.0 * r.low, 100.0 * r.high)
    };
    for s in &m.seats {
        out.push_str(&rate(&format!("{} wins", s.seat), &s.wins));
    }
    out.push_str(&rate("draws", &m.draws));
    let _ = writeln!(out, "  first seat's advantage: {:+.1} points", 100.0 * m.first_seat_advantage);
    out.push_str(&rate("completed", &m.completed));
    let p = &m.plies;
    let _ = writeln!(out, "  plies         mean {:.1}, sd {:.1}, from {} to {}", p.mean, p.sd, p.min, p.max);
    let b = &m.branching;
    let along: Vec<String> = (m.branching_by_ply.iter())
        .step_by((m.branching_by_ply.len() / 6).max(1))
        .map(|(k, v, _)| format!("ply {k}: {v:.1}"))
        .collect();
    let _ = writeln!(out, "  branching     mean {:.1}, max {} ({})", b.mean, m.branching_max, along.join(", "));
    if let Some(l) = &m.lead_changes {
        let _ = writeln!(out, "  lead changes  mean {:.1} a game, sd {:.1} (the seat ahead by value/3)", l.mean, l.sd);
    }
    if let Some(w) = &m.winner_behind {
        let _ = writeln!(
            out,
            "  drama         the winner was behind by value/3 in {} of a game's positions (sd {:.1} points)",
            pct(w.mean).trim(),
            100.0 * w.sd
        );
    }
    if let Some(c) = &m.coverage {
        let _ = writeln!(
            out,
            "  coverage      {} of the board's sites were stood on in a game (from {} to {})",
            pct(c.mean).trim(),
            pct(c.min).trim(),
            pct(c.max).trim()
        );
    }
    if let Some(p) = &m.pieces {
        let _ = writeln!(
            out,
            "  pieces        {:.1} on the board at the start, {:.1} at the end ({:+.1} a game, sd {:.1})",
            p.start.mean, p.end.mean, p.change.mean, p.change.sd
        );
    }
    if let Some(d) = &m.decisive {
        let _ = writeln!(
            out,
            "  decisive      {:.2} moves a game (sd {:.2}) swung {}'s expected result by half or more; in {} of games",
            d.per_game.mean,
            d.per_game.sd,
            d.judge,
            pct(d.games_with.rate).trim()
        );
    }
    out
}

/// Two variants' metrics side by side, as the command prints them.
pub fn compared(a: &str, b: &str, diffs: &[Difference]) -> String {
    let mut out = format!("{a} against {b}:\n");
    for d in diffs {
        let rates = ["draws", "completed", "winner behind", "board coverage"];
        let (x, y, dd) = if d.metric.ends_with("wins") || rates.contains(&d.metric.as_str()) {
            (pct(d.a), pct(d.b), format!("{:+.1} points", 100.0 * d.difference))
        } else {
            (format!("{:6.1}", d.a), format!("{:6.1}", d.b), format!("{:+.1}", d.difference))
        };
        let verdict = if d.beyond_noise { "beyond noise" } else { "within noise" };
        let _ = writeln!(out, "  {:<18}{x} → {y}  {dd:>13}  {verdict} (z = {:.1})", d.metric, d.z);
    }
    out
}

/// One variant to plot: its label and metrics.
pub struct Variant {
    pub label: String,
    pub metrics: Metrics,
}

const COLOURS: [RGBColor; 2] = [RGBColor(31, 119, 180), RGBColor(214, 39, 40)];

type PlotResult<T> = Result<T, Box<dyn std::error::Error>>;

/// A white page for one plot, and a chart on it with its title.
fn page<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: String,
    x_labels: u32,
) -> PlotResult<ChartBuilder<'a, 'b, SVGBackend<'b>>> {
    root.fill(&WHITE)?;
    let mut b = ChartBuilder::on(root);
    b.caption(title, ("sans-serif", 20)).margin(10).x_label_area_size(x_labels).y_label_area_size(50);
    Ok(b)
}

/// The plots of the variants, each a name (`lengths`, `branching`,
/// `balance`) and its SVG text.
pub fn plots(name: &str, vs: &[Variant]) -> Result<Vec<(&'static str, String)>, String> {
    let draw = |f: fn(SVGBackend, &str, &[Variant]) -> PlotResult<()>| -> Result<String, String> {
        let mut svg = String::new();
        f(SVGBackend::with_string(&mut svg, (720, 420)), name, vs).map_err(|e| format!("plotting: {e}"))?;
        Ok(svg)
    };
    Ok(vec![("lengths", draw(lengths)?), ("branching", draw(branching)?), ("balance", draw(balance)?)])
}

/// Bins of one width over every variant's lengths, so that the bars of
/// two variants stand side by side in the same bins: `(from, to)` each,
/// and for each variant the games in each bin.
fn shared_bins(vs: &[Variant]) -> (Vec<(u32, u32)>, Vec<Vec<u32>>) {
    let lengths: Vec<&Vec<u32>> = vs.iter().map(|v| &v.metrics.lengths).collect();
    let all: Vec<u32> = lengths.iter().flat_map(|l| l.iter()).copied().collect();
    let bins: Vec<(u32, u32)> = metrics::histogram(&all).into_iter().map(|(from, to, _)| (from, to)).collect();
    let counts = (lengths.iter())
        .map(|ls| bins.iter().map(|&(from, to)| ls.iter().filter(|&&l| l >= from && l <= to).count() as u32).collect())
        .collect();
    (bins, counts)
}

fn lengths(backend: SVGBackend, name: &str, vs: &[Variant]) -> PlotResult<()> {
    let root = backend.into_drawing_area();
    let (bins, counts) = shared_bins(vs);
    let lo = bins.first().map_or(0, |b| b.0);
    let hi = bins.last().map_or(1, |b| b.1 + 1);
    let top = counts.iter().flatten().copied().max().unwrap_or(1);
    let mut chart = page(&root, format!("{name}: how long games last"), 40)?
        .build_cartesian_2d(lo..hi, 0u32..top + top / 10 + 1)?;
    chart.configure_mesh().x_desc("plies").y_desc("games").draw()?;
    let n = vs.len() as u32;
    for (i, v) in vs.iter().enumerate() {
        let c = COLOURS[i % 2];
        chart
            .draw_series(bins.iter().zip(&counts[i]).map(|(&(from, to), &k)| {
                // Side by side within a bin when there are two variants.
                let w = (to + 1 - from).max(n);
                let x0 = from + w * i as u32 / n;
                let x1 = from + w * (i as u32 + 1) / n;
                Rectangle::new([(x0, 0), (x1.max(x0 + 1), k)], c.mix(0.7).filled())
            }))?
            .label(v.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}

fn branching(backend: SVGBackend, name: &str, vs: &[Variant]) -> PlotResult<()> {
    let root = backend.into_drawing_area();
    let last = vs.iter().flat_map(|v| v.metrics.branching_by_ply.last().map(|p| p.0)).max().unwrap_or(1).max(1);
    let top = vs.iter().flat_map(|v| v.metrics.branching_by_ply.iter().map(|p| p.1)).fold(1.0, f64::max);
    let mut chart = page(&root, format!("{name}: legal moves over a game"), 40)?
        .build_cartesian_2d(0u32..last + 1, 0.0..top * 1.1)?;
    chart.configure_mesh().x_desc("ply").y_desc("mean legal moves").draw()?;
    for (i, v) in vs.iter().enumerate() {
        let c = COLOURS[i % 2];
        chart
            .draw_series(LineSeries::new(
                v.metrics.branching_by_ply.iter().map(|&(k, b, _)| (k, b)),
                c.stroke_width(2),
            ))?
            .label(v.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], c.stroke_width(2)));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}

fn balance(backend: SVGBackend, name: &str, vs: &[Variant]) -> PlotResult<()> {
    let root = backend.into_drawing_area();
    // Each seat, then draws: a bar each variant, with its 95% interval
    // and its rate written above.
    let mut rows: Vec<String> = vs[0].metrics.seats.iter().map(|s| s.seat.clone()).collect();
    rows.push("draws".into());
    let n = vs.len();
    let group = (n + 1) as f64;
    let mut chart = page(&root, format!("{name}: who wins (95% intervals)"), 10)?
        .build_cartesian_2d(0.0..rows.len() as f64 * group, 0.0..1.1)?;
    chart.configure_mesh().disable_x_mesh().x_labels(0).y_desc("rate").draw()?;
    for (i, v) in vs.iter().enumerate() {
        let c = COLOURS[i % 2];
        let mut rates: Vec<metrics::Rate> = v.metrics.seats.iter().map(|s| s.wins).collect();
        rates.push(v.metrics.draws);
        let x = |r: usize| r as f64 * group + i as f64 + 0.5;
        chart
            .draw_series(
                rates
                    .iter()
                    .enumerate()
                    .map(|(r, rate)| Rectangle::new([(x(r), 0.0), (x(r) + 0.9, rate.rate)], c.mix(0.7).filled())),
            )?
            .label(v.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
        chart.draw_series(rates.iter().enumerate().map(|(r, rate)| {
            PathElement::new(vec![(x(r) + 0.45, rate.low), (x(r) + 0.45, rate.high)], BLACK.stroke_width(2))
        }))?;
        chart.draw_series(rates.iter().enumerate().map(|(r, rate)| {
            Text::new(format!("{} {:.1}%", rows[r], 100.0 * rate.rate), (x(r), rate.high + 0.05), ("sans-serif", 13))
        }))?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::metrics::Seating;

    fn variant(label: &str, lengths: &[u32]) -> Variant {
        let players = ["a".to_string(), "b".to_string()];
        let controllers = vec![Controller::parse("random", None).unwrap(); 2];
        let played: Vec<Played> = (lengths.iter().enumerate())
            .map(|(g, &plies)| Played {
                game: g as u64,
                outcome: Some(crate::game::Outcome::Draw),
                plies,
                branching: vec![2; plies as usize],
                lead_changes: None,
                winner_behind: None,
                coverage: None,
                pieces: None,
                decisive: None,
            })
            .collect();
        let seating = Seating { seats: &players, controllers: &controllers, judge: None };
        Variant { label: label.into(), metrics: metrics::metrics(&played, &seating, 400) }
    }

    #[test]
    fn two_variants_share_their_length_bins() {
        // Short games against long ones: one set of bins of one width
        // covers both, and each variant's games are all in them.
        let vs = [variant("short", &[10, 11, 12, 15, 19]), variant("long", &[40, 55, 70, 90])];
        let (bins, counts) = shared_bins(&vs);
        assert_eq!(bins.first().unwrap().0, 10);
        assert!(bins.last().unwrap().1 >= 90);
        let widths: Vec<u32> = bins.iter().map(|(from, to)| to + 1 - from).collect();
        assert!(widths.windows(2).all(|w| w[0] == w[1]), "{bins:?}");
        assert_eq!(counts[0].iter().sum::<u32>(), 5);
        assert_eq!(counts[1].iter().sum::<u32>(), 4);
        assert_eq!(counts.len(), 2);
        assert!(counts.iter().all(|c| c.len() == bins.len()));
    }
}
