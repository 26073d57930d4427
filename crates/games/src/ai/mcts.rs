//! Monte Carlo tree search: UCT with random playouts (run by the game
//! driver in the engine, their moves drawn by the rules' own playout policy
//! where they define one, `playout_move/2`, else uniformly; `uct` always
//! draws uniformly; in a game with `value/3` one that runs past
//! [`PLAYOUT_CAP`] plies is scored by it, graded by the lead; where the
//! rules' `prior_playouts/2` says, each root move's `value/3` score first
//! counts as that many playouts) and a reward per seat, so it
//! plays for whoever is to move with any number of players. In a game with hidden information each
//! iteration descends a fresh sample of the position (`sample_state/3`)
//! and only through the moves legal in that sample. With several threads
//! each grows its own tree from its own seed and the root statistics are
//! added up (root parallelism).
//!
//! Guided search (`guided`, in a game with `value/3` and nothing hidden)
//! plays out nothing: a node, when first expanded, scores every child with
//! `value/3` (a win or loss by its outcome) as that child's first visit,
//! and backs up its best child's score for the player to move there. Each
//! iteration is then one step of a best-first search whose leaves are the
//! game's own evaluation, and the search sees every reply to the moves it
//! looks at instead of a few drawn at random. It is only as good as
//! `value/3`: it beats `greedy` in every game measured, but the random
//! playouts of `mcts` see tactics that Connect Four's and Hex's `value/3`
//! miss, and `mcts` beats it there.

use super::{Choice, Clock, NO_MOVE, rewards, seat};
use crate::game::{Draw, Game, GameError, Move, Outcome, PlayoutEnd, Spec, State};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// The exploration constant of UCB1 for rewards in [0, 1].
const EXPLORE: f64 = 0.7;
/// A two-player game whose `value/3` gives the second seat the first's
/// value negated in this many positions of a search (zero-sum values, as
/// most are: a material balance, a difference of distances) is asked
/// for the first seat's value alone in the rest of that search: half the
/// calls, where a guided search spends most of its time.
const ANTISYMMETRY_CHECKS: u32 = 16;

/// In a guided search, the weight of a node's minimax value beside its
/// mean (implicit minimax backups, Lanctot, Winands, Pepels and
/// Sturtevant 2014, who found weights from 0.3 to 0.6 best): the mean
/// alone keeps counting a move the search has since found refuted.
const MINIMAX_WEIGHT: f64 = 0.5;
/// Plies a playout runs at most in a game with `value/3`; a longer one is
/// scored by it (early playout termination: short random playouts ending
/// in the game's evaluation cost a fraction of long ones, e.g. 3.1 s
/// instead of 15.7 s for 2000 playouts at the start of Breakthrough, and a
/// random move far from the root says little anyway). Without `value/3` a
/// cut playout would say nothing (a draw): playouts run to the end. The
/// rules may set another cap (`playout_plies/2`): Othello's and Go's (up
/// to 9x9) say `end`, since their evaluations after 8 random plies lost to
/// playouts run to the end (13–2–25 and 0–0–7), and so do those of Connect
/// Four and Campo Bello, whose games are short (8–1–11 and 8–5–7); Go's
/// say 12 on larger boards, where playouts to the end are too long.
const PLAYOUT_CAP: u64 = 8;

struct Node {
    /// The seat to move, once known; `Some(None)` where chance moves.
    mover: Option<Option<usize>>,
    visits: f64,
    /// Reward sums per seat.
    reward: Vec<f64>,
    /// Children: the move's hash, the move, the child's index.
    children: Vec<(u64, Move, usize)>,
    /// Whether the outcome below was looked up, the outcome, and the
    /// successors: cached for the state in `at` (with hidden information
    /// the state at a node depends on the sample; a sample equal to the
    /// last one at this node, as always when every hidden piece can be
    /// inferred, reuses them).
    checked: bool,
    terminal: Option<Vec<f64>>,
    succ: Option<Vec<(Move, State)>>,
    at: Option<State>,
    /// In a guided search, the node's minimax value per seat: its own
    /// score until it is expanded, then its best child's for the player
    /// to move (where chance moves, its children's mean).
    best: Vec<f64>,
    /// A root move scored by `value/3` as a prior and not yet played out
    /// from: its first visit plays out from it instead of expanding it.
    fresh: bool,
}

