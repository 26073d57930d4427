//! `tabula serve`: scripted sessions (snapshots of the transcript),
//! malformed input of every kind, a bounded load test with garbage
//! clients, and a clean stop.

mod common;

use common::Process;
use common::web::{LineClient as Client, start_tcp as start};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tabula::game::Outcome;
use tabula::server::Config;

fn config() -> Config {
    Config { games_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("games"), ..Config::default() }
}

/// Sends each request and writes the exchange down (timings and the
/// seats' secret tokens left out). A request's `"token": "@SEAT"` is sent
/// as the token `new` gave that seat (`@to_move`: the seat to move).
fn transcript(c: &mut Client, script: &[Value]) -> String {
    let mut t = String::new();
    let mut tokens = Value::Null;
    for req in script {
        let mut sent = req.clone();
        if let Some(seat) = req["token"].as_str().and_then(|t| t.strip_prefix('@')) {
            let seat = if seat == "to_move" {
                let st = c.send(json!({"op": "status", "session": req["session"]}));
                st["to_move"].as_str().unwrap().to_string()
            } else {
                seat.to_string()
            };
            sent["token"] = tokens[&seat].clone();
        }
        let mut reply = c.send(sent);
        if let Some(m) = reply.as_object_mut() {
            if m.contains_key("info") {
                m.insert("info".into(), json!("(search summary)"));
            }
            if let Some(Value::Object(given)) = m.get_mut("tokens") {
                tokens = Value::Object(given.clone());
                for v in given.values_mut() {
                    *v = json!("(secret)");
                }
            }
        }
        t.push_str(&format!("> {req}\n< {reply}\n"));
    }
    t
}

#[test]
fn scripted_sessions() {
    let server = start(config());
    let mut c = Client::connect(server.addr);
    let bt = transcript(
        &mut c,
        &[
            json!({"op": "new", "id": 1, "game": "breakthrough", "options": {"rows": 5, "cols": 5}, "seed": 1, "seats": {"black": "minimax:2"}}),
            json!({"op": "moves", "id": 2, "session": 1}),
            json!({"op": "play", "id": 3, "session": 1, "move": "b2-b3", "token": "@white"}),
            json!({"op": "play", "id": 4, "session": 1, "move": "a1-a5", "token": "@black"}),
            json!({"op": "ai", "id": 5, "session": 1, "token": "@black"}),
            json!({"op": "play", "id": 6, "session": 1, "move": "c2-c3", "token": "@black"}),
            json!({"op": "ai", "id": 7, "session": 1, "controller": "greedy", "token": "@white"}),
            json!({"op": "display", "id": 8, "session": 1, "viewer": "white", "token": "@white"}),
            json!({"op": "display", "id": 9, "session": 1, "viewer": "black", "token": "@white"}),
            json!({"op": "query", "id": 10, "session": 1, "goal": "players([], P), length(P, N)"}),
            json!({"op": "status", "id": 11, "session": 1}),
            json!({"op": "close", "id": 12, "session": 1}),
            json!({"op": "close", "id": 13, "session": 1, "token": "@black"}),
            json!({"op": "status", "id": 14, "session": 1}),
        ],
    );
    insta::assert_snapshot!("breakthrough_session", bt);
    let du = transcript(
        &mut c,
        &[
            json!({"op": "new", "game": "domin-up", "options": {"players": 3}, "seed": 2, "seats": {"p2": "greedy", "p3": "rules:2"}}),
            json!({"op": "display", "session": 2, "viewer": "p1", "token": "@p1"}),
            json!({"op": "status", "session": 2}),
            json!({"op": "moves", "session": 2}),
            json!({"op": "ai", "session": 2, "token": "@to_move"}),
            json!({"op": "ai", "session": 2, "controller": "mcts:20", "token": "@to_move"}),
            json!({"op": "display", "session": 2, "viewer": "p9"}),
            json!({"op": "close", "session": 2, "token": "@p3"}),
        ],
    );
    insta::assert_snapshot!("domin_up_session", du);
}

