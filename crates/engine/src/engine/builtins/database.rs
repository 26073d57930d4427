//! Builtins on the database: assert, retract (logical update view),
//! clause, abolish, declarations, global variables.

use super::super::atoms::{Atom, atom};
use super::super::compile::{ClauseError, compile_clause};
use super::super::machine::{Alt, ClauseIter, Exc, Machine, Res};
use super::super::term::Cell;

pub(super) fn bi_retract(m: &mut Machine, a: &[Cell]) -> Res {
    let (head, body) = m.split_clause_term(a[0])?;
    m.start_clause_iter(head, body, Visit::Retract)
}

pub(super) fn bi_clause(m: &mut Machine, a: &[Cell]) -> Res {
    let head = m.store.deref(a[0]);
    match m.store.deref(a[1]) {
        Cell::Ref(_) | Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => {}
        other => return Err(m.type_error(atom::CALLABLE, other)),
    }
    m.start_clause_iter(head, a[1], Visit::Read)
}

/// `'$clause'(Head, Body, Src)`: `clause/2`, and where the clause was
/// read from: `'$src'(File, Start, End)` (byte offsets), or `[]` for a
/// clause asserted at run time. The tracer's.
pub(super) fn bi_clause_src(m: &mut Machine, a: &[Cell]) -> Res {
    let head = m.store.deref(a[0]);
    m.start_clause_iter(head, a[1], Visit::Source(a[2]))
}

pub(super) fn bi_retractall(m: &mut Machine, a: &[Cell]) -> Res {
    let head = m.store.deref(a[0]);
    let (f, n) = match head {
        Cell::Ref(_) => return Err(m.inst_error()),
        Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => m.store.functor(head).expect("callable"),
        other => return Err(m.type_error(atom::CALLABLE, other)),
    };
    m.check_modifiable(f, n as u32)?;
    let Some(pred) = m.db.pred_mut(f, n as u32) else { unreachable!("checked") };
    pred.dynamic = true;
    let clauses = pred.clauses.clone();
    for c in clauses.iter() {
        let mark = m.store.heap.len();
        let tr = m.store.trail.len();
        let saved = m.store.hb;
        m.store.hb = usize::MAX;
        let t = m.store.copy_in(&c.tmpl, &mut Vec::new());
        let h = m.store.arg(t, 0);
        let matched = m.store.unify(h, head);
        m.store.undo_to(tr);
        m.store.hb = saved;
        m.store.heap.truncate(mark);
        if matched && let Some(p) = m.db.pred_mut(f, n as u32) {
            p.remove(c);
            m.db.asserted = m.db.asserted.saturating_sub(c.bytes());
        }
    }
    Ok(true)
}

pub(super) fn bi_abolish(m: &mut Machine, a: &[Cell]) -> Res {
    let (f, n) = m.pred_indicator(a[0])?;
    m.check_modifiable(f, n)?;
    if let Some(super::super::db::Entry::User(i)) = m.db.get(f, n) {
        let freed: usize = m.db.preds[i].clauses.iter().map(|c| c.bytes()).sum();
        m.db.asserted = m.db.asserted.saturating_sub(freed);
        m.db.preds[i].clear();
        m.db.preds[i].dynamic = false;
        m.db.preds[i].abolished = true;
        m.db.remove(f, n);
    }
    Ok(true)
}

