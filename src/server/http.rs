//! The HTTP transport: the web board's files (compiled into the binary),
//! the same requests as over TCP at `POST /api`, and each session's
//! changes as Server-Sent Events at `GET /api/events?session=N`.
//!
//! HTTP/1.1 with keep-alive, read by `httparse`; each connection is served
//! on a thread of its own, admitted by the same accept loop and limits as
//! the TCP transport. A request's head and body must arrive within the
//! handshake time of its first byte (a client that trickles its request
//! in holds nothing for long); bodies need a `Content-Length`.

use super::guard::Held;
use super::{Attached, Client, Counted, Failure, POLL, Sender, Shared, accept_loop, answer, error_reply, fail, follow};
use super::{parse_request, status_of};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The page and its script and style: the only files ever served.
const FILES: &[(&str, &str, &str)] = &[
    ("/", "text/html; charset=utf-8", include_str!("web/index.html")),
    ("/board.js", "text/javascript; charset=utf-8", include_str!("web/board.js")),
    ("/board.css", "text/css; charset=utf-8", include_str!("web/board.css")),
];

/// A comment line sent this often keeps an event stream open through
/// proxies and finds out when the page has gone.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// How long a kept-alive connection may wait for its next request (less,
/// if the server's idle time is shorter).
const NEXT_REQUEST: Duration = Duration::from_secs(60);

/// Bytes of a request's head (its line and headers) at most.
const MAX_HEAD: usize = 16 * 1024;

/// Takes connections until stopped.
pub(super) fn run(listener: &TcpListener, shared: &Arc<Shared>) -> io::Result<()> {
    accept_loop(listener, shared, "tabula-http", refusal, connection)
}

/// What a connection the server cannot take gets before it is closed.
fn refusal(f: &Failure) -> Vec<u8> {
    let body = error_reply(None, f).to_string();
    Response::json(status_of(f.code), body).retry(f.retry).bytes(false, false)
}

/// A request as read: its method, path, query, the headers that matter,
/// and its body.
struct Request {
    method: String,
    path: String,
    query: String,
    body: Vec<u8>,
    keep_alive: bool,
    forwarded_for: Option<String>,
}

/// A response to write.
struct Response {
    status: u16,
    kind: &'static str,
    body: Vec<u8>,
    cache: &'static str,
    retry: Option<u64>,
}

impl Response {
    fn json(status: u16, body: String) -> Response {
        Response { status, kind: "application/json", body: body.into_bytes(), cache: "no-store", retry: None }
    }

    fn error(f: &Failure) -> Response {
        Response::json(status_of(f.code), error_reply(None, f).to_string()).retry(f.retry)
    }

    fn retry(self, retry: Option<u64>) -> Response {
        Response { retry, ..self }
    }

