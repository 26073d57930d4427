//! `tabula lsp`: a language server for `.rules` and `.kif` files, over
//! stdio (the Language Server Protocol, on rust-analyzer's `lsp-server`).
//!
//! - Diagnostics as a file is edited: the load's (syntax errors, singleton
//!   variables, calls to predicates defined nowhere...) at once, and, for a
//!   file that defines the game interface, what `tabula check`'s random
//!   games find, a moment later (on a worker thread, within limits: a file
//!   that loops is cut off, never the editor), and then, as hints, the
//!   rules random games never used (`tabula coverage`).
//! - Document and workspace symbols (each predicate; in GDL each relation,
//!   fluent and move), go to definition, find references, hover (a
//!   predicate's clauses and the comment above it; a builtin's entry on
//!   the book's page of builtins; a GDL word's meaning), completion of
//!   the predicates the file can call, renaming a predicate, and quick
//!   fixes (a singleton `X` to `_X`, a misspelt call to the name meant or
//!   a clause to write, a missing game predicate's skeleton).

mod analysis;
mod builtins;

use crate::cli::CliError;
use crate::engine::{Limits, Origin};
use analysis::{Analysis, Key, Text};
use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types as lsp;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The longest one query of a file's game checks may run.
const CHECK_LIMIT: Duration = Duration::from_secs(5);

/// Runs the server on stdin and stdout until the client shuts it down.
pub fn run() -> Result<i32, CliError> {
    let (conn, io) = Connection::stdio();
    let capabilities = json!({
        "textDocumentSync": 1,
        "hoverProvider": true,
        "definitionProvider": true,
        "referencesProvider": true,
        "documentSymbolProvider": true,
        "workspaceSymbolProvider": true,
        "completionProvider": {},
        "codeActionProvider": true,
        "renameProvider": true,
    });
    let info =
        json!({"capabilities": capabilities, "serverInfo": {"name": "tabula", "version": env!("CARGO_PKG_VERSION")}});
    let (id, _params) = conn.initialize_start().map_err(|e| CliError(format!("lsp: {e}")))?;
    conn.initialize_finish(id, info).map_err(|e| CliError(format!("lsp: {e}")))?;
    let checks = Checks::start(conn.sender.clone());
    let mut server = Server { docs: HashMap::new(), checks };
    for msg in &conn.receiver {
        match msg {
            Message::Request(req) => {
                if conn.handle_shutdown(&req).map_err(|e| CliError(format!("lsp: {e}")))? {
                    break;
                }
                let response = server.request(req);
                conn.sender.send(response.into()).map_err(|e| CliError(format!("lsp: {e}")))?;
            }
            Message::Notification(n) => server.notify(n),
            Message::Response(_) => {}
        }
    }
    // The worker and the server let go of their senders, so the writer
    // thread ends.
    server.checks.stop();
    drop(server);
    drop(conn);
    io.join().map_err(|e| CliError(format!("lsp: {e}")))?;
    Ok(0)
}

/// An open file.
struct Doc {
    analysis: Analysis,
}

struct Server {
    docs: HashMap<String, Doc>,
    checks: Checks,
}

