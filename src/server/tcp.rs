//! The TCP transport: one JSON request per line, one JSON reply per line.

use super::{Attached, Client, Counted, Failure, POLL, Sender, Shared, answer, error_reply, fail, parse_request};
use serde_json::Value;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// What a connection the server cannot take gets before it is closed.
pub(super) fn refusal(f: &Failure) -> Vec<u8> {
    let mut text = error_reply(None, f).to_string();
    text.push('\n');
    text.into_bytes()
}

fn write_line(stream: &mut TcpStream, v: &Value) -> io::Result<()> {
    let mut text = v.to_string();
    text.push('\n');
    stream.write_all(text.as_bytes())
}

/// Serves one connection: reads lines (at most `max_line` bytes each),
/// answers each with one line. The first line, and any line once begun,
/// must arrive within the handshake time; between lines the connection
/// may be idle for the idle time.
pub(super) fn connection(shared: Arc<Shared>, mut stream: TcpStream, peer: SocketAddr, _counted: Counted) {
    let _ = stream.set_nodelay(true);
    if stream.set_read_timeout(Some(POLL)).is_err() {
        return;
    }
    let client = Client::of(peer.ip());
    let mut attached = Attached::default();
    // When the line being read began (or the connection opened, before
    // its first line).
    let mut begun: Option<Instant> = Some(Instant::now());
    let mut lines = Lines::new(shared.config.max_line);
    let mut chunk = [0u8; 8192];
    let mut last = Instant::now();
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let got = match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(k) => k,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                if begun.is_some_and(|t| t.elapsed() >= shared.config.handshake) {
                    let secs = shared.config.handshake.as_secs_f64();
                    let f = fail("timeout", format!("a request must arrive whole within {secs} s of its start"));
                    let _ = write_line(&mut stream, &error_reply(None, &f));
                    return;
                }
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
        let mut gone = false;
        let ended = lines.feed(&chunk[..got], &mut |line| {
            let reply = match line {
                Ok(line) => answer(&shared, parse_request(&line), Sender { client, attached: Some(&mut attached) }).0,
                Err(f) => error_reply(None, &f),
            };
            gone = write_line(&mut stream, &reply).is_err();
            !gone
        });
        if gone {
            return;
        }
        // A line once begun must arrive whole within the handshake time.
        begun = match (lines.partial(), ended) {
            (false, _) => None,
            (true, true) => Some(last),
            (true, false) => begun.or(Some(last)),
        };
    }
}

/// What a connection sends, cut into request lines of at most `max` bytes;
/// a longer line is an error, and what remains of it is skipped.
struct Lines {
    buf: Vec<u8>,
    skipping: bool,
    max: usize,
}

impl Lines {
    fn new(max: usize) -> Lines {
        Lines { buf: Vec::new(), skipping: false, max }
    }

    /// Takes `data`: each whole line that is not blank (or a too-long
    /// line's error) goes to `each`, which says whether to go on. Whether
    /// a line ended in `data`.
    fn feed(&mut self, mut data: &[u8], each: &mut dyn FnMut(Result<Vec<u8>, Failure>) -> bool) -> bool {
        let mut ended = false;
        while !data.is_empty() {
            let newline = data.iter().position(|&b| b == b'\n');
            let (part, rest) = match newline {
                Some(i) => (&data[..i], &data[i + 1..]),
                None => (data, &data[data.len()..]),
            };
            data = rest;
            if !self.skipping {
                self.buf.extend_from_slice(part);
                if self.buf.len() > self.max {
                    self.buf.clear();
                    self.skipping = true;
                    let max = self.max;
                    let f = fail("line_too_long", format!("a request line may have {max} bytes at most"));
                    if !each(Err(f)) {
                        return ended;
                    }
                }
            }
            if newline.is_some() {
                ended = true;
                let line = std::mem::take(&mut self.buf);
                let skipped = std::mem::replace(&mut self.skipping, false);
                if !skipped && !line.iter().all(u8::is_ascii_whitespace) && !each(Ok(line)) {
                    return ended;
                }
            }
        }
        ended
    }

    /// Whether a line is begun and not yet whole.
    fn partial(&self) -> bool {
        !self.buf.is_empty() || self.skipping
    }
}

/// The replies to the lines in `bytes`, as a connection that sent them
/// would get them: what the fuzzer drives.
pub(super) fn exchange(shared: &Arc<Shared>, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut attached = Attached::default();
    Lines::new(shared.config.max_line).feed(bytes, &mut |line| {
        let from = Sender { client: Client::Local, attached: Some(&mut attached) };
        let reply = match line {
            Ok(line) => answer(shared, parse_request(&line), from).0,
            Err(f) => error_reply(None, &f),
        };
        out.extend(reply.to_string().bytes());
        out.push(b'\n');
        true
    });
    out
}
