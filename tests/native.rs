//! Native code (on unless `TABULA_NATIVE=0`), made for every clause at
//! once or for each once it is warm, with calls unfolded (on unless
//! `TABULA_UNFOLD=0`), plays every game as the interpreter making every
//! call as written does: the same perft counts and the same seeded random games, move for
//! move (the same lengths and results of the same playouts: a move drawn
//! differently would change what the generator draws next), and the same
//! boards shown at every ply of a game played in the terminal (the rules'
//! `display/2`, notation and end, which perft and playouts do not run).

use std::path::Path;
use std::process::Command;

/// How native code is used: not at all (and no call unfolded: the
/// reference), for every clause from its first call, or (the default)
/// once a clause has been called 100 times.
#[derive(Clone, Copy, Debug)]
enum Native {
    Off,
    Eager,
    Warm,
}

/// `tabula ARGS` with native code used as `native` says: its standard
/// output.
fn output(native: Native, args: &[&str]) -> Vec<u8> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tabula"));
    cmd.args(args).args(["--games", concat!(env!("CARGO_MANIFEST_DIR"), "/games")]);
    let off = if matches!(native, Native::Off) { "0" } else { "1" };
    cmd.env("TABULA_NATIVE", off).env("TABULA_UNFOLD", off).env_remove("TABULA_NATIVE_AFTER");
    if matches!(native, Native::Eager) {
        cmd.env("TABULA_NATIVE_AFTER", "0");
    }
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    assert!(out.status.success(), "tabula {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// `tabula ARGS --json` with native code used as `native` says, as JSON.
fn run(native: Native, args: &[&str]) -> serde_json::Value {
    let args: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
    serde_json::from_slice(&output(native, &args)).unwrap()
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
        let reference = untimed(run(Native::Off, &perft));
        assert_eq!(untimed(run(Native::Eager, &perft)), reference, "{name}: perft {d}");
        let bench = ["bench", name, "--playouts", "4", "--threads", "1", "--seed", "7"];
        let reference = untimed(run(Native::Off, &bench));
        for native in [Native::Eager, Native::Warm] {
            assert_eq!(untimed(run(native, &bench)), reference, "{name}: random playouts, {native:?}");
        }
    }
}

#[test]
fn every_game_shows_the_same_game_with_native_code() {
    let list = run(Native::Off, &["list"]);
    let games = list["games"].as_array().unwrap();
    let mut played = 0;
    for g in games {
        let name = g["name"].as_str().unwrap();
        if !Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(format!("{name}.rules")).exists() {
            continue;
        }
        let seats: Vec<String> = g["seats"].as_str().unwrap().split(", ").map(|s| format!("{s}=random")).collect();
        let mut args = vec!["play", name, "--seed", "7"];
        for s in &seats {
            args.extend(["--seat", s.as_str()]);
        }
        let off = output(Native::Off, &args);
        assert!(!off.is_empty(), "{name}: nothing shown");
        // Warm: `display/2` and the rest get native code in mid-game.
        for native in [Native::Eager, Native::Warm] {
            let on = output(native, &args);
            assert!(on == off, "{name}, {native:?}: the games shown differ:\n{}", String::from_utf8_lossy(&on));
        }
        played += 1;
    }
    assert!(played >= 11, "{played} games played");
}
