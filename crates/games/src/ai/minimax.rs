//! Alpha-beta search: minimax for two players, paranoid (every other seat
//! plays against the one to move) for more; iterative deepening, the
//! transposition table's best move searched first, wins preferred sooner.
//! With hidden information the search runs on several sampled states and
//! the moves they find best are voted on.

use super::{Choice, Clock, DEFAULT_DEPTH, NO_MOVE, WIN, heuristic, pick, terminal_score};
use crate::game::{Game, GameError, Move, State};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Samples searched per decision in a game with hidden information.
const SAMPLES: u32 = 4;
/// Depth limit when only time bounds the search.
const MAX_DEPTH: u32 = 64;
/// Transposition table entries kept at most (it is cleared when full).
const TT_SIZE: usize = 1 << 20;
/// Scores closer than this are equal (a random one of them is played).
const EPS: f64 = 1e-6;

#[derive(Clone, Copy)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

struct Entry {
    depth: u32,
    score: f64,
    bound: Bound,
    best: u64,
}

enum Stop {
    Time,
    Rules(GameError),
}

impl From<GameError> for Stop {
    fn from(e: GameError) -> Stop {
        Stop::Rules(e)
    }
}

struct Search<'a> {
    game: &'a mut Game,
    me: &'a str,
    tt: HashMap<u64, Entry>,
    deadline: Option<Instant>,
    nodes: u64,
}

/// A win or loss score is stored relative to the node, so that it means
/// the same wherever the position is met again.
fn to_tt(score: f64, ply: u32) -> f64 {
    if score > WIN / 2.0 {
        score + ply as f64
    } else if score < -WIN / 2.0 {
        score - ply as f64
    } else {
        score
    }
}

fn from_tt(score: f64, ply: u32) -> f64 {
    if score > WIN / 2.0 {
        score - ply as f64
    } else if score < -WIN / 2.0 {
        score + ply as f64
    } else {
        score
    }
}

impl Search<'_> {
    fn search(&mut self, s: &State, depth: u32, mut alpha: f64, mut beta: f64, ply: u32) -> Result<f64, Stop> {
        self.nodes += 1;
        if self.nodes.is_multiple_of(16) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Stop::Time);
        }
        if let Some(o) = self.game.outcome(s)? {
            return Ok(terminal_score(&o, self.me, ply));
        }
        if depth == 0 {
            return Ok(heuristic(self.game, s, self.me)?);
        }
        if self.game.chance(s)? {
            // Chance moves: the expected score over its equally likely moves.
            let succ = self.game.successors(s)?;
            if succ.is_empty() {
                return Err(Stop::Rules(GameError::Rules(NO_MOVE.into())));
            }
            let mut sum = 0.0;
            for (_, next) in &succ {
                sum += self.search(next, depth - 1, f64::NEG_INFINITY, f64::INFINITY, ply + 1)?;
            }
            return Ok(sum / succ.len() as f64);
        }
        let key = s.term().hash64();
        let mut tt_best = None;
        if let Some(e) = self.tt.get(&key) {
            tt_best = Some(e.best);
            if e.depth >= depth {
                let score = from_tt(e.score, ply);
                match e.bound {
                    Bound::Exact => return Ok(score),
                    Bound::Lower => alpha = alpha.max(score),
                    Bound::Upper => beta = beta.min(score),
                }
                if alpha >= beta {
                    return Ok(score);
                }
            }
        }
        let maximizing = self.game.to_move(s)? == self.me;
        let mut succ = self.game.successors(s)?;
        if succ.is_empty() {
            return Err(Stop::Rules(GameError::Rules(NO_MOVE.into())));
        }
        if let Some(b) = tt_best
            && let Some(i) = succ.iter().position(|(m, _)| m.0.hash64() == b)
        {
            succ.swap(0, i);
        }
        let (alpha0, beta0) = (alpha, beta);
        let mut best = if maximizing { f64::NEG_INFINITY } else { f64::INFINITY };
        let mut best_move = 0;
        for (m, next) in &succ {
            let v = self.search(next, depth - 1, alpha, beta, ply + 1)?;
            if maximizing {
                if v > best {
                    best = v;
                    best_move = m.0.hash64();
                }
                alpha = alpha.max(v);
            } else {
                if v < best {
                    best = v;
                    best_move = m.0.hash64();
                }
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        let bound = if best <= alpha0 {
            Bound::Upper
        } else if best >= beta0 {
            Bound::Lower
        } else {
            Bound::Exact
        };
        if self.tt.len() >= TT_SIZE {
            self.tt.clear();
        }
        self.tt.insert(key, Entry { depth, score: to_tt(best, ply), bound, best: best_move });
        Ok(best)
    }

    /// Iterative deepening from the root: the moves found best at the
    /// deepest completed depth, with their score, and that depth.
    fn root(&mut self, s: &State, max_depth: u32) -> Result<RootResult, GameError> {
        let succ = self.game.successors(s)?;
        if succ.is_empty() {
            return Err(GameError::Rules("no legal move in a position that is not over".into()));
        }
        // Root moves in search order, with their latest scores.
        let mut order: Vec<(usize, f64)> = (0..succ.len()).map(|i| (i, 0.0)).collect();
        let mut done: Option<(Vec<usize>, f64)> = None;
        let mut reached = 0;
        for depth in 1..=max_depth {
            let mut alpha = f64::NEG_INFINITY;
            let mut scored: Vec<(usize, f64)> = Vec::with_capacity(order.len());
            let mut stopped = false;
            for &(i, _) in &order {
                // Searching a hair below the best so far tells equal moves
                // from worse ones.
                match self.search(&succ[i].1, depth - 1, alpha - EPS, f64::INFINITY, 1) {
                    Ok(v) => {
                        alpha = alpha.max(v);
                        scored.push((i, v));
                    }
                    Err(Stop::Time) => {
                        stopped = true;
                        break;
                    }
                    Err(Stop::Rules(e)) => return Err(e),
                }
            }
            if stopped {
                // A partial iteration counts only if nothing was completed
                // before it.
                if done.is_none() && !scored.is_empty() {
                    done = Some(best_of(&scored));
                }
                break;
            }
            scored.sort_by(|a, b| b.1.total_cmp(&a.1));
            done = Some(best_of(&scored));
            reached = depth;
            let solved = scored.iter().all(|(_, v)| v.abs() > WIN / 2.0);
            order = scored;
            if solved {
                break;
            }
        }
        let (best, score) = done.unwrap_or_else(|| ((0..succ.len()).collect(), 0.0));
        Ok((best.into_iter().map(|i| succ[i].0.clone()).collect(), score, reached))
    }
}

