//! The public GGP corpus (`../shared/gdl-corpus/`, or the folder named by
//! `$TABULA_GDL_CORPUS`; the tests say they skipped when there is none),
//! checked against a second, independent evaluator (`gdl_reference`): the
//! same roles and initial state; along random games, round by round, the
//! same fluents, legal actions of every role, terminal states and goal
//! values; and the same number of joint-move sequences (perft by rounds)
//! from the start.
//!
//! `cargo test` runs a quick pass over every game (it loads, and agrees
//! for the first rounds); `cargo test --release --test gdl_corpus --
//! --ignored` (in `.ci/run`) the full one: `tabula check`'s random games,
//! random games to the end, and games beside the reference to the end.
//! `TABULA_CORPUS_GAMES=chess,quad` runs only the games whose names
//! contain one of those words.

mod gdl_reference;

use gdl_reference::{Eval, G, Kif};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tabula::engine::{Arg, Value};
use tabula::game::{Draw, Game, State};

/// How much of each game a pass plays.
#[derive(Clone, Copy)]
struct Budget {
    /// `tabula check`'s random games, and their length at most.
    check_games: u32,
    check_plies: u32,
    /// Random games played to the end by tabula alone.
    playouts: u64,
    /// Random games played beside the reference, and at most how many
    /// rounds of each (`u64::MAX`: to the end).
    lockstep: u64,
    rounds: u64,
    /// Perft goes one round deeper while it stays under this many leaves
    /// (depth 1 always; `None`: no perft).
    perft_leaves: Option<u64>,
}

const QUICK: Budget =
    Budget { check_games: 0, check_plies: 0, playouts: 0, lockstep: 1, rounds: 10, perft_leaves: Some(100) };
const FULL: Budget =
    Budget { check_games: 2, check_plies: 400, playouts: 3, lockstep: 1, rounds: u64::MAX, perft_leaves: Some(2_000) };
/// The games that take seconds where the others take milliseconds
/// (`benches/gdl-corpus.tsv`): random games under 5 a second, from
/// hundreds to thousands of moves a state found through deep rules (#29's
/// speed work), or load times of seconds (gt_two_thirds: `sum` and
/// `absDiff` over 0..400). The quick pass leaves them to the full pass,
/// which gives them [`HEAVY_FULL`].
const HEAVY: &[&str] = &[
    "alexChess",
    "amazons",
    "amazonsSuicide",
    "battlebrushes",
    "blokbox_simple",
    "factoringImpossibleTurtleBrain",
    "golden_rectangle",
    "gt_two_thirds_4p",
    "gt_two_thirds_6p",
    "linesOfAction",
    "madBishops",
    "othello-comp2007",
    "othelloHoles",
    "quad",
    "reversi",
    "slaughter",
    "zhadu",
];
/// They load, pass a short `check` (one random game of 2 plies: each ply
/// builds every successor, 2,176 of them in amazons) and agree with the
/// reference for 4 rounds and at perft depth 1; none is played to the end.
const HEAVY_FULL: Budget =
    Budget { check_games: 1, check_plies: 2, playouts: 0, lockstep: 1, rounds: 4, perft_leaves: Some(0) };

/// Games that are not valid GDL, and what tabula must say when it refuses
/// them.
const REFUSED: &[(&str, &str)] = &[("speedChess", "`coords` is never defined")];

/// Work the reference may do on one game (calls it answers).
const REFERENCE_CALLS: u64 = 40_000_000;
/// A random game that runs longer than this has not ended.
const PLAYOUT_TIME: Duration = Duration::from_secs(120);

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("TABULA_GDL_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gdl-corpus"),
    };
    dir.is_dir().then_some(dir)
}

