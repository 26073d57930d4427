//! `--shard I/N` and `tabula merge`: a run split into shards, each run
//! separately and merged, gives the result of the whole run; bad shard
//! specs and bad shard files get clear errors.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tabula(args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_tabula")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh folder for shard files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tabula-shards-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `args` as shards 0..n (plus `--shard I/N`), writes each shard file
/// into `dir`, and returns their paths.
fn run_shards(dir: &Path, args: &[&str], n: u64) -> Vec<String> {
    (0..n)
        .map(|i| {
            let spec = format!("{i}/{n}");
            let mut a = args.to_vec();
            a.extend(["--shard", &spec]);
            let (ok, out, err) = tabula(&a);
            assert!(ok, "{a:?}: {err}");
            let path = dir.join(format!("shard-{i}.json"));
            std::fs::write(&path, out).unwrap();
            path.display().to_string()
        })
        .collect()
}

fn merge_json(files: &[String]) -> Value {
    let mut a = vec!["merge", "--json"];
    a.extend(files.iter().map(String::as_str));
    let (ok, out, err) = tabula(&a);
    assert!(ok, "merge: {err}");
    serde_json::from_str(&out).unwrap()
}

fn whole_json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (ok, out, err) = tabula(&a);
    assert!(ok, "{a:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// Drops what depends on the clock.
fn untimed(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["seconds", "playouts_per_second", "plies_per_second", "shards"] {
            o.remove(k);
        }
        for list in ["controllers", "depths"] {
            for row in o.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(r) = row.as_object_mut() {
                    r.remove("max_move_seconds");
                    r.remove("seconds");
                }
            }
        }
    }
    v
}

#[test]
fn perft_in_shards_gives_the_counts_of_the_whole_run() {
    let dir = folder("perft");
    let args = ["perft", "breakthrough", "4", "--threads", "1"];
    let whole = whole_json(&args);
    assert_eq!(whole["depths"][3]["nodes"], 256_036);
    for n in [1, 3, 7] {
        let merged = merge_json(&run_shards(&dir, &args, n));
        assert_eq!(untimed(merged.clone()), untimed(whole.clone()), "{n} shards");
        if n > 1 {
            assert_eq!(merged["shards"], n);
        }
    }
    // With --divide, the count under each first move.
    let args = ["perft", "hasami-shogi", "2", "--divide"];
    let whole = whole_json(&args);
    let merged = merge_json(&run_shards(&dir, &args, 4));
    assert_eq!(untimed(merged), untimed(whole.clone()));
    assert!(whole["divide"].as_array().unwrap().len() > 10);
}

#[test]
fn a_match_in_shards_is_the_whole_match() {
    let dir = folder("match");
    let args = [
        "match",
        "breakthrough",
        "-o",
        "rows=5",
        "-o",
        "cols=5",
        "--seat",
        "mcts:30",
        "--seat",
        "random",
        "--games",
        "9",
        "--seed",
        "4",
    ];
    let whole = whole_json(&args);
    let merged = merge_json(&run_shards(&dir, &args, 4));
    assert_eq!(merged["games"], 9);
    assert_eq!(untimed(merged), untimed(whole.clone()));
    let wins: u64 = whole["controllers"].as_array().unwrap().iter().map(|c| c["wins"].as_u64().unwrap()).sum();
    assert_eq!(wins, 9, "every game of Breakthrough has a winner");
    // The text report is the command's, with the shards named.
    let files = run_shards(&dir, &args, 2);
    let (ok, out, _) = tabula(&["merge", &files[0], &files[1]]);
    assert!(ok);
    assert!(out.starts_with("breakthrough: 9 games, seats rotated, seed 4,"), "{out}");
    assert!(out.contains("(2 shards, their seconds added up)"), "{out}");
    assert!(out.contains("mcts:30"), "{out}");
}