/// The best root moves (within [`EPS`]), their score and the depth reached.
type RootResult = (Vec<Move>, f64, u32);

/// The moves within [`EPS`] of the best score, and that score.
fn best_of(scored: &[(usize, f64)]) -> (Vec<usize>, f64) {
    let top = scored.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
    (scored.iter().filter(|s| s.1 >= top - EPS).map(|s| s.0).collect(), top)
}

pub(super) fn choose(
    game: &mut Game,
    state: &State,
    me: &str,
    depth: Option<u32>,
    clock: Clock,
    rng: &mut ChaCha8Rng,
) -> Result<Choice, GameError> {
    let max_depth = match (depth, clock.deadline) {
        (Some(d), _) => d,
        (None, Some(_)) => MAX_DEPTH,
        (None, None) => DEFAULT_DEPTH,
    };
    let samples = if game.hidden() { SAMPLES } else { 1 };
    // Votes per move (moves the samples found best share a vote), then the
    // sum of their scores to break ties.
    let mut votes: Vec<(Move, f64, f64)> = Vec::new();
    let mut nodes = 0;
    let mut reached = u32::MAX;
    // Samples already searched, with their results: a sample drawn again
    // (always, when the viewer can infer every hidden tile, as in a
    // two-player Domin-Up) counts again without a second search.
    let mut searched: Vec<(State, RootResult)> = Vec::new();
    for k in 0..samples {
        let sample = game.sample_state(state, me)?;
        let (best, score, d) = match searched.iter().find(|(s, _)| *s == sample) {
            Some((_, result)) => result.clone(),
            None => {
                // Each sample gets an equal share of the time left.
                let deadline = clock.left().map(|left| Instant::now() + left.div_f64((samples - k) as f64));
                let mut search = Search { game, me, tt: HashMap::new(), deadline, nodes: 0 };
                let result = search.root(&sample, max_depth)?;
                nodes += search.nodes;
                searched.push((sample, result.clone()));
                result
            }
        };
        reached = reached.min(d);
        let share = 1.0 / best.len() as f64;
        for m in best {
            match votes.iter_mut().find(|v| v.0 == m) {
                Some(v) => {
                    v.1 += share;
                    v.2 += score;
                }
                None => votes.push((m, share, score)),
            }
        }
        if clock.left().is_some_and(|l| l == Duration::ZERO) {
            break;
        }
    }
    let top = votes.iter().map(|v| (v.1, v.2)).fold((f64::NEG_INFINITY, f64::NEG_INFINITY), |a, b| {
        if b.0 > a.0 + EPS || ((b.0 - a.0).abs() <= EPS && b.1 > a.1) { b } else { a }
    });
    let best: Vec<&Move> =
        votes.iter().filter(|v| (v.1 - top.0).abs() <= EPS && (v.2 - top.1).abs() <= EPS).map(|v| &v.0).collect();
    let mv = best[pick(rng, best.len())?].clone();
    let info = if samples > 1 {
        let distinct = searched.len();
        format!("depth {reached} on {samples} samples ({distinct} distinct), {nodes} nodes")
    } else {
        format!("depth {reached}, {nodes} nodes, score {}", top.1)
    };
    Ok(Choice::plain(mv, info))
}
