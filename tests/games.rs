//! Every game in `games/`: perft tables (`games/NAME.perft`), the same
//! counts in SWI-Prolog, the game-interface checks, and snapshots of what a
//! player sees (initial display, legal moves, a short seeded random game).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use tabula::game::{Game, Outcome, Status};

fn games() -> Vec<PathBuf> {
    tabula::game::list_games(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games"))
}

/// The games, and the game the book's "Writing a game" chapter builds:
/// its perft table and `check` are held to the same standard.
fn games_and_tutorial() -> Vec<PathBuf> {
    let mut all = games();
    all.extend(tabula::game::list_games(&Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/tutorial")));
    all
}

/// An option set and its `(depth, nodes)` rows.
type PerftSet = (Vec<(String, String)>, Vec<(u32, u64)>);

/// Option sets and `(depth, nodes)` rows of a perft file.
fn perft_table(path: &Path) -> Vec<PerftSet> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sets: Vec<PerftSet> = vec![(Vec::new(), Vec::new())];
    for line in text.lines() {
        if let Some(opts) = line.strip_prefix("# options") {
            let pairs = tabula::game::record::parse_pairs(opts).unwrap();
            sets.push((pairs, Vec::new()));
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            let mut f = line.split_whitespace();
            let d = f.next().unwrap().parse().unwrap();
            let n = f.next().unwrap().parse().unwrap();
            sets.last_mut().unwrap().1.push((d, n));
        }
    }
    sets.retain(|(_, rows)| !rows.is_empty());
    sets
}

fn options_prolog(opts: &[(String, String)], game: &mut Game) -> String {
    let t = game.options_term(opts).unwrap();
    game.engine().term_text(&t)
}

/// Each game that has a perft table, loaded, with its table.
fn games_with_tables() -> Vec<(PathBuf, Game, Vec<PerftSet>)> {
    games_and_tutorial()
        .into_iter()
        .filter_map(|path| {
            let table = path.with_extension("perft");
            table.exists().then(|| {
                let (game, _) = tabula::loader::load(&path).unwrap();
                let sets = perft_table(&table);
                (path, game, sets)
            })
        })
        .collect()
}

/// Every row of every table, counted in one walk of the tree
/// (`perft_counts`); the deepest also by `perft`, as `tabula perft` asks.
#[test]
fn perft_tables_hold() {
    for (path, mut game, sets) in games_with_tables() {
        for (opts, rows) in sets {
            let o = game.options_term(&opts).unwrap();
            let s = game.initial_state(&o, 0).unwrap();
            let depth = rows.iter().map(|r| r.0).max().unwrap();
            let counts = game.perft_counts(&s, depth).unwrap();
            assert_eq!(counts.len(), depth as usize, "{} {opts:?}", path.display());
            for &(d, n) in &rows {
                assert_eq!(counts[d as usize - 1], n, "{} {opts:?} depth {d}", path.display());
            }
            let deepest = rows.iter().find(|r| r.0 == depth).unwrap().1;
            assert_eq!(game.perft(&s, depth).unwrap(), deepest, "{} {opts:?} depth {depth}", path.display());
        }
    }
}

/// SWI-Prolog, running the same rules (for a GDL game, its translation)
/// with the same driver, counts what the perft tables say (which tabula
/// counts: `perft_tables_hold`).
#[test]
fn perft_matches_swipl() {
    if !common::swipl_available() {
        eprintln!("swipl not installed: cross-check skipped (CI=true makes this a failure)");
        return;
    }
    let driver = include_str!("../crates/games/src/game/driver.pl");
    for (path, mut game, sets) in games_with_tables() {
        let program = format!("{}\n{driver}", game.source());
        for (opts, rows) in sets {
            let o = options_prolog(&opts, &mut game);
            let depth = rows.iter().map(|r| r.0).max().unwrap();
            // Every depth in one walk of the tree: depth by depth, SWI-Prolog
            // took 107 s on nim.kif's table (depth 12), 4 times the walk.
            let goal = format!(
                "initial_state({o}, S), '$perft_counts'(S, {depth}, Cs), \
                 forall(nth1(D, Cs, N), (write(D-N), nl))"
            );
            let text = common::run_swipl(&program, &goal);
            let theirs: Vec<(u32, u64)> = text
                .lines()
                .filter_map(|l| l.split_once('-'))
                .map(|(d, n)| (d.parse().unwrap(), n.parse().unwrap()))
                .filter(|(d, _)| rows.iter().any(|r| r.0 == *d))
                .collect();
            assert_eq!(theirs, rows, "{} {opts:?}: SWI-Prolog counts differently; it printed:\n{text}", path.display());
        }
    }
}

#[test]
fn every_game_passes_check() {
    for path in games_and_tutorial() {
        let out = Command::new(env!("CARGO_BIN_EXE_tabula")).arg("check").arg(&path).output().unwrap();
        assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("game ok"));
    }
}

/// What `check` warns of, in text (a warning is no error) and in
/// `--json`, which also says what the random games were like: an option
/// that changes nothing (a setting hard-coded in the rules), and
/// `playout_plies/2` without `value/3` (never read: `mcts` then plays to
/// the end, with no value to judge by), and `prior_playouts/2` without it
/// (nothing to count as a prior).
#[test]
fn check_warns_of_what_changes_nothing() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/games_warned");
    for (file, warning) in [
        ("unread_option.rules", "option `limit` changes nothing: with limit=7 the game starts as with limit=6"),
        ("playout_plies_alone.rules", "playout_plies/2 is read only with value/3"),
        ("prior_playouts_alone.rules", "prior_playouts/2 is read only with value/3"),
    ] {
        let path = dir.join(file);
        let out = Command::new(env!("CARGO_BIN_EXE_tabula")).arg("check").arg(&path).output().unwrap();
        let (said, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{file}: a warning is not an error: {err}");
        assert!(err.contains(&format!("warning: {warning}")), "{file}: {err}");
        assert!(said.contains("game ok (1 warning)"), "{file}: {said}");
        let out = Command::new(env!("CARGO_BIN_EXE_tabula")).args(["check", "--json"]).arg(&path).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["warnings"], 1, "{file}");
        assert_eq!(v["cautions"].as_array().unwrap().len(), 1, "{file}");
        assert_eq!(v["played"]["games"], 5, "{file}");
        if file == "unread_option.rules" {
            assert_eq!(v["played"]["draws"], 5, "every game is drawn at 6: {v}");
        }
    }
}

