//! Campo Bello rules on constructed positions (state terms, as `--state`
//! takes them): removals after own and opponent jumps, the three-jump
//! limit, no revisiting, `c0` not counting as home, both `when_stuck`
//! rules, and the lower score winning.

use std::path::Path;
use tabula::game::{Game, Outcome};

/// The point order of the board term: mid, then b0..b9, y0..y9, r0..r9, g0..g9.
fn points() -> Vec<String> {
    let mut v = vec!["mid".to_string()];
    for c in ["b", "y", "r", "g"] {
        for k in 0..10 {
            v.push(format!("{c}{k}"));
        }
    }
    v
}

fn state(to_move: &str, yellow: &[&str], blue: &[&str], when_stuck: &str) -> String {
    let cells: Vec<&str> = points()
        .iter()
        .map(|p| {
            if yellow.contains(&p.as_str()) {
                "yel"
            } else if blue.contains(&p.as_str()) {
                "blu"
            } else {
                "e"
            }
        })
        .collect();
    format!("cb({to_move}, p({}), {when_stuck})", cells.join(","))
}

fn game() -> Game {
    tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/campo-bello.rules")).unwrap().0
}

fn moves(g: &mut Game, s: &str) -> Vec<String> {
    let st = g.parse_state(s).unwrap();
    g.legal_moves(&st).unwrap().into_iter().map(|m| m.text).collect()
}

#[test]
fn jumping_an_own_mover_removes_it() {
    let mut g = game();
    let s = g.parse_state(&state("yellow", &["y1", "y3", "g9"], &["r9"], "game_ends")).unwrap();
    let legal = g.legal_moves(&s).unwrap();
    let texts: Vec<&str> = legal.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["y1-y6", "y3-y0"]);
    let after = g.display(&legal[1].next, "spectator").unwrap();
    assert!(after.contains("y0:Y") && after.contains("y1:.") && after.contains("y3:."), "{after}");
}

#[test]
fn jumping_an_opponent_means_choosing_an_own_mover_to_remove() {
    let mut g = game();
    let m = moves(&mut g, &state("yellow", &["y3", "g9"], &["y1", "r9"], "game_ends"));
    // The jumper itself (the move ends) or the mover on g9.
    assert_eq!(m, ["y3-y0 x y0", "y3-y0 x g9"]);
}

#[test]
fn at_most_three_jumps_and_no_revisiting() {
    let mut g = game();
    // y6 can jump y3, y0, mid and b1 in a row: only three are allowed.
    let m = moves(&mut g, &state("yellow", &["y6", "y3", "y0", "mid", "b1"], &["r9"], "game_ends"));
    assert!(m.contains(&"y6-y1-r0-b0".to_string()), "{m:?}");
    assert!(m.iter().all(|t| t.matches('-').count() <= 3), "{m:?}");
    // y0 over y1, y4, y2 would come back to y0: not allowed.
    let m = moves(&mut g, &state("yellow", &["y0", "y1", "y4", "y2"], &["r9"], "game_ends"));
    assert!(m.contains(&"y0-y3-y5".to_string()), "{m:?}");
    assert!(!m.iter().any(|t| t.starts_with("y0-y3-y5-y0")), "{m:?}");
}

#[test]
fn when_stuck_ends_the_game_or_passes() {
    let mut g = game();
    // Yellow has no jump; blue has one (b3 over b1 onto b0).
    let ends = state("yellow", &["g9"], &["b1", "b3"], "game_ends");
    let s = g.parse_state(&ends).unwrap();
    assert!(g.outcome(&s).unwrap().is_some());
    let passes = state("yellow", &["g9"], &["b1", "b3"], "pass");
    assert_eq!(moves(&mut g, &passes), ["pass"]);
    let s = g.parse_state(&passes).unwrap();
    assert_eq!(g.outcome(&s).unwrap(), None);
    // With pass, the game ends only when nobody can jump.
    let stuck = g.parse_state(&state("yellow", &["g9"], &["b9"], "pass")).unwrap();
    assert!(g.outcome(&stuck).unwrap().is_some());
}

#[test]
fn scores_count_home_spots_three_and_the_lower_score_wins() {
    let mut g = game();
    let players = ["yellow".to_string(), "blue".to_string()];
    // Yellow: y0 (an apex: not home, 1) and r5 (blue's triangle, 1) = 2.
    // Blue: b4 (home, 3) = 3. Nobody can jump: the game is over.
    let s = g.parse_state(&state("yellow", &["y0", "r5"], &["b4"], "game_ends")).unwrap();
    let scores = g.scores(&s, &players).unwrap();
    assert_eq!(scores, vec![("yellow".into(), "2".into()), ("blue".into(), "3".into())]);
    assert_eq!(g.outcome(&s).unwrap(), Some(Outcome::Winner("yellow".into())));
    // Equal scores draw.
    let s = g.parse_state(&state("yellow", &["g4"], &["r1"], "game_ends")).unwrap();
    assert_eq!(g.outcome(&s).unwrap(), Some(Outcome::Draw));
}

#[test]
fn the_board_as_a_player_sees_it() {
    let mut g = game();
    let s = g.parse_state(&state("yellow", &["y3", "g9", "y0"], &["y1", "r9", "mid"], "game_ends")).unwrap();
    let mut out = g.display(&s, "yellow").unwrap();
    out.push_str(&format!(
        "moves: {}\n",
        moves(&mut g, &state("yellow", &["y3", "g9", "y0"], &["y1", "r9", "mid"], "game_ends")).join(", ")
    ));
    insta::assert_snapshot!(out);
}

#[test]
fn no_mover_is_jumped_twice() {
    let mut g = game();
    // y1 jumps blue's y0 onto r0 (removing g9), then its own mid onto b0;
    // jumping y0 again from b0 onto y2 would jump that mover twice.
    let m = moves(&mut g, &state("yellow", &["y1", "mid", "g9"], &["y0", "r9"], "game_ends"));
    assert!(m.contains(&"y1-r0-b0 x g9".to_string()), "{m:?}");
    assert!(!m.iter().any(|t| t.starts_with("y1-r0-b0-y2")), "{m:?}");
}
