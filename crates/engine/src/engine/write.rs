//! Term output as SWI-Prolog writes it: `write`, `writeq`, `print`,
//! `write_canonical`. Operators, quoting, lists, `{}`, `'$VAR'` names and
//! the shortest float that reads back. Iterative: any depth is fine.

use super::atoms::atom;
use super::machine::Machine;
use super::term::{Cell, TermWalk};
use crate::syntax::ops;

/// Options of `write_term/2`.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOpts {
    pub quoted: bool,
    pub ignore_ops: bool,
    pub numbervars: bool,
    /// 0 means no limit.
    pub max_depth: usize,
    /// Name variables `A`, `B`... and `_` for singletons (write_canonical).
    pub name_vars: bool,
    /// A space after the commas between arguments and list elements, as
    /// the toplevel prints answers.
    pub spacing: bool,
}

impl WriteOpts {
    pub fn write() -> WriteOpts {
        WriteOpts { numbervars: true, ..Default::default() }
    }
    pub fn writeq() -> WriteOpts {
        WriteOpts { quoted: true, numbervars: true, ..Default::default() }
    }
    /// How the toplevel shows answers: quoted, with spaces after commas.
    pub fn answer() -> WriteOpts {
        WriteOpts { quoted: true, numbervars: true, spacing: true, ..Default::default() }
    }
    pub fn canonical() -> WriteOpts {
        WriteOpts { quoted: true, ignore_ops: true, name_vars: true, ..Default::default() }
    }
}

enum Task {
    Term(Cell, u32, usize),
    Text(&'static str),
    Owned(String),
    ListRest(Cell, usize, usize),
    /// The argument list of a compound from argument `i` on.
    Args(usize, u32, u32, usize),
}

fn is_symbol_char(c: char) -> bool {
    "+-*/\\^<>=~:.?@#&$".contains(c)
}

fn is_alnum(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether an atom must be quoted to read back.
pub fn atom_needs_quotes(s: &str) -> bool {
    match s {
        "[]" | "!" | ";" | "{}" => return false,
        "" | "," | "|" | "." => return true,
        _ => {}
    }
    let mut cs = s.chars();
    let first = cs.next().expect("non-empty");
    if first.is_lowercase() {
        return !s.chars().all(is_alnum);
    }
    if s.chars().all(is_symbol_char) {
        return s.starts_with("/*");
    }
    true
}

/// Quotes text with `q` as the quote character, escaping as SWI does.
pub fn quote_text(s: &str, q: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            '\0' => out.push_str("\\000\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:x}\\", c as u32)),
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// Formats an atom name, quoted if `quoted` and needed.
pub fn format_atom(s: &str, quoted: bool) -> String {
    if quoted && atom_needs_quotes(s) { quote_text(s, '\'') } else { s.to_string() }
}

/// The shortest text of a float that reads back, in SWI-Prolog's layout.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "1.5NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "1.0Inf".into() } else { "-1.0Inf".into() };
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    let e = format!("{:e}", f.abs());
    let (mant, exp) = e.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let decpt = exp + 1;
    if decpt <= -4 || decpt > 15 {
        let rest = if digits.len() > 1 { &digits[1..] } else { "0" };
        let es = if exp >= 0 { format!("+{exp}") } else { format!("{exp}") };
        format!("{sign}{}.{rest}e{es}", &digits[..1])
    } else if decpt <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt as usize >= digits.len() {
        format!("{sign}{digits}{}.0", "0".repeat(decpt as usize - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..decpt as usize], &digits[decpt as usize..])
    }
}

/// The name `'$VAR'(N)` stands for: A..Z, then A1...
pub fn var_name(n: i64) -> String {
    let letter = (b'A' + (n % 26) as u8) as char;
    if n >= 26 { format!("{letter}{}", n / 26) } else { letter.to_string() }
}

struct Out {
    s: String,
    /// The last token was a prefix `-` or `+`: a digit after it needs a
    /// space (`- 1` is not the number -1).
    after_sign: bool,
}

impl Out {
    /// Appends a token, with a space if it would otherwise glue to the
    /// previous one.
    fn token(&mut self, t: &str) {
        if let (Some(a), Some(b)) = (self.s.chars().last(), t.chars().next()) {
            let glue = (is_symbol_char(a) && is_symbol_char(b))
                || (is_alnum(a) && is_alnum(b))
                || (self.after_sign && b.is_ascii_digit());
            if glue {
                self.s.push(' ');
            }
        }
        self.after_sign = false;
        self.s.push_str(t);
    }
}

impl Machine {
    /// The priority of a term as an operand (0 for a non-operator term).
    fn term_prec(&self, c: Cell, opts: &WriteOpts) -> u32 {
        if opts.ignore_ops {
            return 0;
        }
        match self.store.deref(c) {
            Cell::Str(p) => {
                let Cell::Fun(f, n) = self.store.heap[p] else {
                    return 0;
                };
                let name = self.atoms.name(f);
                match n {
                    2 => ops::infix(name).map_or(0, |(p, _)| p),
                    1 => ops::prefix(name).map_or(0, |(p, _)| p),
                    _ => 0,
                }
            }
            Cell::Atom(a) => {
                let name = self.atoms.name(a);
                if ops::is_op(name) { ops::infix(name).or(ops::prefix(name)).map_or(0, |(p, _)| p) } else { 0 }
            }
            _ => 0,
        }
    }

