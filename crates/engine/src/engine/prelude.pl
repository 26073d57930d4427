% The library: builtins written in Prolog, loaded into every engine.
% Semantics follow SWI-Prolog's library(lists), library(apply),
% library(pairs), library(assoc), library(aggregate) and library(random).

% --- control ---------------------------------------------------------------

once(G) :- call(G), !.
ignore(G) :- (call(G) -> true ; true).
forall(C, A) :- \+ (call(C), \+ call(A)).
repeat.
repeat :- repeat.
_ ^ G :- call(G).
apply(G, Args) :- G =.. L0, append(L0, Args, L1), G1 =.. L1, call(G1).

% --- all solutions ---------------------------------------------------------

bagof(T, G, L) :-
    '$free_vars'(T, G, Goal-W),
    (   W == []
    ->  findall(T, Goal, L), L \== []
    ;   findall(W-T, Goal, Pairs), Pairs \== [],
        keysort(Pairs, Sorted),
        '$bag_groups'(Sorted, W, L)
    ).

setof(T, G, S) :-
    bagof(T, G, L),
    sort(L, S).

'$bag_groups'([W0-T0|Rest], W, L) :-
    '$bag_take'(Rest, W0, Ts, Others),
    (   W = W0, L = [T0|Ts]
    ;   Others \== [], '$bag_groups'(Others, W, L)
    ).

'$bag_take'([], _, [], []).
'$bag_take'([K-T|R], W0, Ts, Os) :-
    (   K =@= W0
    ->  K = W0, Ts = [T|Ts1], Os = Os1
    ;   Ts = Ts1, Os = [K-T|Os1]
    ),
    '$bag_take'(R, W0, Ts1, Os1).

aggregate_all(count, G, C) :- !, findall(x, G, L), length(L, C).
aggregate_all(count(T), G, C) :- !, findall(T, G, L), length(L, C).
aggregate_all(sum(E), G, S) :- !, findall(E, G, L), sum_list(L, S).
aggregate_all(max(E), G, M) :- !, findall(E, G, L), L \== [], max_list(L, M).
aggregate_all(min(E), G, M) :- !, findall(E, G, L), L \== [], min_list(L, M).
aggregate_all(max(E, W), G, max(M, MW)) :- !,
    findall(E-W, G, L), L = [P|Ps], foldl('$max_pair', Ps, P, M-MW).
aggregate_all(min(E, W), G, min(M, MW)) :- !,
    findall(E-W, G, L), L = [P|Ps], foldl('$min_pair', Ps, P, M-MW).
aggregate_all(bag(E), G, L) :- !, findall(E, G, L).
aggregate_all(set(E), G, S) :- !, findall(E, G, L), sort(L, S).

'$max_pair'(E-W, E0-W0, M) :- ( E > E0 -> M = E-W ; M = E0-W0 ).
'$min_pair'(E-W, E0-W0, M) :- ( E < E0 -> M = E-W ; M = E0-W0 ).

% --- grammar rules (DCG) ---------------------------------------------------
% '$dcg_rule'(+Rule, -Clause) translates `Head --> Body` as SWI-Prolog does;
% the loader calls it for every grammar rule, phrase/2,3 for their goal.

'$dcg_rule'((H, PB --> B), (H1 :- B1, G)) :- !,
    '$dcg_nonterminal'(H, S0, S, H1),
    '$dcg_body'(B, S0, S1, B1),
    '$dcg_terminals'(PB, S, S1, G).
'$dcg_rule'((H --> B), (H1 :- B1)) :-
    '$dcg_nonterminal'(H, S0, S, H1),
    '$dcg_body'(B, S0, S, B1).

'$dcg_nonterminal'(H, _, _, _) :- var(H), !, throw(error(instantiation_error, _)).
'$dcg_nonterminal'(H, S0, S, H1) :-
    callable(H), !, H =.. L0, append(L0, [S0, S], L1), H1 =.. L1.
'$dcg_nonterminal'(H, _, _, _) :- throw(error(type_error(callable, H), _)).

'$dcg_terminals'(L, S0, S, S0 = L1) :- is_list(L), !, append(L, S, L1).
'$dcg_terminals'(L, S0, S, S0 = L1) :- string(L), !, string_codes(L, Cs), append(Cs, S, L1).
'$dcg_terminals'(L, _, _, _) :- throw(error(type_error(list, L), _)).

