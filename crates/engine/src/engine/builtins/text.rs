//! Builtins on atoms, strings, characters and numbers as text; reading
//! terms from text; `format/3` sinks.

use super::super::atoms::atom;
use super::super::machine::{Exc, Machine, Res};
use super::super::term::Cell;
use super::super::write::{WriteOpts, format_float};
use super::*;

pub(super) fn bi_char_code(m: &mut Machine, a: &[Cell]) -> Res {
    match m.store.deref(a[0]) {
        Cell::Atom(x) => {
            let s = m.atoms.name(x);
            let mut cs = s.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Ok(m.store.unify(a[1], Cell::Int(c as i64))),
                _ => Err(m.type_error(atom::CHARACTER, Cell::Atom(x))),
            }
        }
        Cell::Ref(_) => match m.store.deref(a[1]) {
            Cell::Int(c) => {
                let ch = m.code_char(c)?;
                let at = Cell::Atom(m.atoms.intern(&ch.to_string()));
                Ok(m.store.unify(a[0], at))
            }
            Cell::Ref(_) => Err(m.inst_error()),
            other => Err(m.type_error(atom::INTEGER, other)),
        },
        other => Err(m.type_error(atom::CHARACTER, other)),
    }
}

pub(super) fn bi_atom_number(m: &mut Machine, a: &[Cell]) -> Res {
    match m.store.deref(a[0]) {
        Cell::Ref(_) => match m.store.deref(a[1]) {
            Cell::Ref(_) => Err(m.inst_error()),
            n @ (Cell::Int(_) | Cell::Flt(_)) => {
                let s = m.atomic_text(n)?;
                let at = Cell::Atom(m.atoms.intern(&s));
                Ok(m.store.unify(a[0], at))
            }
            other => Err(m.type_error(atom::NUMBER, other)),
        },
        Cell::Atom(x) => {
            let s = m.atoms.name(x).to_string();
            match parse_number(&s) {
                Some(n) => Ok(m.store.unify(a[1], n)),
                None => Ok(false),
            }
        }
        other => Err(m.type_error(atom::ATOM, other)),
    }
}

pub(super) fn bi_string_code(m: &mut Machine, a: &[Cell]) -> Res {
    let i = m.int_of(a[0])?;
    let s = m.text_of(a[1])?;
    if i < 1 {
        return Ok(false);
    }
    match s.chars().nth(i as usize - 1) {
        Some(c) => Ok(m.store.unify(a[2], Cell::Int(c as i64))),
        None => Ok(false),
    }
}

pub(super) fn bi_split_string(m: &mut Machine, a: &[Cell]) -> Res {
    let s = m.text_of(a[0])?;
    let seps: Vec<char> = m.text_of(a[1])?.chars().collect();
    let pad: Vec<char> = m.text_of(a[2])?.chars().collect();
    let parts: Vec<&str> = if seps.is_empty() { vec![&s[..]] } else { s.split(|c| seps.contains(&c)).collect() };
    let cells: Vec<Cell> = parts
        .into_iter()
        .map(|p| {
            let t = p.trim_matches(|c| pad.contains(&c)).to_string();
            m.store.new_text(&t)
        })
        .collect();
    let l = m.store.new_list(&cells);
    Ok(m.store.unify(a[3], l))
}

pub(super) fn bi_atomic_list_concat3(m: &mut Machine, a: &[Cell]) -> Res {
    let sep = m.text_of(a[1])?;
    let l = m.store.deref(a[0]);
    // Joining mode when the list is ground enough.
    if let Some(items) = m.list_items(l)
        && items.iter().all(|&c| !matches!(m.store.deref(c), Cell::Ref(_)))
    {
        let mut parts = Vec::new();
        for it in items {
            parts.push(m.atomic_text(it)?);
        }
        let r = Cell::Atom(m.atoms.intern(&parts.join(&sep)));
        return Ok(m.store.unify(a[2], r));
    }
    // Splitting mode.
    let whole = m.store.deref(a[2]);
    if let Cell::Ref(_) = whole {
        return Err(m.inst_error());
    }
    if sep.is_empty() {
        return Err(m.domain_error(atom::NOT_EMPTY_LIST, Cell::Atom(atom::EMPTY)));
    }
    let text = m.atomic_text(whole)?;
    let cells: Vec<Cell> = text.split(&sep[..]).map(|p| Cell::Atom(m.atoms.intern(p))).collect();
    let r = m.store.new_list(&cells);
    Ok(m.store.unify(a[0], r))
}