    /// Writes a term to a string.
    pub fn format_term(&mut self, c: Cell, opts: &WriteOpts) -> String {
        let mut names: Vec<(usize, String)> = Vec::new();
        if opts.name_vars {
            let mut counts: Vec<(usize, usize)> = Vec::new();
            self.var_occurrences(c, &mut counts);
            let mut k = 0;
            for (a, n) in counts {
                if n == 1 {
                    names.push((a, "_".into()));
                } else {
                    names.push((a, var_name(k)));
                    k += 1;
                }
            }
        }
        let mut out = Out { s: String::new(), after_sign: false };
        let mut tasks = vec![Task::Term(c, 1200, 0)];
        // A cyclic term is written to a depth of 10 (the writing would not
        // end); it is checked for once the writing outgrows the heap.
        let mut check_in = self.store.heap.len() + 1024;
        while let Some(t) = tasks.pop() {
            check_in = check_in.saturating_sub(1);
            if check_in == 1 && !(1..=10).contains(&opts.max_depth) && !self.store.acyclic(c) {
                return self.format_term(c, &WriteOpts { max_depth: 10, ..*opts });
            }
            match t {
                Task::Text(s) => out.token(s),
                Task::Owned(s) => out.token(&s),
                Task::ListRest(tail, depth, count) => match self.store.deref(tail) {
                    Cell::Lst(q) => {
                        out.s.push_str(if opts.spacing { ", " } else { "," });
                        if opts.max_depth > 0 && count >= opts.max_depth {
                            out.s.push_str("...]");
                            continue;
                        }
                        tasks.push(Task::ListRest(self.store.heap[q + 1], depth, count + 1));
                        tasks.push(Task::Term(self.store.heap[q], 999, depth + 1));
                    }
                    Cell::Atom(atom::NIL) => out.s.push(']'),
                    other => {
                        out.s.push('|');
                        tasks.push(Task::Text("]"));
                        tasks.push(Task::Term(other, 999, depth + 1));
                    }
                },
                Task::Args(p, i, n, depth) => {
                    if i > 0 {
                        out.s.push_str(if opts.spacing { ", " } else { "," });
                    }
                    if i + 1 < n {
                        tasks.push(Task::Args(p, i + 1, n, depth));
                    } else {
                        tasks.push(Task::Text(")"));
                    }
                    tasks.push(Task::Term(self.store.heap[p + 1 + i as usize], 999, depth + 1));
                }
                Task::Term(c, max, depth) => {
                    if opts.max_depth > 0 && depth > opts.max_depth {
                        out.token("...");
                        continue;
                    }
                    self.write_one(c, max, depth, opts, &names, &mut out, &mut tasks);
                }
            }
        }
        out.s
    }

