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
