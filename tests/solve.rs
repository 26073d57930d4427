//! `tabula solve`: small games solved, checked against what is known of
//! them and against an independent solver in Python (`compat/solve.py`,
//! its own rules of the same games, plain negamax): the winner and the
//! first moves that keep the value must be the same.

use serde_json::Value;
use std::process::Command;

fn tabula(args: &[&str]) -> (Value, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .arg("solve")
        .args(args)
        .arg("--json")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&text).unwrap_or(Value::Null);
    (v, String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap_or(-1))
}

/// The independent solver's answer, or `None` without Python (a failure
/// under CI=true).
fn python(args: &[&str]) -> Option<Value> {
    let out =
        Command::new("python3").arg("compat/solve.py").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output();
    match out {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        Ok(o) => panic!("compat/solve.py {args:?}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(_) if std::env::var("CI").is_ok_and(|v| v == "true") => panic!("python3 is needed under CI=true"),
        Err(_) => {
            eprintln!("python3 is not installed: the cross-check with compat/solve.py is skipped");
            None
        }
    }
}

fn best(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = (v["moves"].as_array().unwrap().iter())
        .filter(|m| m["winner"] == v["winner"])
        .map(|m| m["move"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn small_games_solve_as_known_and_as_an_independent_solver_finds() {
    // (tabula's arguments, compat/solve.py's, the value known)
    let cases: [(&[&str], &[&str], Value); 4] = [
        (&["tictactoe"], &["tictactoe"], Value::Null),
        (&["connect4", "-o", "rows=4", "-o", "cols=4"], &["connect4", "4", "4"], Value::Null),
        // Hex: the first player wins on every board without the swap rule
        // (strategy stealing), the second with it.
        (&["hex", "-o", "size=3", "-o", "swap=no"], &["hex", "3", "no"], "red".into()),
        (&["hex", "-o", "size=3", "-o", "swap=yes"], &["hex", "3", "yes"], "blue".into()),
    ];
    for (ours, theirs, known) in cases {
        let (v, err, code) = tabula(ours);
        assert_eq!(code, 0, "{ours:?}: {err}");
        assert_eq!(v["winner"], known, "{ours:?}: {v}");
        assert!(v["nodes"].as_u64().unwrap() > 0 && v["positions"].as_u64().unwrap() > 0);
        // The line of perfect play keeps the value to the end.
        assert!(!v["line"].as_array().unwrap().is_empty());
        if let Some(p) = python(theirs) {
            assert_eq!(p["winner"], v["winner"], "{ours:?}");
            assert_eq!(p["moves"].as_u64().unwrap() as usize, v["moves"].as_array().unwrap().len(), "{ours:?}");
            if ours[0] != "tictactoe" {
                // (tic-tac-toe's moves are named otherwise there)
                assert_eq!(
                    p["best"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect::<Vec<_>>(),
                    best(&v),
                    "{ours:?}"
                );
            } else {
                assert_eq!(p["best"].as_array().unwrap().len(), best(&v).len());
            }
        }
    }
    // Othello on 4x4: the second player (white) wins.
    let (v, _, code) = tabula(&["othello", "-o", "size=4"]);
    assert_eq!((code, &v["winner"]), (0, &Value::from("white")), "{v}");
    assert!(v["moves"].as_array().unwrap().iter().all(|m| m["winner"] == "white"), "every move of black loses: {v}");
}

#[test]
fn a_position_a_refusal_and_a_game_too_large() {
    // A position: connect four 4x4 after a few moves.
    let (v, err, code) = tabula(&["connect4", "-o", "rows=4", "-o", "cols=4", "--after", "1 1 1 1 2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["to_move"], "yellow");
    // Hidden information and chance are refused, with the reason.
    for (game, why) in
        [("krieg-tictactoe", "hidden information"), ("kuhn-poker", "chance moves"), ("pig", "chance moves")]
    {
        let out = Command::new(env!("CARGO_BIN_EXE_tabula")).args(["solve", game]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{game}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(why), "{game}");
    }
    // Beyond its budget: "too large", exit code 3, with what was searched.
    let (v, _, code) = tabula(&["breakthrough", "-o", "rows=5", "-o", "cols=5", "--max-memory", "200K"]);
    assert_eq!(code, 3);
    let why = v["too_large"].as_str().unwrap();
    assert!(why.starts_with("too large to solve within the memory given: "), "{why}");
}
