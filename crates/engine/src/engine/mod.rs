//! The engine: `Engine::load` compiles a program into the database,
//! `Engine::query` runs a goal and returns its answers one by one.
//!
//! Stage: `syntax::parse` → AST → `engine::Database` (compiled, indexed
//! clauses) → `Engine::query` → answers.

mod arith;
mod atoms;
mod builtins;
mod check;
mod compile;
mod db;
mod format;
mod gc;
mod machine;
#[allow(unsafe_code)]
mod stack;
mod term;
mod trace;
// The run loop follows a raw instruction pointer (see `vm::Cont`).
#[allow(unsafe_code)]
mod vm;
mod write;

pub use machine::{Exc, Limits};
pub use trace::{Place, Port, TraceEvent, TraceOpts, TraceSink};
pub use write::format_atom;

/// What a host's builtins and extensions work with ([`Engine::add_builtin`],
/// [`Extension`]): the machine a builtin runs on (its term store, atoms,
/// errors, [`Machine::check_limits`]), the atoms every engine knows, and
/// the hash of a term's cells. Nothing else of the machine is public.
pub mod host {
    pub use super::atoms::atom;
    pub use super::db::FastMap;
    pub use super::machine::{Machine, Res};
    pub use super::term::{Store, hash_cells};
}

/// The builtins a read-only query may not call (see
/// [`Engine::set_read_only`]): they change the database, flags, operators,
/// global variables or the random generator.
pub const WRITES: &[(&str, u32)] = &[
    ("assert", 1),
    ("asserta", 1),
    ("assertz", 1),
    ("retract", 1),
    ("retractall", 1),
    ("abolish", 1),
    ("dynamic", 1),
    ("discontiguous", 1),
    ("set_prolog_flag", 2),
    ("op", 3),
    ("nb_setval", 2),
    ("b_setval", 2),
    ("set_random", 1),
];

/// What a withheld builtin does instead.
fn sandboxed(m: &mut Machine, _: &[Cell]) -> Result<bool, Exc> {
    let (name, arity) = m.context;
    let pi = m.store.new_struct(atoms::atom::SLASH, &[Cell::Atom(name), Cell::Int(arity as i64)]);
    let sandboxed = m.atoms.intern("sandboxed");
    Err(m.permission_error(atoms::atom::CALL, sandboxed, pi))
}
pub use term::{Cell, FlatKey, Tmpl};
pub use write::WriteOpts;

use crate::syntax::{self, Ast, Diagnostic, Span};
use atoms::atom;
use compile::{ClauseError, ast_to_heap, compile_clause};
use machine::Machine;
use std::rc::Rc;
use term::Cyclic;

/// An answer of [`Engine::scan`], where it is in the engine.
pub struct Scanned<'a> {
    store: &'a mut term::Store,
    root: Cell,
    vars: &'a mut Vec<usize>,
    /// Whether [`Scanned::cells`] met a cyclic term.
    cyclic: bool,
}

impl Scanned<'_> {
    /// The answer's [`FlatKey`], read in place (`None` where it has none).
    #[inline]
    pub fn key(&self) -> Option<FlatKey> {
        self.store.flat_key(self.root)
    }

    /// The answer as a template's cells and its number of variables (0:
    /// ground), copied into a buffer the engine keeps. `None` for a cyclic
    /// term, which cannot be copied: the scan then ends with its error.
    pub fn cells(&mut self) -> Option<(&[Cell], usize)> {
        self.vars.clear();
        match self.store.copy_out_scratch(self.root, self.vars) {
            Ok(cells) => Some((cells, self.vars.len())),
            Err(Cyclic) => {
                self.cyclic = true;
                None
            }
        }
    }
}

const PRELUDE: &str = include_str!("prelude.pl");

/// The library, parsed once per process (every engine, on every thread,
/// loads it).
fn prelude() -> &'static syntax::Program {
    static PROGRAM: std::sync::OnceLock<syntax::Program> = std::sync::OnceLock::new();
    PROGRAM.get_or_init(|| syntax::parse_program(PRELUDE))
}

/// A logic-programming engine with its database.
pub struct Engine {
    pub(crate) m: Machine,
    /// Time a directive may take while a program loads, when the engine
    /// has no limit of its own: one that never ends is an error in the
    /// load report, not a hang.
    directive_time: std::time::Duration,
}

/// [`Engine::set_directive_time`]'s default.
pub const DIRECTIVE_TIME: std::time::Duration = std::time::Duration::from_secs(60);

/// What loading a program reported.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Syntax errors, clause errors, directive errors and warnings, in
    /// source order.
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadReport {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
}

/// Where a predicate comes from ([`Engine::predicates`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A control construct or a builtin written in Rust.
    Builtin,
    /// The library (`prelude.pl`).
    Library,
    /// The program loaded.
    Program,
}

