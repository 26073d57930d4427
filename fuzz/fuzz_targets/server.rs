//! A server without sockets (its games from the project's folder), shared
//! by every input of a target.

use std::sync::OnceLock;
use std::time::Duration;
use tabula::server::{Config, Server};

pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let games_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../games");
        Server::new(Config {
            games_dir,
            max_sessions: 16,
            idle: Duration::from_secs(30),
            query_steps: 100_000,
            query_time: Duration::from_millis(200),
            max_think: 0.05,
            ..Config::default()
        })
    })
}
