//! `tabula query FILE [GOAL]`: answers printed as SWI-Prolog's toplevel
//! prints them, or as JSON lines; without GOAL an interactive prompt.

use super::{CliError, read_source};
use crate::engine::{Answer, Engine, Limits, Place, Port, QueryError, TraceEvent, TraceOpts, TraceSink};
use crate::syntax::render;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// The program (a .rules or .pl file).
    pub file: PathBuf,
    /// The goal, e.g. "member(X, [a,b])". Without it: an interactive prompt.
    pub goal: Option<String>,
    /// Print at most N answers.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Seed of the random generator.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Stop a query after N inference steps.
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Stop a query after S seconds.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Stop a query whose data passes this size (e.g. 512M, 2G; default
    /// 4G) with resource_error(memory).
    #[arg(long, value_parser = super::parse_size)]
    pub max_memory: Option<usize>,
    /// JSON lines: one per answer, then the result.
    #[arg(long)]
    pub json: bool,
    /// Print statistics to stderr at the end: inference steps, garbage
    /// collections and peak memory.
    #[arg(long)]
    pub stats: bool,
    /// Trace the queries: each goal of the program at its ports (call,
    /// exit, redo, fail, exception), with its depth and where it is
    /// written. At the prompt, `trace.` and `notrace.` turn it on and off.
    #[arg(long)]
    pub trace: bool,
    /// Trace goals down to this depth only (the query's goals are depth
    /// 1); deeper ones run untraced, at full speed.
    #[arg(long, value_name = "N")]
    pub trace_depth: Option<u32>,
    /// The ports to show, e.g. `call,fail` (default: all five).
    #[arg(long, value_name = "PORTS", value_delimiter = ',', value_parser = parse_port)]
    pub ports: Vec<Port>,
}

fn parse_port(s: &str) -> Result<Port, String> {
    Port::parse(s.trim()).ok_or_else(|| format!("no port `{s}`: the ports are call, exit, redo, fail and exception"))
}

/// Turns the trace on (printing each port on stdout, or as a JSON line)
/// or off.
fn set_trace(engine: &mut Engine, a: &QueryArgs, on: bool) {
    if !on {
        engine.set_trace(None);
        return;
    }
    let opts = TraceOpts {
        ports: if a.ports.is_empty() { Port::ALL.to_vec() } else { a.ports.clone() },
        max_depth: a.trace_depth,
        ..TraceOpts::default()
    };
    let json = a.json;
    let sink: TraceSink = Box::new(move |e: &TraceEvent| {
        let line = if json { format!("{}\n", trace_json(e)) } else { format!("{e}\n") };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    });
    engine.set_trace(Some((opts, sink)));
}

/// A port as a JSON line: `{"trace": {"port": ..., "depth": ..., ...}}`.
fn trace_json(e: &TraceEvent) -> String {
    let place = |p: &Option<Place>| match p {
        Some(p) => serde_json::json!({"file": p.file, "line": p.line, "column": p.column}),
        None => serde_json::Value::Null,
    };
    serde_json::json!({"trace": {
        "port": e.port.name(),
        "depth": e.depth,
        "goal": e.goal,
        "ball": e.ball,
        "at": place(&e.at),
        "clause": place(&e.clause),
    }})
    .to_string()
}

/// Loads a program, printing its diagnostics to stderr. Errors stop.
pub fn load(engine: &mut Engine, path: &PathBuf) -> Result<(), CliError> {
    let src = read_source(path)?;
    let name = path.display().to_string();
    let report = engine.load(&name, &src);
    if !report.diagnostics.is_empty() {
        eprint!("{}", render(&name, &src, &report.diagnostics));
    }
    if report.has_errors() {
        let n = report.diagnostics.iter().filter(|d| d.is_error()).count();
        return Err(CliError(format!("{name}: {n} error{} while loading", if n == 1 { "" } else { "s" })));
    }
    Ok(())
}

