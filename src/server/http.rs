//! The HTTP transport: the web board's files (compiled into the binary),
//! the same requests as over TCP at `POST /api`, and each session's
//! changes as Server-Sent Events at `GET /api/events?session=N`.

use super::{Counted, Failure, POLL, Shared, answer, error_reply, fail, follow, parse_request};
use serde_json::Value;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tiny_http::{Header, Method, Request, Response, StatusCode};

/// The page and its script and style: the only files ever served.
const FILES: &[(&str, &str, &str)] = &[
    ("/", "text/html; charset=utf-8", include_str!("web/index.html")),
    ("/board.js", "text/javascript; charset=utf-8", include_str!("web/board.js")),
    ("/board.css", "text/css; charset=utf-8", include_str!("web/board.css")),
];

/// A comment line sent this often keeps an event stream open through
/// proxies and finds out when the page has gone.
const KEEPALIVE: Duration = Duration::from_secs(15);

pub(super) struct Listener {
    server: tiny_http::Server,
    pub addr: SocketAddr,
}

impl Listener {
    pub fn bind(addr: &str) -> io::Result<Listener> {
        let server = tiny_http::Server::http(addr).map_err(io::Error::other)?;
        let addr = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not an IP address"))?;
        Ok(Listener { server, addr })
    }

    /// Takes requests until stopped, each on a thread of its own.
    pub fn run(self, shared: Arc<Shared>) {
        let mut threads = Vec::new();
        while !shared.stop.load(Ordering::SeqCst) {
            let req = match self.server.recv_timeout(POLL) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(_) => break,
            };
            threads.retain(|h: &std::thread::JoinHandle<()>| !h.is_finished());
            let shared = shared.clone();
            let spawned = std::thread::Builder::new().name("tabula-http".into()).spawn(move || handle(&shared, req));
            if let Ok(h) = spawned {
                threads.push(h);
            }
        }
        self.server.unblock();
        for h in threads {
            let _ = h.join();
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

/// The HTTP status of an error code.
fn status_of(code: &str) -> u16 {
    match code {
        "unknown_session" | "unknown_game" | "not_found" => 404,
        "forbidden" => 403,
        "method_not_allowed" => 405,
        "too_large" | "line_too_long" => 413,
        "too_many_sessions" | "too_many_connections" => 503,
        "rules_error" | "server_error" => 500,
        _ => 400,
    }
}

fn json_response(status: u16, v: &Value) -> Response<io::Cursor<Vec<u8>>> {
    Response::from_data(v.to_string().into_bytes())
        .with_status_code(StatusCode(status))
        .with_header(header("Content-Type", "application/json"))
        .with_header(header("Cache-Control", "no-store"))
}

fn error_response(f: &Failure) -> Response<io::Cursor<Vec<u8>>> {
    json_response(status_of(f.code), &error_reply(None, f))
}

fn handle(shared: &Arc<Shared>, mut req: Request) {
    let _counted = match Counted::new(shared) {
        Ok(c) => c,
        Err(f) => {
            let _ = req.respond(error_response(&f));
            return;
        }
    };
    let url = req.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let response = match (req.method(), path) {
        (Method::Post, "/api") => match read_body(&mut req, shared.config.max_line) {
            Ok(body) => match parse_request(&body).map(|r| answer(shared, r)) {
                Ok(Ok(v)) => json_response(200, &v),
                Ok(Err((v, code))) => json_response(status_of(code), &v),
                Err(f) => error_response(&f),
            },
            Err(f) => error_response(&f),
        },
        (Method::Get, "/api/events") => {
            events(shared, req, query);
            return;
        }
        (Method::Get | Method::Head, _) => match FILES.iter().find(|(p, _, _)| *p == path) {
            Some((_, kind, text)) => Response::from_data(text.as_bytes().to_vec())
                .with_header(header("Content-Type", kind))
                .with_header(header("Cache-Control", "no-cache")),
            None => error_response(&fail("not_found", format!("nothing at {path}: the board is at /"))),
        },
        _ => error_response(&fail("method_not_allowed", "use GET for the page and POST /api for requests")),
    };
    let _ = req.respond(response);
}

/// A request's body, at most `max` bytes.
fn read_body(req: &mut Request, max: usize) -> Result<Vec<u8>, Failure> {
    let too_large = || fail("too_large", format!("a request may have {max} bytes at most"));
    if req.body_length().is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    req.as_reader()
        .take(max as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| fail("bad_request", format!("cannot read the request: {e}")))?;
    if body.len() > max {
        return Err(too_large());
    }
    Ok(body)
}

/// `GET /api/events?session=N`: an event stream of the session's
/// changes, until the page goes, the session ends or the server stops.
fn events(shared: &Arc<Shared>, req: Request, query: &str) {
    let id = query.split('&').find_map(|kv| kv.strip_prefix("session=")).and_then(|v| v.parse::<u64>().ok());
    let Some(id) = id else {
        let _ = req.respond(error_response(&fail("bad_request", "events need ?session=N")));
        return;
    };
    let (tx, rx) = mpsc::channel();
    if let Err(f) = follow(shared, id, tx) {
        let _ = req.respond(error_response(&f));
        return;
    }
    // tiny_http buffers a streamed body: the stream is written by hand.
    let mut w = req.into_writer();
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
    if w.write_all(head.as_bytes()).and_then(|()| w.write_all(b": hello\n\n")).and_then(|()| w.flush()).is_err() {
        return;
    }
    let mut quiet = Instant::now();
    while !shared.stop.load(Ordering::SeqCst) {
        let sent = match rx.recv_timeout(POLL) {
            Ok(event) => w.write_all(format!("data: {event}\n\n").as_bytes()),
            Err(mpsc::RecvTimeoutError::Timeout) if quiet.elapsed() >= KEEPALIVE => w.write_all(b": keepalive\n\n"),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        };
        if sent.and_then(|()| w.flush()).is_err() {
            return;
        }
        quiet = Instant::now();
    }
}
