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
        begun = begun.or(Some(last));
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
                begun = (!data.is_empty()).then(Instant::now);
                if !skipping {
                    let line = std::mem::take(&mut buf);
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let from = Sender { client, attached: Some(&mut attached) };
                    let (reply, _) = answer(&shared, parse_request(&line), from);
                    if write_line(&mut stream, &reply).is_err() {
                        return;
                    }
                }
                skipping = false;
            }
        }
    }
}
