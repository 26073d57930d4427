% The MU puzzle (after the program of that name in Van Roy's suite,
% written anew): a derivation of MUIIU from MI by Hofstadter's four rules,
% the shortest, found by iterative deepening.
mu(Goal, Proof) :-
    between(1, 8, Depth),
    derive([m, i], Goal, Depth, Proof),
    !.

derive(Goal, Goal, _, []).
derive(S, Goal, Depth, [R-S1|Proof]) :-
    Depth > 0,
    rule(R, S, S1),
    D1 is Depth - 1,
    derive(S1, Goal, D1, Proof).

% 1: xI -> xIU; 2: Mx -> Mxx; 3: xIIIy -> xUy; 4: xUUy -> xy.
rule(1, S, S1) :- append(_, [i], S), append(S, [u], S1).
rule(2, [m|T], [m|T2]) :- append(T, T, T2).
rule(3, S, S1) :- append(A, [i, i, i|B], S), append(A, [u|B], S1).
rule(4, S, S1) :- append(A, [u, u|B], S), append(A, B, S1).

top(Proof) :- mu([m, u, i, i, u], Proof).
