//! `tabula serve --http`: the page and its files, the JSON API over HTTP
//! (the same ops as over TCP, plus `view`, `undo`, `hint`, `games`), the
//! event stream a page follows, bad input of every kind, and 32 clients
//! playing at once, each game's record equal to its local replay.

mod common;

use common::web::{api, http, ok, ok_from, start, start_with};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;
use tabula::server::Config;

#[test]
fn the_page_and_its_files_and_nothing_else() {
    let s = start();
    let (status, page) = http(s.addr, "GET", "/", b"");
    assert_eq!(status, 200);
    assert!(page.contains("<svg id=\"board\"") && page.contains("/board.js"), "{page}");
    for f in ["/board.js", "/board.css"] {
        let (status, body) = http(s.addr, "GET", f, b"");
        assert_eq!(status, 200, "{f}");
        assert!(body.len() > 500, "{f}: {body}");
    }
    for bad in
        ["/../Cargo.toml", "/src/server/web/board.js", "/%2e%2e/%2e%2e/etc/passwd", "/api", "/games/breakthrough.rules"]
    {
        let (status, body) = http(s.addr, "GET", bad, b"");
        assert!(status == 404 || status == 405, "{bad}: {status} {body}");
        assert!(!body.contains("title('Breakthrough')") && !body.contains("[package]"), "{bad} served a file: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["ok"], json!(false), "{bad}");
    }
}

#[test]
fn bad_requests_get_json_errors_and_the_session_plays_on() {
    let s = start();
    let game = ok(s.addr, json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}}));
    let id = game["session"].clone();
    let white = game["tokens"]["white"].clone();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("malformed JSON", b"{\"op\": ".to_vec(), 400, "bad_json"),
        ("not an object", b"[1, 2]".to_vec(), 400, "bad_request"),
        ("not UTF-8", vec![0xff, 0xfe, 0x7b], 400, "bad_json"),
        ("unknown op", json!({"op": "fly", "session": id}).to_string().into_bytes(), 400, "bad_request"),
        ("unknown session", json!({"op": "view", "session": 999}).to_string().into_bytes(), 404, "unknown_session"),
        (
            "illegal move",
            json!({"op": "play", "session": id, "move": "a1-a5", "token": white}).to_string().into_bytes(),
            400,
            "illegal_move",
        ),
        (
            "bad viewer",
            json!({"op": "view", "session": id, "viewer": "red"}).to_string().into_bytes(),
            400,
            "bad_request",
        ),
        (
            "nothing to undo",
            json!({"op": "undo", "session": id, "token": white}).to_string().into_bytes(),
            400,
            "bad_request",
        ),
        ("no token", json!({"op": "play", "session": id, "move": "b2-b3"}).to_string().into_bytes(), 403, "forbidden"),
        (
            "the other seat's token",
            json!({"op": "play", "session": id, "move": "b2-b3", "token": game["tokens"]["black"]})
                .to_string()
                .into_bytes(),
            403,
            "forbidden",
        ),
        (
            "a made-up token",
            json!({"op": "view", "session": id, "viewer": "white", "token": "0123"}).to_string().into_bytes(),
            403,
            "forbidden",
        ),
        ("a spectator's undo", json!({"op": "undo", "session": id}).to_string().into_bytes(), 403, "forbidden"),
        ("oversized body", vec![b' '; 70_000], 413, "too_large"),
    ];
    for (what, body, status, code) in cases {
        let (got, text) = http(s.addr, "POST", "/api", &body);
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"));
        assert_eq!((got, v["error"]["code"].as_str()), (status, Some(code)), "{what}: {v}");
        assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {v}");
    }
    let (status, _) = http(s.addr, "DELETE", "/api", b"");
    assert_eq!(status, 405);
    // The session is unharmed.
    let played = ok(s.addr, json!({"op": "play", "session": id, "move": "b2-b3", "token": white}));
    assert_eq!(played["status"]["to_move"], json!("black"));
}

