//! `tabula serve`: games and queries over the network. One session model
//! (this module and `session.rs`) and two ways in: newline-delimited JSON
//! over TCP (`tcp.rs`) and HTTP with the web board (`http.rs`). Both take
//! the same requests (a JSON object with an `op`) and give the same replies
//! (see the README for the protocol).
//!
//! Each game session has a thread that owns its engine (an engine is not
//! shared between threads) and takes requests from any connection through
//! a channel; pages that follow a session get an event after every move.
//! A session ends on `close`, after being idle, or, when the server is
//! full, to make room: the oldest idle session with no seat connected goes
//! first. The limits (sessions, connections, request size, query steps and
//! time, memory, and what one client may hold: `guard.rs`) are in
//! [`Config`]. A bad request gets an error reply and the connection stays
//! usable; a client that goes away mid-request only loses its reply.

mod analyze;
mod guard;
mod http;
mod session;
mod store;
mod tcp;

pub use guard::ClientLimits;
pub use store::{Change, Sqlite, Status, Store, StoreError, Stored, StoredMove};

use guard::Client;

use crate::ai::Controller;
use crate::game::{GameError, find_game};
use guard::{Budget, Clients, Held, Hold};
use serde_json::{Map, Value, json};
use session::{Opening, Session};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

/// The server's limits.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the games are; clients name games, never paths.
    pub games_dir: PathBuf,
    pub max_sessions: usize,
    pub max_connections: usize,
    /// Bytes in one request line at most.
    pub max_line: usize,
    /// A connection or session unused this long is closed.
    pub idle: Duration,
    /// Inference steps and time a `query` may use.
    pub query_steps: u64,
    pub query_time: Duration,
    /// Answers a `query` returns at most.
    pub max_answers: usize,
    /// Bytes one session may hold: its database, its engine's stacks, its
    /// history, and one request's data.
    pub session_memory: usize,
    /// Bytes all sessions together may hold (the process's budget).
    pub max_memory: usize,
    /// What one client (an address) may hold and send.
    pub per_client: ClientLimits,
    /// A connection must send its first request, and any request once
    /// begun must arrive whole, within this.
    pub handshake: Duration,
    /// Seconds a computer move may take at most, whatever the request
    /// asks.
    pub max_think: f64,
    /// Over HTTP, take the client's address from `X-Forwarded-For` when
    /// the connection comes from loopback (a reverse proxy on this
    /// machine).
    pub trust_proxy: bool,
    /// Bytes of answers and output in one `query` reply at most.
    pub max_reply: usize,
    /// Where each session keeps its game record (`session-N.record`,
    /// replaced atomically after every move), if anywhere.
    pub records: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            games_dir: crate::game::games_dir(None),
            max_sessions: 256,
            max_connections: 256,
            max_line: 64 * 1024,
            idle: Duration::from_secs(600),
            query_steps: 10_000_000,
            query_time: Duration::from_secs(5),
            max_answers: 100,
            session_memory: 256 << 20,
            max_memory: guard::default_budget(),
            per_client: ClientLimits::default(),
            handshake: Duration::from_secs(10),
            max_think: 10.0,
            trust_proxy: false,
            max_reply: 1 << 20,
            records: None,
        }
    }
}

/// How often blocked threads look at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// A request's failure: a code a program can test and a message a person
/// can read.
#[derive(Debug)]
struct Failure {
    code: &'static str,
    message: String,
    /// Seconds after which the same request may succeed (a client over
    /// its limits).
    retry: Option<u64>,
    /// The moves an ambiguous typed move could be.
    candidates: Vec<String>,
    /// Why a typed move is refused, from the rules (`tabula explain`'s
    /// lines).
    why: Option<String>,
}

fn fail(code: &'static str, message: impl Into<String>) -> Failure {
    Failure { code, message: message.into(), retry: None, candidates: Vec::new(), why: None }
}

impl Failure {
    fn retry_after(self, seconds: u64) -> Failure {
        Failure { retry: Some(seconds), ..self }
    }
}

