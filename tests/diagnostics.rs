//! Diagnostics a person reads: every malformed file in
//! `tests/fixtures/parse_err` gets all its errors with file:line:col, the
//! source line and the span underlined; files in `tests/fixtures/warnings`
//! load with warnings only.

use tabula::engine::Engine;
use tabula::syntax::render;

fn report(path: &std::path::Path, folder: &str) -> (bool, usize, String) {
    let src = std::fs::read_to_string(path).unwrap();
    let name = format!("{folder}/{}", path.file_name().unwrap().to_string_lossy());
    let mut e = Engine::new();
    let r = e.load(&name, &src);
    (r.has_errors(), r.diagnostics.len(), render(&name, &src, &r.diagnostics))
}

#[test]
fn malformed_files_report_every_error() {
    insta::glob!("fixtures/parse_err/*.rules", |path| {
        let (errors, _, text) = report(path, "parse_err");
        assert!(errors, "{} loaded without an error", path.display());
        insta::assert_snapshot!(text);
    });
}

#[test]
fn warnings_do_not_stop_loading() {
    insta::glob!("fixtures/warnings/*.rules", |path| {
        let (errors, n, text) = report(path, "warnings");
        assert!(!errors, "{} has errors:\n{text}", path.display());
        assert!(n > 0, "{} has no warnings", path.display());
        insta::assert_snapshot!(text);
    });
}

#[test]
fn there_are_at_least_twenty_malformed_files() {
    let n = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parse_err")).unwrap().count();
    assert!(n >= 20, "only {n} malformed fixtures");
}

#[test]
fn several_errors_in_one_file_are_all_reported() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parse_err/several_errors.rules");
    let (_, n, text) = report(&path, "parse_err");
    assert!(n >= 4, "expected at least 4 errors, got {n}:\n{text}");
}
