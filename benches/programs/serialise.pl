% Serialise (after the program of that name in Van Roy's suite, written
% anew): each element of a list replaced by its rank among the distinct
% elements, by a binary tree of element-rank pairs numbered in order.
serialise(Xs, Rs) :-
    pairs(Xs, Rs, Ps),
    tree(Ps, T),
    number_tree(T, 1, _).

pairs([], [], []).
pairs([X|Xs], [R|Rs], [X-R|Ps]) :- pairs(Xs, Rs, Ps).

% tree(+Pairs, -Tree): the first pair at the root, smaller elements left,
% greater right; equal elements share the root's rank.
tree([], void).
tree([P|Ps], t(L, P, G)) :-
    split(Ps, P, Ls, Gs),
    tree(Ls, L),
    tree(Gs, G).

split([], _, [], []).
split([X-R|Ps], X-R, Ls, Gs) :- !, split(Ps, X-R, Ls, Gs).
split([X-R|Ps], X0-R0, [X-R|Ls], Gs) :- X @< X0, !, split(Ps, X0-R0, Ls, Gs).
split([P|Ps], P0, Ls, [P|Gs]) :- split(Ps, P0, Ls, Gs).

number_tree(void, N, N).
number_tree(t(L, _-R, G), N0, N) :-
    number_tree(L, N0, R),
    N1 is R + 1,
    number_tree(G, N1, N).

top(R) :- atom_codes('ABLE WAS I ERE I SAW ELBA', Cs), serialise(Cs, R).