impl From<GameError> for Failure {
    fn from(e: GameError) -> Failure {
        let code = match &e {
            GameError::NotFound(_) => "unknown_game",
            GameError::Option(_) => "bad_option",
            GameError::IllegalMove { .. } => "illegal_move",
            GameError::AmbiguousMove { candidates, .. } => {
                return Failure { candidates: candidates.clone(), ..fail("ambiguous_move", e.to_string()) };
            }
            GameError::Load { .. } | GameError::Interface(_) | GameError::Rules(_) => "rules_error",
            GameError::Limit(_) => "limit",
        };
        fail(code, e.to_string())
    }
}

type Reply = Result<Map<String, Value>, Failure>;

/// What a session's thread is asked: a request to answer, or to tell a
/// follower (a page's event stream) of every change from now on.
enum Job {
    Request { req: Map<String, Value>, reply: mpsc::Sender<Reply> },
    Follow(mpsc::Sender<Value>),
}

struct Shared {
    config: Config,
    sessions: Mutex<HashMap<u64, Entry>>,
    next_session: AtomicU64,
    connections: AtomicUsize,
    stop: Arc<AtomicBool>,
    clients: Arc<Clients>,
    memory: Arc<Budget>,
    /// The newest sessions closed to make room, so that a client coming
    /// back to one hears why.
    evicted: Mutex<VecDeque<u64>>,
    /// Where the sessions are kept, if anywhere.
    store: Option<Arc<dyn Store>>,
    /// Held while a stored session is brought back (one at a time).
    restoring: Mutex<()>,
    /// The `games` reply, and the game files (with their times) it was
    /// made from: every game is loaded to make it, so it is made again
    /// only when a file changes.
    games: Mutex<Option<(GameFiles, Value)>>,
}

/// The game files of a folder, each with when it last changed.
type GameFiles = Vec<(PathBuf, Option<std::time::SystemTime>)>;

/// A session as the server sees it: how to reach its thread, what the
/// server knows of its use without asking it, and its creator's hold on
/// one of its places.
struct Entry {
    tx: mpsc::Sender<Job>,
    life: Arc<Life>,
    _owner: Option<Hold>,
}

/// A session's use, kept by the requests that reach it.
struct Life {
    last_used: Mutex<Instant>,
    /// Requests sent to it and not yet answered.
    busy: AtomicUsize,
    /// Connections and event streams following it (a seat connected).
    attached: AtomicUsize,
}

