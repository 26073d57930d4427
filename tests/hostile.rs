//! `tabula serve` against hostile clients, on loopback: each attack comes
//! from an address of its own (127.0.0.N, which the server takes for a
//! client of its own) while an honest client plays a whole game in the same
//! server. The honest game must finish with its record intact, every
//! attacker must get a clear error, and the server's resident memory (read
//! from `/proc`) must stay under its budget throughout.

mod common;

use common::Process;
use common::web::{LineClient as Client, connect_from, exchange};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tabula::game::record::Record;

/// The server's memory budget in the test, and what one session may hold.
const BUDGET_MB: u64 = 512;
const SESSION_MB: u64 = 48;

/// A `tabula serve` process (killed when dropped) and its addresses.
struct Serve {
    child: Process,
    tcp: SocketAddr,
    http: SocketAddr,
}

fn serve(records: &Path, budget_mb: u64, session_mb: u64, extra: &[&str]) -> Serve {
    let budget = format!("{budget_mb}M");
    let session = format!("{session_mb}M");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--max-memory", &budget])
        .args(["--session-memory", &session, "--handshake", "1", "--max-think", "1", "--records"])
        .arg(records)
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut addr = |marker: &str| {
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        assert!(line.contains(marker), "{line}");
        let word = line.split_whitespace().find(|w| w.contains("127.0.0.1")).unwrap_or_else(|| panic!("{line}"));
        word.trim_start_matches("http://").trim_end_matches('/').parse::<SocketAddr>().unwrap()
    };
    let tcp = addr("listening");
    let http = addr("http://");
    // The rest of its messages are not needed, but must not fill the pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    Serve { child: Process(child), tcp, http }
}

/// An HTTP request from 127.0.0.`n` on a fresh connection.
fn post_from(n: u8, addr: SocketAddr, req: Value) -> (u16, Value) {
    let (status, body) = exchange(connect_from(n, addr), addr, "POST", "/api", req.to_string().as_bytes())
        .unwrap_or_else(|t| panic!("{t}"));
    (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}")))
}