pub(super) fn bi_current_predicate(m: &mut Machine, a: &[Cell]) -> Res {
    let spec = m.store.deref(a[0]);
    let (nm, ar) = match spec {
        Cell::Str(p) if matches!(m.store.heap[p], Cell::Fun(atom::SLASH, 2)) => {
            (m.store.heap[p + 1], m.store.heap[p + 2])
        }
        Cell::Ref(_) => return Err(m.inst_error()),
        other => {
            let pi = m.atoms.intern("predicate_indicator");
            return Err(m.type_error(pi, other));
        }
    };
    let visible = |m: &Machine, p: &super::super::db::Pred| {
        (!p.clauses.is_empty() || p.dynamic) && !p.library && !m.atoms.name(p.name).starts_with('$')
    };
    // A given name and arity (the common `current_predicate(move/2)`):
    // looked up, not enumerated.
    if let (Cell::Atom(f), Cell::Int(n)) = (m.store.deref(nm), m.store.deref(ar)) {
        return Ok(match u32::try_from(n).ok().and_then(|n| m.db.get(f, n)) {
            Some(super::super::db::Entry::User(i)) => visible(m, &m.db.preds[i]),
            _ => false,
        });
    }
    let alts =
        m.db.preds
            .iter()
            .filter(|p| visible(m, p))
            .map(|p| vec![(nm, Cell::Atom(p.name)), (ar, Cell::Int(p.arity as i64))])
            .collect();
    Ok(m.alternatives(alts))
}

pub(super) fn bi_setval(m: &mut Machine, a: &[Cell]) -> Res {
    let k = m.atom_of(a[0])?;
    let Ok(t) = m.store.copy_out(a[1], &mut Vec::new()) else { return Err(m.cyclic_error()) };
    let bytes = global_bytes(&t);
    let old = m.globals.get(&k).map_or(0, global_bytes);
    m.check_memory(bytes.saturating_sub(old))?;
    m.globals_bytes = m.globals_bytes.saturating_sub(old) + bytes;
    m.globals.insert(k, t);
    Ok(true)
}

/// Bytes a global variable's value holds.
fn global_bytes(t: &super::super::term::Tmpl) -> usize {
    std::mem::size_of::<super::super::term::Tmpl>() + t.cells.len() * std::mem::size_of::<Cell>()
}

pub(super) fn bi_getval(m: &mut Machine, a: &[Cell]) -> Res {
    let k = m.atom_of(a[0])?;
    let Some(c) = global_value(m, k) else {
        let key = m.atoms.intern("variable");
        return Err(m.existence_error(key, Cell::Atom(k)));
    };
    Ok(m.store.unify(a[1], c))
}

/// `'$nb_current'/2`: global variable Key's value, failing where Key has
/// none (`nb_current/2` with its key given).
pub(super) fn bi_nb_current(m: &mut Machine, a: &[Cell]) -> Res {
    let k = m.atom_of(a[0])?;
    Ok(match global_value(m, k) {
        Some(c) => m.store.unify(a[1], c),
        None => false,
    })
}

/// A copy on the heap of global variable `k`'s value, if it has one.
fn global_value(m: &mut Machine, k: Atom) -> Option<Cell> {
    let t = m.globals.get(&k).cloned()?;
    Some(m.store.copy_in(&t, &mut Vec::new()))
}

/// `'$global_keys'/1`: the keys of the global variables, in standard
/// order.
pub(super) fn bi_global_keys(m: &mut Machine, a: &[Cell]) -> Res {
    let mut keys: Vec<Atom> = m.globals.keys().copied().collect();
    keys.sort_by(|x, y| m.atoms.name(*x).cmp(m.atoms.name(*y)));
    let cells: Vec<Cell> = keys.into_iter().map(Cell::Atom).collect();
    let l = m.store.new_list(&cells);
    Ok(m.store.unify(a[0], l))
}

/// What a walk over a predicate's clauses is for.
pub(super) enum Visit {
    Read,
    Retract,
    /// `'$clause'/3`: the clause's place is unified with this.
    Source(Cell),
}