impl Life {
    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn idle_since(&self) -> Instant {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How many evicted session numbers are remembered.
const EVICTED_KEPT: usize = 1024;

impl Shared {
    /// Every game with its title, seats and options (the `games` reply).
    fn games(&self) -> Value {
        let dir = &self.config.games_dir;
        let files: GameFiles = (crate::game::list_games(dir).into_iter())
            .map(|p| {
                let modified = std::fs::metadata(&p).and_then(|m| m.modified()).ok();
                (p, modified)
            })
            .collect();
        let mut cached = self.games.lock().unwrap_or_else(|p| p.into_inner());
        match &*cached {
            Some((made_from, reply)) if *made_from == files => reply.clone(),
            _ => {
                let reply = session::games(dir);
                *cached = Some((files, reply.clone()));
                reply
            }
        }
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<u64, Entry>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn loaded(&self, id: u64) -> Option<(mpsc::Sender<Job>, Arc<Life>)> {
        self.sessions().get(&id).map(|e| (e.tx.clone(), e.life.clone()))
    }

    fn forget(&self, id: u64) {
        let gone = self.sessions().remove(&id);
        drop(gone);
    }

    fn unknown_session(&self, id: u64) -> Failure {
        if self.store.is_some() {
            return fail("unknown_session", format!("no session {id} in play (closed, or never opened)"));
        }
        if self.evicted.lock().unwrap_or_else(|p| p.into_inner()).contains(&id) {
            return fail(
                "unknown_session",
                format!(
                    "session {id} was closed to make room for new players: the server was full and it was the oldest idle session with no seat connected"
                ),
            );
        }
        fail("unknown_session", format!("no session {id} (closed, idle too long, or never opened)"))
    }

    /// Closes the oldest session that is idle with no seat connected:
    /// whether there was one.
    fn evict_one(&self) -> bool {
        let mut sessions = self.sessions();
        let victim = sessions
            .iter()
            .filter(|(_, e)| e.life.busy.load(Ordering::SeqCst) == 0 && e.life.attached.load(Ordering::SeqCst) == 0)
            .min_by_key(|(_, e)| e.life.idle_since())
            .map(|(id, _)| *id);
        let Some(id) = victim else { return false };
        // Dropping its sender ends the session's thread, which gives its
        // memory back.
        let entry = sessions.remove(&id);
        drop(sessions);
        drop(entry);
        let mut evicted = self.evicted.lock().unwrap_or_else(|p| p.into_inner());
        if evicted.len() >= EVICTED_KEPT {
            evicted.pop_front();
        }
        evicted.push_back(id);
        true
    }

    /// `bytes` of the memory budget for a new session, closing idle
    /// sessions to free them if need be. Room for one session's request
    /// stays free, so that the games in play can go on.
    fn memory_for_session(&self, bytes: usize) -> Result<usize, Failure> {
        let leave = self.config.session_memory;
        loop {
            if let Some(n) = self.memory.take(bytes, bytes, leave) {
                return Ok(n);
            }
            if !self.evict_one() {
                return Err(fail(
                    "server_full",
                    format!(
                        "the server's memory ({} MB) is in use by games in progress; try again later",
                        self.memory.total >> 20
                    ),
                )
                .retry_after(60));
            }
            // The session's thread gives its memory back as it ends.
            let t = Instant::now();
            while self.memory.take(bytes, bytes, leave).map(|n| self.memory.give(n)).is_none()
                && t.elapsed() < Duration::from_secs(2)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Session `id`'s thread: the one running, else (with a store) the
/// session brought back from the store if it is in play there.
fn session(shared: &Arc<Shared>, id: u64) -> Result<(mpsc::Sender<Job>, Arc<Life>), Failure> {
    if let Some(found) = shared.loaded(id) {
        return Ok(found);
    }
    let Some(store) = &shared.store else { return Err(shared.unknown_session(id)) };
    let _one = shared.restoring.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = shared.loaded(id) {
        return Ok(found);
    }
    let stored = store.load(id).map_err(|e| fail("storage", e.to_string()))?;
    match stored {
        Some(stored) if stored.status == Status::Open => {
            restore(shared, stored)?;
            shared.loaded(id).ok_or_else(|| shared.unknown_session(id))
        }
        _ => Err(shared.unknown_session(id)),
    }
}

/// Brings back a stored session: its thread loads the game and replays
/// the moves.
fn restore(shared: &Arc<Shared>, stored: Stored) -> Result<(), Failure> {
    let path = find_game(&stored.game, &shared.config.games_dir)?;
    let mut seats = Vec::new();
    for (seat, spec) in &stored.seats {
        seats.push((seat.clone(), Controller::parse(spec, None).map_err(|e| fail("bad_controller", e))?));
    }
    let (id, store) = (stored.id, shared.store.clone());
    let (options, seed, auto) = (stored.options.clone(), stored.seed, stored.auto);
    start_session(shared, id, None, move |config, budget, held| {
        let record = config.records.as_ref().map(|d| d.join(format!("session-{id}.record")));
        let o = Opening { id, store, path, options, seed, seats, auto, record };
        Session::restore(&stored, o, config, budget, held)
    })
    .map(drop)
}

/// `record` or `history` of a session closed in the store: its moves as
/// stored. A game with hidden hands shows them to its players only.
fn closed_session(shared: &Shared, req: &Map<String, Value>, op: &str) -> Option<Reply> {
    let id = session_id(req, op).ok()?;
    let stored = shared.store.as_ref()?.load(id).ok()??;
    if stored.status != Status::Closed {
        return None;
    }
    let token = req.get("token").and_then(Value::as_str);
    if stored.hidden && !stored.tokens.iter().any(|(_, h)| token.is_some_and(|t| store::token_matches(t, h))) {
        return Some(Err(fail("forbidden", format!("`{op}` of a game with hidden hands needs the `token` of a seat"))));
    }
    Some(Ok(match op {
        "history" => one("history", json!(stored.moves.iter().map(|m| m.text.clone()).collect::<Vec<_>>())),
        _ => one("record", json!(stored_record(&stored).to_text())),
    }))
}

/// A stored session's game record.
pub fn stored_record(s: &Stored) -> crate::game::record::Record {
    crate::game::record::Record {
        game: s.game.clone(),
        options: s.options.clone(),
        seed: s.seed,
        seats: s.seats.clone(),
        start: s.start.clone(),
        moves: s.moves.iter().map(|m| (m.text.clone(), 0)).collect(),
        positions: Vec::new(),
    }
}

/// The sessions a connection has sent requests to: each counts it as a
/// seat connected while it lives.
#[derive(Default)]
struct Attached(Vec<(u64, Arc<Life>)>);

impl Attached {
    fn attach(&mut self, id: u64, life: &Arc<Life>) {
        if !self.0.iter().any(|(i, _)| *i == id) {
            life.attached.fetch_add(1, Ordering::SeqCst);
            self.0.push((id, life.clone()));
        }
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        for (_, life) in &self.0 {
            life.attached.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Who sent a request, and (for a connection that lasts) the sessions it
/// follows.
struct Sender<'a> {
    client: Client,
    attached: Option<&'a mut Attached>,
}

/// Counts a connection while it lives, against the server's limit and its
/// client's.
struct Counted {
    shared: Arc<Shared>,
    _hold: Option<Hold>,
}

impl Counted {
    fn new(shared: &Arc<Shared>, client: Client, per_client: bool) -> Result<Counted, Failure> {
        let n = shared.connections.fetch_add(1, Ordering::SeqCst) + 1;
        let mut counted = Counted { shared: shared.clone(), _hold: None };
        if n > shared.config.max_connections {
            let max = shared.config.max_connections;
            return Err(
                fail("too_many_connections", format!("the server takes {max} connections at most")).retry_after(5)
            );
        }
        if per_client {
            counted._hold = Some(shared.clients.hold(client, Held::Connection)?);
        }
        Ok(counted)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.shared.connections.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes connections on `listener` until stopped, each admitted (counted
/// against the server's and its client's limits) and served on a thread
/// of its own by `serve`; one that is not admitted gets `refusal`'s bytes
/// and is closed. Then waits for the connection threads.
fn accept_loop(
    listener: &TcpListener,
    shared: &Arc<Shared>,
    name: &str,
    refusal: fn(&Failure) -> Vec<u8>,
    serve: fn(Arc<Shared>, TcpStream, SocketAddr, Counted),
) -> io::Result<()> {
    let mut threads = Vec::new();
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((mut stream, peer)) => {
                let _ = stream.set_nonblocking(false);
                let client = Client::of(peer.ip());
                // Behind a trusted proxy, every client comes from it: its
                // connections count against the server's limit only.
                let per_client = !(shared.config.trust_proxy && peer.ip().is_loopback());
                let counted = match Counted::new(shared, client, per_client) {
                    Ok(c) => c,
                    Err(f) => {
                        let _ = stream.set_write_timeout(Some(POLL));
                        let _ = stream.write_all(&refusal(&f));
                        continue;
                    }
                };
                threads.retain(|h: &std::thread::JoinHandle<()>| !h.is_finished());
                let shared = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name(name.into())
                    .stack_size(1 << 20)
                    .spawn(move || serve(shared, stream, peer, counted));
                if let Ok(h) = spawned {
                    threads.push(h);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(10)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // Out of file descriptors, a connection reset before it was
            // taken: the server goes on.
            Err(_) => std::thread::sleep(POLL),
        }
    }
    for h in threads {
        let _ = h.join();
    }
    Ok(())
}

/// The stored sessions a server brought back as it started.
#[derive(Debug, Default)]
pub struct Restored {
    pub sessions: Vec<u64>,
    /// Those that could not be, and why.
    pub failed: Vec<(u64, String)>,
}

/// A server with its listeners; [`Server::run`] serves until the stop
/// flag is set.
pub struct Server {
    shared: Arc<Shared>,
    tcp: Option<TcpListener>,
    http: Option<TcpListener>,
}

impl Server {
    /// A server with no listener yet, that keeps its games in memory.
    pub fn new(config: Config) -> Server {
        Server::build(config, None)
    }

    /// A server that keeps its games in `store`, with the sessions in play
    /// there that changed within the idle time brought back (the others
    /// come back when asked for): how many, and why each that could not.
    pub fn with_store(config: Config, store: Arc<dyn Store>) -> Result<(Server, Restored), StoreError> {
        let last = store.last_session()?;
        let in_play = store.in_play()?;
        let server = Server::build(config, Some(store));
        let shared = &server.shared;
        shared.next_session.store(last + 1, Ordering::SeqCst);
        let since = store::now() - shared.config.idle.as_secs() as i64;
        let mut recent: Vec<Stored> = in_play.into_iter().filter(|s| s.updated >= since).collect();
        recent.sort_by_key(|s| std::cmp::Reverse((s.updated, s.id)));
        recent.truncate(shared.config.max_sessions);
        let mut restored = Restored::default();
        for stored in recent {
            let id = stored.id;
            match restore(shared, stored) {
                Ok(()) => restored.sessions.push(id),
                Err(f) => restored.failed.push((id, f.message)),
            }
        }
        restored.sessions.sort_unstable();
        Ok((server, restored))
    }

    fn build(config: Config, store: Option<Arc<dyn Store>>) -> Server {
        let shared = Arc::new(Shared {
            clients: Arc::new(Clients::new(config.per_client.clone())),
            memory: Arc::new(Budget::new(config.max_memory)),
            config,
            sessions: Mutex::new(HashMap::new()),
            next_session: AtomicU64::new(1),
            connections: AtomicUsize::new(0),
            stop: Arc::new(AtomicBool::new(false)),
            evicted: Mutex::new(VecDeque::new()),
            store,
            restoring: Mutex::new(()),
            games: Mutex::new(None),
        });
        Server { shared, tcp: None, http: None }
    }

    /// A server taking JSON lines over TCP on `addr`.
    pub fn bind(addr: &str, config: Config) -> io::Result<Server> {
        let mut s = Server::new(config);
        s.listen_tcp(addr)?;
        Ok(s)
    }

    /// Takes JSON lines over TCP on `addr` too.
    pub fn listen_tcp(&mut self, addr: &str) -> io::Result<SocketAddr> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let a = listener.local_addr()?;
        self.tcp = Some(listener);
        Ok(a)
    }

    /// Serves the web board and its API over HTTP on `addr` too.
    pub fn listen_http(&mut self, addr: &str) -> io::Result<SocketAddr> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let a = listener.local_addr()?;
        self.http = Some(listener);
        Ok(a)
    }

    /// The TCP listener's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match &self.tcp {
            Some(l) => l.local_addr(),
            None => Err(io::Error::new(io::ErrorKind::NotConnected, "no TCP listener")),
        }
    }

    /// The HTTP listener's address.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Bytes of the memory budget in use now: what the sessions hold and
    /// what running requests may use.
    pub fn memory_in_use(&self) -> usize {
        self.shared.memory.in_use()
    }

    /// Answers one request as if it came over the network (the JSON
    /// object of the protocol); `play --web` opens its session this way.
    pub fn request(&self, req: Value) -> Value {
        match req {
            Value::Object(m) => answer(&self.shared, Ok(m), Sender { client: Client::Local, attached: None }).0,
            _ => error_reply(None, &fail("bad_request", "a request is a JSON object")),
        }
    }

    /// The replies a client sending `bytes` would get: as JSON lines over
    /// TCP, or (`http`) as HTTP requests on one connection (event streams
    /// aside). For fuzzing the transports without sockets.
    #[doc(hidden)]
    pub fn exchange(&self, bytes: &[u8], http: bool) -> Vec<u8> {
        if http { http::exchange(&self.shared, bytes) } else { tcp::exchange(&self.shared, bytes) }
    }

    /// Setting this flag stops the server: no new connections, open ones
    /// closed after their current request, sessions ended.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.shared.stop.clone()
    }

    /// Serves on every listener until stopped; then waits for the
    /// connection threads to finish.
    pub fn run(self) -> io::Result<()> {
        let http = self.http.map(|l| {
            let shared = self.shared.clone();
            std::thread::Builder::new().name("tabula-http".into()).spawn(move || http::run(&l, &shared))
        });
        let http = http.transpose()?;
        let result = match &self.tcp {
            Some(l) => accept_loop(l, &self.shared, "tabula-connection", tcp::refusal, tcp::connection),
            None => {
                while !self.shared.stop.load(Ordering::SeqCst) {
                    std::thread::sleep(POLL);
                }
                Ok(())
            }
        };
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(h) = http {
            let _ = h.join();
        }
        // Dropping the senders ends the session threads.
        self.shared.sessions().clear();
        result
    }
}

/// The HTTP status of an error code.
fn status_of(code: &str) -> u16 {
    match code {
        "unknown_session" | "unknown_game" | "not_found" => 404,
        "forbidden" => 403,
        "method_not_allowed" => 405,
        "timeout" => 408,
        "length_required" => 411,
        "too_large" | "line_too_long" => 413,
        "client_limit" => 429,
        "header_too_large" => 431,
        "too_many_sessions" | "too_many_connections" | "server_full" => 503,
        "rules_error" | "server_error" => 500,
        _ => 400,
    }
}

fn error_reply(id: Option<&Value>, f: &Failure) -> Value {
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("id".into(), id.clone());
    }
    m.insert("ok".into(), json!(false));
    let mut e = json!({"code": f.code, "message": f.message});
    if let Some(s) = f.retry {
        e["retry_after"] = json!(s);
    }
    if !f.candidates.is_empty() {
        e["candidates"] = json!(f.candidates);
    }
    if let Some(w) = &f.why {
        e["why"] = json!(w);
    }
    m.insert("error".into(), e);
    Value::Object(m)
}

/// A request's JSON text read into an object (serde_json refuses nesting
/// deeper than 128).
fn parse_request(body: &[u8]) -> Result<Map<String, Value>, Failure> {
    let text = std::str::from_utf8(body).map_err(|_| fail("bad_json", "the request is not UTF-8 text"))?;
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(fail("bad_request", "a request is a JSON object")),
        Err(e) => Err(fail("bad_json", format!("not JSON: {e}"))),
    }
}

/// The reply to a request (`ok` and the request's `id`, then what the op
/// gives, or the error), and the failure when it is an error (HTTP's
/// status and `Retry-After` come from it). Every request counts against
/// its client's rate, a malformed one too.
fn answer(shared: &Arc<Shared>, req: Result<Map<String, Value>, Failure>, from: Sender) -> (Value, Option<Failure>) {
    let mut id = None;
    let result = shared.clients.request(from.client).and_then(|()| {
        let req = req?;
        id = req.get("id").cloned();
        dispatch(shared, req, from)
    });
    match result {
        Ok(mut m) => {
            let mut out = Map::new();
            if let Some(id) = id {
                out.insert("id".into(), id);
            }
            out.insert("ok".into(), json!(true));
            out.append(&mut m);
            (Value::Object(out), None)
        }
        Err(f) => (error_reply(id.as_ref(), &f), Some(f)),
    }
}

const OPS: &str =
    "new, games, moves, play, explain, ai, hint, status, display, view, history, record, undo, query, close";

/// The ops a session answers.
const SESSION_OPS: &[&str] = &[
    "moves", "play", "explain", "ai", "hint", "status", "display", "view", "history", "record", "undo", "query",
    "close",
];

fn dispatch(shared: &Arc<Shared>, req: Map<String, Value>, from: Sender) -> Reply {
    let op = match req.get("op") {
        Some(Value::String(op)) => op.clone(),
        Some(_) => return Err(fail("bad_request", "`op` must be a string")),
        None => return Err(fail("bad_request", format!("a request needs an `op`: {OPS}"))),
    };
    match op.as_str() {
        "new" => {
            let reply = new_session(shared, req, from.client)?;
            // Its creator's connection is a seat connected.
            let id = reply.get("session").and_then(Value::as_u64);
            if let (Some(a), Some(id)) = (from.attached, id)
                && let Some((_, life)) = shared.loaded(id)
            {
                a.attach(id, &life);
            }
            Ok(reply)
        }
        "games" => Ok(one("games", shared.games())),
        op if SESSION_OPS.contains(&op) => {
            let id = session_id(&req, op)?;
            let (tx, life) = match session(shared, id) {
                Ok(found) => found,
                Err(f) if matches!(op, "record" | "history") => {
                    return closed_session(shared, &req, op).unwrap_or(Err(f));
                }
                Err(f) => return Err(f),
            };
            // A computer move holds a core for a while: a client may have
            // only so many in progress.
            let _thinking = if matches!(op, "ai" | "hint" | "explain") {
                Some(shared.clients.hold(from.client, Held::Thinking)?)
            } else {
                None
            };
            if let Some(a) = from.attached {
                a.attach(id, &life);
            }
            life.busy.fetch_add(1, Ordering::SeqCst);
            life.touch();
            let (reply_tx, reply_rx) = mpsc::channel();
            let sent = tx.send(Job::Request { req, reply: reply_tx });
            let reply = sent.ok().and_then(|()| reply_rx.recv().ok());
            life.touch();
            life.busy.fetch_sub(1, Ordering::SeqCst);
            let reply = reply.ok_or_else(|| shared.unknown_session(id))?;
            if op == "close" && reply.is_ok() {
                // The slot is free once the client hears so (the session's
                // thread also removes itself as it ends).
                shared.forget(id);
            }
            reply
        }
        other => Err(fail("bad_request", format!("unknown op `{other}`: use {OPS}"))),
    }
}

fn session_id(req: &Map<String, Value>, op: &str) -> Result<u64, Failure> {
    match req.get("session") {
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or(0)),
        Some(_) => Err(fail("bad_request", "`session` must be the number `new` replied")),
        None => Err(fail("bad_request", format!("`{op}` needs a `session`"))),
    }
}

/// Subscribes `events` to session `id`'s changes: the session, whose
/// seat is connected while the stream lives.
fn follow(shared: &Arc<Shared>, id: u64, events: mpsc::Sender<Value>) -> Result<Arc<Life>, Failure> {
    let (tx, life) = session(shared, id)?;
    tx.send(Job::Follow(events)).map_err(|_| shared.unknown_session(id))?;
    Ok(life)
}

fn text_field<'a>(req: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, Failure> {
    match req.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(fail("bad_request", format!("`{name}` must be a string"))),
    }
}

fn required<'a>(req: &'a Map<String, Value>, name: &str, op: &str) -> Result<&'a str, Failure> {
    text_field(req, name)?.ok_or_else(|| fail("bad_request", format!("`{op}` needs `{name}`")))
}

