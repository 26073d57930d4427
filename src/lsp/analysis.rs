//! What the language server knows of one file: its diagnostics (the
//! engine's load report, or the GDL translation's), and for a `.rules`
//! file an index of its predicates (each clause's head, every place a
//! predicate is named) that symbols, definitions, references, hover and
//! completion read. Rebuilt whole on every change: loading the largest
//! game takes milliseconds.

use crate::engine::{Engine, Limits, Origin};
use crate::game::{REQUIRED, is_gdl};
use crate::syntax::{self, Ast, Level, Span};
use lsp_types as lsp;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// A predicate: its name and arity.
pub type Key = (String, u32);

/// A file's text, with byte offsets and LSP positions (lines from 0,
/// columns in UTF-16 code units) each to the other.
pub struct Text {
    pub src: String,
    starts: Vec<usize>,
}

impl Text {
    pub fn new(src: String) -> Text {
        let starts = std::iter::once(0).chain(src.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Text { src, starts }
    }

    pub fn position(&self, offset: usize) -> lsp::Position {
        let offset = offset.min(self.src.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let column = self.src.get(start..offset).map_or(0, |t| t.encode_utf16().count());
        lsp::Position::new(line as u32, column as u32)
    }

    pub fn offset(&self, p: lsp::Position) -> usize {
        let Some(&start) = self.starts.get(p.line as usize) else { return self.src.len() };
        let mut units = 0;
        for (i, c) in self.src[start..].char_indices() {
            if units >= p.character as usize || c == '\n' {
                return start + i;
            }
            units += c.len_utf16();
        }
        self.src.len()
    }

    pub fn range(&self, s: Span) -> lsp::Range {
        lsp::Range::new(self.position(s.start), self.position(s.end))
    }
}

/// A place where a predicate is named: in a clause's head, or as a goal
/// (or a term with its name and arity) in a body.
pub struct Occurrence {
    pub key: Key,
    /// The name as written.
    pub span: Span,
    pub head: bool,
}

/// One clause of the file.
pub struct ClauseAt {
    pub key: Key,
    pub span: Span,
    /// The head's name as written.
    pub name: Span,
}

/// What the server knows of one file.
pub struct Analysis {
    pub text: Text,
    /// The load's diagnostics (the game checks, which take longer, come
    /// later: `game_checks`).
    pub diagnostics: Vec<lsp::Diagnostic>,
    pub clauses: Vec<ClauseAt>,
    pub occurrences: Vec<Occurrence>,
    /// Every predicate the engine knows after loading the file.
    pub known: HashMap<Key, Origin>,
    /// Whether the file defines the whole game interface (its game checks
    /// can run).
    pub game: bool,
}

/// The longest a file's load may run (its directives): an editor is never
/// left waiting on a file that loops.
pub const LOAD_LIMIT: Duration = Duration::from_secs(2);

/// Analyses `src`, the text of `path` (a `.kif` file by its GDL
/// translation, anything else as the rules language).
pub fn analyse(path: &Path, src: String) -> Analysis {
    let text = Text::new(src);
    let mut a = Analysis {
        text,
        diagnostics: Vec::new(),
        clauses: Vec::new(),
        occurrences: Vec::new(),
        known: HashMap::new(),
        game: false,
    };
    let name = path.display().to_string();
    if is_gdl(path) {
        let stem = path.file_stem().map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
        let diags = match crate::gdl::translate_game(&stem, &a.text.src) {
            Err(d) => d,
            Ok(t) => {
                a.game = true;
                t.warnings
            }
        };
        a.diagnostics = diags.iter().map(|d| diagnostic(&a.text, d)).collect();
        return a;
    }
    let mut engine = Engine::new();
    engine.set_limits(Limits { timeout: Some(LOAD_LIMIT), ..Limits::default() });
    let report = engine.load(&name, &a.text.src);
    a.diagnostics = report.diagnostics.iter().map(|d| diagnostic(&a.text, d)).collect();
    a.known = engine.predicates().into_iter().map(|(n, k, o)| ((n, k), o)).collect();
    index(&mut a);
    interface(&mut a, &engine, report.has_errors());
    a
}

/// A diagnostic of the engine as the protocol writes it.
pub fn diagnostic(text: &Text, d: &syntax::Diagnostic) -> lsp::Diagnostic {
    let mut message = d.message.clone();
    if !d.label.is_empty() && d.label != d.message {
        message = format!("{message}: {}", d.label);
    }
    if let Some(h) = &d.help {
        message = format!("{message}\nhelp: {h}");
    }
    let severity = match d.level {
        Level::Error => lsp::DiagnosticSeverity::ERROR,
        Level::Warning => lsp::DiagnosticSeverity::WARNING,
    };
    let mut out = lsp::Diagnostic {
        range: text.range(d.span),
        severity: Some(severity),
        source: Some("tabula".into()),
        message,
        ..lsp::Diagnostic::default()
    };
    if d.message.starts_with("singleton variable") {
        out.code = Some(lsp::NumberOrString::String("singleton".into()));
    }
    out
}

/// The clauses and every place a known predicate is named.
fn index(a: &mut Analysis) {
    let program = syntax::parse_program(&a.text.src);
    for c in &program.clauses {
        let (head, body) = match c.term.head_body() {
            Some((h, b)) => (Some(h), b),
            // A directive's goals are calls too; a grammar rule is not read.
            None if c.term.is(":-", 1) || c.term.is("?-", 1) => (None, c.term.args().first()),
            None => (None, None),
        };
        if let Some(h) = head
            && let Some((key, name)) = named(&a.text.src, h)
        {
            a.clauses.push(ClauseAt { key: key.clone(), span: c.span, name });
            a.occurrences.push(Occurrence { key, span: name, head: true });
            if let Ast::Compound(_, args, _) = h {
                args.iter().for_each(|t| walk(&a.text.src, t, &a.known, &mut a.occurrences));
            }
        }
        if let Some(b) = body {
            walk(&a.text.src, b, &a.known, &mut a.occurrences);
        }
    }
}

/// A term's predicate and where its name is written (`None` for a term
/// written with an operator, whose name is not at its start).
fn named(src: &str, t: &Ast) -> Option<(Key, Span)> {
    let (name, arity, span) = match t {
        Ast::Atom(n, s) => (n, 0, *s),
        Ast::Compound(n, args, s) => (n, args.len() as u32, *s),
        _ => return None,
    };
    let rest = src.get(span.start..)?;
    let len = if rest.starts_with(name.as_str()) {
        name.len()
    } else if rest.starts_with('\'') {
        // 'quoted name': up to the closing quote (a doubled one stays in).
        let b = rest.as_bytes();
        let mut i = 1;
        while i < b.len() {
            if b[i] == b'\'' {
                if b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                break;
            }
            i += 1;
        }
        i + 1
    } else {
        return None;
    };
    if arity > 0 && !rest[len..].starts_with('(') {
        return None;
    }
    Some(((name.clone(), arity), Span::new(span.start, span.start + len)))
}

/// Every place in `t` a known predicate is named.
fn walk(src: &str, t: &Ast, known: &HashMap<Key, Origin>, out: &mut Vec<Occurrence>) {
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        if let Some((key, span)) = named(src, t)
            && known.contains_key(&key)
        {
            out.push(Occurrence { key, span, head: false });
        }
        if let Ast::Compound(_, args, _) = t {
            stack.extend(args.iter().rev());
        }
    }
}

/// The game interface: a file that defines half of its predicates is a
/// game being written, and is told which it still lacks.
fn interface(a: &mut Analysis, engine: &Engine, errors: bool) {
    let missing: Vec<String> = (REQUIRED.iter())
        .filter(|(n, k)| !engine.defined_arities(n).contains(k))
        .map(|(n, k)| format!("{n}/{k}"))
        .collect();
    let defined = REQUIRED.len() - missing.len();
    if errors || defined * 2 < REQUIRED.len() {
        return;
    }
    if missing.is_empty() {
        a.game = true;
        return;
    }
    let all: Vec<String> = REQUIRED.iter().map(|(n, k)| format!("{n}/{k}")).collect();
    for m in missing {
        a.diagnostics.push(lsp::Diagnostic {
            range: lsp::Range::default(),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            source: Some("tabula".into()),
            code: Some(lsp::NumberOrString::String("missing-predicate".into())),
            message: format!("the game predicate {m} is not defined (a game defines {})", all.join(", ")),
            ..lsp::Diagnostic::default()
        });
    }
}

impl Analysis {
    /// The place at `offset` where a predicate is named.
    pub fn at(&self, offset: usize) -> Option<&Occurrence> {
        self.occurrences.iter().find(|o| o.span.start <= offset && offset <= o.span.end)
    }

