//! `tabula play` driven through stdin: illegal input, undo, save, resume,
//! records that no longer fit, and a whole game to a win.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tabula-play-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn play(dir: &Path, args: &[&str], stdin: &str) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .arg("play")
        .arg("breakthrough")
        .args(["--games", concat!(env!("CARGO_MANIFEST_DIR"), "/games")])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn scripted_game_with_illegal_input_undo_save_and_resume() {
    let dir = workdir("script");
    let script = "help\nz9-z9\nmoves\na2-a3\nundo\nb2-b3\n7\nsave game.txt\nquit\n";
    let (out, err, code) = play(&dir, &["--seed", "1", "--seat", "black=random"], script);
    assert_eq!(code, 0, "{err}");
    let record = std::fs::read_to_string(dir.join("game.txt")).unwrap();
    let (out2, err2, code2) = play(&dir, &["--resume", "game.txt"], "h2-h3\nquit\n");
    assert_eq!(code2, 0, "{err2}");
    std::fs::remove_dir_all(&dir).ok();
    insta::assert_snapshot!(format!("{out}--- record\n{record}--- resumed\n{out2}"));
}

#[test]
fn a_record_that_no_longer_fits_fails_at_its_line_and_is_not_overwritten() {
    let dir = workdir("bad");
    let bad = "# tabula game record\ngame: breakthrough\noptions: rows=8 cols=8\nseed: 1\nseats: white=human black=random\nmoves:\na2-a3\nh7-h6\na3-a9\n";
    std::fs::write(dir.join("bad.txt"), bad).unwrap();
    let (_, err, code) = play(&dir, &["--resume", "bad.txt", "--record", "bad.txt"], "quit\n");
    let after = std::fs::read_to_string(dir.join("bad.txt")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 2);
    assert!(err.contains("bad.txt:9:") && err.contains("`a3-a9` is not a legal move here"), "{err}");
    assert_eq!(after, bad, "the record was overwritten");
}

