//! Games in the Game Description Language (GDL, KIF syntax): a `.kif` file
//! is read ([`parse`]), checked ([`check`]: arities, safety,
//! stratification, `does` dependencies, unknown relations), and translated
//! ([`emit`]) into a program of the rules language that defines the game
//! interface, so a GDL game is played, searched and served like any
//! `.rules` game, and the same program runs in SWI-Prolog.
//!
//! The translation: every relation becomes a predicate (`gdl_legal`,
//! `gdl_next`... for GDL's own, `r_NAME` for the game's, so no name clashes
//! with a builtin), with the state's fluent list and the joint move as
//! extra last arguments where the relation depends on `true` or `does`.
//! Relations that depend on neither are computed bottom-up here ([`eval`])
//! and written as facts, so recursion over them always terminates and
//! lookups are indexed. Rule bodies are reordered for Prolog: negations
//! and `distinct` after the literals that bind their variables, recursive
//! calls last. The generic part (rounds, joint moves, display) is
//! `prelude.pl`.

mod check;
mod emit;
mod eval;
mod ground;
pub mod parse;

/// The game layer's step on a game's network (see [`ground::step`]).
pub(crate) use ground::step;

use crate::syntax::{Diagnostic, Span};

/// A term: a symbol, a variable or a function applied to terms.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Sym(String, Span),
    Var(String, Span),
    Fn(String, Vec<Term>, Span),
}

impl Term {
    /// The variables, in order of occurrence (with repeats).
    pub fn vars<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Term::Sym(..) => {}
            Term::Var(v, _) => out.push(v),
            Term::Fn(_, args, _) => args.iter().for_each(|a| a.vars(out)),
        }
    }
}

/// A relation applied to terms: a fact, a head or a body literal.
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    pub rel: String,
    pub rel_span: Span,
    pub args: Vec<Term>,
    pub span: Span,
}

impl Atom {
    pub fn vars<'a>(&'a self, out: &mut Vec<&'a str>) {
        self.args.iter().for_each(|a| a.vars(out));
    }
}

/// A body literal as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Pos(Atom),
    Not(Box<Lit>, Span),
    Distinct(Term, Term, Span),
    Or(Vec<Lit>, Span),
    And(Vec<Lit>, Span),
}

/// A fact or a rule `(<= head body...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub head: Atom,
    pub body: Vec<Lit>,
    pub span: Span,
}

/// A body literal once `or` and `and` are expanded: a negation holds a
/// disjunction of conjunctions.
#[derive(Clone, Debug, PartialEq)]
pub enum Flat {
    Pos(Atom),
    Distinct(Term, Term, Span),
    Not(Vec<Vec<Flat>>, Span),
}

impl Flat {
    pub fn vars<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Flat::Pos(a) => a.vars(out),
            Flat::Distinct(x, y, _) => {
                x.vars(out);
                y.vars(out);
            }
            Flat::Not(alts, _) => alts.iter().flatten().for_each(|l| l.vars(out)),
        }
    }
    pub fn span(&self) -> Span {
        match self {
            Flat::Pos(a) => a.span,
            Flat::Distinct(_, _, s) | Flat::Not(_, s) => *s,
        }
    }
}

/// A clause with a flat body (one clause per `or` branch).
#[derive(Clone, Debug, PartialEq)]
pub struct FlatClause {
    pub head: Atom,
    pub body: Vec<Flat>,
    pub span: Span,
}

/// Most clauses one rule may expand to through `or`.
const MAX_EXPANSION: usize = 4096;

/// Expands `or` and `and`: every combination of branches.
#[allow(clippy::result_large_err)] // errors are the cold path
fn expand(body: &[Lit], span: Span) -> Result<Vec<Vec<Flat>>, Diagnostic> {
    let mut out: Vec<Vec<Flat>> = vec![Vec::new()];
    for lit in body {
        let alts = expand_lit(lit)?;
        if out.len() * alts.len() > MAX_EXPANSION {
            return Err(Diagnostic::error(span, "this rule has too many `or` branches", "here")
                .with_help(format!("at most {MAX_EXPANSION} combinations of branches; split the rule")));
        }
        out = out.iter().flat_map(|pre| alts.iter().map(move |a| pre.iter().chain(a).cloned().collect())).collect();
    }
    Ok(out)
}

