//! Domin-Up rules on constructed positions (state terms, as `--state`
//! takes them): Climb, Expand at height 0 and higher, Climb forced, both
//! orientations and doubles once, pass, the win on the last tile, the end
//! when nobody can place; and hidden hands: what a player sees, what the
//! computer players can know.

use std::path::Path;
use tabula::ai::{self, Controller};
use tabula::game::{Game, State};

fn game() -> Game {
    tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/domin-up.rules")).unwrap().0
}

/// The opening tile 7-7 on (0,0) and (1,0), then `more` cells.
fn table(more: &str) -> String {
    if more.is_empty() { "[c(0,0,1,7),c(1,0,1,7)]".into() } else { format!("[c(0,0,1,7),c(1,0,1,7),{more}]") }
}

/// A position with no tile drawn as a whole domino (`view/3` then shows
/// each cell as a lone half; the rules do not look at the tiles).
fn state(g: &mut Game, mover: &str, hands: &str, table: &str) -> State {
    g.parse_state(&format!("domin({mover}, {hands}, {table}, [])")).unwrap()
}

/// The position as the player to move sees it, its legal moves, and, if
/// `mv` is given, the position after it and the outcome.
fn scenario(title: &str, hands: &str, cells: &str, mv: Option<&str>) -> String {
    let mut g = game();
    let s = state(&mut g, "p1", hands, &table(cells));
    let mut out = format!("== {title}\n{}", g.display(&s, "p1").unwrap());
    match g.outcome(&s).unwrap() {
        Some(o) => out.push_str(&format!("outcome: {o}\n\n")),
        None => {
            let legal = g.legal_moves(&s).unwrap();
            let texts: Vec<&str> = legal.iter().map(|m| m.text.as_str()).collect();
            out.push_str(&format!("{} moves: {}\n", texts.len(), texts.join(" ")));
            if let Some(mv) = mv {
                let k = g.match_move(&legal, mv).unwrap_or_else(|e| panic!("{title}: {e}"));
                let next = legal[k].next.clone();
                out.push_str(&format!("-- {mv}\n{}", g.display(&next, "spectator").unwrap()));
                out.push_str(&format!("outcome: {:?}\n", g.outcome(&next).unwrap()));
            }
            out.push('\n');
        }
    }
    out
}

#[test]
fn placements_passes_and_endings() {
    let mut t = String::new();
    // 3-7 lies with its 7 on (2,0) beside the opening and its 3 on (3,0).
    let three_seven = "c(2,0,1,7),c(3,0,1,3)";
    t.push_str(&scenario(
        "a Climb is forced when there is one: 3-7 back onto 3 and 7 (no Expand listed)",
        "[p1-[0-1,3-7], p2-[2-2,4-7]]",
        three_seven,
        Some("3-7@3,0:2,0"),
    ));
    t.push_str(&scenario(
        "Expand at height 0: 0-7 with its 7 touching a 7, on every side",
        "[p1-[0-7,5-5], p2-[2-2,4-4]]",
        "",
        Some("0-7@3,0:2,0"),
    ));
    t.push_str(&scenario(
        "both orientations: 5-7 with its 5 touching the 5 or its 7 touching a 7",
        "[p1-[5-7], p2-[2-2,4-4]]",
        "c(2,0,1,7),c(3,0,1,2),c(3,1,1,2),c(3,2,1,5)",
        Some("5-7@3,3:3,4"),
    ));
    t.push_str(&scenario(
        "a double beside a 5 is listed once per pair of cells",
        "[p1-[5-5], p2-[2-2,4-4]]",
        "c(2,0,1,7),c(3,0,1,5)",
        Some("5-5@4,0:5,0"),
    ));
    // After a Climb at (2,0)-(3,0) those cells are at height 2; (0,0) and
    // (1,0) are at height 1 and (1,0) touches the 7 on (2,0).
    t.push_str(&scenario(
        "Expand at height 1: the 7 of 2-7 on (1,0) touches the 7 at height 2",
        "[p1-[2-7], p2-[2-2,4-4]]",
        "c(2,0,2,7),c(3,0,2,3)",
        Some("2-7@0,0:1,0"),
    ));
    t.push_str(&scenario("no placement: p1 passes (p2 can still place)", "[p1-[2-3], p2-[1-7,4-4]]", "", Some("pass")));
    t.push_str(&scenario("the last tile wins", "[p1-[0-7], p2-[2-2,4-4,5-5]]", "", Some("0-7@-2,0:-1,0")));
    t.push_str(&scenario("nobody can place: the fewest tiles win", "[p1-[2-3], p2-[4-5,1-1]]", "", None));
    t.push_str(&scenario("nobody can place: a tie for fewest draws", "[p1-[2-3], p2-[4-5]]", "", None));
    insta::assert_snapshot!(t);
}