#[test]
fn a_bench_in_shards_dealt_anew_is_the_whole_bench() {
    let dir = folder("bench");
    // Domin-Up deals each playout with its own seed.
    let args = ["bench", "domin-up", "--playouts", "13", "--seed", "2"];
    let whole = whole_json(&args);
    let merged = merge_json(&run_shards(&dir, &args, 5));
    assert_eq!(merged["playouts"], 13);
    assert_eq!(untimed(merged), untimed(whole));
}

#[test]
fn bad_shard_specs_are_refused() {
    for (spec, says) in
        [("3/2", "I must be below N"), ("2/2", "I must be below N"), ("1/0", "at least 1"), ("a/b", "I/N")]
    {
        let (ok, _, err) = tabula(&["perft", "breakthrough", "2", "--shard", spec]);
        assert!(!ok, "{spec}");
        assert!(err.contains(says), "{spec}: {err}");
    }
    let (ok, _, err) = tabula(&["bench", "breakthrough", "--seconds", "1", "--shard", "0/2"]);
    assert!(!ok && err.contains("give --playouts"), "{err}");
}

#[test]
fn merge_refuses_what_is_not_one_whole_run() {
    let dir = folder("merge-errors");
    let files = run_shards(&dir, &["perft", "breakthrough", "3"], 3);
    let other = run_shards(&folder("merge-other"), &["perft", "breakthrough", "3", "--seed", "1"], 3);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![files[0].clone(), files[1].clone()], "missing shard 2/3"),
        (vec![files[0].clone(), files[1].clone(), files[1].clone()], "given twice"),
        (vec![files[0].clone(), files[1].clone(), other[2].clone()], "its seed is 1, not 0"),
    ];
    for (given, says) in cases {
        let mut a = vec!["merge"];
        a.extend(given.iter().map(String::as_str));
        let (ok, _, err) = tabula(&a);
        assert!(!ok, "{given:?}");
        assert!(err.contains(says), "{err}");
    }
    // A file cut short, a JSON file that is not a shard, a missing file.
    let text = std::fs::read_to_string(&files[2]).unwrap();
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let cut = cut.display().to_string();
    let (ok, _, err) = tabula(&["merge", &files[0], &files[1], &cut]);
    assert!(!ok && err.contains("cut.json: not a shard file") && err.contains("EOF"), "{err}");
    let stranger = dir.join("stranger.json");
    std::fs::write(&stranger, "{\"games\": 3}").unwrap();
    let (ok, _, err) = tabula(&["merge", &stranger.display().to_string()]);
    assert!(!ok && err.contains("not a shard file"), "{err}");
    let (ok, _, err) = tabula(&["merge", "no/such/file.json"]);
    assert!(!ok && err.contains("cannot read no/such/file.json"), "{err}");
    // Shards of the same run split two ways.
    let halves = run_shards(&folder("merge-halves"), &["perft", "breakthrough", "3"], 2);
    let (ok, _, err) = tabula(&["merge", &files[0], &files[1], &files[2], &halves[1]]);
    assert!(!ok && err.contains("split one way only"), "{err}");
}

#[test]
fn shards_of_other_rules_do_not_merge() {
    let dir = folder("digest");
    let files = run_shards(&dir, &["perft", "breakthrough", "2"], 2);
    // The same run on edited rules: another digest.
    let edited = dir.join("breakthrough.rules");
    let rules =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("games/breakthrough.rules")).unwrap();
    std::fs::write(&edited, format!("{rules}\n% edited\n")).unwrap();
    let edited = edited.display().to_string();
    let other = run_shards(&folder("digest-edited"), &["perft", &edited, "2"], 2);
    let (ok, _, err) = tabula(&["merge", &files[0], &other[1]]);
    assert!(!ok && err.contains("its digest is"), "{err}");
}