'$dcg_body'(V, S0, S, phrase(V, S0, S)) :- var(V), !.
'$dcg_body'((A, B), S0, S, (A1, B1)) :- !, '$dcg_body'(A, S0, S1, A1), '$dcg_body'(B, S1, S, B1).
'$dcg_body'((A ; B), S0, S, (A1 ; B1)) :- !, '$dcg_body'(A, S0, S, A1), '$dcg_body'(B, S0, S, B1).
'$dcg_body'((A | B), S0, S, (A1 ; B1)) :- !, '$dcg_body'(A, S0, S, A1), '$dcg_body'(B, S0, S, B1).
'$dcg_body'((A -> B), S0, S, (A1 -> B1)) :- !, '$dcg_body'(A, S0, S1, A1), '$dcg_body'(B, S1, S, B1).
'$dcg_body'((A *-> B), S0, S, (A1 *-> B1)) :- !, '$dcg_body'(A, S0, S1, A1), '$dcg_body'(B, S1, S, B1).
'$dcg_body'(\+ A, S0, S, (\+ A1, S0 = S)) :- !, '$dcg_body'(A, S0, _, A1).
'$dcg_body'({G}, S0, S, (G, S0 = S)) :- !.
'$dcg_body'(!, S0, S, (!, S0 = S)) :- !.
'$dcg_body'([], S0, S, S0 = S) :- !.
'$dcg_body'(L, S0, S, G) :- ( L = [_|_] ; string(L) ), !, '$dcg_terminals'(L, S0, S, G).
'$dcg_body'(NT, S0, S, G) :- '$dcg_nonterminal'(NT, S0, S, G).

phrase(G, L) :- phrase(G, L, []).
phrase(G, _, _) :- var(G), !, throw(error(instantiation_error, _)).
phrase(G, L, R) :-
    '$phrase_list'(L), '$phrase_list'(R),
    '$dcg_body'(G, S0, S, Goal), S0 = L, S = R, call(Goal).

'$phrase_list'(L) :- var(L), !.
'$phrase_list'([]) :- !.
'$phrase_list'([_|T]) :- !, '$phrase_list'(T).
'$phrase_list'(L) :- throw(error(type_error(list, L), _)).

% --- lambdas (library(yall)) -----------------------------------------------
% [X1,...]>>Body and Free/[X1,...]>>Body: the lambda is copied (except the
% variables of Free) before its parameters are bound to the arguments;
% arguments beyond the parameters are added to Body. \X^Body: X is local.

'>>'(Ps, B) :- '$lambda'(Ps, B, []).
'>>'(Ps, B, A1) :- '$lambda'(Ps, B, [A1]).
'>>'(Ps, B, A1, A2) :- '$lambda'(Ps, B, [A1, A2]).
'>>'(Ps, B, A1, A2, A3) :- '$lambda'(Ps, B, [A1, A2, A3]).
'>>'(Ps, B, A1, A2, A3, A4) :- '$lambda'(Ps, B, [A1, A2, A3, A4]).
'>>'(Ps, B, A1, A2, A3, A4, A5) :- '$lambda'(Ps, B, [A1, A2, A3, A4, A5]).
'>>'(Ps, B, A1, A2, A3, A4, A5, A6) :- '$lambda'(Ps, B, [A1, A2, A3, A4, A5, A6]).
'>>'(Ps, B, A1, A2, A3, A4, A5, A6, A7) :- '$lambda'(Ps, B, [A1, A2, A3, A4, A5, A6, A7]).

'$lambda'(Free/Ps0, B0, Args) :- !,
    copy_term(Free/Ps0-B0, Free1/Ps-B), Free1 = Free,
    '$lambda_bind'(Ps, Args, Rest),
    '$lambda_call'(B, Rest).
'$lambda'(Ps0, B0, Args) :-
    copy_term(Ps0-B0, Ps-B),
    '$lambda_bind'(Ps, Args, Rest),
    '$lambda_call'(B, Rest).

'$lambda_bind'([], Rest, Rest) :- !.
'$lambda_bind'([P|Ps], [A|As], Rest) :- !, P = A, '$lambda_bind'(Ps, As, Rest).
'$lambda_bind'(_, [], []).

