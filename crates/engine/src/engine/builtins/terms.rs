//! Builtins on terms: comparison and standard order, construction and
//! inspection, sorting, lists done natively, integer helpers.

use super::super::arith::{self};
use super::super::atoms::{Atom, atom};
use super::super::machine::{Alt, Machine, Res};
use super::super::term::{Cell, CompoundPairs, HeapCount, Probe, TermWalk, compare_numbers, type_rank};
use super::*;
use std::cmp::Ordering;

pub(super) fn bi_compare(m: &mut Machine, a: &[Cell]) -> Res {
    let o = m.store.deref(a[0]);
    match o {
        Cell::Ref(_) => {}
        Cell::Atom(x) if x == atom::LT || x == atom::GT || x == atom::EQ => {}
        Cell::Atom(_) => return Err(m.domain_error(atom::ORDER, o)),
        _ => return Err(m.type_error(atom::ATOM, o)),
    }
    let r = match m.compare_terms(a[1], a[2]) {
        Ordering::Less => atom::LT,
        Ordering::Equal => atom::EQ,
        Ordering::Greater => atom::GT,
    };
    Ok(m.store.unify(a[0], Cell::Atom(r)))
}

pub(super) fn bi_succ(m: &mut Machine, a: &[Cell]) -> Res {
    match (m.store.deref(a[0]), m.store.deref(a[1])) {
        (Cell::Int(x), _) => {
            if x < 0 {
                return Err(m.type_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(x)));
            }
            let s = x.checked_add(1).ok_or_else(|| m.eval_error(atom::INT_OVERFLOW))?;
            Ok(m.store.unify(a[1], Cell::Int(s)))
        }
        (Cell::Ref(_), Cell::Int(y)) => {
            if y < 0 {
                return Err(m.type_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(y)));
            }
            if y == 0 {
                return Ok(false);
            }
            Ok(m.store.unify(a[0], Cell::Int(y - 1)))
        }
        (Cell::Ref(_), Cell::Ref(_)) => Err(m.inst_error()),
        (Cell::Ref(_), other) | (other, _) => Err(m.type_error(atom::INTEGER, other)),
    }
}

pub(super) fn bi_plus(m: &mut Machine, a: &[Cell]) -> Res {
    let (x, y, z) = (m.store.deref(a[0]), m.store.deref(a[1]), m.store.deref(a[2]));
    let ov = |m: &mut Machine| m.eval_error(atom::INT_OVERFLOW);
    match (x, y, z) {
        (Cell::Int(x), Cell::Int(y), _) => {
            let s = x.checked_add(y).ok_or_else(|| ov(m))?;
            Ok(m.store.unify(a[2], Cell::Int(s)))
        }
        (Cell::Int(x), Cell::Ref(_), Cell::Int(z)) => {
            let s = z.checked_sub(x).ok_or_else(|| ov(m))?;
            Ok(m.store.unify(a[1], Cell::Int(s)))
        }
        (Cell::Ref(_), Cell::Int(y), Cell::Int(z)) => {
            let s = z.checked_sub(y).ok_or_else(|| ov(m))?;
            Ok(m.store.unify(a[0], Cell::Int(s)))
        }
        _ => Err(m.inst_error()),
    }
}

pub(super) fn bi_between(m: &mut Machine, a: &[Cell]) -> Res {
    let lo = m.int_of(a[0])?;
    let hi = match m.store.deref(a[1]) {
        Cell::Atom(x) if x == atom::INF || x == atom::INFINITE => i64::MAX,
        _ => m.int_of(a[1])?,
    };
    match m.store.deref(a[2]) {
        Cell::Int(x) => Ok(lo <= x && x <= hi),
        Cell::Ref(_) => {
            // A board scan starts at the first square that can match.
            let cont = m.vm.cont;
            let (lo, hi) = match m.between_scan(a[2], cont, lo, hi) {
                Some((Some(found), last)) => (found, last),
                Some((None, _)) => return Ok(false),
                None => (lo, hi),
            };
            if lo > hi {
                return Ok(false);
            }
            if lo < hi {
                m.push_alt(Alt::Between { var: a[2], next: lo + 1, hi });
            }
            Ok(m.store.unify(a[2], Cell::Int(lo)))
        }
        other => Err(m.type_error(atom::INTEGER, other)),
    }
}