/// What a session holds of the memory budget before its game is loaded
/// (then what it measures).
const SESSION_START: usize = 8 << 20;

/// Opens a session: its thread loads the game and then serves requests.
fn new_session(shared: &Arc<Shared>, req: Map<String, Value>, client: Client) -> Reply {
    let name = required(&req, "game", "new")?.to_string();
    // Games are named, never given as paths, over the network.
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(fail("unknown_game", format!("`{name}` is not a game name")));
    }
    let mut options: Vec<(String, String)> = Vec::new();
    match req.get("options") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(fail("bad_option", format!("option `{k}`: give a number or a string (a term)"))),
                };
                options.push((k.clone(), text));
            }
        }
        Some(_) => return Err(fail("bad_request", "`options` must be an object of option name to value")),
    }
    let seed = match req.get("seed") {
        None | Some(Value::Null) => 0,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
        Some(_) => return Err(fail("bad_request", "`seed` must be a whole number of at least 0")),
    };
    let mut seats: Vec<(String, Controller)> = Vec::new();
    match req.get("seats") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let spec = v.as_str().ok_or_else(|| fail("bad_request", format!("seat `{k}`: give a controller")))?;
                let c = Controller::parse(spec, None).map_err(|e| fail("bad_controller", e))?;
                seats.push((k.clone(), c));
            }
        }
        Some(_) => return Err(fail("bad_request", "`seats` must be an object of seat to controller")),
    }
    // The session plays its computer seats' moves itself (the web board).
    let auto = match req.get("auto") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(fail("bad_request", "`auto` must be true or false")),
    };
    let owner = shared.clients.hold(client, Held::Session)?;
    let path = find_game(&name, &shared.config.games_dir)?;
    let id = shared.next_session.fetch_add(1, Ordering::SeqCst);
    let store = shared.store.clone();
    start_session(shared, id, Some(owner), move |config, budget, held| {
        let record = config.records.as_ref().map(|d| d.join(format!("session-{id}.record")));
        let o = Opening { id, store, path, options, seed, seats, auto, record };
        Session::open(o, config, budget, held)
    })
}

