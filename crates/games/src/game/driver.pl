% Generic game drivers, loaded after a game's rules (and run unchanged in
% SWI-Prolog for the cross-checks).

% '$perft'(+State, +Depth, -Leaves): the standard move-generator count.
% A game that lists its moves without their successors (the optional
% move/2) has the last ply counted from that list.
'$perft'(_, 0, 1) :- !.
'$perft'(S, _, 0) :- game_over(S, _), !.
'$perft'(S, 1, N) :-
    current_predicate(move/2),
    !,
    findall(M, move(S, M), Ms),
    length(Ms, N).
'$perft'(S, D, N) :-
    D1 is D - 1,
    findall(C, ( move(S, _, S1), '$perft'(S1, D1, C) ), Cs),
    sum_list(Cs, N).

% '$playout'(+State, +Plies0, -Plies, -Result): uniformly random moves to
% the end of the game.
'$playout'(S, P0, P, R) :-
    '$playout'(S, P0, 1000000000000, P, over(R), _).

% '$playout'(+State, +Plies0, +Max, -Plies, -End, -Last): random moves
% until the game is over (End = over(Result)) or Max plies are played
% (End = cut); Last is the position reached.
'$playout'(S, P0, Max, P, E, Last) :-
    (   current_predicate(move/2) -> How = listed ; How = built ),
    '$playout'(How, S, P0, Max, P, E, Last).

'$playout'(How, S, P0, Max, P, E, Last) :-
    (   game_over(S, R0)
    ->  P = P0, E = over(R0), Last = S
    ;   P0 >= Max
    ->  P = P0, E = cut, Last = S
    ;   '$random_move'(How, S, S2)
    ->  P1 is P0 + 1,
        '$playout'(How, S2, P1, Max, P, E, Last)
    ;   throw(error(no_legal_move(S), '$playout'/6))
    ).

% '$random_move'(+How, +State, -Next): the state after a move drawn
% uniformly. A game that lists its moves (the optional move/2, How =
% listed) has only the chosen move's successor built.
'$random_move'(listed, S, S2) :-
    '$sample'(M, move(S, M), M1),
    move(S, M1, S2),
    !.
'$random_move'(built, S, S2) :-
    '$sample'(S1, move(S, _, S1), S2).

% '$status'(+State, +Chance, -Status): over(Result) when the game is over,
% else to_move(Player, C), C = true where chance makes the move (asked
% only when Chance = true: the rules define chance/1).
'$status'(S, _, over(R)) :- game_over(S, R), !.
'$status'(S, Chance, to_move(P, C)) :-
    to_move(S, P),
    !,
    (   Chance == true, chance(S) -> C = true ; C = false ).

% '$after'(+State, +Move, +Chance, -Next, -Status): the position after a
% legal move, and its status.
'$after'(S, M, Chance, S2, St) :-
    move(S, M, S2),
    !,
    '$status'(S2, Chance, St).
