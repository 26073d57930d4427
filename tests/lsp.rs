//! `tabula lsp` spoken to as an editor speaks to it (JSON-RPC over its
//! stdin and stdout): each request it answers, on real game files with
//! mistakes put in. `tests/lsp_neovim.rs` drives it from Neovim itself.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(["lsp", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("tabula lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || read_messages(stdout, tx));
        let mut c = Client { child, stdin, messages, next_id: 1 };
        let init = c.request("initialize", json!({"capabilities": {}, "rootUri": null}));
        assert_eq!(init["serverInfo"]["name"], "tabula");
        assert_eq!(init["capabilities"]["definitionProvider"], true);
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, m: Value) {
        let body = m.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The result of a request (notifications met meanwhile are dropped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.messages.recv_timeout(Duration::from_secs(30)).expect("an answer");
            if m["id"] == id {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let m = self.messages.recv_timeout(Duration::from_secs(60)).expect("diagnostics");
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) {
        let doc = json!({"uri": uri, "languageId": "prolog", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": doc}));
    }

    fn at(&mut self, method: &str, uri: &str, (line, character): (usize, usize), extra: Value) -> Value {
        let mut params = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        self.request(method, params)
    }

    fn stop(mut self) {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success());
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill().unwrap();
        panic!("tabula lsp did not exit after shutdown and exit");
    }
}

fn read_messages(stdout: ChildStdout, tx: mpsc::Sender<Value>) {
    let mut r = BufReader::new(stdout);
    loop {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        if r.read_exact(&mut body).is_err() || tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
            return;
        }
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The line and column (from 0) of the first `needle` on a line that
/// starts with `line_start`.
fn find(text: &str, line_start: &str, needle: &str) -> (usize, usize) {
    let (n, line) = text.lines().enumerate().find(|(_, l)| l.starts_with(line_start) && l.contains(needle)).unwrap();
    (n, line.find(needle).unwrap())
}

#[test]
fn a_game_with_mistakes_gets_diagnostics_and_answers_about_its_predicates() {
    let src = std::fs::read_to_string(root().join("games/breakthrough.rules")).unwrap();
    // A singleton variable, put in move/3.
    let text = src.replacen("    other(P, O),\n", "    other(P, O), Spare = 1,\n", 1);
    let uri = "file:///tmp/tabula-lsp-test/breakthrough.rules";
    let mut c = Client::start();
    c.open(uri, &text);
    let first = c.diagnostics(uri);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(first[0]["message"].as_str().unwrap().contains("singleton variable `Spare`"));
    assert_eq!(first[0]["severity"], 2);
    let (line, col) = find(&text, "    other(P, O)", "Spare");
    assert_eq!(first[0]["range"]["start"], json!({"line": line, "character": col}));
    // The game checks come next: a whole game that plays well adds nothing.
    assert_eq!(c.diagnostics(uri), first);

    // The quick fix renames it `_Spare`.
    let fix = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": first[0]["range"], "context": {"diagnostics": first}}),
    );
    assert_eq!(fix[0]["edit"]["changes"][uri][0]["newText"], "_Spare");

    // Go to definition from a call of piece_move/12 in move/3.
    let call = find(&text, "    piece_move(", "piece_move");
    let def = c.at("textDocument/definition", uri, (call.0, call.1 + 3), json!({}));
    let head = find(&text, "piece_move(P, R, C, B, X1", "piece_move");
    assert_eq!(def[0]["range"]["start"], json!({"line": head.0, "character": 0}));
    assert_eq!(def.as_array().unwrap().len(), 1);

    // Its references: the calls in move/3 and move/2, and its head.
    let refs = c.at("textDocument/references", uri, call, json!({"context": {"includeDeclaration": true}}));
    assert_eq!(refs.as_array().unwrap().len(), 3, "{refs}");
    let refs = c.at("textDocument/references", uri, call, json!({"context": {"includeDeclaration": false}}));
    assert_eq!(refs.as_array().unwrap().len(), 2, "{refs}");

    // Hover: its clauses and the comment above it; a builtin's entry.
    let hover = c.at("textDocument/hover", uri, call, json!({}))["contents"]["value"].as_str().unwrap().to_string();
    assert!(hover.starts_with("**piece_move/12**: 1 clause"), "{hover}");
    assert!(hover.contains("capturing (Captured = yes) or not"), "{hover}");
    let set_arg = find(&text, "    set_arg(I, B, e", "set_arg");
    let hover = c.at("textDocument/hover", uri, set_arg, json!({}));
    // A builtin: what it does, from the book's page of builtins.
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(
        shown.starts_with("**set_arg/4**, a builtin\n\n`set_arg(+N, +Term, +Value, -New)`: New is a copy of Term"),
        "{shown}"
    );

    // Renamed: its head and both calls; a builtin is not the file's.
    let edit = c.at("textDocument/rename", uri, call, json!({"newName": "step_of"}));
    let edits = edit["changes"][uri].as_array().unwrap();
    assert_eq!(edits.len(), 3);
    assert!(edits.iter().all(|e| e["newText"] == "step_of"));
    assert_eq!(c.at("textDocument/rename", uri, set_arg, json!({"newName": "put"})), Value::Null);

    // The outline: every predicate, in order.
    let symbols = c.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    let names: Vec<&str> = symbols.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names[..3], ["title/1", "describe/1", "option/4"]);
    assert!(names.contains(&"move/3") && names.contains(&"move/2") && names.contains(&"game_over/2"));
    let found = c.request("workspace/symbol", json!({"query": "piece_m"}));
    assert_eq!(found[0]["name"], "piece_move/12");

    // Completion of a word begun: the file's predicates first.
    let edited = text.replacen("    other(P, O), Spare = 1,\n", "    other(P, O), pie\n", 1);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": edited}]}),
    );
    let (line, col) = find(&edited, "    other(P, O), pie", "pie");
    let items = c.at("textDocument/completion", uri, (line, col + 3), json!({}));
    let labels: Vec<&str> = items.as_array().unwrap().iter().map(|i| i["detail"].as_str().unwrap()).collect();
    assert_eq!(labels, ["piece/2 (this file)", "piece_move/12 (this file)"]);
    c.stop();
}

