//! The `tabula` command line as a user runs it: output, JSON, exit codes.

use std::io::Write;
use std::process::{Command, Stdio};

fn fixture(name: &str) -> String {
    format!("tests/fixtures/cli/{name}")
}

/// Runs tabula with `args` (and `stdin`), returning a transcript of
/// stdout, stderr and the exit code.
fn run(args: &[&str], stdin: Option<&str>) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn transcript(args: &[&str], stdin: Option<&str>) -> String {
    let (out, err, code) = run(args, stdin);
    format!("$ tabula {}\n--- stdout\n{out}--- stderr\n{err}--- exit {code}\n", args.join(" "))
}

#[test]
fn query_prints_answers_like_the_prolog_toplevel() {
    let f = fixture("family.pl");
    let mut t = String::new();
    for goal in ["grandparent(tom, X)", "parent(X, Y)", "parent(ann, _)", "say(world)", "X = f(Y, _Z)", "X is 1/0"] {
        t.push_str(&transcript(&["query", &f, goal], None));
    }
    t.push_str(&transcript(&["query", &f, "parent(tom, X)", "--limit", "1"], None));
    insta::assert_snapshot!(t);
}

#[test]
fn query_exit_codes() {
    let f = fixture("family.pl");
    assert_eq!(run(&["query", &f, "parent(tom, bob)"], None).2, 0);
    assert_eq!(run(&["query", &f, "parent(bob, tom)"], None).2, 1);
    assert_eq!(run(&["query", &f, "undefined_thing"], None).2, 2);
    assert_eq!(run(&["query", &f, "parent(("], None).2, 2);
    assert_eq!(run(&["query", "no/such/file.pl", "true"], None).2, 2);
}

#[test]
fn query_json_lines() {
    let f = fixture("family.pl");
    let mut t = String::new();
    for goal in ["parent(bob, X)", "parent(ann, X)", "atom_length(X, 3)"] {
        t.push_str(&transcript(&["query", &f, goal, "--json"], None));
    }
    for line in t.lines().filter(|l| l.starts_with('{')) {
        serde_json::from_str::<serde_json::Value>(line).expect("each line is JSON");
    }
    insta::assert_snapshot!(t);
}

#[test]
fn queries_from_a_pipe() {
    let f = fixture("family.pl");
    insta::assert_snapshot!(transcript(&["query", &f], Some("parent(tom, X).\ngrandparent(A, B).\nfoo(\n")));
}

#[test]
fn check_reports_errors_and_warnings() {
    let mut t = transcript(&["check", &fixture("family.pl")], None);
    t.push_str(&transcript(&["check", "tests/fixtures/parse_err/several_errors.rules"], None));
    t.push_str(&transcript(&["check", "tests/fixtures/warnings/undefined.rules"], None));
    insta::assert_snapshot!(t);
}

#[test]
fn a_file_that_is_not_text_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("tabula-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("binary.pl");
    std::fs::write(&file, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let (_, err, code) = run(&["query", file.to_str().unwrap(), "true"], None);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 2);
    assert!(err.contains("is not UTF-8 text"), "{err}");
}

