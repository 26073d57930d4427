//! `tabula check`'s game checks: random games played through the
//! interface, each position checked (ground states, moves and notation
//! once each, views, clicks, integer actions, observations, the network
//! against the translation), and what the games were like ([`Played`]).

use super::{ActionSpace, Allowed, Draw, Game, GameError, LegalMove, Move, Observer, Outcome, PlayoutEnd, State, Walk};
use crate::engine::{Arg, Engine, Tmpl, Value};
use std::collections::HashSet;
use std::fmt;

/// What `check`'s random games were like: how they ended, how long they
/// were, how many moves a position had, the slowest ply.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Played {
    pub games: u32,
    /// Wins of each player, in seat order.
    pub wins: Vec<(String, u32)>,
    pub draws: u32,
    /// Games cut off at the ply limit.
    pub unfinished: u32,
    /// Positions played through (plies) and their legal moves, added up.
    pub plies: u64,
    pub moves: u64,
    pub most_moves: usize,
    /// The slowest ply (its checks included): seconds, game and ply (from 1).
    pub slowest: (f64, u32, u32),
}

impl Played {
    fn ended(&mut self, o: &Outcome) {
        match o {
            Outcome::Draw => self.draws += 1,
            Outcome::Winner(p) => match self.wins.iter_mut().find(|(w, _)| w == p) {
                Some((_, n)) => *n += 1,
                None => self.wins.push((p.clone(), 1)),
            },
        }
    }

    fn position(&mut self, moves: usize, seconds: f64, game: u32, ply: u32) {
        self.plies += 1;
        self.moves += moves as u64;
        self.most_moves = self.most_moves.max(moves);
        if seconds > self.slowest.0 {
            self.slowest = (seconds, game + 1, ply + 1);
        }
    }
}

impl fmt::Display for Played {
    /// One line: "5 random games: white won 3, black 2, 0 draws; 41.2
    /// plies a game, 14.1 moves a position (at most 22); slowest ply 3.1
    /// ms (game 2, ply 17)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u32, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        write!(f, "{}:", plural(self.games, "random game"))?;
        let wins: Vec<String> = self.wins.iter().map(|(p, n)| format!("{p} won {n}")).collect();
        if !wins.is_empty() {
            write!(f, " {},", wins.join(", "))?;
        }
        write!(f, " {}", plural(self.draws, "draw"))?;
        if self.unfinished > 0 {
            write!(f, ", {} cut off at the ply limit", self.unfinished)?;
        }
        if self.games > 0 && self.plies > 0 {
            let per_game = self.plies as f64 / self.games as f64;
            let branching = self.moves as f64 / self.plies as f64;
            write!(f, "; {per_game:.1} plies a game, {branching:.1} moves a position (at most {})", self.most_moves)?;
            let (s, g, p) = self.slowest;
            write!(f, "; slowest ply {:.1} ms (game {g}, ply {p})", s * 1000.0)?;
        }
        Ok(())
    }
}

impl Game {
    /// The options that change nothing: for each option with a value to
    /// try besides its default (`between/2` and `oneof/1`), whether the
    /// game starts the same with it (the same seats and initial state, the
    /// same seed). Only `players/2` and `initial_state/2` receive the
    /// options, so such an option is read by no rule that matters: a
    /// setting hard-coded elsewhere, say. One warning for each.
    pub fn unread_options(&mut self) -> Vec<String> {
        let start = |g: &mut Game, given: &[(String, String)]| -> Option<(Vec<String>, State)> {
            let o = g.options_term(given).ok()?;
            Some((g.players(&o).ok()?, g.initial_state(&o, 1).ok()?))
        };
        let Some(default) = start(self, &[]) else { return Vec::new() };
        let mut out = Vec::new();
        for spec in self.options.clone() {
            let other = match &spec.allowed {
                Allowed::Between(l, h) => {
                    let d: i64 = spec.default.parse().unwrap_or(*l);
                    if d < *h {
                        Some((d + 1).to_string())
                    } else if d > *l {
                        Some((d - 1).to_string())
                    } else {
                        None
                    }
                }
                Allowed::OneOf(items) => items.iter().find(|v| **v != spec.default).cloned(),
                Allowed::Any | Allowed::Text => None,
            };
            let Some(value) = other else { continue };
            if start(self, &[(spec.name.clone(), value.clone())]).as_ref() == Some(&default) {
                out.push(format!(
                    "option `{0}` changes nothing: with {0}={value} the game starts as with {0}={1} (the same \
                     seats and initial state). Only players/2 and initial_state/2 receive the options: keep a \
                     setting the rules need in the state",
                    spec.name, spec.default
                ));
            }
        }
        out
    }

