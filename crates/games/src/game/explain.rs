//! "Why is this move illegal?", answered from the rules: each clause of
//! `move/3` is run with the position and the move given, one goal more at
//! a time, and the first goal that fails is reported with its place and
//! the values its variables had; where that goal calls a predicate of the
//! file, its clauses are explained the same way inside it (three levels
//! down). The goals are the file's own text, run as queries, so the
//! variables keep the names the designer gave them.

use super::{Game, GameError, Move, State};
use crate::engine::Limits;
use crate::syntax::{self, Ast, Span};
use std::time::{Duration, Instant};

/// How deep explanations go into the predicates a failed goal calls.
const DEPTH: usize = 3;

/// What one clause says of the move.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Why {
    /// The clause's head does not match the position and the move (it is
    /// for other moves).
    Head { predicate: String, line: usize },
    /// A goal failed: its place, its text, the values of its variables
    /// then, and, for a call of the file's own predicate, why its clauses
    /// failed.
    Failed {
        predicate: String,
        line: usize,
        column: usize,
        goal: String,
        values: Vec<(String, String)>,
        inside: Vec<Why>,
    },
    /// Every goal succeeded: by this clause the move is legal.
    Holds { predicate: String, line: usize },
}

/// What the rules say of a typed move in a position.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A legal move: its notation.
    Legal(String),
    /// No move of the game is written so, or no clause of `move/3` takes a
    /// move of its form.
    NoSuchMove,
    /// Refused: why, clause by clause; `sampled` when the rules ran on a
    /// position the mover cannot tell from this one (hidden pieces dealt
    /// anew), and no value is shown.
    Refused { whys: Vec<Why>, sampled: bool },
}

/// A clause of the file: its head and body goals, as written.
struct ClauseText {
    head: String,
    goals: Vec<(String, Span)>,
    /// The variables' names.
    vars: Vec<String>,
    line: usize,
}

impl Game {
    /// Why `mv` is not a legal move in `s`, clause by clause of `move/3`.
    /// Only a `.rules` file's clauses can be read.
    pub fn explain(&mut self, s: &State, mv: &Move) -> Result<Vec<Why>, GameError> {
        let src = self.spec().source().to_string();
        if super::is_gdl(self.spec().path()) {
            return Err(GameError::Rules(
                "a GDL game's rules are its translation's: explain reads .rules files".into(),
            ));
        }
        let state = self.engine().term_text(s.term());
        let m = self.engine().term_text(&mv.0);
        let saved = self.engine().limits().clone();
        let at = Ask { deadline: Instant::now() + BUDGET, limits: saved.clone() };
        let out = explain_goal(self, &at, &src, "", &format!("move({state}, {m}, _)"), ("move", 3), DEPTH);
        self.engine().set_limits(saved);
        out
    }

    /// What the rules say of `typed` in `s`: legal (typed as a legal
    /// move's notation, a prefix or its number too), no move of the game,
    /// or refused and why. In a game with hidden pieces the rules run on a
    /// position the mover cannot tell from `s`, and no value is shown: a
    /// value there may be a piece dealt anew, not the real one.
    pub fn judge(&mut self, options: &crate::engine::Tmpl, s: &State, typed: &str) -> Result<Verdict, GameError> {
        let legal = self.legal_moves(s)?;
        let Some(mv) = self.move_named(options, typed)? else {
            return Ok(match self.match_move(&legal, typed) {
                Ok(k) => Verdict::Legal(legal[k].text.clone()),
                Err(_) => Verdict::NoSuchMove,
            });
        };
        self.judge_among(&legal, s, &mv)
    }

    /// What the rules say of the move `mv` in `s` (see [`Game::judge`]).
    pub fn judge_move(&mut self, s: &State, mv: &Move) -> Result<Verdict, GameError> {
        let legal = self.legal_moves(s)?;
        self.judge_among(&legal, s, mv)
    }

