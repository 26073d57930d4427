//! `tabula serve`: the network server (protocol in the README).

use super::CliError;
use crate::server::{Config, Server};
use std::path::PathBuf;
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
    /// Memory one request of a session may use for its data (e.g. 256M,
    /// 1G): past it the request gets a `limit` error and the session
    /// plays on.
    #[arg(long, default_value = "256M", value_parser = super::parse_size)]
    pub session_memory: usize,
    /// Bytes of answers and output one `query` reply may hold.
    #[arg(long, default_value = "1M", value_parser = super::parse_size)]
    pub max_reply: usize,
    /// Keep each session's game record in DIR (session-N.record, replaced
    /// atomically after every move; `tabula play --resume` takes it).
    #[arg(long, value_name = "DIR")]
    pub records: Option<PathBuf>,
}

fn seconds(name: &str, s: f64) -> Result<Duration, CliError> {
    if s.is_finite() && s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(CliError(format!("--{name} takes a positive number of seconds, not {s}")))
    }
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
        max_reply: a.max_reply,
        records: a.records.clone(),
    };
    if let Some(d) = &a.records {
        std::fs::create_dir_all(d).map_err(|e| CliError(format!("cannot use {} for records: {e}", d.display())))?;
    }
    let mut server = Server::new(config);
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
    let stop = server.stop_flag();
    ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
        .map_err(|e| CliError(format!("cannot handle Ctrl-C: {e}")))?;
    eprintln!("tabula serve: Ctrl-C stops");
    server.run().map_err(|e| CliError(format!("server: {e}")))?;
    eprintln!("tabula serve: stopped");
    Ok(0)
}
