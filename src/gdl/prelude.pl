% ---------------------------------------------------------------------------
% The game interface over the GDL relations above (the same for every GDL
% game; written by `tabula translate`).
%
% A state is gdl(Fluents, Pending): the true fluents, sorted, and the
% choices already made in this round, does(Role, Action) in role order.
% Each round, the roles with two or more legal actions choose one after the
% other (a role with a single legal action plays it); the choices stay
% hidden from the later roles until the last one has chosen, and then the
% joint move gives the next fluents. In a turn-taking game one role chooses
% each round, so a move is a turn.
% ---------------------------------------------------------------------------

players(_, Roles) :- gdl_roles(Roles).

initial_state(_, gdl(Fluents, [])) :-
    findall(F, gdl_init(F), Fs),
    sort(Fs, Fluents).

to_move(gdl(Fs, Pending), Role) :-
    gdl_round(Fs, Legal),
    gdl_mover(Legal, Pending, Role, _).

move(gdl(Fs, Pending), Action, Next) :-
    gdl_round(Fs, Legal),
    gdl_mover(Legal, Pending, Role, Last),
    memberchk(Role-Actions, Legal),
    member(Action, Actions),
    (   Last == true
    ->  gdl_joint(Legal, [does(Role, Action)|Pending], Joint),
        gdl_next_state(Fs, Joint, Next)
    ;   gdl_add_choice(Pending, Role, Action, Legal, Pending1),
        Next = gdl(Fs, Pending1)
    ).

game_over(gdl(Fs, []), Result) :-
    gdl_terminal(Fs),
    gdl_roles(Roles),
    gdl_goals(Roles, Fs, Goals),
    gdl_result(Goals, Result).

score(gdl(Fs, _), Role, Value) :-
    gdl_goal_value(Fs, Role, Value).

notation(Action, Text) :-
    gdl_kif(Action, Text).

% gdl_round(+Fluents, -Legal): every role with its legal actions, sorted
% and without repeats (GDL is set-based). A role without one in a state
% that is not terminal breaks GDL's rules: an error names it.
gdl_round(Fs, Legal) :-
    gdl_roles(Roles),
    gdl_legal_lists(Roles, Fs, Legal).

gdl_legal_lists([], _, []).
gdl_legal_lists([R|Rs], Fs, [R-As|Legal]) :-
    findall(A, gdl_legal(R, A, Fs), As0),
    sort(As0, As),
    (   As == []
    ->  throw(error(existence_error(legal_move_for, R), gdl_round/2))
    ;   true
    ),
    gdl_legal_lists(Rs, Fs, Legal).

% gdl_choosers(+Legal, -Roles): the roles that choose this round: those
% with two or more actions, or the first role when every role has one.
gdl_choosers(Legal, Roles) :-
    findall(R, member(R-[_, _|_], Legal), Roles0),
    (   Roles0 == []
    ->  Legal = [R0-_|_],
        Roles = [R0]
    ;   Roles = Roles0
    ).

% gdl_mover(+Legal, +Pending, -Role, -Last): the next role to choose, and
% whether its choice completes the round.
gdl_mover(Legal, Pending, Role, Last) :-
    gdl_choosers(Legal, Roles),
    gdl_unchosen(Roles, Pending, [Role|Rest]),
    (   Rest == []
    ->  Last = true
    ;   Last = false
    ).

gdl_unchosen([], _, []).
gdl_unchosen([R|Rs], Pending, Free) :-
    (   memberchk(does(R, _), Pending)
    ->  Free = Free1
    ;   Free = [R|Free1]
    ),
    gdl_unchosen(Rs, Pending, Free1).

% gdl_add_choice(+Pending, +Role, +Action, +Legal, -Pending1): Pending
% with does(Role, Action), kept in role order.
gdl_add_choice(Pending, Role, Action, Legal, Pending1) :-
    findall(does(R, A),
            ( member(R-_, Legal),
              (   R == Role
              ->  A = Action
              ;   memberchk(does(R, A), Pending)
              )
            ),
            Pending1).

% gdl_joint(+Legal, +Chosen, -Joint): every role's action this round.
gdl_joint([], _, []).
gdl_joint([R-As|Legal], Chosen, [does(R, A)|Joint]) :-
    (   memberchk(does(R, A0), Chosen)
    ->  A = A0
    ;   As = [A]
    ),
    gdl_joint(Legal, Chosen, Joint).

gdl_next_state(Fs, Joint, gdl(Next, [])) :-
    findall(F, gdl_next(F, Fs, Joint), Next0),
    sort(Next0, Next).

% Goal values: the highest a role reaches (0 when none is defined).
gdl_goal_value(Fs, Role, Value) :-
    findall(V, gdl_goal(Role, V, Fs), Vs),
    Vs \== [],
    max_list(Vs, Value).

gdl_goals([], _, []).
gdl_goals([R|Rs], Fs, [V-R|Goals]) :-
    (   gdl_goal_value(Fs, R, V0)
    ->  V = V0
    ;   V = 0
    ),
    gdl_goals(Rs, Fs, Goals).

% The role with the highest goal value wins; when several share it
% (all equal, or a tie at the top among three or more roles) it is a draw.
gdl_result(Goals, Result) :-
    msort(Goals, Sorted),
    reverse(Sorted, [Best-Winner|Others]),
    (   memberchk(Best-_, Others)
    ->  Result = draw
    ;   Result = winner(Winner)
    ).