impl Server {
    fn notify(&mut self, n: Notification) {
        let p = &n.params;
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let (Some(uri), Some(text)) = (p["textDocument"]["uri"].as_str(), p["textDocument"]["text"].as_str())
                else {
                    return;
                };
                let version = p["textDocument"]["version"].as_i64().unwrap_or(0) as i32;
                self.update(uri, version, text.to_string());
            }
            "textDocument/didChange" => {
                let Some(uri) = p["textDocument"]["uri"].as_str() else { return };
                let version = p["textDocument"]["version"].as_i64().unwrap_or(0) as i32;
                // Full sync: the last change is the whole text.
                let Some(text) = p["contentChanges"].as_array().and_then(|c| c.last()).and_then(|c| c["text"].as_str())
                else {
                    return;
                };
                self.update(uri, version, text.to_string());
            }
            "textDocument/didClose" => {
                if let Some(uri) = p["textDocument"]["uri"].as_str() {
                    self.docs.remove(uri);
                    self.checks.publish(uri, Vec::new());
                }
            }
            _ => {}
        }
    }

    /// A file opened or changed: analysed, its diagnostics published, its
    /// game checks queued.
    fn update(&mut self, uri: &str, version: i32, text: String) {
        let path = path_of(uri);
        let analysis = analysis::analyse(&path, text.clone());
        self.checks.publish(uri, analysis.diagnostics.clone());
        if analysis.game {
            let first = analysis.diagnostics.clone();
            self.checks.queue(Job { uri: uri.to_string(), version, path, text, first });
        } else {
            self.checks.forget(uri);
        }
        self.docs.insert(uri.to_string(), Doc { analysis });
    }

    fn request(&mut self, req: Request) -> Response {
        let result = match req.method.as_str() {
            "textDocument/documentSymbol" => self.doc(&req).map(symbols),
            "workspace/symbol" => {
                let query = req.params["query"].as_str().unwrap_or("").to_lowercase();
                let all: Vec<Value> = self.docs.iter().flat_map(|(uri, d)| workspace_symbols(uri, d, &query)).collect();
                Some(json!(all))
            }
            "textDocument/definition" => self.at(&req).map(|(uri, d, key)| {
                let places: Vec<Value> =
                    d.analysis.clauses_of(&key).map(|c| location(uri, &d.analysis.text, c.name)).collect();
                json!(places)
            }),
            "textDocument/references" => self.at(&req).map(|(uri, d, key)| {
                let with_heads = req.params["context"]["includeDeclaration"].as_bool().unwrap_or(true);
                let places: Vec<Value> = (d.analysis.occurrences.iter())
                    .filter(|o| o.key == key && (with_heads || !o.head))
                    .map(|o| location(uri, &d.analysis.text, o.span))
                    .collect();
                json!(places)
            }),
            "textDocument/hover" => self.at(&req).map(|(_, d, key)| hover(&d.analysis, &key)),
            "textDocument/completion" => self.doc(&req).map(|d| completion(d, &req.params["position"])),
            "textDocument/codeAction" => self.doc(&req).map(|d| code_actions(&req.params, d)),
            "textDocument/rename" => {
                let new = req.params["newName"].as_str().unwrap_or("").to_string();
                if !is_plain_atom(&new) {
                    let message = format!(
                        "`{new}` is not a name a predicate can have unquoted (a lowercase letter, then letters, digits, _)"
                    );
                    return Response::new_err(req.id, lsp_server::ErrorCode::InvalidParams as i32, message);
                }
                self.at(&req).map(|(uri, d, key)| rename(uri, d, &key, &new))
            }
            _ => {
                let message = format!("tabula lsp does not answer {}", req.method);
                return Response::new_err(req.id, lsp_server::ErrorCode::MethodNotFound as i32, message);
            }
        };
        Response::new_ok(req.id, result.unwrap_or(Value::Null))
    }

    fn doc(&self, req: &Request) -> Option<&Doc> {
        self.docs.get(req.params["textDocument"]["uri"].as_str()?)
    }

    /// The file and the predicate named at the request's position.
    fn at<'a>(&'a self, req: &'a Request) -> Option<(&'a str, &'a Doc, Key)> {
        let uri = req.params["textDocument"]["uri"].as_str()?;
        let d = self.docs.get(uri)?;
        let pos: lsp::Position = serde_json::from_value(req.params["position"].clone()).ok()?;
        let o = d.analysis.at(d.analysis.text.offset(pos))?;
        Some((uri, d, o.key.clone()))
    }
}

