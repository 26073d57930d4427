% findall/3, bagof/3 and setof/3 over many solutions.
gen(X-Y) :- between(1, 60, X), between(1, 40, Y).
top(N-S-K) :- findall(P, gen(P), L), length(L, N),
    findall(X, (member(X-Y, L), Y =:= 1), Xs), sum_list(Xs, S),
    setof(Y, X^member(X-Y, L), Ys), length(Ys, K).
