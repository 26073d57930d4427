% (1 + x + y + z) ^ 10 with polynomials as nested sorted term lists;
% the answer is the sum of all coefficients (4^10).
padd(poly(V, T1), poly(V, T2), poly(V, T)) :- !, tadd(T1, T2, T).
padd(poly(V1, T1), poly(V2, T2), poly(V1, T)) :- V1 @< V2, !, add_const(T1, poly(V2, T2), T).
padd(P, poly(V, T2), poly(V, T)) :- !, add_const(T2, P, T).
padd(poly(V, T1), C, poly(V, T)) :- !, add_const(T1, C, T).
padd(C1, C2, C) :- C is C1 + C2.
tadd([], X, X) :- !.
tadd(X, [], X) :- !.
tadd([term(E, C1)|T1], [term(E, C2)|T2], [term(E, C)|T]) :- !, padd(C1, C2, C), tadd(T1, T2, T).
tadd([term(E1, C1)|T1], [term(E2, C2)|T2], [term(E1, C1)|T]) :- E1 < E2, !, tadd(T1, [term(E2, C2)|T2], T).
tadd(T1, [term(E2, C2)|T2], [term(E2, C2)|T]) :- tadd(T1, T2, T).
add_const([term(0, C1)|T], C2, [term(0, C)|T]) :- !, padd(C1, C2, C).
add_const(T, C, [term(0, C)|T]).
pexp(0, _, 1) :- !.
pexp(N, P, R) :- N /\ 1 =:= 0, !, M is N >> 1, pexp(M, P, Half), pmul(Half, Half, R).
pexp(N, P, R) :- M is N - 1, pexp(M, P, Part), pmul(P, Part, R).
pmul(poly(V, T1), poly(V, T2), poly(V, T)) :- !, tmul(T1, T2, T).
pmul(poly(V1, T1), poly(V2, T2), poly(V1, T)) :- V1 @< V2, !, mul_each(T1, poly(V2, T2), T).
pmul(P, poly(V, T2), poly(V, T)) :- !, mul_each(T2, P, T).
pmul(poly(V, T1), C, poly(V, T)) :- !, mul_each(T1, C, T).
pmul(C1, C2, C) :- C is C1 * C2.
tmul([], _, []) :- !.
tmul(_, [], []) :- !.
tmul([Tm|T1], T2, T) :- mul_one(T2, Tm, A), tmul(T1, T2, B), tadd(A, B, T).
mul_one([], _, []) :- !.
mul_one([term(E1, C1)|T1], term(E2, C2), [term(E, C)|T]) :- E is E1 + E2, pmul(C1, C2, C), mul_one(T1, term(E2, C2), T).
mul_each([], _, []) :- !.
mul_each([term(E, C)|T], P, [term(E, C2)|T2]) :- pmul(C, P, C2), mul_each(T, P, T2).
base(P) :- padd(poly(x, [term(0, 1), term(1, 1)]), poly(y, [term(1, 1)]), Q), padd(poly(z, [term(1, 1)]), Q, P).
coef_sum(poly(_, Ts), S) :- !, terms_sum(Ts, 0, S).
coef_sum(C, C).
terms_sum([], S, S).
terms_sum([term(_, C)|Ts], S0, S) :- coef_sum(C, S1), S2 is S0 + S1, terms_sum(Ts, S2, S).
top(S) :- base(P), pexp(10, P, R), coef_sum(R, S).
