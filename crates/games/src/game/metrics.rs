//! What a game is like, from batches of games between computer players:
//! balance (each seat's win rate), draws, completion, duration, branching
//! factor over the course of a game, lead changes and how often the
//! eventual winner was behind (from `value/3`), board coverage and piece
//! counts (from `view/3`), decisive moves (under a searching player's
//! estimates), each rate with a 95% interval; and two variants compared,
//! each difference marked where it is beyond noise.

use super::{Game, GameError, Outcome, State, View};
use crate::ai::{self, Controller, Kind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One game played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Played {
    /// Its number in the batch: it was played with the batch's seed plus
    /// this.
    pub game: u64,
    /// `None`: cut off at the ply limit.
    pub outcome: Option<Outcome>,
    pub plies: u32,
    /// Legal moves at each ply where a seat (not chance) moved.
    pub branching: Vec<u32>,
    /// How often the seat ahead by `value/3` changed (`None` without it).
    pub lead_changes: Option<u32>,
    /// In a game won, with `value/3`: the positions where the eventual
    /// winner was behind another seat, and the positions rated.
    pub winner_behind: Option<(u32, u32)>,
    /// With a board in `view/3`: the sites a piece stood on at some time
    /// in the game, and the sites the board had.
    pub coverage: Option<(u32, u32)>,
    /// With a board in `view/3`: the pieces on it at the start and at the
    /// end.
    pub pieces: Option<(u32, u32)>,
    /// With a judge: the moves after which the judge's expected result
    /// for the mover differed from its estimate before the move by half
    /// the range or more (a win thrown away, a loss turned round).
    pub decisive: Option<u32>,
}

/// Who plays a batch: the seats in turn order, the controller of each,
/// and the searching player whose estimates find the decisive moves, if
/// any (two-seat games only).
pub struct Seating<'a> {
    pub seats: &'a [String],
    pub controllers: &'a [Controller],
    pub judge: Option<&'a Controller>,
}

/// How a judge must be: a search that estimates (`mcts`, `guided`), in a
/// game of two seats.
pub fn check_judge(judge: &Controller, seats: usize) -> Result<(), String> {
    if !matches!(judge.kind, Kind::Mcts(_) | Kind::Guided(_) | Kind::Uct(_)) {
        return Err(format!(
            "decisive moves are found by a search that estimates a position's result: `mcts[:PLAYOUTS]`, \
             `guided[:ITERATIONS]` or `uct[:PLAYOUTS]`, not `{judge}`"
        ));
    }
    if seats != 2 {
        return Err(format!("decisive moves are measured in games of two seats; this one has {seats}"));
    }
    Ok(())
}

/// A board as `view/3` shows it: its sites, and the sites with something
/// on them with the number of pieces there.
type Board = (Vec<String>, Vec<(String, u32)>);

/// What `view/3` shows of the board of `s`, if it shows one.
fn board(game: &mut Game, s: &State) -> Result<Option<Board>, GameError> {
    let Some(View { sites, pieces, stacks, .. }) = game.view(s, "spectator")? else { return Ok(None) };
    if sites.is_empty() {
        return Ok(None);
    }
    let ids: HashSet<&str> = sites.iter().map(|s| s.id.as_str()).collect();
    let mut on: Vec<(String, u32)> = Vec::new();
    let stacked =
        stacks.iter().filter(|(_, n)| *n > 0).map(|(at, n)| (at.clone(), u32::try_from(*n).unwrap_or(u32::MAX)));
    let stood = pieces.iter().map(|p| (p.at.clone(), 1)).chain(stacked);
    for (at, n) in stood.filter(|(at, _)| ids.contains(at.as_str())) {
        match on.iter_mut().find(|(a, _)| *a == at) {
            // A stack's count is the pieces there; its top is drawn too.
            Some(x) => x.1 = x.1.max(n),
            None => on.push((at, n)),
        }
    }
    Ok(Some((sites.into_iter().map(|s| s.id).collect(), on)))
}