#[test]
fn a_page_sees_the_board_its_moves_and_their_clicks() {
    let s = start();
    let g = ok(s.addr, json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}}));
    let t = g["tokens"]["white"].clone();
    let v = ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": "white", "token": t}));
    assert_eq!(v["board"]["sites"].as_array().unwrap().len(), 25);
    assert_eq!(v["board"]["pieces"].as_array().unwrap().len(), 20);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 13, "{v}");
    assert!(moves.iter().any(|m| m["text"] == json!("b2-b3") && m["clicks"] == json!(["b2", "b3"])), "{v}");
    // Taken back: the position and the history are as before.
    ok(s.addr, json!({"op": "play", "session": g["session"], "move": "b2-b3", "token": t}));
    let after = ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": "white", "token": t}));
    assert_eq!(after["last_clicks"], json!(["b2", "b3"]));
    ok(s.addr, json!({"op": "undo", "session": g["session"], "token": t}));
    let back = ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": "white", "token": t}));
    assert_eq!(back["board"], v["board"]);
    assert_eq!(back["history"], json!([]));
    // A hint is a legal move, not played.
    let h = ok(s.addr, json!({"op": "hint", "session": g["session"], "controller": "greedy", "token": t}));
    assert!(moves.iter().any(|m| m["text"] == h["move"] && m["clicks"] == h["clicks"]), "{h}");
    assert_eq!(ok(s.addr, json!({"op": "status", "session": g["session"]}))["ply"], json!(0));
}

#[test]
fn hidden_hands_stay_with_their_seat() {
    let s = start();
    let g = ok(s.addr, json!({"op": "new", "game": "domin-up", "seed": 4}));
    let mover = ok(s.addr, json!({"op": "status", "session": g["session"]}))["to_move"].as_str().unwrap().to_string();
    let other = if mover == "p1" { "p2" } else { "p1" };
    let mine =
        ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": mover, "token": g["tokens"][&mover]}));
    let theirs =
        ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": other, "token": g["tokens"][other]}));
    // Without the mover's token, no view of its hand and no list of its moves.
    let (status, v) =
        api(s.addr, json!({"op": "view", "session": g["session"], "viewer": mover, "token": g["tokens"][other]}));
    assert_eq!((status, &v["error"]["code"]), (403, &json!("forbidden")), "{v}");
    let (status, v) = api(s.addr, json!({"op": "moves", "session": g["session"]}));
    assert_eq!((status, &v["error"]["code"]), (403, &json!("forbidden")), "{v}");
    let spectator = ok(s.addr, json!({"op": "view", "session": g["session"]}));
    // The mover sees its tiles and can place them by clicks.
    let hand =
        |v: &Value, p: &str| v["board"]["hands"].as_array().unwrap().iter().find(|h| h["player"] == json!(p)).cloned();
    let own = hand(&mine, &mover).unwrap();
    assert!(own["items"].as_array().unwrap().iter().all(|i| i["kind"] == json!("piece")));
    let first = &mine["moves"][0];
    assert!(first["clicks"][0].as_str().unwrap().starts_with("hand("), "{first}");
    // The others see a count only, and no moves (their notation names the tiles).
    for v in [&theirs, &spectator] {
        let h = hand(v, &mover).unwrap();
        assert_eq!(h["items"].as_array().unwrap().len(), 1, "{h}");
        assert_eq!(h["items"][0]["kind"], json!("hidden"));
        assert_eq!(v["moves"], json!([]));
        let text = v.to_string();
        for item in own["items"].as_array().unwrap() {
            let label = item["label"].as_str().unwrap();
            assert!(!text.contains(&format!("\"{label}\"")), "{} sees {label}", v["viewer"]);
        }
    }
}

/// Reads events from a session's stream until `n` have come.
fn events(addr: SocketAddr, session: &Value, n: usize) -> std::thread::JoinHandle<Vec<Value>> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "GET /api/events?session={session} HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    // The head, up to the empty line, and the first comment: the stream is open.
    while r.read_line(&mut line).is_ok_and(|k| k > 0) && !line.starts_with(": hello") {
        line.clear();
    }
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut line = String::new();
        while got.len() < n {
            line.clear();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if let Some(data) = line.strip_prefix("data: ") {
                got.push(serde_json::from_str(data.trim()).unwrap());
            }
        }
        got
    })
}

#[test]
fn every_page_of_a_session_hears_of_each_move_and_the_computer_replies() {
    let s = start();
    let g = ok(
        s.addr,
        json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}, "seats": {"black": "random"}, "auto": true, "seed": 2}),
    );
    let (a, b) = (events(s.addr, &g["session"], 3), events(s.addr, &g["session"], 3));
    let t = g["tokens"]["white"].clone();
    ok(s.addr, json!({"op": "play", "session": g["session"], "move": "c2-c3", "token": t}));
    for page in [a, b] {
        let got = page.join().unwrap();
        let kinds: Vec<&str> = got.iter().map(|e| e["event"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["move", "thinking", "move"], "{got:?}");
        assert_eq!(got[0]["last_move"], json!("c2-c3"));
        assert_eq!(got[2]["ply"], json!(2));
    }
    // The computer's reply is in the session; undo takes back both moves.
    let v = ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": "white", "token": t}));
    assert_eq!(v["history"].as_array().unwrap().len(), 2);
    let u = ok(s.addr, json!({"op": "undo", "session": g["session"], "token": t}));
    assert_eq!(u["undone"].as_array().unwrap().len(), 2, "{u}");
    let (status, body) = http(s.addr, "GET", "/api/events?session=77", b"");
    assert_eq!(status, 404, "{body}");
}

