//! The tracer: a query run with [`Engine::set_trace`] reports each goal
//! of the program at its four ports (call, exit, redo, fail) and at an
//! exception, with its depth and where it is written.
//!
//! The library's meta-interpreter (`'$trace'/1` in `prelude.pl`) runs the
//! program's clauses goal by goal: a clause is found with `'$clause'/3`
//! (which also gives where it was read from), a cut cuts back to the
//! choice-stack height where the clause began (`'$choice'/1`,
//! `'$cut'/1`), and each goal is reported through `'$tport'/5` with the
//! path to it in its clause's body. Builtins, the library and goals deeper
//! than the depth shown run as they are, compiled. This module turns the
//! reports into [`TraceEvent`]s: the goal written to a bounded depth, the
//! path resolved to a line and column of the file.

use super::Engine;
use super::atoms::atom;
use super::db::Entry;
use super::machine::{Machine, Res};
use super::term::Cell;
use super::write::WriteOpts;
use crate::syntax::{self, Ast, Span};
use std::collections::HashMap;
use std::rc::Rc;

/// A port of the four-port model, and exceptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Port {
    /// A goal is called.
    Call,
    /// It succeeded.
    Exit,
    /// Backtracking went back into it for another answer.
    Redo,
    /// It has no (more) answers.
    Fail,
    /// It raised an exception.
    Exception,
}

impl Port {
    pub const ALL: [Port; 5] = [Port::Call, Port::Exit, Port::Redo, Port::Fail, Port::Exception];

    pub fn name(self) -> &'static str {
        match self {
            Port::Call => "call",
            Port::Exit => "exit",
            Port::Redo => "redo",
            Port::Fail => "fail",
            Port::Exception => "exception",
        }
    }

    pub fn parse(s: &str) -> Option<Port> {
        Port::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// What a trace shows.
#[derive(Clone, Debug)]
pub struct TraceOpts {
    /// The ports reported.
    pub ports: Vec<Port>,
    /// Goals deeper than this (the query's own goals are at depth 1) run
    /// untraced, at full speed.
    pub max_depth: Option<u32>,
    /// Terms are written to this depth, `...` beyond (0: whole).
    pub term_depth: usize,
}

impl Default for TraceOpts {
    fn default() -> Self {
        TraceOpts { ports: Port::ALL.to_vec(), max_depth: None, term_depth: 10 }
    }
}

/// A place in a file loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// One port passed.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    pub port: Port,
    /// 1 for the query's goals, one more for each call.
    pub depth: u32,
    /// The goal as it is at this port (`writeq`, to the term depth).
    pub goal: String,
    /// At an exception, the ball.
    pub ball: Option<String>,
    /// Where the goal is written (`None` for the query's own goals).
    pub at: Option<Place>,
    /// At an exit, the clause that gave the answer.
    pub clause: Option<Place>,
}

impl std::fmt::Display for TraceEvent {
    /// `Exit: (2) piece_move(...)  % game.rules:57:9, clause at line 80`,
    /// indented by depth.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let indent = (self.depth.saturating_sub(1) as usize).min(30);
        let port = match self.port {
            Port::Call => "Call",
            Port::Exit => "Exit",
            Port::Redo => "Redo",
            Port::Fail => "Fail",
            Port::Exception => "Exception",
        };
        write!(f, "{:indent$}{port}: ({}) {}", "", self.depth, self.goal)?;
        if let Some(b) = &self.ball {
            write!(f, " raised {b}")?;
        }
        match (&self.at, &self.clause) {
            (Some(a), Some(c)) if c.file == a.file => {
                write!(f, "  % {}:{}:{}, clause at line {}", a.file, a.line, a.column, c.line)
            }
            (Some(a), Some(c)) => write!(f, "  % {}:{}:{}, clause at {}:{}", a.file, a.line, a.column, c.file, c.line),
            (Some(a), None) => write!(f, "  % {}:{}:{}", a.file, a.line, a.column),
            (None, Some(c)) => write!(f, "  % clause at {}:{}", c.file, c.line),
            (None, None) => Ok(()),
        }
    }
}