/// Resumes `clause/2` / `retract/1` from the choice point on top.
pub fn resume_clause_iter(m: &mut Machine) -> Res {
    loop {
        let top = m.choices.len() - 1;
        let Alt::ClauseIter(it) = &m.choices[top].alt else {
            unreachable!("resume_clause_iter with another choice point on top")
        };
        let (head, body, clauses, i, retract, src) =
            (it.head, it.body, it.clauses.clone(), it.next, it.retract, it.src);
        if i >= clauses.len() {
            m.choices.pop();
            m.store.hb = m.choices.last().map_or(0, |c| c.heap);
            return Ok(false);
        }
        if i + 1 >= clauses.len() {
            m.choices.pop();
            m.store.hb = m.choices.last().map_or(0, |c| c.heap);
        } else if let Alt::ClauseIter(it) = &mut m.choices[top].alt {
            it.next = i + 1;
        }
        let c = &clauses[i];
        let t = m.store.copy_in(&c.tmpl, &mut Vec::new());
        let Cell::Str(p) = t else { unreachable!("clause template is :-/N") };
        let h = m.store.heap[p + 1];
        let goals: Vec<Cell> = (0..c.body_len).map(|k| m.store.heap[p + 2 + k]).collect();
        let b = match goals.split_last() {
            None => Cell::Atom(atom::TRUE),
            Some((&last, rest)) => {
                let mut b = last;
                for &g in rest.iter().rev() {
                    b = m.store.new_struct(atom::COMMA, &[g, b]);
                }
                b
            }
        };
        let place = src.map(|_| match &c.span {
            Some((file, span)) => {
                let f = m.atoms.intern(file);
                let (start, end) = (Cell::Int(span.start as i64), Cell::Int(span.end as i64));
                let name = m.atoms.intern("$src");
                m.store.new_struct(name, &[Cell::Atom(f), start, end])
            }
            None => Cell::Atom(atom::NIL),
        });
        if m.store.unify(head, h) && m.store.unify(body, b) && src.zip(place).is_none_or(|(s, p)| m.store.unify(s, p)) {
            if let Some((f, n)) = retract {
                let c = c.clone();
                if let Some(p) = m.db.pred_mut(f, n) {
                    p.remove(&c);
                    m.db.asserted = m.db.asserted.saturating_sub(c.bytes());
                }
            }
            return Ok(true);
        }
        // This clause did not match: undo and try the next one.
        if m.choices.len() == top + 1 {
            let cp = &m.choices[top];
            let (h, t) = (cp.heap, cp.trail);
            m.store.undo_to(t);
            m.store.heap.truncate(h);
        } else {
            return Ok(false);
        }
    }
}

impl Machine {
    /// Splits `Head :- Body` (body `true` for a fact).
    pub(super) fn split_clause_term(&mut self, t: Cell) -> Result<(Cell, Cell), Exc> {
        let t = self.store.deref(t);
        match t {
            Cell::Str(p) if self.store.heap[p] == Cell::Fun(atom::NECK, 2) => {
                Ok((self.store.deref(self.store.heap[p + 1]), self.store.heap[p + 2]))
            }
            Cell::Ref(_) => Err(self.inst_error()),
            _ => Ok((t, Cell::Atom(atom::TRUE))),
        }
    }

