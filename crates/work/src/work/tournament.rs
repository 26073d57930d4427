//! Tournaments: a round robin of K controllers, and their ratings.
//!
//! Every set of n controllers (n: the game's seats) is a pairing; each
//! pairing plays the same number of games with its controllers rotated a
//! seat on after each game, as a match does. Game `g` is game
//! `g mod games` of pairing `g / games`, seeded with seed + g, so a
//! tournament splits into shards like any job.
//!
//! Ratings are Bradley–Terry strengths on the Elo scale: a controller
//! that won a game is ahead of each controller that lost it, and two
//! controllers in a drawn game drew. The strengths maximise the likelihood
//! (Hunter's MM algorithm) with a prior of one drawn game between every two
//! controllers, so that a controller that won or lost everything still has
//! a finite rating. The 95% intervals come from the inverse of the Fisher
//! information, with the ratings' mean held at 0.

use super::{Games, Part, Task, Unit, WorkError, computer_players, play_seated, run_items};
use crate::game::Game;

/// The pairings of `k` controllers for a game of `n` seats: every set of
/// `n` of them, in lexicographic order.
pub fn pairings(k: usize, n: usize) -> Vec<Vec<usize>> {
    fn extend(from: usize, k: usize, n: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == n {
            out.push(cur.clone());
            return;
        }
        for c in from..k {
            cur.push(c);
            extend(c + 1, k, n, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    if n >= 1 && n <= k {
        extend(0, k, n, &mut Vec::new(), &mut out);
    }
    out
}

/// Pairings a tournament may have (a game's setup is one item each).
const MAX_PAIRINGS: usize = 100_000;

pub(super) fn run_tournament(u: &Unit) -> Result<(Part, bool), WorkError> {
    let (job, shard) = (u.job, u.shard);
    let Task::Tournament { controllers, think, games, max_plies } = &job.task else { unreachable!("a tournament job") };
    let parsed = computer_players(controllers, *think)?;
    let (k, n) = (parsed.len(), job.players.len());
    let table = check_size(&job.game, k, n)?;
    let total = shard.len(table.len() as u64 * games) as usize;
    let pairs = job.option_pairs();
    let setup = |game: &mut Game| Ok(game.options_term(&pairs)?);
    let work = |game: &mut Game, options: &crate::engine::Tmpl, g: u64| {
        let (p, r) = ((g / games) as usize, (g % games) as usize);
        let by_seat = (0..n).map(|i| table[p][(i + r) % n]).collect();
        play_seated(game, (options, job), (&parsed, by_seat), *max_plies, g, |_, turn, _| Ok(turn.chosen))
    };
    let done = run_items(u, (total, &|i| shard.item(i as u64)), &setup, &work)?;
    let interrupted = done.len() < total;
    let mut played = Games::new(k);
    let (mut ahead, mut drawn) = (vec![vec![0; k]; k], vec![vec![0; k]; k]);
    for r in &done {
        match played.record(r, &job.players) {
            Some(w) => {
                for &c in r.by_seat.iter().filter(|&&c| c != w) {
                    ahead[w][c] += 1;
                }
            }
            None => {
                for &a in &r.by_seat {
                    for &b in r.by_seat.iter().filter(|&&b| b != a) {
                        drawn[a][b] += 1;
                    }
                }
            }
        }
    }
    Ok((Part::Tournament { games: played, ahead, drawn }, interrupted))
}

/// The pairings of a tournament of `k` controllers in a game of `n` seats,
/// or why there can be none.
pub fn check_size(game: &str, k: usize, n: usize) -> Result<Vec<Vec<usize>>, WorkError> {
    if k < n.max(2) {
        return Err(WorkError(format!(
            "a tournament of {game} needs at least {} controllers (give --player once for each), not {k}",
            n.max(2)
        )));
    }
    // C(k, n) without overflow: stop counting past the limit.
    let mut count: u128 = 1;
    for i in 0..n as u128 {
        count = count * (k as u128 - i) / (i + 1);
        if count > MAX_PAIRINGS as u128 * 1000 {
            break;
        }
    }
    if count > MAX_PAIRINGS as u128 {
        return Err(WorkError(format!(
            "{k} controllers in {n} seats make {count} pairings or more; a tournament takes at most {MAX_PAIRINGS}"
        )));
    }
    Ok(pairings(k, n))
}

/// Each controller's rating on the Elo scale (mean 0) and its 95%
/// interval, from who was ahead of whom and the draws.
pub fn ratings(ahead: &[Vec<u64>], drawn: &[Vec<u64>]) -> Vec<(f64, f64, f64)> {
    let k = ahead.len();
    if k == 0 {
        return Vec::new();
    }
    // Games between i and j (with the prior's one draw), and i's wins
    // (a draw is half a win).
    let games = |i: usize, j: usize| (ahead[i][j] + ahead[j][i] + drawn[i][j]) as f64 + 1.0;
    let won: Vec<f64> = (0..k)
        .map(|i| (0..k).filter(|&j| j != i).map(|j| ahead[i][j] as f64 + 0.5 * drawn[i][j] as f64 + 0.5).sum())
        .collect();
    let mut p = vec![1.0_f64; k];
    for _ in 0..100_000 {
        let next: Vec<f64> = (0..k)
            .map(|i| {
                let d: f64 = (0..k).filter(|&j| j != i).map(|j| games(i, j) / (p[i] + p[j])).sum();
                if d > 0.0 { won[i] / d } else { p[i] }
            })
            .collect();
        // Geometric mean 1: ratings of mean 0.
        let g = (next.iter().map(|x| x.ln()).sum::<f64>() / k as f64).exp();
        let next: Vec<f64> = next.iter().map(|x| x / g).collect();
        let change = next.iter().zip(&p).map(|(a, b)| (a.ln() - b.ln()).abs()).fold(0.0, f64::max);
        p = next;
        if change < 1e-12 {
            break;
        }
    }
    // Fisher information of the log-strengths; its pseudo-inverse (a
    // graph Laplacian's: (I + J/k)^-1 - J/k) is their covariance with the
    // mean held fixed.
    let mut info = vec![vec![0.0; k]; k];
    for i in 0..k {
        for j in 0..k {
            if i != j {
                let q = games(i, j) * p[i] * p[j] / (p[i] + p[j]).powi(2);
                info[i][j] -= q;
                info[i][i] += q;
            }
        }
    }
    let shift = 1.0 / k as f64;
    for row in info.iter_mut() {
        for x in row.iter_mut() {
            *x += shift;
        }
    }
    let cov = invert(info);
    let scale = 400.0 / std::f64::consts::LN_10;
    (0..k)
        .map(|i| {
            let elo = scale * p[i].ln();
            let sd = cov.as_ref().map_or(f64::INFINITY, |c| (c[i][i] - shift).max(0.0).sqrt()) * scale;
            (elo, elo - 1.96 * sd, elo + 1.96 * sd)
        })
        .collect()
}

/// The inverse of a small matrix (Gauss–Jordan with partial pivoting), or
/// `None` if it is singular.
fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let k = a.len();
    let mut inv: Vec<Vec<f64>> = (0..k).map(|i| (0..k).map(|j| f64::from(u8::from(i == j))).collect()).collect();
    for col in 0..k {
        let pivot = (col..k).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let d = a[col][col];
        for j in 0..k {
            a[col][j] /= d;
            inv[col][j] /= d;
        }
        for row in 0..k {
            if row != col {
                let f = a[row][col];
                if f != 0.0 {
                    for j in 0..k {
                        a[row][j] -= f * a[col][j];
                        inv[row][j] -= f * inv[col][j];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairings_are_every_set_of_seats() {
        assert_eq!(pairings(3, 2), vec![vec![0, 1], vec![0, 2], vec![1, 2]]);
        assert_eq!(pairings(4, 3).len(), 4);
        assert_eq!(pairings(2, 3).len(), 0);
        assert!(check_size("g", 1, 2).unwrap_err().0.contains("at least 2 controllers"));
        assert!(check_size("g", 60, 4).unwrap_err().0.contains("pairings or more"));
    }

    #[test]
    fn even_results_give_equal_ratings_and_a_75_percent_score_is_about_191_elo() {
        let r = ratings(&[vec![0, 10], vec![10, 0]], &[vec![0, 0], vec![0, 0]]);
        assert!(r[0].0.abs() < 1e-9 && r[1].0.abs() < 1e-9, "{r:?}");
        assert!(r[0].1 < 0.0 && r[0].2 > 0.0);
        // 300 wins to 100, with the prior's draw 300.5 to 100.5: the
        // difference is 400 log10(300.5 / 100.5), about 190.3 Elo.
        let r = ratings(&[vec![0, 300], vec![100, 0]], &[vec![0, 0], vec![0, 0]]);
        let diff = r[0].0 - r[1].0;
        assert!((diff - 400.0 * (300.5_f64 / 100.5).log10()).abs() < 1e-6, "{diff}");
        // The interval narrows with more games.
        let few = ratings(&[vec![0, 3], vec![1, 0]], &[vec![0, 0], vec![0, 0]]);
        assert!(few[0].2 - few[0].1 > r[0].2 - r[0].1);
    }

    #[test]
    fn a_controller_that_wins_everything_has_a_finite_rating_above_the_rest() {
        let ahead = vec![vec![0, 20, 20], vec![0, 0, 12], vec![0, 8, 0]];
        let drawn = vec![vec![0; 3]; 3];
        let r = ratings(&ahead, &drawn);
        assert!(r.iter().all(|(e, lo, hi)| e.is_finite() && lo.is_finite() && hi.is_finite()), "{r:?}");
        assert!(r[0].0 > r[1].0 && r[1].0 > r[2].0, "{r:?}");
        assert!((r.iter().map(|x| x.0).sum::<f64>()).abs() < 1e-6);
    }
}
