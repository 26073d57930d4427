//! tabula: a logic-programming rule engine for board games.
//!
//! Games are logic programs (`.rules` files, a subset of Prolog). The
//! pipeline: text → [`syntax::parse_program`] → AST with spans →
//! [`engine::Engine`] (compiled, indexed clauses) → [`engine::Engine::query`]
//! → answers.
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

pub mod ai;
pub mod cli;
pub mod engine;
pub mod game;
pub mod gdl;
pub mod ggp;
pub mod loader;
pub mod server;
pub mod syntax;
pub mod work;
