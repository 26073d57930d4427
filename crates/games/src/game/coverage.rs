//! Rule coverage: which clauses of a `.rules` file ran, and which goals of
//! their bodies ran and succeeded, over random games. The rules are
//! loaded with a counter put around each goal (`'$cov'(K)`, a builtin
//! that counts and succeeds), spliced into the text at the places the
//! parser gives, so everything else (comments, layout, the order of
//! clauses) is the designer's own; the counters change nothing of what
//! the rules do (perft counts are the same: a test checks it).

use super::{Game, GameError, Spec};
use crate::engine::host::{Machine, Res};
use crate::engine::{Cell, Engine};
use crate::syntax::{self, Ast, Span};
use std::path::Path;

/// What one counter counts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Port {
    /// A clause's head matched and its body began (for a fact: it was
    /// used).
    Entered,
    /// A body goal was called.
    Called,
    /// It succeeded (each time: a goal that succeeds again on
    /// backtracking counts again).
    Exited,
}

/// A clause of the file, and how often it ran.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClauseCount {
    /// `name/arity`.
    pub predicate: String,
    pub line: usize,
    /// Where the clause is, in bytes of the file.
    #[serde(skip)]
    pub span: Span,
    pub entered: u64,
    pub goals: Vec<GoalCount>,
}

/// A body goal, and how often it was called and succeeded.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GoalCount {
    /// As written (on one line, shortened).
    pub goal: String,
    pub line: usize,
    pub column: usize,
    /// Where the goal is, in bytes of the file.
    #[serde(skip)]
    pub span: Span,
    pub called: u64,
    pub succeeded: u64,
}

/// The clauses of a file, with their counts.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Coverage {
    pub games: u32,
    pub clauses: Vec<ClauseCount>,
}

impl Coverage {
    /// The clauses that never ran.
    pub fn dead_clauses(&self) -> impl Iterator<Item = &ClauseCount> {
        self.clauses.iter().filter(|c| c.entered == 0)
    }

    /// The goals of clauses that ran that were never called, or never
    /// succeeded.
    pub fn dead_goals(&self) -> impl Iterator<Item = (&ClauseCount, &GoalCount)> {
        self.clauses
            .iter()
            .filter(|c| c.entered > 0)
            .flat_map(|c| c.goals.iter().map(move |g| (c, g)))
            .filter(|(_, g)| g.called == 0 || g.succeeded == 0)
    }
}

/// The counters, kept in the engine for `'$cov'/1`.
struct Counts(Vec<u64>);

/// `'$cov'(+K)`: counts K, succeeds.
fn bi_cov(m: &mut Machine, a: &[Cell]) -> Res {
    let Cell::Int(k) = m.store.deref(a[0]) else { return Ok(true) };
    if let Some(counts) = m.ext.as_mut().and_then(|e| e.downcast_mut::<Counts>())
        && let Some(c) = counts.0.get_mut(k as usize)
    {
        *c += 1;
    }
    Ok(true)
}

/// A counter's place: what it counts, in which clause (by index), and
/// for a goal, its index in the clause and its span.
struct Counter {
    port: Port,
    clause: usize,
    goal: Option<(usize, Span)>,
}

/// The rules' text with a counter around every goal, and what each counts.
struct Instrumented {
    text: String,
    counters: Vec<Counter>,
    /// Each clause: its predicate and span.
    clauses: Vec<(String, Span)>,
}

fn instrument(src: &str) -> Instrumented {
    let program = syntax::parse_program(src);
    // Insertions: (offset, text), applied from the last.
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let mut counters: Vec<Counter> = Vec::new();
    let mut clauses = Vec::new();
    let mut counter = |port: Port, clause: usize, goal: Option<(usize, Span)>| {
        counters.push(Counter { port, clause, goal });
        format!("'$cov'({})", counters.len() - 1)
    };
    for c in &program.clauses {
        let Some((head, body)) = c.term.head_body() else { continue };
        let Some(predicate) = indicator(head) else { continue };
        let k = clauses.len();
        clauses.push((predicate, c.span));
        let entered = counter(Port::Entered, k, None);
        match body {
            None => inserts.push((head.span().end, format!(" :- {entered}"))),
            Some(b) => {
                inserts.push((b.span().start, format!("{entered}, ")));
                for (i, g) in b.conjuncts().into_iter().enumerate() {
                    let s = g.span();
                    let called = counter(Port::Called, k, Some((i, s)));
                    let exited = counter(Port::Exited, k, Some((i, s)));
                    inserts.push((s.start, format!("{called}, (")));
                    inserts.push((s.end, format!("), {exited}")));
                }
            }
        }
    }
    // From the end, so earlier offsets hold; at one offset, a goal's
    // closing text before the next goal's opening text.
    let order: Vec<usize> = {
        let mut o: Vec<usize> = (0..inserts.len()).collect();
        o.sort_by_key(|&i| (std::cmp::Reverse(inserts[i].0), std::cmp::Reverse(i)));
        o
    };
    let mut text = src.to_string();
    for i in order {
        text.insert_str(inserts[i].0, &inserts[i].1);
    }
    Instrumented { text, counters, clauses }
}