    fn judge_among(&mut self, legal: &[super::LegalMove], s: &State, mv: &Move) -> Result<Verdict, GameError> {
        if let Some(l) = legal.iter().find(|l| l.mv == *mv) {
            return Ok(Verdict::Legal(l.text.clone()));
        }
        let sampled = self.hidden();
        let seen = if sampled {
            let mover = self.to_move(s)?;
            self.sample_state(s, &mover)?
        } else {
            s.clone()
        };
        let mut whys = self.explain(&seen, mv)?;
        if sampled {
            forget_values(&mut whys);
        }
        if whys.iter().all(|w| matches!(w, Why::Head { .. })) {
            return Ok(Verdict::NoSuchMove);
        }
        Ok(Verdict::Refused { whys, sampled })
    }

    /// The move a person meant by clicking `clicks` (`move_clicks/3`),
    /// legal or not: the first move of the game (of the numbered moves,
    /// `action_space/2`, where the rules number them) whose clicks these
    /// are, or else the move `move_clicks/3` gives for them when asked
    /// backwards. `None`: no move of the game is made so.
    pub fn move_of_clicks(
        &mut self,
        options: &crate::engine::Tmpl,
        s: &State,
        clicks: &[String],
    ) -> Result<Option<Move>, GameError> {
        if !self.has("move_clicks", 3) || clicks.is_empty() {
            return Ok(None);
        }
        let deadline = Instant::now() + BUDGET;
        if let Some(space) = self.action_space(options)?
            && let Some(moves) = space.listed_moves()
        {
            for m in moves {
                if Instant::now() > deadline {
                    break;
                }
                if self.move_clicks(s, m).ok().flatten().is_some_and(|c| c == clicks) {
                    return Ok(Some(m.clone()));
                }
            }
        }
        // Backwards: the clicks given, the move asked (within limits: a
        // move_clicks/3 written one way only may fail, raise or loop).
        let list: Vec<String> = clicks.iter().map(|c| crate::engine::format_atom(c, true)).collect();
        let Ok(clicks) = self.engine().parse_term(&format!("[{}]", list.join(", "))) else { return Ok(None) };
        let saved = self.engine().limits().clone();
        let left = deadline.saturating_duration_since(Instant::now()).max(std::time::Duration::from_millis(50));
        self.engine().set_limits(crate::engine::Limits { timeout: Some(left), ..saved.clone() });
        let found = self.engine().call(
            "move_clicks",
            &[crate::engine::Arg::In(s.term()), crate::engine::Arg::Out, crate::engine::Arg::In(&clicks)],
            1,
        );
        self.engine().set_limits(saved);
        Ok(found
            .ok()
            .and_then(|r| r.into_iter().next())
            .and_then(|mut r| r.pop())
            .filter(|m| m.nvars == 0)
            .map(Move::new))
    }

    /// The move a person typed, legal or not: with numbered moves
    /// (`action_space/2`), the one written so; else the move `notation/2`
    /// reads it as (where it reads backwards), or the text as a ground
    /// term. `None`: no move of the game is written so.
    pub fn move_named(&mut self, options: &crate::engine::Tmpl, typed: &str) -> Result<Option<Move>, GameError> {
        let t: String = typed.split_whitespace().collect();
        if let Some(space) = self.action_space(options)?
            && let Some(moves) = space.listed_moves()
        {
            for m in moves {
                if self.move_text(m)?.split_whitespace().collect::<String>().eq_ignore_ascii_case(&t) {
                    return Ok(Some(m.clone()));
                }
            }
            return Ok(None);
        }
        if self.has("notation", 2)
            && let Ok(text) = self.engine().parse_term(&crate::engine::format_atom(typed.trim(), true))
            && let Ok(r) = self.engine().call("notation", &[crate::engine::Arg::Out, crate::engine::Arg::In(&text)], 1)
            && let Some(m) = r.into_iter().next().and_then(|mut r| r.pop()).filter(|m| m.nvars == 0)
        {
            return Ok(Some(Move::new(m)));
        }
        Ok(self.engine().parse_term(typed).ok().filter(|m| m.nvars == 0).map(Move::new))
    }
}