#[test]
fn syntax_errors_missing_predicates_game_checks_and_gdl_are_diagnosed() {
    let mut c = Client::start();
    // A syntax error, with its place.
    let uri = "file:///tmp/tabula-lsp-test/bad.rules";
    c.open(uri, "title(bad).\nplayers(_, [a, b]).\nmove(S, M, N) :- foo(.\n");
    let d = c.diagnostics(uri);
    assert_eq!(d[0]["severity"], 1);
    assert_eq!(d[0]["range"]["start"]["line"], 2);

    // A game being written: told what it still lacks.
    let uri = "file:///tmp/tabula-lsp-test/partial.rules";
    c.open(uri, "title(p).\nplayers(_, [a, b]).\ninitial_state(_, s).\nto_move(s, a).\n");
    let d = c.diagnostics(uri);
    let messages: Vec<&str> = d.iter().map(|x| x["message"].as_str().unwrap()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].starts_with("the game predicate move/3 is not defined"), "{messages:?}");
    assert!(messages[1].starts_with("the game predicate game_over/2 is not defined"), "{messages:?}");

    // A whole game whose random games fail: the check's error, at the
    // predicate it names.
    let path = root().join("tests/fixtures/games_broken/unknown_call.rules");
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = "file:///tmp/tabula-lsp-test/unknown_call.rules";
    c.open(uri, &text);
    let first = c.diagnostics(uri);
    assert!(first.iter().any(|d| d["message"].as_str().unwrap().contains("in_bound/1")), "{first:?}");
    let checked = c.diagnostics(uri);
    let game = checked.iter().find(|d| d["source"] == "tabula check").expect("a game check's diagnostic");
    assert!(game["message"].as_str().unwrap().starts_with("move/3: Unknown procedure: in_bound/1"), "{game}");
    assert_eq!(game["range"]["start"], json!({"line": find(&text, "move(", "move").0, "character": 0}));

    // A GDL file: the translation's errors, with their places.
    let uri = "file:///tmp/tabula-lsp-test/bad.kif";
    c.open(uri, "(role white)\n(<= (legal white noop) (true (cell ?x)) (distinct ?y b))\n");
    let d = c.diagnostics(uri);
    assert!(!d.is_empty());
    assert!(d.iter().any(|x| x["range"]["start"]["line"] == 1), "{d:?}");

    // A file whose directive loops is cut off, not the server.
    let uri = "file:///tmp/tabula-lsp-test/loop.rules";
    c.open(uri, "loop :- loop.\n:- loop.\n");
    let d = c.diagnostics(uri);
    assert!(d.iter().any(|x| x["severity"] == 1), "{d:?}");
    let symbols = c.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    assert_eq!(symbols[0]["name"], "loop/0");
    c.stop();
}

