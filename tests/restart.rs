//! `tabula serve` with its games in a database: a server stopped and
//! started again on it brings back every game in play (same numbers, same
//! tokens, same positions, computer seats thinking again); a move the
//! database refuses is not acknowledged and is taken back; closed games
//! stay readable.

mod common;

use common::web::LineClient as Client;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tabula::server::{Config, Server, Sqlite, Status, Store, StoreError, Stored};

fn config() -> Config {
    Config { games_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("games"), ..Config::default() }
}

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tabula-restart-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("games.db")
}

/// A server on `store` taking JSON lines, running on a thread until
/// `stop` is called.
struct Running {
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    brought_back: Vec<u64>,
}

impl Running {
    fn start(config: Config, store: Arc<dyn Store>) -> Running {
        let (mut server, restored) = Server::with_store(config, store).unwrap();
        assert!(restored.failed.is_empty(), "{:?}", restored.failed);
        let addr = server.listen_tcp("127.0.0.1:0").unwrap();
        let stop = server.stop_flag();
        let thread = std::thread::spawn(move || server.run().unwrap());
        Running { addr, stop, thread: Some(thread), brought_back: restored.sessions }
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
    }
}

/// Plays the first legal move for the seat to move: its text.
fn play_first(c: &mut Client, id: u64, tokens: &Value) -> String {
    let st = c.send(json!({"op": "status", "session": id}));
    let to_move = st["to_move"].as_str().unwrap_or_else(|| panic!("{st}")).to_string();
    let moves = c.send(json!({"op": "moves", "session": id, "token": tokens[&to_move]}));
    let mv = moves["moves"][0].as_str().unwrap().to_string();
    let r = c.send(json!({"op": "play", "session": id, "move": mv, "token": tokens[&to_move]}));
    assert_eq!(r["ok"], true, "{r}");
    mv
}

fn history(c: &mut Client, id: u64) -> Value {
    let h = c.send(json!({"op": "history", "session": id}));
    assert_eq!(h["ok"], true, "{h}");
    h["history"].clone()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        assert!(t.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_restarted_server_brings_back_every_game_in_play() {
    let path = temp_db("back");
    let store: Arc<dyn Store> = Arc::new(Sqlite::open(&path).unwrap());
    let server = Running::start(config(), store);
    let mut c = Client::connect(server.addr);
    // Breakthrough between two people, Pig (chance rolls the die) and
    // Domin-Up (hands dealt, hidden), and Connect Four against the
    // computer, which plays its own moves.
    let bt = c.send(json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}, "seed": 3}));
    let pig = c.send(json!({"op": "new", "game": "pig", "seed": 11}));
    let dom = c.send(json!({"op": "new", "game": "domin-up", "seed": 5}));
    let c4 = c.send(json!({"op": "new", "game": "connect4", "seats": {"yellow": "random"}, "auto": true}));
    let ids: Vec<u64> = [&bt, &pig, &dom, &c4].iter().map(|r| r["session"].as_u64().unwrap()).collect();
    for id in &ids[..3] {
        let tokens = [&bt, &pig, &dom][ids.iter().position(|i| i == id).unwrap()]["tokens"].clone();
        for _ in 0..6 {
            play_first(&mut c, *id, &tokens);
        }
    }
    let red = c4["tokens"]["red"].clone();
    assert_eq!(c.send(json!({"op": "play", "session": ids[3], "move": "4", "token": red}))["ok"], true);
    wait_for("the computer answers", || c.send(json!({"op": "status", "session": ids[3]}))["ply"] == 2);
    let before: Vec<Value> = ids.iter().map(|&id| history(&mut c, id)).collect();
    let dom_seat = dom["players"][0].as_str().unwrap();
    let hand_before =
        c.send(json!({"op": "view", "session": ids[2], "viewer": dom_seat, "token": dom["tokens"][dom_seat]}));
    // One closed game: its record stays readable.
    let closed = c.send(json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}}));
    let closed_id = closed["session"].as_u64().unwrap();
    let first = play_first(&mut c, closed_id, &closed["tokens"]);
    let r = c.send(json!({"op": "close", "session": closed_id, "token": closed["tokens"]["white"]}));
    assert_eq!(r["ok"], true);
    drop(c);
    server.stop();

    let store: Arc<dyn Store> = Arc::new(Sqlite::open(&path).unwrap());
    let server = Running::start(config(), store);
    assert_eq!(server.brought_back, ids);
    let mut c = Client::connect(server.addr);
    for (id, h) in ids.iter().zip(&before) {
        assert_eq!(&history(&mut c, *id), h, "session {id}");
    }
    let hand_after =
        c.send(json!({"op": "view", "session": ids[2], "viewer": dom_seat, "token": dom["tokens"][dom_seat]}));
    assert_eq!(hand_after["board"], hand_before["board"], "the hidden hands are dealt as they were");
    // The same tokens play on, and a wrong one is still refused.
    play_first(&mut c, ids[0], &bt["tokens"]);
    let wrong = c.send(json!({"op": "undo", "session": ids[0], "token": "0123456789abcdef0123456789abcdef"}));
    assert_eq!(wrong["error"]["code"], "forbidden", "{wrong}");
    // The computer seat answers again.
    assert_eq!(c.send(json!({"op": "play", "session": ids[3], "move": "3", "token": red}))["ok"], true);
    wait_for("the computer answers after the restart", || {
        c.send(json!({"op": "status", "session": ids[3]}))["ply"] == 4
    });
    // A new session gets a number never given before.
    let fresh = c.send(json!({"op": "new", "game": "connect4"}));
    assert_eq!(fresh["session"].as_u64().unwrap(), closed_id + 1);
    // The closed game: gone from play, its record and history readable.
    let gone = c.send(json!({"op": "status", "session": closed_id}));
    assert_eq!(gone["error"]["code"], "unknown_session", "{gone}");
    let record = c.send(json!({"op": "record", "session": closed_id}));
    let text = record["record"].as_str().unwrap_or_else(|| panic!("{record}"));
    assert!(text.contains("game: breakthrough") && text.ends_with(&format!("moves:\n{first}\n")), "{text}");
    assert_eq!(history(&mut c, closed_id), json!([first]));
    drop(c);
    server.stop();
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn a_session_let_go_for_idleness_comes_back_when_asked_for() {
    let path = temp_db("idle");
    let store: Arc<dyn Store> = Arc::new(Sqlite::open(&path).unwrap());
    let server = Running::start(Config { idle: Duration::from_millis(300), ..config() }, store);
    let mut c = Client::connect(server.addr);
    let g = c.send(json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}}));
    let id = g["session"].as_u64().unwrap();
    let mv = play_first(&mut c, id, &g["tokens"]);
    // Past the idle time its thread has ended; the game is in the store.
    // (and so has the connection's).
    std::thread::sleep(Duration::from_millis(900));
    let mut c = Client::connect(server.addr);
    assert_eq!(history(&mut c, id), json!([mv]));
    play_first(&mut c, id, &g["tokens"]);
    drop(c);
    server.stop();
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