/// The clauses of `name/arity` in `src`, each with its variables renamed
/// with `suffix` (so that goals of several clauses run in one query), and
/// as written (for the report).
fn clauses(src: &str, (name, arity): (&str, usize), suffix: &str) -> Vec<(ClauseText, ClauseText)> {
    let program = syntax::parse_program(src);
    let mut out = Vec::new();
    for c in &program.clauses {
        let Some((head, body)) = c.term.head_body() else { continue };
        if !head.is(name, arity) {
            continue;
        }
        let text = &src[c.span.start..c.span.end];
        let written = clause_text(src, head, body, &c.vars, c.span.start);
        // The clause again, its variables renamed.
        let mut renamed = text.to_string();
        let mut places: Vec<(usize, usize)> = (c.vars.iter())
            .filter(|(v, _)| v != "_")
            .flat_map(|(v, spans)| spans.iter().map(move |s| (s.end - c.span.start, v.len())))
            .collect();
        places.sort_by(|a, b| b.cmp(a));
        for (end, _) in places {
            renamed.insert_str(end, suffix);
        }
        let renamed = format!("{}.", renamed.trim_end().trim_end_matches('.'));
        let parsed = syntax::parse_program(&renamed);
        let Some(r) = parsed.clauses.first() else { continue };
        let Some((rh, rb)) = r.term.head_body() else { continue };
        let mut query = clause_text(&renamed, rh, rb, &r.vars, 0);
        query.line = written.line;
        out.push((query, written));
    }
    out
}

fn clause_text(src: &str, head: &Ast, body: Option<&Ast>, vars: &[(String, Vec<Span>)], base: usize) -> ClauseText {
    let slice = |s: Span| src[s.start..s.end].to_string();
    let goals =
        body.map_or_else(Vec::new, |b| b.conjuncts().into_iter().map(|g| (slice(g.span()), g.span())).collect());
    ClauseText {
        head: slice(head.span()),
        goals,
        vars: vars.iter().map(|(v, _)| v.clone()).filter(|v| !v.starts_with('_')).collect(),
        line: syntax::diag::line_col(src, base.max(head.span().start)).0,
    }
}

/// Whether `query` has an answer; its first answer's bindings.
/// The time an explanation may take in all (its queries share it: a
/// server answering refused moves is never held longer), and the limits
/// the engine had.
struct Ask {
    deadline: Instant,
    limits: Limits,
}

/// How long one explanation may take, every query together.
const BUDGET: Duration = Duration::from_secs(2);

fn first(game: &mut Game, at: &Ask, query: &str) -> Result<Option<Vec<(String, String)>>, GameError> {
    let left = at.deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(GameError::Limit(format!("explain: the explanation took more than {BUDGET:?}")));
    }
    let timeout = at.limits.timeout.map_or(left, |t| t.min(left));
    game.engine().set_limits(Limits { timeout: Some(timeout), ..at.limits.clone() });
    let mut q = game.engine().query(query).map_err(|e| GameError::Rules(format!("explain: {e}")))?;
    match q.next() {
        None => Ok(None),
        Some(Ok(a)) => Ok(Some(a.bindings.into_iter().map(|b| (b.name, b.display)).collect())),
        Some(Err(e)) => Err(GameError::Rules(format!("explain: {e}"))),
    }
}

