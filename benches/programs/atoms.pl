% Building and taking apart atoms and strings.
word(I, W) :- format(atom(W), "w~w", [I]).
build(0, A, A) :- !.
build(I, A0, A) :- word(I, W), atom_concat(A0, W, A1), I1 is I - 1, build(I1, A1, A).
top(N-L-C) :- build(200, '', A), atom_length(A, N),
    atomic_list_concat(Parts, w, A), length(Parts, L),
    atom_codes(A, Cs), sum_list(Cs, C0), C is C0 mod 1000,
    split_string("a,b,,c", ",", "", _).
