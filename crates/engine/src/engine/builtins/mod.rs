//! Builtins written in Rust: type tests, comparison, arithmetic predicates,
//! term construction and inspection, atoms and strings, sorting, the
//! database, output and randomness. Each is `fn(&mut Machine, &[Cell]) ->
//! Res`; nondeterministic ones push a choice point with their alternatives.

use super::arith::Num;
use super::atoms::{Atom, atom};
use super::machine::{Alt, Exc, Machine, Res};
use super::term::Cell;
use super::vm::TypeTest;
use super::write::WriteOpts;
use rand::Rng;
use rand::SeedableRng;
use std::cmp::Ordering;
use std::rc::Rc;

mod database;
mod sortkey;
mod terms;
mod text;

pub use database::resume_clause_iter;
use database::*;
pub(crate) use sortkey::SortKeys;
use terms::*;
use text::*;

/// Registers every builtin.
pub fn register(m: &mut Machine) {
    let table: &[(&str, u32, super::machine::BuiltinFn)] = &[
        // type tests (those decided by the tag, as the register machine's
        // fast path decides them)
        ("var", 1, |m, a| Ok(TypeTest::Var.holds(m.store.deref(a[0])))),
        ("nonvar", 1, |m, a| Ok(TypeTest::Nonvar.holds(m.store.deref(a[0])))),
        ("atom", 1, |m, a| Ok(TypeTest::Atom.holds(m.store.deref(a[0])))),
        ("number", 1, |m, a| Ok(TypeTest::Number.holds(m.store.deref(a[0])))),
        ("integer", 1, |m, a| Ok(TypeTest::Integer.holds(m.store.deref(a[0])))),
        ("float", 1, |m, a| Ok(TypeTest::Float.holds(m.store.deref(a[0])))),
        ("atomic", 1, |m, a| Ok(TypeTest::Atomic.holds(m.store.deref(a[0])))),
        ("compound", 1, |m, a| Ok(TypeTest::Compound.holds(m.store.deref(a[0])))),
        ("callable", 1, |m, a| Ok(TypeTest::Callable.holds(m.store.deref(a[0])))),
        ("string", 1, |m, a| Ok(TypeTest::String.holds(m.store.deref(a[0])))),
        ("is_list", 1, |m, a| Ok(m.list_len(a[0]).is_some())),
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
        // The step of a call unfolded into its caller's code (see
        // `vm::unfold`; compiled there as `Instr::Step`).
        ("$step", 0, |_, _| Ok(true)),
        ("succ", 2, bi_succ),
        ("plus", 3, bi_plus),
        ("between", 3, bi_between),
        ("$member", 2, bi_member),
        ("ord_memberchk", 2, bi_ord_memberchk),
        // terms
        ("functor", 3, bi_functor),
        ("arg", 3, bi_arg),
        ("=..", 2, bi_univ),
        ("copy_term", 2, |m, a| {
            let Ok(t) = m.store.copy_out(a[0], &mut Vec::new()) else { return Err(m.cyclic_error()) };
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
        ("$clause", 3, bi_clause_src),
        // the tracer's
        ("$choice", 1, super::trace::bi_choice),
        ("$cut", 1, super::trace::bi_cut),
        ("$tport", 5, super::trace::bi_tport),
        ("$tr_shown", 1, super::trace::bi_tr_shown),
        ("$tr_user", 1, super::trace::bi_tr_user),
        ("retractall", 1, bi_retractall),
        ("abolish", 1, bi_abolish),
        ("dynamic", 1, |m, a| m.declare(a[0], true)),
        ("discontiguous", 1, |m, a| m.declare(a[0], false)),
        ("ensure_loaded", 1, |_, _| Ok(true)),
        ("use_module", 1, |_, _| Ok(true)),
        ("use_module", 2, |_, _| Ok(true)),
        ("set_prolog_flag", 2, |_, _| Ok(true)),
        ("style_check", 1, |_, _| Ok(true)),
        // At the next call, where the machine knows its live registers.
        ("garbage_collect", 0, |m, _| {
            m.set_gc_at(0);
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
        ("$nb_current", 2, bi_nb_current),
        ("$global_keys", 1, bi_global_keys),
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

    /// Length of a proper list, `None` if it is not one.
    pub fn list_len(&self, c: Cell) -> Option<usize> {
        match self.store.list_end(c) {
            (n, Cell::Atom(atom::NIL)) => Some(n),
            _ => None,
        }
    }

    /// The elements of a proper list, `None` if it is not one.
    pub fn list_items(&self, c: Cell) -> Option<Vec<Cell>> {
        let (v, tail) = self.store.list_walk(c);
        (tail == Cell::Atom(atom::NIL)).then_some(v)
    }

    /// The elements of a proper list, or the ISO error.
    pub fn list_vec(&mut self, c: Cell) -> Result<Vec<Cell>, Exc> {
        match self.store.list_walk(c) {
            (v, Cell::Atom(atom::NIL)) => Ok(v),
            (_, Cell::Ref(_)) => Err(self.inst_error()),
            _ => Err(self.type_error(atom::LIST, c)),
        }
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
}
