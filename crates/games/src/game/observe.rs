//! What a learning agent sees of a position: a fixed-length vector of
//! numbers for one viewer, only what that viewer may see. A game gives its
//! own with `observation(State, Viewer, Numbers)`; a game that draws its
//! board with `view/3` has one derived from the drawing:
//!
//! - one plane (a number per site, in the order of the sites) per kind of
//!   piece, a kind being a (colour, label) pair, and one more plane for
//!   the pieces of any kind not met when the layout was made;
//! - the stack heights, one per site, if the game draws stacks;
//! - whose turn it is, one number per player (all 0 when the game is over);
//! - if the game has hands: for each player, how many pieces of each kind
//!   (and of other kinds) the viewer sees in that hand, then how many it
//!   cannot see.
//!
//! The layout (sites and kinds) is read from the views of the start
//! position and of positions along a few seeded random games, so it is the
//! same every time for the same game and options.

use super::view::{HandItem, View};
use super::{Game, GameError, State, Walk};
use crate::engine::{Arg, Tmpl, Value};
use std::collections::{HashMap, HashSet};

/// Random games played to find the layout of a derived observation, and
/// the most plies of each.
const LAYOUT_GAMES: u64 = 4;
const LAYOUT_PLIES: usize = 200;

/// How a game's observations are made, and how long they are.
#[derive(Clone, Debug)]
pub enum Observer {
    /// The game's own `observation/3`.
    Rules { len: usize },
    /// Derived from `view/3`.
    Derived(Layout),
}

