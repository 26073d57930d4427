//! `cargo bench --bench serve`: how long a move takes over the network,
//! the server keeping its games in memory and in its SQLite database, in
//! one run. A client on loopback plays Breakthrough with random moves
//! (games one after another) and times each `play` request from sending it
//! to reading the reply; the two servers take turns, a game each, so that
//! the machine's moods fall on both alike.
//!
//! `BENCH_MOVES` sets the moves timed on each (default 1000).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tabula::server::{ClientLimits, Config, Server, Sqlite, Store};

struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn send(&mut self, req: Value) -> Value {
        self.writer.write_all(format!("{req}\n").as_bytes()).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

/// A server on a thread, with or without a store: a client of it, and its
/// stop flag.
fn start(store: Option<Arc<dyn Store>>) -> (Client, Arc<std::sync::atomic::AtomicBool>) {
    // One client sending as fast as it can: no rate limit.
    let per_client = ClientLimits { rate: 1e9, burst: 1e9, ..ClientLimits::default() };
    let games_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
    let config = Config { games_dir, per_client, ..Config::default() };
    let mut server = match store {
        Some(s) => Server::with_store(config, s).unwrap().0,
        None => Server::new(config),
    };
    let addr = server.listen_tcp("127.0.0.1:0").unwrap();
    let stop = server.stop_flag();
    std::thread::spawn(move || server.run().unwrap());
    let s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    (Client { reader: BufReader::new(s.try_clone().unwrap()), writer: s }, stop)
}

/// One game of random moves: each `play`'s time.
fn game(c: &mut Client, rng: &mut ChaCha8Rng, times: &mut Vec<Duration>, want: usize) {
    let g = c.send(json!({"op": "new", "game": "breakthrough", "seed": rng.r#gen::<u32>()}));
    let id = g["session"].as_u64().unwrap();
    while times.len() < want {
        let m = c.send(json!({"op": "moves", "session": id}));
        let Some(moves) = m["moves"].as_array().filter(|m| !m.is_empty()) else { break };
        let mv = moves[rng.gen_range(0..moves.len())].clone();
        let token = &g["tokens"][m["to_move"].as_str().unwrap()];
        let t = Instant::now();
        let r = c.send(json!({"op": "play", "session": id, "move": mv, "token": token}));
        times.push(t.elapsed());
        assert_eq!(r["ok"], true, "{r}");
    }
    c.send(json!({"op": "close", "session": id, "token": g["tokens"]["white"]}));
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn main() {
    let want: usize = std::env::var("BENCH_MOVES").ok().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let dir = std::env::temp_dir().join(format!("tabula-bench-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Sqlite::open(&dir.join("games.db")).unwrap();
    let (mut memory, stop_memory) = start(None);
    let (mut stored, stop_stored) = start(Some(Arc::new(store)));
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (mut in_memory, mut in_db) = (Vec::new(), Vec::new());
    while in_memory.len() < want || in_db.len() < want {
        game(&mut memory, &mut rng, &mut in_memory, want);
        game(&mut stored, &mut rng, &mut in_db, want);
    }
    println!("move latency over loopback, {want} Breakthrough moves each (ms)");
    println!("{:<28}{:>8}{:>8}{:>8}{:>8}", "server", "p50", "p90", "p99", "max");
    for (name, times) in [("in memory (--no-db)", &mut in_memory), ("SQLite (--db, sync FULL)", &mut in_db)] {
        times.sort();
        let row = [0.5, 0.9, 0.99, 1.0].map(|p| percentile(times, p));
        println!("{name:<28}{:>8.3}{:>8.3}{:>8.3}{:>8.3}", row[0], row[1], row[2], row[3]);
    }
    stop_memory.store(true, Ordering::SeqCst);
    stop_stored.store(true, Ordering::SeqCst);
    let _ = std::fs::remove_dir_all(&dir);
}
