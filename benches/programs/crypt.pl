% SEND + MORE = MONEY, column by column with carries.
sel(X, [X|T], T).
sel(X, [H|T], [H|R]) :- sel(X, T, R).
crypt([S,E,N,D,M,O,R,Y]) :-
    Ds = [0,1,2,3,4,5,6,7,8,9],
    sel(D, Ds, R1), sel(E, R1, R2),
    Y0 is D + E, Y is Y0 mod 10, C1 is Y0 // 10, sel(Y, R2, R3),
    sel(N, R3, R4), sel(R, R4, R5),
    E0 is N + R + C1, E =:= E0 mod 10, C2 is E0 // 10,
    sel(O, R5, R6),
    N0 is E + O + C2, N =:= N0 mod 10, C3 is N0 // 10,
    sel(S, R6, R7), S > 0, sel(M, R7, _), M > 0,
    O0 is S + M + C3, O =:= O0 mod 10, M =:= O0 // 10.
top(L) :- findall(X, crypt(X), L).
