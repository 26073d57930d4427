//! `tabula serve`: the network server (protocol in the README).

use super::CliError;
use crate::server::{ClientLimits, Config, Server, Sqlite, Store};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Take newline-delimited JSON over TCP on this address (the default,
    /// 127.0.0.1:7878, unless --http is given alone).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Serve the web board and its API over HTTP on this address, e.g.
    /// 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Allow listening on an address other than loopback (anyone who can
    /// reach it can play and query).
    #[arg(long)]
    pub public: bool,
    /// The folder of the games (default: $TABULA_GAMES, ./games, or the crate's games/).
    #[arg(long, visible_alias = "games-dir", value_name = "DIR")]
    pub games: Option<PathBuf>,
    /// Game sessions kept at most.
    #[arg(long, default_value_t = 256)]
    pub max_sessions: usize,
    /// Connections at once at most.
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Bytes in a request line at most.
    #[arg(long, default_value_t = 65536)]
    pub max_line: usize,
    /// Seconds before an idle connection or session is closed.
    #[arg(long, default_value_t = 600.0)]
    pub idle: f64,
    /// Inference steps a `query` may take.
    #[arg(long, default_value_t = 10_000_000)]
    pub query_steps: u64,
    /// Seconds a `query` may take.
    #[arg(long, default_value_t = 5.0)]
    pub query_seconds: f64,
    /// Memory one session may hold (e.g. 256M, 1G): its database, its
    /// engine's stacks, its history and one request's data. Past it the
    /// request gets a `limit` error and the session plays on.
    #[arg(long, default_value = "256M", value_parser = super::parse_size)]
    pub session_memory: usize,
    /// Memory all sessions together may hold (default: half the
    /// machine's). A new session that would pass it closes idle ones or is
    /// refused; a request that would gets a `limit` error.
    #[arg(long, value_parser = super::parse_size)]
    pub max_memory: Option<usize>,
    /// Game sessions one client (an IP address; IPv6 by /64) may have
    /// open.
    #[arg(long, default_value_t = ClientLimits::default().sessions)]
    pub per_client_sessions: usize,
    /// Connections one client may have open.
    #[arg(long, default_value_t = ClientLimits::default().connections)]
    pub per_client_connections: usize,
    /// Event streams (web pages following a game) one client may have
    /// open.
    #[arg(long, default_value_t = ClientLimits::default().streams)]
    pub per_client_streams: usize,
    /// Computer moves (`ai`, `hint`) one client may have in progress.
    #[arg(long, default_value_t = ClientLimits::default().thinking)]
    pub per_client_thinking: usize,
    /// Requests per second one client may send on average (in bursts of
    /// twice as many).
    #[arg(long, default_value_t = ClientLimits::default().rate)]
    pub per_client_rate: f64,
    /// Seconds a connection has to send its first request, and any
    /// request once begun to arrive whole.
    #[arg(long, default_value_t = 10.0)]
    pub handshake: f64,
    /// Seconds a computer move may take at most, whatever a request asks.
    #[arg(long, default_value_t = 10.0)]
    pub max_think: f64,
    /// Behind a reverse proxy on this machine: take each HTTP client's
    /// address from the `X-Forwarded-For` the proxy adds.
    #[arg(long)]
    pub trust_proxy: bool,
    /// Bytes of answers and output one `query` reply may hold.
    #[arg(long, default_value = "1M", value_parser = super::parse_size)]
    pub max_reply: usize,
    /// Keep each session's game record in DIR (session-N.record, replaced
    /// atomically after every move; `tabula play --resume` takes it).
    #[arg(long, value_name = "DIR")]
    pub records: Option<PathBuf>,
    /// Keep the games in this SQLite database, so that they survive a
    /// crash or a restart: a move is acknowledged once it is stored, and a
    /// server started on the database brings back every game in play
    /// (default: tabula.db in the --records folder, else
    /// $XDG_STATE_HOME/tabula/serve.db, i.e. ~/.local/state/tabula/serve.db).
    #[arg(long, value_name = "PATH", conflicts_with = "no_db")]
    pub db: Option<PathBuf>,
    /// Keep the games in memory only: they end with the process.
    #[arg(long)]
    pub no_db: bool,
    /// Write every game of the database as a record (session-N.record) in
    /// DIR, then exit.
    #[arg(long, value_name = "DIR", conflicts_with = "no_db")]
    pub export: Option<PathBuf>,
}

/// Where the server keeps its games unless told: beside the records, else
/// in the user's state folder.
fn default_db(records: Option<&std::path::Path>) -> PathBuf {
    if let Some(d) = records {
        return d.join("tabula.db");
    }
    let state = std::env::var_os("XDG_STATE_HOME").filter(|s| !s.is_empty()).map(PathBuf::from);
    let home = std::env::var_os("HOME").filter(|s| !s.is_empty()).map(|h| PathBuf::from(h).join(".local/state"));
    match state.or(home) {
        Some(d) => d.join("tabula").join("serve.db"),
        None => PathBuf::from("tabula-serve.db"),
    }
}

