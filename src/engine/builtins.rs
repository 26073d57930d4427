//! Builtins written in Rust: type tests, comparison, arithmetic predicates,
//! term construction and inspection, atoms and strings, sorting, the
//! database, output and randomness. Each is `fn(&mut Machine, &[Cell]) ->
//! Res`; nondeterministic ones push a choice point with their alternatives.

use super::arith::{self, Num};
use super::atoms::{Atom, atom};
use super::compile::{ClauseError, compile_clause};
use super::machine::{Alt, Exc, Machine, Res};
use super::term::{Cell, compare_numbers, type_rank};
use super::write::{WriteOpts, format_float};
use rand::Rng;
use rand::SeedableRng;
use std::cmp::Ordering;
use std::rc::Rc;

/// Registers every builtin.
pub fn register(m: &mut Machine) {
    let table: &[(&str, u32, super::machine::BuiltinFn)] = &[
        // type tests
        ("var", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Ref(_)))),
        ("nonvar", 1, |m, a| Ok(!matches!(m.store.deref(a[0]), Cell::Ref(_)))),
        // As in SWI-Prolog 7+, `[]` is a reserved constant, not an atom.
        ("atom", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Atom(x) if x != atom::NIL))),
        ("number", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Int(_) | Cell::Flt(_)))),
        ("integer", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Int(_)))),
        ("float", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Flt(_)))),
        ("atomic", 1, |m, a| {
            Ok(matches!(m.store.deref(a[0]), Cell::Atom(_) | Cell::Int(_) | Cell::Flt(_) | Cell::Text(_)))
        }),
        ("compound", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Str(_) | Cell::Lst(_)))),
        ("callable", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_)))),
        ("is_list", 1, |m, a| Ok(m.list_len(a[0]).is_some())),
        ("string", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Text(_)))),
        ("is_assoc", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Atom(atom::T) | Cell::Str(_)))),
        ("ground", 1, |m, a| Ok(m.is_ground(a[0]))),
        // unification and comparison
        ("=", 2, |m, a| Ok(m.store.unify(a[0], a[1]))),
        ("\\=", 2, |m, a| Ok(!m.probe_unify(a[0], a[1]))),
        ("unify_with_occurs_check", 2, |m, a| Ok(m.unify_occurs(a[0], a[1]))),
        ("==", 2, |m, a| Ok(m.compare_terms(a[0], a[1]) == Ordering::Equal)),
        ("\\==", 2, |m, a| Ok(m.compare_terms(a[0], a[1]) != Ordering::Equal)),
        ("@<", 2, |m, a| Ok(m.compare_terms(a[0], a[1]) == Ordering::Less)),
        ("@>", 2, |m, a| Ok(m.compare_terms(a[0], a[1]) == Ordering::Greater)),
        ("@=<", 2, |m, a| Ok(m.compare_terms(a[0], a[1]) != Ordering::Greater)),
        ("@>=", 2, |m, a| Ok(m.compare_terms(a[0], a[1]) != Ordering::Less)),
        ("=@=", 2, |m, a| Ok(m.variant(a[0], a[1]))),
        ("\\=@=", 2, |m, a| Ok(!m.variant(a[0], a[1]))),
        ("compare", 3, bi_compare),
        // arithmetic
        ("is", 2, |m, a| {
            let v = m.eval(a[1])?.to_cell();
            Ok(m.store.unify(a[0], v))
        }),
        ("=:=", 2, |m, a| m.arith_cmp(a, |o| o == Ordering::Equal)),
        ("=\\=", 2, |m, a| m.arith_cmp(a, |o| o != Ordering::Equal)),
        ("<", 2, |m, a| m.arith_cmp(a, |o| o == Ordering::Less)),
        (">", 2, |m, a| m.arith_cmp(a, |o| o == Ordering::Greater)),
        ("=<", 2, |m, a| m.arith_cmp(a, |o| o != Ordering::Greater)),
        (">=", 2, |m, a| m.arith_cmp(a, |o| o != Ordering::Less)),
        ("succ", 2, bi_succ),
        ("plus", 3, bi_plus),
        ("between", 3, bi_between),
        // terms
        ("functor", 3, bi_functor),
        ("arg", 3, bi_arg),
        ("=..", 2, bi_univ),
        ("copy_term", 2, |m, a| {
            let t = m.store.copy_out(a[0], &mut Vec::new());
            let c = m.store.copy_in(&t, &mut Vec::new());
            Ok(m.store.unify(a[1], c))
        }),
        ("set_arg", 4, bi_set_arg),
        ("term_variables", 2, |m, a| {
            let vs = m.term_vars(a[0]);
            let l = m.store.new_list(&vs);
            Ok(m.store.unify(a[1], l))
        }),
        ("$free_vars", 3, bi_free_vars),
        ("numbervars", 3, bi_numbervars),
        // atoms and strings
        ("atom_codes", 2, |m, a| m.text_convert(a, Conv::Atom, Conv::Codes)),
        ("atom_chars", 2, |m, a| m.text_convert(a, Conv::Atom, Conv::Chars)),
        ("char_code", 2, bi_char_code),
        ("atom_length", 2, |m, a| m.text_length(a, false)),
        ("string_length", 2, |m, a| m.text_length(a, true)),
        ("atom_concat", 3, |m, a| m.concat3(a, false)),
        ("string_concat", 3, |m, a| m.concat3(a, true)),
        ("sub_atom", 5, |m, a| m.sub_text(a, false)),
        ("sub_string", 5, |m, a| m.sub_text(a, true)),
        ("atom_number", 2, bi_atom_number),
        ("number_codes", 2, |m, a| m.text_convert(a, Conv::Number, Conv::Codes)),
        ("number_chars", 2, |m, a| m.text_convert(a, Conv::Number, Conv::Chars)),
        ("atom_string", 2, |m, a| m.text_convert(a, Conv::Atom, Conv::String)),
        ("number_string", 2, |m, a| m.text_convert(a, Conv::Number, Conv::String)),
        ("string_chars", 2, |m, a| m.text_convert(a, Conv::String, Conv::Chars)),
        ("string_codes", 2, |m, a| m.text_convert(a, Conv::String, Conv::Codes)),
        ("string_to_atom", 2, |m, a| m.text_convert(a, Conv::String, Conv::Atom)),
        ("string_code", 3, bi_string_code),
        ("number_vars", 3, bi_numbervars),
        ("string", 1, |m, a| Ok(matches!(m.store.deref(a[0]), Cell::Text(_)))),
        ("text_to_string", 2, |m, a| {
            let s = m.text_of(a[0])?;
            let t = m.store.new_text(&s);
            Ok(m.store.unify(a[1], t))
        }),
        ("split_string", 4, bi_split_string),
        ("atomic_list_concat", 2, |m, a| {
            let items = m.list_vec(a[0])?;
            let mut s = String::new();
            for it in items {
                s.push_str(&m.atomic_text(it)?);
            }
            let r = Cell::Atom(m.atoms.intern(&s));
            Ok(m.store.unify(a[1], r))
        }),
        ("atomic_list_concat", 3, bi_atomic_list_concat3),
        ("term_to_atom", 2, |m, a| m.term_text(a, false)),
        ("term_string", 2, |m, a| m.term_text(a, true)),
        ("atom_to_term", 3, bi_atom_to_term),
        ("read_term_from_atom", 3, |m, a| {
            let s = m.text_of(a[0])?;
            let (t, _) = m.read_term_text(&s)?;
            Ok(m.store.unify(a[1], t))
        }),
        ("upcase_atom", 2, |m, a| m.case_convert(a, true, false)),
        ("downcase_atom", 2, |m, a| m.case_convert(a, false, false)),
        ("string_upper", 2, |m, a| m.case_convert(a, true, true)),
        ("string_lower", 2, |m, a| m.case_convert(a, false, true)),
        ("char_type", 2, bi_char_type),
        ("code_type", 2, bi_char_type),
        // lists
        ("length", 2, bi_length),
        ("msort", 2, |m, a| m.sort_list(a[0], a[1], 0, SortOrd::Le)),
        ("sort", 2, |m, a| m.sort_list(a[0], a[1], 0, SortOrd::Lt)),
        ("sort", 4, bi_sort4),
        ("keysort", 2, bi_keysort),
        ("numlist", 3, bi_numlist),
        ("memberchk", 2, bi_memberchk),
        ("random_permutation", 2, |m, a| {
            let mut v = m.list_vec(a[0])?;
            for i in (1..v.len()).rev() {
                let j = m.rng.gen_range(0..=i);
                v.swap(i, j);
            }
            let l = m.store.new_list(&v);
            Ok(m.store.unify(a[1], l))
        }),
        // database
        ("assert", 1, |m, a| m.assert(a[0], false)),
        ("assertz", 1, |m, a| m.assert(a[0], false)),
        ("asserta", 1, |m, a| m.assert(a[0], true)),
        ("retract", 1, bi_retract),
        ("clause", 2, bi_clause),
        ("retractall", 1, bi_retractall),
        ("abolish", 1, bi_abolish),
        ("dynamic", 1, |m, a| m.declare(a[0], true)),
        ("discontiguous", 1, |m, a| m.declare(a[0], false)),
        ("ensure_loaded", 1, |_, _| Ok(true)),
        ("use_module", 1, |_, _| Ok(true)),
        ("use_module", 2, |_, _| Ok(true)),
        ("set_prolog_flag", 2, |_, _| Ok(true)),
        ("style_check", 1, |_, _| Ok(true)),
        ("garbage_collect", 0, |m, _| {
            super::gc::collect(m);
            Ok(true)
        }),
        ("op", 3, |m, a| {
            let t = m.store.new_struct(atom::OPERATOR_SPECIFIER, &[a[0], a[1], a[2]]);
            Err(m.permission_error(m.atoms.lookup("create").unwrap_or(atom::MODIFY), atom::OPERATOR_SPECIFIER, t))
        }),
        ("current_op", 3, bi_current_op),
        ("current_predicate", 1, bi_current_predicate),
        ("predicate_property", 2, |m, a| {
            // Only `dynamic` and `defined` are known.
            let g = m.store.deref(a[0]);
            let Some((f, n)) = m.store.functor(g) else {
                return Ok(false);
            };
            let Some(p) = m.db.pred(f, n as u32) else {
                return Ok(false);
            };
            let prop = if p.dynamic { atom::DYNAMIC } else { m.atoms.intern("defined") };
            Ok(m.store.unify(a[1], Cell::Atom(prop)))
        }),
        ("nb_setval", 2, bi_setval),
        ("b_setval", 2, bi_setval),
        ("nb_getval", 2, bi_getval),
        ("b_getval", 2, bi_getval),
        // output
        ("write", 1, |m, a| m.write_out(a[0], WriteOpts::write())),
        ("print", 1, |m, a| m.write_out(a[0], WriteOpts::writeq())),
        ("writeln", 1, |m, a| {
            m.write_out(a[0], WriteOpts::write())?;
            m.emit("\n");
            Ok(true)
        }),
        ("writeq", 1, |m, a| m.write_out(a[0], WriteOpts::writeq())),
        ("write_canonical", 1, |m, a| m.write_out(a[0], WriteOpts::canonical())),
        ("write_term", 2, |m, a| {
            let o = m.write_options(a[1])?;
            m.write_out(a[0], o)
        }),
        ("write", 2, |m, a| m.write_out(a[1], WriteOpts::write())),
        ("writeln", 2, |m, a| {
            m.write_out(a[1], WriteOpts::write())?;
            m.emit("\n");
            Ok(true)
        }),
        ("nl", 0, |m, _| {
            m.emit("\n");
            Ok(true)
        }),
        ("nl", 1, |m, _| {
            m.emit("\n");
            Ok(true)
        }),
        ("tab", 1, |m, a| {
            let n = m.eval(a[0])?;
            let Num::Int(n) = n else {
                return Err(m.type_error(atom::INTEGER, n.to_cell()));
            };
            m.emit(&" ".repeat(n.max(0) as usize));
            Ok(true)
        }),
        ("put_char", 1, |m, a| {
            let s = m.text_of(a[0])?;
            m.emit(&s);
            Ok(true)
        }),
        ("flush_output", 0, |m, _| {
            m.flush();
            Ok(true)
        }),
        ("format", 1, |m, a| {
            let s = m.format_impl(a[0], Cell::Atom(atom::NIL))?;
            m.emit(&s);
            Ok(true)
        }),
        ("format", 2, |m, a| {
            let s = m.format_impl(a[0], a[1])?;
            m.emit(&s);
            Ok(true)
        }),
        ("format", 3, bi_format3),
        ("print_message", 2, bi_print_message),
        // randomness
        ("random_between", 3, |m, a| {
            let lo = m.int_of(a[0])?;
            let hi = m.int_of(a[1])?;
            if hi < lo {
                return Ok(false);
            }
            let v = m.rng.gen_range(lo..=hi);
            Ok(m.store.unify(a[2], Cell::Int(v)))
        }),
        ("random", 1, |m, a| {
            let v: f64 = m.rng.r#gen();
            Ok(m.store.unify(a[0], Cell::Flt(v)))
        }),
        ("set_random", 1, |m, a| {
            let t = m.store.deref(a[0]);
            if let Cell::Str(p) = t
                && let Cell::Int(s) = m.store.deref(m.store.heap[p + 1])
            {
                m.rng = rand_chacha::ChaCha8Rng::seed_from_u64(s as u64);
            }
            Ok(true)
        }),
        ("statistics", 2, bi_statistics),
    ];
    for &(name, arity, f) in table {
        m.add_builtin(name, arity, f);
    }
}