/// Counters of the engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Statistics {
    /// Inference steps of the last query.
    pub steps: u64,
    /// Garbage collections since the engine was made.
    pub gc_runs: u64,
    /// Heap cells in use.
    pub heap_cells: usize,
}

/// A binding in an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub name: String,
    /// The value as `writeq/1` writes it (other variables named `_A`...).
    pub text: String,
    /// The value as the toplevel shows it: like `text`, with a space after
    /// each comma between arguments.
    pub display: String,
    /// The value as a self-contained term.
    pub term: Tmpl,
}

/// One answer to a query.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Answer {
    pub bindings: Vec<Binding>,
    /// What the query wrote while finding this answer.
    pub output: String,
}

/// Why a query stopped with an error.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryError {
    /// An uncaught exception: the ball as `writeq` text and a message a
    /// person can read.
    Exception { ball: String, message: String, term: Tmpl },
    /// A resource limit (`steps`, `time` or `memory`).
    Limit { resource: String, message: String },
    /// `halt/0,1` was called.
    Halt(i32),
    /// The goal text did not parse.
    Syntax(Box<Diagnostic>),
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::Exception { message, .. } | QueryError::Limit { message, .. } => {
                write!(f, "{message}")
            }
            QueryError::Halt(c) => write!(f, "halt({c})"),
            QueryError::Syntax(d) => write!(f, "syntax error: {}", d.message),
        }
    }
}

