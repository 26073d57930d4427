//! The classic Prolog benchmarks run by tabula and by SWI-Prolog on the
//! same files with the same iteration counts, in one run. Each program's
//! answer is checked before it is timed. Prints a table of times and the
//! tabula/SWI ratio, with the geometric mean.
//!
//! Each engine runs each program `BENCH_REPEAT` times (default 3) and its
//! best time counts: the least disturbed by whatever else the machine does.
//!
//! `cargo bench --bench classic` (set `BENCH_SCALE=0.1` for a quick run).

use std::path::Path;
use std::process::Command;
use std::time::Instant;
use tabula::engine::Engine;

struct Program {
    name: String,
    iterations: u64,
    expected: String,
}

fn programs() -> Vec<Program> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs");
    let table = std::fs::read_to_string(dir.join("expected.tsv")).expect("expected.tsv");
    table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            Program {
                name: f.next().unwrap().to_string(),
                iterations: f.next().unwrap().parse().unwrap(),
                expected: f.next().unwrap().to_string(),
            }
        })
        .collect()
}

/// tabula's best time of `repeat` runs.
fn tabula_time(src: &str, p: &Program, iterations: u64, repeat: usize) -> f64 {
    let mut e = Engine::new();
    let report = e.load(&p.name, src);
    assert!(!report.has_errors(), "{}: {:?}", p.name, report.diagnostics);
    let answer = e.query("top(R)").unwrap().next().expect("top/1 succeeds").expect("top/1 runs");
    assert_eq!(answer.bindings[0].text, p.expected, "{}: wrong answer", p.name);
    let goal = format!("between(1, {iterations}, _), top(_), fail ; true");
    (0..repeat)
        .map(|_| {
            let start = Instant::now();
            let n = e.query(&goal).unwrap().count();
            assert_eq!(n, 1);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// SWI-Prolog's best time of `repeat` runs (CPU time, measured inside one
/// process), if it is installed.
fn swipl_time(file: &Path, p: &Program, iterations: u64, repeat: usize) -> Option<f64> {
    let goal = format!(
        "top(R), writeq(R), nl, forall(between(1, {repeat}, _), (statistics(cputime, T0), \
         (between(1, {iterations}, _), top(_), fail ; true), statistics(cputime, T1), T is T1 - T0, \
         format('~6f~n', [T])))"
    );
    let out = Command::new("swipl").args(["-q", "-g", &goal, "-t", "halt"]).arg(file).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let answer = lines.next()?;
    assert_eq!(answer, p.expected, "{}: SWI-Prolog's answer differs", p.name);
    let times: Vec<f64> = lines.filter_map(|l| l.trim().parse().ok()).collect();
    (times.len() == repeat).then(|| times.into_iter().fold(f64::INFINITY, f64::min))
}

fn main() {
    let scale: f64 = std::env::var("BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let repeat: usize = std::env::var("BENCH_REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(3).max(1);
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs");
    println!("{:<10} {:>7} {:>11} {:>11} {:>7}", "program", "runs", "tabula ms", "swipl ms", "ratio");
    let mut log_sum = 0.0;
    let mut n = 0;
    let mut worst: f64 = 0.0;
    for p in programs() {
        if filter.as_ref().is_some_and(|f| !p.name.contains(f.as_str())) {
            continue;
        }
        let iterations = ((p.iterations as f64 * scale).ceil() as u64).max(1);
        let file = dir.join(format!("{}.pl", p.name));
        let src = std::fs::read_to_string(&file).unwrap();
        let ours = tabula_time(&src, &p, iterations, repeat);
        let theirs = swipl_time(&file, &p, iterations, repeat);
        match theirs {
            Some(t) if t > 0.0 => {
                let ratio = ours / t;
                log_sum += ratio.ln();
                n += 1;
                worst = worst.max(ratio);
                println!("{:<10} {:>7} {:>11.1} {:>11.1} {:>7.2}", p.name, iterations, ours * 1e3, t * 1e3, ratio);
            }
            _ => println!("{:<10} {:>7} {:>11.1} {:>11} {:>7}", p.name, iterations, ours * 1e3, "-", "-"),
        }
    }
    if n > 0 {
        println!("geometric mean tabula/swipl: {:.2} (worst {:.2})", (log_sum / n as f64).exp(), worst);
    } else {
        println!("swipl not found: no ratios");
    }
}