pub(super) fn bi_char_type(m: &mut Machine, a: &[Cell]) -> Res {
    let c = match m.store.deref(a[0]) {
        Cell::Int(i) => m.code_char(i)?,
        Cell::Atom(x) => match m.atoms.name(x).chars().next() {
            Some(c) => c,
            None => return Ok(false),
        },
        Cell::Ref(_) => return Err(m.inst_error()),
        other => return Err(m.type_error(atom::CHARACTER, other)),
    };
    let ty = m.store.deref(a[1]);
    let (name, arg) = match ty {
        Cell::Atom(x) => (m.atoms.name(x).to_string(), None),
        Cell::Str(p) => {
            let Cell::Fun(f, 1) = m.store.heap[p] else {
                return Ok(false);
            };
            (m.atoms.name(f).to_string(), Some(m.store.heap[p + 1]))
        }
        Cell::Ref(_) => return Err(m.inst_error()),
        _ => return Ok(false),
    };
    let is_code = matches!(m.store.deref(a[0]), Cell::Int(_));
    let mk = |m: &mut Machine, ch: char| -> Cell {
        if is_code { Cell::Int(ch as i64) } else { Cell::Atom(m.atoms.intern(&ch.to_string())) }
    };
    Ok(match (name.as_str(), arg) {
        ("alpha", None) => c.is_alphanumeric() || c == '_',
        ("alnum", None) => c.is_alphanumeric(),
        ("csym", None) => c.is_alphanumeric() || c == '_',
        ("csymf", None) => c.is_alphabetic() || c == '_',
        ("digit", None) => c.is_ascii_digit(),
        ("space" | "white", None) => c.is_whitespace(),
        ("upper", None) => c.is_uppercase(),
        ("lower", None) => c.is_lowercase(),
        ("punct", None) => c.is_ascii_punctuation(),
        ("graph", None) => !c.is_whitespace() && !c.is_control(),
        ("end_of_line", None) => c == '\n' || c == '\r',
        ("digit", Some(w)) => match c.to_digit(10) {
            Some(d) => m.store.unify(w, Cell::Int(d as i64)),
            None => false,
        },
        ("to_lower", Some(l)) => {
            let v = mk(m, c.to_lowercase().next().unwrap_or(c));
            m.store.unify(l, v)
        }
        ("to_upper", Some(u)) => {
            let v = mk(m, c.to_uppercase().next().unwrap_or(c));
            m.store.unify(u, v)
        }
        ("upper", Some(l)) => {
            c.is_uppercase() && {
                let v = mk(m, c.to_lowercase().next().unwrap_or(c));
                m.store.unify(l, v)
            }
        }
        ("lower", Some(u)) => {
            c.is_lowercase() && {
                let v = mk(m, c.to_uppercase().next().unwrap_or(c));
                m.store.unify(u, v)
            }
        }
        _ => false,
    })
}

pub(super) fn bi_format3(m: &mut Machine, a: &[Cell]) -> Res {
    let s = m.format_impl(a[1], a[2])?;
    let sink = m.store.deref(a[0]);
    match sink {
        Cell::Atom(x) if m.atoms.name(x) == "user_error" => {
            eprint!("{s}");
            Ok(true)
        }
        Cell::Atom(x) if m.atoms.name(x) == "user_output" => {
            m.emit(&s);
            Ok(true)
        }
        Cell::Str(p) => {
            let Cell::Fun(f, 1) = m.store.heap[p] else {
                return Err(m.domain_error(atom::FORMAT, sink));
            };
            let target = m.store.heap[p + 1];
            let v = match m.atoms.name(f) {
                "atom" => Cell::Atom(m.atoms.intern(&s)),
                "string" => m.store.new_text(&s),
                "codes" => {
                    let cs: Vec<Cell> = s.chars().map(|c| Cell::Int(c as i64)).collect();
                    m.store.new_list(&cs)
                }
                "chars" => {
                    let cs: Vec<Cell> = s.chars().map(|c| Cell::Atom(m.atoms.intern(&c.to_string()))).collect();
                    m.store.new_list(&cs)
                }
                _ => return Err(m.domain_error(atom::STREAM, sink)),
            };
            Ok(m.store.unify(target, v))
        }
        Cell::Ref(_) => Err(m.inst_error()),
        other => Err(m.domain_error(atom::STREAM, other)),
    }
}

