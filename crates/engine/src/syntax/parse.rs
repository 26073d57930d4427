//! Text → clauses with spans. The only module that touches pest's pairs.
//!
//! A file is first split into clauses by a small scanner (which also finds
//! unclosed brackets, quotes and comments), so that every clause is parsed
//! on its own and all syntax errors of a file are reported at once. Each
//! clause is then parsed by the pest grammar into flat sequences of operands
//! and operator candidates, which precedence climbing turns into terms.
// Errors are the cold path; a `Diagnostic` by value keeps the code plain.
#![allow(clippy::result_large_err)]

use super::ast::{Ast, Clause, Span};
use super::diag::Diagnostic;
use super::ops::{self, OpType};
use pest::Parser;
use pest::iterators::Pair;

#[derive(pest_derive::Parser)]
#[grammar = "../../../grammar/rules.pest"]
struct RulesParser;

pub use Rule as GrammarRule;

/// Deepest bracket nesting accepted in source text.
pub const MAX_NESTING: usize = 200;
/// Deepest nesting of brackets and prefix operators in one term.
const MAX_DEPTH: usize = 1000;

thread_local! {
    static NESTING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts one level of nesting while alive; refuses past `MAX_DEPTH`.
struct Nest;

impl Nest {
    fn enter(span: Span) -> Result<Nest, Diagnostic> {
        let d = NESTING.with(|n| {
            n.set(n.get() + 1);
            n.get()
        });
        let guard = Nest;
        if d > MAX_DEPTH {
            return Err(Diagnostic::error(span, "term nested too deeply", "too deep here")
                .with_help(format!("terms may nest at most {MAX_DEPTH} levels of brackets and prefix operators")));
        }
        Ok(guard)
    }
}

impl Drop for Nest {
    fn drop(&mut self) {
        NESTING.with(|n| n.set(n.get() - 1));
    }
}

/// The result of reading a program: the clauses that parsed and the
/// diagnostics of those that did not.
#[derive(Debug, Default)]
pub struct Program {
    pub clauses: Vec<Clause>,
    pub errors: Vec<Diagnostic>,
}

/// Reads every clause of a program, collecting all syntax errors.
pub fn parse_program(src: &str) -> Program {
    let (chunks, mut errors) = split_clauses(src);
    let mut clauses = Vec::new();
    for (start, end) in chunks {
        match parse_term_at(src, start, end) {
            Ok(term) => {
                let vars = collect_vars(&term);
                clauses.push(Clause { term, vars, span: Span::new(start, end) });
            }
            Err(e) => errors.push(e),
        }
    }
    errors.sort_by_key(|e| e.span.start);
    Program { clauses, errors }
}

/// Reads one term (an optional final `.` is allowed), e.g. a query or the
/// text given to `term_to_atom/2`.
pub fn parse_term(text: &str) -> Result<Clause, Diagnostic> {
    if text.trim().is_empty() {
        return Err(Diagnostic::error(Span::new(0, text.len()), "expected a term", "nothing here"));
    }
    let (chunks, errors) = split_clauses(text);
    if let Some(e) = errors.into_iter().next() {
        // A missing end is fine for a lone term.
        if !e.message.starts_with("missing `.`") {
            return Err(e);
        }
    }
    let trimmed_end = text.trim_end().len();
    let start = chunks.first().map_or(text.len() - text.trim_start().len(), |c| c.0);
    if chunks.len() > 1 {
        let second = chunks[1].0;
        return Err(Diagnostic::error(
            Span::new(second, trimmed_end),
            "unexpected text after the end of the term",
            "this comes after the `.` that ended the term",
        ));
    }
    let term = parse_term_at(text, start, trimmed_end)?;
    let vars = collect_vars(&term);
    Ok(Clause { term, vars, span: Span::new(start, trimmed_end) })
}

fn is_symbol_char(c: u8) -> bool {
    b"+-*/\\^<>=~:.?@#&$".contains(&c)
}

fn is_layout(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// Splits source text into clause byte ranges (each ending after its `.`),
/// reporting unterminated quotes and comments and unbalanced brackets.
fn split_clauses(src: &str) -> (Vec<(usize, usize)>, Vec<Diagnostic>) {
    let b = src.as_bytes();
    let mut chunks = Vec::new();
    let mut errors = Vec::new();
    let mut i = 0;
    let mut start: Option<usize> = None;
    let mut last_content_end = 0;
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let mut broken = false;
    while i < b.len() {
        let c = b[i];
        if is_layout(c) {
            i += 1;
            continue;
        }
        if c == b'%' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            match src[i + 2..].find("*/") {
                Some(k) => {
                    i = i + 2 + k + 2;
                    continue;
                }
                None => {
                    errors.push(Diagnostic::error(
                        Span::new(i, i + 2),
                        "unterminated block comment",
                        "this comment is never closed with `*/`",
                    ));
                    return (chunks, errors);
                }
            }
        }
        if start.is_none() {
            start = Some(i);
        }
        match c {
            b'\'' | b'"' | b'`' => {
                let open = i;
                i += 1;
                let mut closed = false;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i = escape_end(b, i),
                        x if x == c => {
                            if b.get(i + 1) == Some(&c) {
                                i += 2;
                            } else {
                                i += 1;
                                closed = true;
                                break;
                            }
                        }
                        b'\n' => break,
                        _ => i += 1,
                    }
                }
                if !closed {
                    let what = match c {
                        b'\'' => "unterminated quoted atom",
                        b'"' => "unterminated string",
                        _ => "unterminated back-quoted string",
                    };
                    let line_end = src[open..].find('\n').map_or(src.len(), |k| open + k);
                    errors.push(
                        Diagnostic::error(
                            Span::new(open, line_end),
                            what,
                            "the quote opened here is not closed on this line",
                        )
                        .with_help(format!(
                            "close it with {} (a quote inside is written doubled or escaped)",
                            c as char
                        )),
                    );
                    // The rest of the line is lost; the next line starts a
                    // new clause.
                    start = None;
                    stack.clear();
                    broken = false;
                    i = line_end;
                    continue;
                }
                last_content_end = i;
            }
            b'0' if b.get(i + 1) == Some(&b'\'')
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                i += 2;
                if b.get(i) == Some(&b'\\') || (b.get(i) == Some(&b'\'') && b.get(i + 1) == Some(&b'\'')) {
                    i += 2;
                } else if i < b.len() {
                    i += utf8_len(b[i]);
                }
                last_content_end = i.min(b.len());
            }
            b'(' | b'[' | b'{' => {
                stack.push((c, i));
                if stack.len() > MAX_NESTING && !broken {
                    errors.push(Diagnostic::error(
                        Span::new(i, i + 1),
                        format!("term nested too deeply (more than {MAX_NESTING} brackets)"),
                        "too deep here",
                    ));
                    broken = true;
                }
                i += 1;
                last_content_end = i;
            }
            b')' | b']' | b'}' => {
                let want = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match stack.pop() {
                    Some((o, _)) if o == want => {}
                    Some((o, at)) => {
                        if !broken {
                            errors.push(
                                Diagnostic::error(
                                    Span::new(i, i + 1),
                                    format!("`{}` does not match the `{}` it would close", c as char, o as char),
                                    format!("expected `{}` here", closer(o)),
                                )
                                .with_related(Span::new(at, at + 1), "opened here"),
                            );
                            broken = true;
                        }
                    }
                    None => {
                        if !broken {
                            errors.push(Diagnostic::error(
                                Span::new(i, i + 1),
                                format!("unexpected `{}`", c as char),
                                "nothing is open here for this to close",
                            ));
                            broken = true;
                        }
                    }
                }
                i += 1;
                last_content_end = i;
            }
            b'.' if (i + 1 >= b.len() || is_layout(b[i + 1]) || b[i + 1] == b'%')
                && (i == 0 || !is_symbol_char(b[i - 1]) || last_content_end != i) =>
            {
                let s = start.take().unwrap_or(i);
                if let Some(&(o, at)) = stack.last() {
                    if !broken {
                        errors.push(
                            Diagnostic::error(
                                Span::new(at, at + 1),
                                format!("`{}` is not closed before the end of the clause", o as char),
                                format!("this `{}` needs a matching `{}`", o as char, closer(o)),
                            )
                            .with_related(Span::new(i, i + 1), "the clause ends here"),
                        );
                    }
                } else if !broken {
                    chunks.push((s, i + 1));
                }
                stack.clear();
                broken = false;
                i += 1;
                last_content_end = i;
            }
            _ => {
                i += utf8_len(c);
                last_content_end = i.min(b.len());
            }
        }
    }
    if let Some(s) = start
        && !broken
    {
        if let Some(&(o, at)) = stack.last() {
            errors.push(Diagnostic::error(
                Span::new(at, at + 1),
                format!("`{}` is never closed", o as char),
                format!("this `{}` needs a matching `{}`", o as char, closer(o)),
            ));
        } else {
            let end = last_content_end.max(s + 1).min(src.len());
            errors.push(
                Diagnostic::error(
                    Span::new(s, end),
                    "missing `.` at the end of the clause",
                    "this clause is not ended",
                )
                .with_help("end every clause with `.` followed by a space or a newline"),
            );
            chunks.push((s, end));
        }
    }
    (chunks, errors)
}