/// A game with nothing hidden may show every player's hand to everyone:
/// only a game with `sample_state/3` has hands to keep secret.
#[test]
fn a_game_with_nothing_hidden_shows_every_hand() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/games_public/public_hands.rules");
    let out = Command::new(env!("CARGO_BIN_EXE_tabula")).arg("check").arg(&path).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("hand"), "{said}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("game ok"));
}

#[test]
fn what_a_player_sees() {
    insta::glob!(concat!(env!("CARGO_MANIFEST_DIR"), "/games"), "*.{rules,kif}", |path| {
        let (mut game, warnings) = tabula::loader::load(path).unwrap();
        assert!(warnings.is_empty(), "{warnings}");
        let o = game.options_term(&[]).unwrap();
        let players = game.players(&o).unwrap();
        let mut s = game.initial_state(&o, 1).unwrap();
        let mut out = format!("{} — seats {}\n", game.title, players.join(", "));
        out.push_str(&game.display(&s, &players[0]).unwrap());
        let legal = game.legal_moves(&s).unwrap();
        out.push_str(&format!(
            "legal moves: {}\n",
            legal.iter().map(|m| m.text.as_str()).collect::<Vec<_>>().join(" ")
        ));
        // Perft to depth 3, or less where the tree is already wide.
        let mut counts = Vec::new();
        for d in 1..=3 {
            if counts.last().is_some_and(|&n| n > 5000) {
                break;
            }
            counts.push(game.perft(&s, d).unwrap());
        }
        out.push_str(&format!("perft 1..{}: {counts:?}\n", counts.len()));
        // A short seeded random game.
        let mut rng = 7u64;
        let mut moves = Vec::new();
        for _ in 0..12 {
            if game.outcome(&s).unwrap().is_some() {
                break;
            }
            let legal = game.legal_moves(&s).unwrap();
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = ((rng >> 33) as usize) % legal.len();
            moves.push(legal[k].text.clone());
            s = legal[k].next.clone();
        }
        out.push_str(&format!("random game: {}\n", moves.join(" ")));
        out.push_str(&game.display(&s, "spectator").unwrap());
        insta::assert_snapshot!(out);
    });
}