impl Node {
    fn new(seats: usize) -> Node {
        Node {
            mover: None,
            visits: 0.0,
            reward: vec![0.0; seats],
            children: Vec::new(),
            checked: false,
            terminal: None,
            succ: None,
            at: None,
            best: Vec::new(),
            fresh: false,
        }
    }
}

/// Root statistics of one tree: each root move as text with its visits
/// and the mean reward of the player to move.
type RootStats = Vec<(String, f64, f64)>;

struct Tree<'a> {
    game: &'a mut Game,
    players: &'a [String],
    nodes: Vec<Node>,
    hidden: bool,
    /// Plies a playout runs at most before `value/3` scores it (`u64::MAX`
    /// where nothing scores it: to the end).
    cap: u64,
    rng: ChaCha8Rng,
    playouts: u64,
    /// Whether the search is guided by `value/3` (see the module's text).
    guided: bool,
    /// How many playouts each root move's `value/3` score counts for
    /// (the rules' `prior_playouts/2`; 0: no prior).
    prior: u32,
    /// How the playouts draw their moves: by the rules' playout policy,
    /// except in `uct`.
    draw: Draw,
    /// In a two-player game, how many positions scored so far had
    /// `value/3` of the second seat the first's negated (`None` once one
    /// did not).
    antisymmetric: Option<u32>,
    /// The sum and count of the margins (`value/3` of a seat less the best
    /// other's, in absolute value) of the playouts cut so far: their mean
    /// is the scale that grades a cut playout's reward.
    margins: (f64, f64),
}

