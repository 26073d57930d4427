//! `tabula serve`: games and queries over TCP, one JSON object per line
//! each way (see the README for the protocol).
//!
//! Each connection has a thread; each game session has a thread that owns
//! its engine (an engine is not shared between threads) and takes requests
//! from any connection through a channel. A session ends on `close`, or
//! after being idle; the limits (sessions, connections, line length, query
//! steps and time) are in [`Config`]. A bad request gets an error reply and
//! the connection stays usable; a client that goes away mid-request only
//! loses its reply.

use crate::ai::{self, Controller};
use crate::engine::{Limits, QueryError};
use crate::game::{Game, GameError, Outcome, State, find_game};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
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
    /// Bytes a session's engine may use for one request's data.
    pub session_memory: usize,
    /// Bytes of answers and output in one `query` reply at most.
    pub max_reply: usize,
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
            GameError::Load(_) | GameError::Interface(_) | GameError::Rules(_) => "rules_error",
        };
        fail(code, e.to_string())
    }
}

type Reply = Result<Map<String, Value>, Failure>;

struct Job {
    req: Map<String, Value>,
    reply: mpsc::Sender<Reply>,
}

struct Shared {
    config: Config,
    sessions: Mutex<HashMap<u64, mpsc::Sender<Job>>>,
    next_session: AtomicU64,
    connections: AtomicUsize,
    stop: Arc<AtomicBool>,
}

/// A bound server; [`Server::run`] serves until the stop flag is set.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Server {
    pub fn bind(addr: &str, config: Config) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            config,
            sessions: Mutex::new(HashMap::new()),
            next_session: AtomicU64::new(1),
            connections: AtomicUsize::new(0),
            stop: Arc::new(AtomicBool::new(false)),
        });
        Ok(Server { listener, shared })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Setting this flag stops the server: no new connections, open ones
    /// closed after their current request, sessions ended.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.shared.stop.clone()
    }

    /// Accepts connections until stopped; then waits for the connection
    /// threads to finish.
    pub fn run(&self) -> io::Result<()> {
        let mut threads = Vec::new();
        while !self.shared.stop.load(Ordering::SeqCst) {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let shared = self.shared.clone();
                    threads.retain(|h: &std::thread::JoinHandle<()>| !h.is_finished());
                    let spawned = std::thread::Builder::new()
                        .name("tabula-connection".into())
                        .stack_size(16 << 20)
                        .spawn(move || connection(shared, stream));
                    if let Ok(h) = spawned {
                        threads.push(h);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // Dropping the senders ends the session threads.
        self.shared.sessions.lock().unwrap_or_else(|p| p.into_inner()).clear();
        for h in threads {
            let _ = h.join();
        }
        Ok(())
    }
}

fn write_line(stream: &mut TcpStream, v: &Value) -> io::Result<()> {
    let mut text = v.to_string();
    text.push('\n');
    stream.write_all(text.as_bytes())
}

/// Counts a connection while it lives.
struct Counted(Arc<Shared>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::SeqCst);
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

/// Serves one connection: reads lines (at most `max_line` bytes each),
/// answers each with one line.
fn connection(shared: Arc<Shared>, mut stream: TcpStream) {
    let n = shared.connections.fetch_add(1, Ordering::SeqCst) + 1;
    let _counted = Counted(shared.clone());
    let _ = stream.set_nodelay(true);
    if n > shared.config.max_connections {
        let f = fail(
            "too_many_connections",
            format!("the server takes {} connections at most", shared.config.max_connections),
        );
        let _ = write_line(&mut stream, &error_reply(None, &f));
        return;
    }
    if stream.set_read_timeout(Some(POLL)).is_err() {
        return;
    }
    let max_line = shared.config.max_line;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    // Inside a line that was too long: skip to its end.
    let mut skipping = false;
    let mut last = Instant::now();
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let got = match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(k) => k,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                if last.elapsed() >= shared.config.idle {
                    let f = fail("idle", "closed after being idle");
                    let _ = write_line(&mut stream, &error_reply(None, &f));
                    return;
                }
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        last = Instant::now();
        let mut data = &chunk[..got];
        while !data.is_empty() {
            let newline = data.iter().position(|&b| b == b'\n');
            let (part, rest) = match newline {
                Some(i) => (&data[..i], &data[i + 1..]),
                None => (data, &data[data.len()..]),
            };
            data = rest;
            if !skipping {
                buf.extend_from_slice(part);
                if buf.len() > max_line {
                    buf.clear();
                    skipping = true;
                    let f = fail("line_too_long", format!("a request line may have {max_line} bytes at most"));
                    if write_line(&mut stream, &error_reply(None, &f)).is_err() {
                        return;
                    }
                }
            }
            if newline.is_some() {
                if !skipping {
                    let line = std::mem::take(&mut buf);
                    let reply = answer(&shared, &line);
                    if let Some(v) = reply
                        && write_line(&mut stream, &v).is_err()
                    {
                        return;
                    }
                }
                skipping = false;
            }
        }
    }
}