/// What the web board draws (`view/3`) at the start and after a short
/// seeded random game, for the first player and a spectator, and the
/// clicks of the legal moves there (`move_clicks/3`).
#[test]
fn what_the_board_shows() {
    insta::glob!(concat!(env!("CARGO_MANIFEST_DIR"), "/games"), "*.{rules,kif}", |path| {
        let (mut game, _) = tabula::loader::load(path).unwrap();
        if !game.has_view() {
            return;
        }
        let o = game.options_term(&[]).unwrap();
        let players = game.players(&o).unwrap();
        let mut s = game.initial_state(&o, 1).unwrap();
        let mut out = format!("start, seen by {}:\n{}", players[0], game.view(&s, &players[0]).unwrap().unwrap());
        let mut rng = 11u64;
        let mut moves = Vec::new();
        for _ in 0..8 {
            if game.outcome(&s).unwrap().is_some() {
                break;
            }
            let legal = game.legal_moves(&s).unwrap();
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = ((rng >> 33) as usize) % legal.len();
            moves.push(legal[k].text.clone());
            s = legal[k].next.clone();
        }
        out.push_str(&format!("\nafter {}, seen by {}:\n", moves.join(" "), players[0]));
        out.push_str(&game.view(&s, &players[0]).unwrap().unwrap().to_string());
        if game.hidden() {
            out.push_str(&format!("\nseen by a spectator:\n{}", game.view(&s, "spectator").unwrap().unwrap()));
        }
        if game.outcome(&s).unwrap().is_none() {
            out.push_str(&format!("\nclicks of the moves of {}:\n", game.to_move(&s).unwrap()));
            for m in game.legal_moves(&s).unwrap().iter().take(12) {
                let clicks = game.move_clicks(&s, &m.mv).unwrap().unwrap();
                out.push_str(&format!("{}: {}\n", m.text, clicks.join(" ")));
            }
        }
        insta::assert_snapshot!(out);
    });
}

/// `view/3` and `move_clicks/3` give the same items in SWI-Prolog, for
/// every viewer, in a position a few moves into a seeded game.
#[test]
fn views_match_swipl() {
    if !common::swipl_available() {
        eprintln!("swipl not installed: cross-check skipped (CI=true makes this a failure)");
        return;
    }
    for path in games() {
        let (mut game, _) = tabula::loader::load(&path).unwrap();
        if !game.has_view() {
            continue;
        }
        let o = game.options_term(&[]).unwrap();
        let players = game.players(&o).unwrap();
        let mut s = game.initial_state(&o, 1).unwrap();
        for k in 0..6 {
            let legal = game.legal_moves(&s).unwrap();
            s = legal[(k * 7) % legal.len()].next.clone();
        }
        let state = game.engine().term_text(s.term());
        let goal = format!(
            "S = {state}, forall(member(V, [{}, spectator]), (view(S, V, Items), forall(member(I, Items), (writeq(I), nl)))), \
             forall(move(S, M, _), (move_clicks(S, M, C), writeq(M-C), nl))",
            players.join(", ")
        );
        let ours = common::run_tabula(game.source(), &goal);
        let theirs = common::run_swipl(game.source(), &goal);
        assert!(ours.lines().count() >= 3 && !ours.contains("ERROR"), "{}: {ours}", path.display());
        assert_eq!(ours, theirs, "{}: tabula differs from SWI-Prolog", path.display());
    }
}

#[test]
fn broken_games_fail_check_with_clear_messages() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/games_broken");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut t = String::new();
    for f in files {
        let rel = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
            .arg("check")
            .arg(rel)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", f.display());
        t.push_str(&String::from_utf8_lossy(&out.stderr));
        t.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    insta::assert_snapshot!(t);
}

#[test]
fn a_full_random_game_ends_with_a_winner() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/breakthrough.rules");
    let (mut game, _) = tabula::loader::load(&path).unwrap();
    let o = game.options_term(&[]).unwrap();
    let s = game.initial_state(&o, 0).unwrap();
    game.seed(3);
    let (plies, outcome) = game.playout(&s).unwrap();
    assert!(plies > 10 && plies < 400, "{plies} plies");
    assert!(matches!(outcome, Outcome::Winner(ref p) if p == "white" || p == "black"), "{outcome:?}");
}

