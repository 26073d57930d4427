//! What a game is like, from batches of games between computer players:
//! balance (each seat's win rate), draws, completion, duration, branching
//! factor over the course of a game, and lead changes (from `value/3`),
//! each rate with a 95% interval; and two variants compared, each
//! difference marked where it is beyond noise.

use super::{Game, GameError, Outcome, State};
use crate::ai::{self, Controller, Kind};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One game played.
#[derive(Clone, Debug)]
pub struct Played {
    /// `None`: cut off at the ply limit.
    pub outcome: Option<Outcome>,
    pub plies: u32,
    /// Legal moves at each ply where a seat (not chance) moved.
    pub branching: Vec<u32>,
    /// How often the seat ahead by `value/3` changed (`None` without it).
    pub lead_changes: Option<u32>,
}

/// Plays `games` games of the game from its start under `options`, the
/// seats played by `controllers` (one each, in seat order), each cut off
/// after `max_plies`. Game `g` uses seed `seed + g`. `progress` is told
/// each game done.
#[allow(clippy::too_many_arguments)]
pub fn play(
    game: &mut Game,
    options: &crate::engine::Tmpl,
    controllers: &[Controller],
    games: u32,
    max_plies: u32,
    seed: u64,
    progress: &mut dyn FnMut(u32),
) -> Result<Vec<Played>, GameError> {
    let players = game.players(options)?;
    let valued = game.has("value", 3);
    let mut out = Vec::with_capacity(games as usize);
    for g in 0..games {
        let game_seed = seed.wrapping_add(u64::from(g));
        let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
        let mut s: State = game.initial_state(options, game_seed)?;
        let mut played = Played { outcome: None, plies: 0, branching: Vec::new(), lead_changes: valued.then_some(0) };
        let mut leader: Option<usize> = None;
        while played.plies < max_plies {
            if let Some(o) = game.outcome(&s)? {
                played.outcome = Some(o);
                break;
            }
            if valued {
                let values: Vec<Option<f64>> = players.iter().map(|p| game.value(&s, p)).collect::<Result<_, _>>()?;
                let values: Vec<f64> = values.into_iter().flatten().collect();
                let best = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let ahead: Vec<usize> = (0..values.len()).filter(|&i| values[i] == best).collect();
                // A tie leads nobody; a new sole leader is a change.
                if values.len() == players.len()
                    && let [one] = ahead[..]
                {
                    if leader.is_some_and(|l| l != one) {
                        played.lead_changes = played.lead_changes.map(|n| n + 1);
                    }
                    leader = Some(one);
                }
            }
            let succ = game.successors(&s)?;
            if succ.is_empty() {
                return Err(GameError::Rules(ai::NO_MOVE.into()));
            }
            let k = if game.chance(&s)? {
                ai::pick(&mut rng, succ.len())?
            } else {
                played.branching.push(succ.len() as u32);
                let seat = ai::seat(&players, &game.to_move(&s)?)?;
                let ctl = &controllers[seat];
                match ctl.kind {
                    Kind::Random => ai::pick(&mut rng, succ.len())?,
                    _ => {
                        let choice = ai::choose(game, &players, &s, ctl, rand::Rng::r#gen(&mut rng), 1)?;
                        succ.iter()
                            .position(|(m, _)| *m == choice.mv)
                            .ok_or_else(|| GameError::Rules(format!("{ctl} chose a move that is not legal")))?
                    }
                }
            };
            s = succ[k].1.clone();
            played.plies += 1;
        }
        if played.outcome.is_none() {
            played.outcome = game.outcome(&s)?;
        }
        out.push(played);
        progress(g + 1);
    }
    Ok(out)
}

/// A rate with its 95% interval (Wilson's).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Rate {
    pub count: u32,
    pub of: u32,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    pub fn new(count: u32, of: u32) -> Rate {
        let n = f64::from(of.max(1));
        let p = f64::from(count) / n;
        let z = 1.96f64;
        let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
        Rate { count, of, rate: p, low: (centre - half).max(0.0), high: (centre + half).min(1.0) }
    }
}