/// The reply to one request line (`None` for a blank line).
fn answer(shared: &Arc<Shared>, line: &[u8]) -> Option<Value> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t.trim(),
        Err(_) => return Some(error_reply(None, &fail("bad_json", "the line is not UTF-8 text"))),
    };
    if text.is_empty() {
        return None;
    }
    let req = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Some(error_reply(None, &fail("bad_request", "a request is a JSON object"))),
        Err(e) => return Some(error_reply(None, &fail("bad_json", format!("not JSON: {e}")))),
    };
    let id = req.get("id").cloned();
    let result = dispatch(shared, req);
    Some(match result {
        Ok(mut m) => {
            let mut out = Map::new();
            if let Some(id) = id {
                out.insert("id".into(), id);
            }
            out.insert("ok".into(), json!(true));
            out.append(&mut m);
            Value::Object(out)
        }
        Err(f) => error_reply(id.as_ref(), &f),
    })
}

const OPS: &str = "new, moves, play, ai, status, display, query, close";

fn dispatch(shared: &Arc<Shared>, req: Map<String, Value>) -> Reply {
    let op = match req.get("op") {
        Some(Value::String(op)) => op.clone(),
        Some(_) => return Err(fail("bad_request", "`op` must be a string")),
        None => return Err(fail("bad_request", format!("a request needs an `op`: {OPS}"))),
    };
    match op.as_str() {
        "new" => new_session(shared, req),
        "moves" | "play" | "ai" | "status" | "display" | "query" | "close" => {
            let id = match req.get("session") {
                Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
                Some(_) => return Err(fail("bad_request", "`session` must be the number `new` replied")),
                None => return Err(fail("bad_request", format!("`{op}` needs a `session`"))),
            };
            let tx = shared.sessions.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned();
            let unknown =
                || fail("unknown_session", format!("no session {id} (closed, idle too long, or never opened)"));
            let tx = tx.ok_or_else(unknown)?;
            let (reply_tx, reply_rx) = mpsc::channel();
            tx.send(Job { req, reply: reply_tx }).map_err(|_| unknown())?;
            let reply = reply_rx.recv().map_err(|_| unknown())?;
            if op == "close" && reply.is_ok() {
                // The slot is free once the client hears so (the session's
                // thread also removes itself as it ends).
                shared.sessions.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            }
            reply
        }
        other => Err(fail("bad_request", format!("unknown op `{other}`: use {OPS}"))),
    }
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
            match Session::open(&path, &options, seed, seats, shared2.config.clone()) {
                Ok(mut s) => {
                    let _ = ready_tx.send(Ok(s.summary(id)));
                    s.serve(rx);
                    shared2.sessions.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
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
        shared.sessions.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }
    ready
}

/// A game being played: owned by its thread.
struct Session {
    game: Game,
    players: Vec<String>,
    seats: Vec<(String, Controller)>,
    state: State,
    moves: Vec<String>,
    rng: ChaCha8Rng,
    config: Config,
}

impl Session {
    fn open(
        path: &std::path::Path,
        options: &[(String, String)],
        seed: u64,
        seats: Vec<(String, Controller)>,
        config: Config,
    ) -> Result<Session, Failure> {
        let (mut game, _) = Game::load(path)?;
        let limits = Limits { max_memory: config.session_memory, ..game.engine().limits().clone() };
        game.engine().set_limits(limits);
        let opts = game.options_term(options)?;
        let players = game.players(&opts)?;
        if let Some((s, _)) = seats.iter().find(|(s, _)| !players.contains(s)) {
            return Err(fail("bad_request", format!("no seat `{s}`; the seats are {}", players.join(", "))));
        }
        let state = game.initial_state(&opts, seed)?;
        Ok(Session { game, players, seats, state, moves: Vec::new(), rng: ChaCha8Rng::seed_from_u64(seed), config })
    }

    fn summary(&mut self, id: u64) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session".into(), json!(id));
        m.insert("game".into(), json!(self.game.name));
        m.insert("title".into(), json!(self.game.title));
        m.insert("players".into(), json!(self.players));
        m.insert(
            "seats".into(),
            json!(self.seats.iter().map(|(s, c)| (s.clone(), json!(c.to_string()))).collect::<Map<_, _>>()),
        );
        m.insert("hidden".into(), json!(self.game.hidden()));
        match self.status() {
            Ok(s) => {
                m.insert("status".into(), Value::Object(s));
            }
            Err(f) => {
                m.insert("status".into(), json!({"error": f.message}));
            }
        }
        m
    }

    fn serve(&mut self, rx: mpsc::Receiver<Job>) {
        loop {
            let job = match rx.recv_timeout(self.config.idle) {
                Ok(j) => j,
                Err(_) => return,
            };
            let closing = job.req.get("op").and_then(Value::as_str) == Some("close");
            let reply = self.handle(&job.req);
            let _ = job.reply.send(reply);
            if closing {
                return;
            }
        }
    }

    fn handle(&mut self, req: &Map<String, Value>) -> Reply {
        match req.get("op").and_then(Value::as_str).unwrap_or("") {
            "moves" => self.moves(),
            "play" => {
                let typed = required(req, "move", "play")?;
                self.play(typed)
            }
            "ai" => self.ai(text_field(req, "controller")?),
            "status" => self.status(),
            "display" => {
                let viewer = text_field(req, "viewer")?.unwrap_or("spectator");
                if viewer != "spectator" && !self.players.iter().any(|p| p == viewer) {
                    return Err(fail(
                        "bad_request",
                        format!("no viewer `{viewer}`: use a seat ({}) or spectator", self.players.join(", ")),
                    ));
                }
                let text = self.game.display(&self.state, viewer)?;
                Ok(one("text", json!(text)))
            }
            "query" => self.query(required(req, "goal", "query")?),
            "close" => Ok(one("closed", json!(true))),
            other => Err(fail("bad_request", format!("unknown op `{other}`"))),
        }
    }

    fn status(&mut self) -> Reply {
        let mut m = Map::new();
        let over = self.game.outcome(&self.state)?;
        let to_move = if over.is_none() { Some(self.game.to_move(&self.state)?) } else { None };
        m.insert("to_move".into(), json!(to_move));
        m.insert("game_over".into(), over.as_ref().map_or(Value::Null, Outcome::to_json));
        let scores = self.game.scores(&self.state, &self.players)?;
        // A score is a number when it is one, else its text.
        let score = |s: String| {
            s.parse::<i64>().map(Value::from).or_else(|_| s.parse::<f64>().map(Value::from)).unwrap_or(Value::String(s))
        };
        m.insert("scores".into(), Value::Object(scores.into_iter().map(|(p, s)| (p, score(s))).collect()));
        m.insert("ply".into(), json!(self.moves.len()));
        m.insert("last_move".into(), json!(self.moves.last()));
        Ok(m)
    }

    fn moves(&mut self) -> Reply {
        if let Some(o) = self.game.outcome(&self.state)? {
            let mut m = one("moves", json!([]));
            m.insert("game_over".into(), o.to_json());
            return Ok(m);
        }
        let to_move = self.game.to_move(&self.state)?;
        let legal = self.game.legal_moves(&self.state)?;
        let mut m = one("to_move", json!(to_move));
        m.insert("moves".into(), json!(legal.iter().map(|l| l.text.clone()).collect::<Vec<_>>()));
        Ok(m)
    }

    fn not_over(&mut self) -> Result<(), Failure> {
        match self.game.outcome(&self.state)? {
            Some(o) => Err(fail("game_over", format!("the game is over ({o})"))),
            None => Ok(()),
        }
    }

    fn play(&mut self, typed: &str) -> Reply {
        self.not_over()?;
        let legal = self.game.legal_moves(&self.state)?;
        let k = self.game.match_move(&legal, typed)?;
        self.apply(&legal[k].text.clone(), legal[k].next.clone())
    }

    fn apply(&mut self, text: &str, next: State) -> Reply {
        let mover = self.game.to_move(&self.state)?;
        self.state = next;
        self.moves.push(text.to_string());
        let mut m = one("move", json!(text));
        m.insert("player".into(), json!(mover));
        m.insert("status".into(), Value::Object(self.status()?));
        Ok(m)
    }

    fn ai(&mut self, spec: Option<&str>) -> Reply {
        self.not_over()?;
        let mover = self.game.to_move(&self.state)?;
        let c = match spec {
            Some(s) => Controller::parse(s, None).map_err(|e| fail("bad_controller", e))?,
            None => self.seats.iter().find(|(s, _)| *s == mover).map(|(_, c)| c.clone()).ok_or_else(|| {
                fail("bad_request", format!("`ai` needs a `controller` (no controller was given for seat {mover})"))
            })?,
        };
        if c.is_human() {
            return Err(fail("bad_controller", "`human` is not a computer player"));
        }
        let legal = self.game.legal_moves(&self.state)?;
        let choice = ai::choose(&mut self.game, &self.players, &self.state, &c, self.rng.r#gen(), 1)?;
        let k = ai::position_of(&mut self.game, &legal, &choice)?;
        let mut m = self.apply(&legal[k].text.clone(), legal[k].next.clone())?;
        m.insert("controller".into(), json!(c.to_string()));
        m.insert("info".into(), json!(choice.info));
        Ok(m)
    }

    /// A goal against the game's rules, within the server's step and time
    /// limits.
    fn query(&mut self, goal: &str) -> Reply {
        let engine = self.game.engine();
        let saved = engine.limits().clone();
        engine.set_limits(Limits {
            max_steps: Some(self.config.query_steps),
            timeout: Some(self.config.query_time),
            ..saved.clone()
        });
        let result = run_query(engine, goal, self.config.max_answers, self.config.max_reply);
        self.game.engine().set_limits(saved);
        result
    }
}

fn one(key: &str, v: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.into(), v);
    m
}