impl Tree<'_> {
    /// One iteration: select, expand one node, play out, back up. `false`
    /// when the time ran out during the playout (nothing is backed up).
    fn iterate(&mut self, root: &State, me: &str, clock: &Clock) -> Result<bool, GameError> {
        let mut s = if self.hidden { self.game.sample_state(root, me)? } else { root.clone() };
        let mut path = vec![0usize];
        let mut node = 0usize;
        let result = loop {
            if self.hidden && self.nodes[node].at.as_ref() != Some(&s) {
                let n = &mut self.nodes[node];
                (n.checked, n.terminal, n.succ, n.at) = (false, None, None, Some(s.clone()));
            }
            if let Some(r) = self.reached(node, &s)? {
                break r;
            }
            if self.nodes[node].fresh {
                // A root move known so far by its prior: its first playout.
                self.nodes[node].fresh = false;
                let Some((_, end)) = self.game.random_playout(&s, self.cap, clock.left(), self.draw)? else {
                    return Ok(false);
                };
                self.playouts += 1;
                break self.ended(end)?;
            }
            if node == 0 && self.prior > 0 && self.nodes[0].succ.is_none() && self.nodes[0].children.is_empty() {
                let succ = self.game.successors(&s)?;
                self.score_root(&succ, clock)?;
                self.nodes[0].succ = Some(succ);
                continue;
            }
            // Taken out of the node while in use, put back below.
            let succ = match self.nodes[node].succ.take() {
                Some(v) => v,
                None => self.game.successors(&s)?,
            };
            if succ.is_empty() {
                return Err(GameError::Rules(NO_MOVE.into()));
            }
            // Each move's child, found by the move's hash (a wide node, such
            // as the 2,000 first moves of Amazons, is not searched through
            // for each of its moves).
            let hashes: Vec<u64> = succ.iter().map(|(m, _)| m.0.hash64()).collect();
            let mut known: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
            for (k, (h, _, c)) in self.nodes[node].children.iter().enumerate() {
                known.entry(*h).or_default().push((k, *c));
            }
            let children = &self.nodes[node].children;
            let child_of =
                |i: usize| known.get(&hashes[i])?.iter().find(|&&(k, _)| children[k].1 == succ[i].0).map(|&(_, c)| c);
            let untried: Vec<usize> = (0..succ.len()).filter(|&i| child_of(i).is_none()).collect();
            if !untried.is_empty() {
                let i = untried[self.rng.gen_range(0..untried.len())];
                let child = self.nodes.len();
                self.nodes.push(Node::new(self.players.len()));
                self.nodes[node].children.push((hashes[i], succ[i].0.clone(), child));
                path.push(child);
                let playout = self.game.random_playout(&succ[i].1, self.cap, clock.left(), self.draw);
                self.nodes[node].succ = Some(succ);
                let Some((_, end)) = playout? else {
                    return Ok(false);
                };
                self.playouts += 1;
                break self.ended(end)?;
            }
            // Every legal move has a child: UCB1 for the player to move,
            // or where chance moves, one of its moves at random.
            let mut best = (f64::NEG_INFINITY, 0, 0);
            match self.nodes[node].mover.expect("known mover") {
                None => {
                    let i = self.rng.gen_range(0..succ.len());
                    best = (0.0, i, child_of(i).expect("expanded"));
                }
                Some(mover) => {
                    let ln = self.nodes[node].visits.max(1.0).ln();
                    for i in 0..succ.len() {
                        let c = child_of(i).expect("expanded");
                        let n = &self.nodes[c];
                        let ucb = n.reward[mover] / n.visits + EXPLORE * (ln / n.visits).sqrt();
                        if ucb > best.0 {
                            best = (ucb, i, c);
                        }
                    }
                }
            }
            s = succ[best.1].1.clone();
            self.nodes[node].succ = Some(succ);
            node = best.2;
            path.push(node);
        };
        for &n in &path {
            let node = &mut self.nodes[n];
            node.visits += 1.0;
            for (r, x) in node.reward.iter_mut().zip(&result) {
                *r += x;
            }
        }
        Ok(true)
    }

    /// The rewards of a playout's end: its outcome, or where it was cut
    /// short, `value/3`'s grading.
    fn ended(&mut self, end: PlayoutEnd) -> Result<Vec<f64>, GameError> {
        match end {
            PlayoutEnd::Over(o) => Ok(rewards(&o, self.players)),
            PlayoutEnd::Cut(last) => self.estimate(&last),
        }
    }

    /// Scores the root's moves by `value/3` (their outcome where the game
    /// ends), each score counted as `prior` playouts, while the clock
    /// allows (the moves not scored are tried first, as without a prior).
    /// A root move's visits are then its prior's and its playouts', alike
    /// for every move scored.
    fn score_root(&mut self, succ: &[(Move, State)], clock: &Clock) -> Result<(), GameError> {
        let weight = f64::from(self.prior);
        for (m, t) in succ {
            if clock.over() {
                break;
            }
            let mut child = Node::new(self.players.len());
            let r = match self.game.outcome(t)? {
                Some(o) => {
                    let r = rewards(&o, self.players);
                    child.terminal = Some(r.clone());
                    r
                }
                None => {
                    child.fresh = true;
                    self.estimate(t)?
                }
            };
            child.visits = weight;
            child.reward = r.iter().map(|x| x * weight).collect();
            let c = self.nodes.len();
            self.nodes.push(child);
            self.nodes[0].children.push((m.0.hash64(), m.clone(), c));
            self.nodes[0].visits += weight;
        }
        Ok(())
    }

    /// A node reached with state `s`: the rewards where the game is over
    /// there (looked up once), else `None`, the seat to move known.
    fn reached(&mut self, node: usize, s: &State) -> Result<Option<Vec<f64>>, GameError> {
        if let Some(r) = self.nodes[node].terminal.clone() {
            return Ok(Some(r));
        }
        if !self.nodes[node].checked {
            if let Some(o) = self.game.outcome(s)? {
                let r = rewards(&o, self.players);
                self.nodes[node].terminal = Some(r.clone());
                return Ok(Some(r));
            }
            self.nodes[node].checked = true;
            if self.nodes[node].mover.is_none() {
                self.nodes[node].mover = Some(super::seat_to_move(self.game, self.players, s)?);
            }
        }
        Ok(None)
    }

    /// One iteration of the guided search: down the tree by UCB1 to a node
    /// not yet expanded, which scores its children. `false` when the time
    /// ran out (the children scored so far are kept, and the node's
    /// expansion goes on at its next visit).
    fn iterate_guided(&mut self, root: &State, clock: &Clock) -> Result<bool, GameError> {
        let mut path = vec![0usize];
        let mut node = 0usize;
        if self.nodes[0].at.is_none() {
            self.nodes[0].at = Some(root.clone());
        }
        let result = loop {
            let s = self.nodes[node].at.clone().expect("a guided node keeps its state");
            if let Some(r) = self.reached(node, &s)? {
                break r;
            }
            let mover = self.nodes[node].mover.expect("known mover");
            // Not yet (wholly) expanded: score the children left.
            if self.nodes[node].children.is_empty() || self.nodes[node].succ.is_some() {
                // In random order, so that an expansion the clock cuts
                // short has scored a fair sample of the moves.
                let mut succ = match self.nodes[node].succ.take() {
                    Some(v) => v,
                    None => {
                        let mut v = self.game.successors(&s)?;
                        v.shuffle(&mut self.rng);
                        v
                    }
                };
                if succ.is_empty() && self.nodes[node].children.is_empty() {
                    return Err(GameError::Rules(NO_MOVE.into()));
                }
                while let Some((m, t)) = succ.pop() {
                    if clock.over() {
                        succ.push((m, t));
                        self.nodes[node].succ = Some(succ);
                        return Ok(false);
                    }
                    let mut child = Node::new(self.players.len());
                    let r = match self.game.outcome(&t)? {
                        Some(o) => {
                            let r = rewards(&o, self.players);
                            child.terminal = Some(r.clone());
                            r
                        }
                        None => self.estimate(&t)?,
                    };
                    child.visits = 1.0;
                    child.best = r.clone();
                    child.reward = r;
                    child.at = Some(t);
                    let c = self.nodes.len();
                    self.nodes.push(child);
                    self.nodes[node].children.push((m.0.hash64(), m, c));
                }
                self.playouts += 1;
                self.nodes[node].best = self.best_of(node);
                break self.nodes[node].best.clone();
            }
            let kids = &self.nodes[node].children;
            let c = match mover {
                None => kids[self.rng.gen_range(0..kids.len())].2,
                Some(p) => {
                    let ln = self.nodes[node].visits.max(1.0).ln();
                    let mut best = (f64::NEG_INFINITY, kids[0].2);
                    for &(_, _, c) in kids {
                        let n = &self.nodes[c];
                        let ucb = guided_q(n, p) + EXPLORE * (ln / n.visits).sqrt();
                        if ucb > best.0 {
                            best = (ucb, c);
                        }
                    }
                    best.1
                }
            };
            node = c;
            path.push(node);
        };
        for &n in path.iter().rev() {
            if !self.nodes[n].children.is_empty() {
                self.nodes[n].best = self.best_of(n);
            }
            let node = &mut self.nodes[n];
            node.visits += 1.0;
            for (r, x) in node.reward.iter_mut().zip(&result) {
                *r += x;
            }
        }
        Ok(true)
    }

    /// The minimax value of an expanded node of a guided search: its best
    /// child's for the player to move, or where chance moves, the mean.
    fn best_of(&self, node: usize) -> Vec<f64> {
        let n = &self.nodes[node];
        let best = match n.mover.flatten() {
            Some(p) => n.children.iter().map(|k| &self.nodes[k.2].best).fold(None::<&Vec<f64>>, |b, r| match b {
                Some(b) if b[p] >= r[p] => Some(b),
                _ => Some(r),
            }),
            None => None,
        };
        match best {
            Some(b) => b.clone(),
            None => {
                let count = n.children.len().max(1) as f64;
                (0..self.players.len())
                    .map(|i| n.children.iter().map(|k| self.nodes[k.2].best[i]).sum::<f64>() / count)
                    .collect()
            }
        }
    }

    /// Rewards for a playout cut short, graded by `value/3`: each seat's
    /// margin over the best other seat, on the scale of the margins seen
    /// in this search, through tanh into (0, 1): a seat far ahead gets
    /// nearly a win, but never a whole one, so a playout that really wins
    /// counts for more (a search that only asked who leads could not tell
    /// a mate from a material lead). Without `value/3`, a draw.
    fn estimate(&mut self, s: &State) -> Result<Vec<f64>, GameError> {
        let mut values: Vec<f64> = Vec::with_capacity(self.players.len());
        for (i, p) in self.players.iter().enumerate() {
            // The second seat's value is the first's negated where the
            // rules' value/3 has been so in every position checked.
            if i == 1 && self.antisymmetric.is_some_and(|k| k >= ANTISYMMETRY_CHECKS) {
                values.push(-values[0]);
                break;
            }
            match self.game.value(s, p)? {
                Some(v) => values.push(v),
                None => return Ok(rewards(&Outcome::Draw, self.players)),
            }
        }
        if self.players.len() == 2
            && let Some(k) = self.antisymmetric.filter(|&k| k < ANTISYMMETRY_CHECKS)
        {
            // Once not so, both seats are asked to the end of the search.
            self.antisymmetric = (values[0] == -values[1]).then_some(k + 1);
        }
        let margins: Vec<f64> = (0..values.len())
            .map(|i| {
                let best_other = values
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, &v)| v)
                    .fold(f64::NEG_INFINITY, f64::max);
                if best_other.is_finite() { values[i] - best_other } else { 0.0 }
            })
            .collect();
        for m in &margins {
            self.margins.0 += m.abs();
            self.margins.1 += 1.0;
        }
        let scale = self.margins.0 / self.margins.1.max(1.0);
        if scale <= 0.0 || !scale.is_finite() {
            return Ok(rewards(&Outcome::Draw, self.players));
        }
        Ok(margins.iter().map(|m| 0.5 + 0.5 * (m / scale).tanh()).collect())
    }

    /// Each root move's visits and value: its mean reward, or in a guided
    /// search the mean blended with its minimax value.
    fn root_stats(&mut self, me: usize) -> RootStats {
        let children = self.nodes[0].children.clone();
        children
            .iter()
            .map(|(_, m, c)| {
                let n = &self.nodes[*c];
                (self.game.engine().term_text(&m.0), n.visits, guided_q(n, me))
            })
            .collect()
    }
}