/// Where the events go.
pub type TraceSink = Box<dyn FnMut(&TraceEvent)>;

/// A file loaded, parsed again for the places of goals.
struct Parsed {
    text: Rc<str>,
    program: syntax::Program,
    /// Clause index by the start of its span.
    by_start: HashMap<usize, usize>,
}

/// The tracer's state, in the machine while a trace is on.
pub(crate) struct Tracer {
    opts: TraceOpts,
    sink: TraceSink,
    /// The files loaded, parsed again as their goals are placed.
    parsed: HashMap<Rc<str>, Parsed>,
}

impl Tracer {
    /// `file` parsed (again if it was loaded anew since), from the texts
    /// the machine keeps.
    fn parsed(&mut self, sources: &HashMap<Rc<str>, Rc<str>>, file: &str) -> Option<&Parsed> {
        let (name, text) = sources.get_key_value(file)?;
        if !self.parsed.get(file).is_some_and(|p| Rc::ptr_eq(&p.text, text)) {
            let program = syntax::parse_program(text);
            let by_start = program.clauses.iter().enumerate().map(|(i, c)| (c.span.start, i)).collect();
            self.parsed.insert(name.clone(), Parsed { text: text.clone(), program, by_start });
        }
        self.parsed.get(file)
    }

    /// The place of a clause read from `file` at `span`, or of the goal at
    /// `path` in its body (argument numbers from the body down).
    fn place(&mut self, sources: &HashMap<Rc<str>, Rc<str>>, file: &str, span: Span, path: Option<&[usize]>) -> Place {
        let Some(p) = self.parsed(sources, file) else {
            return Place { file: file.to_string(), line: 0, column: 0 };
        };
        let mut at = span.start;
        if let Some(path) = path
            && let Some(&i) = p.by_start.get(&span.start)
            && let Some((_, Some(body))) = p.program.clauses[i].term.head_body()
        {
            at = goal_in(body, path).span().start;
        }
        let (line, column) = syntax::diag::line_col(&p.text, at);
        Place { file: file.to_string(), line, column }
    }
}

/// The goal at `path` in a clause body as the database holds it: its
/// top-level conjunctions flattened and nested to the right (so
/// `(a, b), c` is `a, (b, c)`), everything inside as written. A path
/// that leaves the text (a goal made at run time) stops at the last node
/// it reached.
fn goal_in<'a>(body: &'a Ast, path: &[usize]) -> &'a Ast {
    let goals = body.conjuncts();
    let (mut k, mut i) = (0, 0);
    while k + 1 < goals.len() && path.get(i) == Some(&2) {
        k += 1;
        i += 1;
    }
    if k + 1 < goals.len() {
        if path.get(i) != Some(&1) {
            return goals[k];
        }
        i += 1;
    }
    let mut node = goals[k];
    for &a in &path[i..] {
        match node {
            Ast::Compound(_, args, _) if (1..=args.len()).contains(&a) => node = &args[a - 1],
            _ => break,
        }
    }
    node
}

impl Machine {
    /// `'$src'(File, Start, End)`: the file and span.
    fn src_of(&mut self, c: Cell) -> Option<(String, Span)> {
        let Cell::Str(p) = self.store.deref(c) else { return None };
        let (Cell::Atom(f), Cell::Int(s), Cell::Int(e)) = (
            self.store.deref(self.store.heap[p + 1]),
            self.store.deref(self.store.heap[p + 2]),
            self.store.deref(self.store.heap[p + 3]),
        ) else {
            return None;
        };
        Some((self.atoms.name(f).to_string(), Span { start: s as usize, end: e as usize }))
    }
}