pub fn run(a: QueryArgs) -> Result<i32, CliError> {
    let mut engine = Engine::new();
    engine.set_seed(a.seed);
    let timeout = match a.timeout {
        Some(t) if !(t > 0.0 && t.is_finite()) => {
            return Err(CliError("--timeout must be a positive number of seconds".into()));
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let max_memory = a.max_memory.unwrap_or(Limits::default().max_memory);
    engine.set_limits(Limits { max_steps: a.max_steps, timeout, max_memory });
    engine.set_echo(!a.json);
    load(&mut engine, &a.file)?;
    if a.trace_depth.is_some() && !a.trace && a.goal.is_some() {
        return Err(CliError("--trace-depth is for a trace: add --trace".into()));
    }
    set_trace(&mut engine, &a, a.trace);
    let code = match &a.goal {
        Some(goal) => run_goal(&mut engine, goal, a.limit, a.json),
        None if std::io::stdin().is_terminal() => interactive(&mut engine, &a)?,
        None => {
            // Queries from a pipe, one per line.
            let mut code = 0;
            for line in std::io::stdin().lock().lines() {
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                if !a.json {
                    println!("?- {}", line.trim());
                }
                if let Some(on) = trace_command(&line) {
                    set_trace(&mut engine, &a, on);
                    continue;
                }
                code = code.max(run_goal(&mut engine, &line, a.limit, a.json));
            }
            code
        }
    };
    if a.stats {
        let s = engine.statistics();
        eprintln!(
            "% {} inference steps, {} garbage collections, peak memory {:.1} MB",
            s.steps,
            s.gc_runs,
            peak_memory_bytes().unwrap_or(0) as f64 / 1e6
        );
    }
    Ok(code)
}

/// Peak resident memory of this process (Linux), in bytes.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The lines of an answer as the toplevel prints them (without the final
/// `.` or ` ;`).
pub fn answer_text(ans: &Answer) -> String {
    if ans.bindings.is_empty() {
        return "true".into();
    }
    ans.bindings.iter().map(|b| format!("{} = {}", b.name, b.display)).collect::<Vec<_>>().join(",\n")
}

fn json_answer(ans: &Answer) -> String {
    let mut map = serde_json::Map::new();
    for b in &ans.bindings {
        map.insert(b.name.clone(), serde_json::Value::String(b.text.clone()));
    }
    let mut obj = serde_json::Map::new();
    obj.insert("bindings".into(), serde_json::Value::Object(map));
    if !ans.output.is_empty() {
        obj.insert("output".into(), serde_json::Value::String(ans.output.clone()));
    }
    serde_json::Value::Object(obj).to_string()
}

fn json_result(result: &str, message: Option<&str>) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("result".into(), result.into());
    if let Some(m) = message {
        obj.insert("message".into(), m.into());
    }
    serde_json::Value::Object(obj).to_string()
}

/// Runs one goal, printing every answer up to `limit`. Returns the exit
/// code: 0 success, 1 failure, 2 error.
pub fn run_goal(engine: &mut Engine, goal: &str, limit: usize, json: bool) -> i32 {
    let mut out = std::io::stdout().lock();
    let goal = goal.trim().trim_end_matches('.').trim();
    let tracing = engine.tracing();
    let mut query = match engine.query(goal) {
        Ok(q) => q,
        Err(e) => {
            let msg = match &e {
                QueryError::Syntax(d) => {
                    crate::syntax::render("query", goal, std::slice::from_ref(d)).trim_end().to_string()
                }
                e => e.to_string(),
            };
            if json {
                let _ = writeln!(out, "{}", json_result("error", Some(&msg)));
            } else {
                eprintln!("{msg}");
            }
            return 2;
        }
    };
    let mut count = 0;
    let mut pending: Option<String> = None;
    loop {
        if count >= limit {
            if !json {
                if let Some(p) = pending.take() {
                    let _ = writeln!(out, "{p} ;");
                }
                let _ = writeln!(out, "% stopped after {limit} answer{} (--limit)", if limit == 1 { "" } else { "s" });
            } else {
                let _ = writeln!(out, "{}", json_result("true", Some("stopped at --limit")));
            }
            return 0;
        }
        let next = query.next();
        match next {
            Some(Ok(ans)) => {
                count += 1;
                if json {
                    let _ = writeln!(out, "{}", json_answer(&ans));
                    continue;
                }
                if let Some(p) = pending.take() {
                    let _ = writeln!(out, "{p} ;");
                }
                let _ = out.flush();
                let _ = write!(out, "{}", ans.output);
                let text = answer_text(&ans);
                if query.is_done() {
                    let _ = writeln!(out, "{text}.");
                    return 0;
                }
                if tracing {
                    // The answer before the ports that look for the next.
                    let _ = writeln!(out, "{text} ;");
                    let _ = out.flush();
                } else {
                    pending = Some(text);
                }
            }
            None => {
                if json {
                    let _ = writeln!(out, "{}", json_result(if count > 0 { "true" } else { "false" }, None));
                } else {
                    if let Some(p) = pending.take() {
                        let _ = writeln!(out, "{p} ;");
                    }
                    let _ = write!(out, "{}", query.take_output());
                    let _ = writeln!(out, "false.");
                }
                return if count > 0 { 0 } else { 1 };
            }
            Some(Err(e)) => {
                let msg = match &e {
                    QueryError::Halt(c) => {
                        if let Some(p) = pending.take() {
                            let _ = writeln!(out, "{p}.");
                        }
                        return *c;
                    }
                    e => e.to_string(),
                };
                if json {
                    let _ = writeln!(out, "{}", json_result("error", Some(&msg)));
                } else {
                    if let Some(p) = pending.take() {
                        let _ = writeln!(out, "{p} ;");
                    }
                    let _ = write!(out, "{}", query.take_output());
                    let _ = out.flush();
                    eprintln!("error: {msg}");
                }
                return 2;
            }
        }
    }
}

/// `trace.` and `notrace.` at the prompt: the trace on or off.
fn trace_command(line: &str) -> Option<bool> {
    match line.trim().trim_end_matches('.').trim() {
        "trace" => Some(true),
        "notrace" => Some(false),
        _ => None,
    }
}

fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".tabula_history"))
}

