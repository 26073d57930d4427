//! KIF text → S-expressions → GDL rules, with spans. The only module that
//! touches pest's pairs for GDL.
//!
//! Brackets are matched by a scanner first, which reports an unclosed or a
//! stray bracket with both places and bounds the nesting, so the recursive
//! descent below never goes deeper than [`MAX_NESTING`].
// Errors are the cold path; a `Diagnostic` by value keeps the code plain.
#![allow(clippy::result_large_err)]

use super::{Atom, Clause, Lit, Term};
use crate::syntax::{Diagnostic, Span};
use pest::Parser;
use pest::iterators::Pair;

#[derive(pest_derive::Parser)]
#[grammar = "../../../grammar/gdl.pest"]
struct KifParser;

/// Deepest bracket nesting accepted.
pub const MAX_NESTING: usize = 200;

/// An S-expression as read. Symbols and variable names are lower-cased
/// (GDL is case-insensitive); a variable's name excludes its `?`.
#[derive(Clone, Debug, PartialEq)]
pub enum Sexp {
    Sym(String, Span),
    Var(String, Span),
    List(Vec<Sexp>, Span),
}

impl Sexp {
    pub fn span(&self) -> Span {
        match self {
            Sexp::Sym(_, s) | Sexp::Var(_, s) | Sexp::List(_, s) => *s,
        }
    }
}

/// Reads a KIF file into S-expressions; every bracket error is reported.
pub fn read_sexps(src: &str) -> Result<Vec<Sexp>, Vec<Diagnostic>> {
    let errors = scan_brackets(src);
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut pairs = KifParser::parse(Rule::file, src).map_err(|e| vec![pest_error(src, e)])?;
    let file = pairs.next().expect("file");
    Ok(file.into_inner().filter(|p| p.as_rule() != Rule::EOI).map(sexp).collect())
}

fn sexp(p: Pair<Rule>) -> Sexp {
    let span = Span::new(p.as_span().start(), p.as_span().end());
    match p.as_rule() {
        Rule::symbol => Sexp::Sym(p.as_str().to_lowercase(), span),
        Rule::variable => Sexp::Var(p.as_str()[1..].to_lowercase(), span),
        Rule::list => Sexp::List(p.into_inner().map(sexp).collect(), span),
        r => unreachable!("grammar rule {r:?} in a sexp"),
    }
}