/// What one game measured.
struct Row {
    load: Duration,
    warnings: usize,
    perft: Vec<u64>,
    rounds: u64,
    /// Where a random game stopped on a rule of GDL the game breaks.
    broken: Option<String>,
    playouts_per_second: f64,
    /// Seconds spent in each part of the test.
    phases: Vec<(&'static str, f64)>,
}

/// Every game loads, and agrees with the reference for its first rounds
/// and at perft depth 1.
#[test]
fn every_corpus_game_loads_and_agrees_with_a_second_evaluator() {
    run_corpus(|name| (!HEAVY.contains(&name)).then_some(QUICK));
}

/// Every game passes `check`, plays random games to the end, and agrees
/// with the reference along whole random games and in perft.
#[test]
#[ignore = "minutes in release: run by .ci/run"]
fn every_corpus_game_plays_to_the_end_and_agrees_with_a_second_evaluator() {
    run_corpus(|name| Some(if HEAVY.contains(&name) { HEAVY_FULL } else { FULL }));
}

/// The GDL games of `games/` agree with the reference the same way, to
/// the end of their random games (GDL-II's among them: the reference plays
/// `random` as an ordinary role and never asks `sees`).
#[test]
fn our_gdl_games_agree_with_a_second_evaluator() {
    let budget = Budget {
        check_games: 2,
        check_plies: 200,
        playouts: 3,
        lockstep: 3,
        rounds: u64::MAX,
        perft_leaves: Some(5_000),
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kif"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    for path in files {
        match corpus_game(&path, budget) {
            Ok(r) => eprintln!("{}: perft by rounds {:?}, {} rounds checked", path.display(), r.perft, r.rounds),
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
}

/// Runs every game of the corpus with its budget (`None`: left out) on
/// every core, and fails with the list of the games that failed.
fn run_corpus(budget: fn(&str) -> Option<Budget>) {
    let Some(dir) = corpus() else {
        eprintln!("skipped: no GGP corpus at ../shared/gdl-corpus (set TABULA_GDL_CORPUS to its folder)");
        return;
    };
    let only: Vec<String> = std::env::var("TABULA_CORPUS_GAMES")
        .map(|s| s.split(',').map(|w| w.trim().to_lowercase()).filter(|w| !w.is_empty()).collect())
        .unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kif"))
        .filter(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().to_lowercase();
            only.is_empty() || only.iter().any(|w| name.contains(w))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .kif files in {}", dir.display());
    for name in HEAVY {
        assert!(dir.join(format!("{name}.kif")).is_file(), "{name} is listed, but the corpus does not have it");
    }
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(files.len());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(path) = files.get(i) else { break };
                    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                    let Some(budget) = budget(&name) else {
                        eprintln!("{name}: left to the full pass");
                        continue;
                    };
                    let started = Instant::now();
                    let result = corpus_game(path, budget);
                    let took = started.elapsed().as_secs_f64();
                    match &result {
                        Ok(r) => eprintln!(
                            "{name}: loads in {:.2} s, perft by rounds {:?}, {} rounds checked{}, {:.1} playouts/s ({took:.1} s: {})",
                            r.load.as_secs_f64(),
                            r.perft,
                            r.rounds,
                            r.broken.as_ref().map_or(String::new(), |b| format!(" ({b})")),
                            r.playouts_per_second,
                            r.phases.iter().map(|(p, t)| format!("{p} {t:.1}")).collect::<Vec<_>>().join(", ")
                        ),
                        Err(e) => eprintln!("{name}: FAILED ({took:.1} s): {e}"),
                    }
                    results.lock().unwrap().push((name, result));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let failed: Vec<String> =
        results.iter().filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}"))).collect();
    let rows: Vec<&Row> = results.iter().filter_map(|(_, r)| r.as_ref().ok()).collect();
    eprintln!(
        "{} games agree with the reference ({} with load warnings, {} stopped by a rule GDL forbids); {} failed",
        rows.len(),
        rows.iter().filter(|r| r.warnings > 0).count(),
        rows.iter().filter(|r| r.broken.is_some()).count(),
        failed.len()
    );
    assert!(failed.is_empty(), "{} of {} games failed:\n{}", failed.len(), results.len(), failed.join("\n"));
}

/// One game: everything the module's comment lists, within `budget`.
fn corpus_game(path: &Path, budget: Budget) -> Result<Row, String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let name = path.file_stem().unwrap().to_string_lossy();
    let refused = REFUSED.iter().find(|(n, _)| *n == name).map(|(_, why)| *why);
    let (mut g, warnings) = match (tabula::loader::load(path), refused) {
        (Ok(_), Some(why)) => return Err(format!("loads, but it should be refused with {why:?}")),
        (Ok(loaded), None) => loaded,
        (Err(e), Some(why)) if e.to_string().contains(why) => return Ok(Row::refused(started.elapsed())),
        (Err(e), _) => return Err(format!("does not load: {e}")),
    };
    let load = started.elapsed();
    let options = g.options_term(&[]).map_err(|e| e.to_string())?;
    let players = g.players(&options).map_err(|e| e.to_string())?;
    let mut phases = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str| {
        phases.push((name, clock.elapsed().as_secs_f64()));
        clock = Instant::now();
    };
    if budget.check_games > 0 {
        let (problems, _) = g.check_play(&options, budget.check_games, budget.check_plies, 1);
        // A random game stopped by a rule of GDL the game breaks is
        // reported, and is the game's fault: the lockstep below checks
        // that the reference sees the same.
        let problems: Vec<&String> = problems.iter().filter(|p| !p.contains(GDL_FORBIDS)).collect();
        if !problems.is_empty() {
            return Err(format!("tabula check: {problems:?}"));
        }
        lap("check");
    }
    let started = Instant::now();
    let mut played = 0;
    for seed in 0..budget.playouts {
        let start = g.initial_state(&options, seed).map_err(|e| e.to_string())?;
        g.seed(seed);
        match g.random_playout(&start, u64::MAX, Some(PLAYOUT_TIME), Draw::Uniform) {
            Ok(Some((_, tabula::game::PlayoutEnd::Over(_)))) => played += 1,
            Err(e) if e.to_string().contains(GDL_FORBIDS) => {}
            Err(e) => return Err(format!("random game {seed}: {e}")),
            Ok(_) => return Err(format!("random game {seed} did not end in {} s", PLAYOUT_TIME.as_secs())),
        }
    }
    let playouts_per_second = played as f64 / started.elapsed().as_secs_f64();
    if budget.playouts > 0 {
        lap("playouts");
    }

    let kif = Kif::parse(&src).map_err(|e| format!("the reference cannot read it: {e}"))?;
    let mut r = Eval::new(&kif, REFERENCE_CALLS);
    // GDL-II's `random` is chance in tabula, not a seat.
    let every_role: Vec<String> = kif.roles().iter().map(|g| kif.text(g)).collect();
    let roles: Vec<String> = every_role.iter().filter(|r| *r != "random").cloned().collect();
    if roles != players {
        return Err(format!("roles: tabula {players:?}, reference {roles:?}"));
    }
    let start = g.initial_state(&options, 0).map_err(|e| e.to_string())?;
    let init = r.initial()?;
    let (a, b) = (fluents(&mut g, &start)?, texts(&kif, &init));
    if a != b {
        return Err(format!("initial states differ: tabula {a:?}, reference {b:?}"));
    }
    let (mut rounds, mut broken) = (0, None);
    for seed in 0..budget.lockstep {
        let (n, stop) = lockstep(&mut g, &mut r, &kif, &start, &init, seed, budget.rounds)?;
        rounds += n;
        broken = broken.or(stop);
    }
    lap("lockstep");
    let mut perft: Vec<u64> = Vec::new();
    let perft_leaves = budget.perft_leaves.unwrap_or(0);
    for depth in 1..=if budget.perft_leaves.is_some() { u32::MAX } else { 0 } {
        let theirs = reference_perft(&mut r, &init, depth)?;
        // Depth 1 is the product of the roles' legal actions (four roles
        // of 16 in four_way_battle: 65,536 joint moves, too many to
        // enumerate ply by ply there); deeper, tabula's plies are played.
        let ours =
            if depth == 1 { joint_moves(&mut g, &start, &every_role)? } else { round_perft(&mut g, &start, depth)? };
        if ours != theirs {
            return Err(format!("perft by rounds at depth {depth}: tabula {ours}, reference {theirs}"));
        }
        // The next depth's leaves, guessed from this depth's growth.
        let growth = match perft.last() {
            None => ours,
            Some(&before) => ours / before.max(1) + 1,
        };
        perft.push(ours);
        if ours == 0 || ours.saturating_mul(growth) > perft_leaves {
            break;
        }
    }
    lap("perft");
    Ok(Row { load, warnings: warnings.lines().count(), perft, rounds, broken, playouts_per_second, phases })
}

impl Row {
    /// A game refused as it should be.
    fn refused(load: Duration) -> Row {
        Row {
            load,
            warnings: 0,
            perft: Vec::new(),
            rounds: 0,
            broken: Some("refused, as it should be".into()),
            playouts_per_second: 0.0,
            phases: Vec::new(),
        }
    }
}

/// What tabula's errors say when a game breaks one of GDL's rules.
const GDL_FORBIDS: &str = "which GDL forbids";

/// A term written as KIF, as the reference writes it.
fn kif_text(v: &Value) -> String {
    match v {
        Value::Atom(a) | Value::Str(a) => a.clone(),
        Value::Int(i) => i.to_string(),
        Value::Compound(f, args) => {
            let args: Vec<String> = args.iter().map(kif_text).collect();
            format!("({f} {})", args.join(" "))
        }
        other => format!("{other:?}"),
    }
}

/// tabula's state as sorted KIF fluents (a state between rounds).
fn fluents(g: &mut Game, s: &State) -> Result<Vec<String>, String> {
    let list = |v: &Value| match v {
        Value::List(items) => Some(items.clone()),
        Value::Atom(a) if a == "[]" => Some(Vec::new()),
        _ => None,
    };
    match g.engine().value(s.term()) {
        Value::Compound(f, parts) if f == "gdl" && parts.len() == 3 => match (list(&parts[0]), list(&parts[1])) {
            (Some(fs), Some(pending)) if pending.is_empty() => {
                let mut out: Vec<String> = fs.iter().map(kif_text).collect();
                out.sort();
                Ok(out)
            }
            _ => Err(format!("not a state between rounds: {:?}", parts)),
        },
        other => Err(format!("not a GDL state: {other:?}")),
    }
}

/// A role's legal actions in tabula, as KIF, sorted.
fn role_actions(g: &mut Game, s: &State, role: &str) -> Result<Vec<String>, String> {
    let e = g.engine();
    let role = e.parse_term(&tabula::engine::format_atom(role, true)).map_err(|e| e.to_string())?;
    let r = e.call("gdl_role_actions", &[Arg::In(s.term()), Arg::In(&role), Arg::Out], 1).map_err(|e| e.to_string())?;
    let Some(texts) = r.first() else { return Err("gdl_role_actions failed".into()) };
    let mut out: Vec<String> = match e.value(&texts[0]) {
        Value::List(items) => items.iter().map(|v| v.as_text().unwrap_or("?").to_string()).collect(),
        Value::Atom(a) if a == "[]" => Vec::new(),
        other => return Err(format!("not a list: {other:?}")),
    };
    out.sort();
    Ok(out)
}

fn texts(kif: &Kif, gs: &[G]) -> Vec<String> {
    let mut out: Vec<String> = gs.iter().map(|g| kif.text(g)).collect();
    out.sort();
    out
}

/// Plays one random game round by round in both, comparing everything,
/// for at most `max_rounds`; returns the rounds played, and where the game
/// stopped if a role had no legal action (an error in tabula that says
/// GDL forbids it, and no action in the reference).
fn lockstep(
    g: &mut Game,
    r: &mut Eval,
    kif: &Kif,
    start: &State,
    init: &[G],
    seed: u64,
    max_rounds: u64,
) -> Result<(u64, Option<String>), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let roles = kif.roles().to_vec();
    let (mut ours, mut theirs) = (start.clone(), init.to_vec());
    for round in 0..max_rounds {
        let at = |what: String| format!("random game {seed}, round {round}: {what}");
        let (a, b) = (fluents(g, &ours)?, texts(kif, &theirs));
        if a != b {
            return Err(at(format!("the states differ: tabula {a:?}, reference {b:?}")));
        }
        r.set_state(&theirs);
        let over = match g.outcome(&ours) {
            Ok(o) => o.is_some(),
            // A role without a goal value in a terminal state.
            Err(e) if e.to_string().contains(GDL_FORBIDS) => {
                let mut missing = Vec::new();
                for role in &roles {
                    if r.goals(role)?.is_empty() {
                        missing.push(kif.text(role));
                    }
                }
                if !r.terminal()? || missing.is_empty() {
                    return Err(at(format!("tabula says {e}, the reference does not")));
                }
                return Ok((
                    round,
                    Some(format!("random game {seed}: no goal value for {missing:?} at round {round}")),
                ));
            }
            Err(e) => return Err(at(e.to_string())),
        };
        if over != r.terminal()? {
            return Err(at(format!("terminal in {} only", if over { "tabula" } else { "the reference" })));
        }
        if over {
            let players: Vec<String> = roles.iter().map(|x| kif.text(x)).collect();
            let scores = g.scores(&ours, &players).map_err(|e| at(e.to_string()))?;
            for (role, name) in roles.iter().zip(&players) {
                let values = r.goals(role)?;
                let best = values.iter().filter_map(|v| v.parse::<i64>().ok()).max().map(|v| v.to_string());
                let mine = scores.iter().find(|(p, _)| p == name).map(|(_, v)| v.clone());
                if mine != best {
                    return Err(at(format!("goal of {name}: tabula {mine:?}, reference {values:?}")));
                }
            }
            return Ok((round, None));
        }
        let mut joint = Vec::new();
        for role in &roles {
            let name = kif.text(role);
            let legal = r.legal(role)?;
            let (a, b) = (role_actions(g, &ours, &name)?, texts(kif, &legal));
            if a != b {
                return Err(at(format!("legal actions of {name}: tabula {a:?}, reference {b:?}")));
            }
            if legal.is_empty() {
                return match g.to_move(&ours) {
                    Err(e) if e.to_string().contains(GDL_FORBIDS) => {
                        Ok((round, Some(format!("random game {seed}: {name} has no legal action at round {round}"))))
                    }
                    other => Err(at(format!("{name} has no legal action, and tabula says {other:?}"))),
                };
            }
            joint.push((role.clone(), legal[rng.gen_range(0..legal.len())].clone()));
        }
        // tabula plays the round as the choices of the roles that choose.
        loop {
            let mover = g.to_move(&ours).map_err(|e| at(e.to_string()))?;
            let want = joint.iter().find(|(x, _)| kif.text(x) == mover).map(|(_, m)| kif.text(m));
            let mut chosen = None;
            for m in g.moves(&ours).map_err(|e| at(e.to_string()))? {
                if Some(g.move_text(&m).map_err(|e| at(e.to_string()))?) == want {
                    chosen = Some(m);
                }
            }
            let Some(m) = chosen else {
                return Err(at(format!("{mover} cannot play {want:?} in tabula")));
            };
            let more = g.hidden_move(&ours).map_err(|e| at(e.to_string()))?;
            ours = g.play(&ours, &m).map_err(|e| at(e.to_string()))?;
            if !more {
                break;
            }
        }
        theirs = r.next(&joint)?;
    }
    Ok((max_rounds, None))
}

/// Joint-move sequences of `depth` rounds in tabula, played as tabula
/// plays them: a round is the choices of its choosing roles, one ply
/// each. The last round's last choices are counted without building their
/// successors.
fn round_perft(g: &mut Game, s: &State, depth: u32) -> Result<u64, String> {
    if depth == 0 {
        return Ok(1);
    }
    if g.outcome(s).map_err(|e| e.to_string())?.is_some() {
        return Ok(0);
    }
    let within = g.hidden_move(s).map_err(|e| e.to_string())?;
    if depth == 1 && !within {
        return Ok(g.moves(s).map_err(|e| e.to_string())?.len() as u64);
    }
    let mut n = 0;
    for m in g.moves(s).map_err(|e| e.to_string())? {
        let next = g.play(s, &m).map_err(|e| e.to_string())?;
        n += round_perft(g, &next, if within { depth } else { depth - 1 })?;
    }
    Ok(n)
}

/// The joint moves of a state between rounds in tabula: the product of
/// every role's legal actions (0 when the game is over).
fn joint_moves(g: &mut Game, s: &State, roles: &[String]) -> Result<u64, String> {
    if g.outcome(s).map_err(|e| e.to_string())?.is_some() {
        return Ok(0);
    }
    let mut n = 1;
    for role in roles {
        n *= role_actions(g, s, role)?.len() as u64;
    }
    Ok(n)
}

/// The same in the reference: every combination of the roles' legal
/// actions.
fn reference_perft(r: &mut Eval, fluents: &[G], depth: u32) -> Result<u64, String> {
    if depth == 0 {
        return Ok(1);
    }
    r.set_state(fluents);
    if r.terminal()? {
        return Ok(0);
    }
    let roles = r.roles().to_vec();
    let mut choices = Vec::new();
    for role in &roles {
        choices.push(r.legal(role)?);
    }
    if depth == 1 {
        return Ok(choices.iter().map(|c| c.len() as u64).product());
    }
    let mut n = 0;
    let mut pick = vec![0; roles.len()];
    if choices.iter().any(|c| c.is_empty()) {
        return Ok(0);
    }
    loop {
        let joint: Vec<(G, G)> =
            roles.iter().zip(&pick).zip(&choices).map(|((x, &i), c)| (x.clone(), c[i].clone())).collect();
        r.set_state(fluents);
        let next = r.next(&joint)?;
        n += reference_perft(r, &next, depth - 1)?;
        // The next combination, like an odometer.
        let mut k = 0;
        loop {
            if k == pick.len() {
                return Ok(n);
            }
            pick[k] += 1;
            if pick[k] < choices[k].len() {
                break;
            }
            pick[k] = 0;
            k += 1;
        }
    }
}
