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

% '$perft_counts'(+State, +Depth, -Counts): the counts '$perft'/3 gives
% for depths 1 to Depth, in one walk of the tree to Depth (asking '$perft'
% for each depth walks the shallower levels again each time: four times
% the work in a tree that narrows, as nim's does).
'$perft_counts'(_, 0, []) :- !.
'$perft_counts'(S, D, Zeros) :-
    game_over(S, _),
    !,
    '$zeros'(D, Zeros).
'$perft_counts'(S, 1, [N]) :-
    current_predicate(move/2),
    !,
    findall(M, move(S, M), Ms),
    length(Ms, N).
'$perft_counts'(S, D, [N|Cs]) :-
    D1 is D - 1,
    findall(C, ( move(S, _, S1), '$perft_counts'(S1, D1, C) ), Below),
    length(Below, N),
    '$zeros'(D1, Zeros),
    foldl(maplist(plus), Below, Zeros, Cs).

'$zeros'(N, Zeros) :-
    length(Zeros, N),
    maplist(=(0), Zeros).

% '$playout'(+State, +Plies0, -Plies, -Result): uniformly random moves to
% the end of the game.
'$playout'(S, P0, P, R) :-
    '$playout'(S, P0, 1000000000000, P, over(R), _).

% '$playout'(+State, +Plies0, +Max, -Plies, -End, -Last): random moves
% until the game is over (End = over(Result)) or Max plies are played
% (End = cut); Last is the position reached.
'$playout'(S, P0, Max, P, E, Last) :-
    '$listing'(How),
    '$playout'(How, S, P0, Max, P, E, Last).

% '$listing'(-How): how the moves are listed: alone (the optional move/2,
% How = listed) or with their successors (move/3, How = built).
'$listing'(listed) :- current_predicate(move/2), !.
'$listing'(built).

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

% '$playout_with'(+Plan, +State, +Plies0, +Max, -Plies, -End, -Last):
% '$playout'/6 with the way of drawing moves that '$playout_plan'/3 chose
% (Plan = none: as '$playout'/6 draws them).
'$playout_with'(none, S, P0, Max, P, E, Last) :-
    '$playout'(S, P0, Max, P, E, Last).
'$playout_with'(sampled(A, K, T, Else), S, P0, Max, P, E, Last) :-
    '$playout'(sampled(A, K, T, Else), S, P0, Max, P, E, Last).

% '$policy_playout'(+Plan, +State, +Plies0, +Max, -Plies, -End, -Last):
% '$playout'/6 with each move drawn by the rules' own playout policy (the
% optional playout_move/2), and where it fails, as Plan draws them (Plan
% = none: as '$playout'/6 does).
'$policy_playout'(Plan, S, P0, Max, P, E, Last) :-
    (   Plan == none -> '$listing'(Else) ; Else = Plan ),
    '$playout'(policy(Else), S, P0, Max, P, E, Last).

% '$playout_plan'(+Options, +State, -Plan): how random playouts of the
% game with these options draw a move. Plan = sampled(Actions, K, Tries,
% Else) when the rules number their moves (action_space/2) and drawing an
% action at random, asking move/3 whether it is legal, is expected to cost
% less than listing the moves, as measured in State (the inferences of
% the listing against those of every illegal action asked once): up to
% Tries actions are drawn (as many as cost one listing), then the moves
% are listed (How = Else). Either way each legal move is drawn with the
% same chance: a legal move has one action. Fails otherwise.
'$playout_plan'(Options, S, sampled(A, K, T, Else)) :-
    current_predicate(action_space/2),
    '$listing'(Else),
    catch('$playout_costs'(Options, S, Else, A, K, List, Fail, N), _, fail),
    N > 0,
    % Listing costs List; the K / N - 1 illegal actions drawn on average
    % before a legal one cost Fail / (K - N) each.
    Fail < N * List,
    (   Fail =:= 0 -> T = K ; T is max(1, List * (K - N) // Fail) ).

% '$playout_costs'(+Options, +State, +How, -Actions, -K, -List, -Fail,
% -N): the K actions as a term, the inferences of listing State's N moves
% and of asking move/3 about each illegal action.
'$playout_costs'(Options, S, How, A, K, List, Fail, N) :-
    action_space(Options, Ms),
    A =.. ['$actions'|Ms],
    functor(A, _, K),
    K > 0,
    statistics(inferences, I0),
    (   How == listed -> findall(x, move(S, _), L) ; findall(x, move(S, _, _), L) ),
    statistics(inferences, I1),
    length(L, N),
    List is I1 - I0,
    '$ask_all'(K, A, S, 0, Fail).

'$ask_all'(0, _, _, F, F) :- !.
'$ask_all'(I, A, S, F0, F) :-
    arg(I, A, M),
    statistics(inferences, J0),
    (   move(S, M, _)
    ->  F1 = F0
    ;   statistics(inferences, J1),
        F1 is F0 + J1 - J0
    ),
    I1 is I - 1,
    '$ask_all'(I1, A, S, F1, F).

% '$accepted_actions'(+Options, +State, -Actions): the actions (numbered
% from 0) of action_space/2 that move/3 accepts in State, for `check`:
% random playouts that draw actions play whatever move/3 accepts.
'$accepted_actions'(Options, S, Is) :-
    action_space(Options, Ms),
    findall(I, ( nth0(I, Ms, M), once(move(S, M, _)) ), Is).

% '$random_move'(+How, +State, -Next): the state after a move drawn
% uniformly. A game that lists its moves (the optional move/2, How =
% listed) has only the chosen move's successor built. With How =
% sampled(Actions, K, Tries, Else), actions are drawn until one is legal
% (rejection sampling: each legal move as likely), at most Tries of them,
% and then the moves are listed: a move is drawn at a try with chance 1/K
% and at the listing with chance 1/N, so with chance 1/N in all.
% With How = policy(Else), the rules' playout_move/2 picks the move (a
% move it gives that move/3 does not accept is an error), and where it
% fails, Else draws one.
'$random_move'(policy(Else), S, S2) :-
    (   playout_move(S, M)
    ->  (   move(S, M, S2)
        ->  true
        ;   throw(error(domain_error(legal_move, M), context(playout_move/2, 'playout_move/2 must give a legal move')))
        )
    ;   '$random_move'(Else, S, S2)
    ).
'$random_move'(sampled(A, K, T, Else), S, S2) :-
    (   '$try_actions'(T, A, K, S, S2)
    ->  true
    ;   '$random_move'(Else, S, S2)
    ).
'$random_move'(listed, S, S2) :-
    '$sample'(M, move(S, M), M1),
    move(S, M1, S2),
    !.
'$random_move'(built, S, S2) :-
    '$sample'(S1, move(S, _, S1), S2).

'$try_actions'(T, A, K, S, S2) :-
    T > 0,
    random_between(1, K, I),
    arg(I, A, M),
    (   move(S, M, S2)
    ->  true
    ;   T1 is T - 1,
        '$try_actions'(T1, A, K, S, S2)
    ).

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

% '$after_scan'(+State, +Move, +Chance, -Out): '$after'/5's answers one by
% one, then the next position's moves: Out is the position after the legal
% move, then its status, then each of its moves by move/2 while a player is
% to move without chance (Game::after_action_listed, one query a step).
'$after_scan'(S, M, Chance, Out) :-
    move(S, M, S2),
    !,
    '$status'(S2, Chance, St),
    (   Out = S2
    ;   Out = St
    ;   St = to_move(_, false),
        move(S2, Out)
    ).
