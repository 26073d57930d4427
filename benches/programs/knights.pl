% Deep backtracking search: a knight's tour of a 5x5 board from a corner
% (Warnsdorff-free, plain depth-first search with backtracking).
move(X, Y, X1, Y1) :- member(DX-DY, [1-2, 2-1, 2-(-1), 1-(-2), -1-(-2), -2-(-1), -2-1, -1-2]),
    X1 is X + DX, Y1 is Y + DY, X1 >= 1, X1 =< 5, Y1 >= 1, Y1 =< 5.
tour(25, _, Path, Path) :- !.
tour(N, X-Y, Visited, Path) :-
    move(X, Y, X1, Y1), \+ memberchk(X1-Y1, Visited),
    N1 is N + 1, tour(N1, X1-Y1, [X1-Y1|Visited], Path).
top(L) :- once(tour(1, 1-1, [1-1], P)), length(P, L0), P = [Last|_], L = L0-Last.