fn closer(open: u8) -> char {
    match open {
        b'(' => ')',
        b'[' => ']',
        _ => '}',
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn rule_name(r: &Rule) -> Option<&'static str> {
    Some(match r {
        Rule::end => "`.` (the end of the clause)",
        Rule::expr
        | Rule::arg
        | Rule::tail
        | Rule::number
        | Rule::string
        | Rule::backquoted
        | Rule::variable
        | Rule::compound
        | Rule::list
        | Rule::curly
        | Rule::paren
        | Rule::atom
        | Rule::functor => "a term",
        Rule::EOI => "the end of the text",
        _ => return None,
    })
}

fn parse_term_at(src: &str, start: usize, end: usize) -> Result<Ast, Diagnostic> {
    match Plain::read(src, start, end) {
        Some(term) => Ok(term),
        None => grammar_term_at(src, start, end),
    }
}

/// Reads the term in `src[start..end]` by the grammar.
fn grammar_term_at(src: &str, start: usize, end: usize) -> Result<Ast, Diagnostic> {
    let text = &src[start..end];
    let mut pairs = RulesParser::parse(Rule::lone_term, text).map_err(|e| {
        let pos = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((p, _)) => p,
        };
        let at = start + pos;
        let found = src[at..].chars().next();
        let mut expected: Vec<&str> = match &e.variant {
            pest::error::ErrorVariant::ParsingError { positives, .. } => {
                positives.iter().filter_map(rule_name).collect()
            }
            pest::error::ErrorVariant::CustomError { .. } => vec![],
        };
        expected.sort();
        expected.dedup();
        let found_text = match found {
            None => "the end of the text".to_string(),
            Some(c) => format!("`{}`", c),
        };
        let what = if expected.is_empty() {
            format!("unexpected {found_text}")
        } else {
            format!("unexpected {found_text}: expected {}", expected.join(" or "))
        };
        let len = found.map_or(0, |c| c.len_utf8());
        let mut d = Diagnostic::error(Span::new(at, at + len), what, "not expected here");
        if found == Some(',') || found == Some(')') || found == Some(']') || found == Some('|') {
            d = d.with_help("an argument is missing here");
        }
        d
    })?;
    let top = pairs.next().expect("lone_term always yields a pair");
    let expr = top.into_inner().next().expect("lone_term holds an expression");
    build_expr(expr, src, start, 1200)
}