#[test]
fn game_commands_speak_json_in_the_documented_shapes() {
    let g = ["--games", "games"];
    let (out, _, code) = run(&["perft", "breakthrough", "2", g[0], g[1], "--json"], None);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["game"], "breakthrough");
    assert_eq!(v["options"]["rows"], "8");
    assert_eq!(v["depths"][1]["depth"], 2);
    assert_eq!(v["depths"][1]["nodes"], 484);
    assert!(v["depths"][1]["seconds"].is_number());

    let (out, _, _) = run(&["moves", "breakthrough", g[0], g[1], "--after", "a2-a3 h7-h6", "--json"], None);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["to_move"], "white");
    assert_eq!(v["moves"].as_array().unwrap().len(), 23);

    let state = "s(black,5,5,1,1,white,b(e,e,e,e,e,e,e,e,e,e,e,e,e,e,e,e,e,e,e,b,e,e,e,e,w))";
    let (out, err, code) = run(&["moves", "breakthrough", g[0], g[1], "--state", state, "--json"], None);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["game_over"]["result"], "winner");
    assert_eq!(v["game_over"]["player"], "white");

    let (out, _, _) = run(&["bench", "breakthrough", g[0], g[1], "--playouts", "20", "--seed", "1", "--json"], None);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["playouts"], 20);
    let r = &v["results"];
    assert_eq!(r["white"].as_u64().unwrap() + r["black"].as_u64().unwrap() + r["draw"].as_u64().unwrap(), 20);
    assert!(v["average_length"].as_f64().unwrap() > 10.0);
    assert!(v["playouts_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn check_takes_a_game_by_name() {
    let (out, err, code) = run(&["check", "chess", "--games", "games"], None);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("games/chess.rules: game ok"), "{out}");
    // What its random games were like, in a line.
    let said = out.lines().find(|l| l.starts_with("games/chess.rules: 5 random games: ")).unwrap_or_default();
    assert!(
        said.contains("plies a game") && said.contains("moves a position") && said.contains("slowest ply"),
        "{out}"
    );
    let (_, err, code) = run(&["check", "mancala", "--games", "games"], None);
    assert_ne!(code, 0);
    assert!(err.contains("no game named `mancala`") && err.contains("chess"), "{err}");
}