impl std::error::Error for QueryError {}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    /// A new engine with the library loaded.
    pub fn new() -> Engine {
        let mut e = Engine { m: Machine::new(), directive_time: DIRECTIVE_TIME };
        e.m.db.no_unfold = std::env::var_os("TABULA_UNFOLD").is_some_and(|v| v == "0");
        let report = e.load_program("prelude", prelude(), true, false);
        debug_assert!(!report.has_errors(), "prelude: {:?}", report.diagnostics);
        e
    }

    /// Sets the time a directive may take while a program loads when the
    /// engine's [`Limits`] set neither steps nor time (default
    /// [`DIRECTIVE_TIME`]).
    pub fn set_directive_time(&mut self, t: std::time::Duration) {
        self.directive_time = t;
    }

    /// Seeds the random generator (`random/1`, `random_between/3`...).
    pub fn set_seed(&mut self, seed: u64) {
        use rand::SeedableRng;
        self.m.rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    }

    /// Runs `f` and puts the random generator back as it was before:
    /// what `f` draws changes nothing a seed draws after.
    pub fn keeping_rng<R>(&mut self, f: impl FnOnce(&mut Engine) -> R) -> R {
        let rng = self.m.rng.clone();
        let r = f(self);
        self.m.rng = rng;
        r
    }

    /// Sets limits for the following queries.
    pub fn set_limits(&mut self, limits: Limits) {
        self.m.limits = limits;
        self.m.set_gc_at(self.m.gc_at);
        self.m.step_at = 0;
    }

    pub fn limits(&self) -> &Limits {
        &self.m.limits
    }

    /// Turns native code on or off for the clauses compiled from now on
    /// (see "Native code" in the engine's README; it is on unless the
    /// environment has `TABULA_NATIVE=0`). Clauses already compiled keep
    /// their code. Returns whether it is on: it stays off where Cranelift
    /// has no backend for the processor.
    pub fn set_native(&mut self, on: bool) -> bool {
        let vm = &mut self.m.vm;
        if on && vm.native.is_none() {
            vm.native = vm::native::Native::new().map(Box::new);
        }
        if let Some(n) = vm.native.as_mut() {
            // Turned off, the generator stays: the code it made may run.
            n.on = on;
        }
        vm.native.as_ref().is_some_and(|n| n.on)
    }

    /// How many calls a clause takes before it gets native code (0: at its
    /// first; the default, `TABULA_NATIVE_AFTER` or 100, spares the clauses
    /// that run only a few times the cost of compiling them). For the
    /// clauses compiled from now on.
    /// Whether calls of predicates of one clause are unfolded into the
    /// code of the clauses that make them (see `vm/unfold.rs`), from the
    /// next clause compiled on; on unless `TABULA_UNFOLD=0`. Off, every
    /// call is made as written (the reference the tests compare with).
    pub fn set_unfold(&mut self, on: bool) {
        self.m.db.no_unfold = !on;
    }

    pub fn set_native_after(&mut self, calls: u32) {
        if let Some(n) = self.m.vm.native.as_mut() {
            n.after = calls;
        }
    }

    /// The runs of instructions compiled to native code so far, and the
    /// instructions their native code runs (`None` when it is off).
    pub fn native_runs(&self) -> Option<(u64, u64)> {
        self.m.vm.native.as_ref().filter(|n| n.on).map(|n| (n.runs, n.spanned))
    }

    /// Makes the following queries read-only (or writing again): the
    /// builtins that change what later queries see ([`WRITES`]) raise
    /// `permission_error(call, sandboxed, Name/Arity)`, as in SWI-Prolog's
    /// sandbox. The rules' own predicates run as before.
    pub fn set_read_only(&mut self, on: bool) {
        let m = &mut self.m;
        if !on {
            for (i, f) in m.writes_withheld.drain(..) {
                m.builtins[i].2 = f;
            }
            return;
        }
        if !m.writes_withheld.is_empty() {
            return;
        }
        for &(name, arity) in WRITES {
            let a = m.atoms.intern(name);
            if let Some(db::Entry::Builtin(i)) = m.db.get(a, arity) {
                m.writes_withheld.push((i, m.builtins[i].2));
                m.builtins[i].2 = sandboxed;
            }
        }
    }

    /// Bytes the engine holds between queries: the data queries left
    /// behind (asserted clauses, global variables, atoms) and the room its
    /// stacks keep. [`Engine::trim`] gives most of the room back.
    pub fn footprint(&self) -> usize {
        self.m.footprint()
    }

    /// Bytes the data of the running query (or, between queries, what
    /// queries left behind) takes: what [`Limits::max_memory`] bounds.
    pub fn memory_used(&self) -> usize {
        self.m.memory_used()
    }

    /// Gives back the room a big query's stacks grew to.
    pub fn trim(&mut self) {
        self.m.trim();
    }

    /// Writes output straight to stdout instead of collecting it in answers.
    pub fn set_echo(&mut self, echo: bool) {
        self.m.echo = echo;
    }

    /// Inference steps of the last query.
    pub fn steps(&self) -> u64 {
        self.m.steps
    }

    /// Counters of the last query.
    pub fn statistics(&self) -> Statistics {
        Statistics { steps: self.m.steps, gc_runs: self.m.gc_runs, heap_cells: self.m.store.heap.len() }
    }

    /// Loads a program. Syntax errors do not stop the rest of the file from
    /// loading; every problem is reported.
    pub fn load(&mut self, name: &str, src: &str) -> LoadReport {
        let starts = std::iter::once(0).chain(src.match_indices('\n').map(|(i, _)| i as u32 + 1)).collect();
        self.m.line_starts.retain(|(n, _)| &**n != name);
        self.m.line_starts.push((Rc::from(name), starts));
        self.m.sources.insert(Rc::from(name), Rc::from(src));
        self.load_program(name, &syntax::parse_program(src), false, false)
    }

    /// Loads clauses that go before the existing clauses of their
    /// predicates (in the order given): a host's faster way to answer a
    /// predicate, which falls through to the program's own clauses where it
    /// does not apply.
    pub fn load_front(&mut self, name: &str, src: &str) -> LoadReport {
        self.load_program(name, &syntax::parse_program(src), false, true)
    }

    /// Registers a builtin written in Rust (its data, if any, in
    /// [`Engine::set_ext`]). Clauses loaded afterwards cannot redefine it.
    pub fn add_builtin(&mut self, name: &str, arity: u32, f: machine::BuiltinFn) {
        self.m.add_builtin(name, arity, f);
    }

    /// The data of the builtins the host added.
    pub fn set_ext(&mut self, ext: Box<dyn std::any::Any>) {
        self.m.ext = Some(ext);
    }

    /// The data of the builtins the host added, if it is a `T`.
    pub fn ext_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.m.ext.as_mut()?.downcast_mut::<T>()
    }

    fn load_program(&mut self, name: &str, program: &syntax::Program, library: bool, front: bool) -> LoadReport {
        let mut report = LoadReport { diagnostics: program.errors.clone() };
        let file: Rc<str> = Rc::from(name);
        self.m.loading = Some(file.clone());
        let mut last_key: Option<(atoms::Atom, u32)> = None;
        let mut seen: Vec<(atoms::Atom, u32)> = Vec::new();
        let mut wiped: Vec<(atoms::Atom, u32)> = Vec::new();
        let mut inits: Vec<(Ast, Span)> = Vec::new();
        let mut in_front: Vec<((atoms::Atom, u32), usize)> = Vec::new();
        for clause in &program.clauses {
            if !library {
                check::singletons(clause, &mut report.diagnostics);
            }
            if let Ast::Compound(n, args, _) = &clause.term
                && n == ":-"
                && args.len() == 1
            {
                if let Ast::Compound(d, dargs, _) = &args[0]
                    && d == "initialization"
                    && !dargs.is_empty()
                {
                    inits.push((dargs[0].clone(), clause.span));
                    continue;
                }
                self.run_directive(&args[0], clause.span, &mut report);
                continue;
            }
            let grammar = matches!(&clause.term, Ast::Compound(n, a, _) if n == "-->" && a.len() == 2);
            let result = if grammar {
                match self.grammar_clause(&clause.term, Some((file.clone(), clause.span))) {
                    Ok(r) => r,
                    Err(e) => {
                        report.diagnostics.push(Diagnostic::error(
                            clause.span,
                            format!("this grammar rule cannot be translated: {e}"),
                            "in this grammar rule",
                        ));
                        continue;
                    }
                }
            } else {
                let mark = self.m.store.heap.len();
                let mut vars = Vec::new();
                let term = ast_to_heap(&clause.term, &mut self.m.atoms, &mut self.m.store, &mut vars);
                let result = compile_clause(&mut self.m.store, term, Some((file.clone(), clause.span)));
                self.m.store.heap.truncate(mark);
                result
            };
            let code = match result {
                Ok(c) => c,
                Err(e) => {
                    let msg = match e {
                        ClauseError::VarHead => "the head of this clause is a variable".to_string(),
                        ClauseError::Cyclic => "this clause is a cyclic term".to_string(),
                        ClauseError::NotCallable(c) => {
                            format!(
                                "`{}` cannot be a goal or a clause head",
                                self.m.format_term(c, &WriteOpts::writeq())
                            )
                        }
                    };
                    report.diagnostics.push(Diagnostic::error(clause.span, msg, "in this clause"));
                    continue;
                }
            };
            let head = head_of(&clause.term);
            let (hname, harity) = head.key().expect("compiled clause has a callable head");
            // A grammar rule's predicate has two more arguments.
            let harity = if grammar { harity + 2 } else { harity };
            let key = (self.m.atoms.intern(hname), harity as u32);
            match self.m.db.get(key.0, key.1) {
                Some(db::Entry::Builtin(_)) | Some(db::Entry::Control(_)) => {
                    report.diagnostics.push(
                        Diagnostic::error(
                            head.span(),
                            format!("`{hname}/{harity}` is a builtin and cannot be redefined"),
                            "this clause",
                        )
                        .with_help("rename your predicate"),
                    );
                    continue;
                }
                _ => {}
            }
            let pred = self.m.db.pred_mut(key.0, key.1).expect("not a builtin");
            if !library && pred.library && !wiped.contains(&key) {
                // A program's own definition replaces the library's.
                pred.clear();
                pred.library = false;
                wiped.push(key);
            }
            pred.library = library;
            if front {
                let n = match in_front.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, n)) => n,
                    None => {
                        in_front.push((key, 0));
                        &mut in_front.last_mut().expect("pushed").1
                    }
                };
                pred.insert(*n, code);
                *n += 1;
                continue;
            }
            pred.add(code, false);
            let dynamic = pred.dynamic;
            if !library && last_key != Some(key) {
                if seen.contains(&key) && !self.m.db.discontiguous.contains(&key) && !dynamic {
                    report.diagnostics.push(
                        Diagnostic::warning(
                            head.span(),
                            format!("clauses of `{hname}/{harity}` are not together in the source file"),
                            "this clause is separated from the earlier ones",
                        )
                        .with_help(format!("keep them together, or declare `:- discontiguous {hname}/{harity}.`")),
                    );
                } else if !seen.contains(&key) {
                    seen.push(key);
                }
                last_key = Some(key);
            }
        }
        for (goal, span) in inits {
            self.run_directive(&goal, span, &mut report);
        }
        self.m.loading = None;
        if !library {
            check::undefined_calls(self, &program.clauses, &mut report.diagnostics);
        }
        report.diagnostics.sort_by_key(|d| d.span.start);
        report
    }

    fn run_directive(&mut self, goal: &Ast, span: Span, report: &mut LoadReport) {
        let text = format!("directive `{}`", short(goal));
        let unbounded = self.m.limits.max_steps.is_none() && self.m.limits.timeout.is_none();
        let saved = unbounded.then(|| self.m.limits.clone());
        if let Some(l) = &saved {
            self.set_limits(Limits { timeout: Some(self.directive_time), ..l.clone() });
        }
        let result = self.run_once(goal);
        if let Some(l) = &saved {
            self.set_limits(l.clone());
        }
        match result {
            Ok(true) => {}
            Ok(false) => report.diagnostics.push(Diagnostic::warning(span, format!("{text} failed"), "this directive")),
            Err(QueryError::Limit { resource, .. }) if resource == "time" && saved.is_some() => {
                report.diagnostics.push(Diagnostic::error(
                    span,
                    format!(
                        "{text} did not finish within {} s: a directive that runs longer is taken for one that never ends",
                        self.directive_time.as_secs_f64()
                    ),
                    "this directive",
                ))
            }
            Err(e) => report.diagnostics.push(Diagnostic::error(
                span,
                format!("{text} raised an error: {e}"),
                "this directive",
            )),
        }
        let out = std::mem::take(&mut self.m.out);
        if !out.is_empty() {
            print!("{out}");
        }
    }

    /// Translates a grammar rule (`Head --> Body`) into a clause with the
    /// library's `'$dcg_rule'/2`. The outer `Err` says why it cannot be.
    fn grammar_clause(
        &mut self,
        rule: &Ast,
        span: Option<(Rc<str>, Span)>,
    ) -> Result<Result<db::ClauseCode, ClauseError>, String> {
        let mut vars = Vec::new();
        let t = ast_to_heap(rule, &mut self.m.atoms, &mut self.m.store, &mut vars);
        let c = self.m.store.new_var();
        let f = self.m.atoms.intern("$dcg_rule");
        let goal = self.m.store.new_struct(f, &[t, c]);
        // The clause is a root, so a collection during the translation
        // keeps it.
        self.m.roots = vec![c];
        self.m.start(goal);
        let r = self.m.solve(false);
        let out = match r {
            Ok(true) => {
                let clause = self.m.roots[0];
                Ok(compile_clause(&mut self.m.store, clause, span))
            }
            Ok(false) => Err("the translation failed".to_string()),
            Err(e) => Err(self.query_error(e).to_string()),
        };
        self.reset();
        out
    }

    /// Runs a parsed goal once (directives).
    fn run_once(&mut self, goal: &Ast) -> Result<bool, QueryError> {
        let mut vars = Vec::new();
        let g = ast_to_heap(goal, &mut self.m.atoms, &mut self.m.store, &mut vars);
        self.m.start(g);
        let r = self.m.solve(false);
        let r = r.map_err(|e| self.query_error(e));
        self.reset();
        r
    }

    fn reset(&mut self) {
        self.m.choices.clear();
        self.m.pending = None;
        self.m.store.trail.clear();
        self.m.store.hb = 0;
        self.m.store.heap.clear();
        self.m.roots.clear();
        self.m.bags_truncate(0);
        self.m.set_gc_at(self.m.store.heap.len() + (1 << 19));
    }

    /// Parses and starts a query; its answers come from the iterator.
    pub fn query(&mut self, text: &str) -> Result<Query<'_>, QueryError> {
        let clause = syntax::parse_term(text).map_err(|d| QueryError::Syntax(Box::new(d)))?;
        self.reset();
        let mut vars = Vec::new();
        let mut g = ast_to_heap(&clause.term, &mut self.m.atoms, &mut self.m.store, &mut vars);
        if self.m.tracer.is_some() {
            let name = self.m.atoms.intern("$trace");
            g = self.m.store.new_struct(name, &[g]);
        }
        self.m.roots = vars.iter().map(|(_, c)| *c).collect();
        let names = vars.into_iter().map(|(n, _)| n).collect();
        self.m.start(g);
        Ok(Query { engine: self, names, state: State::Fresh })
    }

    /// Turns an engine exception into a query error with a readable message.
    fn query_error(&mut self, e: Exc) -> QueryError {
        match e {
            Exc::Halt(c) => QueryError::Halt(c),
            Exc::Limit(r) => {
                let resource = self.m.atoms.name(r).to_string();
                let message = match resource.as_str() {
                    "steps" => format!(
                        "resource_error(steps): the query was stopped after {} inference steps (raise the limit with --max-steps)",
                        self.m.limits.max_steps.unwrap_or(0)
                    ),
                    "time" => format!(
                        "resource_error(time): the query was stopped after {:.1} seconds (raise the limit with --timeout)",
                        self.m.limits.timeout.map_or(0.0, |d| d.as_secs_f64())
                    ),
                    _ => format!(
                        "resource_error(memory): the query's data passed its limit of {} MB (raise the limit with --max-memory)",
                        self.m.limits.max_memory >> 20
                    ),
                };
                QueryError::Limit { resource, message }
            }
            Exc::Throw(t) => {
                self.m.store.heap.truncate(self.m.store.heap.len());
                let c = self.m.store.copy_in(&t, &mut Vec::new());
                let ball = self.m.format_term(c, &WriteOpts::writeq());
                let message = check::describe_error(&mut self.m, c);
                QueryError::Exception { ball, message, term: t }
            }
        }
    }
}