/// The reader's fast path for the commonest clause of a large program, a
/// fact such as `r_sum(343, 142, 485).`: names, compound terms and
/// unsigned integers, with spaces between them. It gives exactly the term
/// the grammar gives (spans included), or `None` for anything else, and
/// then the grammar reads the clause as usual, so it changes no answer and
/// no error; what it saves is pest's tracking on files of hundreds of
/// thousands of facts (the static relations of a GDL translation).
struct Plain<'a> {
    b: &'a [u8],
    at: usize,
    depth: usize,
}

impl Plain<'_> {
    /// Nesting it reads at most (deeper terms go to the grammar).
    const DEPTH: usize = 64;

    fn read(src: &str, start: usize, end: usize) -> Option<Ast> {
        let mut p = Plain { b: &src.as_bytes()[..end], at: start, depth: 0 };
        let term = p.term()?;
        p.skip();
        // The clause's `.`, then nothing.
        (p.b.get(p.at) == Some(&b'.') && p.at + 1 == end).then_some(term)
    }

    fn skip(&mut self) {
        while self.b.get(self.at).is_some_and(|&c| c == b' ' || c == b'\n') {
            self.at += 1;
        }
    }

    fn term(&mut self) -> Option<Ast> {
        let start = self.at;
        let first = *self.b.get(start)?;
        if first.is_ascii_digit() {
            let mut i = start;
            while self.b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            // `0'c`, `0x1F`, `1.5`, `1e3`, `1_000` are the grammar's.
            if !matches!(self.b.get(i), Some(b',' | b')' | b' ' | b'\n')) {
                return None;
            }
            let text = std::str::from_utf8(&self.b[start..i]).ok()?;
            self.at = i;
            return Some(Ast::Int(text.parse().ok()?, Span::new(start, i)));
        }
        if !first.is_ascii_lowercase() {
            return None;
        }
        let mut i = start + 1;
        while self.b.get(i).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_') {
            i += 1;
        }
        let name = std::str::from_utf8(&self.b[start..i]).ok()?;
        // An operator's name (`mod`, `is`, `dynamic`) is the grammar's.
        if ops::is_op(name) {
            return None;
        }
        self.at = i;
        if self.b.get(i) != Some(&b'(') {
            return Some(Ast::Atom(name.to_string(), Span::new(start, i)));
        }
        self.depth += 1;
        if self.depth > Self::DEPTH {
            return None;
        }
        self.at += 1;
        let mut args = Vec::new();
        loop {
            self.skip();
            args.push(self.term()?);
            self.skip();
            match self.b.get(self.at)? {
                b',' => self.at += 1,
                b')' => break,
                _ => return None,
            }
        }
        self.at += 1;
        self.depth -= 1;
        Some(Ast::Compound(name.to_string(), args, Span::new(start, self.at)))
    }
}

