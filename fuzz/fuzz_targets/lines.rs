//! The server's JSON lines (what a TCP client sends): every line gets a
//! JSON reply line.
#![no_main]

#[path = "server.rs"]
mod server;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let out = server::server().exchange(bytes, false);
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line).expect("a reply is JSON");
        assert!(v["ok"].is_boolean(), "a reply says whether it succeeded");
    }
});