fn head_of(t: &Ast) -> &Ast {
    match t {
        Ast::Compound(n, a, _) if n == ":-" && a.len() == 2 => &a[0],
        // A grammar rule, with or without pushback.
        Ast::Compound(n, a, _) if n == "-->" && a.len() == 2 => match &a[0] {
            Ast::Compound(c, h, _) if c == "," && h.len() == 2 => &h[0],
            h => h,
        },
        t => t,
    }
}

fn short(t: &Ast) -> String {
    match t.key() {
        Some((n, a)) => format!("{n}/{a}"),
        None => "?".into(),
    }
}

/// An argument of `Engine::call`.
pub enum Arg<'a> {
    /// A given term.
    In(&'a Tmpl),
    /// A fresh variable whose value is returned.
    Out,
}

/// A plain view of a term, for the host to inspect.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Atom(String),
    Int(i64),
    Float(f64),
    Str(String),
    Compound(String, Vec<Value>),
    /// A proper list.
    List(Vec<Value>),
    Var,
}

impl Value {
    pub fn as_atom(&self) -> Option<&str> {
        match self {
            Value::Atom(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    /// The text of an atom or a string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Atom(a) | Value::Str(a) => Some(a),
            _ => None,
        }
    }
}

impl Engine {
    /// Calls `name(args...)` and returns, for each of at most `max`
    /// solutions, the values of the `Out` arguments.
    pub fn call(&mut self, name: &str, args: &[Arg], max: usize) -> Result<Vec<Vec<Tmpl>>, QueryError> {
        self.start_call(name, args);
        let mut results = Vec::new();
        let mut retry = false;
        while results.len() < max {
            match self.m.solve(retry) {
                Ok(true) => {
                    let roots = self.m.roots.clone();
                    let copies = roots.iter().map(|&c| self.m.store.copy_out(c, &mut Vec::new())).collect();
                    match copies {
                        Ok(r) => results.push(r),
                        Err(Cyclic) => {
                            let e = self.m.cyclic_answer_error();
                            return Err(self.query_error(e));
                        }
                    }
                    if self.m.choices.is_empty() {
                        break;
                    }
                    retry = true;
                }
                Ok(false) => break,
                Err(e) => return Err(self.query_error(e)),
            }
        }
        Ok(results)
    }

