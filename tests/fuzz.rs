//! Any byte string given as a program or a goal gives errors, never a
//! panic: random bytes, random tokens, and mutations of real fixtures.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{AssertUnwindSafe, catch_unwind};
use tabula::engine::{Engine, Limits};

const TOKENS: &[&str] = &[
    "p",
    "q(",
    "X",
    "_",
    ")",
    "(",
    "[",
    "]",
    "{",
    "}",
    "|",
    ",",
    ".",
    " ",
    "\n",
    ":-",
    "->",
    ";",
    "\\+",
    "!",
    "'",
    "\"",
    "0'",
    "1",
    "-1",
    "2.5e3",
    "0x1F",
    "is",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "^",
    "mod",
    "%",
    "/*",
    "*/",
    "a:b",
    "\\",
    "findall(",
    "catch(",
    "throw(",
    "call(",
    "assertz(",
    "retract(",
    "format(",
    "~w",
    "atom_codes(",
    "length(",
];

fn fixtures() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["tests/fixtures/queries", "tests/fixtures/parse_err", "benches/programs"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for e in std::fs::read_dir(path).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "pl" || x == "rules") {
                out.push(std::fs::read_to_string(p).unwrap());
            }
        }
    }
    out
}

fn mutate(rng: &mut ChaCha8Rng, src: &str) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for _ in 0..rng.gen_range(1..8) {
        if bytes.is_empty() {
            break;
        }
        let i = rng.gen_range(0..bytes.len());
        match rng.gen_range(0..4) {
            0 => bytes[i] = rng.r#gen(),
            1 => {
                bytes.remove(i);
            }
            2 => {
                let t = TOKENS[rng.gen_range(0..TOKENS.len())];
                bytes.splice(i..i, t.bytes());
            }
            _ => bytes.truncate(i),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Loads the text and, if it loads, runs a few goals with tight limits.
fn exercise(text: &str) {
    let mut e = Engine::new();
    e.set_limits(Limits { max_steps: Some(20_000), max_memory: 32 << 20, ..Limits::default() });
    let report = e.load("fuzz.pl", text);
    let _ = tabula::syntax::render("fuzz.pl", text, &report.diagnostics);
    for goal in ["true", "p(X)", "top(R)", "run_all", text] {
        if let Ok(q) = e.query(goal) {
            for answer in q.take(3) {
                let _ = answer;
            }
        }
    }
}

fn check(text: &str) {
    if catch_unwind(AssertUnwindSafe(|| exercise(text))).is_err() {
        panic!("panicked on input {text:?}");
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..400 {
        let len = rng.gen_range(0..200);
        let bytes: Vec<u8> = (0..len).map(|_| rng.r#gen()).collect();
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn random_token_soup_never_panics() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for _ in 0..600 {
        let n = rng.gen_range(1..40);
        let text: String = (0..n).map(|_| TOKENS[rng.gen_range(0..TOKENS.len())]).collect();
        check(&text);
    }
}

#[test]
fn mutated_fixtures_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let sources = fixtures();
    for _ in 0..300 {
        let src = &sources[rng.gen_range(0..sources.len())];
        check(&mutate(&mut rng, src));
    }
}

#[test]
fn meta_predicates_without_arguments_are_plain_goals() {
    // Found by the mutation test: `call` and `maplist` as bare atoms.
    check("p :- call.\nq :- maplist.\nr :- call(call).");
}

#[test]
fn deeply_nested_input_is_an_error_not_a_crash() {
    for depth in [100, 1_000, 100_000] {
        let text = format!("p({}x{}).", "f(".repeat(depth), ")".repeat(depth));
        check(&text);
        let list = format!("p({}{}).", "[".repeat(depth), "]".repeat(depth));
        check(&list);
        let ops = format!("p :- {}true.", "a, ".repeat(depth));
        check(&ops);
    }
}
