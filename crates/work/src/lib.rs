//! tabula's batch work: a job planned from a command line ([`plan`]:
//! `bench`, `perft`, `match`, `tournament`, `selfplay`, `analyze`), run in
//! shards and merged ([`work`]). The command line and the Python package
//! both run their jobs here, so the package is built without the server's
//! and the command line's own crates. The game layer's modules are
//! re-exported under their own names, as the `tabula` crate does.
#![deny(unsafe_code)]

pub use tabula_games::{ai, engine, game, gdl, loader, syntax};

pub mod plan;
pub mod work;