    /// The response's bytes; only its head for a `HEAD` request.
    fn bytes(&self, keep_alive: bool, head_only: bool) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: {}\r\nConnection: {}\r\n",
            self.status,
            reason(self.status),
            self.kind,
            self.body.len(),
            self.cache,
            if keep_alive { "keep-alive" } else { "close" },
        );
        if let Some(s) = self.retry {
            head.push_str(&format!("Retry-After: {s}\r\n"));
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        if !head_only {
            out.extend_from_slice(&self.body);
        }
        out
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Why no request was read.
enum NoRequest {
    /// The client closed, stayed silent past its time, or the server is
    /// stopping: the connection just ends.
    Gone,
    /// A bad or too slow request: it gets this error, then the connection
    /// is closed.
    Bad(Failure),
}

/// Serves one connection: requests one after another while the client
/// keeps it alive.
fn connection(shared: Arc<Shared>, mut stream: TcpStream, peer: SocketAddr, _counted: Counted) {
    let _ = stream.set_nodelay(true);
    if stream.set_read_timeout(Some(POLL)).is_err() {
        return;
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut wait = shared.config.handshake;
    loop {
        let req = match read_request(&shared, &mut stream, &mut buf, wait) {
            Ok(r) => r,
            Err(NoRequest::Gone) => return,
            Err(NoRequest::Bad(f)) => {
                let _ = stream.write_all(&Response::error(&f).bytes(false, false));
                return close_gently(stream);
            }
        };
        wait = NEXT_REQUEST.min(shared.config.idle);
        let client = client_of(&shared, peer, &req);
        let head_only = req.method == "HEAD";
        if (req.method.as_str(), req.path.as_str()) == ("GET", "/api/events") {
            match shared.clients.request(client) {
                Ok(()) => events(&shared, stream, &req.query, client),
                Err(f) => {
                    let _ = stream.write_all(&Response::error(&f).bytes(false, false));
                }
            }
            return;
        }
        let response = respond(&shared, &req, client);
        let keep = req.keep_alive && !shared.stop.load(Ordering::SeqCst);
        if stream.write_all(&response.bytes(keep, head_only)).is_err() || !keep {
            return;
        }
    }
}

/// Closes a connection whose client may still be sending: first the
/// server's side, then what still comes is read and dropped for a moment,
/// so that the client reads the error before the connection is reset.
fn close_gently(mut stream: TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let until = Instant::now() + Duration::from_millis(200);
    let mut sink = [0u8; 4096];
    while Instant::now() < until {
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// The client a request comes from: its connection's address, or, behind
/// a trusted proxy on this machine, the address the proxy names last in
/// `X-Forwarded-For`.
fn client_of(shared: &Shared, peer: SocketAddr, req: &Request) -> Client {
    if shared.config.trust_proxy && peer.ip().is_loopback() {
        let named = req.forwarded_for.as_deref().and_then(|v| v.rsplit(',').next()?.trim().parse::<IpAddr>().ok());
        if let Some(ip) = named {
            return Client::of(ip);
        }
    }
    Client::of(peer.ip())
}

/// Reads the next request: the client may take `wait` to begin it, then
/// the handshake time to send it whole. Bytes after it stay in `buf`.
fn read_request(
    shared: &Shared,
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    wait: Duration,
) -> Result<Request, NoRequest> {
    let opened = Instant::now();
    let mut begun = (!buf.is_empty()).then(Instant::now);
    let mut chunk = [0u8; 8192];
    // Reads more into `buf`; `Gone` or a timeout error when nothing may come.
    let mut more = |buf: &mut Vec<u8>, begun: &mut Option<Instant>| -> Result<(), NoRequest> {
        loop {
            if shared.stop.load(Ordering::SeqCst) {
                return Err(NoRequest::Gone);
            }
            match *begun {
                Some(t) if t.elapsed() >= shared.config.handshake => {
                    let secs = shared.config.handshake.as_secs_f64();
                    return Err(NoRequest::Bad(fail(
                        "timeout",
                        format!("a request must arrive whole within {secs} s of its start"),
                    )));
                }
                None if opened.elapsed() >= wait => return Err(NoRequest::Gone),
                _ => {}
            }
            match stream.read(&mut chunk) {
                Ok(0) => return Err(NoRequest::Gone),
                Ok(k) => {
                    buf.extend_from_slice(&chunk[..k]);
                    begun.get_or_insert_with(Instant::now);
                    return Ok(());
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(NoRequest::Gone),
            }
        }
    };
    // The head.
    let (head_len, mut req, length) = loop {
        match head(buf, shared.config.max_line)? {
            Some(h) => break h,
            None => more(buf, &mut begun)?,
        }
    };
    // The body.
    while buf.len() < head_len + length {
        more(buf, &mut begun)?;
    }
    req.body = buf[head_len..head_len + length].to_vec();
    buf.drain(..head_len + length);
    Ok(req)
}

/// The head at the start of `buf` when it is all there: its length, the
/// request, and its body's length (at most `max_body`).
fn head(buf: &[u8], max_body: usize) -> Result<Option<(usize, Request, usize)>, NoRequest> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Request::new(&mut headers);
    let (n, req, length) = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(n)) => {
            let (req, length) = request_of(&parsed)?;
            (n, req, length)
        }
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(NoRequest::Bad(fail(
                "header_too_large",
                format!("a request's line and headers may have {MAX_HEAD} bytes at most"),
            )));
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(NoRequest::Bad(fail("bad_request", format!("not an HTTP request: {e}")))),
    };
    if length > max_body {
        return Err(NoRequest::Bad(fail("too_large", format!("a request may have {max_body} bytes at most"))));
    }
    Ok(Some((n, req, length)))
}

/// The answers to the requests in `bytes`, as a connection that sent them
/// at once and closed would get them (event streams aside): what the
/// fuzzer drives.
pub(super) fn exchange(shared: &Arc<Shared>, bytes: &[u8]) -> Vec<u8> {
    let peer = SocketAddr::from(([127, 0, 0, 1], 1));
    let mut out = Vec::new();
    let mut rest = bytes;
    loop {
        match head(rest, shared.config.max_line) {
            Ok(Some((n, mut req, length))) if rest.len() >= n + length => {
                req.body = rest[n..n + length].to_vec();
                rest = &rest[n + length..];
                if req.path == "/api/events" {
                    return out;
                }
                let client = client_of(shared, peer, &req);
                out.extend(respond(shared, &req, client).bytes(req.keep_alive, req.method == "HEAD"));
                if !req.keep_alive {
                    return out;
                }
            }
            Ok(_) | Err(NoRequest::Gone) => return out,
            Err(NoRequest::Bad(f)) => {
                out.extend(Response::error(&f).bytes(false, false));
                return out;
            }
        }
    }
}

/// The response to a request other than an event stream's.
fn respond(shared: &Arc<Shared>, req: &Request, client: Client) -> Response {
    match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/api") => {
            let (v, failure) = answer(shared, parse_request(&req.body), Sender { client, attached: None });
            let status = failure.as_ref().map_or(200, |f| status_of(f.code));
            Response::json(status, v.to_string()).retry(failure.and_then(|f| f.retry))
        }
        ("GET" | "HEAD", path) if path.starts_with("/analyze/") => match shared.clients.request(client) {
            Err(f) => Response::error(&f),
            Ok(()) => analysis(shared, &path["/analyze/".len()..], &req.query, client),
        },
        ("GET" | "HEAD", path) => match shared.clients.request(client) {
            Err(f) => Response::error(&f),
            Ok(()) => match FILES.iter().find(|(p, _, _)| *p == path) {
                Some((_, kind, text)) => {
                    Response { status: 200, kind, body: text.as_bytes().to_vec(), cache: "no-cache", retry: None }
                }
                None => Response::error(&fail("not_found", format!("nothing at {path}: the board is at /"))),
            },
        },
        _ => Response::error(&fail("method_not_allowed", "use GET for the page and POST /api for requests")),
    }
}

