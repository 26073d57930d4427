//! A General Game Playing player: the GGP protocol's messages (`INFO`,
//! `PREVIEW`, `START`, `PLAY`, `STOP`, `ABORT`, S-expressions) answered for
//! one match at a time, in GDL's form (`(PLAY id moves)`, the joint move)
//! or GDL-II's (`(PLAY id turn lastmove percepts)`: only the player's own
//! move and what it saw; the player then plays from a state consistent
//! with everything it was told). The rules a `START` brings are translated like a
//! `.kif` file; the moves are chosen by one of tabula's computer players
//! within the play clock. Symbol names are never relied on (servers
//! scramble them): the roles, moves and fluents are whatever the rules say.

use crate::ai::{self, Controller};
use crate::engine::Arg;
use crate::game::{Game, Play, State};
use crate::gdl::parse::{Sexp, read_sexps};
use std::path::Path;
use std::time::Instant;

/// Seconds kept back from the play clock for the reply to travel.
const MARGIN: f64 = 0.5;

/// A message's answer: its text, and whether the message was malformed
/// (an HTTP 400).
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub text: String,
    pub malformed: bool,
}

fn answer(text: impl Into<String>) -> Answer {
    Answer { text: text.into(), malformed: false }
}

fn malformed(why: &str) -> Answer {
    Answer { text: format!("(error {})", why.replace('(', "[").replace(')', "]")), malformed: true }
}

/// The match being played.
struct Match {
    id: String,
    role: String,
    game: Game,
    players: Vec<String>,
    /// The game so far (GDL-II: the position believed, as `believe` set it).
    play: Play,
    play_clock: f64,
    /// GDL-II: the rounds so far as the player knows them, its action and
    /// its percepts (KIF text, the percepts sorted).
    told: Vec<(String, Vec<String>)>,
}

/// A GGP player: at most one match at a time.
pub struct Player {
    controller: String,
    current: Option<Match>,
    seed: u64,
    /// What happened, one line per message (for the log).
    pub log: Vec<String>,
}

impl Player {
    /// A player choosing its moves with `controller` (as on the command
    /// line: `mcts`, `mcts:500`, `random`...).
    pub fn new(controller: &str, seed: u64) -> Result<Player, String> {
        Controller::parse(controller, None)?;
        Ok(Player { controller: controller.to_string(), current: None, seed, log: Vec::new() })
    }

    /// Answers one message (the body of a POST), received at `received`.
    pub fn handle(&mut self, body: &str, received: Instant) -> Answer {
        let sexps = match read_sexps(body) {
            Ok(s) => s,
            Err(d) => return malformed(&d[0].message),
        };
        let [Sexp::List(items, _)] = sexps.as_slice() else {
            return malformed("a message is one list");
        };
        let Some(Sexp::Sym(kind, _)) = items.first() else {
            return malformed("a message starts with its kind");
        };
        let args = &items[1..];
        match (kind.as_str(), args) {
            ("info", []) => {
                let status = if self.current.is_some() { "busy" } else { "available" };
                answer(format!("((name tabula) (status {status}))"))
            }
            ("preview", [Sexp::List(_, _), _]) => answer("ready"),
            ("start", [id, role, Sexp::List(rules, _), start, play]) => {
                let (Some(id), Some(role), Some(_), Some(play)) = (sym(id), sym(role), number(start), number(play))
                else {
                    return malformed("START needs an id, a role, the rules and two clocks");
                };
                if self.current.is_some() {
                    return answer("busy");
                }
                match self.start(&id, &role, rules, play) {
                    Ok(m) => {
                        self.log.push(format!("start {id} as {role}"));
                        self.current = Some(m);
                        answer("ready")
                    }
                    Err(e) => {
                        self.log.push(format!("start {id}: {e}"));
                        malformed(&e)
                    }
                }
            }
            ("play", [id, moves]) => {
                let Some(id) = sym(id) else { return malformed("PLAY needs a match id") };
                if self.current.as_ref().is_none_or(|m| m.id != id) {
                    return answer("busy");
                }
                if !matches!(moves, Sexp::List(..)) && sym(moves).as_deref() != Some("nil") {
                    return malformed("PLAY's moves are NIL or a list, one per role");
                }
                match self.play(moves, received) {
                    Ok(text) => answer(text),
                    Err(e) => {
                        self.log.push(format!("play {id}: {e}"));
                        answer("nil")
                    }
                }
            }
            ("play", [id, turn, last, percepts]) => {
                let Some(id) = sym(id) else { return malformed("PLAY needs a match id") };
                if self.current.as_ref().is_none_or(|m| m.id != id) {
                    return answer("busy");
                }
                let Some(turn) = number(turn).filter(|t| t.fract() == 0.0) else {
                    return malformed("GDL-II's PLAY has a turn number");
                };
                let told = match percepts {
                    Sexp::List(items, _) => items.iter().map(text).collect(),
                    _ if sym(percepts).as_deref() == Some("nil") => Vec::new(),
                    _ => return malformed("GDL-II's percepts are NIL or a list"),
                };
                match self.play_told(turn as usize, last, told, received) {
                    Ok(text) => answer(text),
                    Err(e) => {
                        self.log.push(format!("play {id}: {e}"));
                        answer("nil")
                    }
                }
            }
            ("stop" | "abort", [id, ..]) => {
                let Some(id) = sym(id) else { return malformed("needs a match id") };
                if self.current.as_ref().is_none_or(|m| m.id != id) {
                    return answer("busy");
                }
                if let (Some(m), Some(moves)) = (&self.current, args.get(1))
                    && kind == "stop"
                {
                    self.log.push(format!("stop {} after {}", m.id, text(moves)));
                }
                self.current = None;
                answer(if kind == "stop" { "done" } else { "aborted" })
            }
            _ => malformed(&format!("unknown message {kind} with {} arguments", args.len())),
        }
    }

