//! Native code (on unless `TABULA_NATIVE=0`) plays every game as the interpreter
//! does: the same perft counts and the same seeded random games, move for
//! move (the same lengths and results of the same playouts: a move drawn
//! differently would change what the generator draws next).

use std::path::Path;
use std::process::Command;

/// `tabula ARGS --json` with native code on or off, as JSON.
fn run(native: bool, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .args(["--json", "--games", concat!(env!("CARGO_MANIFEST_DIR"), "/games")])
        .env("TABULA_NATIVE", if native { "1" } else { "0" })
        .output()
        .unwrap();
    assert!(out.status.success(), "tabula {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A report with what depends on the clock taken out.
fn untimed(mut v: serde_json::Value) -> serde_json::Value {
    match &mut v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !k.contains("second"));
            for x in m.values_mut() {
                *x = untimed(x.take());
            }
        }
        serde_json::Value::Array(a) => {
            for x in a.iter_mut() {
                *x = untimed(x.take());
            }
        }
        _ => {}
    }
    v
}

/// The deepest depth of a game's perft table with at most `most` nodes.
fn depth(game: &Path, most: u64) -> u32 {
    let text = std::fs::read_to_string(game.with_extension("perft")).unwrap();
    let mut best = 1;
    for line in text.lines() {
        if line.starts_with("# options") {
            break;
        }
        let mut f = line.split_whitespace();
        if let (Some(d), Some(n)) =
            (f.next().and_then(|d| d.parse().ok()), f.next().and_then(|n| n.parse::<u64>().ok()))
            && n <= most
        {
            best = best.max(d);
        }
    }
    best
}

#[test]
fn every_game_plays_the_same_with_native_code() {
    let games = tabula::game::list_games(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games"));
    assert!(games.len() >= 15, "{} games", games.len());
    for game in games {
        let name = game.file_stem().unwrap().to_str().unwrap();
        let d = depth(&game, 3000).to_string();
        let perft = ["perft", name, &d];
        assert_eq!(untimed(run(true, &perft)), untimed(run(false, &perft)), "{name}: perft {d}");
        let bench = ["bench", name, "--playouts", "4", "--threads", "1", "--seed", "7"];
        assert_eq!(untimed(run(true, &bench)), untimed(run(false, &bench)), "{name}: random playouts");
    }
}