    /// A grounded GDL game: where its network and its translation disagree
    /// in state `s` (moves, in order, with their next states; the end),
    /// whether the round a native random playout plays from `s` is one of
    /// the translation's, and whether the network's step (a front end's:
    /// [`Game::status`], [`Game::legal_actions`], [`Game::after_listing`])
    /// gives what the translation gives.
    fn network_differs(&mut self, s: &State, legal: &[LegalMove], space: Option<&ActionSpace>) -> Option<String> {
        let grounded = self.outcome(s).ok()?;
        let native = self.random_playout(s, 1, None, Draw::Uniform).ok().flatten();
        let stepped = self.status(s).ok()?;
        let ext = self.spec.extension()?.clone();
        ext.set_enabled(&mut self.engine, false);
        let plain = self.legal_moves(s);
        let plain_end = self.outcome(s);
        let plain_status = self.status(s);
        let plain_actions = space.map(|sp| self.legal_actions(sp, s));
        ext.set_enabled(&mut self.engine, true);
        let (plain, plain_end, plain_status) = (plain.ok()?, plain_end.ok()?, plain_status.ok()?);
        let state = self.engine.term_text(s.term());
        let texts = |l: &[LegalMove]| l.iter().map(|m| m.text.clone()).collect::<Vec<_>>();
        if texts(legal) != texts(&plain) || legal.iter().zip(&plain).any(|(a, b)| a.next != b.next) {
            return Some(format!(
                "the grounded rules give other moves than the translation in {state}: {:?} against {:?}",
                texts(legal),
                texts(&plain)
            ));
        }
        if grounded != plain_end {
            return Some(format!(
                "the grounded rules end the game otherwise than the translation in {state}: {grounded:?} against \
                 {plain_end:?}"
            ));
        }
        // A turn-taking round: the native playout's must be one of the moves.
        if let Some((1, PlayoutEnd::Cut(next))) = native
            && legal.iter().all(|m| self.engine.term_text(m.next.term()).ends_with(",[],[])"))
            && !legal.iter().any(|m| m.next == next)
        {
            let next = self.engine.term_text(next.term());
            return Some(format!("a native random playout from {state} reached {next}, which no move gives"));
        }
        self.step_differs(s, legal, space, stepped, plain_status, plain_actions).map(|p| format!("in {state}: {p}"))
    }

    /// [`Game::network_differs`]'s check of the step: the status, the
    /// legal actions, and each move's next state (the same template) with
    /// where it stands and its legal actions as a fresh read gives them.
    fn step_differs(
        &mut self,
        s: &State,
        legal: &[LegalMove],
        space: Option<&ActionSpace>,
        stepped: super::Status,
        plain: super::Status,
        plain_actions: Option<Result<Vec<usize>, GameError>>,
    ) -> Option<String> {
        if stepped != plain {
            return Some(format!("the network's step says {stepped:?}, the translation {plain:?}"));
        }
        if let (Some(space), Some(Ok(want))) = (space, plain_actions) {
            match self.legal_actions(space, s) {
                Ok(got) if got == want => {}
                got => return Some(format!("the network's step gives the actions {got:?}, the translation {want:?}")),
            }
        }
        for m in legal {
            // An error is the translation's (the network's step leaves a
            // state that breaks GDL's rules to it), reported at the next
            // ply of the game.
            let Ok(next) = self.after_listing(s, None, &m.mv, space) else { continue };
            if next.state != m.next {
                return Some(format!("the network's step plays {} to another state than move/3's", m.text));
            }
            // Read again after another state: the values made anew.
            self.status(s).ok()?;
            let fresh = self.status(&m.next).ok();
            if Some(&next.status) != fresh.as_ref() {
                return Some(format!(
                    "after {} the network's step says {:?}, a fresh read {fresh:?}",
                    m.text, next.status
                ));
            }
            if let (Some(listed), Some(space)) = (&next.actions, space)
                && self.legal_actions(space, &m.next).ok().as_ref() != Some(listed)
            {
                return Some(format!("after {} the network's step lists the actions {listed:?} otherwise", m.text));
            }
        }
        None
    }