/// Writes every session of `store` as a record in `dir`: how many.
fn export(store: &Sqlite, dir: &std::path::Path) -> Result<usize, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError(format!("cannot make {}: {e}", dir.display())))?;
    let ids = store.sessions().map_err(|e| CliError(e.to_string()))?;
    for &id in &ids {
        let Some(s) = store.load(id).map_err(|e| CliError(e.to_string()))? else { continue };
        let path = dir.join(format!("session-{id}.record"));
        crate::server::stored_record(&s)
            .save(&path)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(ids.len())
}

fn seconds(name: &str, s: f64) -> Result<Duration, CliError> {
    if s.is_finite() && s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(CliError(format!("--{name} takes a positive number of seconds, not {s}")))
    }
}

fn positive(name: &str, x: f64) -> Result<f64, CliError> {
    if x.is_finite() && x > 0.0 { Ok(x) } else { Err(CliError(format!("--{name} takes a positive number, not {x}"))) }
}

/// Refuses an address other than loopback without `--public`, and warns
/// with it.
pub(super) fn exposed(addr: std::net::SocketAddr, public: bool) -> Result<(), CliError> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !public {
        return Err(CliError(format!(
            "{addr} is reachable from other machines, and anyone who reaches it can play and query: add --public to listen there anyway"
        )));
    }
    eprintln!("tabula serve: warning: listening on {addr}: anyone who can reach it can play and query");
    Ok(())
}

pub fn run(a: ServeArgs) -> Result<i32, CliError> {
    let config = Config {
        games_dir: crate::game::games_dir(a.games.as_deref()),
        max_sessions: a.max_sessions,
        max_connections: a.max_connections,
        max_line: a.max_line.max(16),
        idle: seconds("idle", a.idle)?,
        query_steps: a.query_steps,
        query_time: seconds("query-seconds", a.query_seconds)?,
        max_answers: 100,
        session_memory: a.session_memory,
        max_memory: a.max_memory.unwrap_or_else(|| Config::default().max_memory),
        per_client: ClientLimits {
            connections: a.per_client_connections,
            sessions: a.per_client_sessions,
            streams: a.per_client_streams,
            thinking: a.per_client_thinking,
            rate: positive("per-client-rate", a.per_client_rate)?,
            burst: 2.0 * a.per_client_rate,
        },
        handshake: seconds("handshake", a.handshake)?,
        max_think: seconds("max-think", a.max_think)?.as_secs_f64(),
        trust_proxy: a.trust_proxy,
        max_reply: a.max_reply,
        records: a.records.clone(),
    };
    // Room for one session's requests stays free beside the sessions, so
    // the budget must hold a session and that.
    let least = config.session_memory + (8 << 20);
    if config.max_memory < least {
        return Err(CliError(format!(
            "--max-memory ({} MB) must hold at least one session: --session-memory ({} MB) and 8 MB more",
            config.max_memory >> 20,
            config.session_memory >> 20
        )));
    }
    if let Some(d) = &a.records {
        std::fs::create_dir_all(d).map_err(|e| CliError(format!("cannot use {} for records: {e}", d.display())))?;
    }
    let db = (!a.no_db).then(|| a.db.clone().unwrap_or_else(|| default_db(a.records.as_deref())));
    let store = db.as_ref().map(|p| Sqlite::open(p)).transpose().map_err(|e| CliError(e.to_string()))?;
    if let Some(dir) = &a.export {
        let store = store.as_ref().expect("--export conflicts with --no-db");
        let n = export(store, dir)?;
        eprintln!("tabula serve: {n} games of {} written to {}", store.path().display(), dir.display());
        return Ok(0);
    }
    let (mut server, restored) = match store {
        Some(store) => {
            let store: Arc<dyn Store> = Arc::new(store);
            let (server, restored) = Server::with_store(config, store).map_err(|e| CliError(e.to_string()))?;
            (server, Some(restored))
        }
        None => (Server::new(config), None),
    };
    let tcp = match (&a.listen, &a.http) {
        (Some(l), _) => Some(l.clone()),
        (None, None) => Some("127.0.0.1:7878".to_string()),
        (None, Some(_)) => None,
    };
    if let Some(l) = &tcp {
        let addr = server.listen_tcp(l).map_err(|e| CliError(format!("cannot listen on {l}: {e}")))?;
        exposed(addr, a.public)?;
        eprintln!("tabula serve: listening on {addr} (newline-delimited JSON)");
    }
    if let Some(h) = &a.http {
        let addr = server.listen_http(h).map_err(|e| CliError(format!("cannot listen on {h}: {e}")))?;
        exposed(addr, a.public)?;
        eprintln!("tabula serve: open http://{addr}/");
    }
    match (&db, restored) {
        (Some(db), Some(r)) => {
            let n = r.sessions.len();
            let games = if n == 1 { "game" } else { "games" };
            eprintln!("tabula serve: keeping the games in {}; {n} {games} in play brought back", db.display());
            for (id, why) in r.failed {
                eprintln!("tabula serve: warning: session {id} not brought back: {why}");
            }
        }
        _ => eprintln!("tabula serve: keeping the games in memory only (--no-db): they end with the server"),
    }
    let stop = server.stop_flag();
    ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
        .map_err(|e| CliError(format!("cannot handle Ctrl-C: {e}")))?;
    eprintln!("tabula serve: Ctrl-C stops");
    server.run().map_err(|e| CliError(format!("server: {e}")))?;
    eprintln!("tabula serve: stopped");
    Ok(0)
}