/// Killed at any moment, a game leaves its record whole (the last one
/// written, never a truncated file), and `--resume` goes on from it.
#[test]
fn a_game_killed_mid_write_resumes_from_its_record() {
    let dir = workdir("killed");
    let args = ["--option", "rows=12", "--option", "cols=12", "--seat", "white=random", "--seat", "black=random"];
    for k in 0..8u64 {
        let record = format!("g{k}.txt");
        let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(["play", "breakthrough", "--games", concat!(env!("CARGO_MANIFEST_DIR"), "/games")])
            .args(args)
            .args(["--seed", &k.to_string(), "--record", &record])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Once the game is under way (its first record written), at a
        // different moment each time.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !dir.join(&record).exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        std::thread::sleep(std::time::Duration::from_millis(5 * k));
        let _ = child.kill();
        let _ = child.wait();
        let text = std::fs::read_to_string(dir.join(&record)).unwrap();
        // Whole: it parses, and every move in it replays.
        let r = tabula::game::record::Record::parse(&text).unwrap_or_else(|e| panic!("{record}: {e:?}\n{text}"));
        assert!(text.ends_with('\n'), "{record} is cut short: {text:?}");
        let (out, err, code) = play(&dir, &["--resume", &record, "--record", &record], "");
        assert_eq!(code, 0, "{record}: {err}");
        assert!(out.contains(&format!("resumed {record} after {} moves", r.moves.len())), "{out}");
        assert!(out.contains("game over: white wins") || out.contains("game over: black wins"), "{out}");
    }
    // No temporary file of a killed write outlives the next save.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    std::fs::remove_dir_all(&dir).ok();
    assert!(left.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")), "{left:?}");
}

#[test]
fn two_computer_players_finish_a_game_with_a_winner() {
    let dir = workdir("full");
    let (out, err, code) =
        play(&dir, &["--seat", "white=random", "--seat", "black=rules", "--seed", "5", "--record", "g.txt"], "");
    let record = std::fs::read_to_string(dir.join("g.txt")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("game over: white wins") || out.contains("game over: black wins"), "{out}");
    assert!(out.contains("scores: white "), "{out}");
    let moves = record.lines().skip_while(|l| *l != "moves:").count() - 1;
    assert!(moves > 5, "{record}");
}

#[test]
fn bad_seats_and_controllers_are_clear_errors() {
    let dir = workdir("seats");
    let (_, err, code) = play(&dir, &["--seat", "red=human"], "");
    assert_eq!(code, 2);
    assert!(err.contains("no seat `red`") && err.contains("white, black"), "{err}");
    let (_, err, code) = play(&dir, &["--seat", "black=alphazero"], "");
    assert_eq!(code, 2);
    assert!(err.contains("unknown controller `alphazero`"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_ambiguous_prefix_lists_the_moves_it_could_be() {
    let dir = workdir("ambiguous");
    let (out, err, code) = play(&dir, &["--seat", "black=random"], "a2\na2-b\nquit\n");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("`a2` is ambiguous: it begins a2-a3 and a2-b3; type more of the move"), "{out}");
    assert!(!out.contains("`a2` is not a legal move"), "{out}");
    assert!(out.contains("last move: a2-b3"), "{out}");
}

/// A seat its game cannot serve (the `rules` controller of a game without
/// `choose_move/3`) is refused before the first move, in `play`, `match`
/// and `tournament`.
#[test]
fn a_seat_the_game_cannot_serve_is_refused_at_the_start() {
    let tabula = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code(),
        )
    };
    let refusal = "amazons has no choose_move/3 for the rules controller; use random, greedy, minimax or mcts";
    let (out, err, code) =
        tabula(&["play", "amazons", "-o", "size=6", "--seat", "white=random", "--seat", "black=rules"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains(refusal), "{err}");
    assert!(!out.contains("plays"), "a move was played before the refusal: {out}");
    let (_, err, code) =
        tabula(&["match", "amazons", "-o", "size=6", "--seat", "random", "--seat", "rules", "--games", "2"]);
    assert_eq!(code, Some(2));
    assert!(err.contains(refusal), "{err}");
    let (_, err, code) =
        tabula(&["tournament", "amazons", "-o", "size=6", "-p", "random", "-p", "rules:2", "--games", "2"]);
    assert_eq!(code, Some(2));
    assert!(err.contains(refusal), "{err}");
}

/// With only `random` at the table, a hint comes from a player that looks
/// ahead (`mcts`), and says which.
#[test]
fn a_hint_comes_from_a_player_that_looks_ahead() {
    let dir = workdir("hint");
    let (out, err, code) = play(&dir, &["--seat", "black=random", "--think", "0.2"], "hint\nquit\n");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("hint (mcts): "), "{out}");
    assert!(!out.contains("hint (random)"), "{out}");
}

/// A refused move is told why, from the rules, under the refusal; a text
/// that is no move of the game gets the refusal alone.
#[test]
fn a_refused_move_is_explained_from_the_rules() {
    let dir = workdir("explain");
    let (out, err, code) = play(&dir, &["--seat", "black=random"], "e1-e2\nz9-z9\nquit\n");
    assert_eq!(code, 0, "{err}");
    std::fs::remove_dir_all(&dir).ok();
    let refused = out.find("`e1-e2` is not a legal move here").expect("the refusal");
    let why = &out[refused..];
    let lines: Vec<&str> = why.lines().collect();
    // The rules' file as the game was found (here by its full path).
    assert!(lines[1].contains("breakthrough.rules:47:5: in move/3, `piece_move("), "{why}");
    assert!(lines[1].ends_with("X1 = 5, Y1 = 1, X2 = 5, Y2 = 2"), "{why}");
    assert!(lines[2].starts_with("  ") && lines[2].ends_with("breakthrough.rules:96:5: in piece_move/12, `landing(DX, Target, Me, Captured)` failed, with Me = w, DX = 0, Target = w"), "{why}");
    let z = out.find("`z9-z9` is not a legal move here").expect("the second refusal");
    assert!(out[z..].lines().nth(1).unwrap().starts_with("(type `help`"), "{}", &out[z..]);
}
