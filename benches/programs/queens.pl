% All solutions of the 8 queens problem.
sel(X, [X|T], T).
sel(X, [H|T], [H|R]) :- sel(X, T, R).
queens(N, Qs) :- numlist(1, N, Ns), place(Ns, [], Qs).
place([], Qs, Qs).
place(Ns, Placed, Qs) :- sel(Q, Ns, Rest), safe(Q, Placed, 1), place(Rest, [Q|Placed], Qs).
safe(_, [], _).
safe(Q, [Q1|Qs], D) :- Q =\= Q1 + D, Q =\= Q1 - D, D1 is D + 1, safe(Q, Qs, D1).
top(N) :- findall(Q, queens(8, Q), L), length(L, N).