/// Resident memory of process `pid` now, in bytes.
fn resident(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Samples a process's resident memory until stopped: the peak.
struct Watch {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    fn new(pid: u32) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let (s, p) = (stop.clone(), peak.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                if let Some(r) = resident(pid) {
                    p.fetch_max(r, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Watch { stop, peak, thread: Some(thread) }
    }

    fn peak_mb(&mut self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::SeqCst) >> 20
    }
}

/// The honest client (127.0.0.2): a whole game of Breakthrough over TCP,
/// a random move every 150 ms while `slow` is set (the attacks go on),
/// then every 50 ms (two requests a move: under the 50 a second a client
/// may send); each reply checked. The session
/// number, the moves played, and how many while `slow` was set.
fn honest_game(addr: SocketAddr, seed: u64, slow: Arc<AtomicBool>) -> (u64, Vec<String>, usize) {
    let mut c = Client::connect_from(2, addr);
    let r = c.send(json!({"op": "new", "game": "breakthrough", "seed": seed}));
    assert_eq!(r["ok"], true, "honest new: {r}");
    let session = r["session"].as_u64().unwrap();
    let tokens = r["tokens"].clone();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut played = Vec::new();
    let mut during = 0;
    loop {
        let r = c.send(json!({"op": "moves", "session": session}));
        assert_eq!(r["ok"], true, "honest moves: {r}");
        if r.get("game_over").is_some() {
            return (session, played, during);
        }
        let moves = r["moves"].as_array().unwrap();
        let m = moves[rng.gen_range(0..moves.len())].as_str().unwrap().to_string();
        let token = &tokens[r["to_move"].as_str().unwrap()];
        let r = c.send(json!({"op": "play", "session": session, "move": m, "token": token}));
        assert_eq!(r["ok"], true, "honest play: {r}");
        played.push(m);
        if slow.load(Ordering::SeqCst) {
            during += 1;
            std::thread::sleep(Duration::from_millis(150));
        } else {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Checks the record the server kept of the honest game: the same moves,
/// and it replays to the end.
fn check_record(dir: &Path, session: u64, played: &[String]) {
    let path = dir.join(format!("session-{session}.record"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let record = Record::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    let moves: Vec<String> = record.moves.iter().map(|(m, _)| m.clone()).collect();
    assert_eq!(moves, played, "the record holds the moves played");
    let (mut g, _) =
        tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/breakthrough.rules")).unwrap();
    let o = g.options_term(&record.options).unwrap();
    let mut s = g.initial_state(&o, record.seed).unwrap();
    for m in &moves {
        let legal = g.legal_moves(&s).unwrap();
        let k = g.match_move(&legal, m).unwrap();
        s = legal[k].next.clone();
    }
    assert!(g.outcome(&s).unwrap().is_some(), "the recorded game is over");
}

fn records_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tabula-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn error_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

/// Every attack at once, while the honest client plays.
#[test]
fn attacks_while_an_honest_client_plays() {
    let dir = records_dir("all");
    let server = serve(&dir, BUDGET_MB, SESSION_MB, &["--max-sessions", "48"]);
    let (tcp, http) = (server.tcp, server.http);
    let mut watch = Watch::new(server.child.id());
    let attacking = Arc::new(AtomicBool::new(true));
    let flag = attacking.clone();
    let honest = std::thread::spawn(move || honest_game(tcp, 7, flag));
    let mut report = Vec::new();

    // 1. Session flood from one client: its share, then 429s.
    let mut flood = Client::connect_from(3, tcp);
    let mut opened = 0;
    let mut refused = None;
    for _ in 0..100 {
        let r = flood.send(json!({"op": "new", "game": "breakthrough"}));
        if r["ok"] == true {
            opened += 1;
        } else {
            refused.get_or_insert(r);
        }
    }
    let refused = refused.expect("a flood of sessions is stopped");
    assert_eq!(error_code(&refused), "client_limit", "{refused}");
    assert!(refused["error"]["retry_after"].as_u64().is_some(), "{refused}");
    assert_eq!(opened, 16, "one client's sessions");
    report.push(format!("session flood: {opened} of 100 opened, then {}", refused["error"]["message"]));
    // Over HTTP the same client gets 429 with Retry-After.
    let (status, v) = post_from(3, http, json!({"op": "new", "game": "breakthrough"}));
    assert_eq!((status, error_code(&v)), (429, "client_limit"), "{v}");

    // 2. Sessions from many clients fill the server: the oldest idle ones
    // with no seat connected make room for a new player; the honest
    // client's game, connected, is never one of them.
    for n in 20..24u8 {
        for _ in 0..16 {
            let (status, v) = post_from(n, http, json!({"op": "new", "game": "breakthrough"}));
            assert!(status == 200 || error_code(&v) == "too_many_sessions", "{v}");
        }
    }
    let (status, v) = post_from(30, http, json!({"op": "new", "game": "campo-bello"}));
    assert_eq!(status, 200, "a new player finds a place: {v}");
    report.push("48 places filled by 5 clients: a new player still gets one (an idle session closed)".into());

    // 3. Connection flood from one client: its share, then refusals.
    let mut held = Vec::new();
    let mut refusals = 0;
    // All at once (well within the handshake time), then see which were
    // refused.
    let flood: Vec<TcpStream> = (0..60).map(|_| connect_from(4, tcp)).collect();
    std::thread::sleep(Duration::from_millis(300));
    for mut s in flood {
        s.set_nonblocking(true).unwrap();
        let mut b = [0u8; 256];
        match s.read(&mut b) {
            Ok(k) if k > 0 && String::from_utf8_lossy(&b[..k]).contains("client_limit") => refusals += 1,
            _ => held.push(s),
        }
    }
    for s in &held {
        s.set_nonblocking(false).unwrap();
    }
    assert_eq!((held.len(), refusals), (32, 28), "one client's connections");
    // Connections that send nothing are closed after the handshake time.
    std::thread::sleep(Duration::from_millis(1500));
    let mut closed = 0;
    for s in &mut held {
        let mut text = String::new();
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        let _ = s.read_to_string(&mut text);
        closed += usize::from(text.contains("\"timeout\""));
    }
    assert_eq!(closed, 32, "silent connections are closed");
    report.push(format!("connection flood: 32 of 60 taken, {refusals} refused, all 32 closed after 1 s of silence"));

    // 4. Slow clients: a request line that never ends, an HTTP head
    // trickled in a byte at a time.
    let mut slow = connect_from(5, tcp);
    slow.write_all(b"{\"op\": \"games\"").unwrap();
    let mut slow_http = connect_from(5, http);
    slow_http.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let t = Instant::now();
    // A byte every 50 ms, until the server answers.
    let mut answer = Vec::new();
    for b in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ".iter().cycle().take(100) {
        let _ = slow_http.write_all(&[*b]);
        let mut got = [0u8; 512];
        if let Ok(k) = slow_http.read(&mut got) {
            answer.extend_from_slice(&got[..k]);
            break;
        }
    }
    let cut = t.elapsed();
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    let mut text = String::new();
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = slow.read_to_string(&mut text);
    assert!(text.contains("timeout"), "{text}");
    report.push(format!(
        "slow clients: the trickled HTTP head cut off after {:.1} s, the endless line too",
        cut.as_secs_f64()
    ));

    // 5. Event-stream flood on one session.
    let mut own = Client::connect_from(6, tcp);
    let mine = own.send(json!({"op": "new", "game": "breakthrough", "options": {"rows": 6, "cols": 6}}));
    let id = mine["session"].as_u64().unwrap();
    let mut streams = Vec::new();
    let mut stream_refusals = 0;
    for _ in 0..24 {
        let mut s = connect_from(6, http);
        write!(s, "GET /api/events?session={id} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 64];
        let k = s.read(&mut b).unwrap_or(0);
        let head = String::from_utf8_lossy(&b[..k]).to_string();
        if head.starts_with("HTTP/1.1 200") {
            streams.push(s);
        } else {
            assert!(head.starts_with("HTTP/1.1 429"), "{head}");
            stream_refusals += 1;
        }
    }
    assert_eq!((streams.len(), stream_refusals), (16, 8), "one client's event streams");
    drop(streams);
    report.push("event-stream flood: 16 of 24 streams, 8 refused with 429".into());

    // 6. Database growth: with its own seat's token the attacker may
    // assert, until its session's share is full; the session plays on.
    let grow = "numlist(1, 2000000, L), assertz(big(L)), fail ; true";
    let token = mine["tokens"]["white"].clone();
    let mut limited = 0;
    for _ in 0..12 {
        let r = own.send(json!({"op": "query", "session": id, "goal": grow, "token": token}));
        if error_code(&r) == "limit" {
            limited += 1;
        } else {
            assert_eq!(r["ok"], true, "{r}");
        }
    }
    assert_eq!(limited, 12, "a 2,000,000-element clause does not fit in a 48 MB session");
    let small = "numlist(1, 20000, L), assertz(big(L)), fail ; true";
    let mut small_ok = 0;
    for _ in 0..40 {
        let r = own.send(json!({"op": "query", "session": id, "goal": small, "token": token}));
        match error_code(&r) {
            "" => small_ok += 1,
            "limit" => break,
            _ => panic!("{r}"),
        }
    }
    assert!((3..40).contains(&small_ok), "the database stops at the session's share ({small_ok} clauses)");
    let m = own.send(json!({"op": "ai", "session": id, "controller": "random", "token": token}));
    assert_eq!(m["ok"], true, "the session plays on: {m}");
    report.push(format!("database growth: 12 of 12 big asserts refused (limit), {small_ok} small ones fit"));
    // Without a seat's token, a query may only read.
    let stranger = post_from(7, http, json!({"op": "query", "session": id, "goal": "assertz(x(1))"})).1;
    assert_eq!(error_code(&stranger), "forbidden", "{stranger}");
    let reads = post_from(7, http, json!({"op": "query", "session": id, "goal": "X is 6 * 7"})).1;
    assert_eq!(reads["answers"][0]["X"], "42", "{reads}");

    // 7. A burst of computer moves with long think times: each stops at
    // the server's --max-think; past its share of moves in progress, a
    // client is told to wait.
    let burst: Vec<_> = (0..6)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect_from(8, tcp);
                let g = c.send(json!({"op": "new", "game": "breakthrough"}));
                let t = Instant::now();
                let r = c.send(
                    json!({"op": "ai", "session": g["session"], "controller": "mcts:100000000", "token": g["tokens"]["white"]}),
                );
                (r, t.elapsed())
            })
        })
        .collect();
    let mut thought = 0;
    for h in burst {
        let (r, took) = h.join().unwrap();
        match error_code(&r) {
            "" => {
                thought += 1;
                assert!(took < Duration::from_secs(5), "a move asked to think forever took {took:?}");
            }
            "client_limit" => {}
            _ => panic!("{r}"),
        }
    }
    assert!((1..=4).contains(&thought), "{thought} moves thought about at once");
    report.push(format!("ai burst: {thought} of 6 thought about (1 s each at most), the rest told to wait"));

    // 8. Malformed bytes: deep nesting, invalid UTF-8.
    let mut bad = Client::connect_from(9, tcp);
    let deep = format!("{}{}", "[".repeat(30_000), "]".repeat(30_000));
    let r = bad.send_raw(deep.as_bytes());
    assert_eq!(error_code(&r), "bad_json", "{r}");
    let r = bad.send_raw(b"{\"op\": \"games\xff\xfe\"}");
    assert_eq!(error_code(&r), "bad_json", "{r}");
    let (status, v) = post_from(9, http, json!({"op": "status", "session": id}));
    assert_eq!(status, 200, "{v}");
    report.push("deep nesting, invalid UTF-8: bad_json, the connection lives on".into());

    attacking.store(false, Ordering::SeqCst);
    let (session, played, during) = honest.join().unwrap();
    check_record(&dir, session, &played);
    let peak = watch.peak_mb();
    report.push(format!(
        "honest game: {} moves ({during} during the attacks), record intact; peak resident memory {peak} MB",
        played.len()
    ));
    eprintln!("{}", report.join("\n"));
    assert!(peak < BUDGET_MB, "peak resident memory {peak} MB over the {BUDGET_MB} MB budget");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The process budget is shared out: sessions that fill their databases
/// get `limit` errors and keep their games; the server's memory stays
/// under the budget; a new session is refused when the budget is taken.
#[test]
fn memory_budget_holds_under_many_growing_sessions() {
    let dir = records_dir("memory");
    let server = serve(&dir, 256, 32, &["--per-client-sessions", "64"]);
    let tcp = server.tcp;
    let mut watch = Watch::new(server.child.id());
    let attacking = Arc::new(AtomicBool::new(true));
    let flag = attacking.clone();
    let honest = std::thread::spawn(move || honest_game(tcp, 11, flag));
    let grow = "numlist(1, 50000, L), assertz(big(L)), fail ; true";
    let mut grower = Client::connect_from(3, tcp);
    let mut sessions = 0;
    let mut limits = 0;
    let mut refused = None;
    for _ in 0..40 {
        let g = grower.send(json!({"op": "new", "game": "breakthrough"}));
        if g["ok"] != true {
            refused = Some(g);
            break;
        }
        sessions += 1;
        let (id, token) = (g["session"].clone(), g["tokens"]["black"].clone());
        loop {
            let r = grower.send(json!({"op": "query", "session": id, "goal": grow, "token": token}));
            match error_code(&r) {
                "" => {}
                "limit" => {
                    limits += 1;
                    break;
                }
                _ => panic!("{r}"),
            }
        }
    }
    let refused = refused.expect("the budget refuses new sessions at last");
    assert_eq!(error_code(&refused), "server_full", "{refused}");
    assert!(sessions >= 3 && limits >= 3, "{sessions} sessions, {limits} limits");
    attacking.store(false, Ordering::SeqCst);
    let (session, played, _) = honest.join().unwrap();
    check_record(&dir, session, &played);
    let peak = watch.peak_mb();
    eprintln!("{sessions} sessions filled their share, then {}; peak {peak} MB of 256", refused["error"]["message"]);
    assert!(peak < 256, "peak resident memory {peak} MB over the 256 MB budget");
    let _ = std::fs::remove_dir_all(&dir);
}