fn span_of(p: &Pair<Rule>, offset: usize) -> Span {
    let s = p.as_span();
    Span::new(offset + s.start(), offset + s.end())
}

/// One element of a flat operator sequence.
#[derive(Debug)]
enum Item {
    /// An operand; the flag says it is a number literal (so a `-` glued
    /// to its left makes a negative number).
    Operand(Ast, bool),
    Name {
        name: String,
        span: Span,
        quoted: bool,
    },
    Comma(Span),
    Bar(Span),
    /// An operand already taken by the parser (its span is kept).
    Taken(Span),
}

impl Item {
    fn span(&self) -> Span {
        match self {
            Item::Operand(a, _) => a.span(),
            Item::Name { span, .. } | Item::Comma(span) | Item::Bar(span) | Item::Taken(span) => *span,
        }
    }
}

fn build_expr(pair: Pair<Rule>, src: &str, offset: usize, max: u32) -> Result<Ast, Diagnostic> {
    let _nest = Nest::enter(span_of(&pair, offset))?;
    let mut items = Vec::new();
    for p in pair.into_inner() {
        let span = span_of(&p, offset);
        let item = match p.as_rule() {
            Rule::comma => Item::Comma(span),
            Rule::bar => Item::Bar(span),
            Rule::atom => {
                let (name, quoted) = atom_text(p.into_inner().next().expect("atom has a kind"))?;
                Item::Name { name, span, quoted }
            }
            Rule::number => Item::Operand(build_number(p, offset)?, true),
            Rule::compound if follows_operand(&items) => {
                // `a-(b)`: after a term, a name glued to `(` is an infix
                // operator applied to a parenthesised term.
                match build_operand(p, src, offset)? {
                    Ast::Compound(ref mut name, ref mut args, sp) if ops::infix(name).is_some() => {
                        let name = std::mem::take(name);
                        let mut args = std::mem::take(args);
                        let name_span = Span::new(sp.start, sp.start + name.len());
                        items.push(Item::Name { name, span: name_span, quoted: false });
                        let mut t = args.pop().expect("compound has arguments");
                        while let Some(a) = args.pop() {
                            let s = a.span().join(t.span());
                            t = Ast::Compound(",".into(), vec![a, t], s);
                        }
                        Item::Operand(t, false)
                    }
                    other => Item::Operand(other, false),
                }
            }
            _ => Item::Operand(build_operand(p, src, offset)?, false),
        };
        items.push(item);
    }
    let mut p = Pratt { items, pos: 0, src };
    let (t, _) = p.parse(max, max)?;
    if p.pos < p.items.len() {
        return Err(p.unexpected(p.pos));
    }
    Ok(t)
}

/// Whether the items so far end with a complete operand.
fn follows_operand(items: &[Item]) -> bool {
    match items.last() {
        Some(Item::Operand(..)) => true,
        Some(Item::Name { name, quoted, .. }) => *quoted || !ops::is_op(name),
        _ => false,
    }
}

