//! The TCP transport: one JSON request per line, one JSON reply per line.

use super::{Counted, POLL, Shared, answer, error_reply, fail, parse_request};
use serde_json::Value;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Accepts connections until stopped, a thread each; then waits for them.
pub(super) fn run(listener: &TcpListener, shared: &Arc<Shared>) -> io::Result<()> {
    let mut threads = Vec::new();
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = shared.clone();
                threads.retain(|h: &std::thread::JoinHandle<()>| !h.is_finished());
                let spawned = std::thread::Builder::new()
                    .name("tabula-connection".into())
                    .stack_size(16 << 20)
                    .spawn(move || connection(shared, stream));
                if let Ok(h) = spawned {
                    threads.push(h);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    for h in threads {
        let _ = h.join();
    }
    Ok(())
}

fn write_line(stream: &mut TcpStream, v: &Value) -> io::Result<()> {
    let mut text = v.to_string();
    text.push('\n');
    stream.write_all(text.as_bytes())
}

/// Serves one connection: reads lines (at most `max_line` bytes each),
/// answers each with one line.
fn connection(shared: Arc<Shared>, mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let _counted = match Counted::new(&shared) {
        Ok(c) => c,
        Err(f) => {
            let _ = write_line(&mut stream, &error_reply(None, &f));
            return;
        }
    };
    if stream.set_read_timeout(Some(POLL)).is_err() {
        return;
    }
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
                if !skipping {
                    let line = std::mem::take(&mut buf);
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let reply = match parse_request(&line) {
                        Ok(req) => answer(&shared, req).unwrap_or_else(|(v, _)| v),
                        Err(f) => error_reply(None, &f),
                    };
                    if write_line(&mut stream, &reply).is_err() {
                        return;
                    }
                }
                skipping = false;
            }
        }
    }
}