/// A quantity's spread over the games.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Spread {
    pub mean: f64,
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Spread {
    pub fn of(xs: &[f64]) -> Spread {
        let n = xs.len();
        if n == 0 {
            return Spread { mean: 0.0, sd: 0.0, min: 0.0, max: 0.0, n };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        Spread { mean, sd: var.sqrt(), min, max, n }
    }

    /// The standard error of the mean.
    pub fn se(&self) -> f64 {
        if self.n > 1 { self.sd / (self.n as f64).sqrt() } else { 0.0 }
    }
}

/// A seat's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Seat {
    pub seat: String,
    pub controller: String,
    pub wins: Rate,
}

/// The metrics of a batch of games.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Metrics {
    pub games: u32,
    pub max_plies: u32,
    /// Each seat's win rate.
    pub seats: Vec<Seat>,
    /// The first seat's win rate less the mean of all seats' (0: no
    /// advantage).
    pub first_seat_advantage: f64,
    pub draws: Rate,
    /// Games that ended within the ply limit.
    pub completed: Rate,
    /// Plies a game lasted (of the games that ended).
    pub plies: Spread,
    /// Lengths of the games that ended, in bins: `(from, to, games)`.
    pub histogram: Vec<(u32, u32, u32)>,
    /// Legal moves a position: each game's mean (the games are the
    /// samples), and the most any position had.
    pub branching: Spread,
    pub branching_max: u32,
    /// The mean branching factor at each ply, with the positions behind
    /// it (the plies that at least a tenth of the games reached).
    pub branching_by_ply: Vec<(u32, f64, u32)>,
    /// Changes of the seat ahead by `value/3`, a game (if it defines it).
    pub lead_changes: Option<Spread>,
}

/// The metrics of `played`, whose seats were `seats` and their
/// controllers `controllers`.
pub fn metrics(played: &[Played], seats: &[String], controllers: &[Controller], max_plies: u32) -> Metrics {
    let n = played.len() as u32;
    let ended: Vec<&Played> = played.iter().filter(|p| p.outcome.is_some()).collect();
    let wins =
        |seat: &str| played.iter().filter(|p| matches!(&p.outcome, Some(Outcome::Winner(w)) if w == seat)).count();
    let seat_rows: Vec<Seat> = (seats.iter().zip(controllers))
        .map(|(s, c)| Seat { seat: s.clone(), controller: c.to_string(), wins: Rate::new(wins(s) as u32, n) })
        .collect();
    let mean_rate = seat_rows.iter().map(|s| s.wins.rate).sum::<f64>() / seat_rows.len().max(1) as f64;
    let draws = played.iter().filter(|p| p.outcome == Some(Outcome::Draw)).count() as u32;
    let lengths: Vec<f64> = ended.iter().map(|p| f64::from(p.plies)).collect();
    let game_branching: Vec<f64> = (played.iter())
        .filter(|p| !p.branching.is_empty())
        .map(|p| p.branching.iter().map(|&b| f64::from(b)).sum::<f64>() / p.branching.len() as f64)
        .collect();
    let longest = played.iter().map(|p| p.branching.len()).max().unwrap_or(0);
    let mut by_ply = Vec::new();
    for k in 0..longest {
        let at: Vec<u32> = played.iter().filter_map(|p| p.branching.get(k).copied()).collect();
        if at.len() * 10 < played.len() {
            break;
        }
        by_ply.push((k as u32, at.iter().map(|&b| f64::from(b)).sum::<f64>() / at.len() as f64, at.len() as u32));
    }
    let leads: Vec<f64> = played.iter().filter_map(|p| p.lead_changes.map(f64::from)).collect();
    Metrics {
        games: n,
        max_plies,
        first_seat_advantage: seat_rows.first().map_or(0.0, |s| s.wins.rate - mean_rate),
        seats: seat_rows,
        draws: Rate::new(draws, n),
        completed: Rate::new(ended.len() as u32, n),
        histogram: histogram(&ended.iter().map(|p| p.plies).collect::<Vec<_>>()),
        plies: Spread::of(&lengths),
        branching: Spread::of(&game_branching),
        branching_max: played.iter().flat_map(|p| p.branching.iter().copied()).max().unwrap_or(0),
        branching_by_ply: by_ply,
        lead_changes: (leads.len() == played.len() && !leads.is_empty()).then(|| Spread::of(&leads)),
    }
}

