//! Helpers shared by the integration tests: running programs in tabula and
//! in SWI-Prolog, and the query-fixture driver.
#![allow(dead_code)]

pub mod web;

use std::path::{Path, PathBuf};
use std::process::Command;
use tabula::engine::{Engine, Limits};

pub fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir)
}

/// The queries of a fixture: lines `%?- Goal.`
pub fn queries(src: &str) -> Vec<String> {
    src.lines().filter_map(|l| l.strip_prefix("%?- ")).map(|q| q.trim().trim_end_matches('.').to_string()).collect()
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The driver that runs every query of a fixture and prints its answers;
/// it is ordinary Prolog, so both engines run the very same program.
const DRIVER: &str = r#"
run_all :- forall('$q'(_, Text, G, Vs), run_q(Text, G, Vs)).
run_q(Text, G, Vs) :-
    format("?- ~w.~n", [Text]),
    nb_setval(tq_count, 0),
    catch(run_q2(G, Vs), E, show_error(E)).
run_q2(G, Vs) :-
    (   call(G), nb_getval(tq_count, C0), C is C0 + 1, nb_setval(tq_count, C),
        show(Vs), C >= 8
    ->  true
    ;   nb_getval(tq_count, 0)
    ->  write(false), nl
    ;   true
    ).
show(Vs) :-
    copy_term(Vs, Vs2), term_variables(Vs2, Fs), name_vars(Fs, 0),
    show_bindings(Vs2).
name_vars([], _).
name_vars([V|Vs], N) :-
    C is 0'A + N mod 26, K is N // 26,
    (   K =:= 0 -> atom_codes(Nm, [0'_, C])
    ;   number_codes(K, Ks), atom_codes(Nm, [0'_, C|Ks])
    ),
    V = '$VAR'(Nm), N1 is N + 1, name_vars(Vs, N1).
show_bindings([]) :- write(true), nl.
show_bindings([B|Bs]) :- show_b(B), show_rest(Bs).
show_rest([]) :- nl.
show_rest([B|Bs]) :- write(', '), show_b(B), show_rest(Bs).
show_b(N = V) :- write(N), write(' = '), writeq(V).
show_error(error(F, _)) :- !, write('caught: '), writeq(F), nl.
show_error(E) :- write('uncaught: '), writeq(E), nl.
"#;

/// A fixture's program followed by its queries as `'$q'/4` facts and the
/// driver.
pub fn driver_program(src: &str) -> String {
    let mut out = String::from(src);
    out.push_str("\n:- discontiguous('$q'/4).\n");
    for (i, q) in queries(src).iter().enumerate() {
        let clause = tabula::syntax::parse_term(q).unwrap_or_else(|e| panic!("query {q}: {}", e.message));
        let vars: Vec<String> = clause
            .vars
            .iter()
            .filter(|(n, _)| !n.starts_with('_'))
            .map(|(n, _)| format!("{}={}", quote(n), n))
            .collect();
        out.push_str(&format!("'$q'({}, {}, ({}), [{}]).\n", i + 1, quote(q), q, vars.join(", ")));
    }
    out.push_str(DRIVER);
    out
}

/// Runs `goal` against `program` in tabula; returns what it printed, plus
/// an error line if the goal raised one.
pub fn run_tabula(program: &str, goal: &str) -> String {
    let mut e = Engine::new();
    e.set_limits(Limits { max_steps: Some(200_000_000), ..Limits::default() });
    let report = e.load("program.pl", program);
    let errors: Vec<_> = report.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "program does not load: {errors:?}");
    let mut out = String::new();
    let mut q = e.query(goal).expect("goal parses");
    match q.next() {
        Some(Ok(a)) => out.push_str(&a.output),
        Some(Err(err)) => {
            out.push_str(&q.take_output());
            out.push_str(&format!("ERROR: {err}\n"));
        }
        None => {
            out.push_str(&q.take_output());
            out.push_str("FAILED\n");
        }
    }
    out
}

/// Whether SWI-Prolog is installed. Under CI its absence is a failure.
pub fn swipl_available() -> bool {
    let ok = Command::new("swipl").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "swipl is not installed, and CI=true requires the SWI-Prolog cross-checks (apt-get install swi-prolog-nox)"
        );
    }
    ok
}

/// A reference program the cross-checks compare with (Stockfish, GNU
/// Go): where Debian puts it (`/usr/games`, `/usr/bin`) or on the PATH.
/// Under CI its absence is a failure naming the Debian package; elsewhere
/// the checks are skipped, saying so.
pub fn reference_program(name: &str, checks: &str) -> Option<PathBuf> {
    let found = ["/usr/games", "/usr/bin"]
        .into_iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists())
        .or_else(|| Command::new(name).arg("--version").output().ok().map(|_| PathBuf::from(name)));
    if found.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{name} is not installed, and CI=true requires {checks} (apt-get install {name})");
    }
    if found.is_none() {
        eprintln!("{name} is not installed: {checks} are skipped (CI=true makes this a failure)");
    }
    found
}

/// Runs `goal` against `program` in SWI-Prolog (with compat/swi.pl).
pub fn run_swipl(program: &str, goal: &str) -> String {
    let dir = std::env::temp_dir().join(format!("tabula-swi-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("program.pl");
    let compat = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat/swi.pl");
    std::fs::write(&file, format!(":- ensure_loaded('{}').\n{program}", compat.display())).expect("write program");
    let wrapped =
        format!("catch(({goal}) -> true ; (write('FAILED'), nl), E, (print_message(error, E), write('ERROR'), nl))");
    let out = Command::new("swipl")
        .args(["-q", "--on-error=print", "-g", &wrapped, "-t", "halt"])
        .arg(&file)
        .output()
        .expect("run swipl");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The answers of each query: output split at the `?- ` lines.
fn blocks(out: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for line in out.lines() {
        if line.starts_with("?- ") {
            v.push((line.to_string(), String::new()));
        } else if let Some(last) = v.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        } else {
            v.push((String::new(), format!("{line}\n")));
        }
    }
    v
}

/// The queries whose answers differ between two driver outputs (empty
/// when equal).
pub fn diff(ours: &str, theirs: &str) -> String {
    let (a, b) = (blocks(ours), blocks(theirs));
    let mut out = String::new();
    for i in 0..a.len().max(b.len()) {
        let empty = (String::from("<missing>"), String::new());
        let (x, y) = (a.get(i).unwrap_or(&empty), b.get(i).unwrap_or(&empty));
        if x != y {
            out.push_str(&format!(
                "{}\n  tabula: {}\n  swipl:  {}\n",
                x.0,
                x.1.trim_end().replace('\n', "\n          "),
                y.1.trim_end().replace('\n', "\n          ")
            ));
        }
    }
    out
}

/// A child process (a `tabula serve` or `tabula ggp` under test), killed
/// when dropped: a failing test must not leave it running (holding the
/// test's output open, so that the run never ends).
pub struct Process(pub std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl std::ops::Deref for Process {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Process {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}
