//! Solving a small game: its exact value under perfect play (a win for
//! one seat, or a draw) and the moves that keep it, by alpha-beta search
//! over the whole game tree with a transposition table of the positions
//! met (keyed by the hash of the state term; a 64-bit key, so two
//! positions of a game of a billion would share one with a chance of
//! about 3 in 100).
//!
//! Two seats, perfect information, no chance: a game with hidden
//! information or chance moves is refused. Values are from the first
//! seat's side (+1 a win, 0 a draw, -1 a loss), and the seat to move
//! maximises or minimises it, so a seat may move twice in a row. A
//! position met again on the line being searched (a game whose rules let
//! it repeat forever) counts as a draw there.

use super::step::Status;
use super::{Game, GameError, Move, Outcome, State};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// What a search may use.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Positions the table may hold (about 40 bytes each).
    pub positions: usize,
    /// The search gives up at this time.
    pub deadline: Option<Instant>,
}

/// Bytes a position of the table takes, about (key, bounds, best move,
/// and the hash table's own room).
pub const BYTES_PER_POSITION: usize = 40;

/// Why a game was not solved.
#[derive(Debug)]
pub enum SolveError {
    /// The game is not one this solver handles.
    Refused(String),
    /// The table outgrew its budget, or time ran out, after this many
    /// nodes and positions.
    TooLarge { nodes: u64, positions: usize, reason: &'static str },
    /// The rules failed.
    Rules(GameError),
}

impl std::fmt::Display for SolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolveError::Refused(why) => write!(f, "{why}"),
            SolveError::TooLarge { nodes, positions, reason } => write!(
                f,
                "too large to solve within {reason}: {positions} positions stored after {nodes} nodes searched"
            ),
            SolveError::Rules(e) => write!(f, "{e}"),
        }
    }
}

impl From<GameError> for SolveError {
    fn from(e: GameError) -> Self {
        SolveError::Rules(e)
    }
}

/// A game solved.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Solution {
    /// The seats, the first one's side being the values'.
    pub players: Vec<String>,
    pub to_move: String,
    /// The winner under perfect play, or `None` for a draw.
    pub winner: Option<String>,
    /// Every move of the seat to move, with what it leads to under
    /// perfect play (the winner, or `None` for a draw).
    pub moves: Vec<MoveValue>,
    /// A line of perfect play to the end: each move keeps the value.
    pub line: Vec<String>,
    /// Nodes searched, and positions the table held.
    pub nodes: u64,
    pub positions: usize,
    pub seconds: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct MoveValue {
    #[serde(rename = "move")]
    pub text: String,
    pub winner: Option<String>,
}

impl Solution {
    /// The moves that keep the game's value.
    pub fn best_moves(&self) -> impl Iterator<Item = &MoveValue> {
        self.moves.iter().filter(move |m| m.winner == self.winner)
    }
}

/// What the table knows of a position: its value lies in
/// `lower..=upper`; the move that was best (or cut off) first.
#[derive(Clone, Copy)]
struct Entry {
    lower: i8,
    upper: i8,
    best: u32,
}

struct Search<'a> {
    game: &'a mut Game,
    first: String,
    budget: Budget,
    table: HashMap<u64, Entry>,
    /// The positions of the line being searched.
    path: HashSet<u64>,
    nodes: u64,
    progress: &'a mut dyn FnMut(u64, usize),
}