pub(super) fn bi_functor(m: &mut Machine, a: &[Cell]) -> Res {
    let t = m.store.deref(a[0]);
    match t {
        Cell::Ref(_) => {
            let name = m.store.deref(a[1]);
            let n = m.store.deref(a[2]);
            let n = match n {
                Cell::Int(n) => n,
                Cell::Ref(_) => return Err(m.inst_error()),
                other => return Err(m.type_error(atom::INTEGER, other)),
            };
            if let Cell::Ref(_) = name {
                return Err(m.inst_error());
            }
            if n == 0 {
                if let Cell::Str(_) | Cell::Lst(_) = name {
                    return Err(m.type_error(atom::ATOMIC, name));
                }
                return Ok(m.store.unify(a[0], name));
            }
            if n < 0 {
                return Err(m.domain_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(n)));
            }
            let f = match name {
                Cell::Atom(f) => f,
                Cell::Str(_) | Cell::Lst(_) => return Err(m.type_error(atom::ATOMIC, name)),
                other => return Err(m.type_error(atom::ATOM, other)),
            };
            let vars: Vec<Cell> = (0..n).map(|_| Cell::Int(0)).collect();
            let s = if f == atom::DOT && n == 2 {
                let h = m.store.heap.len();
                m.store.heap.push(Cell::Ref(h));
                m.store.heap.push(Cell::Ref(h + 1));
                Cell::Lst(h)
            } else {
                let s = m.store.new_struct(f, &vars);
                if let Cell::Str(p) = s {
                    for i in 0..n as usize {
                        m.store.heap[p + 1 + i] = Cell::Ref(p + 1 + i);
                    }
                }
                s
            };
            Ok(m.store.unify(a[0], s))
        }
        Cell::Str(_) | Cell::Lst(_) => {
            let (f, n) = m.store.functor(t).expect("compound");
            Ok(m.store.unify(a[1], Cell::Atom(f)) && m.store.unify(a[2], Cell::Int(n as i64)))
        }
        other => Ok(m.store.unify(a[1], other) && m.store.unify(a[2], Cell::Int(0))),
    }
}

pub(super) fn bi_arg(m: &mut Machine, a: &[Cell]) -> Res {
    let t = m.store.deref(a[1]);
    let n = match t {
        Cell::Str(_) | Cell::Lst(_) => m.store.functor(t).expect("compound").1,
        Cell::Ref(_) => return Err(m.inst_error()),
        other => return Err(m.type_error(atom::COMPOUND, other)),
    };
    match m.store.deref(a[0]) {
        Cell::Int(i) if i < 0 => Err(m.domain_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(i))),
        Cell::Int(i) => {
            if i < 1 || i as usize > n {
                return Ok(false);
            }
            let v = m.store.arg(t, i as usize - 1);
            Ok(m.store.unify(a[2], v))
        }
        Cell::Ref(_) => {
            let alts: Vec<Vec<(Cell, Cell)>> =
                (0..n).map(|i| vec![(a[0], Cell::Int(i as i64 + 1)), (a[2], m.store.arg(t, i))]).collect();
            Ok(m.alternatives(alts))
        }
        other => Err(m.type_error(atom::INTEGER, other)),
    }
}

pub(super) fn bi_univ(m: &mut Machine, a: &[Cell]) -> Res {
    let t = m.store.deref(a[0]);
    match t {
        Cell::Ref(_) => {
            let l = m.store.deref(a[1]);
            if let Cell::Ref(_) = l {
                return Err(m.inst_error());
            }
            let items = m.list_vec(l)?;
            let Some((&head, args)) = items.split_first() else {
                return Err(m.domain_error(atom::NOT_EMPTY_LIST, Cell::Atom(atom::NIL)));
            };
            let head = m.store.deref(head);
            if args.is_empty() {
                if let Cell::Str(_) | Cell::Lst(_) = head {
                    return Err(m.type_error(atom::ATOMIC, head));
                }
                return Ok(m.store.unify(a[0], head));
            }
            let f = match head {
                Cell::Atom(f) => f,
                Cell::Ref(_) => return Err(m.inst_error()),
                other => return Err(m.type_error(atom::ATOM, other)),
            };
            let s = if f == atom::DOT && args.len() == 2 {
                m.store.new_list_cell(args[0], args[1])
            } else {
                m.store.new_struct(f, args)
            };
            Ok(m.store.unify(a[0], s))
        }
        Cell::Str(_) | Cell::Lst(_) => {
            let (f, n) = m.store.functor(t).expect("compound");
            let mut items = vec![Cell::Atom(f)];
            for i in 0..n {
                items.push(m.store.arg(t, i));
            }
            let l = m.store.new_list(&items);
            Ok(m.store.unify(a[1], l))
        }
        other => {
            let l = m.store.new_list(&[other]);
            Ok(m.store.unify(a[1], l))
        }
    }
}

pub(super) fn bi_set_arg(m: &mut Machine, a: &[Cell]) -> Res {
    let i = m.int_of(a[0])?;
    let t = m.store.deref(a[1]);
    let n = match t {
        Cell::Str(_) | Cell::Lst(_) => m.store.functor(t).expect("compound").1,
        Cell::Ref(_) => return Err(m.inst_error()),
        other => return Err(m.type_error(atom::COMPOUND, other)),
    };
    if i < 1 || i as usize > n {
        return Ok(false);
    }
    // Copy the block (header and arguments) and replace one argument.
    let (src, len, wrap): (usize, usize, fn(usize) -> Cell) = match t {
        Cell::Str(p) => (p, n + 1, Cell::Str),
        Cell::Lst(p) => (p, 2, Cell::Lst),
        _ => unreachable!("compound"),
    };
    let dst = m.store.heap.len();
    m.store.heap.extend_from_within(src..src + len);
    // (An unbound argument cell `Ref(x)` copied as is points at the
    // original variable, so variables stay shared.)
    let off = if matches!(t, Cell::Str(_)) { 1 } else { 0 };
    m.store.heap[dst + off + i as usize - 1] = a[2];
    Ok(m.store.unify(a[3], wrap(dst)))
}

