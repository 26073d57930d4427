//! Text → terms: the pest grammar, operator resolution, spans and
//! diagnostics. The first stage of the pipeline.

pub mod ast;
pub mod diag;
pub mod ops;
pub mod parse;

pub use ast::{Ast, Clause, Span};
pub use diag::{Diagnostic, Level, render};
pub use parse::{Program, parse_program, parse_term};