#[test]
fn malformed_requests_get_error_replies_and_the_connection_lives_on() {
    let server = start(Config { max_line: 4096, query_time: Duration::from_secs(1), ..config() });
    let mut c = Client::connect(server.addr);
    let s = c.send(json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}}));
    let session = s["session"].as_u64().unwrap();
    let (white, black) = (s["tokens"]["white"].clone(), s["tokens"]["black"].clone());
    let cases: Vec<(String, &str)> = vec![
        ("{not json".into(), "bad_json"),
        ("[1, 2]".into(), "bad_request"),
        (json!({"id": 7}).to_string(), "bad_request"),
        (json!({"op": 3}).to_string(), "bad_request"),
        (json!({"op": "fly"}).to_string(), "bad_request"),
        // new
        (json!({"op": "new"}).to_string(), "bad_request"),
        (json!({"op": "new", "game": 5}).to_string(), "bad_request"),
        (json!({"op": "new", "game": "../../etc/passwd"}).to_string(), "unknown_game"),
        (json!({"op": "new", "game": "mancala"}).to_string(), "unknown_game"),
        (json!({"op": "new", "game": "breakthrough", "options": {"size": 9}}).to_string(), "bad_option"),
        (json!({"op": "new", "game": "breakthrough", "options": {"rows": 99}}).to_string(), "bad_option"),
        (json!({"op": "new", "game": "breakthrough", "options": {"rows": true}}).to_string(), "bad_option"),
        (json!({"op": "new", "game": "breakthrough", "options": [1]}).to_string(), "bad_request"),
        (json!({"op": "new", "game": "breakthrough", "seed": -1}).to_string(), "bad_request"),
        (json!({"op": "new", "game": "breakthrough", "seats": {"white": "deep_blue"}}).to_string(), "bad_controller"),
        (json!({"op": "new", "game": "breakthrough", "seats": {"north": "random"}}).to_string(), "bad_request"),
        // amazons has no choose_move/3 for the `rules` controller
        (json!({"op": "new", "game": "amazons", "seats": {"black": "rules"}}).to_string(), "bad_controller"),
        (json!({"op": "new", "game": "breakthrough", "seats": "random"}).to_string(), "bad_request"),
        // every session request
        (json!({"op": "moves"}).to_string(), "bad_request"),
        (json!({"op": "moves", "session": "one"}).to_string(), "bad_request"),
        (json!({"op": "moves", "session": 999}).to_string(), "unknown_session"),
        (json!({"op": "status", "session": -3}).to_string(), "bad_request"),
        (json!({"op": "display", "session": 999}).to_string(), "unknown_session"),
        (json!({"op": "close", "session": 999}).to_string(), "unknown_session"),
        // play
        (json!({"op": "play", "session": session}).to_string(), "bad_request"),
        (json!({"op": "play", "session": session, "move": 12}).to_string(), "bad_request"),
        (json!({"op": "play", "session": session, "move": "a1-a5", "token": white}).to_string(), "illegal_move"),
        (json!({"op": "play", "session": session, "move": "b2", "token": white}).to_string(), "ambiguous_move"),
        // seats: a token, and the right one
        (json!({"op": "play", "session": session, "move": "b2-b3"}).to_string(), "forbidden"),
        (json!({"op": "play", "session": session, "move": "b2-b3", "token": black}).to_string(), "forbidden"),
        (json!({"op": "play", "session": session, "move": "b2-b3", "token": 7}).to_string(), "bad_request"),
        (json!({"op": "ai", "session": session, "controller": "random"}).to_string(), "forbidden"),
        (json!({"op": "display", "session": session, "viewer": "white", "token": black}).to_string(), "forbidden"),
        (json!({"op": "close", "session": session, "token": "guess"}).to_string(), "forbidden"),
        // ai
        (json!({"op": "ai", "session": session, "token": white}).to_string(), "bad_request"),
        (json!({"op": "ai", "session": session, "controller": "human", "token": white}).to_string(), "bad_controller"),
        (json!({"op": "ai", "session": session, "controller": "mcts:0", "token": white}).to_string(), "bad_controller"),
        // display
        (json!({"op": "display", "session": session, "viewer": "nobody"}).to_string(), "bad_request"),
        (json!({"op": "display", "session": session, "viewer": 1}).to_string(), "bad_request"),
        // query
        (json!({"op": "query", "session": session}).to_string(), "bad_request"),
        (json!({"op": "query", "session": session, "goal": "X = "}).to_string(), "query_syntax"),
        (json!({"op": "query", "session": session, "goal": "repeat, fail"}).to_string(), "limit"),
        (json!({"op": "query", "session": session, "goal": "throw(oops)"}).to_string(), "query_error"),
        (json!({"op": "query", "session": session, "goal": "halt"}).to_string(), "query_error"),
        (json!({"op": "query", "session": session, "goal": "undefined_thing(1)"}).to_string(), "query_error"),
        // too long, then not UTF-8
        ("x".repeat(10_000), "line_too_long"),
    ];
    for (line, code) in &cases {
        let r = c.send_raw(line);
        assert_eq!(r["ok"], json!(false), "{line}: {r}");
        assert_eq!(r["error"]["code"], json!(code), "{line}: {r}");
        assert!(!r["error"]["message"].as_str().unwrap().is_empty());
    }
    // An ambiguous move says which moves it could be.
    let r = c.send(json!({"op": "play", "session": session, "move": "b2", "token": white}));
    assert_eq!(r["error"]["candidates"], json!(["b2-a3", "b2-b3", "b2-c3"]), "{r}");
    // A refused move says why, from the rules; a text that is no move of
    // the game says nothing more.
    let r = c.send(json!({"op": "play", "session": session, "move": "b1-b2", "token": white}));
    assert_eq!(r["error"]["code"], "illegal_move");
    let why = r["error"]["why"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(why.contains("breakthrough.rules:96:5: in piece_move/12, `landing(DX, Target, Me, Captured)` failed, with Me = w, DX = 0, Target = w"), "{why}");
    let r = c.send(json!({"op": "play", "session": session, "move": "a1-a5", "token": white}));
    assert!(r["error"].get("why").is_none(), "{r}");
    // `explain` says the same without playing: of clicks (the web board's
    // refused clicks) or of a text.
    let r = c.send(json!({"op": "explain", "session": session, "clicks": ["b1", "b2"], "token": white}));
    assert_eq!(r["verdict"], "refused", "{r}");
    assert!(r["why"].as_str().unwrap().contains("`landing(DX, Target, Me, Captured)` failed"), "{r}");
    let r = c.send(json!({"op": "explain", "session": session, "clicks": ["b2", "b3"], "token": white}));
    assert_eq!((&r["verdict"], &r["move"]), (&json!("legal"), &json!("b2-b3")), "{r}");
    let r = c.send(json!({"op": "explain", "session": session, "clicks": ["a1", "e5"], "token": white}));
    assert_eq!(r["verdict"], "no_such_move", "{r}");
    let r = c.send(json!({"op": "explain", "session": session, "move": "b1-b2", "token": white}));
    assert_eq!(r["verdict"], "refused", "{r}");
    for (req, code) in [
        (json!({"op": "explain", "session": session, "clicks": ["b1", "b2"], "token": black}), "forbidden"),
        (json!({"op": "explain", "session": session, "clicks": ["b1", "b2"]}), "forbidden"),
        (json!({"op": "explain", "session": session, "clicks": [1, 2], "token": white}), "bad_request"),
        (json!({"op": "explain", "session": session, "clicks": [], "token": white}), "bad_request"),
        (json!({"op": "explain", "session": session, "clicks": "b1", "token": white}), "bad_request"),
        (json!({"op": "explain", "session": session, "token": white}), "bad_request"),
    ] {
        let r = c.send(req.clone());
        assert_eq!(r["error"]["code"], code, "{req}: {r}");
    }
    c.writer.write_all(&[0xff, 0xfe, b'\n']).unwrap();
    assert_eq!(c.read()["error"]["code"], "bad_json");
    // Ids are echoed on errors too; the session still works.
    let r = c.send(json!({"op": "fly", "id": "x1"}));
    assert_eq!(r["id"], "x1");
    let r = c.send(json!({"op": "query", "session": session, "goal": "member(X, [a, b])"}));
    assert_eq!(r["answers"], json!([{"X": "a"}, {"X": "b"}]), "{r}");
    // Play the game out, then a move is refused as the game is over.
    let mut mover = "white";
    loop {
        let r = c.send(json!({"op": "ai", "session": session, "controller": "random", "token": s["tokens"][mover]}));
        assert_eq!(r["ok"], true, "{r}");
        if !r["status"]["game_over"].is_null() {
            break;
        }
        mover = if mover == "white" { "black" } else { "white" };
    }
    let r = c.send(json!({"op": "ai", "session": session, "controller": "random", "token": white}));
    assert_eq!(r["error"]["code"], "game_over", "{r}");
}