    /// The clauses of `key`.
    pub fn clauses_of<'a>(&'a self, key: &'a Key) -> impl Iterator<Item = &'a ClauseAt> + 'a {
        self.clauses.iter().filter(move |c| &c.key == key)
    }

    /// The comment lines (`%`) right above the first clause of `key`.
    pub fn comment_of(&self, key: &Key) -> Option<String> {
        let first = self.clauses_of(key).next()?;
        let before = &self.text.src[..first.span.start];
        let mut lines: Vec<&str> = Vec::new();
        for line in before.lines().rev() {
            match line.trim_start().strip_prefix('%') {
                Some(c) => lines.push(c.trim_start_matches('%').trim()),
                None => break,
            }
        }
        lines.reverse();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// The range of the first clause head of the predicate a game check's
    /// message starts with (`move/3: ...`), else the file's start.
    pub fn range_of_message(&self, message: &str) -> lsp::Range {
        let named = message.split([':', ' ']).next().and_then(|w| w.rsplit_once('/'));
        let key = named.and_then(|(n, k)| Some((n.to_string(), k.parse::<u32>().ok()?)));
        match key.as_ref().and_then(|k| self.clauses_of(k).next()) {
            Some(c) => self.text.range(c.name),
            None => lsp::Range::default(),
        }
    }
}
