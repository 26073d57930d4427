//! Helpers of the web tests: a server with an HTTP listener, a minimal
//! HTTP/1.1 client, and a WebDriver client for the browser tests.

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tabula::server::{Config, Server};

/// A server running on a thread of the test; stopped when dropped.
pub struct Running {
    pub addr: SocketAddr,
    pub stop: Arc<AtomicBool>,
    pub thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn start() -> Running {
    start_with(Config::default())
}

/// A server with the web board (HTTP) and `config`, its games folder set
/// to the crate's.
pub fn start_with(config: Config) -> Running {
    let mut server = Server::new(games(config));
    let addr = server.listen_http("127.0.0.1:0").unwrap();
    running(server, addr)
}

/// A server taking JSON lines over TCP, with `config`, its games folder
/// set to the crate's.
pub fn start_tcp(config: Config) -> Running {
    let mut server = Server::new(games(config));
    let addr = server.listen_tcp("127.0.0.1:0").unwrap();
    running(server, addr)
}

fn games(config: Config) -> Config {
    Config { games_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("games"), ..config }
}

fn running(server: Server, addr: SocketAddr) -> Running {
    let stop = server.stop_flag();
    let thread = std::thread::spawn(move || server.run().unwrap());
    Running { addr, stop, thread: Some(thread) }
}

/// A client of the JSON-lines protocol.
pub struct LineClient {
    pub reader: std::io::BufReader<TcpStream>,
    pub writer: TcpStream,
}

impl LineClient {
    pub fn connect(addr: SocketAddr) -> LineClient {
        LineClient::of(TcpStream::connect(addr).unwrap())
    }

    /// A client connecting from loopback address 127.0.0.`n`: to the
    /// server, a client of its own.
    pub fn connect_from(n: u8, addr: SocketAddr) -> LineClient {
        LineClient::of(connect_from(n, addr))
    }

    fn of(s: TcpStream) -> LineClient {
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        s.set_nodelay(true).unwrap();
        LineClient { reader: std::io::BufReader::new(s.try_clone().unwrap()), writer: s }
    }

    /// Sends `line` (any bytes) and a newline; the reply.
    pub fn send_raw(&mut self, line: impl AsRef<[u8]>) -> Value {
        self.writer.write_all(line.as_ref()).unwrap();
        self.writer.write_all(b"\n").unwrap();
        self.read()
    }

    pub fn read(&mut self) -> Value {
        let mut reply = String::new();
        std::io::BufRead::read_line(&mut self.reader, &mut reply).unwrap();
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {reply:?}"))
    }

    pub fn send(&mut self, req: Value) -> Value {
        self.send_raw(req.to_string())
    }
}

/// A connection to `addr` from loopback address 127.0.0.`n` (the server
/// takes each address for a client of its own).
pub fn connect_from(n: u8, addr: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let from = SocketAddr::from(([127, 0, 0, n], 0));
    socket.bind(&from.into()).unwrap();
    socket.connect(&addr.into()).unwrap();
    socket.into()
}

/// One HTTP/1.1 exchange on a fresh connection: the status and the body
/// (read to its `Content-Length`, its last chunk, or the connection's end).
pub fn http(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    try_http(addr, method, path, body).unwrap_or_else(|text| panic!("no HTTP reply: {text:?}"))
}

/// `http`, or what came back when it was not an HTTP reply (a connection
/// closed at once, say).
pub fn try_http(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> Result<(u16, String), String> {
    exchange(TcpStream::connect(addr).unwrap(), addr, method, path, body)
}

/// One HTTP/1.1 exchange on connection `s`.
pub fn exchange(
    mut s: TcpStream,
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<(u16, String), String> {
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&raw);
        if let Some((head, rest)) = text.split_once("\r\n\r\n") {
            let lower = head.to_ascii_lowercase();
            let length = lower
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse::<usize>().ok());
            let done = match length {
                Some(n) => rest.len() >= n,
                None => lower.contains("transfer-encoding: chunked") && rest.ends_with("0\r\n\r\n"),
            };
            if done {
                break;
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => raw.extend_from_slice(&buf[..k]),
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return Err(text);
    };
    let Some(status) = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()) else {
        return Err(text);
    };
    // Bodies of unknown length come chunked.
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { unchunk(body) } else { body.into() };
    Ok((status, body))
}

pub fn unchunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
    out
}

pub fn api(addr: SocketAddr, req: Value) -> (u16, Value) {
    let (status, body) = http(addr, "POST", "/api", req.to_string().as_bytes());
    (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}")))
}

pub fn ok(addr: SocketAddr, req: Value) -> Value {
    let (status, v) = api(addr, req.clone());
    assert_eq!((status, &v["ok"]), (200, &json!(true)), "{req} -> {v}");
    v
}

/// `api` from loopback address 127.0.0.`n`: a client of its own.
pub fn api_from(n: u8, addr: SocketAddr, req: Value) -> (u16, Value) {
    let (status, body) = exchange(connect_from(n, addr), addr, "POST", "/api", req.to_string().as_bytes())
        .unwrap_or_else(|text| panic!("no HTTP reply: {text:?}"));
    (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}")))
}