#[allow(clippy::result_large_err)]
fn expand_lit(lit: &Lit) -> Result<Vec<Vec<Flat>>, Diagnostic> {
    Ok(match lit {
        Lit::Pos(a) => vec![vec![Flat::Pos(a.clone())]],
        Lit::Distinct(x, y, s) => vec![vec![Flat::Distinct(x.clone(), y.clone(), *s)]],
        Lit::Not(inner, s) => vec![vec![Flat::Not(expand_lit(inner)?, *s)]],
        Lit::Or(branches, s) => {
            let mut out = Vec::new();
            for b in branches {
                out.extend(expand_lit(b)?);
                if out.len() > MAX_EXPANSION {
                    return Err(Diagnostic::error(*s, "this `or` has too many branches", "here"));
                }
            }
            out
        }
        Lit::And(items, s) => expand(items, *s)?,
    })
}

/// A GDL file translated to the rules language.
pub struct Translation {
    /// The program: the game's relations, then the generic interface.
    pub program: String,
    /// Warnings (rendered by the caller with the KIF source).
    pub warnings: Vec<Diagnostic>,
    /// An engine with `program` loaded ([`translate_game`] loads it to
    /// probe the game; a large translation is then not read twice).
    pub engine: Option<crate::engine::Engine>,
    /// The game as a network of propositions (the grounded path), or why
    /// it takes the translation's path alone.
    pub net: Result<ground::Shared, String>,
}

impl Translation {
    /// The game the translation is, titled by `path`: run by the engine
    /// that probed it where there is one (the program is not read again).
    pub fn into_game(self, path: &std::path::Path) -> Result<crate::game::Game, crate::game::GameError> {
        let mut spec = crate::game::Spec::new(path, self.program);
        spec = match self.net {
            Ok(net) => spec.with_extension(net),
            Err(why) => spec.with_note(why),
        };
        match self.engine {
            // The probing engine has the network installed already.
            Some(engine) => crate::game::Game::from_engine(spec, engine),
            None => spec.build().map(|(g, _)| g),
        }
    }
}

impl std::fmt::Debug for Translation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Translation")
            .field("program", &self.program)
            .field("warnings", &self.warnings)
            .field("engine", &self.engine.as_ref().map(|_| "loaded"))
            .field("net", &self.net.as_ref().map(|n| n.size()))
            .finish()
    }
}

/// A network as it travels to another machine: with the digest of the
/// rules it was built for.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sent<N> {
    rules: String,
    net: N,
}

/// A game's network as JSON for another machine (with the digest of the
/// rules it is for), or `None` for a game without one.
pub fn network_json(spec: &crate::game::Spec) -> Result<Option<String>, String> {
    let Some(net) = spec.extension().and_then(|e| e.as_any().downcast_ref::<ground::Net>()) else {
        return Ok(None);
    };
    serde_json::to_string(&Sent { rules: spec.digest(), net }).map(Some).map_err(|e| e.to_string())
}

/// `spec` with the network [`network_json`] wrote, checked whole and
/// checked to be for `spec`'s rules (a damaged or foreign network is an
/// error, never a fault in play).
pub fn with_network_json(spec: crate::game::Spec, text: &str) -> Result<crate::game::Spec, String> {
    let sent: Sent<ground::Net> =
        serde_json::from_str(text).map_err(|e| format!("not a network from `network_json`: {e}"))?;
    if sent.rules != spec.digest() {
        return Err(format!(
            "the network is for other rules (digest {}, these rules' {}): every shard must run the same file",
            sent.rules,
            spec.digest()
        ));
    }
    Ok(spec.with_extension(std::sync::Arc::new(sent.net.checked()?)))
}

/// Whether games are grounded where they can be: yes, unless the
/// environment variable `TABULA_GDL_GROUND` is `0` (to compare the paths).
pub fn grounding_on() -> bool {
    std::env::var("TABULA_GDL_GROUND").map_or(true, |v| v != "0")
}

/// Reads, checks and translates a GDL file. `name` titles the game. Every
/// error of the file is returned at once.
pub fn translate(name: &str, src: &str) -> Result<Translation, Vec<Diagnostic>> {
    translate_with(name, src, grounding_on())
}

/// [`translate`], grounding the game (where it can be) or not.
pub fn translate_with(name: &str, src: &str, ground: bool) -> Result<Translation, Vec<Diagnostic>> {
    let sexps = parse::read_sexps(src)?;
    let mut errors = Vec::new();
    let clauses = parse::read_clauses(&sexps, &mut errors);
    let mut flat = Vec::new();
    for c in &clauses {
        match expand(&c.body, c.span) {
            Ok(bodies) => {
                flat.extend(bodies.into_iter().map(|body| FlatClause { head: c.head.clone(), body, span: c.span }))
            }
            Err(d) => errors.push(d),
        }
    }
    let mut analysis = check::check(&flat, &mut errors);
    if errors.iter().any(Diagnostic::is_error) {
        errors.sort_by_key(|d| (d.span.start, d.span.end));
        errors.dedup();
        return Err(errors);
    }
    let facts = eval::static_facts(&flat, &analysis).map_err(|d| vec![d])?;
    analysis.fanout = facts.fanout();
    for (rel, why) in &facts.on_demand {
        analysis.on_demand.insert(rel.clone());
        errors.push(why.clone());
    }
    let description = leading_comment(src);
    let program = emit::program(&title(name), description.as_deref(), &flat, &analysis, &facts);
    let net = if ground {
        ground::build(&flat, &analysis, &facts).map(std::sync::Arc::new).map_err(|e| format!("does not ground: {e}"))
    } else {
        Err("grounding is off".to_string())
    };
    Ok(Translation { program, warnings: errors, engine: None, net })
}