pub(super) fn bi_atom_to_term(m: &mut Machine, a: &[Cell]) -> Res {
    let s = m.text_of(a[0])?;
    let (t, vars) = m.read_term_text(&s)?;
    let pairs: Vec<Cell> = vars
        .into_iter()
        .map(|(name, v)| {
            let n = Cell::Atom(m.atoms.intern(&name));
            m.store.new_struct(atom::EQ, &[n, v])
        })
        .collect();
    let l = m.store.new_list(&pairs);
    Ok(m.store.unify(a[1], t) && m.store.unify(a[2], l))
}

/// Parses the text of a number as Prolog reads it (with a leading `-`,
/// `0x`, `0'c`...). `None` if it is not exactly one number.
pub fn parse_number(s: &str) -> Option<Cell> {
    let t = s.trim_start();
    if t.is_empty() {
        return None;
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if !body.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let clause = crate::syntax::parse_term(body).ok()?;
    match clause.term {
        crate::syntax::Ast::Int(i, _) => Some(Cell::Int(if neg { -i } else { i })),
        crate::syntax::Ast::Float(f, _) => Some(Cell::Flt(if neg { -f } else { f })),
        _ => None,
    }
}

impl Machine {
    pub(super) fn code_char(&mut self, c: i64) -> Result<char, Exc> {
        u32::try_from(c).ok().and_then(char::from_u32).ok_or_else(|| self.repr_error(atom::CHARACTER_CODE))
    }

    /// Text of an atom, string, number, code list or char list.
    pub fn text_of(&mut self, c: Cell) -> Result<String, Exc> {
        match self.store.deref(c) {
            Cell::Ref(_) => Err(self.inst_error()),
            Cell::Atom(a) => Ok(self.atoms.name(a).to_string()),
            Cell::Text(t) => Ok(self.store.text(t).to_string()),
            Cell::Int(i) => Ok(i.to_string()),
            Cell::Flt(f) => Ok(format_float(f)),
            l @ Cell::Lst(_) => {
                let items = self.list_vec(l)?;
                let mut s = String::new();
                for it in items {
                    match self.store.deref(it) {
                        Cell::Int(c) => s.push(self.code_char(c)?),
                        Cell::Atom(a) if self.atoms.name(a).chars().count() == 1 => s.push_str(self.atoms.name(a)),
                        Cell::Ref(_) => return Err(self.inst_error()),
                        _ => return Err(self.type_error(atom::TEXT, l)),
                    }
                }
                Ok(s)
            }
            other => Err(self.type_error(atom::TEXT, other)),
        }
    }

    /// Text of an atomic term (for concatenation).
    pub fn atomic_text(&mut self, c: Cell) -> Result<String, Exc> {
        match self.store.deref(c) {
            Cell::Ref(_) => Err(self.inst_error()),
            c @ (Cell::Atom(_) | Cell::Text(_) | Cell::Int(_) | Cell::Flt(_)) => self.text_of(c),
            other => Err(self.type_error(atom::ATOMIC, other)),
        }
    }

    /// Text as an atom, string, number, code list or char list.
    pub(super) fn make_text(&mut self, s: &str, kind: Conv) -> Result<Cell, Exc> {
        let cells = match kind {
            Conv::Codes | Conv::Chars => 3 * s.len(),
            _ => 0,
        };
        self.check_memory(s.len() + cells * std::mem::size_of::<Cell>())?;
        Ok(match kind {
            Conv::Atom => Cell::Atom(self.atoms.intern(s)),
            Conv::String => self.store.new_text(s),
            Conv::Number => match parse_number(s) {
                Some(n) => n,
                None => {
                    let f =
                        self.store.new_struct(atom::SYNTAX_ERROR, &[Cell::Atom(self.atoms.intern("illegal_number"))]);
                    return Err(self.error(f));
                }
            },
            Conv::Codes => {
                let cs: Vec<Cell> = s.chars().map(|c| Cell::Int(c as i64)).collect();
                self.store.new_list(&cs)
            }
            Conv::Chars => {
                let cs: Vec<Cell> = s.chars().map(|c| Cell::Atom(self.atoms.intern(&c.to_string()))).collect();
                self.store.new_list(&cs)
            }
        })
    }

    /// Converts between two text representations (`atom_codes/2` etc.).
    pub(super) fn text_convert(&mut self, a: &[Cell], left: Conv, right: Conv) -> Res {
        let l = self.store.deref(a[0]);
        if !matches!(l, Cell::Ref(_)) {
            let s = match (left, l) {
                (Conv::Number, Cell::Int(_) | Cell::Flt(_)) => self.text_of(l)?,
                (Conv::Number, _) => return Err(self.type_error(atom::NUMBER, l)),
                (Conv::Atom, Cell::Str(_) | Cell::Lst(_)) => {
                    return Err(self.type_error(atom::ATOM, l));
                }
                _ => self.text_of(l)?,
            };
            let r = self.store.deref(a[1]);
            if left == Conv::Number && !matches!(r, Cell::Ref(_)) {
                // Compare as numbers: number_codes(X, " 12") etc.
                let rs = self.text_of(r)?;
                return match parse_number(&rs) {
                    Some(n) => Ok(self.store.unify(l, n)),
                    None => Ok(false),
                };
            }
            let v = self.make_text(&s, right)?;
            return Ok(self.store.unify(a[1], v));
        }
        let r = self.store.deref(a[1]);
        if let Cell::Ref(_) = r {
            return Err(self.inst_error());
        }
        let s = self.text_of(r)?;
        let v = self.make_text(&s, left)?;
        Ok(self.store.unify(a[0], v))
    }

    pub(super) fn text_length(&mut self, a: &[Cell], _string: bool) -> Res {
        let s = match self.store.deref(a[0]) {
            c @ (Cell::Str(_) | Cell::Lst(_)) => return Err(self.type_error(atom::TEXT, c)),
            c => self.atomic_text(c)?,
        };
        match self.store.deref(a[1]) {
            Cell::Ref(_) | Cell::Int(_) => {
                if let Cell::Int(n) = self.store.deref(a[1])
                    && n < 0
                {
                    return Err(self.domain_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(n)));
                }
                Ok(self.store.unify(a[1], Cell::Int(s.chars().count() as i64)))
            }
            other => Err(self.type_error(atom::INTEGER, other)),
        }
    }

    pub(super) fn concat3(&mut self, a: &[Cell], string: bool) -> Res {
        let kind = if string { Conv::String } else { Conv::Atom };
        let (x, y) = (self.store.deref(a[0]), self.store.deref(a[1]));
        if !matches!(x, Cell::Ref(_)) && !matches!(y, Cell::Ref(_)) {
            let s = self.atomic_text(x)? + &self.atomic_text(y)?;
            let v = self.make_text(&s, kind)?;
            return Ok(self.store.unify(a[2], v));
        }
        let whole = self.store.deref(a[2]);
        if let Cell::Ref(_) = whole {
            return Err(self.inst_error());
        }
        let s = self.atomic_text(whole)?;
        let mut alts = Vec::new();
        let idx: Vec<usize> = s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len())).collect();
        for i in idx {
            let l = self.make_text(&s[..i], kind)?;
            let r = self.make_text(&s[i..], kind)?;
            alts.push(vec![(a[0], l), (a[1], r)]);
        }
        Ok(self.alternatives(alts))
    }

    pub(super) fn sub_text(&mut self, a: &[Cell], string: bool) -> Res {
        let kind = if string { Conv::String } else { Conv::Atom };
        let s = self.atomic_text(a[0])?;
        let chars: Vec<char> = s.chars().collect();
        let n = chars.len() as i64;
        let get = |m: &mut Machine, c: Cell| -> Result<Option<i64>, Exc> {
            match m.store.deref(c) {
                Cell::Ref(_) => Ok(None),
                Cell::Int(i) => Ok(Some(i)),
                other => Err(m.type_error(atom::INTEGER, other)),
            }
        };
        let (b, l, af) = (get(self, a[1])?, get(self, a[2])?, get(self, a[3])?);
        let sub = match self.store.deref(a[4]) {
            Cell::Ref(_) => None,
            c => Some(self.atomic_text(c)?),
        };
        let mut alts = Vec::new();
        let mut push = |m: &mut Machine, bi: i64, li: i64| -> Result<(), Exc> {
            let text: String = chars[bi as usize..(bi + li) as usize].iter().collect();
            let t = m.make_text(&text, kind)?;
            alts.push(vec![(a[1], Cell::Int(bi)), (a[2], Cell::Int(li)), (a[3], Cell::Int(n - bi - li)), (a[4], t)]);
            Ok(())
        };
        if let Some(sub) = &sub {
            let sc: Vec<char> = sub.chars().collect();
            let li = sc.len() as i64;
            for bi in 0..=(n - li).max(-1) {
                if bi + li <= n && chars[bi as usize..(bi + li) as usize] == sc[..] {
                    if b.is_some_and(|b| b != bi) || af.is_some_and(|x| x != n - bi - li) {
                        continue;
                    }
                    push(self, bi, li)?;
                }
            }
        } else {
            match (b, l, af) {
                (Some(bi), Some(li), _) => {
                    if bi >= 0 && li >= 0 && bi + li <= n {
                        push(self, bi, li)?
                    }
                }
                (Some(bi), None, Some(ai)) => {
                    if bi >= 0 && ai >= 0 && bi + ai <= n {
                        push(self, bi, n - bi - ai)?
                    }
                }
                (None, Some(li), Some(ai)) => {
                    if li >= 0 && ai >= 0 && li + ai <= n {
                        push(self, n - li - ai, li)?
                    }
                }
                (Some(bi), None, None) => {
                    for li in 0..=(n - bi).max(-1) {
                        if bi >= 0 {
                            push(self, bi, li)?
                        }
                    }
                }
                (None, Some(li), None) => {
                    for bi in 0..=(n - li).max(-1) {
                        if li >= 0 {
                            push(self, bi, li)?
                        }
                    }
                }
                (None, None, Some(ai)) => {
                    for bi in 0..=(n - ai).max(-1) {
                        if ai >= 0 {
                            push(self, bi, n - ai - bi)?
                        }
                    }
                }
                (None, None, None) => {
                    for bi in 0..=n {
                        for li in 0..=(n - bi) {
                            push(self, bi, li)?
                        }
                    }
                }
            }
        }
        Ok(self.alternatives(alts))
    }

    pub(super) fn case_convert(&mut self, a: &[Cell], upper: bool, string: bool) -> Res {
        let s = self.atomic_text(a[0])?;
        let t = if upper { s.to_uppercase() } else { s.to_lowercase() };
        let v = self.make_text(&t, if string { Conv::String } else { Conv::Atom })?;
        Ok(self.store.unify(a[1], v))
    }

    /// Reads a term from text, putting it on the heap.
    pub fn read_term_text(&mut self, text: &str) -> Result<(Cell, Vec<(String, Cell)>), Exc> {
        match crate::syntax::parse_term(text) {
            Ok(clause) => {
                let mut vars = Vec::new();
                let c = super::super::compile::ast_to_heap(&clause.term, &mut self.atoms, &mut self.store, &mut vars);
                Ok((c, vars))
            }
            Err(d) => {
                let msg = Cell::Atom(self.atoms.intern(&d.message));
                let f = self.store.new_struct(atom::SYNTAX_ERROR, &[msg]);
                Err(self.error(f))
            }
        }
    }

    pub(super) fn term_text(&mut self, a: &[Cell], string: bool) -> Res {
        let t = self.store.deref(a[0]);
        let txt = self.store.deref(a[1]);
        if !matches!(txt, Cell::Ref(_)) {
            let s = self.text_of(txt)?;
            let (c, _) = self.read_term_text(&s)?;
            return Ok(self.store.unify(t, c));
        }
        let s = self.format_term(t, &WriteOpts::writeq());
        let v = if string { self.store.new_text(&s) } else { Cell::Atom(self.atoms.intern(&s)) };
        Ok(self.store.unify(a[1], v))
    }

    /// Builds `format/2` output.
    pub fn format_impl(&mut self, f: Cell, args: Cell) -> Result<String, Exc> {
        let fmt = self.text_of(f)?;
        let args = match self.list_items(args) {
            Some(v) => v,
            None => vec![args],
        };
        super::super::format::format(self, &fmt, &args)
    }
}
