//! A real `tabula serve` on a database, killed with SIGKILL at random
//! moments while clients play over TCP and HTTP (some seats the
//! computer's), and started again each time: at the end every move a
//! client was told was made is in its game, every game came back, and the
//! games finish. Then the database in a bad way: written by a newer
//! version, damaged, read-only, on a full disk: each a clear error at
//! start or a refused move, never a lost acknowledged one.
//!
//! `TABULA_CRASH_KILLS` sets how many kills (default 12).

mod common;

use common::Process;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tabula-crash-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `tabula serve` on `db`: the process and its TCP and HTTP addresses
/// once it listens (what it says after is collected in `log`), or what it
/// said when it would not start.
fn start(db: &Path, log: &Arc<Mutex<String>>) -> Result<(Process, SocketAddr, SocketAddr), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--db"])
        .arg(db)
        .args(["--per-client-rate", "100000", "--per-client-connections", "1000", "--max-think", "0.2"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut addrs = Vec::new();
    let mut said = String::new();
    while addrs.len() < 2 {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.wait();
            return Err(said);
        }
        said.push_str(&line);
        if let Some(a) =
            line.split_whitespace().find_map(|w| w.trim_start_matches("http://").trim_end_matches('/').parse().ok())
        {
            addrs.push(a);
        }
    }
    let log = log.clone();
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
        log.lock().unwrap().push_str(&rest);
    });
    Ok((Process(child), addrs[0], addrs[1]))
}

/// One request over a fresh TCP connection (JSON lines) or HTTP: the
/// reply, or `None` when the server is not there to answer.
fn request(addr: SocketAddr, http: bool, req: &Value) -> Option<Value> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let body = req.to_string();
    if http {
        let head = format!(
            "POST /api HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).ok()?;
        s.write_all(body.as_bytes()).ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        serde_json::from_str(text.split_once("\r\n\r\n")?.1).ok()
    } else {
        s.write_all(format!("{body}\n").as_bytes()).ok()?;
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).ok()?;
        serde_json::from_str(&line).ok()
    }
}

/// Where the server is now (`None` while it is down).
type Addrs = Arc<Mutex<Option<(SocketAddr, SocketAddr)>>>;

