//! Random playouts that draw integer actions until `move/3` accepts one
//! (rejection sampling, with the moves listed after a number of tries)
//! draw each legal move alike, as listing the moves does.

use tabula::engine::Engine;

/// A position `s` with three legal moves among ten actions.
const GAME: &str = "
move(s, M) :- member(M, [2, 5, 9]).
move(s, M, M) :- integer(M), memberchk(M, [2, 5, 9]).
";

/// How often each move is drawn in `n` draws by `how`.
fn counts(e: &mut Engine, how: &str, n: u32) -> Vec<(i64, u32)> {
    let goal = format!(
        "findall(X, ( between(1, {n}, _), '$random_move'({how}, s, X) ), Xs), \
         findall(M-C, ( member(M, [2, 5, 9]), aggregate_all(count, member(M, Xs), C) ), Cs)"
    );
    let a = e.query(&goal).unwrap().next().expect("an answer").unwrap();
    let text = &a.bindings.iter().find(|b| b.name == "Cs").unwrap().text;
    text.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|p| {
            let (m, c) = p.split_once('-').unwrap();
            (m.trim().parse().unwrap(), c.trim().parse().unwrap())
        })
        .collect()
}

#[test]
fn drawing_actions_until_one_is_legal_draws_each_legal_move_alike() {
    let mut e = Engine::new();
    let driver = include_str!("../crates/games/src/game/driver.pl");
    assert!(!e.load("driver.pl", driver).has_errors());
    assert!(!e.load("game.pl", GAME).has_errors());
    e.set_seed(11);
    let n = 30_000;
    // One try (the moves listed 70% of the time), three, and enough that
    // the list is almost never needed; and the listing alone.
    for how in [
        "sampled('$actions'(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, 1, listed)",
        "sampled('$actions'(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, 3, listed)",
        "sampled('$actions'(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, 60, built)",
        "listed",
    ] {
        let got = counts(&mut e, how, n);
        assert_eq!(got.len(), 3, "{how}: {got:?}");
        assert_eq!(got.iter().map(|&(_, c)| c).sum::<u32>(), n, "{how}: every draw is a legal move");
        // Each move a third of the time: within 4.5 standard deviations
        // (82 draws) of 10,000.
        for &(m, c) in &got {
            assert!((c as f64 - 10_000.0).abs() < 370.0, "{how}: move {m} drawn {c} times of {n}");
        }
    }
}

/// Connect Four's playouts draw actions (a column is legal but when it
/// is full, so a try rarely fails); a game that has made states with two
/// sets of options lists the moves instead. The games come out alike:
/// the same mean length and the same first-player wins, within noise.
#[test]
fn playouts_that_draw_actions_play_the_games_that_listing_plays() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join("connect4.rules");
    let load = || tabula::loader::load(&path).unwrap().0;
    let (mut drawn, mut listed) = (load(), load());
    let o = drawn.options_term(&[]).unwrap();
    let other = listed.options_term(&[("rows".into(), "5".into())]).unwrap();
    listed.initial_state(&other, 0).unwrap();
    let n = 2_000u64;
    let mut stats = Vec::new();
    for g in [&mut drawn, &mut listed] {
        let (mut plies, mut red) = (0u64, 0u64);
        for seed in 0..n {
            let (p, outcome) = g.seeded_playout(&o, None, seed).unwrap();
            assert!((7..=42).contains(&p), "seed {seed}: {p} plies");
            plies += p;
            red += u64::from(outcome == tabula::game::Outcome::Winner("red".into()));
        }
        stats.push((plies as f64 / n as f64, red as f64 / n as f64));
    }
    let ((len_a, red_a), (len_b, red_b)) = (stats[0], stats[1]);
    // About 4.5 standard errors of each difference.
    assert!((len_a - len_b).abs() < 1.2, "mean lengths {len_a} and {len_b}");
    assert!((red_a - red_b).abs() < 0.07, "red wins {red_a} and {red_b}");
}