/// Plays one game from the start under `options`, dealt and played with
/// `game_seed` (its random moves, chance's and the controllers' seeds;
/// the judge has a generator of its own, so judging changes no move).
pub fn play_one(
    game: &mut Game,
    options: &crate::engine::Tmpl,
    seating: &Seating,
    max_plies: u32,
    game_seed: u64,
    index: u64,
) -> Result<Played, GameError> {
    let players = seating.seats;
    let valued = game.has("value", 3);
    let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
    let mut judge_rng = ChaCha8Rng::seed_from_u64(game_seed ^ 0x6a75_6467_6500_0000);
    let mut s: State = game.initial_state(options, game_seed)?;
    let mut played = Played {
        game: index,
        outcome: None,
        plies: 0,
        branching: Vec::new(),
        lead_changes: valued.then_some(0),
        winner_behind: None,
        coverage: None,
        pieces: None,
        decisive: None,
    };
    let mut leader: Option<usize> = None;
    // Every position's values by seat (value/3), the judge's estimate for
    // the mover at each ply it judged, the sites covered.
    let mut values: Vec<Vec<f64>> = Vec::new();
    let mut estimates: Vec<Option<(usize, f64)>> = Vec::new();
    // The sites stood on, and every site the board had (a board may grow
    // as a game goes, as Domin-Up's table does).
    let mut covered: Option<(HashSet<String>, HashSet<String>)> = None;
    let mut first_pieces = None;
    let mut last_pieces = 0;
    let mut see = |game: &mut Game, s: &State| -> Result<(), GameError> {
        if let Some((sites, on)) = board(game, s)? {
            let (seen, all) = covered.get_or_insert_with(Default::default);
            all.extend(sites);
            seen.extend(on.iter().map(|(at, _)| at.clone()));
            last_pieces = on.iter().map(|(_, n)| n).sum();
            first_pieces.get_or_insert(last_pieces);
        }
        Ok(())
    };
    loop {
        see(game, &s)?;
        if let Some(o) = game.outcome(&s)? {
            played.outcome = Some(o);
            break;
        }
        if played.plies >= max_plies {
            break;
        }
        if valued {
            let vs: Vec<Option<f64>> = players.iter().map(|p| game.value(&s, p)).collect::<Result<_, _>>()?;
            let vs: Vec<f64> = vs.into_iter().flatten().collect();
            let best = vs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let ahead: Vec<usize> = (0..vs.len()).filter(|&i| vs[i] == best).collect();
            // A tie leads nobody; a new sole leader is a change.
            if vs.len() == players.len()
                && let [one] = ahead[..]
            {
                if leader.is_some_and(|l| l != one) {
                    played.lead_changes = played.lead_changes.map(|n| n + 1);
                }
                leader = Some(one);
            }
            if vs.len() == players.len() {
                values.push(vs);
            }
        }
        let succ = game.successors(&s)?;
        if succ.is_empty() {
            return Err(GameError::Rules(ai::NO_MOVE.into()));
        }
        let k = if game.chance(&s)? {
            estimates.push(None);
            ai::pick(&mut rng, succ.len())?
        } else {
            played.branching.push(succ.len() as u32);
            let seat = ai::seat(players, &game.to_move(&s)?)?;
            let estimate = match seating.judge {
                Some(j) => ai::choose(game, players, &s, j, judge_rng.r#gen(), 1)?.value.map(|v| (seat, v)),
                None => None,
            };
            estimates.push(estimate);
            let ctl = &seating.controllers[seat];
            match ctl.kind {
                Kind::Random => ai::pick(&mut rng, succ.len())?,
                _ => {
                    let choice = ai::choose(game, players, &s, ctl, rng.r#gen(), 1)?;
                    succ.iter()
                        .position(|(m, _)| *m == choice.mv)
                        .ok_or_else(|| GameError::Rules(format!("{ctl} chose a move that is not legal")))?
                }
            }
        };
        s = succ[k].1.clone();
        played.plies += 1;
    }
    if let Some((seen, sites)) = covered {
        played.coverage = Some((seen.len() as u32, sites.len() as u32));
        played.pieces = first_pieces.map(|f| (f, last_pieces));
    }
    if let Some(Outcome::Winner(w)) = &played.outcome
        && let Some(wi) = players.iter().position(|p| p == w)
        && valued
    {
        let behind = values.iter().filter(|vs| vs.iter().enumerate().any(|(i, &v)| i != wi && v > vs[wi])).count();
        played.winner_behind = Some((behind as u32, values.len() as u32));
    }
    if seating.judge.is_some() {
        played.decisive = Some(decisive(&estimates, played.outcome.as_ref(), players));
    }
    Ok(played)
}

/// The moves whose mover's expected result (by the judge, a reward in [0,
/// 1]) moved by half the range or more: before the move, the judge's
/// estimate at the mover's turn; after it, at the next turn (from the
/// other seat's side, one less it) or, at the end, the result itself.
/// `estimates` has an entry a ply (`None`: chance's, or not judged).
fn decisive(estimates: &[Option<(usize, f64)>], outcome: Option<&Outcome>, players: &[String]) -> u32 {
    let result = |seat: usize| match outcome {
        Some(Outcome::Winner(w)) => Some(if *w == players[seat] { 1.0 } else { 0.0 }),
        Some(Outcome::Draw) => Some(0.5),
        None => None,
    };
    let mut n = 0;
    for (t, e) in estimates.iter().enumerate() {
        let Some((seat, before)) = *e else { continue };
        let after = match estimates.get(t + 1) {
            None => result(seat),
            Some(Some((next, v))) => Some(if *next == seat { *v } else { 1.0 - v }),
            Some(None) => None,
        };
        if after.is_some_and(|a| (a - before).abs() >= 0.5) {
            n += 1;
        }
    }
    n
}

/// A rate with its 95% interval (Wilson's).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Rate {
    pub count: u32,
    pub of: u32,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    pub fn new(count: u32, of: u32) -> Rate {
        let p = f64::from(count) / f64::from(of.max(1));
        let (low, high) = wilson(p, f64::from(of));
        Rate { count, of, rate: p, low, high }
    }
}

/// The 95% Wilson score interval of a proportion `p` observed in `n`
/// trials (a draw may count half); nothing observed is `(0, 1)`.
pub fn wilson(p: f64, n: f64) -> (f64, f64) {
    if n == 0.0 {
        return (0.0, 1.0);
    }
    let z = 1.96_f64;
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// A quantity's spread over the games.
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
pub struct Seat {
    pub seat: String,
    pub controller: String,
    pub wins: Rate,
}

/// The metrics of a batch of games.
#[derive(Clone, Debug, Serialize)]
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
    /// Those lengths, one a game (not written out: the histogram is).
    #[serde(skip)]
    pub lengths: Vec<u32>,
    /// Legal moves a position: each game's mean (the games are the
    /// samples), and the most any position had.
    pub branching: Spread,
    pub branching_max: u32,
    /// The mean branching factor at each ply, with the positions behind
    /// it (the plies that at least a tenth of the games reached).
    pub branching_by_ply: Vec<(u32, f64, u32)>,
    /// Changes of the seat ahead by `value/3`, a game (if it defines it).
    pub lead_changes: Option<Spread>,
    /// Drama: in each game won, the share of its positions where the
    /// eventual winner was behind by `value/3`.
    pub winner_behind: Option<Spread>,
    /// The share of the board's sites a piece stood on at some time in a
    /// game (if `view/3` shows a board).
    pub coverage: Option<Spread>,
    /// Pieces on the board at the start and at the end of a game, and the
    /// change (if `view/3` shows a board).
    pub pieces: Option<Pieces>,
    /// Decisive moves, if a judge looked for them.
    pub decisive: Option<Decisive>,
}

/// Pieces on the board.
#[derive(Clone, Debug, Serialize)]
pub struct Pieces {
    pub start: Spread,
    pub end: Spread,
    /// End less start, a game.
    pub change: Spread,
}

/// Moves that swung the judge's expected result for the mover by half the
/// range or more.
#[derive(Clone, Debug, Serialize)]
pub struct Decisive {
    /// The judge, as written (`mcts:200`).
    pub judge: String,
    /// Such moves, a game.
    pub per_game: Spread,
    /// The games with at least one.
    pub games_with: Rate,
}

/// The metrics of `played`, played with `seating` and cut off at
/// `max_plies`.
pub fn metrics(played: &[Played], seating: &Seating, max_plies: u32) -> Metrics {
    let (seats, controllers) = (seating.seats, seating.controllers);
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
        lengths: ended.iter().map(|p| p.plies).collect(),
        plies: Spread::of(&lengths),
        branching: Spread::of(&game_branching),
        branching_max: played.iter().flat_map(|p| p.branching.iter().copied()).max().unwrap_or(0),
        branching_by_ply: by_ply,
        lead_changes: (leads.len() == played.len() && !leads.is_empty()).then(|| Spread::of(&leads)),
        winner_behind: share(played.iter().map(|p| p.winner_behind)),
        coverage: share(played.iter().map(|p| p.coverage)),
        pieces: {
            let counts: Vec<(f64, f64)> =
                played.iter().filter_map(|p| p.pieces).map(|(a, b)| (f64::from(a), f64::from(b))).collect();
            (!counts.is_empty()).then(|| Pieces {
                start: Spread::of(&counts.iter().map(|c| c.0).collect::<Vec<_>>()),
                end: Spread::of(&counts.iter().map(|c| c.1).collect::<Vec<_>>()),
                change: Spread::of(&counts.iter().map(|c| c.1 - c.0).collect::<Vec<_>>()),
            })
        },
        decisive: seating.judge.and_then(|j| {
            let per: Vec<u32> = played.iter().filter_map(|p| p.decisive).collect();
            (!per.is_empty()).then(|| Decisive {
                judge: j.to_string(),
                per_game: Spread::of(&per.iter().map(|&d| f64::from(d)).collect::<Vec<_>>()),
                games_with: Rate::new(per.iter().filter(|&&d| d > 0).count() as u32, per.len() as u32),
            })
        }),
    }
}