struct Pratt<'a> {
    items: Vec<Item>,
    pos: usize,
    src: &'a str,
}

impl Pratt<'_> {
    fn unexpected(&self, at: usize) -> Diagnostic {
        let item = &self.items[at];
        let prev_end = if at > 0 { self.items[at - 1].span().end } else { item.span().start };
        match item {
            Item::Comma(s) if at == 0 || matches!(self.items[at - 1], Item::Comma(_) | Item::Bar(_)) => {
                Diagnostic::error(
                    *s,
                    "unexpected `,`: a term is missing before it",
                    "expected a term before this comma",
                )
            }
            Item::Comma(s) => Diagnostic::error(*s, "unexpected `,`", "a comma cannot stand here")
                .with_help("inside arguments, put a term with commas in parentheses"),
            Item::Bar(s) => Diagnostic::error(*s, "unexpected `|`", "a bar cannot stand here"),
            _ => {
                let d = Diagnostic::error(
                    item.span(),
                    "operator expected between two terms",
                    "expected an operator before this term",
                );
                if self.newline_between(prev_end, item.span().start) {
                    d.with_help("is a `.` missing at the end of the previous clause?")
                } else {
                    d.with_help("put an operator or a `,` between the terms")
                }
            }
        }
    }

    fn newline_between(&self, a: usize, b: usize) -> bool {
        self.src.get(a..b).is_some_and(|gap| gap.contains('\n'))
    }

    fn infix_at(&self, i: usize) -> Option<(String, u32, OpType, Span)> {
        match self.items.get(i)? {
            Item::Comma(s) => Some((",".into(), 1000, OpType::Xfy, *s)),
            Item::Bar(s) => Some((";".into(), 1100, OpType::Xfy, *s)),
            Item::Name { name, span, quoted: false, .. } => {
                let (p, t) = ops::infix(name)?;
                Some((name.clone(), p, t, *span))
            }
            _ => None,
        }
    }

    fn starts_term(&self, i: usize) -> bool {
        match self.items.get(i) {
            None | Some(Item::Comma(_)) | Some(Item::Bar(_)) | Some(Item::Taken(_)) => false,
            Some(Item::Operand(..)) => true,
            Some(Item::Name { name, quoted, .. }) => {
                // An infix-only operator after a prefix operator means the
                // prefix operator is an atom operand (`- = X`).
                *quoted || ops::infix(name).is_none() || ops::prefix(name).is_some() || self.infix_at(i + 1).is_none()
            }
        }
    }

    /// Parses a term of priority at most `max`, consuming infix operators
    /// of priority at most `infix_max`.
    fn parse(&mut self, max: u32, infix_max: u32) -> Result<(Ast, u32), Diagnostic> {
        let (mut left, mut left_prec) = self.primary(max)?;
        while let Some((name, p, ty, span)) = self.infix_at(self.pos) {
            if p > max || p > infix_max {
                break;
            }
            let (la, ra) = ops::infix_args(p, ty);
            if left_prec > la {
                return Err(Diagnostic::error(
                    span,
                    format!("operator priority clash: `{name}` cannot take the term before it as its left argument"),
                    "this operator",
                )
                .with_related(left.span(), "this term binds less tightly")
                .with_help("add parentheses to say which is meant"));
            }
            self.pos += 1;
            self.need_operand(&name, span)?;
            if ty != OpType::Xfy {
                let (right, _) = self.parse(ra, ra)?;
                let sp = left.span().join(right.span());
                left = Ast::Compound(name, vec![left, right], sp);
                left_prec = p;
                continue;
            }
            // A chain `a , b , c` of right-associative operators of this
            // priority is read in a loop and folded from the right.
            let mut operands = vec![left];
            let mut names = vec![name];
            loop {
                let (right, _) = self.parse(p, p - 1)?;
                operands.push(right);
                match self.infix_at(self.pos) {
                    Some((n2, p2, OpType::Xfy, s2)) if p2 == p => {
                        self.pos += 1;
                        self.need_operand(&n2, s2)?;
                        names.push(n2);
                    }
                    _ => break,
                }
            }
            let mut acc = operands.pop().expect("a right operand");
            while let (Some(l), Some(n)) = (operands.pop(), names.pop()) {
                let sp = l.span().join(acc.span());
                acc = Ast::Compound(n, vec![l, acc], sp);
            }
            left = acc;
            left_prec = p;
        }
        Ok((left, left_prec))
    }

    fn need_operand(&self, name: &str, span: Span) -> Result<(), Diagnostic> {
        if self.pos >= self.items.len() {
            return Err(Diagnostic::error(
                span,
                format!("expected a term after the operator `{name}`"),
                "this operator has no right-hand argument",
            ));
        }
        Ok(())
    }

    fn primary(&mut self, max: u32) -> Result<(Ast, u32), Diagnostic> {
        let i = self.pos;
        let Some(item) = self.items.get(i) else {
            let s = self.items.last().map_or(Span::default(), |x| Span::new(x.span().end, x.span().end));
            return Err(Diagnostic::error(s, "expected a term", "a term is missing here"));
        };
        match item {
            Item::Operand(..) => {
                self.pos += 1;
                let taken = Item::Taken(self.items[i].span());
                let Item::Operand(a, _) = std::mem::replace(&mut self.items[i], taken) else {
                    unreachable!("matched an operand")
                };
                Ok((a, 0))
            }
            Item::Comma(_) | Item::Bar(_) | Item::Taken(_) => Err(self.unexpected(i)),
            Item::Name { name, span, quoted, .. } => {
                let (name, span, quoted) = (name.clone(), *span, *quoted);
                self.pos += 1;
                if !quoted && name == "-" && matches!(self.items.get(i + 1), Some(Item::Operand(_, true))) {
                    let next = &self.items[i + 1];
                    if next.span().start == span.end {
                        self.pos += 1;
                        let sp = span.join(next.span());
                        return Ok((
                            match next {
                                Item::Operand(Ast::Int(v, _), _) => Ast::Int(-v, sp),
                                Item::Operand(Ast::Float(v, _), _) => Ast::Float(-v, sp),
                                _ => unreachable!("marked as a number"),
                            },
                            0,
                        ));
                    }
                }
                if !quoted
                    && let Some((p, ty)) = ops::prefix(&name)
                    && self.starts_term(i + 1)
                {
                    if p > max {
                        return Err(Diagnostic::error(
                                    span,
                                    format!("operator priority clash: prefix operator `{name}` (priority {p}) cannot stand where at most {max} is allowed"),
                                    "this operator",
                                )
                                .with_help("put the term in parentheses"));
                    }
                    let arg_max = ops::prefix_arg(p, ty);
                    let _nest = Nest::enter(span)?;
                    let (arg, _) = self.parse(arg_max, arg_max)?;
                    let sp = span.join(arg.span());
                    return Ok((Ast::Compound(name, vec![arg], sp), p));
                }
                Ok((Ast::Atom(name, span), 0))
            }
        }
    }
}