#[test]
fn bad_game_arguments_are_clear_errors() {
    let (_, err, code) = run(&["perft", "mancala", "2", "--games", "games"], None);
    assert_eq!(code, 2);
    assert!(err.contains("no game named `mancala`") && err.contains("breakthrough"), "{err}");
    let (_, err, code) = run(&["moves", "breakthrough", "--games", "games", "--after", "a2-a5"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--after, move 1: `a2-a5` is not a legal move here"), "{err}");
    let (_, err, code) = run(&["moves", "breakthrough", "--games", "games", "--state", "s(white, X)"], None);
    assert_eq!(code, 2);
    assert!(err.contains("not ground"), "{err}");
    // A ground term that is no state of the game: the rules cannot play
    // from it, or give no move where the game goes on.
    let (_, err, code) = run(&["moves", "breakthrough", "--games", "games", "--state", "foo"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--state: the rules cannot play from this state: to_move/2 failed"), "{err}");
    let public = "tests/fixtures/games_public/public_hands.rules";
    let (_, err, code) = run(&["moves", public, "--state", "s(a, 0, 2, [])"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--state: no legal move in this state, and game_over/2 does not end it"), "{err}");
}

#[test]
fn bad_serve_limits_are_clear_errors() {
    let (_, err, code) = run(&["serve", "--max-memory", "64M", "--session-memory", "256M"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--max-memory (64 MB) must hold at least one session"), "{err}");
    let (_, err, code) = run(&["serve", "--per-client-rate", "0"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--per-client-rate takes a positive number"), "{err}");
    let (_, err, code) = run(&["serve", "--handshake", "0"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--handshake takes a positive number of seconds, not 0"), "{err}");
}

/// `bench --seconds S` plays for S seconds once its engine is loaded, and
/// its rate leaves the loading out: a game that takes longer than S to load
/// (here a table of 300,000 facts) still plays.
#[test]
fn a_bench_for_a_time_plays_after_loading() {
    let dir = std::env::temp_dir().join(format!("tabula-bench-time-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("take.rules");
    let mut rules = String::from(
        "title(take).
players(_, [a, b]).
other(a, b).
other(b, a).
to_move(s(P, _), P).
game_over(s(P, 0), winner(W)) :- other(P, W).
initial_state(_, s(a, 5)).
move(s(P, N), take(K), s(O, M)) :- member(K, [1, 2]), K =< N, M is N - K, other(P, O).
",
    );
    for i in 0..300_000 {
        rules += &format!("filler({i}).\n");
    }
    std::fs::write(&path, rules).unwrap();
    let started = std::time::Instant::now();
    let (out, err, code) =
        run(&["bench", path.to_str().unwrap(), "--seconds", "0.05", "--threads", "1", "--json"], None);
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["playouts"].as_u64().unwrap() > 0, "{v}");
    // The run loads the file twice (the job, then its thread's engine);
    // the seconds reported are those of the playing.
    let seconds = v["seconds"].as_f64().unwrap();
    assert!(seconds < wall / 2.0, "{seconds} s of {wall} s: {v}");
}

#[test]
fn bench_results_do_not_depend_on_the_thread_count() {
    let json = |threads: &str| {
        let (out, err, code) = run(
            &[
                "bench",
                "breakthrough",
                "-o",
                "rows=5",
                "-o",
                "cols=5",
                "--playouts",
                "60",
                "--seed",
                "7",
                "--json",
                "--threads",
                threads,
            ],
            None,
        );
        assert_eq!(code, 0, "{err}");
        let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
        for k in ["seconds", "playouts_per_second", "plies_per_second"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    let one = json("1");
    assert_eq!(one["playouts"], 60);
    let wins: u64 = one["results"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(wins, 60, "every playout has a result: {one}");
    assert_eq!(one, json("2"));
    assert_eq!(one, json("3"));
}

/// `coverage` names the clause nothing calls, the goal never called and
/// the guards that never hold, with their places; `--json` has every
/// count; a GDL file is refused with the reason.
#[test]
fn coverage_finds_the_rules_random_games_never_use() {
    let (out, err, code) = run(&["coverage", "tests/fixtures/coverage/dead.rules", "--games", "10"], None);
    assert_eq!(code, 0, "{err}");
    let f = "tests/fixtures/coverage/dead.rules";
    // How often a guard was tried depends on the games drawn: not checked.
    let lines: Vec<String> = out
        .lines()
        .map(|l| match l.split_once("called ") {
            Some((a, b)) if b.contains(" times") => format!("{a}called N{}", &b[b.find(" times").unwrap()..]),
            _ => l.to_string(),
        })
        .collect();
    assert_eq!(
        lines,
        [
            format!("{f}: 10 random games: 12 of 13 clauses ran; in those, 7 of 10 goals succeeded"),
            format!("{f}:17:5: `N > 100` in move/3: called N times, never succeeded"),
            format!("{f}:18:5: `other(P, O)` in move/3: never called"),
            format!("{f}:21:17: `N > 1000` in bonus/2: called N times, never succeeded"),
            format!("{f}:24: a clause of heap_left/2 never ran"),
        ]
    );
    let (out, _, code) = run(&["coverage", "tests/fixtures/coverage/dead.rules", "--games", "10", "--json"], None);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let clauses = v["clauses"].as_array().unwrap();
    assert_eq!(clauses.len(), 13);
    let take = &clauses[6];
    assert_eq!(take["predicate"], "move/3");
    assert_eq!(take["goals"][0]["goal"], "N =< 100");
    assert!(take["goals"].as_array().unwrap().iter().all(|g| g["succeeded"].as_u64().unwrap() > 0));
    let (_, err, code) = run(&["coverage", "games/tictactoe.kif"], None);
    assert_eq!(code, 2);
    assert!(err.contains("coverage counts the clauses of a .rules file"), "{err}");
}

/// `explain` says why a move is refused from the rules: the goal that
/// failed, where, with the values of its variables, inside the
/// predicates it calls; in a game with hidden pieces it shows no value.
#[test]
fn explain_says_which_rule_refuses_a_move() {
    let (out, err, code) = run(&["explain", "breakthrough", "e1-e2"], None);
    assert_eq!(code, 1, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "`e1-e2` is not a legal move for white here:");
    assert!(lines[1].starts_with("games/breakthrough.rules:47:5: in move/3, `piece_move(P, R, C, B, X1, Y1, X2, Y2, I, J, Me, Captured)` failed, with P = white"), "{out}");
    assert_eq!(
        lines[2],
        "  games/breakthrough.rules:96:5: in piece_move/12, `landing(DX, Target, Me, Captured)` failed, with Me = w, DX = 0, Target = w"
    );

    let (out, _, code) = run(&["explain", "connect4", "4", "--after", "4 4 4 4 4 4"], None);
    assert_eq!(code, 1);
    assert!(out.ends_with("  games/connect4.rules:66:5: in column/5, `N < R` failed, with R = 6, N = 6\n"), "{out}");

    // Hidden hands: the rules run on a re-deal, and no value is shown.
    let (out, _, code) = run(&["explain", "domin-up", "-o", "players=2", "place(1-7,-2,0,-1,0)"], None);
    assert_eq!(code, 1);
    assert!(out.contains("values are not shown"), "{out}");
    assert!(out.lines().skip(2).all(|l| l.ends_with("failed") || !l.contains("failed")), "{out}");
    assert!(!out.contains(", with "), "a value shown: {out}");

    // From where a game record got to (options, moves), then --after.
    let rec = std::env::temp_dir().join(format!("tabula-explain-{}.record", std::process::id()));
    std::fs::write(&rec, "# tabula game record\ngame: connect4\noptions: rows=5\nseed: 0\nseats:\nmoves:\n4\n4\n4\n")
        .unwrap();
    let (out, err, code) =
        run(&["explain", "connect4", "4", "--record", rec.to_str().unwrap(), "--after", "4 4"], None);
    assert_eq!(code, 1, "{err}");
    assert!(out.ends_with("  games/connect4.rules:66:5: in column/5, `N < R` failed, with R = 5, N = 5\n"), "{out}");
    let (_, err, code) = run(&["explain", "breakthrough", "a2-a3", "--record", rec.to_str().unwrap()], None);
    assert_eq!(code, 2);
    assert!(err.contains("is a record of connect4, not breakthrough"), "{err}");
    std::fs::remove_file(&rec).ok();

    let (out, _, code) = run(&["explain", "breakthrough", "a2-a3", "--json"], None);
    assert_eq!((out.trim(), code), (r#"{"legal":true,"move":"a2-a3"}"#, 0));
    let (out, _, code) = run(&["explain", "hasami-shogi", "a1-a9", "--json"], None);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["clauses"][0]["kind"], "failed");
    assert_eq!(v["clauses"][0]["inside"][0]["goal"], "slide(B, X1, Y1, DX, DY, X2, Y2)");
    let (_, err, code) = run(&["explain", "breakthrough", "e2-e4"], None);
    assert_eq!(code, 2);
    assert!(err.contains("`e2-e4` is no move of breakthrough"), "{err}");
}

#[test]
fn query_trace_on_a_game() {
    // The moves of Breakthrough traced two deep: each goal of move/3 with
    // where it is written, and the clause that answered.
    let goal = "initial_state([rows=5,cols=5], S), move(S, m(1,2,1,3), _)";
    let t =
        transcript(&["query", "games/breakthrough.rules", goal, "--trace", "--trace-depth", "2", "--limit", "1"], None);
    assert!(t.contains("Call: (2) piece_move(white,5,5,"), "{t}");
    assert!(t.contains("% games/breakthrough.rules:47:5, clause at line 75"), "{t}");
    insta::assert_snapshot!(t);
}

#[test]
fn query_trace_at_the_prompt_filtered_and_as_json() {
    let f = fixture("family.pl");
    let mut t = transcript(
        &["query", &f, "--ports", "call,fail"],
        Some("trace.\ngrandparent(tom, X).\nnotrace.\nparent(tom, X).\n"),
    );
    t.push_str(&transcript(&["query", &f, "parent(ann, X)", "--trace", "--ports", "nope"], None));
    insta::assert_snapshot!(t);
    let (out, _, code) = run(&["query", &f, "grandparent(tom, X)", "--trace", "--json", "--trace-depth", "1"], None);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ports: Vec<&str> = lines.iter().filter_map(|l| l["trace"]["port"].as_str()).collect();
    assert_eq!(ports[..2], ["call", "exit"], "{out}");
    assert!(lines.iter().all(|l| l["trace"].is_null() || l["trace"]["depth"] == 1), "{out}");
    assert_eq!(lines[1]["trace"]["clause"]["line"], 6, "{out}");
}