/// Asks until the server answers.
fn ask(addrs: &Addrs, http: bool, req: &Value, give_up: Instant) -> Value {
    loop {
        assert!(Instant::now() < give_up, "no answer to {req} in time");
        let at = *addrs.lock().unwrap();
        if let Some((tcp, web)) = at
            && let Some(v) = request(if http { web } else { tcp }, http, req)
        {
            return v;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A client's game: its session, tokens, and each move it was told was
/// made, by ply.
struct Game {
    id: u64,
    /// One of its seats' (a record of hidden moves is shown to them).
    token: String,
    acked: Vec<(usize, String)>,
}

/// Plays games to their end, one after another until `done`, with random
/// moves for the seats it holds.
fn client(k: usize, addrs: Addrs, done: Arc<AtomicBool>, give_up: Instant) -> Vec<Game> {
    let mut rng = ChaCha8Rng::seed_from_u64(k as u64);
    let mut games = Vec::new();
    while !done.load(Ordering::SeqCst) {
        games.push(one_game_of(k + 6 * games.len(), &addrs, &mut rng, give_up));
    }
    games
}

/// Game `k` played to its end.
fn one_game_of(k: usize, addrs: &Addrs, rng: &mut ChaCha8Rng, give_up: Instant) -> Game {
    let http = k % 2 == 1;
    let new = match k % 3 {
        0 => json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}, "seed": k}),
        1 => json!({"op": "new", "game": "connect4", "seats": {"yellow": "greedy"}, "auto": true}),
        _ => json!({"op": "new", "game": "pig", "seed": k}),
    };
    let created = loop {
        let r = ask(addrs, http, &new, give_up);
        if r["ok"] == true {
            break r;
        }
    };
    let id = created["session"].as_u64().unwrap();
    let tokens = created["tokens"].clone();
    let mine: Vec<String> = match k % 3 {
        1 => vec!["red".into()],
        _ => tokens.as_object().unwrap().keys().cloned().collect(),
    };
    let mut acked = Vec::new();
    loop {
        let st = ask(addrs, http, &json!({"op": "status", "session": id}), give_up);
        assert_eq!(st["ok"], true, "session {id} is gone: {st}");
        if !st["game_over"].is_null() {
            return Game { id, token: tokens[&mine[0]].as_str().unwrap().to_string(), acked };
        }
        let ply = st["ply"].as_u64().unwrap() as usize;
        let to_move = st["to_move"].as_str().unwrap().to_string();
        if !mine.contains(&to_move) {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        let token = &tokens[&to_move];
        let m = ask(addrs, http, &json!({"op": "moves", "session": id, "token": token}), give_up);
        let Some(moves) = m["moves"].as_array().filter(|m| !m.is_empty()) else { continue };
        let mv = moves[rng.gen_range(0..moves.len())].as_str().unwrap().to_string();
        let r = ask(addrs, http, &json!({"op": "play", "session": id, "move": mv, "token": token}), give_up);
        if r["ok"] == true {
            acked.push((ply, mv));
        }
    }
}

#[test]
fn killed_at_random_moments_the_server_loses_no_acknowledged_move() {
    let kills: usize = std::env::var("TABULA_CRASH_KILLS").ok().and_then(|k| k.parse().ok()).unwrap_or(12);
    let dir = temp_dir("kill");
    let db = dir.join("games.db");
    let log = Arc::new(Mutex::new(String::new()));
    let (mut server, tcp, web) = start(&db, &log).unwrap();
    let addrs: Addrs = Arc::new(Mutex::new(Some((tcp, web))));
    let give_up = Instant::now() + Duration::from_secs(300);
    let done = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..6)
        .map(|k| {
            let (addrs, done) = (addrs.clone(), done.clone());
            std::thread::spawn(move || client(k, addrs, done, give_up))
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut slowest = Duration::ZERO;
    for _ in 0..kills {
        std::thread::sleep(Duration::from_millis(rng.gen_range(50..500)));
        *addrs.lock().unwrap() = None;
        server.kill().unwrap();
        server.wait().unwrap();
        let t = Instant::now();
        let (s, tcp, web) = start(&db, &log).unwrap_or_else(|said| panic!("the server did not start again: {said}"));
        slowest = slowest.max(t.elapsed());
        server = s;
        *addrs.lock().unwrap() = Some((tcp, web));
    }
    done.store(true, Ordering::SeqCst);
    let games: Vec<Game> = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
    let (tcp, _) = addrs.lock().unwrap().unwrap();
    let mut acked = 0;
    let mut lost = 0;
    for g in &games {
        // Every move, hidden ones too: the record.
        let r = request(tcp, false, &json!({"op": "record", "session": g.id, "token": g.token})).unwrap();
        let record = r["record"].as_str().unwrap_or_else(|| panic!("{r}"));
        let history: Vec<&str> = record.split_once("moves:\n").unwrap().1.lines().collect();
        for (ply, mv) in &g.acked {
            acked += 1;
            if history.get(*ply) != Some(&mv.as_str()) {
                lost += 1;
                eprintln!(
                    "session {}: move {} `{mv}` was acknowledged, the game has {:?}",
                    g.id,
                    ply + 1,
                    history.get(*ply)
                );
            }
        }
    }
    drop(server);
    let log = log.lock().unwrap().clone();
    assert!(!log.contains("not brought back"), "{log}");
    eprintln!(
        "crash test: {kills} kills and restarts, {} games finished, {acked} moves acknowledged, {lost} lost, slowest restart {:.0} ms",
        games.len(),
        slowest.as_secs_f64() * 1000.0
    );
    assert_eq!(lost, 0);
    assert!(acked > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A server started on `db`: refused, with what it said.
fn refused(db: &Path) -> String {
    let log = Arc::new(Mutex::new(String::new()));
    match start(db, &log) {
        Ok(_) => panic!("a server started on {}", db.display()),
        Err(said) => said,
    }
}

/// A database with one game of a few moves in it: the game's session and
/// its moves.
fn one_game(db: &Path) -> (u64, Vec<String>) {
    let log = Arc::new(Mutex::new(String::new()));
    let (_server, tcp, _) = start(db, &log).unwrap();
    let g =
        request(tcp, false, &json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}})).unwrap();
    let id = g["session"].as_u64().unwrap();
    let mut played = Vec::new();
    for seat in ["white", "black", "white"] {
        let token = &g["tokens"][seat];
        let m = request(tcp, false, &json!({"op": "moves", "session": id, "token": token})).unwrap();
        let mv = m["moves"][0].as_str().unwrap().to_string();
        let r = request(tcp, false, &json!({"op": "play", "session": id, "move": mv, "token": token})).unwrap();
        assert_eq!(r["ok"], true, "{r}");
        played.push(mv);
    }
    (id, played)
}

#[test]
fn a_database_from_a_newer_version_or_damaged_is_refused_at_start() {
    let dir = temp_dir("bad");
    let newer = dir.join("newer.db");
    one_game(&newer);
    rusqlite::Connection::open(&newer).unwrap().execute_batch("PRAGMA user_version = 9;").unwrap();
    let said = refused(&newer);
    assert!(said.contains("newer tabula") && said.contains("layout 9"), "{said}");

    let damaged = dir.join("damaged.db");
    one_game(&damaged);
    // The killed server's last changes are in the write-ahead log: moved
    // into the file first.
    let c = rusqlite::Connection::open(&damaged).unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    drop(c);
    // Garbage over the pages after the first (the tables' b-trees).
    let mut bytes = std::fs::read(&damaged).unwrap();
    assert!(bytes.len() > 8192, "{} bytes", bytes.len());
    for (i, b) in bytes[4096..].iter_mut().enumerate() {
        *b = (i * 7 + 13) as u8;
    }
    std::fs::write(&damaged, bytes).unwrap();
    let said = refused(&damaged);
    assert!(said.contains("damaged"), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A tmpfs at a new folder, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    /// A tmpfs of `size`, or `None` when this process may not mount file
    /// systems (it is not root; CI is).
    fn new(name: &str, size: &str) -> Option<Mount> {
        let m = Mount(temp_dir(name));
        m.mount(&["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).then_some(m)
    }

    /// `mount ARGS DIR`: whether it succeeded.
    fn mount(&self, args: &[&str]) -> bool {
        Command::new("mount").args(args).arg(&self.0).status().is_ok_and(|s| s.success())
    }

    fn remount(&self, options: &str) {
        assert!(self.mount(&["-o", &format!("remount,{options}")]), "remount,{options}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_read_only_database_is_refused_at_start() {
    let Some(m) = Mount::new("ro", "4m") else {
        eprintln!("skipped: mounting a read-only file system needs root (CI runs it)");
        return;
    };
    let db = m.0.join("games.db");
    let (id, played) = one_game(&db);
    m.remount("ro");
    let said = refused(&db);
    assert!(said.contains("cannot be written") || said.contains("cannot open"), "{said}");
    m.remount("rw");
    // Nothing was lost meanwhile.
    let log = Arc::new(Mutex::new(String::new()));
    let (_server, tcp, _) = start(&db, &log).unwrap();
    let h = request(tcp, false, &json!({"op": "history", "session": id})).unwrap();
    assert_eq!(h["history"], json!(played));
}

#[test]
fn on_a_full_disk_a_move_is_refused_and_no_acknowledged_move_is_lost() {
    let Some(m) = Mount::new("full", "192k") else {
        eprintln!("skipped: a small file system for a full disk needs root to mount (CI runs it)");
        return;
    };
    let db = m.0.join("games.db");
    let log = Arc::new(Mutex::new(String::new()));
    let (server, tcp, _) = start(&db, &log).unwrap();
    let mut refusals = 0;
    let mut acked: Vec<(u64, usize, String)> = Vec::new();
    // Games until the disk is full: each new move is then refused.
    'fill: for _ in 0..400 {
        let g = request(tcp, false, &json!({"op": "new", "game": "go", "options": {"size": 9}})).unwrap();
        if g["ok"] != true {
            assert_eq!(g["error"]["code"], "storage", "{g}");
            break;
        }
        let id = g["session"].as_u64().unwrap();
        for _ in 0..40 {
            let st = request(tcp, false, &json!({"op": "status", "session": id})).unwrap();
            let to_move = st["to_move"].as_str().unwrap().to_string();
            let token = &g["tokens"][&to_move];
            let moves = request(tcp, false, &json!({"op": "moves", "session": id, "token": token})).unwrap();
            let mv = moves["moves"][0].as_str().unwrap().to_string();
            let r = request(tcp, false, &json!({"op": "play", "session": id, "move": mv, "token": token})).unwrap();
            if r["ok"] == true {
                acked.push((id, r["status"]["ply"].as_u64().unwrap() as usize - 1, mv));
            } else {
                assert_eq!(r["error"]["code"], "storage", "{r}");
                assert!(r["error"]["message"].as_str().unwrap().contains("full"), "{r}");
                refusals += 1;
                break 'fill;
            }
        }
    }
    assert!(refusals > 0, "the disk never filled ({} moves)", acked.len());
    drop(server);
    // On the same full disk, the server starts again (or says why), and
    // once there is room every acknowledged move is there.
    m.remount("size=8m");
    let (_server, tcp, _) = start(&db, &log).unwrap();
    for (id, ply, mv) in &acked {
        let h = request(tcp, false, &json!({"op": "history", "session": id})).unwrap();
        assert_eq!(h["history"][ply], json!(mv), "session {id} move {}", ply + 1);
    }
}