/// Starts session `id`'s thread, which makes the session with `make`
/// (given the server's limits, its memory budget and the bytes of it the
/// session holds) and then serves it: the session's summary once it is
/// made. It takes a place and memory first: idle sessions with no seat
/// connected make room, oldest first; never a player's game in play.
fn start_session(
    shared: &Arc<Shared>,
    id: u64,
    owner: Option<Hold>,
    make: impl FnOnce(Config, Arc<Budget>, usize) -> Result<Session, Failure> + Send + 'static,
) -> Reply {
    while shared.sessions().len() >= shared.config.max_sessions {
        if !shared.evict_one() {
            let max = shared.config.max_sessions;
            return Err(fail(
                "too_many_sessions",
                format!("the server keeps {max} sessions at most, and every one is in play; try again later"),
            )
            .retry_after(60));
        }
    }
    let memory = shared.memory_for_session(SESSION_START)?;
    let (tx, rx) = mpsc::channel::<Job>();
    let (ready_tx, ready_rx) = mpsc::channel::<Reply>();
    let shared2 = shared.clone();
    let spawned =
        std::thread::Builder::new().name(format!("tabula-session-{id}")).stack_size(64 << 20).spawn(move || {
            let budget = shared2.memory.clone();
            match make(shared2.config.clone(), budget, memory) {
                Ok(mut s) => {
                    let _ = ready_tx.send(Ok(s.summary(id)));
                    // A session let go (idle, to make room, the server
                    // stopping) stays in play in the store.
                    s.serve(rx);
                    shared2.forget(id);
                }
                Err(f) => {
                    shared2.memory.give(memory);
                    let _ = ready_tx.send(Err(f));
                }
            }
        });
    if let Err(e) = spawned {
        shared.memory.give(memory);
        return Err(fail("server_error", format!("cannot start a session: {e}")));
    }
    // Registered before the reply, so the client can use the id at once.
    let life = Arc::new(Life {
        last_used: Mutex::new(Instant::now()),
        busy: AtomicUsize::new(0),
        attached: AtomicUsize::new(0),
    });
    shared.sessions().insert(id, Entry { tx, life, _owner: owner });
    let ready = ready_rx.recv().unwrap_or_else(|_| Err(fail("server_error", "the session failed to start")));
    if ready.is_err() {
        shared.forget(id);
    }
    ready
}

fn one(key: &str, v: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.into(), v);
    m
}
