//! `tabula ggp`: a General Game Playing player over HTTP (the GGP
//! protocol), one match at a time.

use super::CliError;
use crate::ggp::Player;
use std::io::{Read, Write};
use std::net::ToSocketAddrs;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct GgpArgs {
    /// The address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:9147", value_name = "ADDR")]
    pub listen: String,
    /// The computer player, as for `--seat`: mcts, mcts:500, minimax:2,
    /// greedy, random... It moves within the play clock.
    #[arg(long, default_value = "mcts", value_name = "CONTROLLER")]
    pub controller: String,
    /// Seed of the computer player's random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Listen on an address other than loopback.
    #[arg(long)]
    pub public: bool,
}

/// Largest message accepted (a game's rules are in the START message).
const MAX_BODY: u64 = 16 << 20;

pub fn run(a: GgpArgs) -> Result<i32, CliError> {
    let addr = a
        .listen
        .to_socket_addrs()
        .map_err(|e| CliError(format!("--listen {}: {e}", a.listen)))?
        .next()
        .ok_or_else(|| CliError(format!("--listen {}: no address", a.listen)))?;
    super::serve::exposed(addr, a.public)?;
    let mut player = Player::new(&a.controller, a.seed).map_err(CliError)?;
    let server = tiny_http::Server::http(addr).map_err(|e| CliError(format!("cannot listen on {addr}: {e}")))?;
    let bound = server.server_addr().to_ip().map_or(addr.to_string(), |a| a.to_string());
    println!("tabula ggp: listening on http://{bound} (controller {})", a.controller);
    let _ = std::io::stdout().flush();
    for mut request in server.incoming_requests() {
        let received = Instant::now();
        let (status, text) = if *request.method() != tiny_http::Method::Post {
            (405, "(error the GGP protocol posts its messages)".to_string())
        } else {
            let mut body = Vec::new();
            match request.as_reader().take(MAX_BODY + 1).read_to_end(&mut body) {
                Ok(n) if n as u64 > MAX_BODY => (413, "(error message too large)".to_string()),
                Err(e) => (400, format!("(error {e})")),
                Ok(_) => match String::from_utf8(body) {
                    Err(_) => (400, "(error not UTF-8 text)".to_string()),
                    Ok(body) => {
                        let ans = player.handle(&body, received);
                        for line in player.log.drain(..) {
                            eprintln!("{line}");
                        }
                        (if ans.malformed { 400 } else { 200 }, ans.text)
                    }
                },
            }
        };
        let header = |k: &str, v: &str| tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).expect("a header");
        let response = tiny_http::Response::from_string(text)
            .with_status_code(status)
            .with_header(header("Content-Type", "text/acl"))
            .with_header(header("Access-Control-Allow-Origin", "*"));
        let _ = request.respond(response);
    }
    Ok(0)
}
