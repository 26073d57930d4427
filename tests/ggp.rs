//! `tabula ggp` against `tabula ggp`: a small game manager (here) sends
//! START, PLAY and STOP over HTTP with clocks, checks every move is legal
//! and in time, and plays tic-tac-toe (also with scrambled names) and
//! Breakthrough 6x6 to the end; bad messages get the protocol's answers.

mod common;

use common::web::http;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use tabula::engine::Arg;
use tabula::game::{Game, State};

/// A `tabula ggp` process on a free port.
struct Player {
    _child: common::Process,
    addr: SocketAddr,
}

fn player(controller: &str, seed: u64) -> Player {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["ggp", "--listen", "127.0.0.1:0", "--controller", controller, "--seed", &seed.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.split("http://").nth(1).and_then(|r| r.split_whitespace().next()).unwrap();
    Player { _child: common::Process(child), addr: addr.parse().unwrap() }
}

fn post(p: &Player, message: &str) -> (u16, String) {
    http(p.addr, "POST", "/", message.as_bytes())
}

fn load(kif: &str) -> Game {
    let path = std::env::temp_dir().join(format!("tabula-ggp-{}-{}.kif", std::process::id(), kif.len()));
    std::fs::write(&path, kif).unwrap();
    tabula::loader::load(&path).unwrap().0
}

/// The actions `role` may take in `s` (KIF text).
fn actions(g: &mut Game, s: &State, role: &str) -> Vec<String> {
    let r = g.engine().parse_term(role).unwrap();
    let sols = g.engine().call("gdl_role_actions", &[Arg::In(s.term()), Arg::In(&r), Arg::Out], 1).unwrap();
    match g.engine().value(&sols[0][0]) {
        tabula::engine::Value::List(items) => items.iter().map(|v| v.as_text().unwrap().to_string()).collect(),
        other => panic!("{other:?}"),
    }
}

/// What the game manager tells the players after each round.
#[derive(Clone, Copy, PartialEq)]
enum Protocol {
    /// GDL: `(PLAY id moves)`, the joint move.
    Gdl,
    /// GDL-II: `(PLAY id turn lastmove percepts)`, each player's own move
    /// and its percepts only.
    GdlII,
}

/// Runs a whole match between two players; returns the number of rounds.
fn run_match(kif: &str, id: &str, players: &[&Player], play_clock: f64) -> usize {
    run_match_as(Protocol::Gdl, kif, id, players, play_clock, 0)
}

/// Runs a whole match; chance's moves (GDL-II's role `random`) are drawn
/// here, from `seed`. Returns the number of rounds.
fn run_match_as(protocol: Protocol, kif: &str, id: &str, players: &[&Player], play_clock: f64, seed: u64) -> usize {
    let mut g = load(kif);
    let o = g.options_term(&[]).unwrap();
    let roles = g.players(&o).unwrap();
    let mut s = g.initial_state(&o, 0).unwrap();
    for (p, role) in players.iter().zip(&roles) {
        assert_eq!(post(p, &format!("(START {id} {role} ({kif}) 10 {play_clock})")), (200, "ready".to_string()));
    }
    let mut rng = seed;
    let mut rounds = 0;
    // What the message after `rounds` rounds tells `role`.
    let news = |g: &mut Game, s: &State, role: &str, rounds: usize, joint: &[String]| match protocol {
        Protocol::Gdl if rounds == 0 => "NIL".to_string(),
        Protocol::Gdl => format!("({})", joint.join(" ")),
        Protocol::GdlII if rounds == 0 => "0 NIL NIL".to_string(),
        Protocol::GdlII => format!("{rounds} {}", told(g, s, role)),
    };
    let mut joint: Vec<String> = Vec::new();
    while g.outcome(&s).unwrap().is_none() {
        let mut answers = Vec::new();
        for (p, role) in players.iter().zip(&roles) {
            let t = Instant::now();
            let (status, mv) = post(p, &format!("(PLAY {id} {})", news(&mut g, &s, role, rounds, &joint)));
            let took = t.elapsed().as_secs_f64();
            assert_eq!(status, 200);
            assert!(took < play_clock, "{role} took {took:.2} s of a {play_clock} s play clock");
            let legal = actions(&mut g, &s, role);
            assert!(legal.contains(&mv), "{role} answered {mv}, not one of {legal:?}");
            answers.push(mv);
        }
        // Apply the round: each role that chooses plays its action,
        // chance a move drawn here.
        loop {
            let legal = g.legal_moves(&s).unwrap();
            let k = if g.chance(&s).unwrap() {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((rng >> 33) as usize) % legal.len()
            } else {
                let mover = g.to_move(&s).unwrap();
                let i = roles.iter().position(|r| *r == mover).unwrap();
                legal.iter().position(|l| l.text == answers[i]).unwrap()
            };
            let hidden = g.hidden_move(&s).unwrap();
            s = legal[k].next.clone();
            if !hidden {
                break;
            }
        }
        joint = answers;
        rounds += 1;
        assert!(rounds < 200, "the match does not end");
    }
    for (p, role) in players.iter().zip(&roles) {
        let message = format!("(STOP {id} {})", news(&mut g, &s, role, rounds, &joint));
        assert_eq!(post(p, &message), (200, "done".to_string()));
    }
    rounds
}

/// What a GDL-II game manager tells `role` after the round that led to
/// `s`: its action and its percepts (`gdl_told/4`).
fn told(g: &mut Game, s: &State, role: &str) -> String {
    let r = g.engine().parse_term(role).unwrap();
    let sols = g.engine().call("gdl_told", &[Arg::In(s.term()), Arg::In(&r), Arg::Out, Arg::Out], 1).unwrap();
    let action = g.engine().value(&sols[0][0]).as_text().unwrap().to_string();
    let percepts: Vec<String> = match g.engine().value(&sols[0][1]) {
        tabula::engine::Value::List(items) => items.iter().map(|v| v.as_text().unwrap().to_string()).collect(),
        _ => Vec::new(),
    };
    format!("{action} ({})", percepts.join(" "))
}

/// GDL-II over GGP: the players are told only their own moves and their
/// percepts, and play legal moves to the end of Kuhn poker (chance deals)
/// and Krieg tic-tac-toe.
#[test]
fn two_players_play_gdl_ii_games_from_their_percepts() {
    let (a, b) = (player("mcts:100", 1), player("mcts:100", 2));
    for seed in 0..4 {
        let kuhn = game_text("kuhn-poker.kif");
        let rounds = run_match_as(Protocol::GdlII, &kuhn, &format!("kuhn{seed}"), &[&a, &b], 3.0, seed);
        assert!((3..=4).contains(&rounds), "{rounds}");
    }
    let rounds = run_match_as(Protocol::GdlII, &game_text("krieg-tictactoe.kif"), "krieg", &[&a, &b], 3.0, 0);
    assert!(rounds >= 5, "{rounds}");
}

fn game_text(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(name)).unwrap()
}