/// CPU time of this process in seconds.
pub fn cpu_seconds() -> f64 {
    thread_local! { static START: std::time::Instant = std::time::Instant::now(); }
    START.with(|s| s.elapsed().as_secs_f64())
}

#[derive(Clone, Copy, PartialEq)]
enum Conv {
    Atom,
    String,
    Number,
    Codes,
    Chars,
}

#[derive(Clone, Copy, PartialEq)]
enum SortOrd {
    Lt,
    Le,
    Gt,
    Ge,
}

fn bi_compare(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_succ(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_plus(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_between(m: &mut Machine, a: &[Cell]) -> Res {
    let lo = m.int_of(a[0])?;
    let hi = match m.store.deref(a[1]) {
        Cell::Atom(x) if x == atom::INF || x == atom::INFINITE => i64::MAX,
        _ => m.int_of(a[1])?,
    };
    match m.store.deref(a[2]) {
        Cell::Int(x) => Ok(lo <= x && x <= hi),
        Cell::Ref(_) => {
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

fn bi_functor(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_arg(m: &mut Machine, a: &[Cell]) -> Res {
    let t = m.store.deref(a[1]);
    let n = match t {
        Cell::Str(_) | Cell::Lst(_) => m.store.functor(t).expect("compound").1,
        Cell::Ref(_) => return Err(m.inst_error()),
        other => return Err(m.type_error(atom::COMPOUND, other)),
    };
    match m.store.deref(a[0]) {
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

fn bi_univ(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_set_arg(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_free_vars(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_numbervars(m: &mut Machine, a: &[Cell]) -> Res {
    let mut n = m.int_of(a[1])?;
    for v in m.term_vars(a[0]) {
        let s = m.store.new_struct(atom::VAR_, &[Cell::Int(n)]);
        m.store.unify(v, s);
        n += 1;
    }
    Ok(m.store.unify(a[2], Cell::Int(n)))
}

fn bi_char_code(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_atom_number(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_string_code(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_split_string(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_atomic_list_concat3(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_char_type(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_length(m: &mut Machine, a: &[Cell]) -> Res {
    // Walk the list to its end.
    let mut n: i64 = 0;
    let mut l = m.store.deref(a[0]);
    while let Cell::Lst(p) = l {
        n += 1;
        l = m.store.deref(m.store.heap[p + 1]);
    }
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
        (other, _) => {
            let _ = other;
            Err(m.type_error(atom::LIST, a[0]))
        }
    }
}

fn bi_sort4(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_keysort(m: &mut Machine, a: &[Cell]) -> Res {
    let items = m.list_vec(a[0])?;
    for &it in &items {
        match m.store.deref(it) {
            Cell::Str(p) if m.store.heap[p] == Cell::Fun(atom::MINUS, 2) => {}
            Cell::Ref(_) => return Err(m.inst_error()),
            other => {
                let pair = m.atoms.intern("pair");
                return Err(m.type_error(pair, other));
            }
        }
    }
    let mut items = items;
    let mut err = false;
    items.sort_by(|&x, &y| {
        let kx = m.store.arg(m.store.deref(x), 0);
        let ky = m.store.arg(m.store.deref(y), 0);
        let _ = &mut err;
        m.compare_terms(kx, ky)
    });
    let l = m.store.new_list(&items);
    Ok(m.store.unify(a[1], l))
}

fn bi_numlist(m: &mut Machine, a: &[Cell]) -> Res {
    let lo = m.int_of(a[0])?;
    let hi = m.int_of(a[1])?;
    if lo > hi {
        return Ok(false);
    }
    let items: Vec<Cell> = (lo..=hi).map(Cell::Int).collect();
    let l = m.store.new_list(&items);
    Ok(m.store.unify(a[2], l))
}

fn bi_memberchk(m: &mut Machine, a: &[Cell]) -> Res {
    let mut l = m.store.deref(a[1]);
    loop {
        match l {
            Cell::Lst(p) => {
                let h = m.store.heap[p];
                if m.probe_unify(a[0], h) {
                    return Ok(m.store.unify(a[0], h));
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

fn bi_retract(m: &mut Machine, a: &[Cell]) -> Res {
    let (head, body) = m.split_clause_term(a[0])?;
    m.start_clause_iter(head, body, true)
}

fn bi_clause(m: &mut Machine, a: &[Cell]) -> Res {
    let head = m.store.deref(a[0]);
    match m.store.deref(a[1]) {
        Cell::Ref(_) | Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => {}
        other => return Err(m.type_error(atom::CALLABLE, other)),
    }
    m.start_clause_iter(head, a[1], false)
}

fn bi_retractall(m: &mut Machine, a: &[Cell]) -> Res {
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
        }
    }
    Ok(true)
}

fn bi_abolish(m: &mut Machine, a: &[Cell]) -> Res {
    let (f, n) = m.pred_indicator(a[0])?;
    m.check_modifiable(f, n)?;
    if let Some(super::db::Entry::User(i)) = m.db.get(f, n) {
        m.db.preds[i].clear();
        m.db.preds[i].dynamic = false;
        m.db.remove(f, n);
    }
    Ok(true)
}

fn bi_current_op(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_current_predicate(m: &mut Machine, a: &[Cell]) -> Res {
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
    let mut alts = Vec::new();
    let preds: Vec<(Atom, u32, bool)> =
        m.db.preds
            .iter()
            .filter(|p| !p.clauses.is_empty() || p.dynamic)
            .map(|p| (p.name, p.arity, p.library))
            .collect();
    for (f, n, lib) in preds {
        if lib || m.atoms.name(f).starts_with('$') {
            continue;
        }
        alts.push(vec![(nm, Cell::Atom(f)), (ar, Cell::Int(n as i64))]);
    }
    Ok(m.alternatives(alts))
}

fn bi_setval(m: &mut Machine, a: &[Cell]) -> Res {
    let k = m.atom_of(a[0])?;
    let t = m.store.copy_out(a[1], &mut Vec::new());
    m.globals.insert(k, t);
    Ok(true)
}

fn bi_getval(m: &mut Machine, a: &[Cell]) -> Res {
    let k = m.atom_of(a[0])?;
    let Some(t) = m.globals.get(&k).cloned() else {
        let key = m.atoms.intern("variable");
        return Err(m.existence_error(key, Cell::Atom(k)));
    };
    let c = m.store.copy_in(&t, &mut Vec::new());
    Ok(m.store.unify(a[1], c))
}

fn bi_format3(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_atom_to_term(m: &mut Machine, a: &[Cell]) -> Res {
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

fn bi_print_message(m: &mut Machine, a: &[Cell]) -> Res {
    let kind = m.store.deref(a[0]);
    let text = m.format_term(a[1], &WriteOpts::writeq());
    match kind {
        Cell::Atom(k) if m.atoms.name(k) == "error" => eprintln!("ERROR: {text}"),
        Cell::Atom(k) if m.atoms.name(k) == "warning" => eprintln!("Warning: {text}"),
        _ => {}
    }
    Ok(true)
}

fn bi_statistics(m: &mut Machine, a: &[Cell]) -> Res {
    let key = m.atom_of(a[0])?;
    let ms = (cpu_seconds() * 1000.0) as i64;
    let v = match m.atoms.name(key) {
        "runtime" | "process_cputime" | "real_time" | "walltime" => m.store.new_list(&[Cell::Int(ms), Cell::Int(0)]),
        "cputime" => Cell::Flt(cpu_seconds()),
        "inferences" => Cell::Int(m.steps as i64),
        _ => return Err(m.domain_error(atom::KEY, Cell::Atom(key))),
    };
    Ok(m.store.unify(a[1], v))
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
    pub fn int_of(&mut self, c: Cell) -> Result<i64, Exc> {
        match self.store.deref(c) {
            Cell::Int(i) => Ok(i),
            Cell::Ref(_) => Err(self.inst_error()),
            other => Err(self.type_error(atom::INTEGER, other)),
        }
    }

    pub fn atom_of(&mut self, c: Cell) -> Result<Atom, Exc> {
        match self.store.deref(c) {
            Cell::Atom(a) => Ok(a),
            Cell::Ref(_) => Err(self.inst_error()),
            other => Err(self.type_error(atom::ATOM, other)),
        }
    }

    fn code_char(&mut self, c: i64) -> Result<char, Exc> {
        u32::try_from(c).ok().and_then(char::from_u32).ok_or_else(|| self.repr_error(atom::CHARACTER_CODE))
    }

    /// Length of a proper list, `None` if it is not one.
    pub fn list_len(&self, c: Cell) -> Option<usize> {
        let mut n = 0;
        let mut l = self.store.deref(c);
        loop {
            match l {
                Cell::Lst(p) => {
                    n += 1;
                    l = self.store.deref(self.store.heap[p + 1]);
                }
                Cell::Atom(atom::NIL) => return Some(n),
                _ => return None,
            }
        }
    }

    /// The elements of a proper list, `None` if it is not one.
    pub fn list_items(&self, c: Cell) -> Option<Vec<Cell>> {
        let mut v = Vec::new();
        let mut l = self.store.deref(c);
        loop {
            match l {
                Cell::Lst(p) => {
                    v.push(self.store.heap[p]);
                    l = self.store.deref(self.store.heap[p + 1]);
                }
                Cell::Atom(atom::NIL) => return Some(v),
                _ => return None,
            }
        }
    }

    /// The elements of a proper list, or the ISO error.
    pub fn list_vec(&mut self, c: Cell) -> Result<Vec<Cell>, Exc> {
        let mut v = Vec::new();
        let mut l = self.store.deref(c);
        loop {
            match l {
                Cell::Lst(p) => {
                    v.push(self.store.heap[p]);
                    l = self.store.deref(self.store.heap[p + 1]);
                }
                Cell::Atom(atom::NIL) => return Ok(v),
                Cell::Ref(_) => return Err(self.inst_error()),
                _ => return Err(self.type_error(atom::LIST, c)),
            }
        }
    }

    pub fn is_ground(&self, c: Cell) -> bool {
        let mut stack = vec![c];
        while let Some(c) = stack.pop() {
            match self.store.deref(c) {
                Cell::Ref(_) => return false,
                Cell::Str(p) => {
                    let Cell::Fun(_, n) = self.store.heap[p] else {
                        continue;
                    };
                    stack.extend_from_slice(&self.store.heap[p + 1..p + 1 + n as usize]);
                }
                Cell::Lst(p) => stack.extend_from_slice(&self.store.heap[p..p + 2]),
                _ => {}
            }
        }
        true
    }

    /// The distinct unbound variables of a term, in depth-first order.
    pub fn term_vars(&mut self, c: Cell) -> Vec<Cell> {
        let mut vars = Vec::new();
        let mut stack = vec![c];
        while let Some(c) = stack.pop() {
            match self.store.deref(c) {
                Cell::Ref(a) => {
                    vars.push(Cell::Ref(a));
                    // Mark as seen.
                    self.store.heap[a] = Cell::Fun(atom::VAR_, 0);
                }
                Cell::Str(p) => {
                    let Cell::Fun(_, n) = self.store.heap[p] else {
                        continue;
                    };
                    for i in (0..n as usize).rev() {
                        stack.push(self.store.heap[p + 1 + i]);
                    }
                }
                Cell::Lst(p) => {
                    stack.push(self.store.heap[p + 1]);
                    stack.push(self.store.heap[p]);
                }
                _ => {}
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

    fn unify_occurs(&mut self, a: Cell, b: Cell) -> bool {
        // Unify, then reject if any binding made a cycle.
        let mark = self.store.trail.len();
        let saved = self.store.hb;
        self.store.hb = usize::MAX;
        let ok = self.store.unify(a, b);
        let bound: Vec<usize> = self.store.trail[mark..].to_vec();
        let cyclic = ok && bound.iter().any(|&v| self.reaches(self.store.heap[v], v));
        if !ok || cyclic {
            self.store.undo_to(mark);
            self.store.hb = saved;
            return false;
        }
        // Keep the bindings; re-trail only those older than hb.
        self.store.trail.truncate(mark);
        self.store.hb = saved;
        for v in bound {
            if v < saved {
                self.store.trail.push(v);
            }
        }
        true
    }

    /// Whether term `t` contains the variable at `v`.
    fn reaches(&self, t: Cell, v: usize) -> bool {
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
                Cell::Str(p) => {
                    let Cell::Fun(_, n) = self.store.heap[p] else {
                        continue;
                    };
                    stack.extend_from_slice(&self.store.heap[p + 1..p + 1 + n as usize]);
                }
                Cell::Lst(p) => stack.extend_from_slice(&self.store.heap[p..p + 2]),
                _ => {}
            }
        }
        false
    }

    /// Standard order of terms.
    pub fn compare_terms(&self, a: Cell, b: Cell) -> Ordering {
        let mut stack = vec![(a, b)];
        while let Some((x, y)) = stack.pop() {
            let x = self.store.deref(x);
            let y = self.store.deref(y);
            let (rx, ry) = (type_rank(x), type_rank(y));
            if rx != ry {
                return rx.cmp(&ry);
            }
            let o = match (x, y) {
                (Cell::Ref(p), Cell::Ref(q)) => p.cmp(&q),
                (Cell::Int(_) | Cell::Flt(_), _) => compare_numbers(x, y),
                (Cell::Atom(p), Cell::Atom(q)) => {
                    if p == q {
                        Ordering::Equal
                    } else {
                        self.atoms.name(p).cmp(self.atoms.name(q))
                    }
                }
                (Cell::Text(p), Cell::Text(q)) => self.store.text(p).cmp(self.store.text(q)),
                _ => {
                    let (f, n) = self.store.functor(x).expect("compound");
                    let (g, m) = self.store.functor(y).expect("compound");
                    let o = n.cmp(&m).then_with(|| {
                        if f == g { Ordering::Equal } else { self.atoms.name(f).cmp(self.atoms.name(g)) }
                    });
                    if o == Ordering::Equal {
                        for i in (0..n).rev() {
                            stack.push((self.store.arg(x, i), self.store.arg(y, i)));
                        }
                    }
                    o
                }
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Whether two terms are variants (equal up to renaming variables).
    pub fn variant(&self, a: Cell, b: Cell) -> bool {
        let mut map: Vec<(usize, usize)> = Vec::new();
        let mut stack = vec![(a, b)];
        while let Some((x, y)) = stack.pop() {
            let x = self.store.deref(x);
            let y = self.store.deref(y);
            match (x, y) {
                (Cell::Ref(p), Cell::Ref(q)) => {
                    match (map.iter().find(|(l, _)| *l == p), map.iter().find(|(_, r)| *r == q)) {
                        (None, None) => map.push((p, q)),
                        (Some(&(_, r)), Some(&(l, _))) if r == q && l == p => {}
                        _ => return false,
                    }
                }
                (Cell::Str(_) | Cell::Lst(_), Cell::Str(_) | Cell::Lst(_)) => {
                    let (f, n) = self.store.functor(x).expect("compound");
                    let (g, m) = self.store.functor(y).expect("compound");
                    if f != g || n != m {
                        return false;
                    }
                    for i in 0..n {
                        stack.push((self.store.arg(x, i), self.store.arg(y, i)));
                    }
                }
                _ => {
                    if type_rank(x) != type_rank(y) || self.compare_terms(x, y) != Ordering::Equal {
                        return false;
                    }
                    if let (Cell::Int(_), Cell::Flt(_)) | (Cell::Flt(_), Cell::Int(_)) = (x, y) {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn arith_cmp(&mut self, a: &[Cell], test: fn(Ordering) -> bool) -> Res {
        let x = self.eval(a[0])?;
        let y = self.eval(a[1])?;
        Ok(test(arith::compare(x, y)))
    }

    /// Pushes alternatives: each is a set of unifications.
    pub fn alternatives(&mut self, alts: Vec<Vec<(Cell, Cell)>>) -> bool {
        match alts.len() {
            0 => false,
            1 => alts[0].iter().all(|&(x, y)| self.store.unify(x, y)),
            _ => {
                let alts = Rc::new(alts);
                self.push_alt(Alt::Unify { alts: alts.clone(), next: 1 });
                alts[0].iter().all(|&(x, y)| self.store.unify(x, y))
            }
        }
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

    fn make_text(&mut self, s: &str, kind: Conv) -> Result<Option<Cell>, Exc> {
        Ok(Some(match kind {
            Conv::Atom => Cell::Atom(self.atoms.intern(s)),
            Conv::String => self.store.new_text(s),
            Conv::Number => match parse_number(s) {
                Some(n) => n,
                None => {
                    let a = self.atoms.intern(s);
                    let f =
                        self.store.new_struct(atom::SYNTAX_ERROR, &[Cell::Atom(self.atoms.intern("illegal_number"))]);
                    let _ = a;
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
        }))
    }

    /// Converts between two text representations (`atom_codes/2` etc.).
    fn text_convert(&mut self, a: &[Cell], left: Conv, right: Conv) -> Res {
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
            if right == Conv::Number || right == Conv::String && left == Conv::Number {
                // number_string(N, S): parse S when N is bound too.
            }
            let r = self.store.deref(a[1]);
            if left == Conv::Number && !matches!(r, Cell::Ref(_)) {
                // Compare as numbers: number_codes(X, " 12") etc.
                let rs = self.text_of(r)?;
                return match parse_number(&rs) {
                    Some(n) => Ok(self.store.unify(l, n)),
                    None => Ok(false),
                };
            }
            let v = self.make_text(&s, right)?.expect("text");
            return Ok(self.store.unify(a[1], v));
        }
        let r = self.store.deref(a[1]);
        if let Cell::Ref(_) = r {
            return Err(self.inst_error());
        }
        let s = self.text_of(r)?;
        if left == Conv::Number {
            return match parse_number(&s) {
                Some(n) => Ok(self.store.unify(a[0], n)),
                None => {
                    let f =
                        self.store.new_struct(atom::SYNTAX_ERROR, &[Cell::Atom(self.atoms.intern("illegal_number"))]);
                    Err(self.error(f))
                }
            };
        }
        let v = self.make_text(&s, left)?.expect("text");
        Ok(self.store.unify(a[0], v))
    }

    fn text_length(&mut self, a: &[Cell], _string: bool) -> Res {
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

    fn concat3(&mut self, a: &[Cell], string: bool) -> Res {
        let kind = if string { Conv::String } else { Conv::Atom };
        let (x, y) = (self.store.deref(a[0]), self.store.deref(a[1]));
        if !matches!(x, Cell::Ref(_)) && !matches!(y, Cell::Ref(_)) {
            let s = self.atomic_text(x)? + &self.atomic_text(y)?;
            let v = self.make_text(&s, kind)?.expect("text");
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
            let l = self.make_text(&s[..i], kind)?.expect("text");
            let r = self.make_text(&s[i..], kind)?.expect("text");
            alts.push(vec![(a[0], l), (a[1], r)]);
        }
        Ok(self.alternatives(alts))
    }

    fn sub_text(&mut self, a: &[Cell], string: bool) -> Res {
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
            let t = m.make_text(&text, kind)?.expect("text");
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

    fn case_convert(&mut self, a: &[Cell], upper: bool, string: bool) -> Res {
        let s = self.atomic_text(a[0])?;
        let t = if upper { s.to_uppercase() } else { s.to_lowercase() };
        let v = self.make_text(&t, if string { Conv::String } else { Conv::Atom })?.expect("text");
        Ok(self.store.unify(a[1], v))
    }

    /// Reads a term from text, putting it on the heap.
    pub fn read_term_text(&mut self, text: &str) -> Result<(Cell, Vec<(String, Cell)>), Exc> {
        match crate::syntax::parse_term(text) {
            Ok(clause) => {
                let mut vars = Vec::new();
                let c = super::compile::ast_to_heap(&clause.term, &mut self.atoms, &mut self.store, &mut vars);
                Ok((c, vars))
            }
            Err(d) => {
                let msg = Cell::Atom(self.atoms.intern(&d.message));
                let f = self.store.new_struct(atom::SYNTAX_ERROR, &[msg]);
                Err(self.error(f))
            }
        }
    }

    fn term_text(&mut self, a: &[Cell], string: bool) -> Res {
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

    /// Sorts a list: by whole terms (`key` 0) or by argument `key`.
    fn sort_list(&mut self, list: Cell, out: Cell, key: usize, ord: SortOrd) -> Res {
        let items = self.list_vec(list)?;
        let keyed: Vec<(Cell, Cell)> = if key == 0 {
            items.iter().map(|&c| (c, c)).collect()
        } else {
            let mut v = Vec::with_capacity(items.len());
            for &c in &items {
                let d = self.store.deref(c);
                match d {
                    Cell::Str(_) | Cell::Lst(_) if self.store.functor(d).expect("compound").1 >= key => {
                        v.push((self.store.arg(d, key - 1), c))
                    }
                    Cell::Ref(_) => return Err(self.inst_error()),
                    _ => return Err(self.type_error(atom::COMPOUND, d)),
                }
            }
            v
        };
        let mut keyed = keyed;
        let desc = matches!(ord, SortOrd::Gt | SortOrd::Ge);
        keyed.sort_by(|x, y| {
            let o = self.compare_terms(x.0, y.0);
            if desc { o.reverse() } else { o }
        });
        if matches!(ord, SortOrd::Lt | SortOrd::Gt) {
            keyed.dedup_by(|x, y| self.compare_terms(x.0, y.0) == Ordering::Equal);
        }
        let cells: Vec<Cell> = keyed.into_iter().map(|(_, c)| c).collect();
        let l = self.store.new_list(&cells);
        Ok(self.store.unify(out, l))
    }

    fn write_out(&mut self, t: Cell, opts: WriteOpts) -> Res {
        let s = self.format_term(t, &opts);
        self.emit(&s);
        Ok(true)
    }

    fn write_options(&mut self, l: Cell) -> Result<WriteOpts, Exc> {
        let mut o = WriteOpts::default();
        for it in self.list_vec(l)? {
            let it = self.store.deref(it);
            let Cell::Str(p) = it else {
                return Err(self.domain_error(atom::WRITE_OPTION, it));
            };
            let Cell::Fun(f, 1) = self.store.heap[p] else {
                return Err(self.domain_error(atom::WRITE_OPTION, it));
            };
            let v = self.store.deref(self.store.heap[p + 1]);
            let flag = v == Cell::Atom(atom::TRUE);
            match f {
                atom::QUOTED => o.quoted = flag,
                atom::IGNORE_OPS => o.ignore_ops = flag,
                atom::NUMBERVARS => o.numbervars = flag,
                atom::MAX_DEPTH => o.max_depth = self.int_of(v)?.max(0) as usize,
                _ => {}
            }
        }
        Ok(o)
    }

    /// Splits `Head :- Body` (body `true` for a fact).
    fn split_clause_term(&mut self, t: Cell) -> Result<(Cell, Cell), Exc> {
        let t = self.store.deref(t);
        match t {
            Cell::Str(p) if self.store.heap[p] == Cell::Fun(atom::NECK, 2) => {
                Ok((self.store.deref(self.store.heap[p + 1]), self.store.heap[p + 2]))
            }
            Cell::Ref(_) => Err(self.inst_error()),
            _ => Ok((t, Cell::Atom(atom::TRUE))),
        }
    }

    fn check_modifiable(&mut self, f: Atom, n: u32) -> Result<(), Exc> {
        let static_ = match self.db.get(f, n) {
            Some(super::db::Entry::User(i)) => {
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
        };
        let pred = self.db.pred_mut(f, n as u32).expect("checked modifiable");
        pred.dynamic = true;
        pred.add(code, front);
        Ok(true)
    }

    fn pred_indicator(&mut self, c: Cell) -> Result<(Atom, u32), Exc> {
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
    fn declare(&mut self, c: Cell, dynamic: bool) -> Res {
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

    /// Starts `clause/2` or `retract/1` over the clauses of `head`'s predicate.
    fn start_clause_iter(&mut self, head: Cell, body: Cell, retract: bool) -> Res {
        let (f, n) = match head {
            Cell::Ref(_) => return Err(self.inst_error()),
            Cell::Atom(_) | Cell::Str(_) | Cell::Lst(_) => self.store.functor(head).expect("callable"),
            other => return Err(self.type_error(atom::CALLABLE, other)),
        };
        let clauses = match self.db.get(f, n as u32) {
            Some(super::db::Entry::User(i)) => {
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
        self.push_alt(Alt::ClauseIter { head, body, clauses, next: 0, retract: key });
        resume_clause_iter(self)
    }

    /// Builds `format/2` output.
    pub fn format_impl(&mut self, f: Cell, args: Cell) -> Result<String, Exc> {
        let fmt = self.text_of(f)?;
        let args = match self.list_items(args) {
            Some(v) => v,
            None => vec![args],
        };
        super::format::format(self, &fmt, &args)
    }
}

/// Resumes `clause/2` / `retract/1` from the choice point on top.
pub fn resume_clause_iter(m: &mut Machine) -> Res {
    loop {
        let top = m.choices.len() - 1;
        let Alt::ClauseIter { head, body, clauses, next, retract } = &m.choices[top].alt else {
            unreachable!("resume_clause_iter with another choice point on top")
        };
        let (head, body, clauses, i, retract) = (*head, *body, clauses.clone(), *next, *retract);
        if i >= clauses.len() {
            m.choices.pop();
            m.store.hb = m.choices.last().map_or(0, |c| c.heap);
            return Ok(false);
        }
        if i + 1 >= clauses.len() {
            m.choices.pop();
            m.store.hb = m.choices.last().map_or(0, |c| c.heap);
        } else if let Alt::ClauseIter { next, .. } = &mut m.choices[top].alt {
            *next = i + 1;
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
        if m.store.unify(head, h) && m.store.unify(body, b) {
            if let Some((f, n)) = retract {
                let c = c.clone();
                if let Some(p) = m.db.pred_mut(f, n) {
                    p.remove(&c);
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
