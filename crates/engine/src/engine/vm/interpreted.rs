//! A build without the `native` feature (the fuzzers' build, which
//! leaves Cranelift out): no code generator, so `Native::new` gives none
//! and the interpreter runs every clause, as with `TABULA_NATIVE=0`.

use super::{Instr, Loop};

/// The code generator, which this build lacks: it cannot be made (it
/// holds an `Infallible`), so its methods are never called.
#[derive(Debug)]
pub struct Native {
    pub on: bool,
    pub after: u32,
    pub runs: u64,
    pub spanned: u64,
    never: std::convert::Infallible,
}

impl Native {
    /// No generator in this build.
    pub fn new() -> Option<Native> {
        None
    }

    pub fn lower(&mut self, _code: &mut [Instr], _me: Option<Loop>) {
        match self.never {}
    }
}