/// The file a `file://` URI names (percent-escapes decoded).
fn path_of(uri: &str) -> PathBuf {
    let rest = uri.strip_prefix("file://").unwrap_or(uri);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(h) = rest.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(h);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

fn location(uri: &str, text: &Text, span: crate::syntax::Span) -> Value {
    json!({"uri": uri, "range": text.range(span)})
}

/// Each predicate of a file, from its first clause to its last.
fn symbols(d: &Doc) -> Value {
    let a = &d.analysis;
    let mut order: Vec<&Key> = Vec::new();
    for c in &a.clauses {
        if !order.contains(&&c.key) {
            order.push(&c.key);
        }
    }
    let out: Vec<Value> = order
        .into_iter()
        .map(|key| {
            let clauses: Vec<_> = a.clauses_of(key).collect();
            let (first, last) = (clauses[0], clauses[clauses.len() - 1]);
            let range = lsp::Range::new(a.text.position(first.span.start), a.text.position(last.span.end));
            json!({
                "name": format!("{}/{}", key.0, key.1),
                "detail": format!("{} clause{}", clauses.len(), if clauses.len() == 1 { "" } else { "s" }),
                "kind": lsp::SymbolKind::FUNCTION,
                "range": range,
                "selectionRange": a.text.range(first.name),
            })
        })
        .collect();
    json!(out)
}

fn workspace_symbols(uri: &str, d: &Doc, query: &str) -> Vec<Value> {
    let a = &d.analysis;
    let mut seen: Vec<&Key> = Vec::new();
    let mut out = Vec::new();
    for c in &a.clauses {
        let name = format!("{}/{}", c.key.0, c.key.1);
        if seen.contains(&&c.key) || !name.to_lowercase().contains(query) {
            continue;
        }
        seen.push(&c.key);
        out.push(json!({"name": name, "kind": lsp::SymbolKind::FUNCTION, "location": location(uri, &a.text, c.name)}));
    }
    out
}

fn hover(a: &Analysis, key: &Key) -> Value {
    let name = format!("{}/{}", key.0, key.1);
    let clauses: Vec<_> = a.clauses_of(key).collect();
    let gdl_word = (a.gdl).then(|| analysis::GDL_WORDS.iter().find(|(w, k, _)| *w == key.0 && *k == key.1)).flatten();
    let text = match (clauses.first(), a.known.get(key)) {
        (Some(first), _) => {
            let line = a.text.position(first.span.start).line + 1;
            let n = clauses.len();
            let mut t = format!("**{name}**: {n} clause{}, the first at line {line}", if n == 1 { "" } else { "s" });
            if let Some((_, _, meaning)) = gdl_word {
                t = format!("{t}\n\n{meaning}");
            }
            if let Some(c) = a.comment_of(key) {
                t = format!("{t}\n\n{c}");
            }
            t
        }
        (None, _) if gdl_word.is_some() => format!("**{name}**, a word of GDL\n\n{}", gdl_word.map_or("", |w| w.2)),
        (None, Some(o @ (Origin::Builtin | Origin::Library))) if !a.gdl => {
            let kind = if *o == Origin::Builtin { "a builtin" } else { "a library predicate" };
            match builtins::entries().get(key) {
                Some(e) => format!("**{name}**, {kind}\n\n`{}`: {}", e.template, e.text),
                None => format!("**{name}**, {kind}"),
            }
        }
        (None, _) => format!("**{name}**: defined nowhere in this file"),
    };
    json!({"contents": {"kind": "markdown", "value": text}})
}

/// The predicates whose name begins with the word before the cursor.
fn completion(d: &Doc, position: &Value) -> Value {
    let a = &d.analysis;
    let Ok(pos) = serde_json::from_value::<lsp::Position>(position.clone()) else { return json!([]) };
    let at = a.text.offset(pos);
    let word_start = a.text.src[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(at, |(i, _)| i);
    let prefix = &a.text.src[word_start..at];
    let mut keys: Vec<(&Key, &Origin)> = a.known.iter().filter(|(k, _)| k.0.starts_with(prefix)).collect();
    // The file's own predicates first, then the library's and builtins.
    keys.sort_by_key(|(k, o)| (**o != Origin::Program, (*k).clone()));
    let items: Vec<Value> = keys
        .into_iter()
        .filter(|(k, _)| !k.0.starts_with('$'))
        .map(|(k, o)| {
            let from = match o {
                Origin::Program => "this file",
                Origin::Library => "library",
                Origin::Builtin => "builtin",
            };
            let mut item = json!({"label": k.0, "detail": format!("{}/{} ({from})", k.0, k.1), "kind": lsp::CompletionItemKind::FUNCTION});
            if let Some(e) = builtins::entries().get(k) {
                item["detail"] = json!(format!("{} ({from})", e.template));
                item["documentation"] = json!({"kind": "markdown", "value": e.text});
            }
            item
        })
        .collect();
    json!(items)
}

/// Whether `name` is an atom written without quotes.
fn is_plain_atom(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A predicate renamed in every clause head and every call of the file
/// (a builtin or library predicate is not the file's to rename).
fn rename(uri: &str, d: &Doc, key: &Key, new: &str) -> Value {
    if d.analysis.known.get(key) != Some(&Origin::Program) {
        return Value::Null;
    }
    let edits: Vec<Value> = (d.analysis.occurrences.iter())
        .filter(|o| &o.key == key)
        .map(|o| json!({"range": d.analysis.text.range(o.span), "newText": new}))
        .collect();
    json!({"changes": {uri: edits}})
}

/// Quick fixes: a singleton variable `X` renamed `_X`.
fn code_actions(params: &Value, d: &Doc) -> Value {
    let uri = params["textDocument"]["uri"].as_str().unwrap_or("");
    let diags: Vec<lsp::Diagnostic> =
        serde_json::from_value(params["context"]["diagnostics"].clone()).unwrap_or_default();
    let text = &d.analysis.text;
    let mut out = Vec::new();
    let mut fix = |title: String, diag: &lsp::Diagnostic, range: lsp::Range, new_text: String| {
        out.push(json!({
            "title": title,
            "kind": "quickfix",
            "diagnostics": [diag],
            "edit": {"changes": {uri: [{"range": range, "newText": new_text}]}},
        }));
    };
    // Where a new clause goes: at the end of the file, on a line of its own.
    let end = text.range(crate::syntax::Span::new(text.src.len(), text.src.len()));
    let gap = if text.src.is_empty() || text.src.ends_with("\n\n") {
        ""
    } else if text.src.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    for diag in &diags {
        let code = match &diag.code {
            Some(lsp::NumberOrString::String(c)) => c.as_str(),
            _ => continue,
        };
        let (s, e) = (text.offset(diag.range.start), text.offset(diag.range.end));
        let written = text.src.get(s..e).unwrap_or("");
        match code {
            "singleton" => {
                let title = format!("rename `{written}` to `_{written}` (used once, on purpose)");
                fix(title, diag, diag.range, format!("_{written}"));
            }
            "undefined-predicate" => {
                // The name suggested, then a clause to write.
                let named = diag.message.split('`').nth(1).and_then(|pi| pi.rsplit_once('/'));
                let Some((name, arity)) = named.and_then(|(n, a)| Some((n.to_string(), a.parse::<usize>().ok()?)))
                else {
                    continue;
                };
                if let Some(mean) = diag.message.split("did you mean `").nth(1).and_then(|r| r.split('`').next())
                    && let Some((other, _)) = mean.rsplit_once('/')
                    && written.starts_with(name.as_str())
                {
                    let range = text.range(crate::syntax::Span::new(s, s + name.len()));
                    fix(format!("change `{name}` to `{other}`"), diag, range, other.to_string());
                }
                let args: Vec<String> = (1..=arity).map(|i| format!("_A{i}")).collect();
                let head = if arity == 0 { name.clone() } else { format!("{name}({})", args.join(", ")) };
                let clause = format!("{gap}% {name}/{arity}: (to be written)\n{head} :-\n    fail.\n");
                fix(format!("define {name}/{arity} (a clause to fill in, at the end of the file)"), diag, end, clause);
            }
            "missing-predicate" => {
                let Some(pi) = diag.message.strip_prefix("the game predicate ").and_then(|m| m.split(' ').next())
                else {
                    continue;
                };
                if let Some(skeleton) = skeleton(pi) {
                    fix(
                        format!("define {pi} (its skeleton, at the end of the file)"),
                        diag,
                        end,
                        format!("{gap}{skeleton}"),
                    );
                }
            }
            _ => {}
        }
    }
    json!(out)
}

/// A game interface predicate's skeleton: its comment and a clause to
/// fill in (standard Prolog: it loads in SWI-Prolog as it is).
fn skeleton(pi: &str) -> Option<&'static str> {
    Some(match pi {
        "title/1" => "% title(-Title): the game's name.\ntitle('A game').\n",
        "players/2" => {
            "% players(+Options, -Players): the seats, in the order they play.\nplayers(_Options, [first, second]).\n"
        }
        "initial_state/2" => {
            "% initial_state(+Options, -State): the position a game starts from.\ninitial_state(_Options, start).\n"
        }
        "to_move/2" => "% to_move(+State, -Player): the seat to move.\nto_move(_State, first).\n",
        "move/3" => {
            "% move(+State, -Move, -Next): each legal move, and the position after it.\nmove(_State, _Move, _Next) :-\n    fail.\n"
        }
        "game_over/2" => {
            "% game_over(+State, -Outcome): winner(Player) or draw, once the game is over.\ngame_over(_State, _Outcome) :-\n    fail.\n"
        }
        _ => return None,
    })
}

/// A file's game checks to run.
struct Job {
    uri: String,
    version: i32,
    path: PathBuf,
    text: String,
    /// The load's diagnostics, published again with the checks'.
    first: Vec<lsp::Diagnostic>,
}

/// The game checks, run on one worker thread, the newest version of each
/// file only; the diagnostics of a version already replaced are dropped.
struct Checks {
    sender: crossbeam_channel::Sender<Message>,
    pending: Arc<(Mutex<Pending>, Condvar)>,
    latest: Arc<Mutex<HashMap<String, i32>>>,
    worker: Option<std::thread::JoinHandle<()>>,
}

/// The jobs waiting, and whether the worker is to stop.
#[derive(Default)]
struct Pending {
    jobs: HashMap<String, Job>,
    stop: bool,
}

impl Checks {
    fn start(sender: crossbeam_channel::Sender<Message>) -> Checks {
        let pending: Arc<(Mutex<Pending>, Condvar)> = Arc::default();
        let latest: Arc<Mutex<HashMap<String, i32>>> = Arc::default();
        let (p, l, s) = (pending.clone(), latest.clone(), sender.clone());
        let worker = std::thread::Builder::new()
            .name("tabula-lsp-checks".into())
            .stack_size(64 << 20)
            .spawn(move || {
                loop {
                    let job = {
                        let (lock, ready) = &*p;
                        let mut pending = lock.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if pending.stop {
                                return;
                            }
                            if let Some(k) = pending.jobs.keys().next().cloned() {
                                break pending.jobs.remove(&k).expect("a job");
                            }
                            pending = ready.wait(pending).unwrap_or_else(|e| e.into_inner());
                        }
                    };
                    let current = || l.lock().unwrap_or_else(|e| e.into_inner()).get(&job.uri) == Some(&job.version);
                    let found = game_checks(&job);
                    if !current() {
                        continue;
                    }
                    let mut all = job.first.clone();
                    all.extend(found.iter().cloned());
                    if s.send(Message::Notification(publish(&job.uri, all.clone()))).is_err() {
                        return;
                    }
                    // Then the rules random games never used, as hints (a
                    // game whose checks fail has none: its games stop).
                    if found.is_empty() && !crate::game::is_gdl(&job.path) {
                        let hints = coverage_hints(&job, &current);
                        if !hints.is_empty() && current() {
                            all.extend(hints);
                            if s.send(Message::Notification(publish(&job.uri, all))).is_err() {
                                return;
                            }
                        }
                    }
                }
            })
            .expect("a thread for the game checks");
        Checks { sender, pending, latest, worker: Some(worker) }
    }

    /// Stops the worker once the check it runs (within its limits) ends.
    fn stop(&mut self) {
        let (lock, ready) = &*self.pending;
        lock.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        ready.notify_one();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }

    fn queue(&self, job: Job) {
        self.latest.lock().unwrap_or_else(|e| e.into_inner()).insert(job.uri.clone(), job.version);
        let (lock, ready) = &*self.pending;
        lock.lock().unwrap_or_else(|e| e.into_inner()).jobs.insert(job.uri.clone(), job);
        ready.notify_one();
    }

    /// No checks to come for `uri` (it is no longer a whole game).
    fn forget(&self, uri: &str) {
        self.latest.lock().unwrap_or_else(|e| e.into_inner()).remove(uri);
        self.pending.0.lock().unwrap_or_else(|e| e.into_inner()).jobs.remove(uri);
    }

    fn publish(&self, uri: &str, diagnostics: Vec<lsp::Diagnostic>) {
        let _ = self.sender.send(Message::Notification(publish(uri, diagnostics)));
    }
}

fn publish(uri: &str, diagnostics: Vec<lsp::Diagnostic>) -> Notification {
    Notification::new("textDocument/publishDiagnostics".into(), json!({"uri": uri, "diagnostics": diagnostics}))
}

/// Random games the coverage hints play, and their length.
const COVERAGE_GAMES: u32 = 5;
const COVERAGE_PLIES: u32 = 200;

/// The rules of a whole game that `COVERAGE_GAMES` random games never
/// used (`tabula coverage`), as hints: a clause that never ran (shown
/// faded, as code that is not used), a goal never called, a goal never
/// succeeded.
/// An edit since (`current` false) stops them: the new text's checks go
/// first.
fn coverage_hints(job: &Job, current: &dyn Fn() -> bool) -> Vec<lsp::Diagnostic> {
    let limits = Limits { timeout: Some(CHECK_LIMIT), ..Limits::default() };
    let stop = || !current();
    let measured =
        crate::game::coverage::measure(&job.path, &job.text, COVERAGE_GAMES, COVERAGE_PLIES, 1, &limits, &stop);
    let Ok(c) = measured else { return Vec::new() };
    let text = Text::new(job.text.clone());
    let hint = |span, code: &str, message: String, unused: bool| lsp::Diagnostic {
        range: text.range(span),
        severity: Some(lsp::DiagnosticSeverity::HINT),
        code: Some(lsp::NumberOrString::String(code.into())),
        source: Some("tabula coverage".into()),
        message,
        tags: unused.then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
        ..lsp::Diagnostic::default()
    };
    let games = format!("{} random game{}", c.games, if c.games == 1 { "" } else { "s" });
    let mut out: Vec<lsp::Diagnostic> = (c.dead_clauses())
        .map(|k| hint(k.span, "dead-clause", format!("this clause of {} never ran in {games}", k.predicate), true))
        .collect();
    for (k, g) in c.dead_goals() {
        out.push(if g.called == 0 {
            hint(g.span, "dead-goal", format!("`{}` in {} was never called in {games}", g.goal, k.predicate), true)
        } else {
            let message = format!(
                "`{}` in {} was called {} time{} in {games} and never succeeded",
                g.goal,
                k.predicate,
                g.called,
                if g.called == 1 { "" } else { "s" }
            );
            hint(g.span, "dead-goal", message, false)
        });
    }
    out
}

/// What `tabula check`'s random games find in a whole game (three games,
/// each query within `CHECK_LIMIT`), each at the predicate it names.
fn game_checks(job: &Job) -> Vec<lsp::Diagnostic> {
    let a = analysis::analyse(&job.path, job.text.clone());
    let problems = match crate::loader::load_text(&job.path, &job.text) {
        Err(crate::game::GameError::Interface(p)) => p,
        Err(e) => vec![e.to_string()],
        Ok((mut game, _)) => {
            game.engine().set_limits(Limits { timeout: Some(CHECK_LIMIT), ..Limits::default() });
            match game.options_term(&[]).and_then(|o| game.players(&o).map(|_| o)) {
                Err(e) => vec![e.to_string()],
                Ok(o) => game.check_play(&o, 3, 300, 1).0,
            }
        }
    };
    problems
        .into_iter()
        .map(|p| lsp::Diagnostic {
            range: a.range_of_message(&p),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            source: Some("tabula check".into()),
            message: p,
            ..lsp::Diagnostic::default()
        })
        .collect()
}