    /// With the optional `move/2` (the moves without their successors):
    /// what is wrong if it does not list, in order, the moves `move/3`
    /// gives.
    fn moves_alone_differ(&mut self, s: &State, legal: &[LegalMove]) -> Option<String> {
        if !self.has("move", 2) {
            return None;
        }
        let alone = match self.engine.call("move", &[Arg::In(s.term()), Arg::Out], usize::MAX) {
            Ok(sols) => sols.into_iter().map(|mut m| m.pop().expect("one output")).collect::<Vec<_>>(),
            Err(e) => return Some(format!("move/2: {e}")),
        };
        let with_next: Vec<&Tmpl> = legal.iter().map(|l| &*l.mv.0).collect();
        (alone.iter().collect::<Vec<_>>() != with_next).then(|| {
            let texts = |ms: &[&Tmpl], e: &mut Engine| ms.iter().map(|m| e.term_text(m)).collect::<Vec<_>>().join(" ");
            let a = texts(&alone.iter().collect::<Vec<_>>(), &mut self.engine);
            let b = texts(&with_next, &mut self.engine);
            format!("move/2 gives [{a}] where move/3 gives [{b}]")
        })
    }

    /// What is wrong with `view/3` and `move_clicks/3` in `s`: each view
    /// in itself, hidden pieces shown to the wrong viewer (and anything a
    /// viewer sees change when `sample_state/3` re-deals what it cannot
    /// see), clicks that are no site or hand item of the mover's.
    /// Each problem comes with its kind (the first of each kind is
    /// reported: one broken rule shows in every position).
    fn view_problems(&mut self, s: &State, legal: &[LegalMove], players: &[String]) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mover = self.to_move(s).unwrap_or_default();
        let mut mover_view = None;
        for viewer in players.iter().map(String::as_str).chain(["spectator"]) {
            let v = match self.view(s, viewer) {
                Ok(Some(v)) => v,
                Ok(None) => return out,
                Err(e) => {
                    out.push(("view", e.to_string()));
                    continue;
                }
            };
            out.extend(v.problems());
            // In a game with nothing hidden every hand is public.
            if self.hidden() {
                out.extend(v.leaks(viewer).into_iter().map(|p| ("hands", p)));
            }
            if self.hidden() && viewer != "spectator" {
                match self.sample_state(s, viewer).and_then(|t| self.view(&t, viewer)) {
                    Ok(Some(w)) if w != v => out.push((
                        "sample",
                        format!(
                            "view/3 shows {viewer} something sample_state/3 re-deals: it reveals what {viewer} may not see"
                        ),
                    )),
                    Err(e) => out.push(("sample", e.to_string())),
                    _ => {}
                }
            }
            if viewer == mover {
                mover_view = Some(v);
            }
        }
        let Some(v) = mover_view else { return out };
        let sites = v.site_ids();
        let hand: HashSet<&str> = v.hand_ids(&mover).collect();
        for m in legal {
            match self.move_clicks(s, &m.mv) {
                Ok(Some(clicks)) => {
                    for c in clicks.iter().filter(|c| !sites.contains(c.as_str()) && !hand.contains(c.as_str())) {
                        let why = format!("move_clicks/3 of {}: {c} is no site, and no item of {mover}'s hand", m.text);
                        out.push(("click", why));
                    }
                }
                Ok(None) => break,
                Err(GameError::Rules(e)) if e.ends_with("failed") => {
                    out.push(("clicks", format!("move_clicks/3 fails for the legal move {}", m.text)));
                }
                Err(e) => out.push(("clicks", e.to_string())),
            }
        }
        out
    }

    /// What is wrong with the integer actions of the legal moves of `s`: a
    /// move without one, (numbered by `action/3`) an action that does not
    /// give its move back, actions listed apart from the moves
    /// ([`Game::legal_actions`]) that are not theirs, or (at every eighth
    /// ply) an action `move/3` accepts that is not a legal move's.
    fn action_problem(
        &mut self,
        space: &ActionSpace,
        options: &Tmpl,
        s: &State,
        ply: u32,
        legal: &[LegalMove],
    ) -> Option<String> {
        let what = if space.listed_moves().is_some() { "action_space/2" } else { "action/3" };
        let mut actions = Vec::with_capacity(legal.len());
        for m in legal {
            match self.action_of(space, &m.mv) {
                Ok(Some(a)) => match self.move_of(space, a) {
                    Ok(Some(back)) if back == m.mv => actions.push(a),
                    Ok(_) => {
                        return Some(format!(
                            "action/3 numbers the move {} {a}, but gives action {a} another move",
                            m.text
                        ));
                    }
                    Err(e) => return Some(e.to_string()),
                },
                Ok(None) => return Some(format!("the legal move {} is not in {what}", m.text)),
                Err(e) => return Some(e.to_string()),
            }
        }
        let mut listed = match self.legal_actions(space, s) {
            Ok(a) => a,
            Err(e) => return Some(e.to_string()),
        };
        actions.sort_unstable();
        listed.sort_unstable();
        if listed != actions {
            return Some(format!(
                "the legal moves' actions are {actions:?}, but listed from move/2 they are {listed:?}"
            ));
        }
        // Asking move/3 about every action costs as much as thousands of
        // moves in chess: every eighth position.
        if !ply.is_multiple_of(8) {
            return None;
        }
        self.accepted_problem(space, options, s, &actions)
    }

    /// An action of `action_space/2` that `move/3` accepts in `s` though it
    /// is no legal move (`actions` are the legal moves'): random playouts
    /// draw actions and play the first that `move/3` accepts.
    fn accepted_problem(
        &mut self,
        space: &ActionSpace,
        options: &Tmpl,
        s: &State,
        actions: &[usize],
    ) -> Option<String> {
        let moves = space.listed_moves()?;
        let r = self.engine.call("$accepted_actions", &[Arg::In(options), Arg::In(s.term()), Arg::Out], 1);
        let accepted = match r {
            Ok(mut r) => r.pop()?.pop()?,
            Err(e) => return Some(super::rules_error("move/3", e).to_string()),
        };
        let accepted: Vec<usize> = match self.engine.value(&accepted) {
            Value::List(items) => items.iter().filter_map(|v| v.as_int()).map(|i| i as usize).collect(),
            _ => return None,
        };
        let a = accepted.into_iter().find(|a| actions.binary_search(a).is_err())?;
        let m = moves.get(a)?.clone();
        let text = self.move_text(&m).unwrap_or_else(|_| self.engine.term_text(&m.0));
        Some(format!(
            "move/3 accepts {text} (action {a}), which is no legal move here (move/2 does not list it): \
             random playouts, which draw actions and play the first move/3 accepts, would play it"
        ))
    }

    /// What is wrong with the observations of `s`: one that the rules'
    /// `observation/3` cannot make, or (with hidden information) one that
    /// changes when `sample_state/3` re-deals what its viewer cannot see.
    /// (A derived observation that cannot be made comes of a view the view
    /// checks report.)
    fn observation_problem(&mut self, observer: &Observer, s: &State, players: &[String]) -> Option<String> {
        for viewer in players {
            let seen = match self.observation(observer, s, viewer) {
                Ok(o) => o,
                Err(e) if matches!(observer, Observer::Rules { .. }) => return Some(e.to_string()),
                Err(_) => return None,
            };
            if self.hidden() {
                match self.sample_state(s, viewer).and_then(|t| self.observation(observer, &t, viewer)) {
                    Ok(o) if o != seen => {
                        return Some(format!(
                            "the observation of {viewer} changes when sample_state/3 re-deals what {viewer} \
                             cannot see: it reveals hidden information"
                        ));
                    }
                    Err(e) => return Some(e.to_string()),
                    _ => {}
                }
            }
        }
        None
    }

    /// What goes wrong in `value/3` (for each player), `playout_plies/2`
    /// or `prior_playouts/2` in a position that is not over, if anything.
    fn search_problem(&mut self, s: &State, players: &[String]) -> Option<String> {
        for p in players {
            if let Err(e) = self.value(s, p) {
                return Some(e.to_string());
            }
        }
        let plies = self.playout_plies(s).err();
        plies.or_else(|| self.prior_playouts(s).err()).map(|e| e.to_string())
    }

    /// What goes wrong in `playout_move/2` in a position that is not over,
    /// if anything: an error, or a move that is not one of `legal`.
    fn policy_problem(&mut self, s: &State, legal: &[LegalMove]) -> Option<String> {
        match self.playout_move(s) {
            Err(e) => Some(e.to_string()),
            Ok(Some(m)) if !legal.iter().any(|l| l.mv == m) => Some(format!(
                "playout_move/2 gives {}, which is not a legal move in {}",
                self.engine.term_text(&m.0),
                self.engine.term_text(s.term())
            )),
            Ok(_) => None,
        }
    }

    /// Plays `games` seeded random games (at most `max_plies` each) and
    /// reports what breaks the interface's rules: states that are not
    /// ground, positions without `to_move/2`, a move or a notation listed
    /// twice, a position with no move that `game_over/2` does not end, a
    /// `value/3`, `playout_plies/2` or `prior_playouts/2` that fails or
    /// gives no number, a
    /// `playout_move/2` that gives an illegal move; and
    /// what the games were like ([`Played`]).
    pub fn check_play(&mut self, options: &Tmpl, games: u32, max_plies: u32, seed: u64) -> (Vec<String>, Played) {
        let mut played = Played::default();
        // Each distinct problem once, with where it was first seen.
        let mut problems: Vec<(String, String)> = Vec::new();
        let mut report = |what: String, g: u32, ply: u32| {
            if !problems.iter().any(|(w, _)| *w == what) {
                problems.push((what, format!("first seen in game {}, ply {}", g + 1, ply + 1)));
            }
        };
        let mut walk = Walk::new(seed);
        let players = match self.players(options) {
            Ok(p) => p,
            Err(e) => {
                report(e.to_string(), 0, 0);
                Vec::new()
            }
        };
        played.wins = players.iter().map(|p| (p.clone(), 0)).collect();
        let mut view_kinds = HashSet::new();
        let space = self.action_space(options).unwrap_or_else(|e| {
            report(e.to_string(), 0, 0);
            None
        });
        // A game that does not number its moves is played by clicks where
        // its rules say how a move is clicked: every legal move must then
        // have click actions of its own.
        // (A GDL game's clicks are the translation's best guess from the
        // moves' arguments, for the web board, which lists the moves where
        // clicks cannot tell them apart: no author claimed them.)
        let clicks = match &space {
            Some(_) => None,
            None if super::is_gdl(self.path()) => None,
            None => self.click_space(options).unwrap_or_else(|e| {
                report(format!("click actions: {e}"), 0, 0);
                None
            }),
        };
        // Observations are checked where the game has them (its own
        // observation/3, or a view/3 with fixed sites).
        let observer = match self.observer(options, seed) {
            Ok(o) => Some(o),
            Err(e) if self.has("observation", 3) => {
                report(e.to_string(), 0, 0);
                None
            }
            Err(_) => None,
        };
        'games: for g in 0..games {
            let mut state = match self.initial_state(options, seed + g as u64) {
                Ok(s) => s,
                Err(e) => {
                    report(format!("initial state: {e}"), g, 0);
                    break;
                }
            };
            played.games += 1;
            for ply in 0..max_plies {
                let started = std::time::Instant::now();
                match self.outcome(&state) {
                    Ok(Some(o)) => {
                        played.ended(&o);
                        break;
                    }
                    Ok(None) if ply + 1 == max_plies => played.unfinished += 1,
                    Ok(None) => {}
                    Err(e) => {
                        report(e.to_string(), g, ply);
                        continue 'games;
                    }
                }
                if let Err(e) = self.to_move(&state) {
                    report(format!("to_move/2 fails in a position that is not over ({e})"), g, ply);
                    continue 'games;
                }
                // The computer players' predicates, where the rules define
                // them: each problem once (a wrong value names its term).
                if !view_kinds.contains("search")
                    && let Some(p) = self.search_problem(&state, &players)
                {
                    view_kinds.insert("search");
                    report(p, g, ply);
                }
                let legal = match self.legal_moves(&state) {
                    Ok(l) => l,
                    Err(e) => {
                        report(e.to_string(), g, ply);
                        continue 'games;
                    }
                };
                if legal.is_empty() {
                    report(
                        "no legal move, and game_over/2 does not end the game (move/3 should offer a pass)".into(),
                        g,
                        ply,
                    );
                    continue 'games;
                }
                if !view_kinds.contains("policy")
                    && let Some(p) = self.policy_problem(&state, &legal)
                {
                    view_kinds.insert("policy");
                    report(p, g, ply);
                }
                if let Some(problem) = self.moves_alone_differ(&state, &legal) {
                    report(problem, g, ply);
                }
                // The first disagreement of the network (each names its
                // state, so each would be new).
                if self.spec.extension().is_some()
                    && !view_kinds.contains("network")
                    && let Some(problem) = self.network_differs(&state, &legal, space.as_ref())
                {
                    view_kinds.insert("network");
                    report(problem, g, ply);
                }
                for i in 0..legal.len() {
                    for j in 0..i {
                        if legal[i].mv == legal[j].mv {
                            report(format!("move/3 gives the move {} twice", legal[i].text), g, ply);
                        } else if legal[i].text == legal[j].text {
                            report(format!("two different moves are both written {}", legal[i].text), g, ply);
                        }
                    }
                }
                for (kind, p) in self.view_problems(&state, &legal, &players) {
                    if view_kinds.insert(kind) {
                        report(p, g, ply);
                    }
                }
                if let Some(space) = &space
                    && let Some(p) = self.action_problem(space, options, &state, ply, &legal)
                {
                    report(p, g, ply);
                }
                // (A click off the board is reported as such already.)
                if let Some(cs) = &clicks
                    && !["click actions", "click", "clicks"].iter().any(|k| view_kinds.contains(k))
                {
                    let moves: Vec<Move> = legal.iter().map(|m| m.mv.clone()).collect();
                    if let Err(e) = self.click_actions(cs, &state, &moves) {
                        view_kinds.insert("click actions");
                        report(e.to_string(), g, ply);
                    }
                }
                if let Some(observer) = &observer
                    && let Some(p) = self.observation_problem(observer, &state, &players)
                    && view_kinds.insert("observation")
                {
                    report(p, g, ply);
                }
                played.position(legal.len(), started.elapsed().as_secs_f64(), g, ply);
                state = legal[walk.pick(legal.len())].next.clone();
            }
        }
        (problems.into_iter().map(|(w, at)| format!("{w} ({at})")).collect(), played)
    }
}