/// `name/arity` of a clause head.
fn indicator(head: &Ast) -> Option<String> {
    head.key().map(|(n, a)| format!("{n}/{a}"))
}

/// Plays `games` random games (as `check` plays them, from seed `seed`,
/// each at most `max_plies` long) of the game in `src` with its rules
/// counted, asking at each position what the front ends ask, and gives
/// the count of every clause and goal. Each query runs within `limits`;
/// the games stop (with an error) when `stop` says so, asked each ply.
pub fn measure(
    path: &Path,
    src: &str,
    games: u32,
    max_plies: u32,
    seed: u64,
    limits: &crate::engine::Limits,
    stop: &dyn Fn() -> bool,
) -> Result<Coverage, GameError> {
    let ins = instrument(src);
    let mut engine = Engine::new();
    engine.set_limits(limits.clone());
    engine.add_builtin("$cov", 1, bi_cov);
    engine.set_ext(Box::new(Counts(vec![0; ins.counters.len()])));
    let report = engine.load(&path.display().to_string(), &ins.text);
    if report.has_errors() {
        let first = report.diagnostics.iter().find(|d| d.is_error()).map(|d| d.message.clone());
        return Err(GameError::Rules(format!(
            "the rules with their counters do not load ({}): is the file a .rules file that loads?",
            first.unwrap_or_default()
        )));
    }
    let mut game = Game::from_engine(Spec::new(path, ins.text.as_str()), engine)?;
    let options = game.options_term(&[])?;
    game.players(&options)?;
    let (problems, _) = game.check_play(&options, games, max_plies, seed);
    if let Some(p) = problems.first() {
        return Err(GameError::Rules(format!("the random games fail: {p}")));
    }
    front_ends(&mut game, &options, games, max_plies, seed, stop)?;
    let counts = game.engine().ext_mut::<Counts>().map(|c| std::mem::take(&mut c.0)).unwrap_or_default();
    let line_col = |s: Span| syntax::diag::line_col(src, s.start);
    let mut out: Vec<ClauseCount> = (ins.clauses.iter())
        .map(|(p, s)| ClauseCount {
            predicate: p.clone(),
            line: line_col(*s).0,
            span: *s,
            entered: 0,
            goals: Vec::new(),
        })
        .collect();
    for (k, c) in ins.counters.iter().enumerate() {
        let n = counts.get(k).copied().unwrap_or(0);
        let clause = &mut out[c.clause];
        match (&c.port, c.goal) {
            (Port::Entered, _) => clause.entered = n,
            (Port::Called, Some((_, s))) => {
                let (line, column) = line_col(s);
                let written: String = src[s.start..s.end].split_whitespace().collect::<Vec<_>>().join(" ");
                let goal = if written.chars().count() > 60 {
                    format!("{}...", written.chars().take(57).collect::<String>())
                } else {
                    written
                };
                clause.goals.push(GoalCount { goal, line, column, span: s, called: n, succeeded: 0 });
            }
            (Port::Exited, Some((i, _))) => clause.goals[i].succeeded = n,
            _ => {}
        }
    }
    Ok(Coverage { games, clauses: out })
}