pub(super) fn bi_free_vars(m: &mut Machine, a: &[Cell]) -> Res {
    // '$free_vars'(Template, Goal^..., Witness): strips ^, returns the goal
    // and the variables of the goal that are free (not in the template and
    // not existentially quantified).
    let mut bound = m.term_vars(a[0]);
    let mut g = m.store.deref(a[1]);
    loop {
        match g {
            Cell::Str(p) if m.store.heap[p] == Cell::Fun(atom::CARET, 2) => {
                let vs = m.term_vars(m.store.heap[p + 1]);
                bound.extend(vs);
                g = m.store.deref(m.store.heap[p + 2]);
            }
            _ => break,
        }
    }
    let free: Vec<Cell> = m.term_vars(g).into_iter().filter(|v| !bound.contains(v)).collect();
    let w = m.store.new_list(&free);
    let pair = m.store.new_struct(atom::MINUS, &[g, w]);
    Ok(m.store.unify(a[2], pair))
}

pub(super) fn bi_numbervars(m: &mut Machine, a: &[Cell]) -> Res {
    let mut n = m.int_of(a[1])?;
    for v in m.term_vars(a[0]) {
        let s = m.store.new_struct(atom::VAR_, &[Cell::Int(n)]);
        m.store.unify(v, s);
        n += 1;
    }
    Ok(m.store.unify(a[2], Cell::Int(n)))
}

pub(super) fn bi_length(m: &mut Machine, a: &[Cell]) -> Res {
    // Walk the list to its end (a list cell if it is cyclic).
    let (n, l) = m.store.list_end(a[0]);
    let n = n as i64;
    let len = m.store.deref(a[1]);
    match (l, len) {
        (Cell::Atom(atom::NIL), _) => match len {
            Cell::Ref(_) | Cell::Int(_) => Ok(m.store.unify(len, Cell::Int(n))),
            other => Err(m.type_error(atom::INTEGER, other)),
        },
        (Cell::Ref(tail), Cell::Int(k)) => {
            if k < 0 {
                return Err(m.domain_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(k)));
            }
            m.check_memory(((k - n).max(0) as usize).saturating_mul(3 * std::mem::size_of::<Cell>()))?;
            if k < n {
                return Ok(false);
            }
            let vars: Vec<Cell> = (n..k).map(|_| Cell::Int(0)).collect();
            let list = m.store.new_list(&vars);
            // Make the elements fresh variables.
            let mut c = list;
            while let Cell::Lst(p) = c {
                m.store.heap[p] = Cell::Ref(p);
                c = m.store.heap[p + 1];
            }
            Ok(m.store.unify(Cell::Ref(tail), list))
        }
        (Cell::Ref(_), Cell::Ref(_)) => {
            // Enumerate lengths: the library does it.
            let g = m.atoms.intern("$length_gen");
            let goal = m.store.new_struct(g, &[a[0], a[1], Cell::Int(n)]);
            m.push_call(goal);
            Ok(true)
        }
        (Cell::Ref(_), other) => Err(m.type_error(atom::INTEGER, other)),
        _ => Err(m.type_error(atom::LIST, a[0])),
    }
}

pub(super) fn bi_sort4(m: &mut Machine, a: &[Cell]) -> Res {
    let key = m.int_of(a[0])?;
    if key < 0 {
        return Err(m.domain_error(atom::NOT_LESS_THAN_ZERO, Cell::Int(key)));
    }
    let ord = match m.store.deref(a[1]) {
        Cell::Atom(atom::AT_LT) => SortOrd::Lt,
        Cell::Atom(atom::AT_LE) => SortOrd::Le,
        Cell::Atom(atom::AT_GT) => SortOrd::Gt,
        Cell::Atom(atom::AT_GE) => SortOrd::Ge,
        Cell::Ref(_) => return Err(m.inst_error()),
        other => return Err(m.domain_error(atom::ORDER, other)),
    };
    m.sort_list(a[2], a[3], key as usize, ord)
}

pub(super) fn bi_keysort(m: &mut Machine, a: &[Cell]) -> Res {
    for it in m.list_vec(a[0])? {
        match m.store.deref(it) {
            Cell::Str(p) if m.store.heap[p] == Cell::Fun(atom::MINUS, 2) => {}
            Cell::Ref(_) => return Err(m.inst_error()),
            other => {
                let pair = m.atoms.intern("pair");
                return Err(m.type_error(pair, other));
            }
        }
    }
    // Stable, duplicates kept: sort/4 on the first argument.
    m.sort_list(a[0], a[1], 1, SortOrd::Le)
}