/// Why `goal` (run after `prefix`) fails, clause by clause of `pred`.
fn explain_goal(
    game: &mut Game,
    at: &Ask,
    src: &str,
    prefix: &str,
    goal: &str,
    pred: (&str, usize),
    depth: usize,
) -> Result<Vec<Why>, GameError> {
    let suffix = format!("__{depth}");
    let name = format!("{}/{}", pred.0, pred.1);
    let mut out = Vec::new();
    for (q, w) in clauses(src, pred, &suffix) {
        let head = format!("{prefix}({}) = ({goal})", q.head);
        if first(game, at, &head)?.is_none() {
            out.push(Why::Head { predicate: name.clone(), line: w.line });
            continue;
        }
        let mut reached = head.clone();
        let mut failed = None;
        for (k, (g, _)) in q.goals.iter().enumerate() {
            let next = format!("{reached}, ({g})");
            if first(game, at, &next)?.is_none() {
                failed = Some(k);
                break;
            }
            reached = next;
        }
        let Some(k) = failed else {
            out.push(Why::Holds { predicate: name.clone(), line: w.line });
            continue;
        };
        let (text, span) = &w.goals[k];
        let (line, column) = syntax::diag::line_col(src, span.start);
        // The values, when the goal was called, of its variables.
        let answer = first(game, at, &reached)?.unwrap_or_default();
        let values: Vec<(String, String)> = (w.vars.iter())
            .filter(|v| mentions(text, v))
            .filter_map(|v| {
                let renamed = format!("{v}{suffix}");
                // An unbound variable has no value to tell.
                let unbound = |val: &str| {
                    val.starts_with(|c: char| c.is_uppercase() || c == '_')
                        && val.chars().all(|c| c.is_alphanumeric() || c == '_')
                };
                answer.iter().find(|(n, val)| *n == renamed && !unbound(val)).map(|(_, val)| (v.clone(), val.clone()))
            })
            .collect();
        // A call of the file's own predicate: why inside it.
        let mut inside = Vec::new();
        if depth > 1
            && let Some((callee, arity)) = called(&q.goals[k].0)
            && game
                .engine()
                .predicates()
                .iter()
                .any(|(n, a, o)| *n == callee && *a as usize == arity && *o == crate::engine::Origin::Program)
        {
            inside = explain_goal(game, at, src, &format!("{reached}, "), &q.goals[k].0, (&callee, arity), depth - 1)?;
        }
        let values = values.into_iter().map(|(n, v)| (n, shortened(&v, 60))).collect();
        out.push(Why::Failed { predicate: name.clone(), line, column, goal: one_line(text), values, inside });
    }
    Ok(out)
}

/// A goal's text on one line, without its comments, shortened.
fn one_line(text: &str) -> String {
    let words: Vec<&str> = text.lines().flat_map(|l| l.split('%').next().unwrap_or("").split_whitespace()).collect();
    shortened(&words.join(" "), 100)
}

/// `text`, cut to about `max` characters.
fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    format!("{} ...", text.chars().take(max).collect::<String>())
}

/// Whether variable `v` occurs in a goal's text (as a whole word).
fn mentions(text: &str, v: &str) -> bool {
    text.match_indices(v).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + v.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The predicate a goal's text calls, when it is a plain call `name(...)`.
fn called(goal: &str) -> Option<(String, usize)> {
    let p = syntax::parse_program(&format!("g :- {goal}."));
    let (_, body) = p.clauses.first()?.term.head_body()?;
    let (name, arity) = body?.key()?;
    name.starts_with(|c: char| c.is_ascii_lowercase()).then(|| (name.to_string(), arity))
}

/// Drops every value from an explanation (for a position with hidden
/// pieces dealt anew: its values would look real and be made up).
pub fn forget_values(whys: &mut [Why]) {
    for w in whys {
        if let Why::Failed { values, inside, .. } = w {
            values.clear();
            forget_values(inside);
        }
    }
}

/// A refusal as a person reads it: the note on hidden pieces, then the
/// clauses.
pub fn refusal(whys: &[Why], sampled: bool, mover: &str, file: &str) -> String {
    let mut out = String::new();
    if sampled {
        out.push_str(&format!(
            "(the rules run on a position {mover} cannot tell from this one, hidden pieces dealt anew; values are not shown)\n"
        ));
    }
    out.push_str(&written(whys, file));
    out
}

/// The explanation as a person reads it, indented by level.
pub fn written(whys: &[Why], file: &str) -> String {
    let mut out = String::new();
    write_whys(whys, file, 0, &mut out);
    out
}

fn write_whys(whys: &[Why], file: &str, level: usize, out: &mut String) {
    let pad = "  ".repeat(level);
    for w in whys {
        match w {
            Why::Head { predicate, line } => {
                out.push_str(&format!("{pad}{file}:{line}: the clause of {predicate} is for other moves\n"))
            }
            Why::Holds { predicate, line } => {
                out.push_str(&format!("{pad}{file}:{line}: the clause of {predicate} allows it\n"))
            }
            Why::Failed { predicate, line, column, goal, values, inside } => {
                let vals: Vec<String> = values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                let with = if vals.is_empty() { String::new() } else { format!(", with {}", vals.join(", ")) };
                out.push_str(&format!("{pad}{file}:{line}:{column}: in {predicate}, `{goal}` failed{with}\n"));
                write_whys(inside, file, level + 1, out);
            }
        }
    }
}
