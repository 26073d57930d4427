//! No crash, no stack overflow, no unbounded memory: deep recursion, long
//! loops, huge terms, and runaway queries stopped by limits. These run on
//! the test threads' small default stacks, so any Rust recursion on Prolog
//! data would overflow here.

use std::process::Command;
use std::time::Duration;
use tabula::engine::{Engine, Limits, QueryError};

const PROGRAM: &str = "
len([], 0).
len([_|T], N) :- len(T, N0), N is N0 + 1.
loop(0) :- !.
loop(N) :- N1 is N - 1, loop(N1).
deep(0, z) :- !.
deep(N, s(X)) :- N1 is N - 1, deep(N1, X).
spin :- spin.
grow(L) :- grow([x|L]).
";

fn engine() -> Engine {
    let mut e = Engine::new();
    let r = e.load("limits.pl", PROGRAM);
    assert!(!r.has_errors());
    e
}

fn one(e: &mut Engine, goal: &str) -> Result<Vec<(String, String)>, QueryError> {
    let mut q = e.query(goal).expect("parses");
    match q.next() {
        Some(Ok(a)) => Ok(a.bindings.into_iter().map(|b| (b.name, b.text)).collect()),
        Some(Err(err)) => Err(err),
        None => panic!("{goal} failed"),
    }
}

fn value(e: &mut Engine, goal: &str, var: &str) -> String {
    let b = one(e, goal).unwrap_or_else(|err| panic!("{goal}: {err}"));
    b.into_iter().find(|(n, _)| n == var).map(|(_, v)| v).expect("binding")
}

#[test]
fn million_deep_non_tail_recursion() {
    let mut e = engine();
    assert_eq!(value(&mut e, "numlist(1, 1000000, L), len(L, N), L = [_|_]", "N"), "1000000");
    assert_eq!(value(&mut e, "numlist(1, 1000000, L), length(L, N)", "N"), "1000000");
}

#[test]
fn appending_two_million_element_lists() {
    let mut e = engine();
    let goal = "numlist(1, 1000000, A), numlist(1, 1000000, B), append(A, B, C), length(C, N), last(C, X)";
    assert_eq!(value(&mut e, goal, "N"), "2000000");
    assert_eq!(value(&mut e, goal, "X"), "1000000");
}

#[test]
fn unifying_comparing_and_printing_a_million_element_list() {
    let mut e = engine();
    let goal = "numlist(1, 1000000, A), numlist(1, 1000000, B), A = B, A == B, \
                format(atom(T), '~w', [A]), atom_length(T, N), msort(A, S), S == A";
    let expected: usize = 2 + (1..=1_000_000u64).map(|i| i.to_string().len()).sum::<usize>() + 999_999;
    assert_eq!(value(&mut e, goal, "N"), expected.to_string());
}

#[test]
fn million_deep_nested_term() {
    let mut e = engine();
    let goal = "deep(1000000, X), deep(1000000, Y), X = Y, copy_term(X, Z), X == Z, \
                term_to_atom(X, A), atom_length(A, N), ground(Z)";
    // s( a million times, z, then a million ).
    assert_eq!(value(&mut e, goal, "N"), (3 * 1_000_000 + 1).to_string());
}