pub(super) fn bi_numlist(m: &mut Machine, a: &[Cell]) -> Res {
    let lo = m.int_of(a[0])?;
    let hi = m.int_of(a[1])?;
    if lo > hi {
        return Ok(false);
    }
    let n = (hi as i128 - lo as i128 + 1).min(usize::MAX as i128 / 64) as usize;
    m.check_memory(n.saturating_mul(3 * std::mem::size_of::<Cell>()))?;
    let items: Vec<Cell> = (lo..=hi).map(Cell::Int).collect();
    let l = m.store.new_list(&items);
    Ok(m.store.unify(a[2], l))
}

/// Longest list `member/2` scans natively; longer (or cyclic) lists go to
/// the library definition, which counts its steps.
const MEMBER_NATIVE_MAX: usize = 1 << 20;

/// `'$member'/2`, the body of `member/2`: on a proper list, the elements
/// are tried here, one choice point for the rest of the list (none after
/// the last element, as in SWI-Prolog), and elements that cannot unify
/// are skipped without a call; a partial list (or one longer than
/// `MEMBER_NATIVE_MAX`) goes to the Prolog definition, which extends it.
/// The list is walked once: up to its first two candidates, and past the
/// second only to check that it is proper (the choice point's scans
/// assume so); a lookup with one candidate, the common case, reads each
/// cell once.
pub(super) fn bi_member(m: &mut Machine, a: &[Cell]) -> Res {
    let x = m.store.deref(a[0]);
    let list = m.store.deref(a[1]);
    let probe = m.store.probe(x);
    let mut budget = MEMBER_NATIVE_MAX;
    match m.scan_member(Some(&probe), list, &mut budget) {
        Scan::End => return Ok(false),
        Scan::Open => {}
        Scan::At(p) => match m.scan_member(Some(&probe), m.store.at(p + 1), &mut budget) {
            Scan::End => return Ok(m.store.unify(x, m.store.at(p))),
            Scan::At(q) if m.scan_member(None, m.store.at(q + 1), &mut budget) == Scan::End => {
                m.push_alt(Alt::Member { x, at: q });
                return Ok(m.store.unify(x, m.store.at(p)));
            }
            _ => {}
        },
    }
    let name = m.atoms.intern("$member_list");
    let goal = m.store.new_struct(name, &[x, list]);
    m.push_call(goal);
    Ok(true)
}

/// Where a scan of a list for `member/2` stopped.
#[derive(PartialEq)]
enum Scan {
    /// At a list cell (its address) whose element may unify.
    At(usize),
    /// At the end of a proper list.
    End,
    /// At a partial list's open tail, or out of budget.
    Open,
}