#[test]
fn rules_random_games_never_use_are_hinted() {
    let mut c = Client::start();
    let text = std::fs::read_to_string(root().join("tests/fixtures/coverage/dead.rules")).unwrap();
    let uri = "file:///tmp/tabula-lsp-test/dead.rules";
    c.open(uri, &text);
    // The load's diagnostics, the game checks', then the coverage hints.
    let all = loop {
        let d = c.diagnostics(uri);
        if d.iter().any(|x| x["source"] == "tabula coverage") {
            break d;
        }
    };
    let hints: Vec<&Value> = all.iter().filter(|x| x["source"] == "tabula coverage").collect();
    let at = |line_start: &str, needle: &str| {
        let (line, character) = find(&text, line_start, needle);
        json!({"line": line, "character": character})
    };
    let hint = |start: Value| {
        *hints.iter().find(|h| h["range"]["start"] == start).unwrap_or_else(|| panic!("no hint at {start}: {hints:#?}"))
    };
    // A clause that never ran, faded as unused code.
    let h = hint(at("heap_left", "heap_left"));
    assert_eq!((&h["severity"], &h["code"], &h["tags"]), (&json!(4), &json!("dead-clause"), &json!([1])), "{h}");
    assert_eq!(h["message"], "this clause of heap_left/2 never ran in 5 random games");
    // A goal that never succeeded, and one never called after it.
    let h = hint(at("    N > 100", "N > 100"));
    assert!(h["message"].as_str().unwrap().starts_with("`N > 100` in move/3 was called "), "{h}");
    assert!(h["message"].as_str().unwrap().ends_with(" in 5 random games and never succeeded"), "{h}");
    assert!(h.get("tags").is_none(), "{h}");
    let after = find(&text, "    N > 100", "N").0 + 1;
    let h = hint(json!({"line": after, "character": 4}));
    assert!(h["message"].as_str().unwrap().contains("was never called"), "{h}");
    assert_eq!(h["tags"], json!([1]));
    hint(at("bonus(N, 10)", "N > 1000"));
    assert_eq!(hints.len(), 4, "{hints:#?}");
    c.stop();
}

