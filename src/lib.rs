//! tabula: a logic-programming rule engine for board games.
//!
//! The layers are crates, each using only those below it:
//! `tabula-engine` (the rules language's syntax and the register machine),
//! `tabula-games` (the game layer, GDL, the computer players, loading),
//! `tabula-work` (batch work: jobs planned from a command line, [`plan`],
//! and run in shards, [`work`]), and this crate, the front ends: the
//! command line ([`cli`]), the server and its web board ([`server`]) and
//! the GGP player ([`ggp`]). The lower crates' modules are re-exported
//! here under their own names, so `tabula::engine::Engine` is the
//! engine's.
//!
//! ```
//! use tabula::engine::Engine;
//! let mut e = Engine::new();
//! let report = e.load("family.pl", "parent(tom, bob).\nparent(bob, ann).\n\
//!     grandparent(X, Z) :- parent(X, Y), parent(Y, Z).\n");
//! assert!(!report.has_errors());
//! let answers: Vec<_> = e.query("grandparent(tom, Who)").unwrap().collect();
//! assert_eq!(answers.len(), 1);
//! assert_eq!(answers[0].as_ref().unwrap().bindings[0].text, "ann");
//! ```
// Unsafe code only where a module allows it and says why: the register
// machine's instruction pointer (`engine::vm`).
#![deny(unsafe_code)]

pub use tabula_work::{ai, engine, game, gdl, loader, plan, syntax, work};

pub mod cli;
pub mod ggp;
pub mod lsp;
pub mod server;