impl Machine {
    /// Standard order of `x` (whose arguments are the integers and atoms
    /// `args`) and `e`, a structure with the same functor whose arguments
    /// start at heap cell `first`.
    #[inline]
    fn compare_flat_args(&self, args: &[Cell], first: usize, e: Cell, x: Cell) -> Ordering {
        for (&a, &b) in args.iter().zip(&self.store.heap[first..first + args.len()]) {
            let o = match (a, self.store.deref(b)) {
                (Cell::Int(i), Cell::Int(j)) => i.cmp(&j),
                (Cell::Atom(f), Cell::Atom(g)) => self.atoms.cmp_names(f, g),
                // Anything else (a variable, a compound, a float...).
                _ => return self.compare_terms(x, e),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// The list cell (its address) of the first element of `l`, a proper
    /// list, that may unify with the probed term.
    pub(crate) fn next_member(&self, probe: &Probe, mut l: Cell) -> Option<usize> {
        while let Cell::Lst(p) = self.store.deref(l) {
            if self.store.probe_may_unify(probe, self.store.at(p)) {
                return Some(p);
            }
            l = self.store.at(p + 1);
        }
        None
    }

    /// [`Machine::next_member`] on any term (with no probe: to its end),
    /// at most `budget` cells on (the cells read are taken from it).
    fn scan_member(&self, probe: Option<&Probe>, mut l: Cell, budget: &mut usize) -> Scan {
        loop {
            match self.store.deref(l) {
                Cell::Lst(p) => {
                    if *budget == 0 {
                        return Scan::Open;
                    }
                    *budget -= 1;
                    if probe.is_some_and(|probe| self.store.probe_may_unify(probe, self.store.at(p))) {
                        return Scan::At(p);
                    }
                    l = self.store.at(p + 1);
                }
                Cell::Ref(_) => return Scan::Open,
                _ => return Scan::End,
            }
        }
    }
}

/// `ord_memberchk/2`: whether an ordered set holds a term equal (`==`) to
/// the first argument; the scan stops at the first greater element.
pub(super) fn bi_ord_memberchk(m: &mut Machine, a: &[Cell]) -> Res {
    let x = m.store.deref(a[0]);
    let mut l = m.store.deref(a[1]);
    // A structure whose arguments are integers and atoms (a fluent such as
    // cell(3, 4, white), the common case): its arguments are read once, and
    // each element with the same functor is compared against them in
    // place.
    let mut flat = [Cell::Int(0); 8];
    let mut flat_x = None;
    if let Cell::Str(q) = x
        && let fun @ Cell::Fun(_, n) = m.store.heap[q]
        && (1..=flat.len()).contains(&(n as usize))
    {
        let n = n as usize;
        for (i, arg) in flat[..n].iter_mut().enumerate() {
            *arg = m.store.deref(m.store.heap[q + 1 + i]);
        }
        if flat[..n].iter().all(|c| matches!(c, Cell::Int(_) | Cell::Atom(_))) {
            flat_x = Some((fun, &flat[..n]));
        }
    }
    let mut cycle = HeapCount::new(&m.store);
    while let Cell::Lst(p) = l {
        if cycle.step() {
            return Err(m.type_error(atom::LIST, a[1]));
        }
        let e = m.store.deref(m.store.heap[p]);
        let order = match (flat_x, e) {
            (Some((fun, args)), Cell::Str(q)) => match (fun, m.store.heap[q]) {
                (f, g) if f == g => m.compare_flat_args(args, q + 1, e, x),
                // Another functor decides: arity, then name.
                (Cell::Fun(f, n), Cell::Fun(g, k)) => m.functor_order((f, n), (g, k)),
                _ => m.compare_terms(x, e),
            },
            _ => m.compare_terms(x, e),
        };
        match order {
            Ordering::Equal => return Ok(true),
            Ordering::Less => return Ok(false),
            Ordering::Greater => l = m.store.deref(m.store.heap[p + 1]),
        }
    }
    Ok(false)
}

pub(super) fn bi_memberchk(m: &mut Machine, a: &[Cell]) -> Res {
    let mut l = m.store.deref(a[1]);
    let x = m.store.deref(a[0]);
    let probe = m.store.probe(x);
    let mut cycle = HeapCount::new(&m.store);
    loop {
        match l {
            Cell::Lst(p) => {
                if cycle.step() {
                    return Err(m.type_error(atom::LIST, a[1]));
                }
                if m.store.probe_may_unify(&probe, m.store.heap[p]) && m.unify_kept_if(x, m.store.heap[p], |_, _| true)
                {
                    return Ok(true);
                }
                l = m.store.deref(m.store.heap[p + 1]);
            }
            Cell::Ref(_) => {
                // memberchk on a partial list extends it, as in SWI.
                let cell = m.store.new_list_cell(a[0], Cell::Int(0));
                if let Cell::Lst(p) = cell {
                    m.store.heap[p + 1] = Cell::Ref(p + 1);
                }
                return Ok(m.store.unify(l, cell));
            }
            _ => return Ok(false),
        }
    }
}

pub(super) fn bi_current_op(m: &mut Machine, a: &[Cell]) -> Res {
    use crate::syntax::ops::OpType;
    let names = [
        ":-",
        "-->",
        "?-",
        ";",
        "|",
        "->",
        "*->",
        ",",
        "\\+",
        "=",
        "\\=",
        "==",
        "\\==",
        "@<",
        "@>",
        "@=<",
        "@>=",
        "=..",
        "is",
        "=:=",
        "=\\=",
        "<",
        ">",
        "=<",
        ">=",
        "=@=",
        "\\=@=",
        ":",
        "+",
        "-",
        "/\\",
        "\\/",
        "xor",
        "*",
        "/",
        "//",
        "mod",
        "rem",
        "div",
        "<<",
        ">>",
        "**",
        "^",
        "\\",
        "dynamic",
        "discontiguous",
        "initialization",
        "table",
    ];
    let ty_name = |t: OpType| match t {
        OpType::Xfx => "xfx",
        OpType::Xfy => "xfy",
        OpType::Yfx => "yfx",
        OpType::Fy => "fy",
        OpType::Fx => "fx",
    };
    let mut alts = Vec::new();
    for n in names {
        for (p, t) in [crate::syntax::ops::infix(n), crate::syntax::ops::prefix(n)].into_iter().flatten() {
            let at = Cell::Atom(m.atoms.intern(n));
            let ty = Cell::Atom(m.atoms.intern(ty_name(t)));
            alts.push(vec![(a[0], Cell::Int(p as i64)), (a[1], ty), (a[2], at)]);
        }
    }
    Ok(m.alternatives(alts))
}

impl Machine {
    pub fn is_ground(&self, c: Cell) -> bool {
        let mut walk = TermWalk::new(&self.store, c);
        while let Some(c) = walk.next(&self.store) {
            if let Cell::Ref(_) = c {
                return false;
            }
        }
        true
    }

    /// The distinct unbound variables of a term, in depth-first order.
    pub fn term_vars(&mut self, c: Cell) -> Vec<Cell> {
        let mut vars = Vec::new();
        let mut walk = TermWalk::new(&self.store, c);
        while let Some(c) = walk.next(&self.store) {
            if let Cell::Ref(a) = c {
                vars.push(Cell::Ref(a));
                // Mark as seen.
                self.store.heap[a] = Cell::Fun(atom::VAR_, 0);
            }
        }
        for v in &vars {
            if let Cell::Ref(a) = v {
                self.store.heap[*a] = Cell::Ref(*a);
            }
        }
        vars
    }

    /// Tries a unification and undoes it.
    pub fn probe_unify(&mut self, a: Cell, b: Cell) -> bool {
        let mark = self.store.trail.len();
        let saved = self.store.hb;
        self.store.hb = usize::MAX;
        let ok = self.store.unify(a, b);
        self.store.undo_to(mark);
        self.store.hb = saved;
        ok
    }

    pub(super) fn unify_occurs(&mut self, a: Cell, b: Cell) -> bool {
        // Unify, then reject if any binding made a cycle.
        self.unify_kept_if(a, b, |m, bound| !bound.iter().any(|&v| m.reaches(m.store.heap[v], v)))
    }

    /// Unifies `a` and `b` and keeps the bindings when `keep` accepts
    /// them (given the bound cells); otherwise (or when the unification
    /// fails) leaves both terms as they were.
    pub(super) fn unify_kept_if(&mut self, a: Cell, b: Cell, keep: impl Fn(&Machine, &[usize]) -> bool) -> bool {
        // Everything is trailed here, so a failed unification can be undone.
        let mark = self.store.trail.len();
        let saved = self.store.hb;
        self.store.hb = usize::MAX;
        let ok = self.store.unify(a, b) && keep(self, &self.store.trail[mark..]);
        if !ok {
            self.store.undo_to(mark);
            self.store.hb = saved;
            return false;
        }
        // Keep the bindings; re-trail only those older than hb.
        let mut k = mark;
        for i in mark..self.store.trail.len() {
            let v = self.store.trail[i];
            if v < saved {
                self.store.trail[k] = v;
                k += 1;
            }
        }
        self.store.trail.truncate(k);
        self.store.hb = saved;
        true
    }

    /// Whether term `t` contains the variable at `v`.
    pub(super) fn reaches(&self, t: Cell, v: usize) -> bool {
        let mut stack = vec![t];
        let mut steps = 0usize;
        while let Some(c) = stack.pop() {
            steps += 1;
            if steps > 10_000_000 {
                return true;
            }
            match c {
                Cell::Ref(a) if a == v => return true,
                Cell::Ref(a) => {
                    let n = self.store.heap[a];
                    if n != Cell::Ref(a) {
                        stack.push(n);
                    }
                }
                c @ (Cell::Str(_) | Cell::Lst(_)) => self.store.push_args(c, &mut stack),
                _ => {}
            }
        }
        false
    }

    /// Standard order of terms.
    #[inline]
    pub fn compare_terms(&self, a: Cell, b: Cell) -> Ordering {
        // Terms of modest depth are compared recursively without
        // allocating (the last argument, a list's tail, loops); deeper
        // ones fall back to an explicit stack.
        match self.compare_small(a, b, 0) {
            Some(o) => o,
            None => self.compare_deep(a, b),
        }
    }

    fn compare_small(&self, a: Cell, b: Cell, depth: u32) -> Option<Ordering> {
        const MAX_DEPTH: u32 = 48;
        let (mut x, mut y) = (a, b);
        // Each turn goes one compound deeper: more turns than the heap has
        // cells only on a cyclic term (left to `compare_deep`).
        let mut cycle = HeapCount::new(&self.store);
        loop {
            if cycle.step() {
                return None;
            }
            let (dx, dy) = (self.store.deref(x), self.store.deref(y));
            // The commonest cases first: integers, one atom, one functor
            // (or two lists).
            let same_functor = match (dx, dy) {
                (Cell::Int(i), Cell::Int(j)) => return Some(i.cmp(&j)),
                (Cell::Atom(a), Cell::Atom(b)) if a == b => return Some(Ordering::Equal),
                // The same term (a cyclic one, too).
                (Cell::Str(p), Cell::Str(q)) | (Cell::Lst(p), Cell::Lst(q)) if p == q => return Some(Ordering::Equal),
                (Cell::Str(p), Cell::Str(q)) => {
                    // Two structures: by arity, then name, unless the same.
                    let (Cell::Fun(f, n), Cell::Fun(g, m)) = (self.store.heap[p], self.store.heap[q]) else {
                        unreachable!("Str points at Fun")
                    };
                    if (f, n) != (g, m) {
                        return Some(self.functor_order((f, n), (g, m)));
                    }
                    true
                }
                (Cell::Lst(_), Cell::Lst(_)) => true,
                _ => false,
            };
            if !same_functor {
                let (rx, ry) = (type_rank(dx), type_rank(dy));
                if rx != ry {
                    return Some(rx.cmp(&ry));
                }
                if !matches!(dx, Cell::Str(_) | Cell::Lst(_)) {
                    return Some(self.compare_atomic(dx, dy));
                }
            }
            if depth >= MAX_DEPTH {
                return None;
            }
            let n = if same_functor {
                self.store.functor(dx).expect("compound").1
            } else {
                let (o, n) = self.compare_functors(dx, dy);
                if o != Ordering::Equal || n == 0 {
                    return Some(o);
                }
                n
            };
            // The argument cells of both, as slices (one bounds check).
            let first = |c: Cell| match c {
                Cell::Str(p) => p + 1,
                Cell::Lst(p) => p,
                _ => unreachable!("compound"),
            };
            let heap = &self.store.heap;
            let (xs, ys) = (&heap[first(dx)..first(dx) + n], &heap[first(dy)..first(dy) + n]);
            for (&a, &b) in xs[..n - 1].iter().zip(&ys[..n - 1]) {
                // Integer and atom arguments (the commonest) without a call.
                let o = match (self.store.deref(a), self.store.deref(b)) {
                    (Cell::Int(i), Cell::Int(j)) => i.cmp(&j),
                    (Cell::Atom(a), Cell::Atom(b)) if a == b => Ordering::Equal,
                    (a, b) => self.compare_small(a, b, depth + 1)?,
                };
                if o != Ordering::Equal {
                    return Some(o);
                }
            }
            (x, y) = (xs[n - 1], ys[n - 1]);
        }
    }

    /// Standard order of the functors of two compound terms (arity, then
    /// name), and the arity of the first.
    fn compare_functors(&self, x: Cell, y: Cell) -> (Ordering, usize) {
        let (f, n) = self.store.functor(x).expect("compound");
        let (g, m) = self.store.functor(y).expect("compound");
        (self.functor_order((f, n as u32), (g, m as u32)), n)
    }

    /// Standard order of two functors: arity, then name.
    #[inline]
    fn functor_order(&self, (f, n): (Atom, u32), (g, m): (Atom, u32)) -> Ordering {
        n.cmp(&m).then_with(|| self.atoms.cmp_names(f, g))
    }

    /// Standard order of two dereferenced atomic terms (or variables) of
    /// the same type rank.
    fn compare_atomic(&self, x: Cell, y: Cell) -> Ordering {
        match (x, y) {
            (Cell::Ref(p), Cell::Ref(q)) => p.cmp(&q),
            (Cell::Int(_) | Cell::Flt(_), _) => compare_numbers(x, y),
            (Cell::Atom(p), Cell::Atom(q)) => self.atoms.cmp_names(p, q),
            (Cell::Text(p), Cell::Text(q)) => self.store.text(p).cmp(self.store.text(q)),
            _ => unreachable!("atomic terms of the same rank"),
        }
    }

    /// `compare_terms` with an explicit stack. Taking apart more compound
    /// pairs than the heap has cells happens only on cyclic terms (or ones
    /// that share much): the comparison then starts again on rational
    /// trees, a pair of compounds met again counting as equal (as it is
    /// if they differ nowhere else), so that it ends, as SWI-Prolog's does.
    fn compare_deep(&self, a: Cell, b: Cell) -> Ordering {
        CompoundPairs::walk(|seen| self.compare_pairs(a, b, seen))
    }

    fn compare_pairs(&self, a: Cell, b: Cell, mut seen: Option<&mut CompoundPairs>) -> Option<Ordering> {
        let mut stack = vec![(a, b)];
        let mut count = HeapCount::new(&self.store);
        while let Some((x, y)) = stack.pop() {
            let x = self.store.deref(x);
            let y = self.store.deref(y);
            let (rx, ry) = (type_rank(x), type_rank(y));
            if rx != ry {
                return Some(rx.cmp(&ry));
            }
            let o = match (x, y) {
                (Cell::Str(p) | Cell::Lst(p), Cell::Str(q) | Cell::Lst(q)) => {
                    if p == q || !CompoundPairs::enter(&mut seen, &mut count, p, q)? {
                        continue;
                    }
                    let (o, n) = self.compare_functors(x, y);
                    if o == Ordering::Equal {
                        for i in (0..n).rev() {
                            stack.push((self.store.arg(x, i), self.store.arg(y, i)));
                        }
                    }
                    o
                }
                _ => self.compare_atomic(x, y),
            };
            if o != Ordering::Equal {
                return Some(o);
            }
        }
        Some(Ordering::Equal)
    }

    /// Whether two terms are variants (equal up to renaming variables).
    pub fn variant(&self, a: Cell, b: Cell) -> bool {
        // A term is a variant of itself (a cyclic one, too).
        if let (x @ (Cell::Str(_) | Cell::Lst(_)), y) = (self.store.deref(a), self.store.deref(b))
            && x == y
        {
            return true;
        }
        CompoundPairs::walk(|seen| self.variant_pairs(a, b, seen))
    }

    /// `variant` of two terms; `None` when they take apart more compound
    /// pairs than the heap has cells, unless `seen` is given: then (rational
    /// trees, as in `compare_pairs`) a pair met again is not taken apart.
    fn variant_pairs(&self, a: Cell, b: Cell, mut seen: Option<&mut CompoundPairs>) -> Option<bool> {
        let mut map: Vec<(usize, usize)> = Vec::new();
        let mut stack = vec![(a, b)];
        let mut count = HeapCount::new(&self.store);
        while let Some((x, y)) = stack.pop() {
            let x = self.store.deref(x);
            let y = self.store.deref(y);
            if let (Cell::Str(p) | Cell::Lst(p), Cell::Str(q) | Cell::Lst(q)) = (x, y)
                && !CompoundPairs::enter(&mut seen, &mut count, p, q)?
            {
                continue;
            }
            match (x, y) {
                (Cell::Ref(p), Cell::Ref(q)) => {
                    match (map.iter().find(|(l, _)| *l == p), map.iter().find(|(_, r)| *r == q)) {
                        (None, None) => map.push((p, q)),
                        (Some(&(_, r)), Some(&(l, _))) if r == q && l == p => {}
                        _ => return Some(false),
                    }
                }
                (Cell::Str(_) | Cell::Lst(_), Cell::Str(_) | Cell::Lst(_)) => {
                    let (f, n) = self.store.functor(x).expect("compound");
                    let (g, m) = self.store.functor(y).expect("compound");
                    if f != g || n != m {
                        return Some(false);
                    }
                    for i in 0..n {
                        stack.push((self.store.arg(x, i), self.store.arg(y, i)));
                    }
                }
                _ => {
                    if type_rank(x) != type_rank(y) || self.compare_terms(x, y) != Ordering::Equal {
                        return Some(false);
                    }
                    if let (Cell::Int(_), Cell::Flt(_)) | (Cell::Flt(_), Cell::Int(_)) = (x, y) {
                        return Some(false);
                    }
                }
            }
        }
        Some(true)
    }

    pub(super) fn arith_cmp(&mut self, a: &[Cell], test: fn(Ordering) -> bool) -> Res {
        let x = self.eval(a[0])?;
        let y = self.eval(a[1])?;
        Ok(test(arith::compare(x, y)))
    }

    /// Sorts a list: by whole terms (`key` 0) or by argument `key`.
    pub(super) fn sort_list(&mut self, list: Cell, out: Cell, key: usize, ord: SortOrd) -> Res {
        // (key, element) pairs in a buffer kept between calls: game code
        // sorts many short lists, where allocating would cost more than
        // comparing.
        let mut keyed = std::mem::take(&mut self.sort_work);
        keyed.clear();
        let r = self.sort_into(list, key, ord, &mut keyed);
        let result = r.map(|()| {
            let mut l = Cell::Atom(atom::NIL);
            if !keyed.is_empty() {
                let p = self.store.heap.len();
                let n = keyed.len();
                for (i, &(_, c)) in keyed.iter().enumerate() {
                    let next = if i + 1 < n { Cell::Lst(p + 2 * (i + 1)) } else { Cell::Atom(atom::NIL) };
                    self.store.heap.extend_from_slice(&[c, next]);
                }
                l = Cell::Lst(p);
            }
            self.store.unify(out, l)
        });
        self.sort_work = keyed;
        result
    }

    /// The elements of `list` with their keys (argument `key`, or the
    /// element when 0), sorted in `keyed` as `ord` says.
    fn sort_into(&mut self, list: Cell, key: usize, ord: SortOrd, keyed: &mut Vec<(Cell, Cell)>) -> Result<(), Exc> {
        let (_, end) = self.store.list_each(list, |c| keyed.push((c, c)));
        match end {
            Cell::Atom(atom::NIL) => {}
            Cell::Ref(_) => return Err(self.inst_error()),
            _ => return Err(self.type_error(atom::LIST, list)),
        }
        if key > 0 {
            for pair in keyed.iter_mut() {
                let d = self.store.deref(pair.1);
                match d {
                    Cell::Str(_) | Cell::Lst(_) if self.store.functor(d).expect("compound").1 >= key => {
                        pair.0 = self.store.arg(d, key - 1)
                    }
                    Cell::Ref(_) => return Err(self.inst_error()),
                    _ => return Err(self.type_error(atom::COMPOUND, d)),
                }
            }
        }
        let desc = matches!(ord, SortOrd::Gt | SortOrd::Ge);
        let dedup = matches!(ord, SortOrd::Lt | SortOrd::Gt);
        let mut keys = std::mem::take(&mut self.sort_keys);
        let done = keyed.len() < 2 || keys.sort(&self.store, &self.atoms, keyed, desc, dedup);
        self.sort_keys = keys;
        if !done {
            keyed.sort_by(|x, y| {
                let o = self.compare_terms(x.0, y.0);
                if desc { o.reverse() } else { o }
            });
            if dedup {
                keyed.dedup_by(|x, y| self.compare_terms(x.0, y.0) == Ordering::Equal);
            }
        }
        Ok(())
    }
}