/// One client's random game: its moves chosen with its own seeded
/// generator from the `moves` list.
fn remote_game(addr: SocketAddr, seed: u64, latencies: &mut Vec<(bool, f64)>) -> (Vec<String>, Value) {
    let mut c = Client::connect_from(10 + seed as u8, addr);
    let mut timed = |c: &mut Client, req: Value| {
        let opening = req["op"] == "new";
        let t = Instant::now();
        let r = c.send(req);
        latencies.push((opening, t.elapsed().as_secs_f64()));
        r
    };
    let r =
        timed(&mut c, json!({"op": "new", "game": "breakthrough", "options": {"rows": 6, "cols": 6}, "seed": seed}));
    let session = r["session"].as_u64().unwrap_or_else(|| panic!("{r}"));
    let tokens = r["tokens"].clone();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut played = Vec::new();
    loop {
        let r = timed(&mut c, json!({"op": "moves", "session": session}));
        if r.get("game_over").is_some() {
            let _ = timed(&mut c, json!({"op": "close", "session": session, "token": tokens["white"]}));
            return (played, r["game_over"].clone());
        }
        let moves = r["moves"].as_array().unwrap_or_else(|| panic!("{r}"));
        let m = moves[rng.gen_range(0..moves.len())].as_str().unwrap().to_string();
        let token = &tokens[r["to_move"].as_str().unwrap()];
        let r = timed(&mut c, json!({"op": "play", "session": session, "move": m, "token": token}));
        assert_eq!(r["ok"], true, "{r}");
        played.push(m);
    }
}