    /// Starts `name(args...)`, its `Out` arguments the machine's roots.
    fn start_call(&mut self, name: &str, args: &[Arg]) {
        self.reset();
        let f = self.m.atoms.intern(name);
        let mut cells = Vec::with_capacity(args.len());
        let mut outs = Vec::new();
        for a in args {
            match a {
                Arg::In(t) => cells.push(self.m.store.copy_in(t, &mut Vec::new())),
                Arg::Out => {
                    let v = self.m.store.new_var();
                    outs.push(v);
                    cells.push(v);
                }
            }
        }
        let goal = self.m.store.new_struct(f, &cells);
        self.m.roots = outs;
        self.m.start(goal);
    }

    /// Calls `name(args...)`, with one `Out` argument, and hands each
    /// solution's value to `f` where it is in the engine ([`Scanned`]: its
    /// [`FlatKey`] read in place, or its cells copied into a buffer the
    /// engine keeps), valid during the call to `f` only; `f` says whether
    /// to go on. What [`Engine::call`] does, for a host that only looks at
    /// each answer (hashes it, say), with no allocation per answer.
    pub fn scan(
        &mut self,
        name: &str,
        args: &[Arg],
        mut f: impl FnMut(&mut Scanned) -> bool,
    ) -> Result<(), QueryError> {
        debug_assert_eq!(args.iter().filter(|a| matches!(a, Arg::Out)).count(), 1, "one Out argument");
        self.start_call(name, args);
        let mut retry = false;
        let mut vars = Vec::new();
        loop {
            match self.m.solve(retry) {
                Ok(true) => {
                    let root = self.m.roots[0];
                    let mut answer = Scanned { store: &mut self.m.store, root, vars: &mut vars, cyclic: false };
                    let go_on = f(&mut answer);
                    if answer.cyclic {
                        let e = self.m.cyclic_answer_error();
                        return Err(self.query_error(e));
                    }
                    if !go_on || self.m.choices.is_empty() {
                        return Ok(());
                    }
                    retry = true;
                }
                Ok(false) => return Ok(()),
                Err(e) => return Err(self.query_error(e)),
            }
        }
    }