fn atom_text(p: Pair<Rule>) -> Result<(String, bool), Diagnostic> {
    Ok(match p.as_rule() {
        Rule::empty_list => ("[]".into(), false),
        Rule::empty_curly => ("{}".into(), false),
        Rule::quoted => {
            let s = p.as_str();
            (unescape(&s[1..s.len() - 1], '\'', p.as_span().start() + 1)?, true)
        }
        _ => (p.as_str().to_string(), false),
    })
}

fn build_number(p: Pair<Rule>, offset: usize) -> Result<Ast, Diagnostic> {
    let span = span_of(&p, offset);
    let inner = p.into_inner().next().expect("number has a kind");
    let text = inner.as_str();
    let too_big = || {
        Diagnostic::error(span, "integer too large", "does not fit in 64 bits")
            .with_help("integers range from -9223372036854775808 to 9223372036854775807")
    };
    Ok(match inner.as_rule() {
        Rule::float => {
            Ast::Float(text.parse::<f64>().map_err(|_| Diagnostic::error(span, "malformed float", "here"))?, span)
        }
        Rule::integer => Ast::Int(text.parse::<i64>().map_err(|_| too_big())?, span),
        Rule::based => {
            let radix = match &text[..2] {
                "0x" => 16,
                "0o" => 8,
                _ => 2,
            };
            Ast::Int(i64::from_str_radix(&text[2..], radix).map_err(|_| too_big())?, span)
        }
        _ => {
            let body = &text[2..];
            let code = if body == "''" {
                '\'' as i64
            } else {
                let s = unescape(body, '\'', 0)?;
                s.chars().next().map_or(0, |c| c as i64)
            };
            Ast::Int(code, span)
        }
    })
}

