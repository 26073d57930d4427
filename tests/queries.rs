//! Query fixtures (`tests/fixtures/queries/*.pl`, queries as `%?- Goal.`
//! lines): answers are snapshot-tested, and the same program runs in
//! SWI-Prolog, which must print exactly the same.

mod common;

use common::*;

#[test]
fn fixtures_have_enough_queries() {
    let mut n = 0;
    for entry in std::fs::read_dir(fixtures("queries")).unwrap() {
        let src = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        n += queries(&src).len();
    }
    assert!(n >= 150, "only {n} queries");
}

#[test]
fn query_answers() {
    insta::glob!("fixtures/queries/*.pl", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let out = run_tabula(&driver_program(&src), "run_all");
        insta::assert_snapshot!(out);
    });
}

#[test]
fn query_answers_match_swipl() {
    if !swipl_available() {
        eprintln!("swipl not installed: cross-check skipped (CI=true makes this a failure)");
        return;
    }
    let mut failures = String::new();
    let mut files: Vec<_> = std::fs::read_dir(fixtures("queries")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let program = driver_program(&src);
        let ours = run_tabula(&program, "run_all");
        let theirs = run_swipl(&program, "run_all");
        let d = diff(&ours, &theirs);
        if !d.is_empty() {
            failures.push_str(&format!("== {}\n{d}", path.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "tabula and SWI-Prolog disagree:\n{failures}");
}

/// Prints tabula's and SWI-Prolog's output for one fixture (for debugging:
/// `FIXTURE=arith cargo test --test queries show_fixture -- --nocapture`).
#[test]
fn show_fixture() {
    let Ok(name) = std::env::var("FIXTURE") else {
        return;
    };
    let src = std::fs::read_to_string(fixtures("queries").join(format!("{name}.pl"))).unwrap();
    let program = driver_program(&src);
    println!("{}", run_tabula(&program, "run_all"));
    if swipl_available() {
        println!("{}", diff(&run_tabula(&program, "run_all"), &run_swipl(&program, "run_all")));
    }
}