/// `GET /analyze/GAME`: the analysis page, played while the client holds
/// one of its places for computer moves being thought about.
fn analysis(shared: &Arc<Shared>, name: &str, query: &str, client: Client) -> Response {
    // Games are named, never given as paths, over the network.
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Response::error(&fail("unknown_game", format!("`{name}` is not a game name")));
    }
    let _thinking = match shared.clients.hold(client, Held::Thinking) {
        Ok(h) => h,
        Err(f) => return Response::error(&f),
    };
    // As many analyses at once as the machine has cores, whoever asks.
    let Some(_running) = super::analyze::Running::start() else {
        return Response::error(
            &fail("server_full", "the server is analysing as many games as it has cores; try again shortly")
                .retry_after(super::analyze::TIME.as_secs()),
        );
    };
    let (status, page) = super::analyze::page(&shared.config.games_dir, name, query, &shared.stop);
    Response { status, kind: "text/html; charset=utf-8", body: page.into_bytes(), cache: "no-store", retry: None }
}

/// The parts of a parsed head the server uses, and the body's length.
fn request_of(parsed: &httparse::Request) -> Result<(Request, usize), NoRequest> {
    let bad = |m: &str| NoRequest::Bad(fail("bad_request", m));
    let url = parsed.path.unwrap_or("/");
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let mut length = 0;
    // HTTP/1.1 keeps the connection unless told otherwise; 1.0 closes it.
    let mut keep_alive = parsed.version == Some(1);
    let mut forwarded_for = None;
    for h in parsed.headers.iter() {
        let value = std::str::from_utf8(h.value).map_err(|_| bad("a header that is not text"))?.trim();
        if h.name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().map_err(|_| bad("a Content-Length that is not a number"))?;
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(NoRequest::Bad(fail("length_required", "send the body with a Content-Length")));
        } else if h.name.eq_ignore_ascii_case("connection") {
            keep_alive = value.eq_ignore_ascii_case("keep-alive")
                || (keep_alive && !value.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")));
        } else if h.name.eq_ignore_ascii_case("x-forwarded-for") {
            forwarded_for = Some(value.to_string());
        }
    }
    let req = Request {
        method: parsed.method.unwrap_or("GET").to_string(),
        path: path.to_string(),
        query: query.to_string(),
        body: Vec::new(),
        keep_alive,
        forwarded_for,
    };
    Ok((req, length))
}

/// `GET /api/events?session=N`: an event stream of the session's
/// changes, until the page goes, the session ends or the server stops.
/// While it lives, a seat of the session counts as connected.
fn events(shared: &Arc<Shared>, mut w: TcpStream, query: &str, client: Client) {
    let refuse = |mut w: TcpStream, f: &Failure| {
        let _ = w.write_all(&Response::error(f).bytes(false, false));
    };
    let id = query.split('&').find_map(|kv| kv.strip_prefix("session=")).and_then(|v| v.parse::<u64>().ok());
    let Some(id) = id else {
        return refuse(w, &fail("bad_request", "events need ?session=N"));
    };
    let _stream = match shared.clients.hold(client, Held::Stream) {
        Ok(h) => h,
        Err(f) => return refuse(w, &f),
    };
    let (tx, rx) = mpsc::channel();
    let life = match follow(shared, id, tx) {
        Ok(life) => life,
        Err(f) => return refuse(w, &f),
    };
    let mut attached = Attached::default();
    attached.attach(id, &life);
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
    if w.write_all(head.as_bytes())
        .and_then(|()| w.write_all(b"retry: 1000\n: hello\n\n"))
        .and_then(|()| w.flush())
        .is_err()
    {
        return;
    }
    // A page that stops reading is dropped rather than waited for.
    let _ = w.set_write_timeout(Some(KEEPALIVE));
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
