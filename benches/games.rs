//! Game workloads side by side with SWI-Prolog on the same files in one
//! run: perft from the start and uniformly random playouts, both through
//! the generic drivers of `crates/games/src/game/driver.pl` (for a GDL game, SWI-Prolog
//! runs its translation, the program tabula runs); then, for tabula alone,
//! the same random games by the steps a front end takes at each ply (the
//! "step loop": `Game::step_playout`, what Python's loop costs in Rust).
//!
//! `cargo bench --bench games`. Perft runs to the deepest depth of the
//! game's `games/NAME.perft` table; `PERFT="breakthrough=5"` sets depths by
//! game, `PLAYOUTS=N` the fewest playouts (more are played until they
//! take half a second), `BENCH_REPEAT=N` how many runs each side's best
//! time is taken of (default 3).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn swipl(root: &Path, game: &Path, goal: &str) -> Option<String> {
    let load = format!(
        "consult(['{}', '{}', '{}'])",
        root.join("compat/swi.pl").display(),
        game.display(),
        root.join("crates/games/src/game/driver.pl").display()
    );
    let out = Command::new("swipl").args(["-q", "-g", &format!("{load}, {goal}"), "-t", "halt"]).output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let depths = std::env::var("PERFT").unwrap_or_default();
    let min_playouts: u64 = std::env::var("PLAYOUTS").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    // Each side's best of this many runs (single runs on a shared machine
    // vary by 20% and more).
    let repeat: u32 = std::env::var("BENCH_REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(3).max(1);
    println!("{:<20} {:<14} {:>12} {:>12} {:>12} {:>7}", "game", "workload", "result", "tabula", "swipl", "ratio");
    // `cargo bench --bench games -- NAME...`: only the games whose name
    // contains one of the words.
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    for game_path in tabula::game::list_games(&root.join("games")) {
        let (mut game, _) = tabula::loader::load(&game_path).expect("game loads");
        if !only.is_empty() && !only.iter().any(|w| game.name.contains(w.as_str())) {
            continue;
        }
        // SWI-Prolog runs a GDL game's translation.
        let path = if tabula::game::is_gdl(&game_path) {
            let file = std::env::temp_dir().join(format!("tabula-bench-{}.pl", game.name));
            std::fs::write(&file, game.source()).expect("write the translation");
            file
        } else {
            game_path.clone()
        };
        // The first option set of the perft table that has counts (a game
        // dealt at random has counts only for explicit deals, which both
        // engines start from alike).
        let table = std::fs::read_to_string(game_path.with_extension("perft")).unwrap_or_default();
        let (set, deepest) = first_set(&table);
        let opts = game.options_term(&set).unwrap();
        let opts_text = game.engine().term_text(&opts);
        let state = game.initial_state(&opts, 0).unwrap();
        let chosen = depths
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == game.name)
            .and_then(|(_, v)| v.parse().ok());
        let depth: u32 = chosen.or(deepest).unwrap_or(3);

        let (mut nodes, mut ours) = (0, f64::INFINITY);
        for _ in 0..repeat {
            let t = Instant::now();
            nodes = game.perft(&state, depth).unwrap();
            ours = ours.min(t.elapsed().as_secs_f64());
        }
        let goal = format!(
            "initial_state({opts_text}, S), findall(T-N, ( between(1, {repeat}, _), statistics(cputime, T0), '$perft'(S, {depth}, N), statistics(cputime, T1), T is T1 - T0 ), Runs), msort(Runs, [T-N|_]), format('~w ~6f~n', [N, T]), flush_output"
        );
        let theirs = swipl(root, &path, &goal).and_then(|o| {
            let mut f = o.split_whitespace();
            let n: u64 = f.next()?.parse().ok()?;
            assert_eq!(n, nodes, "SWI-Prolog's perft differs");
            f.next()?.parse::<f64>().ok()
        });
        row(
            &game.name,
            &format!("perft {depth}"),
            &format!("{nodes}"),
            nodes as f64 / ours,
            theirs.map(|t| nodes as f64 / t),
            "nodes/s",
        );

        // At least `playouts`, and at least half a second of them (a small
        // game plays 300 in a few milliseconds, too short to time); SWI
        // then plays as many.
        game.seed(1);
        let t = Instant::now();
        let (mut plies, mut playouts) = (0, 0);
        while playouts < min_playouts || t.elapsed().as_secs_f64() < 0.5 {
            plies += game.playout(&state).unwrap().0;
            playouts += 1;
        }
        let mut ours = t.elapsed().as_secs_f64();
        // The other runs play as many, from the same seed.
        for _ in 1..repeat {
            game.seed(1);
            let t = Instant::now();
            for _ in 0..playouts {
                game.playout(&state).unwrap();
            }
            ours = ours.min(t.elapsed().as_secs_f64());
        }
        // SWI-Prolog draws moves as tabula does (the same actions, tries
        // and fallback: '$playout_plan'/3, which SWI-Prolog's own
        // inference counts could decide otherwise).
        let plan = playout_plan(&mut game, &opts_text);
        let goal = format!(
            "initial_state({opts_text}, S), {plan}, findall(T, ( between(1, {repeat}, _), statistics(cputime, T0), forall(between(1, {playouts}, _), '$playout_with'(P, S, 0, 1000000000000, _, over(_), _)), statistics(cputime, T1), T is T1 - T0 ), Ts), min_list(Ts, T), format('~6f~n', [T]), flush_output"
        );
        let theirs = swipl(root, &path, &goal).and_then(|o| o.parse::<f64>().ok());
        let avg = plies as f64 / playouts as f64;
        row(
            &game.name,
            "playouts",
            &format!("{avg:.1} plies"),
            playouts as f64 / ours,
            theirs.map(|t| playouts as f64 / t),
            "playouts/s",
        );

        // The same random games by the steps a front end takes at each
        // ply (Python's `State`): where the state stands, its legal
        // actions, the state after one. Where the actions are listed.
        if let Some(space) = game.action_space(&opts).unwrap().filter(|s| s.listed_moves().is_some()) {
            let mut walk = tabula::game::Walk::new(1);
            let t = Instant::now();
            let (mut plies, mut playouts) = (0, 0);
            while playouts < min_playouts || t.elapsed().as_secs_f64() < 0.5 {
                plies += game.step_playout(&space, &state, &mut walk).unwrap();
                playouts += 1;
            }
            let mut best = t.elapsed().as_secs_f64();
            for _ in 1..repeat {
                let mut walk = tabula::game::Walk::new(1);
                let t = Instant::now();
                for _ in 0..playouts {
                    game.step_playout(&space, &state, &mut walk).unwrap();
                }
                best = best.min(t.elapsed().as_secs_f64());
            }
            let avg = plies as f64 / playouts as f64;
            row(&game.name, "step loop", &format!("{avg:.1} plies"), playouts as f64 / best, None, "playouts/s");
        }
    }
}

