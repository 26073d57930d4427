//! Hasami Shogi rules on constructed positions (given as state terms, as
//! `--state` takes them): custodial and corner captures, safe moves,
//! `lose_at`, `max_plies` and the no-move loss.

use std::path::Path;
use tabula::game::Game;

/// A state from a picture: `rows[0]` is row 9, `X` black, `O` white.
fn state(rows: [&str; 9], to_move: &str, ply: u32, lose_at: u32, max_plies: u32) -> String {
    let mut cells = Vec::new();
    let (mut nb, mut nw) = (0, 0);
    for y in 1..=9 {
        let row: Vec<char> = rows[9 - y].chars().filter(|c| !c.is_whitespace()).collect();
        assert_eq!(row.len(), 9, "row {y}");
        for c in row {
            cells.push(match c {
                'X' => {
                    nb += 1;
                    "b"
                }
                'O' => {
                    nw += 1;
                    "w"
                }
                _ => "e",
            });
        }
    }
    format!("h({to_move}, b({}), {nb}, {nw}, {ply}, o({lose_at}, {max_plies}))", cells.join(","))
}

fn game() -> Game {
    tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hasami-shogi.rules")).unwrap().0
}

/// Plays `mv` from the pictured position; reports the board after and
/// the outcome.
fn scenario(title: &str, s: &str, mv: &str) -> String {
    let mut g = game();
    let start = g.parse_state(s).unwrap();
    let mut out = format!("== {title}\n{}", g.display(&start, "spectator").unwrap());
    let legal = g.legal_moves(&start).unwrap();
    let k = g.match_move(&legal, mv).unwrap_or_else(|e| panic!("{title}: {e}"));
    let next = legal[k].next.clone();
    out.push_str(&format!("-- {mv}\n{}", g.display(&next, "spectator").unwrap()));
    out.push_str(&format!("outcome: {:?}\n\n", g.outcome(&next).unwrap()));
    out
}

const EMPTY: &str = ". . . . . . . . .";

/// White has three men and loses one to d1-d5.
const THREE_LEFT: [&str; 9] =
    [EMPTY, EMPTY, EMPTY, EMPTY, ". X O . . . . . O", EMPTY, EMPTY, ". . . . . . . . O", ". . . X . . . X X"];

#[test]
fn captures_and_endings() {
    let mut t = String::new();
    t.push_str(&scenario(
        "custodial capture of one man",
        &state(
            [EMPTY, "O O . . . . . . O", EMPTY, EMPTY, ". X O . . . . . .", EMPTY, EMPTY, EMPTY, "X . . X . . . X X"],
            "black",
            10,
            2,
            300,
        ),
        "d1-d5",
    ));
    t.push_str(&scenario(
        "custodial capture of three men in a row",
        &state(
            [EMPTY, "O . . . . . . . O", EMPTY, EMPTY, "X O O O . . . . .", EMPTY, EMPTY, EMPTY, ". . . . X . . X X"],
            "black",
            10,
            2,
            300,
        ),
        "e1-e5",
    ));
    t.push_str(&scenario(
        "captures in two directions at once",
        &state(
            [
                EMPTY,
                "O . . . . . . . O",
                EMPTY,
                ". . . . X . . . .",
                ". . . . O . . . .",
                ". . X O . . . . .",
                EMPTY,
                EMPTY,
                ". . . . X . . . X",
            ],
            "black",
            10,
            2,
            300,
        ),
        "e1-e4",
    ));
    t.push_str(&scenario(
        "corner capture",
        &state(
            ["O X . . . . . . .", EMPTY, EMPTY, ". . . . . . O . O", EMPTY, EMPTY, EMPTY, EMPTY, "X . . . . . . . X"],
            "black",
            10,
            2,
            300,
        ),
        "a1-a8",
    ));
    t.push_str(&scenario(
        "moving between two enemy men is safe",
        &state(
            [EMPTY, ". . . . . . . . O", EMPTY, EMPTY, ". . O . O . . . .", EMPTY, EMPTY, EMPTY, ". . . X . . . X X"],
            "black",
            10,
            2,
            300,
        ),
        "d1-d5",
    ));
    t.push_str(&scenario("lose_at 2: left with two men loses", &state(THREE_LEFT, "black", 10, 2, 300), "d1-d5"));
    t.push_str(&scenario("lose_at 1: two men left play on", &state(THREE_LEFT, "black", 10, 1, 300), "d1-d5"));
    t.push_str(&scenario(
        "max_plies: the 300th ply draws",
        &state(
            [". . . . O O O . .", EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, ". . X X X . . . ."],
            "black",
            299,
            2,
            300,
        ),
        "c1-c2",
    ));
    t.push_str(&scenario(
        "a player with no legal move loses",
        &state(
            [". . . . . . . . .", EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, "O . . . . . . . .", "X O . . . . . . O"],
            "white",
            10,
            0,
            300,
        ),
        "i1-i9",
    ));
    insta::assert_snapshot!(t);
}

#[test]
fn captured_men_leave_the_board_and_the_counts() {
    let mut g = game();
    let s = g
        .parse_state(&state(
            [EMPTY, "O . . . . . . . O", EMPTY, EMPTY, "X O O O . . . . .", EMPTY, EMPTY, EMPTY, ". . . . X . . X X"],
            "black",
            10,
            2,
            300,
        ))
        .unwrap();
    let legal = g.legal_moves(&s).unwrap();
    let k = g.match_move(&legal, "e1-e5").unwrap();
    let players = ["black".to_string(), "white".to_string()];
    let scores = g.scores(&legal[k].next, &players).unwrap();
    assert_eq!(scores, vec![("black".into(), "4".into()), ("white".into(), "2".into())]);
}