fn pest_error(src: &str, e: pest::error::Error<Rule>) -> Diagnostic {
    let at = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let end = src[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    let what = src[at..].chars().next().map_or("the end of the file".to_string(), |c| format!("`{c}`"));
    Diagnostic::error(Span::new(at, end), format!("unexpected {what}"), "not part of a symbol, variable or list")
        .with_help("GDL has symbols, ?variables and (lists); strings are not part of the language")
}

/// Finds unbalanced brackets and nesting deeper than [`MAX_NESTING`],
/// skipping comments.
fn scan_brackets(src: &str) -> Vec<Diagnostic> {
    let mut open: Vec<usize> = Vec::new();
    let mut errors = Vec::new();
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' => {
                if open.len() == MAX_NESTING {
                    errors.push(
                        Diagnostic::error(Span::new(i, i + 1), "brackets nested too deeply", "this one")
                            .with_help(format!("at most {MAX_NESTING} levels of brackets are accepted")),
                    );
                    return errors;
                }
                open.push(i);
            }
            b')' if open.pop().is_none() => {
                errors.push(Diagnostic::error(
                    Span::new(i, i + 1),
                    "`)` without a matching `(`",
                    "nothing is open here",
                ));
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(&o) = open.last() {
        let d = Diagnostic::error(Span::new(o, o + 1), "`(` is never closed", "opened here")
            .with_help(format!("{} bracket(s) still open at the end of the file", open.len()));
        errors.push(d);
    }
    errors
}

/// The sentences of a file: facts and `(<= head body...)` rules.
pub fn read_clauses(sexps: &[Sexp], errors: &mut Vec<Diagnostic>) -> Vec<Clause> {
    let mut rules = Vec::new();
    for s in sexps {
        match clause(s) {
            Ok(r) => rules.push(r),
            Err(d) => errors.push(d),
        }
    }
    rules
}

fn clause(s: &Sexp) -> Result<Clause, Diagnostic> {
    if let Sexp::List(items, span) = s
        && let Some(Sexp::Sym(op, _)) = items.first()
        && op == "<="
    {
        let Some(h) = items.get(1) else {
            return Err(Diagnostic::error(*span, "a rule needs a head", "`(<= head body...)` expected"));
        };
        let head = atom(h)?;
        let body = items[2..].iter().map(literal).collect::<Result<Vec<_>, _>>()?;
        return Ok(Clause { head, body, span: *span });
    }
    Ok(Clause { head: atom(s)?, body: Vec::new(), span: s.span() })
}

/// A relation applied to arguments: `p` or `(p a b)`.
fn atom(s: &Sexp) -> Result<Atom, Diagnostic> {
    match s {
        Sexp::Sym(name, span) => Ok(Atom { rel: name.clone(), rel_span: *span, args: Vec::new(), span: *span }),
        Sexp::List(items, span) => match items.first() {
            Some(Sexp::Sym(name, rs)) => Ok(Atom {
                rel: name.clone(),
                rel_span: *rs,
                args: items[1..].iter().map(term).collect::<Result<_, _>>()?,
                span: *span,
            }),
            Some(other) => Err(Diagnostic::error(other.span(), "a relation name must be a symbol", "not a symbol")),
            None => Err(Diagnostic::error(*span, "an empty list is not a sentence", "`()`")),
        },
        Sexp::Var(_, span) => {
            Err(Diagnostic::error(*span, "a variable cannot stand for a sentence", "a relation was expected here"))
        }
    }
}

fn term(s: &Sexp) -> Result<Term, Diagnostic> {
    Ok(match s {
        Sexp::Sym(name, span) => Term::Sym(name.clone(), *span),
        Sexp::Var(name, span) => Term::Var(name.clone(), *span),
        Sexp::List(items, span) => match items.first() {
            Some(Sexp::Sym(name, _)) if items.len() == 1 => Term::Sym(name.clone(), *span),
            Some(Sexp::Sym(name, _)) => {
                Term::Fn(name.clone(), items[1..].iter().map(term).collect::<Result<_, _>>()?, *span)
            }
            Some(other) => {
                return Err(Diagnostic::error(other.span(), "a function name must be a symbol", "not a symbol"));
            }
            None => return Err(Diagnostic::error(*span, "an empty list is not a term", "`()`")),
        },
    })
}

fn literal(s: &Sexp) -> Result<Lit, Diagnostic> {
    if let Sexp::List(items, span) = s
        && let Some(Sexp::Sym(op, _)) = items.first()
    {
        let args = &items[1..];
        match op.as_str() {
            "not" => {
                let [inner] = args else {
                    return Err(Diagnostic::error(*span, "`not` takes one literal", "here"));
                };
                return Ok(Lit::Not(Box::new(literal(inner)?), *span));
            }
            "distinct" => {
                let [a, b] = args else {
                    return Err(Diagnostic::error(*span, "`distinct` takes two terms", "here"));
                };
                return Ok(Lit::Distinct(term(a)?, term(b)?, *span));
            }
            "or" => {
                if args.is_empty() {
                    return Err(Diagnostic::error(*span, "`or` needs at least one literal", "here"));
                }
                return Ok(Lit::Or(args.iter().map(literal).collect::<Result<_, _>>()?, *span));
            }
            "and" => {
                return Ok(Lit::And(args.iter().map(literal).collect::<Result<_, _>>()?, *span));
            }
            _ => {}
        }
    }
    Ok(Lit::Pos(atom(s)?))
}