impl Observer {
    /// How many numbers an observation has.
    pub fn len(&self) -> usize {
        match self {
            Observer::Rules { len } => *len,
            Observer::Derived(layout) => layout.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The layout of an observation derived from `view/3`.
#[derive(Clone, Debug)]
pub struct Layout {
    pub sites: Vec<String>,
    site_index: HashMap<String, usize>,
    /// The kinds of piece, as (colour, label), sorted.
    pub kinds: Vec<(String, String)>,
    pub players: Vec<String>,
    pub stacks: bool,
    pub hands: bool,
}

impl Layout {
    /// How many numbers an observation has.
    pub fn len(&self) -> usize {
        let (s, k, p) = (self.sites.len(), self.kinds.len() + 1, self.players.len());
        k * s + if self.stacks { s } else { 0 } + p + if self.hands { p * (k + 1) } else { 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The plane of a kind of piece: the last for kinds not met when the
    /// layout was made.
    fn kind(&self, colour: &str, label: &str) -> usize {
        self.kinds.binary_search_by(|(c, l)| (c.as_str(), l.as_str()).cmp(&(colour, label))).unwrap_or(self.kinds.len())
    }

    /// The numbers of one view, with `mover` to move (`None`: over).
    fn encode(&self, view: &View, mover: Option<&str>) -> Result<Vec<f32>, String> {
        let (s, k) = (self.sites.len(), self.kinds.len() + 1);
        let mut out = vec![0.0f32; self.len()];
        let site = |id: &str| {
            self.site_index.get(id).copied().ok_or_else(|| {
                format!("view/3 shows site {id}, which the start position does not have: define observation/3")
            })
        };
        for p in &view.pieces {
            out[self.kind(&p.colour, &p.label) * s + site(&p.at)?] += 1.0;
        }
        let mut at = k * s;
        if self.stacks {
            for (id, h) in &view.stacks {
                out[at + site(id)?] = *h as f32;
            }
            at += s;
        }
        if let Some(i) = mover.and_then(|m| self.players.iter().position(|p| p == m)) {
            out[at + i] = 1.0;
        }
        at += self.players.len();
        if self.hands {
            for h in &view.hands {
                let Some(i) = self.players.iter().position(|p| *p == h.player) else { continue };
                let base = at + i * (k + 1);
                for item in &h.items {
                    match item {
                        HandItem::Piece(p) => out[base + self.kind(&p.colour, &p.label)] += 1.0,
                        HandItem::Hidden { count } => out[base + k] += *count as f32,
                    }
                }
            }
        }
        Ok(out)
    }
}

impl Game {
    /// How observations of this game are made: the rules' own
    /// `observation/3`, or derived from `view/3`. A game with neither, or
    /// whose drawing has no fixed set of sites, gets an error that says so.
    pub fn observer(&mut self, options: &Tmpl, seed: u64) -> Result<Observer, GameError> {
        let players = self.players(options)?;
        if self.has("observation", 3) {
            let start = self.initial_state(options, seed)?;
            let len = self.rules_observation(&start, &players[0])?.len();
            return Ok(Observer::Rules { len });
        }
        if !self.has_view() {
            return Err(GameError::Rules(format!(
                "{} has no observation/3 and no view/3 to derive observations from",
                self.name
            )));
        }
        let mut views = Vec::new();
        for g in 0..LAYOUT_GAMES {
            let mut s = self.initial_state(options, seed.wrapping_add(g))?;
            let mut walk = Walk::new(seed.wrapping_add(g));
            for _ in 0..LAYOUT_PLIES {
                for viewer in players.iter().map(String::as_str).chain(["spectator"]) {
                    views.push(self.view(&s, viewer)?.expect("the game has view/3"));
                }
                if self.outcome(&s)?.is_some() {
                    break;
                }
                // Only the chosen move's successor is built (a wide game
                // has thousands of moves a position).
                let moves = self.moves(&s)?;
                if moves.is_empty() {
                    break;
                }
                s = self.play(&s, &moves[walk.pick(moves.len())])?;
            }
        }
        let sites: Vec<String> = views[0].sites.iter().map(|s| s.id.clone()).collect();
        let first: HashSet<&str> = sites.iter().map(String::as_str).collect();
        if let Some(v) = views.iter().find(|v| v.site_ids() != first) {
            let other = v.site_ids();
            let odd = other.symmetric_difference(&first).next().copied().unwrap_or("?");
            return Err(GameError::Rules(format!(
                "{}: view/3 draws different sites in different positions (such as {odd}), so no fixed \
                 observation can be derived from it: define observation/3",
                self.name
            )));
        }
        let mut kinds: Vec<(String, String)> = Vec::new();
        let mut seen = HashSet::new();
        let hand_pieces = views.iter().flat_map(|v| v.hands.iter().flat_map(|h| &h.items)).filter_map(|i| match i {
            HandItem::Piece(p) => Some(p),
            HandItem::Hidden { .. } => None,
        });
        for p in views.iter().flat_map(|v| &v.pieces).chain(hand_pieces) {
            if seen.insert((p.colour.as_str(), p.label.as_str())) {
                kinds.push((p.colour.clone(), p.label.clone()));
            }
        }
        kinds.sort();
        let layout = Layout {
            site_index: sites.iter().enumerate().map(|(i, s)| (s.clone(), i)).collect(),
            sites,
            kinds,
            players,
            stacks: views.iter().any(|v| !v.stacks.is_empty()),
            hands: views.iter().any(|v| !v.hands.is_empty()),
        };
        Ok(Observer::Derived(layout))
    }

    /// What `viewer` observes of `s`, as `observer` lays it out.
    pub fn observation(&mut self, observer: &Observer, s: &State, viewer: &str) -> Result<Vec<f32>, GameError> {
        let mover = match observer {
            Observer::Derived(_) if self.outcome(s)?.is_none() => Some(self.to_move(s)?),
            _ => None,
        };
        self.observation_with_mover(observer, s, viewer, mover.as_deref())
    }

    /// [`Game::observation`] for a caller that knows who is to move in `s`
    /// (`None`: the game is over), so the rules are not asked again.
    pub fn observation_with_mover(
        &mut self,
        observer: &Observer,
        s: &State,
        viewer: &str,
        mover: Option<&str>,
    ) -> Result<Vec<f32>, GameError> {
        match observer {
            Observer::Rules { len } => {
                let v = self.rules_observation(s, viewer)?;
                if v.len() != *len {
                    return Err(GameError::Rules(format!(
                        "observation/3 gave {} numbers here and {len} in the start position: its length must not change",
                        v.len()
                    )));
                }
                Ok(v)
            }
            Observer::Derived(layout) => {
                let view = self.view(s, viewer)?.expect("a derived observer needs view/3");
                layout.encode(&view, mover).map_err(|e| GameError::Rules(format!("{}: {e}", self.name)))
            }
        }
    }

    /// `observation/3`'s numbers, nested lists flattened in order.
    fn rules_observation(&mut self, s: &State, viewer: &str) -> Result<Vec<f32>, GameError> {
        let v = self.atom(viewer)?;
        let r = self.call1("observation", &[Arg::In(s.term()), Arg::In(&v), Arg::Out], "observation/3")?;
        let mut out = Vec::new();
        fn flatten(v: &Value, out: &mut Vec<f32>) -> bool {
            match v {
                Value::Int(i) => out.push(*i as f32),
                Value::Float(f) => out.push(*f as f32),
                Value::List(items) => return items.iter().all(|i| flatten(i, out)),
                _ => return false,
            }
            true
        }
        if !flatten(&self.engine.value(&r[0]), &mut out) {
            let t = self.engine.term_text(&r[0]);
            return Err(GameError::Rules(format!("observation/3 must give a list of numbers (or of lists), not {t}")));
        }
        Ok(out)
    }
}
