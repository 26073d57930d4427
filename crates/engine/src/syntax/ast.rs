//! The parsed term with source spans: what `syntax::parse` produces and
//! `engine::Database` compiles.

/// A byte range in the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// A term as read, every node with its span.
#[derive(Clone, Debug, PartialEq)]
pub enum Ast {
    Var(String, Span),
    Atom(String, Span),
    Int(i64, Span),
    Float(f64, Span),
    Str(String, Span),
    Compound(String, Vec<Ast>, Span),
}

impl Drop for Ast {
    // Long lists and operator chains make deep terms: free them with a
    // loop, not recursion.
    fn drop(&mut self) {
        if let Ast::Compound(_, args, _) = self {
            if args.iter().all(|a| !matches!(a, Ast::Compound(..))) {
                return;
            }
            let mut stack: Vec<Ast> = std::mem::take(args);
            while let Some(mut a) = stack.pop() {
                if let Ast::Compound(_, args, _) = &mut a {
                    stack.append(args);
                }
            }
        }
    }
}

impl Ast {
    /// The same term with another span.
    pub fn with_span(mut self, span: Span) -> Ast {
        match &mut self {
            Ast::Var(_, s)
            | Ast::Atom(_, s)
            | Ast::Int(_, s)
            | Ast::Float(_, s)
            | Ast::Str(_, s)
            | Ast::Compound(_, _, s) => *s = span,
        }
        self
    }

    pub fn span(&self) -> Span {
        match self {
            Ast::Var(_, s)
            | Ast::Atom(_, s)
            | Ast::Int(_, s)
            | Ast::Float(_, s)
            | Ast::Str(_, s)
            | Ast::Compound(_, _, s) => *s,
        }
    }

    /// The name and arity of a callable term.
    pub fn key(&self) -> Option<(&str, usize)> {
        match self {
            Ast::Atom(n, _) => Some((n, 0)),
            Ast::Compound(n, a, _) => Some((n, a.len())),
            _ => None,
        }
    }

    /// The arguments of a compound (empty for anything else).
    pub fn args(&self) -> &[Ast] {
        match self {
            Ast::Compound(_, a, _) => a,
            _ => &[],
        }
    }

    /// Whether this is the compound `name/arity`.
    pub fn is(&self, name: &str, arity: usize) -> bool {
        self.key() == Some((name, arity))
    }

    /// A clause's head and its body (`None` for a fact); `None` for a
    /// directive (`:- G`, `?- G`) or a grammar rule (`H --> B`).
    pub fn head_body(&self) -> Option<(&Ast, Option<&Ast>)> {
        if self.is(":-", 2) {
            return Some((&self.args()[0], Some(&self.args()[1])));
        }
        if self.is(":-", 1) || self.is("?-", 1) || self.is("-->", 2) {
            return None;
        }
        Some((self, None))
    }

    /// The goals of a body's conjunctions (`A, B, C`, `(A, B), C`), in
    /// order.
    pub fn conjuncts(&self) -> Vec<&Ast> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            if t.is(",", 2) {
                stack.push(&t.args()[1]);
                stack.push(&t.args()[0]);
            } else {
                out.push(t);
            }
        }
        out
    }
}

/// One clause or directive read from a file.
#[derive(Clone, Debug)]
pub struct Clause {
    pub term: Ast,
    /// Names of the variables in order of first appearance, with the span of
    /// each occurrence (for singleton warnings).
    pub vars: Vec<(String, Vec<Span>)>,
    pub span: Span,
}