#[test]
fn two_players_play_tictactoe_and_breakthrough_with_clocks() {
    let (a, b) = (player("mcts:200", 1), player("mcts:200", 2));
    let rounds = run_match(&game_text("tictactoe.kif"), "ttt1", &[&a, &b], 3.0);
    assert!((5..=9).contains(&rounds), "{rounds}");
    let rounds = run_match(&game_text("breakthrough-6x6.kif"), "bt6", &[&a, &b], 3.0);
    assert!(rounds >= 9, "{rounds}");
    // The same players go on to the next match.
    let rounds = run_match(&game_text("rock-paper-scissors.kif"), "rps", &[&a, &b], 3.0);
    assert_eq!(rounds, 3);
}

/// Every symbol of a KIF text but GDL's keywords and numbers renamed, in
/// mixed case, as GGP servers do.
fn scramble(kif: &str) -> String {
    use tabula::gdl::parse::{Sexp, read_sexps};
    const KEEP: &[&str] =
        &["role", "init", "true", "does", "next", "legal", "terminal", "goal", "not", "distinct", "or", "<=", "base"];
    fn walk(s: &Sexp, names: &mut Vec<String>) -> Sexp {
        match s {
            Sexp::Sym(x, sp) if !KEEP.contains(&x.as_str()) && !x.bytes().all(|b| b.is_ascii_digit()) => {
                let i = names.iter().position(|n| n == x).unwrap_or_else(|| {
                    names.push(x.clone());
                    names.len() - 1
                });
                Sexp::Sym(format!("Zq{i}W"), *sp)
            }
            Sexp::List(items, sp) => Sexp::List(items.iter().map(|i| walk(i, names)).collect(), *sp),
            other => other.clone(),
        }
    }
    let mut names = Vec::new();
    read_sexps(kif).unwrap().iter().map(|s| tabula::ggp::text(&walk(s, &mut names))).collect::<Vec<_>>().join("\n")
}

/// Servers scramble symbol names: nothing depends on them.
#[test]
fn scrambled_names_are_fine() {
    let kif = scramble(&game_text("tictactoe.kif"));
    assert!(!kif.contains("mark") && kif.contains("(role Zq0W)"), "{kif}");
    let (a, b) = (player("mcts:100", 3), player("random", 4));
    let rounds = run_match(&kif, "scrambled", &[&a, &b], 3.0);
    assert!((3..=9).contains(&rounds));
}

/// Malformed messages, an unknown match, a second START while busy, and
/// non-POST requests get the protocol's answers, and the match goes on.
#[test]
fn bad_messages_get_answers_and_the_match_goes_on() {
    let p = player("random", 5);
    let kif = game_text("tictactoe.kif");
    assert_eq!(post(&p, "(INFO)"), (200, "((name tabula) (status available))".to_string()));
    assert_eq!(post(&p, &format!("(START m1 x ({kif}) 10 2)")).1, "ready");
    assert_eq!(post(&p, "(INFO)").1, "((name tabula) (status busy))");
    assert_eq!(post(&p, &format!("(START m2 o ({kif}) 10 2)")).1, "busy");
    assert_eq!(post(&p, "(PLAY other NIL)").1, "busy");
    assert_eq!(post(&p, "(STOP other NIL)").1, "busy");
    for bad in
        ["(((", ")", "", "(PLAY)", "(PLAY m1 mark)", "(FLY m1)", "(START m3 x (role x) ten 2)", "(a) (b)", "\"x\""]
    {
        let (status, body) = post(&p, bad);
        assert_eq!(status, 400, "{bad:?}: {body}");
        assert!(body.starts_with("(error"), "{bad:?}: {body}");
    }
    let (status, _) = http(p.addr, "GET", "/", b"");
    assert_eq!(status, 405);
    let (status, mv) = post(&p, "(PLAY m1 NIL)");
    assert_eq!(status, 200);
    assert!(mv.starts_with("(mark "), "{mv}");
    assert_eq!(post(&p, "(ABORT m1)").1, "aborted");
    assert_eq!(post(&p, "(INFO)").1, "((name tabula) (status available))");
    assert_eq!(post(&p, &format!("(PREVIEW ({kif}) 10)")).1, "ready");
    // Rules that do not load: an error, and the player stays available.
    let (status, body) = post(&p, "(START m4 x ((role x) (<= (legal ?r go))) 10 2)");
    assert_eq!(status, 400, "{body}");
    assert_eq!(post(&p, "(INFO)").1, "((name tabula) (status available))");
}
