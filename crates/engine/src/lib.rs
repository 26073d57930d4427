//! tabula's engine: the rules language's syntax ([`syntax`]: text → an
//! AST with spans and diagnostics) and the register machine that runs it
//! ([`engine`]: load, query, answers, limits, and what a host adds:
//! builtins, front clauses, an [`engine::Extension`]). It knows nothing of
//! games.
//!
//! ```
//! use tabula_engine::engine::Engine;
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

pub mod engine;
pub mod syntax;
