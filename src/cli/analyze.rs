//! `tabula analyze GAME`: what a game is like, from batches of games
//! between computer players (see `game::metrics`): balance, draws,
//! completion, duration, branching factor, lead changes; `--compare` two
//! variants side by side; `--plots DIR` draws them as SVG.

use super::CliError;
use crate::ai::Controller;
use crate::game::metrics::{self, Difference, Metrics};
use crate::plan::open::{GameArgs, Session, open};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// A game in the games folder (e.g. `breakthrough`) or a path to a .rules file.
    pub game: String,
    /// A game option, `NAME=VALUE` (see `tabula rules GAME`); repeatable.
    #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// The folder of the games.
    #[arg(long = "games-dir", value_name = "DIR")]
    pub games_dir: Option<PathBuf>,
    /// Games to play.
    #[arg(long, default_value_t = 200)]
    pub games: u32,
    /// A game still going after this many plies is cut off (not completed).
    #[arg(long, default_value_t = 400)]
    pub max_plies: u32,
    /// Who plays a seat, `SEAT=CONTROLLER` (default: random); repeatable.
    #[arg(long = "seat", value_name = "SEAT=CONTROLLER")]
    pub seats: Vec<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Two variants side by side: each `--compare` is a set of options
    /// (`rows=6,cols=6`) added to the game's; give it twice.
    #[arg(long, value_name = "OPTIONS")]
    pub compare: Vec<String>,
    /// Draw the plots into this folder (SVG): the lengths of the games,
    /// the branching factor over a game, the seats' win rates.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// One JSON document.
    #[arg(long)]
    pub json: bool,
}

/// One variant: its label and metrics.
struct Variant {
    label: String,
    metrics: Metrics,
}

pub fn run(a: AnalyzeArgs) -> Result<i32, CliError> {
    if !a.compare.is_empty() && a.compare.len() != 2 {
        return Err(CliError(
            "--compare takes two variants: give it twice (e.g. --compare rows=6 --compare rows=8)".into(),
        ));
    }
    if a.games == 0 {
        return Err(CliError("--games must be at least 1".into()));
    }
    let variants: Vec<Vec<String>> = if a.compare.is_empty() {
        vec![Vec::new()]
    } else {
        a.compare
            .iter()
            .map(|c| c.split(',').map(|o| o.trim().to_string()).filter(|o| !o.is_empty()).collect())
            .collect()
    };
    let base = GameArgs { game: a.game.clone(), options: a.options.clone(), games: a.games_dir.clone() };
    let mut done = Vec::new();
    let mut name = String::new();
    for extra in &variants {
        let mut g = base.clone();
        g.options.extend(extra.iter().cloned());
        let mut s = open(&g)?;
        name = s.game.name.clone();
        let label = if extra.is_empty() { s.game.name.clone() } else { extra.join(",") };
        done.push(Variant { label, metrics: measure(&mut s, &a)? });
    }
    if let Some(dir) = &a.plots {
        std::fs::create_dir_all(dir).map_err(|e| CliError(format!("cannot make {}: {e}", dir.display())))?;
        let written = plot(dir, &name, &done).map_err(|e| CliError(format!("plotting: {e}")))?;
        if !a.json {
            for w in written {
                eprintln!("wrote {}", w.display());
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
        print!("{}", report(&v.label, &v.metrics));
    }
    if let Some(d) = diffs {
        print!("{}", compared(&done[0].label, &done[1].label, &d));
    }
    Ok(0)
}

fn measure(s: &mut Session, a: &AnalyzeArgs) -> Result<Metrics, CliError> {
    let mut controllers: Vec<Controller> =
        (0..s.players.len()).map(|_| Controller::parse("random", None)).collect::<Result<_, _>>().map_err(CliError)?;
    for given in &a.seats {
        let (seat, spec) =
            given.split_once('=').ok_or_else(|| CliError(format!("--seat takes SEAT=CONTROLLER, not `{given}`")))?;
        let i = s.players.iter().position(|p| *p == seat).ok_or_else(|| {
            CliError(format!("no seat `{seat}` in {}; the seats are {}", s.game.name, s.players.join(", ")))
        })?;
        controllers[i] = Controller::parse(spec, None).map_err(CliError)?;
        controllers[i].serves(&s.game).map_err(CliError)?;
        if controllers[i].is_human() {
            return Err(CliError("analyze plays computer players only".into()));
        }
    }
    let bar = indicatif::ProgressBar::new(u64::from(a.games));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} games {elapsed}")
            .unwrap_or(indicatif::ProgressStyle::default_bar()),
    );
    let played = metrics::play(&mut s.game, &s.options, &controllers, a.games, a.max_plies, a.seed, &mut |g| {
        bar.set_position(u64::from(g))
    });
    bar.finish_and_clear();
    Ok(metrics::metrics(&played?, &s.players, &controllers, a.max_plies))
}