'$lambda_call'(B, []) :- !, call(B).
'$lambda_call'(B, Args) :- B =.. L0, append(L0, Args, L1), G =.. L1, call(G).

\(L) :- copy_term(L, L1), '$lambda_hat'(L1, []).
\(L, A1) :- copy_term(L, L1), '$lambda_hat'(L1, [A1]).
\(L, A1, A2) :- copy_term(L, L1), '$lambda_hat'(L1, [A1, A2]).
\(L, A1, A2, A3) :- copy_term(L, L1), '$lambda_hat'(L1, [A1, A2, A3]).
\(L, A1, A2, A3, A4) :- copy_term(L, L1), '$lambda_hat'(L1, [A1, A2, A3, A4]).
\(L, A1, A2, A3, A4, A5) :- copy_term(L, L1), '$lambda_hat'(L1, [A1, A2, A3, A4, A5]).
\(L, A1, A2, A3, A4, A5, A6) :- copy_term(L, L1), '$lambda_hat'(L1, [A1, A2, A3, A4, A5, A6]).

'$lambda_hat'(V^B, [A|As]) :- !, V = A, '$lambda_hat'(B, As).
'$lambda_hat'(\B, As) :- !, copy_term(B, B1), '$lambda_hat'(B1, As).
'$lambda_hat'(B, As) :- '$lambda_call'(B, As).

% --- lists -----------------------------------------------------------------

'$length_gen'(L, N, N0) :- '$length_gen'(L, N, N0, 0).
'$length_gen'([], N, N, _).
'$length_gen'([_|T], N, N0, _) :- N1 is N0 + 1, '$length_gen'(T, N, N1, 0).

member(X, L) :- '$member'(X, L).
'$member_list'(X, [H|T]) :- '$member_'(T, X, H).
'$member_'(_, X, X).
'$member_'([H|T], X, _) :- '$member_'(T, X, H).

append([], L, L).
append([H|T], L, [H|R]) :- append(T, L, R).

append(Ls, L) :- foldl('$append_', Ls, L0-L0, L-[]).
'$append_'(L, Xs-Ys, Xs-Zs) :- append(L, Zs, Ys).

nth0(I, L, E) :- integer(I), !, I >= 0, '$nth'(I, L, E).
nth0(I, L, E) :- var(I), '$nth_gen'(L, E, 0, I).
nth1(I, L, E) :- integer(I), !, I >= 1, I0 is I - 1, '$nth'(I0, L, E).
nth1(I, L, E) :- var(I), '$nth_gen'(L, E, 1, I).
'$nth'(0, [E|_], E) :- !.
'$nth'(I, [_|T], E) :- I1 is I - 1, '$nth'(I1, T, E).
'$nth_gen'([E|_], E, B, B).
'$nth_gen'([_|T], E, B0, B) :- B1 is B0 + 1, '$nth_gen'(T, E, B1, B).

nth0(I, L, E, R) :- integer(I), !, I >= 0, '$nth_del'(I, L, E, R).
nth0(I, L, E, R) :- var(I), '$nth_gen_del'(L, E, R, 0, I).
nth1(I, L, E, R) :- integer(I), !, I >= 1, I0 is I - 1, '$nth_del'(I0, L, E, R).
nth1(I, L, E, R) :- var(I), '$nth_gen_del'(L, E, R, 1, I).
'$nth_del'(0, [E|T], E, T) :- !.
'$nth_del'(I, [H|T], E, [H|R]) :- I1 is I - 1, '$nth_del'(I1, T, E, R).
'$nth_gen_del'([E|T], E, T, B, B).
'$nth_gen_del'([H|T], E, [H|R], B0, B) :- B1 is B0 + 1, '$nth_gen_del'(T, E, R, B1, B).

last([X|Xs], Last) :- '$last'(Xs, X, Last).
'$last'([], Last, Last).
'$last'([X|Xs], _, Last) :- '$last'(Xs, X, Last).

reverse(Xs, Ys) :- '$reverse'(Xs, [], Ys).
'$reverse'([], Ys, Ys).
'$reverse'([X|Xs], Rs, Ys) :- '$reverse'(Xs, [X|Rs], Ys).

permutation([], []).
permutation(L, [H|T]) :- select(H, L, R), permutation(R, T).

select(X, [X|T], T).
select(X, [H|T], [H|R]) :- select(X, T, R).

selectchk(X, L, R) :- select(X, L, R), !.

