//! Engine behaviour the query fixtures cannot show, because it is random
//! or specific to tabula: `'$sample'/3`, lambdas, `garbage_collect/0`.

use tabula::engine::Engine;

fn answers(e: &mut Engine, goal: &str, var: &str) -> Vec<String> {
    e.query(goal)
        .unwrap()
        .map(|a| {
            let a = a.unwrap();
            a.bindings.iter().find(|b| b.name == var).map_or_else(String::new, |b| b.text.clone())
        })
        .collect()
}

#[test]
fn sample_draws_every_solution_about_equally_often() {
    let mut e = Engine::new();
    let mut counts = [0u32; 4];
    for seed in 0..4000 {
        e.set_seed(seed);
        let x = answers(&mut e, "'$sample'(X, member(X, [0, 1, 2, 3]), S)", "S");
        assert_eq!(x.len(), 1, "one answer");
        counts[x[0].parse::<usize>().unwrap()] += 1;
    }
    // 1000 expected each; the standard deviation is about 27.
    for c in counts {
        assert!((850..1150).contains(&c), "{counts:?}");
    }
}

#[test]
fn sample_fails_without_solutions_and_keeps_bindings_out() {
    let mut e = Engine::new();
    assert!(answers(&mut e, "'$sample'(X, fail, S)", "S").is_empty());
    // The template's variables stay unbound; only the sample is bound.
    assert_eq!(answers(&mut e, "'$sample'(X-Y, member(X-Y, [a-1]), S), var(X)", "S"), ["a-1"]);
    // A cut in the goal is local to it; an exception passes through.
    assert_eq!(answers(&mut e, "'$sample'(X, (member(X, [a, b]), !), S)", "S"), ["a"]);
    let err = e.query("catch('$sample'(X, (X = 1, throw(oops)), _), B, true)").unwrap().next().unwrap().unwrap();
    assert_eq!(err.bindings.iter().find(|b| b.name == "B").unwrap().text, "oops");
}

#[test]
fn lambdas_with_free_variables_and_local_parameters() {
    let mut e = Engine::new();
    // `Free/[X]>>Goal` shares Free's variables with the caller; the other
    // variables of the lambda are copied for each call.
    assert_eq!(answers(&mut e, "L = [_, _], maplist(V/[X]>>(X = V), L), V = 1", "L"), ["[1,1]"]);
    assert_eq!(answers(&mut e, "maplist([X]>>(Y = X), [1, 2]), var(Y)", "Y").len(), 1);
    // `\X^Body`: X is a local parameter; further arguments go to Body.
    assert_eq!(answers(&mut e, "maplist(\\X^Y^(Y is X + 1), [1, 2], M)", "M"), ["[2,3]"]);
    assert_eq!(answers(&mut e, "maplist(\\X^(X > 0), [1, 2])", "X").len(), 1);
    assert_eq!(answers(&mut e, "G = \\X^atom_length(X), call(G, abc, N)", "N"), ["3"]);
}

#[test]
fn garbage_collect_keeps_what_registers_and_frames_hold() {
    let mut e = Engine::new();
    let program = "t(N) :- numlist(1, 1000, L0), X = f(L0), garbage_collect, atom_length(abc, _), X = f(L), sum_list(L, N).\n\
                   u(N) :- findall(K, between(1, 3, K), Ks), member(K, Ks), numlist(1, K, L), garbage_collect, sum_list(L, N).";
    assert!(!e.load("gc.pl", program).has_errors());
    assert_eq!(answers(&mut e, "t(N)", "N"), ["500500"]);
    // Across choice points: each solution still sees its own list.
    assert_eq!(answers(&mut e, "u(N)", "N"), ["1", "3", "6"]);
}