fn run_query(engine: &mut crate::engine::Engine, goal: &str, max: usize, max_reply: usize) -> Reply {
    let goal = goal.trim().trim_end_matches('.').trim();
    let mut q = engine.query(goal).map_err(|e| match e {
        QueryError::Syntax(d) => fail("query_syntax", crate::syntax::render("goal", goal, std::slice::from_ref(&d))),
        e => fail("query_error", e.to_string()),
    })?;
    let mut answers = Vec::new();
    let mut output = String::new();
    let mut more = false;
    let mut size = 0;
    let too_big = || {
        fail(
            "limit",
            format!(
                "the reply would hold more than {max_reply} bytes of answers and output (the server's --max-reply)"
            ),
        )
    };
    loop {
        if answers.len() >= max {
            more = !q.is_done();
            break;
        }
        match q.next() {
            Some(Ok(a)) => {
                size += a.output.len() + a.bindings.iter().map(|b| b.name.len() + b.text.len()).sum::<usize>();
                if size > max_reply {
                    return Err(too_big());
                }
                output.push_str(&a.output);
                let b: Map<String, Value> = a.bindings.iter().map(|b| (b.name.clone(), json!(b.text))).collect();
                answers.push(Value::Object(b));
                if q.is_done() {
                    break;
                }
            }
            None => break,
            Some(Err(QueryError::Limit { message, .. })) => return Err(fail("limit", message)),
            Some(Err(QueryError::Halt(_))) => {
                return Err(fail("query_error", "halt/0 is not allowed in a served query"));
            }
            Some(Err(e)) => return Err(fail("query_error", e.to_string())),
        }
    }
    output.push_str(&q.take_output());
    if size + output.len() > max_reply {
        return Err(too_big());
    }
    let mut m = one("result", json!(if answers.is_empty() { "false" } else { "true" }));
    m.insert("answers".into(), Value::Array(answers));
    m.insert("more".into(), json!(more));
    if !output.is_empty() {
        m.insert("output".into(), json!(output));
    }
    Ok(m)
}