select(X, Xs, Y, Ys) :- '$select4'(Xs, X, Y, Ys).
'$select4'([X|T], X, Y, [Y|T]).
'$select4'([H|T], X, Y, [H|T2]) :- '$select4'(T, X, Y, T2).

exclude(_, [], []).
exclude(P, [H|T], R) :- ( call(P, H) -> R = R1 ; R = [H|R1] ), exclude(P, T, R1).
include(_, [], []).
include(P, [H|T], R) :- ( call(P, H) -> R = [H|R1] ; R = R1 ), include(P, T, R1).
partition(_, [], [], []).
partition(P, [H|T], I, E) :-
    (   call(P, H) -> I = [H|I1], E = E1 ; I = I1, E = [H|E1] ),
    partition(P, T, I1, E1).

subtract([], _, []).
subtract([E|T], D, R) :- memberchk(E, D), !, subtract(T, D, R).
subtract([H|T], D, [H|R]) :- subtract(T, D, R).

intersection([], _, []).
intersection([X|T], L, I) :- memberchk(X, L), !, I = [X|R], intersection(T, L, R).
intersection([_|T], L, R) :- intersection(T, L, R).

union([], L, L).
union([H|T], L, R) :- memberchk(H, L), !, union(T, L, R).
union([H|T], L, [H|R]) :- union(T, L, R).

delete([], _, []).
delete([E|T], D, R) :- ( E \= D -> R = [E|R1] ; R = R1 ), delete(T, D, R1).

% The lists come first in the helpers, so that indexing on the first
% argument leaves no choice point when the first list is known.
maplist(G, L) :- '$maplist'(L, G).
'$maplist'([], _).
'$maplist'([A|As], G) :- call(G, A), '$maplist'(As, G).
maplist(G, L1, L2) :- '$maplist'(L1, L2, G).
'$maplist'([], [], _).
'$maplist'([A|As], [B|Bs], G) :- call(G, A, B), '$maplist'(As, Bs, G).
maplist(G, L1, L2, L3) :- '$maplist'(L1, L2, L3, G).
'$maplist'([], [], [], _).
'$maplist'([A|As], [B|Bs], [C|Cs], G) :- call(G, A, B, C), '$maplist'(As, Bs, Cs, G).
maplist(G, L1, L2, L3, L4) :- '$maplist'(L1, L2, L3, L4, G).
'$maplist'([], [], [], [], _).
'$maplist'([A|As], [B|Bs], [C|Cs], [D|Ds], G) :- call(G, A, B, C, D), '$maplist'(As, Bs, Cs, Ds, G).
maplist(G, L1, L2, L3, L4, L5) :- '$maplist'(L1, L2, L3, L4, L5, G).
'$maplist'([], [], [], [], [], _).
'$maplist'([A|As], [B|Bs], [C|Cs], [D|Ds], [E|Es], G) :- call(G, A, B, C, D, E), '$maplist'(As, Bs, Cs, Ds, Es, G).

foldl(G, L, V0, V) :- '$foldl'(L, G, V0, V).
'$foldl'([], _, V, V).
'$foldl'([X|Xs], G, V0, V) :- call(G, X, V0, V1), '$foldl'(Xs, G, V1, V).
foldl(G, L1, L2, V0, V) :- '$foldl'(L1, L2, G, V0, V).
'$foldl'([], [], _, V, V).
'$foldl'([X|Xs], [Y|Ys], G, V0, V) :- call(G, X, Y, V0, V1), '$foldl'(Xs, Ys, G, V1, V).
foldl(G, L1, L2, L3, V0, V) :- '$foldl'(L1, L2, L3, G, V0, V).
'$foldl'([], [], [], _, V, V).
'$foldl'([X|Xs], [Y|Ys], [Z|Zs], G, V0, V) :- call(G, X, Y, Z, V0, V1), '$foldl'(Xs, Ys, Zs, G, V1, V).

sum_list(Xs, Sum) :- '$sum_list'(Xs, 0, Sum).
'$sum_list'([], Sum, Sum).
'$sum_list'([X|Xs], Sum0, Sum) :- Sum1 is Sum0 + X, '$sum_list'(Xs, Sum1, Sum).
sumlist(Xs, Sum) :- sum_list(Xs, Sum).