/// A random term's text: integers of every size, atoms that share long
/// prefixes, variables, floats and strings now and then, compounds and
/// lists of small depth.
fn random_term(rng: &mut impl rand::Rng, depth: u32) -> String {
    const ATOMS: [&str; 8] = ["a", "b", "ab", "'[]'", "abcdefgh", "abcdefghi", "abcdefghj", "'ab\\x0\\'"];
    const INTS: [&str; 8] = [
        "0",
        "-1",
        "7",
        "576460752303423487",
        "576460752303423488",
        "-576460752303423489",
        "9223372036854775807",
        "-3",
    ];
    match rng.gen_range(0..if depth == 0 { 7 } else { 10 }) {
        0 | 1 => INTS[rng.gen_range(0..INTS.len())].to_string(),
        2 | 3 => ATOMS[rng.gen_range(0..ATOMS.len())].to_string(),
        4 => ["X", "Y", "_"][rng.gen_range(0..3)].to_string(),
        5 => ["1.0", "2.5", "\"s\"", "[]"][rng.gen_range(0..4)].to_string(),
        6 => "f".to_string(),
        7 | 8 => {
            let name = ["f", "g", "ab", "abcdefghi"][rng.gen_range(0..4)];
            let args: Vec<_> = (0..rng.gen_range(1..4)).map(|_| random_term(rng, depth - 1)).collect();
            format!("{name}({})", args.join(", "))
        }
        _ => {
            let items: Vec<_> = (0..rng.gen_range(0..4)).map(|_| random_term(rng, depth - 1)).collect();
            let tail = if !items.is_empty() && rng.gen_range(0..4) == 0 {
                format!("|{}", random_term(rng, 0))
            } else {
                String::new()
            };
            format!("[{}{tail}]", items.join(", "))
        }
    }
}

#[test]
fn sorting_agrees_with_compare_on_random_terms() {
    use rand::{Rng, SeedableRng};
    // A stable insertion sort by compare/3 (the general comparison), the
    // reference for msort/2, sort/2 and sort/4 (which write keys).
    let src = "isort([], []).\n\
               isort([H|T], S) :- isort(T, S0), ins(H, S0, S).\n\
               ins(X, [], [X]).\n\
               ins(X, [Y|T], [X, Y|T]) :- compare(O, X, Y), O \\== (>), !.\n\
               ins(X, [Y|T], [Y|T1]) :- ins(X, T, T1).\n\
               dedup([], []).\n\
               dedup([X], [X]) :- !.\n\
               dedup([X, Y|T], D) :- X == Y, !, dedup([Y|T], D).\n\
               dedup([X|T], [X|D]) :- dedup(T, D).\n\
               pairs([], _, []).\n\
               pairs([E|T], N, [E-N|P]) :- N1 is N + 1, pairs(T, N1, P).\n\
               keys([], []).\n\
               keys([K-_|T], [K|Ks]) :- keys(T, Ks).\n\
               % Pairs with equal keys in the order of their numbers.\n\
               kept([]).\n\
               kept([_]).\n\
               kept([K-N, K1-N1|T]) :- ( K == K1 -> N < N1 ; true ), kept([K1-N1|T]).\n\
               check(L) :- isort(L, I), msort(L, M), M == I, sort(L, S), dedup(I, S),\n\
                   sort(0, @>=, L, D), reverse(I, D),\n\
                   pairs(L, 0, KL), keysort(KL, KS), isort(KL, KS),\n\
                   sort(1, @>=, KL, KD), keys(KD, Kd), reverse(I, Kd), kept(KD),\n\
                   sort(1, @<, KL, KU), keys(KU, S), kept(KU).\n";
    let mut e = Engine::new();
    assert!(!e.load("t", src).has_errors());
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..400 {
        let n = rng.gen_range(0..24);
        let items: Vec<_> = (0..n).map(|_| random_term(&mut rng, 3)).collect();
        let goal = format!("L = [{}], check(L), Res = ok", items.join(", "));
        assert_eq!(answers(&mut e, &goal, "Res"), ["ok"], "{goal}");
    }
}

/// What each goal does to the cyclic list `L = [a|L]`: `yes`, `no`, or the
/// error's name. SWI-Prolog handles cyclic terms; tabula refuses those it
/// cannot walk with an error, and none of these may run forever.
fn on_cyclic_list(e: &mut Engine, goal: &str) -> String {
    let q = format!("_L = [a|_L], catch(({goal} -> R = yes ; R = no), error(E, _), (E =.. [R|_]))");
    let r = answers(e, &q, "R");
    assert_eq!(r.len(), 1, "{goal}: {r:?}");
    r[0].clone()
}