/// A node's value to seat `p`: its mean reward, blended with its minimax
/// value where it has one (in a guided search).
fn guided_q(n: &Node, p: usize) -> f64 {
    let mean = n.reward[p] / n.visits.max(1.0);
    match n.best.get(p) {
        Some(b) => (1.0 - MINIMAX_WEIGHT) * mean + MINIMAX_WEIGHT * b,
        None => mean,
    }
}

/// Whether `guided` is guided by `value/3` in `game`: where the rules
/// define it and hide nothing (a hidden game's tree is searched through
/// samples, whose moves differ from one iteration to the next).
pub(super) fn guided(game: &Game) -> bool {
    game.has("value", 3) && !game.hidden()
}

/// How a search uses the game's `value/3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Style {
    /// Not at all: uniformly random playouts to the end (`uct`).
    Uniform,
    /// To score the playouts it cuts short after [`PLAYOUT_CAP`] plies, or
    /// as many as the rules' `playout_plies/2` says (`mcts`, where the
    /// rules define `value/3`).
    Cut,
    /// To score every node it expands (`guided`).
    Guided,
}

/// How a search is run: its iterations (playouts, or guided expansions),
/// how `value/3` serves it, and the threads that share it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Search {
    pub budget: u32,
    pub style: Style,
    pub threads: usize,
}