#[test]
fn each_placement_is_listed_once() {
    let mut g = game();
    for hands in ["[p1-[5-5,0-5,5-7], p2-[2-2]]", "[p1-[7-7,0-7,1-7], p2-[2-2]]"] {
        let s = state(&mut g, "p1", hands, &table("c(2,0,1,7),c(3,0,1,5)"));
        let legal = g.legal_moves(&s).unwrap();
        // The cells a placement covers and the numbers it puts on them.
        let mut seen = std::collections::HashSet::new();
        for m in &legal {
            let (tile, cells) = m.text.split_once('@').unwrap();
            let (a, b) = tile.split_once('-').unwrap();
            let (p, q) = cells.split_once(':').unwrap();
            let mut key = [(p.to_string(), a.to_string()), (q.to_string(), b.to_string())];
            key.sort();
            assert!(seen.insert(key.clone()), "{hands}: {} places the same as another move", m.text);
        }
        assert!(!legal.is_empty());
    }
}

/// A three-player position in which p2 and p3 hold different tiles but
/// p1 (to move) sees the same: its own hand, the table, the hand sizes.
fn two_worlds(g: &mut Game) -> (State, State) {
    let cells = table("c(2,0,1,7),c(3,0,1,5)");
    let a = state(g, "p1", "[p1-[0-7,1-5,3-3,5-6], p2-[0-0,1-1,2-7], p3-[0-5,4-4,6-7]]", &cells);
    let b = state(g, "p1", "[p1-[0-7,1-5,3-3,5-6], p2-[0-5,4-4,6-7], p3-[0-0,2-7,1-1]]", &cells);
    (a, b)
}

#[test]
fn a_player_sees_only_its_own_hand() {
    let mut g = game();
    let (a, b) = two_worlds(&mut g);
    let shown = g.display(&a, "p1").unwrap();
    assert_eq!(shown, g.display(&b, "p1").unwrap(), "p1's view must not depend on the other hands");
    for viewer in ["p1", "p2", "p3", "spectator"] {
        let text = g.display(&a, viewer).unwrap();
        let hands: [(&str, &[&str]); 3] =
            [("p1", &["0-7", "1-5", "3-3", "5-6"]), ("p2", &["0-0", "1-1", "2-7"]), ("p3", &["0-5", "4-4", "6-7"])];
        for (owner, tiles) in hands {
            for tile in tiles {
                assert_eq!(
                    text.contains(&format!(":{tile}")),
                    owner == viewer,
                    "{viewer} sees {owner}'s {tile}?\n{text}"
                );
            }
        }
    }
}

#[test]
fn computer_players_cannot_see_the_other_hands() {
    let mut g = game();
    let players: Vec<String> = ["p1", "p2", "p3"].iter().map(|s| s.to_string()).collect();
    let (a, b) = two_worlds(&mut g);
    for spec in ["random", "greedy", "minimax:2", "mcts:40", "rules:1", "rules:2"] {
        let c = Controller::parse(spec, None).unwrap();
        for seed in 0..3 {
            let ca = ai::choose(&mut g, &players, &a, &c, seed, 1).unwrap();
            let cb = ai::choose(&mut g, &players, &b, &c, seed, 1).unwrap();
            assert_eq!(ca.mv, cb.mv, "{spec}, seed {seed}: the choice changed with hands it cannot see");
            let legal = g.legal_moves(&a).unwrap();
            ai::position_of(&mut g, &legal, &ca).unwrap();
        }
    }
}

#[test]
fn random_deals_follow_the_seed() {
    let mut g = game();
    for players in ["2", "3", "4"] {
        let o = g.options_term(&[("players".into(), players.into())]).unwrap();
        let x = g.initial_state(&o, 42).unwrap();
        assert_eq!(x, g.initial_state(&o, 42).unwrap());
        assert_ne!(x, g.initial_state(&o, 43).unwrap());
        // Every tile is dealt once; 7-7 is on the table.
        let text = g.engine().term_text(x.term());
        let n: usize = players.parse().unwrap();
        for (i, t) in (0..=7).flat_map(|a| (a..=7).map(move |b| format!("{a}-{b}"))).enumerate() {
            let count = text.matches(&format!("[{t},")).count()
                + text.matches(&format!(",{t},")).count()
                + text.matches(&format!(",{t}]")).count()
                + text.matches(&format!("[{t}]")).count();
            assert_eq!(count, usize::from(t != "7-7"), "tile {t} (#{i}) with {n} players: {text}");
        }
    }
}

#[test]
fn a_bad_deal_is_refused_with_a_clear_error() {
    let mut g = game();
    for deal in ["[[7-7,1-2],[1-2]]", "[[7-7]]", "[[1-2],[3-4]]", "[[7-7,8-9],[1-1]]", "foo"] {
        let o = g.options_term(&[("deal".into(), deal.into())]).unwrap();
        let e = g.initial_state(&o, 0).unwrap_err().to_string();
        assert!(e.contains("deal"), "{deal}: {e}");
    }
}