    fn start(&mut self, id: &str, role: &str, rules: &[Sexp], play_clock: f64) -> Result<Match, String> {
        let kif: String = rules.iter().map(|s| text(s) + "\n").collect();
        let name = format!("ggp-{id}");
        let t = crate::gdl::translate_game(&name, &kif).map_err(|d| {
            let first = d.first().map_or("no rules".to_string(), |d| d.message.clone());
            format!("the rules do not load: {first}")
        })?;
        let mut game = t.into_game(Path::new(&format!("{name}.kif"))).map_err(|e| e.to_string())?;
        let options = game.options_term(&[]).map_err(|e| e.to_string())?;
        let players = game.players(&options).map_err(|e| e.to_string())?;
        if !players.iter().any(|p| p == role) {
            return Err(format!("no role {role} in the rules (roles: {})", players.join(" ")));
        }
        let state = game.initial_state(&options, self.seed).map_err(|e| e.to_string())?;
        let play = Play::new(state);
        Ok(Match { id: id.to_string(), role: role.to_string(), game, players, play, play_clock, told: Vec::new() })
    }

    /// Applies the joint move the message brings, then chooses ours.
    fn play(&mut self, moves: &Sexp, received: Instant) -> Result<String, String> {
        let seed = self.seed;
        self.seed = self.seed.wrapping_add(1);
        let controller = self.controller.clone();
        let m = self.current.as_mut().expect("a match");
        if let Sexp::List(joint, _) = moves {
            let joint: Vec<String> = joint.iter().map(text).collect();
            if joint.len() != m.players.len() {
                return Err(format!("{} moves for {} roles", joint.len(), m.players.len()));
            }
            m.apply(&joint)?;
        }
        let budget = (m.play_clock - MARGIN - received.elapsed().as_secs_f64()).max(0.05);
        m.choose(&controller, budget, seed)
    }
}

impl Player {
    /// GDL-II: records the round the message tells of (none at turn 0),
    /// finds a state consistent with every round told, and chooses from it.
    fn play_told(&mut self, turn: usize, last: &Sexp, told: Vec<String>, received: Instant) -> Result<String, String> {
        let seed = self.seed;
        self.seed = self.seed.wrapping_add(1);
        let controller = self.controller.clone();
        let m = self.current.as_mut().expect("a match");
        if turn > 0 && sym(last).as_deref() != Some("nil") {
            let mut told = told;
            told.sort();
            told.dedup();
            m.told.truncate(turn - 1);
            m.told.push((text(last), told));
        }
        m.believe()?;
        let budget = (m.play_clock - MARGIN - received.elapsed().as_secs_f64()).max(0.05);
        m.choose(&controller, budget, seed)
    }
}