/// Which path a translated game takes, in a line: the network's size, or
/// why there is none.
pub fn path_note(net: &Result<ground::Shared, String>) -> String {
    match net {
        Ok(n) => {
            let (props, lits) = n.size();
            format!("path: grounded ({props} propositions, {lits} literals), with the translation for the rest")
        }
        Err(why) => format!("path: translation ({why})"),
    }
}

/// A game's title from its file name: `rock-paper-scissors` is
/// "Rock paper scissors".
fn title(name: &str) -> String {
    let spaced = name.replace(['-', '_'], " ");
    let mut chars = spaced.chars();
    chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// The comment lines at the top of a file (the game's description).
fn leading_comment(src: &str) -> Option<String> {
    let lines: Vec<&str> = src
        .lines()
        .map(str::trim)
        .take_while(|l| l.starts_with(';') || l.is_empty())
        .filter_map(|l| l.strip_prefix(';'))
        .map(|l| l.trim_start_matches(';').trim())
        .collect();
    let text = lines.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

/// The prelude every translation ends with.
pub const PRELUDE: &str = include_str!("prelude.pl");

/// Random playouts the loader plays to tell a simultaneous game (two roles
/// choosing in the same round) from a turn-taking one, and their length.
const PROBE_PLAYOUTS: u32 = 4;
const PROBE_PLIES: u32 = 150;
/// The work the probe may do (engine steps, not time, so that a game loads
/// the same on every machine: under a second here). A game too slow to tell
/// within it is taken as simultaneous, the safe side: a turn-taking game so
/// marked only has its computer players sample states that are all the
/// same.
const PROBE_STEPS: u64 = 15_000_000;

/// The random games that measure what a ply costs on each path (seeded,
/// the same on both), their length, and the engine steps they may take.
const WALKS: u32 = 2;
const WALK_PLIES: u32 = 40;
const WALK_STEPS: u64 = 3_000_000;
/// Literals per ply under which a network is taken without measuring the
/// translation (it costs microseconds a ply).
const SMALL_PLY: u64 = 20_000;
/// How much faster the translation must be to be taken instead.
const TRANSLATION_MARGIN: f64 = 1.5;

/// Plays the measuring games within `time`: their plies and how long they
/// took (`None` past the limits, or on an error, which playing the game
/// reports).
fn walk(engine: &mut crate::engine::Engine, time: Option<std::time::Duration>) -> Option<(i64, f64)> {
    engine.set_seed(1);
    engine.set_limits(crate::engine::Limits { max_steps: Some(WALK_STEPS), timeout: time, ..Default::default() });
    let started = std::time::Instant::now();
    let answer = engine.query(&format!("gdl_walk({WALKS}, {WALK_PLIES}, Plies)")).ok().and_then(|mut q| q.next());
    let seconds = started.elapsed().as_secs_f64();
    engine.set_limits(crate::engine::Limits::default());
    let plies = answer?.ok()?.bindings.iter().find(|b| b.name == "Plies")?.text.parse().ok()?;
    Some((plies, seconds))
}

/// Whether a grounded game plays faster as its translation alone, and
/// why. A network evaluates all of itself each ply, where the translation
/// asks only what a ply needs: most networks are far faster, but a large
/// one (many ground instances of arithmetic, say) can be slower. Small
/// networks (read in microseconds a ply) are taken as they are; a large
/// one is timed against the translation on the same random games, and the
/// translation is taken only when it is clearly faster. Timing makes this
/// choice depend on the machine only for games where both paths are
/// within a small factor of each other.
fn translation_faster(engine: &mut crate::engine::Engine) -> Option<String> {
    let before = ground::work(engine);
    let (plies, grounded) = walk(engine, None)?;
    let per_ply = (ground::work(engine) - before) / plies.max(1) as u64;
    if per_ply < SMALL_PLY {
        return None;
    }
    ground::set_enabled(engine, false);
    let budget = std::time::Duration::from_secs_f64(grounded / TRANSLATION_MARGIN);
    let translation = walk(engine, Some(budget));
    ground::set_enabled(engine, true);
    let (plies_t, seconds) = translation?;
    (plies_t == plies).then(|| {
        format!(
            "grounds, but its network reads {per_ply} literals a ply, and the translation played the same \
             random games {:.1} times as fast",
            grounded / seconds.max(1e-9)
        )
    })
}

/// [`translate`], then a game whose rounds can have two roles choosing
/// gets `sample_state/3`: the choices a player has not seen are hidden
/// information, so computer players search over the choices they could be,
/// and `play` and `serve` keep them from the other seats until the round
/// ends. Turn-taking games stay games of perfect information. Whether rounds
/// can be simultaneous is found by a few seeded random playouts.
pub fn translate_game(name: &str, src: &str) -> Result<Translation, Vec<Diagnostic>> {
    translate_game_with(name, src, grounding_on())
}

/// [`translate_game`], grounding the game (where it can be) or not.
pub fn translate_game_with(name: &str, src: &str, ground: bool) -> Result<Translation, Vec<Diagnostic>> {
    let mut t = translate_with(name, src, ground)?;
    let mut engine = crate::engine::Engine::new();
    let report = engine.load(name, &t.program);
    if report.has_errors() {
        // A bug of the translation, not of the file: show what it made.
        let rendered = crate::syntax::render(name, &t.program, &report.diagnostics);
        return Err(vec![Diagnostic::error(
            Span::new(0, 0),
            format!("the translation does not load:\n{rendered}"),
            "",
        )]);
    }
    if let Ok(net) = &t.net {
        match ground::install(&mut engine, net) {
            Err(e) => t.net = Err(format!("the network does not load: {e}")),
            Ok(()) => {
                if let Some(why) = translation_faster(&mut engine) {
                    ground::set_enabled(&mut engine, false);
                    t.net = Err(why);
                }
            }
        }
    }
    let goal = format!("gdl_simultaneous({PROBE_PLAYOUTS}, {PROBE_PLIES})");
    engine.set_limits(crate::engine::Limits { max_steps: Some(PROBE_STEPS), ..Default::default() });
    let answer = engine.query(&goal).ok().and_then(|mut q| q.next());
    let out_of_time =
        matches!(&answer, Some(Err(crate::engine::QueryError::Limit { resource, .. })) if resource == "steps");
    if out_of_time {
        t.warnings.push(Diagnostic::warning(
            Span::new(0, 0),
            format!(
                "the random games that tell whether two roles can choose in the same round did not \
                 finish in {} million steps: the game is taken as simultaneous (a choice stays hidden \
                 until its round ends)",
                PROBE_STEPS / 1_000_000
            ),
            "",
        ));
    }
    let simultaneous = out_of_time || answer.is_some_and(|a| a.is_ok());
    let holds = |engine: &mut crate::engine::Engine, goal: &str| {
        engine.query(goal).ok().and_then(|mut q| q.next()).is_some_and(|a| a.is_ok())
    };
    let mut more = String::new();
    if simultaneous {
        more.push_str(
            "\n% Rounds can have two roles choosing: a choice is hidden from the others\n\
             % until the round's last one is made.\n\
             hidden_move(State) :-\n    gdl_hidden_move(State).\n",
        );
    }
    if holds(&mut engine, "gdl_ii(true)") {
        more.push_str(
            "\n% GDL-II: a player sees its own moves and its percepts (`sees`), never\n\
             % the others' moves; a computer player searches over the games that\n\
             % would have shown it the same.\n\
             private_move(_).\n\
             sample_state(State, Viewer, Sampled) :-\n    gdl_ii_sample_state(State, Viewer, Sampled).\n\
             observation(State, Viewer, Numbers) :-\n    gdl_ii_observation(State, Viewer, Numbers).\n",
        );
        if holds(&mut engine, "gdl_roles(Rs), memberchk(random, Rs)") {
            more.push_str(
                "\n% The role `random` is chance: its moves are drawn uniformly at random.\n\
                 chance(State) :-\n    to_move(State, random).\n",
            );
        }
    } else if simultaneous {
        more.push_str("sample_state(State, Viewer, Sampled) :-\n    gdl_sample_state(State, Viewer, Sampled).\n");
    }
    if !more.is_empty() {
        t.program.push_str(&more);
        let report = engine.load(name, &more);
        debug_assert!(!report.has_errors());
    }
    engine.set_limits(crate::engine::Limits::default());
    t.engine = Some(engine);
    Ok(t)
}