impl Search<'_> {
    /// The value of a finished game for the first seat.
    fn value(&self, o: &Outcome) -> i8 {
        match o {
            Outcome::Winner(p) if *p == self.first => 1,
            Outcome::Winner(_) => -1,
            Outcome::Draw => 0,
        }
    }

    fn check(&mut self) -> Result<(), SolveError> {
        self.nodes += 1;
        if self.nodes.is_multiple_of(4096) {
            (self.progress)(self.nodes, self.table.len());
            if self.budget.deadline.is_some_and(|d| Instant::now() > d) {
                return Err(self.too_large("the time given"));
            }
        }
        if self.table.len() > self.budget.positions {
            return Err(self.too_large("the memory given"));
        }
        Ok(())
    }

    fn too_large(&self, reason: &'static str) -> SolveError {
        SolveError::TooLarge { nodes: self.nodes, positions: self.table.len(), reason }
    }

    /// The value of `s` (which stands as `st` says) for the first seat if
    /// it lies inside `alpha..beta`; else a bound beyond the side it fell
    /// (fail-soft).
    fn search(&mut self, s: &State, st: &Status, mut alpha: i8, mut beta: i8) -> Result<i8, SolveError> {
        self.check()?;
        if let Some(o) = &st.outcome {
            return Ok(self.value(o));
        }
        if st.chance {
            return Err(SolveError::Refused("a chance move is met: solve handles games without chance".into()));
        }
        let key = s.term().hash64();
        if self.path.contains(&key) {
            // Met again on this line: the game could go round forever.
            return Ok(0);
        }
        let mut first_try = None;
        if let Some(e) = self.table.get(&key) {
            if e.lower == e.upper || e.lower >= beta {
                return Ok(e.lower);
            }
            if e.upper <= alpha {
                return Ok(e.upper);
            }
            alpha = alpha.max(e.lower);
            beta = beta.min(e.upper);
            first_try = Some(e.best as usize);
        }
        let maximizing = st.mover.as_deref() == Some(self.first.as_str());
        let kids = self.children(s)?;
        if kids.is_empty() {
            return Err(SolveError::Rules(GameError::Rules("a position that is not over has no legal move".into())));
        }
        let mut order: Vec<usize> = (0..kids.len()).collect();
        if let Some(b) = first_try.filter(|&b| b < kids.len()) {
            order.swap(0, b);
        }
        self.path.insert(key);
        let found = self.best_of(s, kids, &order, maximizing, alpha, beta);
        self.path.remove(&key);
        let (best, best_i) = found?;
        let (lower, upper) = if best <= alpha {
            (-1, best)
        } else if best >= beta {
            (best, 1)
        } else {
            (best, best)
        };
        let e = self.table.entry(key).or_insert(Entry { lower: -1, upper: 1, best: best_i as u32 });
        e.lower = e.lower.max(lower);
        e.upper = e.upper.min(upper);
        e.best = best_i as u32;
        Ok(best)
    }

    /// The best of the moves of `s`, in `order`, for the seat to move,
    /// with its index; the search stops at a cut-off.
    fn best_of(
        &mut self,
        s: &State,
        kids: Vec<(Move, Option<State>)>,
        order: &[usize],
        maximizing: bool,
        mut alpha: i8,
        mut beta: i8,
    ) -> Result<(i8, usize), SolveError> {
        let mut best = if maximizing { -2 } else { 2 };
        let mut best_i = order[0];
        let mut kids: Vec<Option<(Move, Option<State>)>> = kids.into_iter().map(Some).collect();
        for &i in order {
            let (m, next) = kids[i].take().expect("each move once");
            // The position after it, and where it stands, in one query
            // where the moves came without their positions.
            let (next, st) = match next {
                Some(n) => {
                    let st = self.game.status(&n)?;
                    (n, st)
                }
                None => self.game.after(s, &m)?,
            };
            let v = self.search(&next, &st, alpha, beta)?;
            if (maximizing && v > best) || (!maximizing && v < best) {
                best = v;
                best_i = i;
            }
            if maximizing {
                alpha = alpha.max(v);
            } else {
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        Ok((best, best_i))
    }

    /// The moves of `s`: without their positions where the rules list
    /// them so (`move/2`: a cut-off then spares building the others), else
    /// with them.
    fn children(&mut self, s: &State) -> Result<Vec<(Move, Option<State>)>, GameError> {
        if self.game.has("move", 2) {
            Ok(self.game.moves(s)?.into_iter().map(|m| (m, None)).collect())
        } else {
            Ok(self.game.successors(s)?.into_iter().map(|(m, n)| (m, Some(n))).collect())
        }
    }

    /// The exact value of `s`.
    fn exact(&mut self, s: &State) -> Result<i8, SolveError> {
        let st = self.game.status(s)?;
        self.search(s, &st, -1, 1)
    }
}

/// Solves the game from `s`: its value, each move's, and a line of
/// perfect play. `progress` is told the nodes searched and the positions
/// stored now and then.
pub fn solve(
    game: &mut Game,
    options: &crate::engine::Tmpl,
    s: &State,
    budget: Budget,
    progress: &mut dyn FnMut(u64, usize),
) -> Result<Solution, SolveError> {
    let started = Instant::now();
    if game.has("chance", 1) {
        return Err(SolveError::Refused(format!("{} has chance moves: solve handles games without chance", game.name)));
    }
    if game.hidden() {
        return Err(SolveError::Refused(format!(
            "{} has hidden information: solve handles games of perfect information",
            game.name
        )));
    }
    let players = game.players(options)?;
    if players.len() != 2 {
        return Err(SolveError::Refused(format!(
            "{} is for {} players: solve handles two-player games",
            game.name,
            players.len()
        )));
    }
    if game.outcome(s)?.is_some() {
        return Err(SolveError::Refused("the game is already over here".into()));
    }
    let to_move = game.to_move(s)?;
    let succ = game.successors(s)?;
    let texts: Vec<String> = succ.iter().map(|(m, _)| game.move_text(m)).collect::<Result<_, _>>()?;
    let mut search = Search {
        game,
        first: players[0].clone(),
        budget,
        table: HashMap::new(),
        path: HashSet::new(),
        nodes: 0,
        progress,
    };
    let root = search.exact(s)?;
    // Each move's own value (the table makes most of them quick).
    search.path.insert(s.term().hash64());
    let mut values = Vec::with_capacity(succ.len());
    for (_, next) in &succ {
        values.push(search.exact(next)?);
    }
    search.path.clear();
    // A line of perfect play: from each position, a move keeping its
    // value (the table's best first), until the end or a repetition.
    let mut line = Vec::new();
    let mut at = s.clone();
    let mut seen = HashSet::new();
    while line.len() < 1000 && seen.insert(at.term().hash64()) && search.game.outcome(&at)?.is_none() {
        let v = search.exact(&at)?;
        let next = search.game.successors(&at)?;
        let hint = search.table.get(&at.term().hash64()).map(|e| e.best as usize);
        let mut chosen = None;
        for i in hint.into_iter().chain(0..next.len()) {
            if i < next.len() && search.exact(&next[i].1)? == v {
                chosen = Some(i);
                break;
            }
        }
        let Some(i) = chosen else { break };
        line.push(search.game.move_text(&next[i].0)?);
        at = next[i].1.clone();
    }
    let winner_of = |v: i8| match v {
        1 => Some(players[0].clone()),
        -1 => Some(players[1].clone()),
        _ => None,
    };
    let moves = texts.into_iter().zip(&values).map(|(text, &v)| MoveValue { text, winner: winner_of(v) }).collect();
    Ok(Solution {
        players: players.clone(),
        to_move,
        winner: winner_of(root),
        moves,
        line,
        nodes: search.nodes,
        positions: search.table.len(),
        seconds: started.elapsed().as_secs_f64(),
    })
}