max_list([H|T], Max) :- '$max_list'(T, H, Max).
'$max_list'([], Max, Max).
'$max_list'([H|T], Max0, Max) :- Max1 is max(Max0, H), '$max_list'(T, Max1, Max).
min_list([H|T], Min) :- '$min_list'(T, H, Min).
'$min_list'([], Min, Min).
'$min_list'([H|T], Min0, Min) :- Min1 is min(Min0, H), '$min_list'(T, Min1, Min).

max_member(Max, [H|T]) :- '$max_member'(T, H, Max).
'$max_member'([], Max, Max).
'$max_member'([H|T], Max0, Max) :- ( H @=< Max0 -> Max1 = Max0 ; Max1 = H ), '$max_member'(T, Max1, Max).
min_member(Min, [H|T]) :- '$min_member'(T, H, Min).
'$min_member'([], Min, Min).
'$min_member'([H|T], Min0, Min) :- ( H @>= Min0 -> Min1 = Min0 ; Min1 = H ), '$min_member'(T, Min1, Min).

list_to_set(List, Set) :- '$lts'(List, [], Set).
'$lts'([], _, []).
'$lts'([H|T], Seen, R) :- ( '$memberchk_eq'(H, Seen) -> R = R1 ; R = [H|R1] ), '$lts'(T, [H|Seen], R1).
'$memberchk_eq'(X, [Y|Ys]) :- ( X == Y -> true ; '$memberchk_eq'(X, Ys) ).

pairs_keys_values([], [], []).
pairs_keys_values([K-V|T], [K|Ks], [V|Vs]) :- pairs_keys_values(T, Ks, Vs).
pairs_keys([], []).
pairs_keys([K-_|T], [K|Ks]) :- pairs_keys(T, Ks).
pairs_values([], []).
pairs_values([_-V|T], [V|Vs]) :- pairs_values(T, Vs).

nextto(X, Y, [X,Y|_]).
nextto(X, Y, [_|T]) :- nextto(X, Y, T).

flatten(List, Flat) :- '$flatten'(List, [], Flat0), !, Flat = Flat0.
'$flatten'(Var, Tl, [Var|Tl]) :- var(Var), !.
'$flatten'([], Tl, Tl) :- !.
'$flatten'([Hd|Tl], Tail, List) :- !, '$flatten'(Hd, FlatHeadTail, List), '$flatten'(Tl, Tail, FlatHeadTail).
'$flatten'(NonList, Tl, [NonList|Tl]).

predsort(P, L, Sorted) :-
    length(L, N),
    '$predsort'(N, P, L, _, Sorted1), !,
    Sorted = Sorted1.
'$predsort'(2, P, [X1,X2|L], L, R) :- !,
    call(P, Delta, X1, X2),
    '$sort2'(Delta, X1, X2, R).
'$predsort'(1, _, [X|L], L, [X]) :- !.
'$predsort'(0, _, L, L, []) :- !.
'$predsort'(N, P, L1, L3, R) :-
    N1 is N // 2, plus(N1, N2, N),
    '$predsort'(N1, P, L1, L2, R1),
    '$predsort'(N2, P, L2, L3, R2),
    '$predmerge'(P, R1, R2, R).
'$sort2'(<, X1, X2, [X1,X2]).
'$sort2'(=, X1, _, [X1]).
'$sort2'(>, X1, X2, [X2,X1]).
'$predmerge'(_, [], R, R) :- !.
'$predmerge'(_, R, [], R) :- !.
'$predmerge'(P, [H1|T1], [H2|T2], Result) :-
    call(P, Delta, H1, H2), !,
    '$predmerge_'(Delta, P, H1, H2, T1, T2, Result).
'$predmerge_'(<, P, H1, H2, T1, T2, [H1|R]) :- '$predmerge'(P, T1, [H2|T2], R).
'$predmerge_'(=, P, H1, _, T1, T2, [H1|R]) :- '$predmerge'(P, T1, T2, R).
'$predmerge_'(>, P, H1, H2, T1, T2, [H2|R]) :- '$predmerge'(P, [H1|T1], T2, R).

% --- global variables --------------------------------------------------------

% nb_current(?Key, ?Value): Key is a global variable (nb_setval/2) holding
% Value; with Key unbound, each one in turn.
nb_current(K, V) :- atom(K), !, '$nb_current'(K, V).
nb_current(K, V) :- var(K), '$global_keys'(Ks), member(K, Ks), '$nb_current'(K, V).