fn build_operand(p: Pair<Rule>, src: &str, offset: usize) -> Result<Ast, Diagnostic> {
    let span = span_of(&p, offset);
    Ok(match p.as_rule() {
        Rule::variable => Ast::Var(p.as_str().to_string(), span),
        Rule::string => {
            let s = p.as_str();
            Ast::Str(unescape(&s[1..s.len() - 1], '"', span.start + 1)?, span)
        }
        Rule::backquoted => {
            let s = p.as_str();
            let text = unescape(&s[1..s.len() - 1], '`', span.start + 1)?;
            let mut list = Ast::Atom("[]".into(), span);
            for c in text.chars().rev() {
                list = Ast::Compound("[|]".into(), vec![Ast::Int(c as i64, span), list], span);
            }
            list
        }
        Rule::compound => {
            let mut inner = p.into_inner();
            let functor = inner.next().expect("compound has a functor");
            let atom = functor.into_inner().next().expect("functor has an atom");
            let (name, _) = atom_text(atom.into_inner().next().expect("atom kind"))?;
            let args = inner.map(|a| build_expr(a, src, offset, 1200)).collect::<Result<Vec<_>, _>>()?;
            Ast::Compound(name, args, span)
        }
        Rule::list => {
            let mut elems = Vec::new();
            let mut tail = Ast::Atom("[]".into(), Span::new(span.end - 1, span.end));
            for a in p.into_inner() {
                if a.as_rule() == Rule::tail {
                    tail = build_expr(a.into_inner().next().expect("tail holds a term"), src, offset, 1200)?;
                } else {
                    elems.push(build_expr(a, src, offset, 1200)?);
                }
            }
            let mut list = tail;
            let n = elems.len();
            for (i, e) in elems.into_iter().rev().enumerate() {
                // The whole list, brackets and all, is the first cell's.
                let sp = if i + 1 == n { span } else { e.span().join(list.span()) };
                list = Ast::Compound("[|]".into(), vec![e, list], sp);
            }
            list
        }
        Rule::curly => {
            let inner = build_expr(p.into_inner().next().expect("curly holds a term"), src, offset, 1200)?;
            Ast::Compound("{}".into(), vec![inner], span)
        }
        Rule::paren => {
            let inner = build_expr(p.into_inner().next().expect("paren holds a term"), src, offset, 1200)?;
            inner.with_span(span)
        }
        r => unreachable!("not an operand rule: {r:?}"),
    })
}

/// Resolves escapes in the body of a quoted item. `base` is the byte offset
/// of the body in the source (for error spans).
/// Where the escape at `b[i]` (a backslash) ends: after its closing
/// backslash for a numeric escape (`\\x41\\`, `\\101\\`), else after the pair.
fn escape_end(b: &[u8], i: usize) -> usize {
    let digits = match b.get(i + 1) {
        Some(b'x') => b[i + 2..].iter().take_while(|d| d.is_ascii_hexdigit()).count() + 1,
        Some(b'0'..=b'7') => b[i + 1..].iter().take_while(|d| matches!(d, b'0'..=b'7')).count(),
        _ => 0,
    };
    match b.get(i + 1 + digits) {
        Some(b'\\') if digits > 0 && !(digits == 1 && b[i + 1] == b'x') => i + 2 + digits,
        _ => i + 2,
    }
}

pub fn unescape(body: &str, quote: char, base: usize) -> Result<String, Diagnostic> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == quote {
            // A doubled quote stands for one.
            chars.next();
            out.push(quote);
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            break;
        };
        let bad = |msg: &str| Diagnostic::error(Span::new(base + i, base + i + 2), msg.to_string(), "this escape");
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0' if !matches!(chars.peek(), Some((_, '0'..='7'))) => out.push('\0'),
            'e' => out.push('\u{1b}'),
            's' => out.push(' '),
            'z' => {}
            '\n' => {}
            '\\' | '\'' | '"' | '`' => out.push(e),
            'x' => {
                let mut v: u32 = 0;
                for (_, d) in chars.by_ref() {
                    if d == '\\' {
                        break;
                    }
                    v = v.saturating_mul(16).saturating_add(d.to_digit(16).ok_or_else(|| bad("malformed \\x escape"))?);
                }
                out.push(char::from_u32(v).ok_or_else(|| bad("not a character code"))?);
            }
            '0'..='7' => {
                let mut v: u32 = e.to_digit(8).unwrap_or(0);
                for (_, d) in chars.by_ref() {
                    if d == '\\' {
                        break;
                    }
                    v = v.saturating_mul(8).saturating_add(d.to_digit(8).ok_or_else(|| bad("malformed octal escape"))?);
                }
                out.push(char::from_u32(v).ok_or_else(|| bad("not a character code"))?);
            }
            _ => return Err(bad("unknown escape sequence")),
        }
    }
    Ok(out)
}