/// Each game's integer actions: how many, and the first and last, so that
/// a change to a numbering (which agents trained on it depend on) shows
/// here. Every legal move of the start has an action that gives it back
/// (or, in a game played by clicks, click actions no other move has).
#[test]
fn integer_actions_are_stable() {
    let mut t = String::new();
    for path in games() {
        let (mut game, _) = tabula::loader::load(&path).unwrap();
        let o = game.options_term(&[]).unwrap();
        let Some(space) = game.action_space(&o).unwrap() else {
            // Played by clicks: every legal move of the start has click
            // actions of its own.
            let Some(clicks) = game.click_space(&o).unwrap() else {
                t.push_str(&format!("{}: none\n", game.name));
                continue;
            };
            let s = game.initial_state(&o, 0).unwrap();
            let moves: Vec<_> = game.legal_moves(&s).unwrap().into_iter().map(|m| m.mv).collect();
            let made = game.click_actions(&clicks, &s, &moves).unwrap();
            let (fewest, most) = (made.iter().map(Vec::len).min().unwrap(), made.iter().map(Vec::len).max().unwrap());
            let targets = clicks.targets();
            t.push_str(&format!(
                "{}: {} click actions, {} .. {} and the end; the first moves take {fewest} to {most} clicks\n",
                game.name,
                clicks.len(),
                targets[0],
                targets[targets.len() - 1]
            ));
            continue;
        };
        let text = |g: &mut Game, i: usize| {
            let m = g.move_of(&space, i).unwrap().unwrap();
            g.move_text(&m).unwrap()
        };
        let (first, last) = (text(&mut game, 0), text(&mut game, space.len() - 1));
        assert!(game.move_of(&space, space.len()).unwrap().is_none(), "{}", game.name);
        let s = game.initial_state(&o, 0).unwrap();
        for m in game.legal_moves(&s).unwrap() {
            let a = game.action_of(&space, &m.mv).unwrap().unwrap_or_else(|| panic!("{}: {}", game.name, m.text));
            assert_eq!(game.move_of(&space, a).unwrap(), Some(m.mv), "{}: {}", game.name, m.text);
        }
        t.push_str(&format!("{}: {} actions, {first} .. {last}\n", game.name, space.len()));
    }
    insta::assert_snapshot!(t);
}

/// 20000 random playouts on 8x8 average 64.10 plies with white winning
/// 50.9% (published figures). Slow: run with `--release -- --ignored`.
#[test]
#[ignore]
fn random_playout_statistics_match_published_figures() {
    let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["bench", "breakthrough", "--playouts", "20000", "--seed", "1", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let avg = v["average_length"].as_f64().unwrap();
    let white = v["results"]["white"].as_f64().unwrap() / v["playouts"].as_f64().unwrap() * 100.0;
    assert!((avg - 64.10).abs() <= 0.5, "average length {avg}");
    assert!((white - 50.9).abs() <= 1.5, "white wins {white}%");
}

/// A step by integer action that brings the next position's legal actions
/// (what Python's `apply_action` takes, so that the next `legal_actions`
/// and the next action's check need no call of their own) brings exactly
/// those the position lists when asked, in every game whose rules list an
/// action space, over the first plies of a few random games.
#[test]
fn a_step_by_action_brings_the_next_positions_legal_actions() {
    let mut stepped = 0;
    for path in games().into_iter().filter(|p| p.extension().is_some_and(|e| e == "rules")) {
        let (mut game, _) = tabula::loader::load(&path).unwrap();
        let opts = game.options_term(&[]).unwrap();
        let Some(space) = game.action_space(&opts).unwrap().filter(|s| s.listed_moves().is_some()) else { continue };
        let mut walk = tabula::game::Walk::new(5);
        for seed in 0..3 {
            let mut s = game.initial_state(&opts, seed).unwrap();
            for _ in 0..40 {
                if game.status(&s).unwrap().outcome.is_some() {
                    break;
                }
                let actions = game.legal_actions(&space, &s).unwrap();
                let a = actions[walk.pick(actions.len())];
                let next = game.after_action_listed(&s, None, &space, a).unwrap();
                // The same position as the move made alone.
                let alone = game.after_action(&s, None, &space, a).unwrap();
                assert_eq!(next.state.term(), alone.state.term(), "{}: the position after action {a}", path.display());
                let status = game.status(&next.state).unwrap();
                assert_eq!(next.status, status, "{}: the status after action {a}", path.display());
                // The status as game_over/2, to_move/2 and chance/1 say, one by one.
                let outcome = game.outcome(&next.state).unwrap();
                let (mover, chance) = match outcome {
                    Some(_) => (None, false),
                    None => (Some(game.to_move(&next.state).unwrap()), game.chance(&next.state).unwrap()),
                };
                assert_eq!(status, Status { outcome, mover, chance }, "{}", path.display());
                match &next.actions {
                    Some(listed) => {
                        assert_eq!(listed, &game.legal_actions(&space, &next.state).unwrap(), "{}", path.display());
                        stepped += 1;
                    }
                    None => assert!(status.outcome.is_some() || status.chance, "{}: no actions listed", path.display()),
                }
                s = next.state;
            }
        }
    }
    assert!(stepped > 100, "{stepped} steps checked");
}