% --- randomness ------------------------------------------------------------

random_member(X, List) :-
    length(List, N), N > 0,
    I is random(N),
    nth0(I, List, X).

random_select(X, List, Rest) :-
    length(List, N), N > 0,
    I is random(N),
    nth0(I, List, X, Rest).

% --- assoc (AVL trees, as library(assoc)) ----------------------------------

empty_assoc(t).

get_assoc(Key, t(K,V,_,L,R), Val) :-
    compare(Order, Key, K),
    '$get_assoc'(Order, Key, V, Val, L, R).
'$get_assoc'(=, _, V, V, _, _).
'$get_assoc'(<, Key, _, V, L, _) :- get_assoc(Key, L, V).
'$get_assoc'(>, Key, _, V, _, R) :- get_assoc(Key, R, V).

put_assoc(Key, A0, Value, A) :- '$put_assoc'(A0, Key, Value, A, _).

% '$put_assoc'(Tree0, Key, Val, Tree, Grew): Grew is yes when the height grew.
'$put_assoc'(t, Key, Val, t(Key,Val,-,t,t), yes).
'$put_assoc'(t(K,V,B,L,R), K1, V1, T, Grew) :-
    compare(O, K1, K),
    '$put_assoc'(O, t(K,V,B,L,R), K1, V1, T, Grew).
'$put_assoc'(=, t(K,_,B,L,R), _, V1, t(K,V1,B,L,R), no).
'$put_assoc'(<, t(K,V,B,L,R), K1, V1, T, Grew) :-
    '$put_assoc'(L, K1, V1, L1, G1),
    (   G1 == yes -> '$grew_left'(B, K, V, L1, R, T, Grew)
    ;   T = t(K,V,B,L1,R), Grew = no
    ).
'$put_assoc'(>, t(K,V,B,L,R), K1, V1, T, Grew) :-
    '$put_assoc'(R, K1, V1, R1, G1),
    (   G1 == yes -> '$grew_right'(B, K, V, L, R1, T, Grew)
    ;   T = t(K,V,B,L,R1), Grew = no
    ).

% Balance: < left is deeper, - even, > right is deeper.
'$grew_left'(-, K, V, L, R, t(K,V,<,L,R), yes).
'$grew_left'(>, K, V, L, R, t(K,V,-,L,R), no).
'$grew_left'(<, K, V, L, R, T, no) :- '$rotate_right'(K, V, L, R, T).
'$grew_right'(-, K, V, L, R, t(K,V,>,L,R), yes).
'$grew_right'(<, K, V, L, R, t(K,V,-,L,R), no).
'$grew_right'(>, K, V, L, R, T, no) :- '$rotate_left'(K, V, L, R, T).

'$rotate_right'(K, V, t(LK,LV,<,LL,LR), R, t(LK,LV,-,LL,t(K,V,-,LR,R))) :- !.
'$rotate_right'(K, V, t(LK,LV,>,LL,t(MK,MV,MB,ML,MR)), R, t(MK,MV,-,t(LK,LV,B1,LL,ML),t(K,V,B2,MR,R))) :-
    '$double_balance'(MB, B1, B2).
'$rotate_left'(K, V, L, t(RK,RV,>,RL,RR), t(RK,RV,-,t(K,V,-,L,RL),RR)) :- !.
'$rotate_left'(K, V, L, t(RK,RV,<,t(MK,MV,MB,ML,MR),RR), t(MK,MV,-,t(K,V,B1,L,ML),t(RK,RV,B2,MR,RR))) :-
    '$double_balance'(MB, B1, B2).
'$double_balance'(-, -, -).
'$double_balance'(<, -, >).
'$double_balance'(>, <, -).

list_to_assoc(List, Assoc) :-
    msort(List, Sorted),
    '$check_keys'(Sorted),
    length(Sorted, N),
    '$list_to_assoc'(N, Sorted, [], _, Assoc).
'$check_keys'([]).
'$check_keys'([K-_|T]) :- '$check_keys'(T, K).
'$check_keys'([], _).
'$check_keys'([K-_|T], K0) :- K0 \== K, '$check_keys'(T, K).