/// Variables of a term in order of first appearance, with every occurrence.
/// `_` is anonymous and not listed.
fn collect_vars(t: &Ast) -> Vec<(String, Vec<Span>)> {
    let mut out: Vec<(String, Vec<Span>)> = Vec::new();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match t {
            Ast::Var(n, s) if n != "_" => match out.iter_mut().find(|(m, _)| m == n) {
                Some((_, spans)) => spans.push(*s),
                None => out.push((n.clone(), vec![*s])),
            },
            Ast::Compound(_, args, _) => stack.extend(args.iter().rev()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every clause of `src` that the fast path reads, read alike by the
    /// grammar; returns how many it read.
    fn agree(src: &str) -> usize {
        let (chunks, _) = split_clauses(src);
        let mut read = 0;
        for (start, end) in chunks {
            if let Some(fast) = Plain::read(src, start, end) {
                let slow = grammar_term_at(src, start, end);
                assert_eq!(Ok(&fast), slow.as_ref().map_err(|e| &e.message), "{:?}", &src[start..end]);
                read += 1;
            }
        }
        read
    }

    #[test]
    fn the_fast_path_reads_facts_as_the_grammar_does() {
        let src = "r_sum(343, 142, 485).\nr_lt(0,007).\nfoo.\nf(g(h(a)), b_C9,\n  1).\n";
        assert_eq!(agree(src), 4);
        // What it leaves to the grammar: operators, signs, other bases,
        // floats, quotes, variables, lists, a space before `(`, comments,
        // integers too big, and whatever is not a term.
        for text in [
            "f(mod).",
            "mod(1, 2).",
            "f(-1).",
            "f(0'a).",
            "f(0x1F).",
            "f(1.5).",
            "f(1e3).",
            "f('A').",
            "f(X).",
            "f([a]).",
            "f (a).",
            "f(a) % c\n.",
            "f(99999999999999999999).",
            "f().",
            "f(a,).",
            "1.",
            "f(a)\t.",
            "f(a) :- g.",
            "f(\"s\").",
            "f(a)b.",
        ] {
            let (chunks, _) = split_clauses(text);
            for (start, end) in chunks {
                assert_eq!(Plain::read(text, start, end), None, "{text}");
            }
        }
    }

    /// A fact-shaped term: names, integers, compounds, spaces.
    fn fact() -> impl Strategy<Value = String> {
        let leaf =
            prop_oneof!["[a-z][a-zA-Z0-9_]{0,4}", "[0-9]{1,3}", Just("mod".to_string()), Just("is".to_string()),];
        leaf.prop_recursive(4, 24, 4, |inner| {
            ("[a-z][a-z_]{0,3}", prop::collection::vec((inner, "[ \n]{0,2}", "[ \n]{0,2}"), 1..4)).prop_map(
                |(name, args)| {
                    let args: Vec<String> = args.into_iter().map(|(a, l, r)| format!("{l}{a}{r}")).collect();
                    format!("{name}({})", args.join(","))
                },
            )
        })
    }

    proptest! {
        #[test]
        fn generated_facts_read_alike(facts in prop::collection::vec((fact(), "[ \n]{0,2}"), 1..8)) {
            let src: String = facts.iter().map(|(f, l)| format!("p({f}){l}.\n")).collect();
            let read = agree(&src);
            // Each fact is read by the fast path unless an operator's
            // name is in it.
            let named_op = |f: &str| f.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(ops::is_op);
            let ops = facts.iter().filter(|(f, _)| named_op(f)).count();
            prop_assert!(read >= facts.len() - ops, "{read} of {} read: {src:?}", facts.len());
        }

        #[test]
        fn any_text_reads_alike(src in "[a-z0-9_XA '(),.\\[\\]%\n-]{0,40}") {
            agree(&src);
        }
    }
}