/// The spread of `part / whole` over the games that have both (and a
/// whole above 0), if any has.
fn share(pairs: impl Iterator<Item = Option<(u32, u32)>>) -> Option<Spread> {
    let xs: Vec<f64> = pairs.flatten().filter(|(_, w)| *w > 0).map(|(p, w)| f64::from(p) / f64::from(w)).collect();
    (!xs.is_empty()).then(|| Spread::of(&xs))
}

/// Lengths in about twenty bins of a round width: `(from, to, count)`.
pub fn histogram(lengths: &[u32]) -> Vec<(u32, u32, u32)> {
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
#[derive(Clone, Debug, Serialize)]
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
    let pairs = [
        ("lead changes", &a.lead_changes, &b.lead_changes),
        ("winner behind", &a.winner_behind, &b.winner_behind),
        ("board coverage", &a.coverage, &b.coverage),
        ("piece change", &a.pieces.as_ref().map(|p| p.change.clone()), &b.pieces.as_ref().map(|p| p.change.clone())),
        (
            "decisive moves",
            &a.decisive.as_ref().map(|d| d.per_game.clone()),
            &b.decisive.as_ref().map(|d| d.per_game.clone()),
        ),
    ];
    for (name, x, y) in pairs {
        if let (Some(x), Some(y)) = (x, y) {
            out.push(mean_difference(name.into(), x, y));
        }
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

    #[test]
    fn a_decisive_move_swings_the_movers_expected_result_by_half() {
        let seats = ["a".to_string(), "b".to_string()];
        // a thinks it wins (0.9); after its move b thinks so too (0.8, so
        // 0.2 for a): a threw it away. b's next move keeps its estimate.
        let e = [Some((0, 0.9)), Some((1, 0.8)), Some((0, 0.25))];
        assert_eq!(decisive(&e, None, &seats), 1);
        // The last move (a's, at 0.25) is judged by the result: b wins, a
        // small swing; a wins, a swing from 0.25 to 1, decisive.
        let won = Some(Outcome::Winner("b".into()));
        assert_eq!(decisive(&e, won.as_ref(), &seats), 1);
        let lost = Some(Outcome::Winner("a".into()));
        assert_eq!(decisive(&e, lost.as_ref(), &seats), 2);
        // A seat moving twice keeps its own side; chance's plies are not
        // judged, nor the move before them.
        assert_eq!(decisive(&[Some((0, 0.2)), Some((0, 0.8))], None, &seats), 1);
        assert_eq!(decisive(&[Some((0, 0.2)), None, Some((0, 0.9))], None, &seats), 0);
    }
}