/// Grows one tree for `iterations` (or until the clock runs out), guided by
/// `value/3` or not.
fn grow(
    game: &mut Game,
    players: &[String],
    root: &State,
    me: &str,
    (iterations, style): (u32, Style),
    clock: &Clock,
    seed: u64,
) -> Result<(RootStats, u64), GameError> {
    game.seed(seed);
    let hidden = game.hidden();
    let valued = game.has("value", 3) && style != Style::Uniform;
    let guided = style == Style::Guided;
    // The rules may say how far to play out before `value/3` judges (to
    // the end, where their evaluation misleads after a few random plies).
    // (A guided search plays nothing out.)
    let cap = if valued && !guided { game.playout_plies(root)?.unwrap_or(PLAYOUT_CAP) } else { u64::MAX };
    // And whether to score the root's moves by `value/3` first, as a prior
    // (not where the state is a sample: the root's moves vary with it).
    let prior = if valued && !guided && !hidden { game.prior_playouts(root)?.unwrap_or(0) } else { 0 };
    let mut tree = Tree {
        game,
        players,
        nodes: vec![Node::new(players.len())],
        hidden,
        cap,
        guided,
        prior,
        draw: if style == Style::Uniform { Draw::Uniform } else { Draw::Policy },
        rng: ChaCha8Rng::seed_from_u64(seed),
        playouts: 0,
        margins: (0.0, 0.0),
        antisymmetric: Some(0),
    };
    for _ in 0..iterations {
        let went = !clock.over()
            && if tree.guided { tree.iterate_guided(root, clock)? } else { tree.iterate(root, me, clock)? };
        if !went {
            break;
        }
    }
    let me_seat = seat(players, me)?;
    Ok((tree.root_stats(me_seat), tree.playouts))
}