#[test]
fn cyclic_terms_get_an_answer_or_an_error_never_a_hang() {
    let mut e = Engine::new();
    // Not a list, as SWI-Prolog says (the error's culprit is a variable:
    // the list cannot be copied into the error).
    for goal in [
        "length(_L, _)",
        "length(_L, 3)",
        "msort(_L, _)",
        "sort(_L, _)",
        "sort(0, @>=, _L, _)",
        "keysort(_L, _)",
        "memberchk(b, _L)",
        "ord_memberchk(b, _L)",
        "atom_codes(_, _L)",
        "atomic_list_concat(_L, _)",
    ] {
        assert_eq!(on_cyclic_list(&mut e, goal), "type_error", "{goal}");
    }
    assert_eq!(on_cyclic_list(&mut e, "is_list(_L)"), "no");
    assert_eq!(on_cyclic_list(&mut e, "memberchk(a, _L)"), "yes");
    assert_eq!(on_cyclic_list(&mut e, "_L == _L"), "yes");
    assert_eq!(on_cyclic_list(&mut e, "_L =@= _L"), "yes");
    assert_eq!(on_cyclic_list(&mut e, "ground(_L)"), "yes");
    assert_eq!(on_cyclic_list(&mut e, "term_variables(_L, [])"), "yes");
    // What must copy the term cannot: findall/3, assertz/1, copy_term/2...
    for goal in ["findall(_L, true, _)", "assertz(cyc(_L))", "copy_term(_L, _)", "nb_setval(k, _L)", "throw(_L)"] {
        assert_eq!(on_cyclic_list(&mut e, goal), "representation_error", "{goal}");
    }
    // Written to a depth of 10.
    assert_eq!(
        answers(&mut e, "_X = f(_X), format(atom(A), '~w', [_X])", "A"),
        ["'f(f(f(f(f(f(f(f(f(f(f(...)))))))))))'"]
    );
    // An answer that binds a query variable to a cyclic term is an error.
    let err = e.query("X = f(X)").unwrap().next().unwrap().unwrap_err();
    assert!(err.to_string().contains("cyclic_term"), "{err}");
}

/// A table called with several arguments bound, none of which alone
/// leaves few clauses, is indexed on them together (as SWI-Prolog's
/// multi-argument indexes): the call leaves no choice point, and clauses
/// with a variable there still answer, in clause order.
#[test]
fn calls_binding_several_arguments_of_a_table_are_indexed_on_them_together() {
    let mut program = String::new();
    for x in 0..8 {
        for y in 0..8 {
            program.push_str(&format!("cell({x}, {y}, c{}).\n", x * 8 + y));
            program.push_str(&format!("t({x}, {y}, c{}).\n", x * 8 + y));
            if y == 3 {
                program.push_str(&format!("t(_, {y}, open{x}).\n"));
            }
        }
    }
    program.push_str("t(X, Y, sum(S)) :- integer(X), integer(Y), S is X + Y.\n");
    let mut e = Engine::new();
    assert!(!e.load("table", &program).has_errors());
    let mut q = e.query("cell(5, 6, Z)").unwrap();
    assert_eq!(q.next().unwrap().unwrap().bindings[0].text, "c46");
    assert!(q.is_done(), "cell(5, 6, Z) leaves a choice point");
    drop(q);
    // Every mode, against the clauses filtered in order.
    let expected = |x: Option<i64>, y: Option<i64>, z: Option<&str>| -> Vec<String> {
        let mut out = Vec::new();
        for cx in 0..8 {
            for cy in 0..8 {
                let mut rows = vec![(Some(cx), cy, format!("c{}", cx * 8 + cy))];
                if cy == 3 {
                    rows.push((None, cy, format!("open{cx}")));
                }
                for (rx, ry, rz) in rows {
                    let x_ok = x.is_none() || rx.is_none() || rx == x;
                    if x_ok && y.is_none_or(|y| y == ry) && z.is_none_or(|z| z == rz) {
                        out.push(rz);
                    }
                }
            }
        }
        if let (Some(x), Some(y)) = (x, y)
            && z.is_none_or(|z| z == format!("sum({})", x + y))
        {
            out.push(format!("sum({})", x + y));
        }
        out
    };
    for (x, y, z) in [
        (Some(2), Some(3), None),
        (Some(2), Some(4), None),
        (Some(7), None, Some("c60")),
        (None, Some(3), Some("open5")),
        (Some(4), Some(3), Some("open6")),
    ] {
        let arg = |v: Option<i64>| v.map_or("_".to_string(), |v| v.to_string());
        let goal = format!("t({}, {}, Z), Z = {}", arg(x), arg(y), z.unwrap_or("Z"));
        // With Z bound in the call too.
        let goal_bound = format!("Z = {}, t({}, {}, Z)", z.unwrap_or("Z"), arg(x), arg(y));
        assert_eq!(answers(&mut e, &goal, "Z"), expected(x, y, z), "{goal}");
        assert_eq!(answers(&mut e, &goal_bound, "Z"), expected(x, y, z), "{goal_bound}");
    }
}