    fn var_occurrences(&self, c: Cell, counts: &mut Vec<(usize, usize)>) {
        let mut walk = TermWalk::new(&self.store, c);
        while let Some(c) = walk.next(&self.store) {
            if let Cell::Ref(a) = c {
                match counts.iter_mut().find(|(b, _)| *b == a) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((a, 1)),
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write_one(
        &self,
        c: Cell,
        max: u32,
        depth: usize,
        opts: &WriteOpts,
        names: &[(usize, String)],
        out: &mut Out,
        tasks: &mut Vec<Task>,
    ) {
        match self.store.deref(c) {
            Cell::Ref(a) => match names.iter().find(|(b, _)| *b == a) {
                Some((_, n)) => out.token(n),
                None => out.token(&format!("_G{a}")),
            },
            Cell::Int(i) => out.token(&i.to_string()),
            Cell::Flt(f) => out.token(&format_float(f)),
            Cell::Text(t) => {
                let s = self.store.text(t);
                if opts.quoted { out.token(&quote_text(s, '"')) } else { out.s.push_str(s) }
            }
            Cell::Atom(a) => {
                let name = self.atoms.name(a);
                let text = format_atom(name, opts.quoted);
                let prec = if opts.ignore_ops { 0 } else { self.term_prec(Cell::Atom(a), opts) };
                if prec > max && max < 999 {
                    out.token("(");
                    out.s.push_str(&text);
                    out.s.push(')');
                } else if opts.quoted || !name.is_empty() {
                    out.token(&text);
                }
            }
            Cell::Lst(p) => {
                out.token("[");
                tasks.push(Task::ListRest(self.store.heap[p + 1], depth, 1));
                tasks.push(Task::Term(self.store.heap[p], 999, depth + 1));
            }
            Cell::Str(p) => {
                let Cell::Fun(f, n) = self.store.heap[p] else { unreachable!() };
                let name = self.atoms.name(f);
                let arg = |i: usize| self.store.heap[p + 1 + i];
                if f == atom::VAR_ && n == 1 && opts.numbervars {
                    match self.store.deref(arg(0)) {
                        Cell::Int(k) if k >= 0 => {
                            out.token(&var_name(k));
                            return;
                        }
                        Cell::Atom(a) => {
                            out.token(self.atoms.name(a));
                            return;
                        }
                        Cell::Text(t) => {
                            out.token(self.store.text(t));
                            return;
                        }
                        _ => {}
                    }
                }
                if !opts.ignore_ops {
                    if f == atom::CURLY && n == 1 {
                        out.token("{");
                        tasks.push(Task::Text("}"));
                        tasks.push(Task::Term(arg(0), 1200, depth + 1));
                        return;
                    }
                    if n == 2
                        && let Some((pr, ty)) = ops::infix(name)
                    {
                        let (la, ra) = ops::infix_args(pr, ty);
                        let paren = pr > max;
                        if paren {
                            out.token("(");
                            tasks.push(Task::Text(")"));
                        }
                        tasks.push(Task::Term(arg(1), ra, depth + 1));
                        let op = if f == atom::COMMA {
                            ",".to_string()
                        } else if name.chars().next().is_some_and(is_alnum) {
                            format!(" {} ", format_atom(name, opts.quoted))
                        } else {
                            format_atom(name, opts.quoted)
                        };
                        tasks.push(Task::Owned(op));
                        tasks.push(Task::Term(arg(0), la, depth + 1));
                        return;
                    }
                    if n == 1
                        && let Some((pr, ty)) = ops::prefix(name)
                    {
                        let am = ops::prefix_arg(pr, ty);
                        let paren = pr > max;
                        if paren {
                            out.token("(");
                        }
                        out.token(&format_atom(name, opts.quoted));
                        let a = self.store.deref(arg(0));
                        let arg_prec = self.term_prec(a, opts);
                        let numeric = matches!(a, Cell::Int(_) | Cell::Flt(_));
                        let atom_op = matches!(a, Cell::Atom(x) if ops::is_op(self.atoms.name(x)));
                        if paren {
                            tasks.push(Task::Text(")"));
                        }
                        if arg_prec > am || atom_op {
                            out.s.push_str(" (");
                            tasks.push(Task::Text(")"));
                            tasks.push(Task::Term(a, 1200, depth + 1));
                        } else {
                            if numeric && (f == atom::MINUS || f == atom::PLUS)
                                || name.chars().next().is_some_and(is_alnum)
                            {
                                out.s.push(' ');
                            } else if f == atom::MINUS || f == atom::PLUS {
                                out.after_sign = true;
                            }
                            tasks.push(Task::Term(a, am, depth + 1));
                        }
                        return;
                    }
                }
                out.token(&format_atom(name, opts.quoted));
                out.s.push('(');
                tasks.push(Task::Args(p, 0, n, depth));
            }
            Cell::Fun(..) => out.token("<header>"),
        }
    }
}