/// The same game played here, without the server.
fn local_game(seed: u64) -> (Vec<String>, Value) {
    let (mut g, _) =
        tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/breakthrough.rules")).unwrap();
    let o = g.options_term(&[("rows".into(), "6".into()), ("cols".into(), "6".into())]).unwrap();
    let mut s = g.initial_state(&o, seed).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut played = Vec::new();
    loop {
        if let Some(o) = g.outcome(&s).unwrap() {
            let v = match o {
                Outcome::Winner(p) => json!({"result": "winner", "player": p}),
                Outcome::Draw => json!({"result": "draw"}),
            };
            return (played, v);
        }
        let legal = g.legal_moves(&s).unwrap();
        let k = rng.gen_range(0..legal.len());
        played.push(legal[k].text.clone());
        s = legal[k].next.clone();
    }
}

#[test]
fn load_many_clients_with_garbage_in_between() {
    let server = start(Config { max_line: 1024, ..config() });
    let addr = server.addr;
    let clients = 32;
    let started = Instant::now();
    let mut handles = Vec::new();
    for seed in 0..clients {
        handles.push(std::thread::spawn(move || {
            let mut lat = Vec::new();
            let game = remote_game(addr, seed, &mut lat);
            (seed, game, lat)
        }));
    }
    // Clients that misbehave meanwhile.
    let mut bad = Vec::new();
    for k in 0..8u64 {
        bad.push(std::thread::spawn(move || {
            let mut rng = ChaCha8Rng::seed_from_u64(1000 + k);
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            match k % 4 {
                // Random bytes, then hang up.
                0 => {
                    let junk: Vec<u8> = (0..5000).map(|_| rng.r#gen()).collect();
                    let _ = s.write_all(&junk);
                }
                // An oversized line, then a good request on the same connection.
                1 => {
                    s.write_all(&vec![b'{'; 50_000]).unwrap();
                    s.write_all(b"\n{\"op\":\"new\",\"game\":\"campo-bello\",\"id\":5}\n").unwrap();
                    let mut r = BufReader::new(s);
                    let mut l = String::new();
                    r.read_line(&mut l).unwrap();
                    assert!(l.contains("line_too_long"), "{l}");
                    l.clear();
                    r.read_line(&mut l).unwrap();
                    assert!(l.contains("\"ok\":true") && l.contains("\"id\":5"), "{l}");
                }
                // Half-closed: a request, then no more writing; the reply still comes.
                2 => {
                    s.write_all(b"{\"op\":\"status\",\"session\":424242}\n").unwrap();
                    s.shutdown(Shutdown::Write).unwrap();
                    let mut l = String::new();
                    BufReader::new(s).read_line(&mut l).unwrap();
                    assert!(l.contains("unknown_session"), "{l}");
                }
                // A request cut off mid-line by a disconnect.
                _ => {
                    let _ = s.write_all(b"{\"op\":\"new\",\"game\":\"break");
                }
            }
        }));
    }
    let mut lat = Vec::new();
    for h in handles {
        let (seed, remote, l) = h.join().unwrap();
        assert_eq!(remote, local_game(seed), "game {seed} differs from the same seeded game played locally");
        lat.extend(l);
    }
    for b in bad {
        b.join().unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let total = lat.len();
    // Latency percentiles in ms: every request, then `moves`/`play` only
    // (a `new` loads the rules).
    let pct = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let at = |p: f64| v[((v.len() - 1) as f64 * p) as usize] * 1000.0;
        format!("p50 {:.2} p90 {:.2} p99 {:.2} max {:.2}", at(0.5), at(0.9), at(0.99), at(1.0))
    };
    eprintln!(
        "load: {clients} clients, {total} requests in {secs:.2} s = {:.0} requests/s; latency ms: all {}; moves/play {}; new {}",
        total as f64 / secs,
        pct(lat.iter().map(|l| l.1).collect()),
        pct(lat.iter().filter(|l| !l.0).map(|l| l.1).collect()),
        pct(lat.iter().filter(|l| l.0).map(|l| l.1).collect())
    );
    // The server is still fine.
    let mut c = Client::connect(addr);
    assert_eq!(c.send(json!({"op": "new", "game": "breakthrough"}))["ok"], true);
}

#[test]
fn limits_on_sessions_and_idle_connections() {
    let server = start(Config { max_sessions: 2, ..config() });
    let mut c = Client::connect(server.addr);
    let first = c.send(json!({"op": "new", "game": "breakthrough"}));
    assert_eq!(first["ok"], true);
    assert_eq!(c.send(json!({"op": "new", "game": "breakthrough"}))["ok"], true);
    let r = c.send(json!({"op": "new", "game": "breakthrough"}));
    assert_eq!(r["error"]["code"], "too_many_sessions", "{r}");
    // Closing one makes room.
    assert_eq!(c.send(json!({"op": "close", "session": 1, "token": first["tokens"]["black"]}))["ok"], true);
    assert_eq!(c.send(json!({"op": "new", "game": "breakthrough"}))["ok"], true);

    // Idle: the server says so and closes; the idle sessions end too.
    let server = start(Config { idle: Duration::from_millis(300), ..config() });
    let mut c = Client::connect(server.addr);
    assert_eq!(c.send(json!({"op": "new", "game": "breakthrough"}))["ok"], true);
    std::thread::sleep(Duration::from_millis(700));
    let r = c.read();
    assert_eq!(r["error"]["code"], "idle", "{r}");
    let mut c2 = Client::connect(server.addr);
    assert_eq!(c2.send(json!({"op": "status", "session": 1}))["error"]["code"], "unknown_session");
}

#[test]
fn stopping_closes_connections() {
    let mut server = start(config());
    let mut c = Client::connect(server.addr);
    assert_eq!(c.send(json!({"op": "new", "game": "breakthrough"}))["ok"], true);
    let t = Instant::now();
    server.stop.store(true, Ordering::SeqCst);
    server.thread.take().unwrap().join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    let mut l = String::new();
    assert_eq!(c.reader.read_line(&mut l).unwrap_or(0), 0, "the connection is closed");
}

/// Starts `tabula serve` with `args` on a free port: the process, its
/// stderr after the line that names the address, and the address.
fn spawn_serve(args: &[&str]) -> (Process, BufReader<std::process::ChildStderr>, SocketAddr) {
    // A database of its own (the default one is the user's).
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let db = std::env::temp_dir().join(format!("tabula-serve-test-{}-{n}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(&db)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr: SocketAddr = first.split_whitespace().find_map(|w| w.parse().ok()).unwrap_or_else(|| panic!("{first}"));
    (Process(child), err, addr)
}

#[test]
fn the_command_stops_cleanly_on_ctrl_c() {
    let (mut child, mut err, addr) = spawn_serve(&[]);
    let mut c = Client::connect(addr);
    assert_eq!(c.send(json!({"op": "new", "game": "campo-bello"}))["ok"], true);
    let killed = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(rest.contains("stopped"), "{rest}");
}

/// Peak resident memory of a process in bytes (Linux), if it can be read.
fn peak_memory(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

#[test]
fn runaway_queries_get_limit_errors_within_the_memory_cap_and_the_session_plays_on() {
    let (mut child, _err, addr) = spawn_serve(&["--session-memory", "64M", "--max-reply", "64K"]);
    let mut c = Client::connect(addr);
    let new = c.send(json!({"op": "new", "game": "breakthrough", "seed": 1}));
    assert_eq!(new["ok"], true, "{new}");
    let session = new["session"].clone();
    let runaway = [
        "length(L, 20000000)",
        "numlist(1, 100000000, L)",
        "numlist(1, 3000000, L), atom_codes(A, L)",
        "length(L, 1000000), maplist(=(0'a), L), atom_codes(A, L)",
        "findall(X, between(1, 50000000, X), L)",
    ];
    for goal in runaway {
        let r = c.send(json!({"op": "query", "session": session, "goal": goal}));
        assert_eq!(r["ok"], false, "{goal}: {r}");
        assert_eq!(r["error"]["code"], "limit", "{goal}: {r}");
        // The session plays on.
        let mover = c.send(json!({"op": "status", "session": session}))["to_move"].as_str().unwrap().to_string();
        let token = &new["tokens"][&mover];
        let m = c.send(json!({"op": "ai", "session": session, "controller": "random", "token": token}));
        assert_eq!(m["ok"], true, "after {goal}: {m}");
    }
    // Cyclic terms: an error reply each, not a session walking forever.
    for goal in ["L = [a|L]", "L = [a|L], length(L, N)", "X = f(X), findall(X, true, Xs)", "L = [a|L], msort(L, S)"] {
        let r = c.send(json!({"op": "query", "session": session, "goal": goal}));
        assert_eq!(r["ok"], false, "{goal}: {r}");
        assert_eq!(r["error"]["code"], "query_error", "{goal}: {r}");
    }
    let fine = c.send(json!({"op": "query", "session": session, "goal": "numlist(1, 5, L)"}));
    assert_eq!(fine["answers"][0]["L"], "[1,2,3,4,5]", "{fine}");
    // 64M of data per request; the process with its code and libraries
    // stays well under 64M + 96M.
    if let Some(peak) = peak_memory(child.id()) {
        assert!(peak < 160 << 20, "peak memory {} MB", peak >> 20);
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A session draws chance's moves itself (the deal of Kuhn poker), and
/// shows each seat only its own moves: the others' are "has chosen", in
/// the history and in the view.
#[test]
fn the_server_draws_chance_and_keeps_private_moves_private() {
    let server = start(config());
    let mut c = Client::connect(server.addr);
    let new = c.send(json!({"op": "new", "id": 1, "game": "kuhn-poker", "seed": 4}));
    let session = new["session"].clone();
    let tokens = new["tokens"].clone();
    let status = c.send(json!({"op": "status", "session": session}));
    assert_eq!(status["to_move"], "first", "{status}");
    let played = c.send(json!({"op": "play", "session": session, "move": "bet", "token": tokens["first"]}));
    assert_eq!(played["move"], "bet", "{played}");
    let second = c.send(json!({"op": "view", "session": session, "viewer": "second", "token": tokens["second"]}));
    assert_eq!(second["history"], json!(["(random has chosen)", "(first has chosen)"]), "{second}");
    let text = second["board"].to_string();
    assert!(text.contains("(did first bet)") && text.contains("saw (card"), "{text}");
    let first = c.send(json!({"op": "view", "session": session, "viewer": "first", "token": tokens["first"]}));
    assert_eq!(first["history"], json!(["(random has chosen)", "bet"]), "{first}");
    // Neither seat's view names the other's card.
    let card = |v: &Value| v["board"].to_string().split("saw (card ").nth(1).map(|r| r[..1].to_string());
    let (a, b) = (card(&first).unwrap(), card(&second).unwrap());
    assert_ne!(a, b);
    assert!(!first["board"].to_string().contains(&format!("(card {b})")), "{first}");
}
