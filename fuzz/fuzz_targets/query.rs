//! A query, as `tabula query` and the server read it: parsed and run
//! against a small program, its first answers taken, within limits. The
//! engine is made once and kept read-only (as the server runs a query
//! without a seat's token), so every input meets the same database.
#![no_main]

#[path = "common.rs"]
mod common;

use std::cell::RefCell;
use tabula::engine::Engine;

const PROGRAM: &str = "
app([], L, L).
app([H|T], L, [H|R]) :- app(T, L, R).
nat(0).
nat(s(X)) :- nat(X).
:- dynamic(fact/1).
fact(1).
";

thread_local! {
    static ENGINE: RefCell<Engine> = RefCell::new({
        let mut engine = Engine::new();
        // The interpreter, as in `common::game`.
        engine.set_native(false);
        engine.load("fuzz.pl", PROGRAM);
        engine.set_limits(common::limits());
        engine.set_read_only(true);
        engine
    });
}

libfuzzer_sys::fuzz_target!(|text: &str| {
    ENGINE.with_borrow_mut(|engine| {
        let Ok(mut q) = engine.query(text) else { return };
        for _ in 0..8 {
            match q.next() {
                Some(Ok(_)) if !q.is_done() => {}
                _ => break,
            }
        }
    })
});