#[test]
fn thirty_two_clients_play_at_once_and_every_record_replays() {
    let s = start();
    let addr = s.addr;
    let clients: Vec<_> = (0..32u64)
        .map(|k| {
            std::thread::spawn(move || {
                let seed = 100 + k;
                let g = ok_from(
                    10 + k as u8,
                    addr,
                    json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}, "seed": seed}),
                );
                let id = g["session"].clone();
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                loop {
                    let v = ok_from(10 + k as u8, addr, json!({"op": "view", "session": id, "viewer": "spectator"}));
                    if !v["game_over"].is_null() {
                        let history: Vec<String> =
                            v["history"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
                        ok_from(
                            10 + k as u8,
                            addr,
                            json!({"op": "close", "session": id, "token": g["tokens"]["white"]}),
                        );
                        return (seed, history, v["game_over"].clone());
                    }
                    let moves = v["moves"].as_array().unwrap();
                    let m = &moves[rng.gen_range(0..moves.len())];
                    let token = &g["tokens"][v["to_move"].as_str().unwrap()];
                    ok_from(
                        10 + k as u8,
                        addr,
                        json!({"op": "play", "session": id, "move": m["text"], "token": token}),
                    );
                }
            })
        })
        .collect();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/breakthrough.rules");
    let (mut game, _) = tabula::loader::load(&path).unwrap();
    let o = game.options_term(&[("rows".into(), "5".into()), ("cols".into(), "5".into())]).unwrap();
    for c in clients {
        let (seed, history, over) = c.join().unwrap();
        let mut state = game.initial_state(&o, seed).unwrap();
        for m in &history {
            let legal = game.legal_moves(&state).unwrap();
            let k = game.match_move(&legal, m).unwrap_or_else(|e| panic!("seed {seed}: {m}: {e}"));
            assert_eq!(&legal[k].text, m);
            state = legal[k].next.clone();
        }
        let outcome = game.outcome(&state).unwrap().expect("the replay ends too");
        assert_eq!(outcome.to_json(), over, "seed {seed}");
    }
}