/// The options and deepest depth of the first set of a perft table with
/// rows (`# options k=v ...` lines start a set).
fn first_set(table: &str) -> (Vec<(String, String)>, Option<u32>) {
    let mut set = Vec::new();
    let mut deepest = None;
    for line in table.lines() {
        if let Some(o) = line.strip_prefix("# options") {
            if deepest.is_some() {
                break;
            }
            set = tabula::game::record::parse_pairs(o).expect("the perft table's options");
        } else if !line.starts_with('#')
            && let [Some(d), Some(n)] =
                [0, 1].map(|i| line.split_whitespace().nth(i).and_then(|x| x.parse::<u64>().ok()))
            && n > 0
        {
            // The deepest depth with leaves (a game over by then has none).
            deepest = deepest.max(Some(d as u32));
        }
    }
    (set, deepest)
}

fn row(game: &str, work: &str, result: &str, ours: f64, theirs: Option<f64>, unit: &str) {
    match theirs {
        Some(t) => println!(
            "{game:<20} {work:<14} {result:>12} {ours:>12.0} {t:>12.0} {:>7.2}  ({unit}, tabula/swipl)",
            ours / t
        ),
        None => println!("{game:<20} {work:<14} {result:>12} {ours:>12.0} {:>12} {:>7}  ({unit})", "-", "-"),
    }
}

/// A goal that binds `P` to the plan tabula's playouts follow from the
/// start (`none`: they list the moves), for SWI-Prolog to follow too.
fn playout_plan(game: &mut tabula::game::Game, opts_text: &str) -> String {
    let goal = format!("initial_state({opts_text}, S), '$playout_plan'({opts_text}, S, sampled(_, _, T, E))");
    let answer = game.engine().query(&goal).ok().and_then(|mut q| q.next()).and_then(Result::ok);
    let value = |name: &str| answer.as_ref()?.bindings.iter().find(|b| b.name == name).map(|b| b.text.clone());
    match (value("T"), value("E")) {
        (Some(t), Some(e)) => format!(
            "action_space({opts_text}, Ms), A =.. ['$actions'|Ms], functor(A, _, K), P = sampled(A, K, {t}, {e})"
        ),
        _ => "P = none".to_string(),
    }
}