fn interactive(engine: &mut Engine, a: &QueryArgs) -> Result<i32, CliError> {
    let mut rl = rustyline::DefaultEditor::new()?;
    if let Some(p) = history_path() {
        let _ = rl.load_history(&p);
    }
    println!(
        "tabula query: {} loaded. Type a goal ending with `.`; `;` for more answers, Enter to stop; Ctrl-D quits.",
        a.file.display()
    );
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() { "?- " } else { "|  " };
        match rl.readline(prompt) {
            Ok(line) => {
                buffer.push_str(&line);
                buffer.push('\n');
                if !buffer.trim_end().ends_with('.') {
                    continue;
                }
                let goal = std::mem::take(&mut buffer);
                let _ = rl.add_history_entry(goal.trim());
                if let Some(on) = trace_command(&goal) {
                    set_trace(engine, a, on);
                    println!("% {}", if on { "tracing the next queries (notrace. to stop)" } else { "trace off" });
                    continue;
                }
                ask(engine, &goal, &mut rl);
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buffer.clear(),
            Err(_) => break,
        }
    }
    if let Some(p) = history_path() {
        let _ = rl.save_history(&p);
    }
    Ok(0)
}

/// Runs a goal at the prompt, asking after each answer whether to go on.
fn ask(engine: &mut Engine, goal: &str, rl: &mut rustyline::DefaultEditor) {
    let goal = goal.trim().trim_end_matches('.');
    let mut query = match engine.query(goal) {
        Ok(q) => q,
        Err(QueryError::Syntax(d)) => {
            eprint!("{}", render("query", goal, std::slice::from_ref(&d)));
            return;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return;
        }
    };
    loop {
        match query.next() {
            Some(Ok(ans)) => {
                print!("{}", ans.output);
                let text = answer_text(&ans);
                if query.is_done() {
                    println!("{text}.");
                    return;
                }
                match rl.readline(&format!("{text} ")) {
                    Ok(l) if l.trim() == ";" || l.trim() == "n" => continue,
                    _ => {
                        println!(".");
                        return;
                    }
                }
            }
            None => {
                print!("{}", query.take_output());
                println!("false.");
                return;
            }
            Some(Err(e)) => {
                print!("{}", query.take_output());
                eprintln!("error: {e}");
                return;
            }
        }
    }
}
