//! The server's HTTP requests (what a browser or a program sends to
//! `--http`): every request read gets a response.
#![no_main]

#[path = "server.rs"]
mod server;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let out = server::server().exchange(bytes, true);
    if !bytes.is_empty() && !out.is_empty() {
        assert!(out.starts_with(b"HTTP/1.1 "), "{}", String::from_utf8_lossy(&out));
    }
});