#[test]
fn a_session_keeps_its_record_and_play_resumes_from_it() {
    let dir = std::env::temp_dir().join(format!("tabula-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = start_with(Config { records: Some(dir.clone()), ..Config::default() });
    let g = ok(
        s.addr,
        json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}, "seats": {"black": "random"}, "auto": true, "seed": 4}),
    );
    let t = g["tokens"]["white"].clone();
    for m in ["a2-a3", "b2-b3"] {
        let v = ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": "white", "token": t}));
        let text = v["moves"].as_array().unwrap().iter().find(|x| x["text"] == json!(m)).map(|x| x["text"].clone());
        let chosen = text.unwrap_or_else(|| v["moves"][0]["text"].clone());
        ok(s.addr, json!({"op": "play", "session": g["session"], "move": chosen, "token": t}));
    }
    // The computer's reply is saved too, after the page hears of it.
    let v = ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": "white", "token": t}));
    let file = dir.join(format!("session-{}.record", g["session"]));
    let r = tabula::game::record::Record::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let moves: Vec<&str> = r.moves.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(json!(moves), v["history"]);
    assert_eq!((r.game.as_str(), r.seed), ("breakthrough", 4));
    // `tabula play --resume` takes it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["play", "breakthrough", "--games", concat!(env!("CARGO_MANIFEST_DIR"), "/games"), "--resume"])
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    std::fs::remove_dir_all(&dir).ok();
    assert!(text.contains(&format!("after {} moves", moves.len())), "{text}{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn play_web_sets_the_game_up_and_prints_each_seats_page() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["play", "breakthrough", "--games", concat!(env!("CARGO_MANIFEST_DIR"), "/games")])
        .args(["--web", "127.0.0.1:0", "--option", "rows=5", "--option", "cols=5", "--seat", "black=random"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..4 {
        let mut l = String::new();
        out.read_line(&mut l).unwrap();
        lines.push(l);
    }
    let page = lines[1].split_whitespace().last().unwrap().to_string();
    assert!(lines[1].starts_with("  white: open http://127.0.0.1:") && lines[2].contains("black: random"), "{lines:?}");
    // The printed page's session plays: the move, then the computer's.
    let rest = page.strip_prefix("http://").unwrap();
    let (addr, query) = rest.split_once("/?").unwrap();
    let addr: SocketAddr = addr.parse().unwrap();
    let field = |k: &str| query.split('&').find_map(|kv| kv.strip_prefix(&format!("{k}="))).unwrap().to_string();
    let (session, token) = (field("session").parse::<u64>().unwrap(), field("token"));
    let (status, _) = http(addr, "GET", "/", b"");
    assert_eq!(status, 200);
    ok(addr, json!({"op": "play", "session": session, "move": "c2-c3", "token": token}));
    let mut v = Value::Null;
    for _ in 0..200 {
        v = ok(addr, json!({"op": "view", "session": session, "viewer": "white", "token": token}));
        if v["ply"] == json!(2) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(v["ply"], json!(2), "{v}");
}

#[test]
fn a_game_without_view_plays_with_its_text_and_a_move_list() {
    let dir = std::env::temp_dir().join(format!("tabula-noview-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = "title(take).\nplayers(_, [a, b]).\nother(a, b).\nother(b, a).\nto_move(s(P, _), P).\n\
                 game_over(s(P, 0), winner(W)) :- other(P, W).\ninitial_state(_, s(a, 5)).\n\
                 move(s(P, N), take(K), s(O, M)) :- member(K, [1, 2]), K =< N, M is N - K, other(P, O).\n";
    std::fs::write(dir.join("take.rules"), rules).unwrap();
    let mut server = tabula::server::Server::new(Config { games_dir: dir.clone(), ..Config::default() });
    let addr = server.listen_http("127.0.0.1:0").unwrap();
    let stop = server.stop_flag();
    let thread = std::thread::spawn(move || server.run().unwrap());
    let g = ok(addr, json!({"op": "new", "game": "take"}));
    let v = ok(addr, json!({"op": "view", "session": g["session"], "viewer": "a", "token": g["tokens"]["a"]}));
    assert_eq!(v["board"], Value::Null);
    assert!(v["text"].as_str().unwrap().contains("s(a,5)"), "{v}");
    assert_eq!(v["moves"], json!([{"text": "take(1)", "clicks": null}, {"text": "take(2)", "clicks": null}]));
    ok(addr, json!({"op": "play", "session": g["session"], "move": "take(2)", "token": g["tokens"]["a"]}));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    thread.join().unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

/// A GDL game over HTTP: its board drawn from the fluents, its moves
/// clicked; in a simultaneous game a choice stays hidden from the other
/// seat and from spectators (history, last move, events) until the round
/// is over.
#[test]
fn gdl_games_play_and_simultaneous_choices_stay_hidden() {
    let s = start();
    let g = ok(s.addr, json!({"op": "new", "game": "tictactoe"}));
    let v = ok(s.addr, json!({"op": "view", "session": g["session"], "viewer": "spectator"}));
    let items = v["board"].to_string();
    assert!(items.contains("c(3,3)"), "{items}");
    let mark = v["moves"].as_array().unwrap().iter().find(|m| m["text"] == "(mark 2 2)").unwrap().clone();
    assert_eq!(mark["clicks"], json!(["c(2,2)"]));
    ok(s.addr, json!({"op": "play", "session": g["session"], "move": "(mark 2 2)", "token": g["tokens"]["x"]}));

    let g = ok(s.addr, json!({"op": "new", "game": "rock-paper-scissors"}));
    let (id, left, right) = (g["session"].clone(), g["tokens"]["left"].clone(), g["tokens"]["right"].clone());
    ok(s.addr, json!({"op": "play", "session": id, "move": "rock", "token": left}));
    let as_right = ok(s.addr, json!({"op": "view", "session": id, "viewer": "right", "token": right}));
    let as_spectator = ok(s.addr, json!({"op": "view", "session": id}));
    assert_eq!(as_spectator["moves"], json!([]), "the moves are the mover's to see");
    for v in [&as_right, &as_spectator] {
        assert_eq!(v["history"], json!(["(left has chosen)"]), "{v}");
        assert_eq!(v["last_move"], json!("(left has chosen)"));
        assert!(!v["board"].to_string().contains("rock"), "{v}");
    }
    let as_left = ok(s.addr, json!({"op": "view", "session": id, "viewer": "left", "token": left}));
    assert_eq!(as_left["history"], json!(["rock"]));
    let reply = ok(s.addr, json!({"op": "play", "session": id, "move": "paper", "token": right}));
    assert_eq!(reply["status"]["last_move"], json!("paper"));
    let after = ok(s.addr, json!({"op": "view", "session": id}));
    assert_eq!(after["history"], json!(["rock", "paper"]));
    assert!(after["board"].to_string().contains("wins: left 0, right 1"), "{}", after["board"]);
}