    /// Output written by the last call or query and not yet taken.
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.m.out)
    }

    /// Reads a term from text (variables become template variables).
    pub fn parse_term(&mut self, text: &str) -> Result<Tmpl, QueryError> {
        let clause = syntax::parse_term(text).map_err(|d| QueryError::Syntax(Box::new(d)))?;
        self.reset();
        let mut vars = Vec::new();
        let c = ast_to_heap(&clause.term, &mut self.m.atoms, &mut self.m.store, &mut vars);
        // A term read from text is finite.
        self.m.store.copy_out(c, &mut Vec::new()).map_err(|Cyclic| {
            let e = self.m.cyclic_error();
            self.query_error(e)
        })
    }

    /// The atom `name` as a term (no text to read: the name is the atom's
    /// whatever it holds).
    pub fn atom_term(&mut self, name: &str) -> Tmpl {
        let c = Cell::Atom(self.m.atoms.intern(name));
        self.m.store.copy_out(c, &mut Vec::new()).unwrap_or_else(|_| Tmpl { cells: vec![c], nvars: 0 })
    }

    /// The positions of `terms` in the standard order of terms.
    pub fn standard_order(&mut self, terms: &[Tmpl]) -> Vec<u32> {
        self.reset();
        let cells: Vec<Cell> = terms.iter().map(|t| self.m.store.copy_in(t, &mut Vec::new())).collect();
        let mut order: Vec<u32> = (0..terms.len() as u32).collect();
        order.sort_by(|&a, &b| self.m.compare_terms(cells[a as usize], cells[b as usize]));
        self.reset();
        order
    }

    /// A term as `writeq/1` writes it, its variables named `_A`, `_B`...
    pub fn term_text(&mut self, t: &Tmpl) -> String {
        let c = self.m.store.copy_in(t, &mut Vec::new());
        for (k, v) in self.m.term_vars(c).into_iter().enumerate() {
            if let Cell::Ref(a) = v {
                let n = Cell::Atom(self.m.atoms.intern(&format!("_{}", write::var_name(k as i64))));
                self.m.store.heap[a] = self.m.store.new_struct(atoms::atom::VAR_, &[n]);
            }
        }
        self.m.format_term(c, &WriteOpts::writeq())
    }

    /// The elements of a proper list, each as a term of its own (`None`
    /// for anything else).
    pub fn list_terms(&mut self, t: &Tmpl) -> Option<Vec<Tmpl>> {
        let c = self.m.store.copy_in(t, &mut Vec::new());
        let items = self.m.list_items(c)?;
        items.into_iter().map(|x| self.m.store.copy_out(x, &mut Vec::new()).ok()).collect()
    }

    /// The name and arguments of a compound term, each argument a term of
    /// its own (`None` for anything else, lists included).
    pub fn compound_terms(&mut self, t: &Tmpl) -> Option<(String, Vec<Tmpl>)> {
        let c = self.m.store.copy_in(t, &mut Vec::new());
        let c = self.m.store.deref(c);
        let Cell::Str(_) = c else { return None };
        let (f, n) = self.m.store.functor(c)?;
        let args = (0..n)
            .map(|i| self.m.store.copy_out(self.m.store.arg(c, i), &mut Vec::new()).ok())
            .collect::<Option<_>>()?;
        Some((self.m.atoms.name(f).to_string(), args))
    }

    /// A plain view of a term.
    pub fn value(&mut self, t: &Tmpl) -> Value {
        fn view(m: &Machine, c: Cell, depth: usize) -> Value {
            let c = m.store.deref(c);
            if depth > 10_000 {
                return Value::Var;
            }
            match c {
                Cell::Ref(_) | Cell::Fun(..) => Value::Var,
                Cell::Atom(a) => Value::Atom(m.atoms.name(a).to_string()),
                Cell::Int(i) => Value::Int(i),
                Cell::Flt(f) => Value::Float(f),
                Cell::Text(t) => Value::Str(m.store.text(t).to_string()),
                Cell::Lst(_) => match m.list_items(c) {
                    Some(items) => Value::List(items.into_iter().map(|x| view(m, x, depth + 1)).collect()),
                    None => Value::Compound(
                        "[|]".into(),
                        vec![view(m, m.store.arg(c, 0), depth + 1), view(m, m.store.arg(c, 1), depth + 1)],
                    ),
                },
                Cell::Str(_) => {
                    let (f, n) = m.store.functor(c).expect("compound");
                    Value::Compound(
                        m.atoms.name(f).to_string(),
                        (0..n).map(|i| view(m, m.store.arg(c, i), depth + 1)).collect(),
                    )
                }
            }
        }
        let c = self.m.store.copy_in(t, &mut Vec::new());
        view(&self.m, c, 0)
    }

    /// Every predicate the engine knows, sorted, with where it comes from:
    /// the control constructs and builtins, the library's, the program's
    /// (those with clauses, or dynamic). What an editor completes and
    /// tells apart.
    pub fn predicates(&self) -> Vec<(String, u32, Origin)> {
        let mut v: Vec<(String, u32, Origin)> = (self.m.db.iter())
            .filter_map(|(&(a, n), e)| {
                let origin = match e {
                    db::Entry::Control(_) | db::Entry::Builtin(_) => Origin::Builtin,
                    db::Entry::User(i) => {
                        let p = &self.m.db.preds[*i];
                        if p.clauses.is_empty() && !p.dynamic {
                            return None;
                        }
                        if p.library { Origin::Library } else { Origin::Program }
                    }
                };
                Some((self.m.atoms.name(a).to_string(), n, origin))
            })
            .collect();
        v.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
        v
    }

    /// The arities with which `name` is defined (clauses or dynamic).
    pub fn defined_arities(&self, name: &str) -> Vec<u32> {
        let Some(a) = self.m.atoms.lookup(name) else { return Vec::new() };
        let mut v: Vec<u32> = self
            .m
            .db
            .iter()
            .filter(|(k, e)| {
                k.0 == a
                    && match e {
                        db::Entry::User(i) => !self.m.db.preds[*i].clauses.is_empty() || self.m.db.preds[*i].dynamic,
                        _ => true,
                    }
            })
            .map(|(k, _)| k.1)
            .collect();
        v.sort();
        v
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Fresh,
    Running,
    Done,
}