% gdl_kif(+Term, -Text): a term written as KIF, e.g. '(mark 1 1)'.
gdl_kif(T, Text) :-
    compound(T),
    !,
    T =.. [F|Args],
    maplist(gdl_kif, Args, Texts),
    atomic_list_concat([F|Texts], ' ', Inner),
    atomic_list_concat(['(', Inner, ')'], Text).
gdl_kif(T, T).

% ---------------------------------------------------------------------------
% Display: the fluents grouped by relation; a relation whose first two
% arguments are integers is drawn as a grid (first argument the column,
% second the row, highest row on top).
% ---------------------------------------------------------------------------

display(gdl(Fs, Pending), Viewer) :-
    gdl_groups(Fs, Groups),
    forall(member(G, Groups), gdl_show_group(G)),
    forall(member(does(R, A), Pending), gdl_show_choice(R, A, Viewer)).

% gdl_groups(+Fluents, -Groups): consecutive fluents with the same name
% and arity (the list is sorted, so they are together).
gdl_groups([], []).
gdl_groups([F|Fs], [Key-[F|Same]|Groups]) :-
    gdl_key(F, Key),
    gdl_same(Fs, Key, Same, Rest),
    gdl_groups(Rest, Groups).

gdl_same([F|Fs], Key, [F|Same], Rest) :-
    gdl_key(F, Key),
    !,
    gdl_same(Fs, Key, Same, Rest).
gdl_same(Fs, _, [], Fs).

gdl_key(F, Name/Arity) :- functor(F, Name, Arity).

gdl_show_group(_/0-Fs) :-
    !,
    forall(member(F, Fs), (write(F), nl)).
gdl_show_group(Name/Arity-Fs) :-
    Arity >= 3,
    forall(member(F, Fs), (arg(1, F, X), integer(X), arg(2, F, Y), integer(Y))),
    !,
    gdl_grid(Name, Fs).
gdl_show_group(Name/_-Fs) :-
    findall(Text, (member(F, Fs), F =.. [_|Args], gdl_kif_args(Args, Text)), Texts),
    atomic_list_concat(Texts, ', ', All),
    format("~w: ~w~n", [Name, All]).

gdl_kif_args(Args, Text) :-
    maplist(gdl_kif, Args, Texts),
    atomic_list_concat(Texts, ' ', Text).

gdl_grid(Name, Fs) :-
    findall(X, (member(F, Fs), arg(1, F, X)), Xs),
    findall(Y, (member(F, Fs), arg(2, F, Y)), Ys),
    min_list(Xs, X0), max_list(Xs, X1),
    min_list(Ys, Y0), max_list(Ys, Y1),
    findall(X-Y-Text,
            ( member(F, Fs), F =.. [_, X, Y|Rest], gdl_kif_args(Rest, Text) ),
            Cells),
    findall(L, (member(_-_-T, Cells), atom_length(T, L)), Ls),
    max_list([1|Ls], W),
    atom_length(Y1, WY),
    format("~w:~n", [Name]),
    forall(between(Y0, Y1, K),
           ( Y is Y1 - (K - Y0),
             gdl_pad(Y, WY), write(' |'),
             forall(between(X0, X1, X),
                    ( (   memberchk(X-Y-T, Cells) -> true ; T = '.' ),
                      write(' '), gdl_pad(T, W) )),
             nl )),
    WY2 is WY + 2, tab(WY2),
    forall(between(X0, X1, X), (write(' '), gdl_pad(X, W))),
    nl.

gdl_pad(T, W) :-
    atom_length(T, L),
    N is W - L,
    tab(N),
    write(T).

gdl_show_choice(R, A, R) :-
    !,
    gdl_kif(A, Text),
    format("~w chose ~w (hidden from the others)~n", [R, Text]).
gdl_show_choice(R, _, _) :-
    format("~w has chosen~n", [R]).

% sample_state for simultaneous games: the choices Viewer cannot see are
% drawn again among those roles' legal actions.
gdl_sample_state(gdl(Fs, Pending), Viewer, gdl(Fs, Pending1)) :-
    gdl_resample(Pending, Fs, Viewer, Pending1).

gdl_resample([], _, _, []).
gdl_resample([does(R, A)|Pending], Fs, Viewer, [does(R, A1)|Pending1]) :-
    (   R == Viewer
    ->  A1 = A
    ;   findall(B, gdl_legal(R, B, Fs), Bs0),
        sort(Bs0, Bs),
        random_member(A1, Bs)
    ),
    gdl_resample(Pending, Fs, Viewer, Pending1).

% gdl_simultaneous(+Playouts, +MaxPlies): some round of these random
% playouts has two roles choosing.
gdl_simultaneous(N, Max) :-
    between(1, N, _),
    initial_state([], S0),
    gdl_probe(S0, Max),
    !.

gdl_probe(gdl(Fs, _), _) :-
    gdl_round(Fs, Legal),
    gdl_choosers(Legal, [_, _|_]),
    !.
gdl_probe(S, Max) :-
    Max > 0,
    \+ game_over(S, _),
    findall(S1, move(S, _, S1), Ss),
    random_member(S2, Ss),
    Max1 is Max - 1,
    gdl_probe(S2, Max1).