#[test]
fn a_tournament_in_shards_is_the_whole_tournament_and_rates_the_players() {
    let dir = folder("tournament");
    let args = [
        "tournament",
        "breakthrough",
        "-o",
        "rows=5",
        "-o",
        "cols=5",
        "-p",
        "random",
        "-p",
        "greedy",
        "-p",
        "mcts:30",
        "--games",
        "8",
        "--seed",
        "5",
    ];
    let whole = whole_json(&args);
    let merged = merge_json(&run_shards(&dir, &args, 3));
    assert_eq!(untimed(merged), untimed(whole.clone()));
    // Three pairings of 8 games; each controller plays 16.
    assert_eq!(whole["games"], 24);
    assert_eq!(whole["pairings"], 3);
    let rows = whole["controllers"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["wins"].as_u64().unwrap() + r["losses"].as_u64().unwrap() == 16), "{rows:?}");
    // Random loses to greedy (every game of Breakthrough 5x5), and is rated
    // below it; the ratings have mean 0 and intervals around them.
    let elo = |i: usize| rows[i]["elo"].as_f64().unwrap();
    assert!(elo(1) > elo(0), "{rows:?}");
    assert!((elo(0) + elo(1) + elo(2)).abs() < 1e-6);
    for r in rows {
        let (lo, hi) = (r["elo_ci95"][0].as_f64().unwrap(), r["elo_ci95"][1].as_f64().unwrap());
        assert!(lo < r["elo"].as_f64().unwrap() && r["elo"].as_f64().unwrap() < hi, "{r}");
    }
    assert_eq!(whole["table"][1][0], 1.0, "greedy against random");
    assert_eq!(whole["table"][0][0], Value::Null);
    // The text: ranks, then the table.
    let (ok, out, _) = tabula(&args);
    assert!(ok);
    assert!(out.starts_with("breakthrough: a round robin of 3 controllers, 3 pairings of 8 games: 24 games"), "{out}");
    assert!(out.contains("score of the row against the column"), "{out}");
    // Too few controllers for the seats.
    let (ok, _, err) =
        tabula(&["tournament", "domin-up", "-o", "players=4", "-p", "random", "-p", "greedy", "-p", "random"]);
    assert!(!ok && err.contains("needs at least 4 controllers"), "{err}");
}

#[test]
fn selfplay_in_shards_writes_the_positions_of_the_whole_run() {
    let dir = folder("selfplay");
    let out = dir.join("data");
    let out_text = out.display().to_string();
    let args = [
        "selfplay",
        "breakthrough",
        "-o",
        "rows=5",
        "-o",
        "cols=5",
        "--seat",
        "mcts:20",
        "--games",
        "5",
        "--seed",
        "3",
        "--out",
        &out_text,
    ];
    let whole = whole_json(&args);
    let merged = merge_json(&run_shards(&dir, &args, 2));
    assert_eq!(untimed(merged), untimed(whole.clone()));
    let positions = whole["positions"].as_u64().unwrap();
    assert_eq!(whole["games"], 5);
    // The second seat was not given: it searches too (mcts:200).
    assert_eq!(whole["controllers"][1]["spec"], "mcts:200");
    // Each shard's files, as NumPy reads them: a header, then the rows.
    let mut rows = 0;
    for prefix in ["shard-0-of-1", "shard-0-of-2", "shard-1-of-2"] {
        for name in ["observations", "masks", "policies", "returns", "values", "seats", "games", "plies"] {
            let bytes = std::fs::read(out.join(format!("{prefix}-{name}.npy"))).unwrap();
            assert_eq!(&bytes[..6], b"\x93NUMPY");
            let header = String::from_utf8_lossy(&bytes[10..10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize])
                .into_owned();
            let n: u64 = header.split("'shape': (").nth(1).unwrap().split([',', ')']).next().unwrap().parse().unwrap();
            if name == "returns" && prefix != "shard-0-of-1" {
                rows += n;
            }
            if name == "returns" && prefix == "shard-0-of-1" {
                assert_eq!(n, positions);
            }
        }
    }
    assert_eq!(rows, positions, "the shards hold the positions of the whole run");
    // A game without integer actions cannot be stored.
    let (ok, _, err) = tabula(&["selfplay", "campo-bello", "--games", "1", "--out", &out_text]);
    assert!(!ok && err.contains("does not number its moves"), "{err}");
}
