//! `tabula serve`: games and queries over the network. One session model
//! (this module and `session.rs`) and two ways in: newline-delimited JSON
//! over TCP (`tcp.rs`) and HTTP with the web board (`http.rs`). Both take
//! the same requests (a JSON object with an `op`) and give the same replies
//! (see the README for the protocol).
//!
//! Each game session has a thread that owns its engine (an engine is not
//! shared between threads) and takes requests from any connection through
//! a channel; pages that follow a session get an event after every move.
//! A session ends on `close`, or after being idle; the limits (sessions,
//! connections, request size, query steps and time, memory) are in
//! [`Config`]. A bad request gets an error reply and the connection stays
//! usable; a client that goes away mid-request only loses its reply.

mod http;
mod session;
mod tcp;

use crate::ai::Controller;
use crate::game::{GameError, find_game};
use serde_json::{Map, Value, json};
use session::Session;
use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

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
    /// Bytes a session's engine may use for one request's data.
    pub session_memory: usize,
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
}

fn fail(code: &'static str, message: impl Into<String>) -> Failure {
    Failure { code, message: message.into() }
}

impl From<GameError> for Failure {
    fn from(e: GameError) -> Failure {
        let code = match &e {
            GameError::NotFound(_) => "unknown_game",
            GameError::Option(_) => "bad_option",
            GameError::IllegalMove { .. } => "illegal_move",
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
    sessions: Mutex<HashMap<u64, mpsc::Sender<Job>>>,
    next_session: AtomicU64,
    connections: AtomicUsize,
    stop: Arc<AtomicBool>,
}

impl Shared {
    fn session(&self, id: u64) -> Result<mpsc::Sender<Job>, Failure> {
        let tx = self.sessions.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned();
        tx.ok_or_else(|| unknown_session(id))
    }

    fn forget(&self, id: u64) {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }
}

fn unknown_session(id: u64) -> Failure {
    fail("unknown_session", format!("no session {id} (closed, idle too long, or never opened)"))
}

/// Counts a connection (or an HTTP request) while it lives; an error when
/// there are too many.
struct Counted(Arc<Shared>);

impl Counted {
    fn new(shared: &Arc<Shared>) -> Result<Counted, Failure> {
        let n = shared.connections.fetch_add(1, Ordering::SeqCst) + 1;
        let counted = Counted(shared.clone());
        if n > shared.config.max_connections {
            let max = shared.config.max_connections;
            return Err(fail("too_many_connections", format!("the server takes {max} connections at most")));
        }
        Ok(counted)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A server with its listeners; [`Server::run`] serves until the stop
/// flag is set.
pub struct Server {
    shared: Arc<Shared>,
    tcp: Option<TcpListener>,
    http: Option<http::Listener>,
}

impl Server {
    /// A server with no listener yet.
    pub fn new(config: Config) -> Server {
        let shared = Arc::new(Shared {
            config,
            sessions: Mutex::new(HashMap::new()),
            next_session: AtomicU64::new(1),
            connections: AtomicUsize::new(0),
            stop: Arc::new(AtomicBool::new(false)),
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
        let l = http::Listener::bind(addr)?;
        let a = l.addr;
        self.http = Some(l);
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
        self.http.as_ref().map(|l| l.addr)
    }

    /// Answers one request as if it came over the network (the JSON
    /// object of the protocol); `play --web` opens its session this way.
    pub fn request(&self, req: Value) -> Value {
        match req {
            Value::Object(m) => answer(&self.shared, m).unwrap_or_else(|(v, _)| v),
            _ => error_reply(None, &fail("bad_request", "a request is a JSON object")),
        }
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
            std::thread::Builder::new().name("tabula-http".into()).spawn(move || l.run(shared))
        });
        let http = http.transpose()?;
        let result = match &self.tcp {
            Some(l) => tcp::run(l, &self.shared),
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
        self.shared.sessions.lock().unwrap_or_else(|p| p.into_inner()).clear();
        result
    }
}

fn error_reply(id: Option<&Value>, f: &Failure) -> Value {
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("id".into(), id.clone());
    }
    m.insert("ok".into(), json!(false));
    m.insert("error".into(), json!({"code": f.code, "message": f.message}));
    Value::Object(m)
}

/// A request's JSON text read into an object.
fn parse_request(body: &[u8]) -> Result<Map<String, Value>, Failure> {
    let text = std::str::from_utf8(body).map_err(|_| fail("bad_json", "the request is not UTF-8 text"))?;
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(fail("bad_request", "a request is a JSON object")),
        Err(e) => Err(fail("bad_json", format!("not JSON: {e}"))),
    }
}

/// The reply to a request: `ok` and the request's `id`, then what the op
/// gives, or the error.
fn answer(shared: &Arc<Shared>, req: Map<String, Value>) -> Result<Value, (Value, &'static str)> {
    let id = req.get("id").cloned();
    match dispatch(shared, req) {
        Ok(mut m) => {
            let mut out = Map::new();
            if let Some(id) = id {
                out.insert("id".into(), id);
            }
            out.insert("ok".into(), json!(true));
            out.append(&mut m);
            Ok(Value::Object(out))
        }
        Err(f) => Err((error_reply(id.as_ref(), &f), f.code)),
    }
}

const OPS: &str = "new, games, moves, play, ai, hint, status, display, view, undo, query, close";

/// The ops a session answers.
const SESSION_OPS: &[&str] = &["moves", "play", "ai", "hint", "status", "display", "view", "undo", "query", "close"];

fn dispatch(shared: &Arc<Shared>, req: Map<String, Value>) -> Reply {
    let op = match req.get("op") {
        Some(Value::String(op)) => op.clone(),
        Some(_) => return Err(fail("bad_request", "`op` must be a string")),
        None => return Err(fail("bad_request", format!("a request needs an `op`: {OPS}"))),
    };
    match op.as_str() {
        "new" => new_session(shared, req),
        "games" => Ok(one("games", session::games(&shared.config.games_dir))),
        op if SESSION_OPS.contains(&op) => {
            let id = session_id(&req, op)?;
            let tx = shared.session(id)?;
            let (reply_tx, reply_rx) = mpsc::channel();
            tx.send(Job::Request { req, reply: reply_tx }).map_err(|_| unknown_session(id))?;
            let reply = reply_rx.recv().map_err(|_| unknown_session(id))?;
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

/// Subscribes `events` to session `id`'s changes.
fn follow(shared: &Arc<Shared>, id: u64, events: mpsc::Sender<Value>) -> Result<(), Failure> {
    shared.session(id)?.send(Job::Follow(events)).map_err(|_| unknown_session(id))
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

/// Opens a session: its thread loads the game and then serves requests.
fn new_session(shared: &Arc<Shared>, req: Map<String, Value>) -> Reply {
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
    {
        let sessions = shared.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= shared.config.max_sessions {
            return Err(fail("too_many_sessions", format!("the server keeps {} sessions at most", sessions.len())));
        }
    }
    let path = find_game(&name, &shared.config.games_dir)?;
    let id = shared.next_session.fetch_add(1, Ordering::SeqCst);
    let (tx, rx) = mpsc::channel::<Job>();
    let (ready_tx, ready_rx) = mpsc::channel::<Reply>();
    let shared2 = shared.clone();
    let spawned =
        std::thread::Builder::new().name(format!("tabula-session-{id}")).stack_size(64 << 20).spawn(move || {
            let record = shared2.config.records.as_ref().map(|d| d.join(format!("session-{id}.record")));
            match Session::open(&path, &options, seed, seats, auto, record, shared2.config.clone()) {
                Ok(mut s) => {
                    let _ = ready_tx.send(Ok(s.summary(id)));
                    s.serve(rx);
                    shared2.forget(id);
                }
                Err(f) => {
                    let _ = ready_tx.send(Err(f));
                }
            }
        });
    spawned.map_err(|e| fail("server_error", format!("cannot start a session: {e}")))?;
    // Registered before the reply, so the client can use the id at once.
    shared.sessions.lock().unwrap_or_else(|p| p.into_inner()).insert(id, tx);
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