/// What the front ends ask besides the random games' checks: the integer
/// actions and their labels, and over random games of their own: the
/// board as each seat and a spectator see it
/// (`display/2`, `view/3`), the position's notation, the scores, each
/// seat's value (`value/3`, what the computer players weigh), some legal
/// moves' clicks, and the game's own player (`choose_move/3`, a few times
/// a game).
fn front_ends(
    game: &mut Game,
    options: &crate::engine::Tmpl,
    games: u32,
    max_plies: u32,
    seed: u64,
    stop: &dyn Fn() -> bool,
) -> Result<(), GameError> {
    let players = game.players(options)?;
    let viewers: Vec<String> = players.iter().cloned().chain(std::iter::once("spectator".to_string())).collect();
    // The integer actions' labels (`notation/2`), as Python lists them.
    if let Some(space) = game.action_space(options)? {
        for a in 0..space.len().min(100_000) {
            if let Some(m) = game.move_of(&space, a)? {
                game.move_text(&m)?;
            }
        }
    }
    for g in 0..u64::from(games) {
        let mut walk = super::Walk::new(seed.wrapping_add(g));
        let mut s = game.initial_state(options, seed.wrapping_add(g))?;
        for ply in 0..max_plies {
            if stop() {
                return Err(GameError::Rules("the coverage was stopped".into()));
            }
            for v in &viewers {
                game.display(&s, v)?;
                game.view(&s, v)?;
            }
            game.position_text(&s)?;
            game.scores(&s, &players)?;
            for p in &players {
                game.value(&s, p)?;
            }
            if game.outcome(&s)?.is_some() {
                break;
            }
            let legal = game.legal_moves(&s)?;
            if legal.is_empty() {
                break;
            }
            // The clicks of some moves (at most 16 a position, spread over
            // the list), and the game's own player now and then (it may
            // search).
            if game.has("move_clicks", 3) {
                let step = legal.len().div_ceil(16);
                for m in legal.iter().step_by(step) {
                    game.move_clicks(&s, &m.mv)?;
                }
            }
            // What mcts asks of the rules in its playouts.
            game.playout_plies(&s)?;
            game.prior_playouts(&s)?;
            game.playout_move(&s)?;
            if ply % 16 == 0 && game.has("choose_move", 3) && !game.chance(&s)? {
                game.choose_move(&s, 1)?;
            }
            s = legal[walk.pick(legal.len())].next.clone();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_go_around_each_goal_and_change_nothing_else() {
        let src = "% a game\nfact(1).\np(X) :- q(X), ( X > 0 -> true ; fail ), !.\nq(X) :- X = 1 ; X = 2.\n:- dynamic(r/1).\n";
        let ins = instrument(src);
        assert_eq!(
            ins.text,
            "% a game\nfact(1) :- '$cov'(0).\np(X) :- '$cov'(1), '$cov'(2), (q(X)), '$cov'(3), '$cov'(4), (( X > 0 -> true ; fail )), '$cov'(5), '$cov'(6), (!), '$cov'(7).\nq(X) :- '$cov'(8), '$cov'(9), (X = 1 ; X = 2), '$cov'(10).\n:- dynamic(r/1).\n"
        );
        assert_eq!(ins.clauses.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["fact/1", "p/1", "q/1"]);
    }

    /// Every `.rules` game of `games/` loads with its counters and counts
    /// the same perft, and its counters count.
    #[test]
    fn counted_games_play_as_they_did() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../games");
        for path in crate::game::list_games(&dir).into_iter().filter(|p| p.extension().is_some_and(|e| e == "rules")) {
            let src = std::fs::read_to_string(&path).unwrap();
            let ins = instrument(&src);
            let perft = |text: &str, count: bool| {
                let mut engine = Engine::new();
                if count {
                    engine.add_builtin("$cov", 1, bi_cov);
                    engine.set_ext(Box::new(Counts(vec![0; ins.counters.len()])));
                }
                let report = engine.load("g", text);
                assert!(!report.has_errors(), "{}: {:?}", path.display(), report.diagnostics);
                let mut game = Game::from_engine(Spec::new(&path, text), engine).unwrap();
                let o = game.options_term(&[]).unwrap();
                let s = game.initial_state(&o, 0).unwrap();
                let n = game.perft(&s, 2).unwrap();
                let counted = game.engine().ext_mut::<Counts>().map_or(0, |c| c.0.iter().sum::<u64>());
                (n, counted)
            };
            let (plain, _) = perft(&src, false);
            let (counted, counts) = perft(&ins.text, true);
            assert_eq!(plain, counted, "{}", path.display());
            assert!(counts > 0, "{}: nothing counted", path.display());
        }
    }
}