/// `'$tport'(+Port, +Depth, +Goal, +Site, +Answer)`: reports a port.
/// `Site` is `'$at'(Clause, RevPath)`, the clause the goal is written in
/// (`'$src'/3` or `[]` for the query) and the argument path to it,
/// innermost first; `Answer` the clause that answered, or `[]`.
pub(super) fn bi_tport(m: &mut Machine, a: &[Cell]) -> Res {
    let Some(mut tracer) = m.tracer.take() else { return Ok(true) };
    let port_cell = m.store.deref(a[0]);
    let (port, ball) = match port_cell {
        Cell::Atom(p) => (Port::parse(m.atoms.name(p)), None),
        Cell::Str(p) => (Some(Port::Exception), Some(m.store.heap[p + 1])),
        _ => (None, None),
    };
    let Some(port) = port.filter(|p| tracer.opts.ports.contains(p)) else {
        m.tracer = Some(tracer);
        return Ok(true);
    };
    let depth = match m.store.deref(a[1]) {
        Cell::Int(d) => d as u32,
        _ => 0,
    };
    let opts = WriteOpts { quoted: true, numbervars: true, max_depth: tracer.opts.term_depth, ..Default::default() };
    let goal = m.format_term(a[2], &opts);
    let ball = ball.map(|b| m.format_term(b, &opts));
    let mut at = None;
    if let Cell::Str(p) = m.store.deref(a[3]) {
        let (clause, mut path) = (m.store.heap[p + 1], m.store.heap[p + 2]);
        if let Some((file, span)) = m.src_of(clause) {
            let mut rev = Vec::new();
            while let Cell::Lst(l) = m.store.deref(path) {
                if let Cell::Int(k) = m.store.deref(m.store.heap[l]) {
                    rev.push(k as usize);
                }
                path = m.store.heap[l + 1];
            }
            rev.reverse();
            at = Some(tracer.place(&m.sources, &file, span, Some(&rev)));
        }
    }
    let clause = m.src_of(a[4]).map(|(file, span)| tracer.place(&m.sources, &file, span, None));
    (tracer.sink)(&TraceEvent { port, depth, goal, ball, at, clause });
    m.tracer = Some(tracer);
    Ok(true)
}

/// `'$tr_shown'(+Depth)`: goals at this depth are traced.
pub(super) fn bi_tr_shown(m: &mut Machine, a: &[Cell]) -> Res {
    let Some(max) = m.tracer.as_ref().map(|t| t.opts.max_depth) else { return Ok(false) };
    Ok(match (m.store.deref(a[0]), max) {
        (_, None) => true,
        (Cell::Int(d), Some(max)) => d <= i64::from(max),
        _ => false,
    })
}

/// `'$tr_user'(+Goal)`: a predicate of the program (not a builtin, not
/// the library), whose clauses the tracer runs one goal at a time.
pub(super) fn bi_tr_user(m: &mut Machine, a: &[Cell]) -> Res {
    let g = m.store.deref(a[0]);
    let Some((f, n)) = m.store.functor(g) else { return Ok(false) };
    Ok(match m.db.get(f, n as u32) {
        Some(Entry::User(i)) => !m.db.preds[i].library,
        _ => false,
    })
}

/// `'$choice'(-Height)`: the height of the choice stack.
pub(super) fn bi_choice(m: &mut Machine, a: &[Cell]) -> Res {
    let h = Cell::Int(m.choices.len() as i64);
    Ok(m.store.unify(a[0], h))
}

/// `'$cut'(+Height)`: removes the choice points above `Height` (a cut
/// of the clause that began there).
pub(super) fn bi_cut(m: &mut Machine, a: &[Cell]) -> Res {
    match m.store.deref(a[0]) {
        Cell::Int(h) if h >= 0 => {
            m.cut(h as usize);
            Ok(true)
        }
        other => Err(m.type_error(atom::INTEGER, other)),
    }
}

impl Engine {
    /// Traces the following queries (`None`: stops tracing): each goal of
    /// the program's clauses reports its ports to `sink`, as `opts` says.
    /// Builtins and the library are reported as single goals.
    pub fn set_trace(&mut self, trace: Option<(TraceOpts, TraceSink)>) {
        self.m.tracer = trace.map(|(opts, sink)| Box::new(Tracer { opts, sink, parsed: HashMap::new() }));
    }

    /// Whether queries are traced.
    pub fn tracing(&self) -> bool {
        self.m.tracer.is_some()
    }
}