#[test]
fn ten_million_iterations_in_constant_memory() {
    let dir = std::env::temp_dir().join(format!("tabula-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("loop.pl");
    std::fs::write(&file, PROGRAM).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["query"])
        .arg(&file)
        .args(["loop(10000000)", "--stats"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "true.\n");
    let err = String::from_utf8_lossy(&out.stderr);
    let mb: f64 = err
        .split("peak memory ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no statistics in {err}"));
    assert!(mb > 0.0 && mb < 50.0, "peak memory {mb} MB");
}

#[test]
fn step_limit_stops_an_infinite_loop_and_the_engine_stays_usable() {
    let mut e = engine();
    e.set_limits(Limits { max_steps: Some(1_000_000), ..Limits::default() });
    match one(&mut e, "spin") {
        Err(QueryError::Limit { resource, message }) => {
            assert_eq!(resource, "steps");
            assert!(message.contains("resource_error(steps)"), "{message}");
        }
        other => panic!("expected a step limit, got {other:?}"),
    }
    assert_eq!(value(&mut e, "X is 6 * 7", "X"), "42");
}

#[test]
fn time_limit_stops_an_infinite_loop() {
    let mut e = engine();
    e.set_limits(Limits { timeout: Some(Duration::from_millis(300)), ..Limits::default() });
    let start = std::time::Instant::now();
    match one(&mut e, "spin") {
        Err(QueryError::Limit { resource, .. }) => assert_eq!(resource, "time"),
        other => panic!("expected a time limit, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(value(&mut e, "atom_length(abc, N)", "N"), "3");
}

#[test]
fn memory_limit_stops_unbounded_growth() {
    let mut e = engine();
    e.set_limits(Limits { max_memory: 64 << 20, ..Limits::default() });
    match one(&mut e, "grow([])") {
        Err(QueryError::Limit { resource, .. }) => assert_eq!(resource, "memory"),
        other => panic!("expected a memory limit, got {other:?}"),
    }
}

#[test]
fn cli_limits_exit_with_code_2_and_a_clear_message() {
    let dir = std::env::temp_dir().join(format!("tabula-spin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("spin.pl");
    std::fs::write(&file, PROGRAM).unwrap();
    for args in [
        vec!["spin", "--max-steps", "100000"],
        vec!["spin", "--timeout", "0.3"],
        vec!["length(L, 20000000)", "--max-memory", "64M"],
        vec!["numlist(1, 100000000, L)", "--max-memory", "64M"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tabula")).arg("query").arg(&file).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("resource_error("), "{args:?}: {err}");
        assert!(err.contains("raise the limit with --"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// What queries leave behind counts against the memory limit: a loop of
/// asserts (or global variables) stops with a limit error, and retracting
/// gives the room back.
#[test]
fn the_database_counts_against_the_memory_limit() {
    let mut e = engine();
    e.set_limits(Limits { max_memory: 32 << 20, ..Limits::default() });
    let grow = "numlist(1, 200000, L), assertz(big(L)), fail ; true";
    let mut stopped = false;
    for _ in 0..20 {
        match one(&mut e, grow) {
            Ok(_) => {}
            Err(QueryError::Limit { .. }) => {
                stopped = true;
                break;
            }
            Err(err) => panic!("{err}"),
        }
    }
    assert!(stopped, "twenty 3 MB clauses fit in 32 MB");
    assert!(e.footprint() < 40 << 20, "{} bytes kept", e.footprint());
    one(&mut e, "retractall(big(_))").unwrap();
    assert!(one(&mut e, grow).is_ok(), "retracting frees the room");
    let globals = "numlist(1, 300000, L), between(1, 100, K), nb_setval(K, L), fail ; true";
    assert!(matches!(one(&mut e, globals), Err(QueryError::Limit { .. })));
}

/// A read-only query may not change what later queries see; the rules'
/// own predicates and the rest of the builtins work as before.
#[test]
fn read_only_queries_cannot_write() {
    let mut e = engine();
    e.set_read_only(true);
    for goal in [
        "assertz(x(1))",
        "asserta(x(1))",
        "retract(len(_, _))",
        "retractall(x(_))",
        "abolish(x/1)",
        "nb_setval(k, 1)",
        "b_setval(k, 1)",
        "op(700, xfx, ===>)",
        "set_prolog_flag(double_quotes, atom)",
        "set_random(seed(1))",
        "dynamic(y/1)",
    ] {
        let err = one(&mut e, goal).expect_err(goal);
        assert!(err.to_string().contains("No permission to call sandboxed"), "{goal}: {err}");
    }
    assert_eq!(value(&mut e, "numlist(1, 5, L), len(L, N)", "N"), "5");
    assert_eq!(
        value(&mut e, "catch(assertz(x(1)), error(E, _), true)", "E"),
        "permission_error(call,sandboxed,assertz/1)"
    );
    e.set_read_only(false);
    assert_eq!(value(&mut e, "assertz(x(7)), x(X)", "X"), "7");
}

#[test]
fn a_directive_that_never_ends_is_a_load_error_not_a_hang() {
    // Found by fuzzing the `.rules` loader: `:- nrev(T, R).` with `T`
    // unbound makes ever longer lists, and loading never ended.
    let mut e = Engine::new();
    e.set_directive_time(Duration::from_millis(300));
    let t = std::time::Instant::now();
    let before = format!("{PROGRAM}after(1).\n");
    let r = e.load("spin.pl", &format!("{before}:- grow([]).\n"));
    assert!(t.elapsed() < Duration::from_secs(30));
    let d = r.diagnostics.iter().find(|d| d.is_error()).expect("an error");
    assert!(d.message.contains("directive `grow/1` did not finish within 0.3 s"), "{}", d.message);
    assert_eq!(d.span.start, before.len(), "the directive is underlined");
    // The clauses are loaded, and queries run without the limit.
    assert_eq!(value(&mut e, "after(X)", "X"), "1");
    assert_eq!(value(&mut e, "loop(3000000), X = done", "X"), "done");
}