/// What a host adds: a builtin of its own with its data, and clauses put
/// in front of a predicate's, which callers compiled before reach and
/// which fall through to the program's clauses where the builtin fails.
#[test]
fn a_host_answers_first_and_falls_through_to_the_program() {
    use tabula::engine::Cell;
    use tabula::engine::host::{Machine, Res};
    // Doubles numbers up to its limit (the data the engine keeps for it);
    // fails on anything else.
    fn double(m: &mut Machine, a: &[Cell]) -> Res {
        let limit = m.ext.as_ref().and_then(|e| e.downcast_ref::<i64>()).copied().unwrap_or(0);
        match m.store.deref(a[0]) {
            Cell::Int(n) if n <= limit => Ok(m.store.unify(a[1], Cell::Int(2 * n))),
            _ => Ok(false),
        }
    }
    let mut e = Engine::new();
    assert!(!e.load("p.pl", "twice(X, Y) :- Y is X + X, Y > -1.\nask(X, Y) :- twice(X, Y).\n").has_errors());
    e.add_builtin("$double", 2, double);
    e.set_ext(Box::new(10_i64));
    assert!(!e.load_front("host", "twice(X, Y) :- '$double'(X, Y0), !, Y = host(Y0).\n").has_errors());
    // `ask/2` was compiled before the host's clause: it reaches it.
    assert_eq!(answers(&mut e, "ask(4, Y)", "Y"), ["host(8)"]);
    // Past the host's limit, the program's own clause answers.
    assert_eq!(answers(&mut e, "ask(40, Y)", "Y"), ["80"]);
    // The host's builtin is not the program's to redefine.
    assert!(e.load("q.pl", "'$double'(_, _).\n").has_errors());
}

/// `scan` hands over each answer as `call` would copy it out, stops when
/// asked, says which answers are not ground, reads the keys of those that
/// have one where they are (the key their copy has), and reports errors.
#[test]
fn scan_sees_the_answers_call_copies_out() {
    use tabula::engine::{Arg, FlatKey, Tmpl};
    let mut e = Engine::new();
    // Atoms, numbers, strings and compounds of them are handed over
    // without the general copy; the rest (variables, nesting, lists, more
    // arguments than the fast path holds) with it: the same cells either way.
    let program = "p(a). p(f(X, X, b)). p(3). p([1, 2]). p(m(1, 2, 7, -4)). p(g(\"s\", 1.5, [])). \
                   p(h(a, g(b))). p(k(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)). \
                   p(m(a, -536870912, 536870911)). p(m(536870912)). p(z(1, 2, 3, 4, 5, 6)). p(-7). \
                   p(1000000000000). p(m(2, 1, 7, -4)). p(m(1, 2, 7)). p(\"s\"). \
                   q(_) :- throw(oops).";
    assert!(!e.load("t.pl", program).has_errors());
    let copied: Vec<Tmpl> =
        e.call("p", &[Arg::Out], usize::MAX).unwrap().into_iter().map(|mut s| s.remove(0)).collect();
    let mut seen = Vec::new();
    let mut keys = Vec::new();
    e.scan("p", &[Arg::Out], |answer| {
        keys.push(answer.key());
        let (cells, nvars) = answer.cells().expect("not cyclic");
        seen.push(Tmpl { cells: cells.to_vec(), nvars });
        true
    })
    .unwrap();
    assert_eq!(seen, copied);
    assert_eq!(seen.iter().map(|t| t.nvars).collect::<Vec<_>>(), [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // Keys for atoms, small integers and flat compounds of them, up to six
    // arguments, integers in -2^29..2^29: the same read in place as from
    // the copy, and a different key for each term.
    let keyed: Vec<bool> = keys.iter().map(Option::is_some).collect();
    let want = [true, false, true, false, true, false, false, false, true, false, true, true, false, true, true, false];
    assert_eq!(keyed, want);
    for (k, t) in keys.iter().zip(&seen) {
        assert_eq!(*k, FlatKey::of_cells(&t.cells), "{t:?}");
    }
    let mut distinct: Vec<FlatKey> = keys.iter().flatten().copied().collect();
    distinct.sort_by_key(|k| k.0);
    distinct.dedup();
    assert_eq!(distinct.len(), want.iter().filter(|&&k| k).count());
    let mut n = 0;
    e.scan("p", &[Arg::Out], |_| {
        n += 1;
        n < 2
    })
    .unwrap();
    assert_eq!(n, 2, "stops when told");
    let err = e.scan("q", &[Arg::Out], |_| true).unwrap_err();
    assert!(err.to_string().contains("oops"), "{err}");
}
