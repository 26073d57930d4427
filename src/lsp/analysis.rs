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
    /// A GDL file (comments begin with `;`, its words are GDL's).
    pub gdl: bool,
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
        gdl: is_gdl(path),
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
        index_gdl(&mut a);
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
    } else if d.message.starts_with("call to undefined predicate") {
        out.code = Some(lsp::NumberOrString::String("undefined-predicate".into()));
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

/// GDL's own relations, what they mean (for hover), and their arities.
pub const GDL_WORDS: &[(&str, u32, &str)] = &[
    ("role", 1, "`(role r)`: r is a player of the game."),
    ("init", 1, "`(init f)`: the fluent f holds in the first state."),
    ("true", 1, "`(true f)`: the fluent f holds in the current state."),
    ("next", 1, "`(next f)`: the fluent f holds in the next state (after this turn's moves)."),
    ("legal", 2, "`(legal r m)`: m is a legal move of role r in the current state."),
    ("does", 2, "`(does r m)`: role r makes move m this turn."),
    ("goal", 2, "`(goal r n)`: role r's score is n (0 to 100) in the current state."),
    ("terminal", 0, "`terminal`: the game is over in the current state."),
    ("distinct", 2, "`(distinct x y)`: x and y are different terms."),
    ("not", 1, "`(not l)`: the literal l does not hold (negation as failure)."),
    ("base", 1, "`(base f)`: f is a fluent the game may have."),
    ("input", 2, "`(input r m)`: m is a move role r may ever make."),
    ("sees", 2, "`(sees r p)`: role r is told p after this turn's moves (GDL-II)."),
];

/// The relations of a GDL file (heads of facts and rules, and literals of
/// bodies) and the function terms that are fluents and moves (defined
/// where `init`, `next`, `legal`, `base` or `input` make them).
fn index_gdl(a: &mut Analysis) {
    use crate::gdl::{Atom, Lit, Term, parse};
    let Ok(sexps) = parse::read_sexps(&a.text.src) else { return };
    let clauses = parse::read_clauses(&sexps, &mut Vec::new());
    for (w, k, _) in GDL_WORDS {
        a.known.insert((w.to_string(), *k), Origin::Builtin);
    }
    fn terms(src: &str, t: &Term, head: bool, out: &mut Vec<Occurrence>) {
        if let Term::Fn(name, args, span) = t {
            let key = (name.clone(), args.len() as u32);
            // The name follows the `(` (and any space).
            let after = src.get(span.start + 1..).unwrap_or("");
            let start = span.start + 1 + (after.len() - after.trim_start().len());
            out.push(Occurrence { key, span: Span::new(start, start + name.len()), head });
            args.iter().for_each(|x| terms(src, x, false, out));
        }
    }
    fn atom(src: &str, x: &Atom, head: bool, out: &mut Vec<Occurrence>) {
        out.push(Occurrence { key: (x.rel.clone(), x.args.len() as u32), span: x.rel_span, head });
        let makes = head && matches!(x.rel.as_str(), "init" | "next" | "legal" | "base" | "input");
        x.args.iter().for_each(|t| terms(src, t, makes, out));
    }
    fn lit(src: &str, l: &Lit, out: &mut Vec<Occurrence>) {
        match l {
            Lit::Pos(x) => atom(src, x, false, out),
            Lit::Not(inner, _) => lit(src, inner, out),
            Lit::Distinct(x, y, _) => {
                terms(src, x, false, out);
                terms(src, y, false, out);
            }
            Lit::Or(ls, _) | Lit::And(ls, _) => ls.iter().for_each(|l| lit(src, l, out)),
        }
    }
    let src = a.text.src.as_str();
    for c in &clauses {
        let key = (c.head.rel.clone(), c.head.args.len() as u32);
        a.clauses.push(ClauseAt { key: key.clone(), span: c.span, name: c.head.rel_span });
        atom(src, &c.head, true, &mut a.occurrences);
        c.body.iter().for_each(|l| lit(src, l, &mut a.occurrences));
    }
    // The fluents and moves made in heads count as defined there.
    let made: Vec<(Key, Span)> = a
        .occurrences
        .iter()
        .filter(|o| o.head && !a.clauses.iter().any(|c| c.name == o.span))
        .map(|o| (o.key.clone(), o.span))
        .collect();
    for (key, name) in made {
        a.clauses.push(ClauseAt { key, span: name, name });
    }
    for o in &a.occurrences {
        a.known.entry(o.key.clone()).or_insert(Origin::Program);
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

    /// The comment lines (`%`, or `;` in GDL) right above the first
    /// clause of `key`.
    pub fn comment_of(&self, key: &Key) -> Option<String> {
        let first = self.clauses_of(key).next()?;
        let before = &self.text.src[..first.span.start];
        let mut lines: Vec<&str> = Vec::new();
        let comment = if self.gdl { ';' } else { '%' };
        for line in before.lines().rev() {
            match line.trim_start().strip_prefix(comment) {
                Some(c) => lines.push(c.trim_start_matches(comment).trim()),
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