/// The seed of thread `k`'s tree.
fn thread_seed(seed: u64, k: usize) -> u64 {
    seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

pub(super) fn choose(
    game: &mut Game,
    players: &[String],
    state: &State,
    me: &str,
    search: Search,
    clock: Clock,
    seed: u64,
) -> Result<Choice, GameError> {
    let Search { budget, style, threads } = search;
    let guided = style == Style::Guided;
    let threads = threads.max(1);
    let share = |k: usize| budget / threads as u32 + u32::from((k as u32) < budget % threads as u32);
    let mut results: Vec<Result<(RootStats, u64), GameError>> = Vec::new();
    if threads == 1 {
        results.push(grow(game, players, state, me, (share(0), style), &clock, thread_seed(seed, 0)));
    } else {
        // The other threads load their own copy of the rules (an engine is
        // not shared between threads) and read the state from its text.
        let text = game.engine().term_text(state.term());
        let options = game.options_in_use();
        let spec = game.spec().clone();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads)
                .map(|k| {
                    let (text, spec, options) = (&text, &spec, options.as_deref());
                    std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(scope, move || {
                        let at = Position { state: text, options };
                        worker(spec, at, players, me, (share(k), style), &clock, thread_seed(seed, k))
                    })
                })
                .collect();
            results.push(grow(game, players, state, me, (share(0), style), &clock, thread_seed(seed, 0)));
            for h in handles {
                results.push(match h {
                    Ok(h) => h.join().unwrap_or_else(|_| Err(GameError::Rules("a search thread failed".into()))),
                    Err(e) => Err(GameError::Rules(format!("cannot start a search thread: {e}"))),
                });
            }
        });
    }
    // Add the trees' root statistics up, in thread order.
    let mut total: Vec<(String, f64, f64)> = Vec::new();
    let mut playouts = 0;
    for r in results {
        let (stats, n) = r?;
        playouts += n;
        for (m, visits, mean) in stats {
            match total.iter_mut().find(|t| t.0 == m) {
                Some(t) => {
                    t.2 = (t.2 * t.1 + mean * visits) / (t.1 + visits).max(1.0);
                    t.1 += visits;
                }
                None => total.push((m, visits, mean)),
            }
        }
    }
    // The most visited move (the better value among equals). Not the best
    // value: in a guided search a move not yet looked into still has the
    // score of one move ahead, which is optimistic beside the values of
    // the moves whose replies the search has seen.
    let best = total.iter().fold(None::<&(String, f64, f64)>, |a, t| match a {
        Some(b) if b.1 > t.1 || (b.1 == t.1 && b.2 >= t.2) => Some(b),
        _ => Some(t),
    });
    let mv = match best {
        Some((text, visits, mean)) => {
            let info = if guided {
                format!("{playouts} expansions guided by value/3, {visits} visits, expected reward {mean:.2}")
            } else {
                format!("{playouts} playouts, {visits} visits, expected reward {mean:.2}")
            };
            let parse = |game: &mut Game, text: &str| -> Result<Move, GameError> {
                game.engine().parse_term(text).map(Move::new).map_err(|e| GameError::Rules(e.to_string()))
            };
            let mv = parse(game, text)?;
            let visits = total.iter().map(|(m, v, _)| Ok((parse(game, m)?, *v))).collect::<Result<_, GameError>>()?;
            return Ok(Choice { mv, info, visits, value: Some(*mean) });
        }
        // No iteration finished in time: any legal move.
        None => {
            let succ = game.sample_state(state, me).and_then(|s| game.successors(&s))?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            super::pick(&mut rng, succ.len()).map(|k| succ[k].0.clone())?
        }
    };
    Ok(Choice::plain(mv, "no playout finished in time".into()))
}

#[allow(clippy::too_many_arguments)]
/// Where a search thread starts, as text: the state, and the options the
/// game's states are made with (`Game::options_in_use`).
struct Position<'a> {
    state: &'a str,
    options: Option<&'a str>,
}

fn worker(
    spec: &Spec,
    at: Position,
    players: &[String],
    me: &str,
    (iterations, style): (u32, Style),
    clock: &Clock,
    seed: u64,
) -> Result<(RootStats, u64), GameError> {
    let (mut game, _) = spec.build()?;
    let parse =
        |game: &mut Game, text: &str| game.engine().parse_term(text).map_err(|e| GameError::Rules(e.to_string()));
    if let Some(o) = at.options {
        let o = parse(&mut game, o)?;
        game.use_options(&o);
    }
    let t = parse(&mut game, at.state)?;
    grow(&mut game, players, &State::new(t), me, (iterations, style), clock, seed)
}
