//! `tabula serve`: the network server (protocol in the README).

use super::CliError;
use crate::server::{Config, Server};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR")]
    pub listen: String,
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
}

fn seconds(name: &str, s: f64) -> Result<Duration, CliError> {
    if s.is_finite() && s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(CliError(format!("--{name} takes a positive number of seconds, not {s}")))
    }
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
    };
    let server =
        Server::bind(&a.listen, config).map_err(|e| CliError(format!("cannot listen on {}: {e}", a.listen)))?;
    let stop = server.stop_flag();
    ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
        .map_err(|e| CliError(format!("cannot handle Ctrl-C: {e}")))?;
    let addr = server.local_addr().map_err(|e| CliError(e.to_string()))?;
    eprintln!("tabula serve: listening on {addr} (newline-delimited JSON; Ctrl-C stops)");
    server.run().map_err(|e| CliError(format!("server: {e}")))?;
    eprintln!("tabula serve: stopped");
    Ok(0)
}