/// A store that refuses to save while told to (a full disk, say).
struct Refusing {
    inner: Sqlite,
    refuse: AtomicBool,
}

impl Store for Refusing {
    fn last_session(&self) -> Result<u64, StoreError> {
        self.inner.last_session()
    }
    fn create(&self, s: &Stored) -> Result<(), StoreError> {
        self.inner.create(s)
    }
    fn save(&self, id: u64, change: &tabula::server::Change) -> Result<(), StoreError> {
        if self.refuse.load(Ordering::SeqCst) {
            return Err(StoreError("database or disk is full".into()));
        }
        self.inner.save(id, change)
    }
    fn end(&self, id: u64, status: Status) -> Result<(), StoreError> {
        self.inner.end(id, status)
    }
    fn in_play(&self) -> Result<Vec<Stored>, StoreError> {
        self.inner.in_play()
    }
    fn load(&self, id: u64) -> Result<Option<Stored>, StoreError> {
        self.inner.load(id)
    }
    fn sessions(&self) -> Result<Vec<u64>, StoreError> {
        self.inner.sessions()
    }
}

#[test]
fn a_move_the_store_refuses_is_not_acknowledged_and_is_taken_back() {
    let path = temp_db("refuse");
    let store = Arc::new(Refusing { inner: Sqlite::open(&path).unwrap(), refuse: AtomicBool::new(false) });
    let server = Running::start(config(), store.clone());
    let mut c = Client::connect(server.addr);
    let g = c.send(json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}}));
    let id = g["session"].as_u64().unwrap();
    let first = play_first(&mut c, id, &g["tokens"]);
    store.refuse.store(true, Ordering::SeqCst);
    let r = c.send(json!({"op": "play", "session": id, "move": "b4-b3", "token": g["tokens"]["black"]}));
    assert_eq!(r["error"]["code"], "storage", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("not stored, so it is not made"), "{r}");
    // Taken back: the position is the stored one.
    assert_eq!(history(&mut c, id), json!([first]));
    let undo = c.send(json!({"op": "undo", "session": id, "token": g["tokens"]["black"]}));
    assert_eq!(undo["error"]["code"], "storage", "{undo}");
    assert_eq!(history(&mut c, id), json!([first]));
    store.refuse.store(false, Ordering::SeqCst);
    let r = c.send(json!({"op": "play", "session": id, "move": "b4-b3", "token": g["tokens"]["black"]}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(store.load(id).unwrap().unwrap().moves.len(), 2);
    drop(c);
    server.stop();
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn the_games_list_is_made_once_and_again_when_a_game_file_changes() {
    // The `games` reply loads every game; the fuzzer found it took seconds
    // a request. It is kept until a file of the folder changes.
    let dir = temp_db("games").parent().unwrap().to_path_buf();
    let games = Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
    std::fs::copy(games.join("connect4.rules"), dir.join("connect4.rules")).unwrap();
    let server = Server::new(Config { games_dir: dir.clone(), ..config() });
    let names = |v: Value| -> Vec<String> {
        v["games"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names(server.request(json!({"op": "games"}))), ["connect4"]);
    assert_eq!(names(server.request(json!({"op": "games"}))), ["connect4"]);
    std::fs::copy(games.join("hex.rules"), dir.join("hex.rules")).unwrap();
    assert_eq!(names(server.request(json!({"op": "games"}))), ["connect4", "hex"]);
    std::fs::write(dir.join("hex.rules"), "this is no longer a game").unwrap();
    let listed = server.request(json!({"op": "games"}));
    assert!(listed["games"][1]["error"].is_string(), "{listed}");
    std::fs::remove_dir_all(&dir).unwrap();
}