'$list_to_assoc'(0, List, List, 0, t) :- !.
'$list_to_assoc'(1, [K-V|More], More, 1, t(K,V,-,t,t)) :- !.
'$list_to_assoc'(2, [K1-V1,K2-V2|More], More, 2, t(K2,V2,<,t(K1,V1,-,t,t),t)) :- !.
'$list_to_assoc'(N, List, More, Depth, t(K,V,Balance,L,R)) :-
    N0 is N - 1, RN is N0 // 2, Rest is N0 - RN,
    '$list_to_assoc'(Rest, List, [K-V|Upper], LDepth, L),
    '$list_to_assoc'(RN, Upper, More, RDepth, R),
    Depth is LDepth + 1,
    compare(B, RDepth, LDepth), '$balance'(B, Balance).
'$balance'(<, <).
'$balance'(=, -).
'$balance'(>, >).

assoc_to_list(t, []).
assoc_to_list(t(K,V,_,L,R), List) :-
    assoc_to_list(L, LL), assoc_to_list(R, RL), append(LL, [K-V|RL], List).
assoc_to_keys(A, Ks) :- assoc_to_list(A, L), pairs_keys(L, Ks).
assoc_to_values(A, Vs) :- assoc_to_list(A, L), pairs_values(L, Vs).

% --- the tracer (Engine::set_trace, tabula query --trace) -------------------
% A meta-interpreter: the program's clauses run goal by goal, each goal
% reporting its ports to '$tport'(Port, Depth, Goal, Site, Answer), Site
% being '$at'(Clause, Path): the clause the goal is written in and the
% argument path to it in the body, innermost first. A cut cuts back to the
% choice-stack height where its clause began. Builtins, the library and
% goals deeper than the depth shown run as they are.

'$trace'(G) :- '$choice'(B), '$tr_body'(G, 0, B, [], []).

'$tr_body'(G, D, _, C, P) :- var(G), !, '$tr_goal'(call(G), D, C, P).
'$tr_body'((A, B), D, Cut, C, P) :- !,
    '$tr_body'(A, D, Cut, C, [1|P]),
    '$tr_body'(B, D, Cut, C, [2|P]).
'$tr_body'(!, _, Cut, _, _) :- !, '$cut'(Cut).
'$tr_body'(true, _, _, _, _) :- !.
'$tr_body'((If -> Then ; Else), D, Cut, C, P) :- !,
    (   '$choice'(B), '$tr_body'(If, D, B, C, [1,1|P])
    ->  '$tr_body'(Then, D, Cut, C, [2,1|P])
    ;   '$tr_body'(Else, D, Cut, C, [2|P])
    ).
'$tr_body'((If *-> Then ; Else), D, Cut, C, P) :- !,
    (   '$choice'(B), '$tr_body'(If, D, B, C, [1,1|P])
    *-> '$tr_body'(Then, D, Cut, C, [2,1|P])
    ;   '$tr_body'(Else, D, Cut, C, [2|P])
    ).
'$tr_body'((A ; B), D, Cut, C, P) :- !,
    (   '$tr_body'(A, D, Cut, C, [1|P])
    ;   '$tr_body'(B, D, Cut, C, [2|P])
    ).
'$tr_body'((If -> Then), D, Cut, C, P) :- !,
    (   '$choice'(B), '$tr_body'(If, D, B, C, [1|P])
    ->  '$tr_body'(Then, D, Cut, C, [2|P])
    ).
'$tr_body'((If *-> Then), D, Cut, C, P) :- !,
    (   '$choice'(B), '$tr_body'(If, D, B, C, [1|P])
    *-> '$tr_body'(Then, D, Cut, C, [2|P])
    ).
'$tr_body'(G, D, _, C, P) :- '$tr_goal'(G, D, C, P).

'$tr_goal'(G, D0, C, P) :-
    D is D0 + 1,
    (   '$tr_shown'(D)
    ->  '$tr_ports'(G, D, '$at'(C, P))
    ;   call(G)
    ).

% A goal that exits leaving no choice point is not gone back into: its
% fail port's alternative is cut too.
'$tr_ports'(G, D, W) :-
    '$tport'(call, D, G, W, []),
    '$choice'(B),
    (   catch('$tr_det'(G, D, W, A, Det), E, '$tr_raise'(E, D, G, W)),
        (   Det == true
        ->  '$cut'(B),
            '$tport'(exit, D, G, W, A)
        ;   (   '$tport'(exit, D, G, W, A)
            ;   '$tport'(redo, D, G, W, A), fail
            )
        )
    ;   '$tport'(fail, D, G, W, []), fail
    ).