/// The answers of a query, found one at a time.
pub struct Query<'e> {
    engine: &'e mut Engine,
    names: Vec<String>,
    state: State,
}

impl Query<'_> {
    /// Names of the query's variables (without `_`).
    pub fn variables(&self) -> &[String] {
        &self.names
    }

    fn answer(&mut self) -> Result<Answer, Cyclic> {
        let m = &mut self.engine.m;
        let roots = m.roots.clone();
        // A cyclic binding (`X = f(X)`) can be neither written nor copied
        // (the `_` variables are not shown).
        if !self.names.iter().zip(&roots).all(|(name, &c)| name.starts_with('_') || m.store.acyclic(c)) {
            return Err(Cyclic);
        }
        // Name unbound query variables by their own names, other free
        // variables _A, _B...; undo it all afterwards.
        let mut named: Vec<usize> = Vec::new();
        let mut skip = vec![false; roots.len()];
        for (i, (name, &c)) in self.names.iter().zip(&roots).enumerate() {
            if let Cell::Ref(a) = m.store.deref(c) {
                let n = Cell::Atom(m.atoms.intern(name));
                let v = m.store.new_struct(atom::VAR_, &[n]);
                m.store.heap[a] = v;
                named.push(a);
                skip[i] = true;
            }
        }
        let values: Vec<Cell> = roots.iter().map(|&c| m.store.deref(c)).collect();
        let list = m.store.new_list(&values);
        let free = m.term_vars(list);
        for (k, v) in free.iter().enumerate() {
            if let Cell::Ref(a) = *v {
                let n = Cell::Atom(m.atoms.intern(&format!("_{}", write::var_name(k as i64))));
                let s = m.store.new_struct(atom::VAR_, &[n]);
                m.store.heap[a] = s;
                named.push(a);
            }
        }
        let mut bindings = Vec::new();
        for (i, name) in self.names.iter().enumerate() {
            if name.starts_with('_') {
                continue;
            }
            let v = values[i];
            if skip[i] {
                // Unbound: shown only if another variable shares it.
                if let Cell::Str(p) = v
                    && let Cell::Atom(a) = m.store.deref(m.store.heap[p + 1])
                    && m.atoms.name(a) == name
                {
                    continue;
                }
            }
            let text = m.format_term(v, &WriteOpts::writeq());
            let display = m.format_term(v, &WriteOpts::answer());
            // (Finite: checked above.)
            let Ok(term) = m.store.copy_out(v, &mut Vec::new()) else { break };
            bindings.push(Binding { name: name.clone(), text, display, term });
        }
        for a in named {
            m.store.heap[a] = Cell::Ref(a);
        }
        Ok(Answer { bindings, output: std::mem::take(&mut m.out) })
    }
}