/// Lengths in about twenty bins of a round width.
fn histogram(lengths: &[u32]) -> Vec<(u32, u32, u32)> {
    let (Some(&lo), Some(&hi)) = (lengths.iter().min(), lengths.iter().max()) else { return Vec::new() };
    let raw = ((hi - lo) / 20).max(1);
    let width = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000].into_iter().find(|&w| w >= raw).unwrap_or(raw);
    let start = lo / width * width;
    let bins = (hi - start) / width + 1;
    (0..bins)
        .map(|b| {
            let from = start + b * width;
            let to = from + width - 1;
            (from, to, lengths.iter().filter(|&&l| l >= from && l <= to).count() as u32)
        })
        .collect()
}

/// One metric of two variants, and whether they differ beyond noise (a
/// two-sided test at 5%: two proportions, or two means).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Difference {
    pub metric: String,
    pub a: f64,
    pub b: f64,
    /// `b - a`.
    pub difference: f64,
    /// The test statistic (z).
    pub z: f64,
    pub beyond_noise: bool,
}

fn rate_difference(metric: String, a: &Rate, b: &Rate) -> Difference {
    let pooled = f64::from(a.count + b.count) / f64::from((a.of + b.of).max(1));
    let se = (pooled * (1.0 - pooled) * (1.0 / f64::from(a.of.max(1)) + 1.0 / f64::from(b.of.max(1)))).sqrt();
    let z = if se > 0.0 { (b.rate - a.rate) / se } else { 0.0 };
    Difference { metric, a: a.rate, b: b.rate, difference: b.rate - a.rate, z, beyond_noise: z.abs() > 1.96 }
}

fn mean_difference(metric: String, a: &Spread, b: &Spread) -> Difference {
    let se = (a.se().powi(2) + b.se().powi(2)).sqrt();
    let z = if se > 0.0 { (b.mean - a.mean) / se } else { 0.0 };
    Difference { metric, a: a.mean, b: b.mean, difference: b.mean - a.mean, z, beyond_noise: z.abs() > 1.96 }
}

/// Each metric of `a` and `b` side by side (their seats must be the
/// same game's).
pub fn compare(a: &Metrics, b: &Metrics) -> Vec<Difference> {
    let mut out = Vec::new();
    for (sa, sb) in a.seats.iter().zip(&b.seats) {
        out.push(rate_difference(format!("{} wins", sa.seat), &sa.wins, &sb.wins));
    }
    out.push(rate_difference("draws".into(), &a.draws, &b.draws));
    out.push(rate_difference("completed".into(), &a.completed, &b.completed));
    out.push(mean_difference("plies".into(), &a.plies, &b.plies));
    out.push(mean_difference("branching factor".into(), &a.branching, &b.branching));
    if let (Some(la), Some(lb)) = (&a.lead_changes, &b.lead_changes) {
        out.push(mean_difference("lead changes".into(), la, lb));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_and_tests() {
        let r = Rate::new(50, 100);
        assert!((r.low - 0.404).abs() < 0.001 && (r.high - 0.596).abs() < 0.001, "{r:?}");
        let none = Rate::new(0, 20);
        assert_eq!(none.low, 0.0);
        assert!(none.high > 0.1 && none.high < 0.2);
        // 60 of 100 against 40 of 100: z = 2.83, beyond noise; 52 against
        // 48 is not.
        let d = rate_difference("x".into(), &Rate::new(40, 100), &Rate::new(60, 100));
        assert!((d.z - 2.828).abs() < 0.01 && d.beyond_noise, "{d:?}");
        assert!(!rate_difference("x".into(), &Rate::new(48, 100), &Rate::new(52, 100)).beyond_noise);
        assert_eq!(histogram(&[3, 4, 4, 9]).iter().map(|b| b.2).sum::<u32>(), 4);
        assert_eq!(histogram(&[10, 55])[0].0, 10);
    }
}