fn pct(x: f64) -> String {
    format!("{:5.1}%", 100.0 * x)
}

fn report(label: &str, m: &Metrics) -> String {
    let who: Vec<String> = m.seats.iter().map(|s| s.controller.clone()).collect();
    let mut out = format!("{label}: {} games, {}, cut off at {} plies\n", m.games, who.join(" against "), m.max_plies);
    let rate = |name: &str, r: &metrics::Rate| {
        format!("  {name:<14}{}  ({:.1}–{:.1})\n", pct(r.rate), 100.0 * r.low, 100.0 * r.high)
    };
    for s in &m.seats {
        out.push_str(&rate(&format!("{} wins", s.seat), &s.wins));
    }
    out.push_str(&rate("draws", &m.draws));
    out.push_str(&format!("  first seat's advantage: {:+.1} points\n", 100.0 * m.first_seat_advantage));
    out.push_str(&rate("completed", &m.completed));
    let p = &m.plies;
    out.push_str(&format!("  plies         mean {:.1}, sd {:.1}, from {} to {}\n", p.mean, p.sd, p.min, p.max));
    let b = &m.branching;
    let along: Vec<String> = (m.branching_by_ply.iter())
        .step_by((m.branching_by_ply.len() / 6).max(1))
        .map(|(k, v, _)| format!("ply {k}: {v:.1}"))
        .collect();
    out.push_str(&format!("  branching     mean {:.1}, max {} ({})\n", b.mean, m.branching_max, along.join(", ")));
    if let Some(l) = &m.lead_changes {
        out.push_str(&format!(
            "  lead changes  mean {:.1} a game, sd {:.1} (the seat ahead by value/3)\n",
            l.mean, l.sd
        ));
    }
    out
}

fn compared(a: &str, b: &str, diffs: &[Difference]) -> String {
    let mut out = format!("{a} against {b}:\n");
    for d in diffs {
        let (x, y, dd) = if d.metric.ends_with("wins") || d.metric == "draws" || d.metric == "completed" {
            (pct(d.a), pct(d.b), format!("{:+.1} points", 100.0 * d.difference))
        } else {
            (format!("{:6.1}", d.a), format!("{:6.1}", d.b), format!("{:+.1}", d.difference))
        };
        let verdict = if d.beyond_noise { "beyond noise" } else { "within noise" };
        out.push_str(&format!("  {:<18}{x} → {y}  {dd:>13}  {verdict} (z = {:.1})\n", d.metric, d.z));
    }
    out
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

/// The three plots of the variants; the files written.
fn plot(dir: &Path, name: &str, vs: &[Variant]) -> PlotResult<Vec<PathBuf>> {
    let files = [
        dir.join(format!("{name}-lengths.svg")),
        dir.join(format!("{name}-branching.svg")),
        dir.join(format!("{name}-balance.svg")),
    ];
    lengths(&files[0], name, vs)?;
    branching(&files[1], name, vs)?;
    balance(&files[2], name, vs)?;
    Ok(files.to_vec())
}

fn lengths(path: &Path, name: &str, vs: &[Variant]) -> PlotResult<()> {
    let root = SVGBackend::new(path, (720, 420)).into_drawing_area();
    let bins: Vec<&(u32, u32, u32)> = vs.iter().flat_map(|v| v.metrics.histogram.iter()).collect();
    let lo = bins.iter().map(|b| b.0).min().unwrap_or(0);
    let hi = bins.iter().map(|b| b.1 + 1).max().unwrap_or(1);
    let top = bins.iter().map(|b| b.2).max().unwrap_or(1);
    let mut chart = page(&root, format!("{name}: how long games last"), 40)?
        .build_cartesian_2d(lo..hi, 0u32..top + top / 10 + 1)?;
    chart.configure_mesh().x_desc("plies").y_desc("games").draw()?;
    for (i, v) in vs.iter().enumerate() {
        let c = COLOURS[i % 2];
        let n = vs.len() as u32;
        chart
            .draw_series(v.metrics.histogram.iter().map(|&(from, to, k)| {
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

fn branching(path: &Path, name: &str, vs: &[Variant]) -> PlotResult<()> {
    let root = SVGBackend::new(path, (720, 420)).into_drawing_area();
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

fn balance(path: &Path, name: &str, vs: &[Variant]) -> PlotResult<()> {
    let root = SVGBackend::new(path, (720, 420)).into_drawing_area();
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