impl Match {
    /// A state consistent with the rounds told (`gdl_ii_believed/3`).
    fn believe(&mut self) -> Result<(), String> {
        let quote = |t: &str| crate::engine::format_atom(t, true);
        let rounds: Vec<String> = self
            .told
            .iter()
            .map(|(a, ps)| format!("r({}, [{}])", quote(a), ps.iter().map(|p| quote(p)).collect::<Vec<_>>().join(", ")))
            .collect();
        let e = self.game.engine();
        let record = e.parse_term(&format!("[{}]", rounds.join(", "))).map_err(|e| e.to_string())?;
        let role = e.parse_term(&quote(&self.role)).map_err(|e| e.to_string())?;
        let r =
            e.call("gdl_ii_believed", &[Arg::In(&record), Arg::In(&role), Arg::Out], 1).map_err(|e| e.to_string())?;
        let Some(mut sol) = r.into_iter().next() else {
            return Err(format!("no play of the game shows {} what it was told", self.role));
        };
        self.play.set_state(State::new(sol.pop().expect("one output")));
        Ok(())
    }

    /// Plays one round: each role that chooses in it, in turn, the action
    /// the joint move gives it (a round ends with a move not made hidden).
    fn apply(&mut self, joint: &[String]) -> Result<(), String> {
        let err = |e: crate::game::GameError| e.to_string();
        loop {
            let mover = self.game.to_move(self.play.state()).map_err(err)?;
            let i = self.players.iter().position(|p| *p == mover).expect("a role");
            let legal = self.game.legal_moves(self.play.state()).map_err(err)?;
            let k = legal
                .iter()
                .position(|l| same(&l.text, &joint[i]))
                .ok_or_else(|| format!("{mover}'s move {} is not legal here", joint[i]))?;
            self.play.make(&mut self.game, &legal[k]).map_err(err)?;
            if self.play.hidden_mover(self.play.ply() - 1).is_none() {
                return Ok(());
            }
        }
    }

    /// Our action this round: the only one we have, or the controller's
    /// choice. Where roles before ours choose in the same round, their
    /// choices are unknown: random ones stand in, and the controller, which
    /// treats them as hidden, decides over samples of them.
    fn choose(&mut self, controller: &str, budget: f64, seed: u64) -> Result<String, String> {
        let err = |e: crate::game::GameError| e.to_string();
        if self.game.outcome(self.play.state()).map_err(err)?.is_some() {
            return Ok("nil".into());
        }
        let role = self.game.engine().parse_term(&crate::engine::format_atom(&self.role, true));
        let role = role.map_err(|e| e.to_string())?;
        let r = self
            .game
            .engine()
            .call("gdl_role_actions", &[Arg::In(self.play.state().term()), Arg::In(&role), Arg::Out], 1)
            .map_err(|e| e.to_string())?;
        let actions: Vec<String> = match r.first().map(|s| self.game.engine().value(&s[0])) {
            Some(crate::engine::Value::List(items)) => {
                items.iter().filter_map(|v| v.as_text().map(str::to_string)).collect()
            }
            _ => Vec::new(),
        };
        if actions.len() == 1 {
            return Ok(actions[0].clone());
        }
        let mut s = self.play.state().clone();
        let mut walk = crate::game::Walk::new(seed);
        loop {
            let mover = self.game.to_move(&s).map_err(err)?;
            if mover == self.role {
                break;
            }
            let legal = self.game.legal_moves(&s).map_err(err)?;
            s = legal[walk.pick(legal.len())].next.clone();
        }
        let c = Controller::parse(controller, Some(budget))?;
        let legal = self.game.legal_moves(&s).map_err(err)?;
        let choice = ai::choose(&mut self.game, &self.players, &s, &c, seed, 1).map_err(err)?;
        let k = ai::position_of(&mut self.game, &legal, &choice).map_err(err)?;
        Ok(legal[k].text.clone())
    }
}

/// Two moves written alike (case and spacing aside).
fn same(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase().replace("( ", "(").replace(" )", ")")
    };
    norm(a) == norm(b)
}

fn sym(s: &Sexp) -> Option<String> {
    match s {
        Sexp::Sym(x, _) => Some(x.clone()),
        _ => None,
    }
}

fn number(s: &Sexp) -> Option<f64> {
    sym(s)?.parse().ok().filter(|x: &f64| x.is_finite() && *x >= 0.0)
}

/// An S-expression written back as KIF.
pub fn text(s: &Sexp) -> String {
    match s {
        Sexp::Sym(x, _) => x.clone(),
        Sexp::Var(v, _) => format!("?{v}"),
        Sexp::List(items, _) => format!("({})", items.iter().map(text).collect::<Vec<_>>().join(" ")),
    }
}