/// `ok` from loopback address 127.0.0.`n`.
pub fn ok_from(n: u8, addr: SocketAddr, req: Value) -> Value {
    let (status, v) = api_from(n, addr, req.clone());
    assert_eq!((status, &v["ok"]), (200, &json!(true)), "{req} -> {v}");
    v
}

/// A headless Chromium driven through chromedriver (WebDriver). `None`
/// when chromedriver is not installed, except under `CI=true`, where the
/// browser tests must run.
pub struct Browser {
    driver: std::process::Child,
    addr: SocketAddr,
    session: String,
}

/// The WebDriver name of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    pub fn start() -> Option<Browser> {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        let found =
            std::process::Command::new("chromedriver").arg("--version").output().is_ok_and(|o| o.status.success());
        if !found {
            assert!(
                !ci,
                "chromedriver is not installed, and CI=true requires the browser tests (apt-get install chromium chromium-driver)"
            );
            eprintln!("chromedriver not installed: browser test skipped (CI=true makes this a failure)");
            return None;
        }
        // chromedriver picks a free port itself and says which (a port
        // picked here and freed could be taken by another test first).
        let mut driver = std::process::Command::new("chromedriver")
            .arg("--port=0")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let out = driver.stdout.take().expect("chromedriver's output");
        let (tx, rx) = std::sync::mpsc::channel();
        // Its output is read to the end, so that it never blocks writing.
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(out)).map_while(Result::ok) {
                if let Some(p) = line.split("started successfully on port ").nth(1) {
                    let _ = tx.send(p.trim_end_matches('.').parse::<u16>().ok());
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(30))
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("chromedriver did not say its port within 30 s"));
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut b = Browser { driver, addr, session: String::new() };
        let args =
            ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"];
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {"args": args}}}});
        // A loaded machine sometimes sees the first connection closed with
        // no reply: the session is asked for again, a few times.
        let mut tries = 0;
        let (status, text) = loop {
            match try_http(addr, "POST", "/session", caps.to_string().as_bytes()) {
                Ok(reply) => break reply,
                Err(text) if tries < 5 => {
                    eprintln!("WebDriver: no reply to a new session ({text:?}), asking again");
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(text) => panic!("WebDriver: no reply to a new session after {tries} tries: {text:?}"),
            }
        };
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("WebDriver /session: {e}: {text}"));
        assert_eq!(status, 200, "WebDriver POST /session: {v}");
        let v = if v.get("sessionId").is_some() { v } else { v["value"].clone() };
        b.session = v["sessionId"].as_str().unwrap_or_else(|| panic!("no WebDriver session: {v}")).to_string();
        Some(b)
    }

    /// One WebDriver command: its `value`.
    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let body = if method == "GET" || method == "DELETE" { String::new() } else { body.to_string() };
        let (status, text) = http(self.addr, method, path, body.as_bytes());
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("WebDriver {path}: {e}: {text}"));
        assert_eq!(status, 200, "WebDriver {method} {path}: {v}");
        if v.get("sessionId").is_some() { v } else { v["value"].clone() }
    }

    fn cmd(&self, method: &str, what: &str, body: Value) -> Value {
        self.call(method, &format!("/session/{}{what}", self.session), body)
    }

    pub fn go(&self, url: &str) {
        self.cmd("POST", "/url", json!({ "url": url }));
    }

    /// Runs a script in the page: what it returns.
    pub fn script(&self, js: &str) -> Value {
        self.cmd("POST", "/execute/sync", json!({"script": js, "args": []}))
    }

    /// Waits until `js` returns something other than false or null.
    pub fn wait(&self, js: &str, what: &str) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let v = self.script(js);
            if !v.is_null() && v != json!(false) {
                return v;
            }
            assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks the element a CSS selector finds (found again if the page
    /// redraws it in between).
    pub fn click(&self, css: &str) {
        for _ in 0..40 {
            let e = self.cmd("POST", "/element", json!({"using": "css selector", "value": css}));
            let id = e[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}: {e}")).to_string();
            let path = format!("/session/{}/element/{id}/click", self.session);
            let (status, text) = http(self.addr, "POST", &path, b"{}");
            if status == 200 {
                return;
            }
            assert!(text.contains("stale element"), "WebDriver click on {css}: {text}");
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{css} kept being redrawn");
    }

    /// The page's HTML as it is now.
    pub fn source(&self) -> String {
        self.cmd("GET", "/source", json!({})).as_str().unwrap_or_default().to_string()
    }

    /// Saves a screenshot of the window as a PNG file.
    pub fn screenshot(&self, path: &Path) {
        use base64::Engine as _;
        let v = self.cmd("GET", "/screenshot", json!({}));
        let png = base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http(self.addr, "DELETE", &format!("/session/{}", self.session), b"");
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