impl Iterator for Query<'_> {
    type Item = Result<Answer, QueryError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.state == State::Done {
            return None;
        }
        let retry = self.state == State::Running;
        self.state = State::Running;
        match self.engine.m.solve(retry) {
            Ok(true) => {
                if self.engine.m.choices.is_empty() {
                    // No choice point left: this was the last answer.
                    self.state = State::Done;
                }
                match self.answer() {
                    Ok(a) => Some(Ok(a)),
                    Err(Cyclic) => {
                        self.state = State::Done;
                        let e = self.engine.m.cyclic_answer_error();
                        Some(Err(self.engine.query_error(e)))
                    }
                }
            }
            Ok(false) => {
                self.state = State::Done;
                None
            }
            Err(e) => {
                self.state = State::Done;
                Some(Err(self.engine.query_error(e)))
            }
        }
    }
}

impl Query<'_> {
    /// Whether the last answer was the last one (no choice point left).
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Output written since the last answer (after the query ends).
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.engine.m.out)
    }
}

/// What a host adds to an engine beyond a program: builtins written in
/// Rust, clauses put in front of the program's that answer through them,
/// and their data ([`Engine::add_builtin`], [`Engine::load_front`],
/// [`Engine::set_ext`]). A GDL game's network of propositions is one. An
/// extension is shared between threads: each thread builds its own engine
/// and installs the same extension in it.
pub trait Extension: Send + Sync {
    /// Adds the extension to an engine that has loaded the program it
    /// serves.
    fn install(self: std::sync::Arc<Self>, engine: &mut Engine) -> Result<(), String>;
    /// Turns the extension's answers off (the program alone answers, to
    /// compare the two) or back on, in an engine it is installed in.
    fn set_enabled(&self, engine: &mut Engine, on: bool);
    /// The extension as `Any`, for a host that knows its concrete type
    /// (to send it to another machine, say).
    fn as_any(&self) -> &dyn std::any::Any;
}