#[test]
fn a_gdl_file_has_symbols_definitions_references_and_hover() {
    let text = "; Who holds the cell.\n(role x)\n(role o)\n(init (cell 1 b))\n(init (control x))\n\
        (<= (legal ?r (mark ?c)) (true (control ?r)) (true (cell ?c b)))\n\
        (<= (next (cell ?c ?r)) (does ?r (mark ?c)))\n\
        (<= (next (control o)) (true (control x)))\n\
        (<= (next (control x)) (true (control o)))\n\
        (<= terminal (not (true (cell 1 b))))\n\
        (<= (goal ?r 100) (role ?r) (true (cell 1 ?r)))\n";
    let uri = "file:///tmp/tabula-lsp-test/marks.kif";
    let mut c = Client::start();
    c.open(uri, text);
    assert_eq!(c.diagnostics(uri), Vec::<Value>::new());
    let symbols = c.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    let names: Vec<&str> = symbols.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    for want in ["role/1", "init/1", "legal/2", "next/1", "terminal/0", "goal/2", "cell/2", "control/1", "mark/1"] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    // From a fluent in a body to where init and next make it.
    let use_at = find(text, "(<= terminal", "cell");
    let def = c.at("textDocument/definition", uri, use_at, json!({}));
    let lines: Vec<u64> =
        def.as_array().unwrap().iter().map(|d| d["range"]["start"]["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [3, 6], "{def}");
    let refs = c.at("textDocument/references", uri, find(text, "(init (control", "control"), json!({}));
    assert_eq!(refs.as_array().unwrap().len(), 6, "{refs}");
    // GDL's words say what they mean.
    let hover = c.at("textDocument/hover", uri, find(text, "(<= terminal", "true"), json!({}));
    assert_eq!(
        hover["contents"]["value"],
        "**true/1**, a word of GDL\n\n`(true f)`: the fluent f holds in the current state."
    );
    let hover = c.at("textDocument/hover", uri, find(text, "(<= (legal", "legal"), json!({}));
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.starts_with("**legal/2**: 1 clause, the first at line 6\n\n`(legal r m)`"), "{shown}");
    let hover = c.at("textDocument/hover", uri, find(text, "(role x)", "role"), json!({}));
    assert!(hover["contents"]["value"].as_str().unwrap().ends_with("Who holds the cell."), "{hover}");
    c.stop();
}

/// Applies one quick fix's edits (all on `uri`) to `text`.
fn apply(text: &str, uri: &str, action: &Value) -> String {
    let mut out = text.to_string();
    let mut edits: Vec<&Value> = action["edit"]["changes"][uri].as_array().unwrap().iter().collect();
    let offset = |t: &str, p: &Value| {
        let (line, ch) = (p["line"].as_u64().unwrap() as usize, p["character"].as_u64().unwrap() as usize);
        t.split_inclusive('\n').take(line).map(str::len).sum::<usize>() + ch
    };
    edits.sort_by_key(|e| std::cmp::Reverse(offset(text, &e["range"]["start"])));
    for e in edits {
        let (s, t) = (offset(&out, &e["range"]["start"]), offset(&out, &e["range"]["end"]));
        out.replace_range(s..t, e["newText"].as_str().unwrap());
    }
    out
}

#[test]
fn quick_fixes_write_the_missing_clauses_and_mend_a_typo() {
    let mut c = Client::start();
    // A game being written: each missing game predicate gets its skeleton.
    let uri = "file:///tmp/tabula-lsp-test/begun.rules";
    let mut text = "title(begun).\nplayers(_, [a, b]).\ninitial_state(_, s).\nto_move(s, a).\n".to_string();
    c.open(uri, &text);
    let missing = c.diagnostics(uri);
    assert_eq!(missing.len(), 2, "{missing:?}");
    for (version, diag) in missing.iter().enumerate() {
        let actions = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}}),
        );
        assert_eq!(actions.as_array().unwrap().len(), 1, "{actions}");
        assert!(actions[0]["title"].as_str().unwrap().starts_with("define "), "{actions}");
        text = apply(&text, uri, &actions[0]);
        let changes = json!([{"text": text}]);
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version + 2}, "contentChanges": changes}),
        );
        c.diagnostics(uri);
    }
    assert!(text.contains("\n\n% move(+State, -Move, -Next): each legal move, and the position after it.\nmove(_State, _Move, _Next) :-\n    fail.\n"), "{text}");
    assert!(text.ends_with("game_over(_State, _Outcome) :-\n    fail.\n"), "{text}");
    // With both, it is a whole game: nothing is missing, no warning.
    let mut e = tabula::engine::Engine::new();
    assert!(e.load("begun.rules", &text).diagnostics.is_empty());

    // A typo'd call: changed to the name meant, or defined.
    let uri = "file:///tmp/tabula-lsp-test/typo.rules";
    let text = "p(X) :- q(X), valu(X).\nq(1).\nvalue(1).\n";
    c.open(uri, text);
    let d = c.diagnostics(uri);
    let typo = d.iter().find(|x| x["code"] == "undefined-predicate").unwrap_or_else(|| panic!("{d:?}"));
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": typo["range"], "context": {"diagnostics": [typo]}}),
    );
    let titles: Vec<&str> = actions.as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["change `valu` to `value`", "define valu/1 (a clause to fill in, at the end of the file)"]);
    assert_eq!(apply(text, uri, &actions[0]), "p(X) :- q(X), value(X).\nq(1).\nvalue(1).\n");
    assert_eq!(apply(text, uri, &actions[1]), format!("{text}\n% valu/1: (to be written)\nvalu(_A1) :-\n    fail.\n"));
    c.stop();
}