'$tr_raise'(E, D, G, W) :- '$tport'(exception(E), D, G, W, []), throw(E).

'$tr_det'(G, D, W, A, Det) :-
    '$choice'(B0),
    '$tr_run'(G, D, W, A),
    '$choice'(B1),
    ( B1 == B0 -> Det = true ; Det = false ).

'$tr_run'(G, D, _, A) :-
    '$tr_user'(G), !,
    '$choice'(B),
    '$clause'(G, Body, A),
    '$tr_body'(Body, D, B, A, []).
'$tr_run'(G, D, W, []) :-
    '$tr_meta'(G, D, W, G1), !,
    call(G1).
'$tr_run'(G, _, _, []) :- call(G).

% The goals of a meta-predicate's goal arguments are traced one deeper.
'$tr_meta'(findall(T, G, L), D, W, findall(T, '$tr_in'(G, D, W, 2), L)).
'$tr_meta'(findall(T, G, L, R), D, W, findall(T, '$tr_in'(G, D, W, 2), L, R)).
'$tr_meta'(forall(A, B), D, W, forall('$tr_in'(A, D, W, 1), '$tr_in'(B, D, W, 2))).
'$tr_meta'(aggregate_all(S, G, R), D, W, aggregate_all(S, '$tr_in'(G, D, W, 2), R)).
'$tr_meta'(\+ G, D, W, \+ '$tr_in'(G, D, W, 1)).
'$tr_meta'(once(G), D, W, once('$tr_in'(G, D, W, 1))).
'$tr_meta'(ignore(G), D, W, ignore('$tr_in'(G, D, W, 1))).
'$tr_meta'(call(G), D, W, '$tr_in'(G, D, W, 1)) :- nonvar(G).
'$tr_meta'(catch(G, E, R), D, W, catch('$tr_in'(G, D, W, 1), E, '$tr_in'(R, D, W, 3))).
'$tr_meta'(G, D, W, '$tr_in'(G1, D, W, 1)) :-
    compound(G), G =.. [call, Cl|Xs], Xs \== [], callable(Cl),
    Cl =.. L0, append(L0, Xs, L1), G1 =.. L1.
'$tr_meta'(maplist(Cl, L), D, W, maplist('$tr_cl'(Cl, D, W), L)) :- callable(Cl).
'$tr_meta'(maplist(Cl, L1, L2), D, W, maplist('$tr_cl'(Cl, D, W), L1, L2)) :- callable(Cl).
'$tr_meta'(maplist(Cl, L1, L2, L3), D, W, maplist('$tr_cl'(Cl, D, W), L1, L2, L3)) :- callable(Cl).
'$tr_meta'(maplist(Cl, L1, L2, L3, L4), D, W, maplist('$tr_cl'(Cl, D, W), L1, L2, L3, L4)) :- callable(Cl).
'$tr_meta'(foldl(Cl, L, V0, V), D, W, foldl('$tr_cl'(Cl, D, W), L, V0, V)) :- callable(Cl).
'$tr_meta'(include(Cl, L, I), D, W, include('$tr_cl'(Cl, D, W), L, I)) :- callable(Cl).
'$tr_meta'(exclude(Cl, L, E), D, W, exclude('$tr_cl'(Cl, D, W), L, E)) :- callable(Cl).

'$tr_in'(G, D, '$at'(C, P), I) :- '$choice'(B), '$tr_body'(G, D, B, C, [I|P]).

'$tr_cl'(Cl, D, W, X1) :- '$tr_apply'(Cl, [X1], D, W).
'$tr_cl'(Cl, D, W, X1, X2) :- '$tr_apply'(Cl, [X1, X2], D, W).
'$tr_cl'(Cl, D, W, X1, X2, X3) :- '$tr_apply'(Cl, [X1, X2, X3], D, W).
'$tr_cl'(Cl, D, W, X1, X2, X3, X4) :- '$tr_apply'(Cl, [X1, X2, X3, X4], D, W).
'$tr_apply'(Cl, Xs, D, W) :- Cl =.. L0, append(L0, Xs, L1), G =.. L1, '$tr_in'(G, D, W, 1).