    pub(super) fn check_modifiable(&mut self, f: Atom, n: u32) -> Result<(), Exc> {
        let static_ = match self.db.get(f, n) {
            Some(super::super::db::Entry::User(i)) => {
                let p = &self.db.preds[i];
                p.library || (!p.dynamic && !p.clauses.is_empty() && self.loading.is_none())
            }
            Some(_) => true,
            None => false,
        };
        if static_ {
            let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(f), Cell::Int(n as i64)]);
            return Err(self.permission_error(atom::MODIFY, atom::STATIC_PROCEDURE, pi));
        }
        Ok(())
    }

    /// `assertz/1` and `asserta/1`.
    pub fn assert(&mut self, t: Cell, front: bool) -> Res {
        let (head, _) = self.split_clause_term(t)?;
        let (f, n) = match head {
            Cell::Ref(_) => return Err(self.inst_error()),
            Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => self.store.functor(head).expect("callable"),
            other => return Err(self.type_error(atom::CALLABLE, other)),
        };
        self.check_modifiable(f, n as u32)?;
        let code = match compile_clause(&mut self.store, t, None) {
            Ok(c) => c,
            Err(ClauseError::VarHead) => return Err(self.inst_error()),
            Err(ClauseError::NotCallable(c)) => return Err(self.type_error(atom::CALLABLE, c)),
            Err(ClauseError::Cyclic) => return Err(self.cyclic_error()),
        };
        // The database counts against the memory limit: a loop of asserts
        // stops with a resource error, as a query's growing heap does.
        let bytes = code.bytes();
        self.check_memory(bytes)?;
        self.db.asserted += bytes;
        let pred = self.db.pred_mut(f, n as u32).expect("checked modifiable");
        pred.dynamic = true;
        pred.add(code, front);
        Ok(true)
    }

    pub(super) fn pred_indicator(&mut self, c: Cell) -> Result<(Atom, u32), Exc> {
        let c = self.store.deref(c);
        match c {
            Cell::Str(p) if self.store.heap[p] == Cell::Fun(atom::SLASH, 2) => {
                let f = self.atom_of(self.store.heap[p + 1])?;
                let n = self.int_of(self.store.heap[p + 2])?;
                Ok((f, n as u32))
            }
            Cell::Ref(_) => Err(self.inst_error()),
            other => {
                let pi = self.atoms.intern("predicate_indicator");
                Err(self.type_error(pi, other))
            }
        }
    }

    /// `dynamic/1` and `discontiguous/1`: a PI, a list or a conjunction.
    pub(super) fn declare(&mut self, c: Cell, dynamic: bool) -> Res {
        let mut stack = vec![c];
        while let Some(c) = stack.pop() {
            let c = self.store.deref(c);
            match c {
                Cell::Str(p) if self.store.heap[p] == Cell::Fun(atom::COMMA, 2) => {
                    stack.push(self.store.heap[p + 2]);
                    stack.push(self.store.heap[p + 1]);
                }
                Cell::Lst(_) => stack.extend(self.list_vec(c)?.into_iter().rev()),
                Cell::Atom(atom::NIL) => {}
                _ => {
                    let (f, n) = self.pred_indicator(c)?;
                    if dynamic {
                        match self.db.pred_mut(f, n) {
                            Some(p) => p.dynamic = true,
                            None => {
                                let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(f), Cell::Int(n as i64)]);
                                return Err(self.permission_error(atom::MODIFY, atom::STATIC_PROCEDURE, pi));
                            }
                        }
                    } else if !self.db.discontiguous.contains(&(f, n)) {
                        self.db.discontiguous.push((f, n));
                    }
                }
            }
        }
        Ok(true)
    }

    /// Starts `clause/2`, `'$clause'/3` or `retract/1` over the clauses
    /// of `head`'s predicate.
    pub(super) fn start_clause_iter(&mut self, head: Cell, body: Cell, visit: Visit) -> Res {
        let retract = matches!(visit, Visit::Retract);
        let (f, n) = match head {
            Cell::Ref(_) => return Err(self.inst_error()),
            Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => self.store.functor(head).expect("callable"),
            other => return Err(self.type_error(atom::CALLABLE, other)),
        };
        let clauses = match self.db.get(f, n as u32) {
            Some(super::super::db::Entry::User(i)) => {
                let p = &self.db.preds[i];
                if p.library {
                    // Library predicates are not visible as clauses.
                    return Ok(false);
                }
                if retract && !p.dynamic {
                    if p.clauses.is_empty() {
                        return Ok(false);
                    }
                    let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(f), Cell::Int(n as i64)]);
                    return Err(self.permission_error(atom::MODIFY, atom::STATIC_PROCEDURE, pi));
                }
                p.clauses.clone()
            }
            Some(_) => {
                let pi = self.store.new_struct(atom::SLASH, &[Cell::Atom(f), Cell::Int(n as i64)]);
                let action = if retract { atom::MODIFY } else { atom::ACCESS };
                return Err(self.permission_error(action, atom::PRIVATE_PROCEDURE, pi));
            }
            None => return Ok(false),
        };
        if clauses.is_empty() {
            return Ok(false);
        }
        let key = if retract { Some((f, n as u32)) } else { None };
        let src = if let Visit::Source(c) = visit { Some(c) } else { None };
        self.push_alt(Alt::ClauseIter(Box::new(ClauseIter { head, body, clauses, next: 0, retract: key, src })));
        resume_clause_iter(self)
    }
}
