% ---------------------------------------------------------------------------
% The game interface over the GDL relations above (the same for every GDL
% game; written by `tabula translate`).
%
% A state is gdl(Fluents, Pending, Rounds): the true fluents, sorted; the
% choices already made in this round, does(Role, Action) in role order;
% and in a GDL-II game (one with `sees` or the role `random`) the rounds
% played, latest first, each r(Joint, Seen): the joint move and what each
% role saw, seen(Role, Percept) (empty in other games).
% Each round, the roles with two or more legal actions choose one after the
% other (a role with a single legal action plays it); the choices stay
% hidden from the later roles until the last one has chosen, and then the
% joint move gives the next fluents. In a turn-taking game one role chooses
% each round, so a move is a turn. The role `random` (GDL-II's chance) is
% no seat: it chooses last in its rounds, and uniformly at random.
% ---------------------------------------------------------------------------

players(_, Players) :- gdl_players(Players).

initial_state(_, gdl(Fluents, [], [])) :-
    findall(F, gdl_init(F), Fs),
    sort(Fs, Fluents).

to_move(gdl(Fs, Pending, _), Role) :-
    gdl_kinds(Fs, Kinds),
    gdl_mover(Kinds, Pending, Role, _).

% move(+State, ?Action, -Next). With Action given (and ground), only its
% legality is checked, and only its successor built.
move(gdl(Fs, Pending, Rounds), Action, Next) :-
    gdl_kinds(Fs, Kinds),
    gdl_mover(Kinds, Pending, Role, Last),
    (   ground(Action)
    ->  gdl_is_legal(Role, Action, Fs)
    ;   gdl_actions(Role, Fs, Actions),
        member(Action, Actions)
    ),
    (   Last == true
    ->  gdl_joint(Kinds, [does(Role, Action)|Pending], Joint),
        gdl_next_state(Fs, Joint, Rounds, Next)
    ;   gdl_add_choice(Pending, Role, Action, Kinds, Pending1),
        Next = gdl(Fs, Pending1, Rounds)
    ).

% move(+State, -Action): the actions of the role to move, without the
% states they lead to (a random playout builds only the chosen one's).
move(gdl(Fs, Pending, _), Action) :-
    gdl_kinds(Fs, Kinds),
    gdl_mover(Kinds, Pending, Role, _),
    gdl_actions(Role, Fs, Actions),
    member(Action, Actions).

game_over(gdl(Fs, [], _), Result) :-
    gdl_terminal(Fs),
    gdl_players(Players),
    gdl_goals(Players, Fs, Goals),
    gdl_result(Goals, Result).

% The goal values; in GDL-II only once the game is over (they are
% computed from the fluents, which the players do not see).
score(gdl(Fs, Pending, _), Role, Value) :-
    (   gdl_ii(true)
    ->  Pending == [],
        gdl_terminal(Fs)
    ;   true
    ),
    gdl_goal_value(Fs, Role, Value).

notation(Action, Text) :-
    gdl_kif(Action, Text).

% gdl_is_legal(+Role, +Action, +Fluents): whether Role may take Action.
gdl_is_legal(Role, Action, Fs) :-
    \+ \+ gdl_legal(Role, Action, Fs).

% gdl_actions(+Role, +Fluents, -Actions): Role's legal actions, sorted and
% without repeats (GDL is set-based).
gdl_actions(Role, Fs, Actions) :-
    findall(A, gdl_legal(Role, A, Fs), As),
    sort(As, Actions).

% gdl_kinds(+Fluents, -Kinds): each role with `many` (two or more legal
% actions: it chooses) or one(Action), found without listing them all. A
% terminal state has no moves; a role without a legal action in a state
% that is not terminal breaks GDL's rules: an error names it.
gdl_kinds(Fs, Kinds) :-
    gdl_roles(Roles),
    gdl_kinds(Roles, Fs, Kinds).

gdl_kinds([], _, []).
gdl_kinds([R|Rs], Fs, [R-K|Kinds]) :-
    (   gdl_legal(R, A1, Fs), gdl_legal(R, A2, Fs), A1 \== A2
    ->  K = many
    ;   gdl_legal(R, A, Fs)
    ->  K = one(A)
    ;   gdl_terminal(Fs)
    ->  fail
    ;   gdl_no_legal_action(R, Fs)
    ),
    gdl_kinds(Rs, Fs, Kinds).

% gdl_no_legal_action(+Role, +Fluents), gdl_no_goal(+Role, +Fluents): the
% errors of a game that breaks GDL's rules, naming the role, the rule and
% the state (its first fluents).
gdl_no_legal_action(R, Fs) :-
    gdl_forbidden(legal_action, gdl_kinds/3, R, Fs,
                  'has no legal action in a state that is not terminal',
                  'every role has a legal action until terminal holds').

gdl_no_goal(R, Fs) :-
    gdl_forbidden(goal_value, gdl_goals/3, R, Fs,
                  'has no goal value in a terminal state',
                  'every role has a goal value when terminal holds').

gdl_forbidden(Kind, Where, R, Fs, What, Rule) :-
    gdl_state_text(Fs, Shown),
    format(atom(Message), '~w ~w, which GDL forbids (~w); the state: ~w', [R, What, Rule, Shown]),
    throw(error(existence_error(Kind, R), context(Where, Message))).

% gdl_state_text(+Fluents, -Text): the first twelve fluents as KIF, and
% how many more there are.
gdl_state_text(Fs, Text) :-
    length(Fs, N),
    findall(T, ( nth1(I, Fs, F), I =< 12, gdl_kif(F, T) ), Texts),
    atomic_list_concat(Texts, ' ', Shown),
    (   N > 12 -> More is N - 12, format(atom(Rest), ' ... and ~d more', [More]) ; Rest = '' ),
    atom_concat(Shown, Rest, Text).

% gdl_choosers(+Kinds, -Roles): the roles that choose this round: those
% with two or more actions, `random` last. When every role has one, one of
% them is said to choose (any would do: the joint move is the same): the
% first player whose action has arguments, like (mark 3 3) beside noop,
% else the first player.
gdl_choosers(Kinds, Roles) :-
    findall(R, ( member(R-many, Kinds), R \== random ), Players),
    (   memberchk(random-many, Kinds)
    ->  append(Players, [random], Roles)
    ;   Players \== []
    ->  Roles = Players
    ;   member(R0-one(A), Kinds), R0 \== random, compound(A)
    ->  Roles = [R0]
    ;   member(R0-_, Kinds), R0 \== random
    ->  Roles = [R0]
    ).

% gdl_mover(+Kinds, +Pending, -Role, -Last): the next role to choose, and
% whether its choice completes the round.
gdl_mover(Kinds, Pending, Role, Last) :-
    gdl_choosers(Kinds, Roles),
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

% gdl_add_choice(+Pending, +Role, +Action, +Kinds, -Pending1): Pending
% with does(Role, Action), kept in role order.
gdl_add_choice(Pending, Role, Action, Kinds, Pending1) :-
    findall(does(R, A),
            ( member(R-_, Kinds),
              (   R == Role
              ->  A = Action
              ;   memberchk(does(R, A), Pending)
              )
            ),
            Pending1).

% gdl_joint(+Kinds, +Chosen, -Joint): every role's action this round.
gdl_joint([], _, []).
gdl_joint([R-K|Kinds], Chosen, [does(R, A)|Joint]) :-
    (   memberchk(does(R, A0), Chosen)
    ->  A = A0
    ;   K = one(A)
    ),
    gdl_joint(Kinds, Chosen, Joint).

gdl_next_state(Fs, Joint, Rounds, gdl(Next, [], Rounds1)) :-
    gdl_next_fluents(Fs, Joint, Next),
    (   gdl_ii(true)
    ->  gdl_percepts(Fs, Joint, Seen),
        Rounds1 = [r(Joint, Seen)|Rounds]
    ;   Rounds1 = Rounds
    ).

gdl_next_fluents(Fs, Joint, Next) :-
    findall(F, gdl_next(F, Fs, Joint), Next0),
    sort(Next0, Next).

% gdl_percepts(+Fluents, +Joint, -Seen): what each player sees of the
% joint move made in Fluents (GDL-II's `sees`), sorted.
gdl_percepts(Fs, Joint, Seen) :-
    gdl_players(Players),
    findall(seen(R, P), ( member(R, Players), gdl_sees(R, P, Fs, Joint) ), Seen0),
    sort(Seen0, Seen).

% Goal values: the highest a role reaches (GDL wants exactly one; a game
% that gives a role several in a state is read as giving it the highest).
gdl_goal_value(Fs, Role, Value) :-
    findall(V, gdl_goal(Role, V, Fs), Vs),
    Vs \== [],
    max_list(Vs, Value).

% gdl_goals(+Roles, +Fluents, -Goals): every role's goal value in a
% terminal state; a role without one is an error of the game.
gdl_goals([], _, []).
gdl_goals([R|Rs], Fs, [V-R|Goals]) :-
    (   gdl_goal_value(Fs, R, V0)
    ->  V = V0
    ;   gdl_no_goal(R, Fs)
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
gdl_kif(T, Text) :-
    format(atom(Text), '~w', [T]).

% gdl_role_actions(+State, +Role, -Texts): Role's legal actions this
% round, written as KIF (what a GGP player answers).
gdl_role_actions(gdl(Fs, _, _), Role, Texts) :-
    gdl_actions(Role, Fs, Actions),
    maplist(gdl_kif, Actions, Texts).

% ---------------------------------------------------------------------------
% Display: the fluents grouped by relation; a relation whose first two
% arguments are integers is drawn as a grid (first argument the column,
% second the row, highest row on top).
% ---------------------------------------------------------------------------

display(gdl(Fs, Pending, Rounds), Viewer) :-
    gdl_ii_private(Fs, Pending, Rounds, Viewer, Texts),
    !,
    forall(member(T, Texts), (write(T), nl)).
display(gdl(Fs, Pending, _), Viewer) :-
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
gdl_sample_state(gdl(Fs, Pending, Rounds), Viewer, gdl(Fs, Pending1, Rounds)) :-
    gdl_resample(Pending, Fs, Viewer, Pending1).

gdl_resample([], _, _, []).
gdl_resample([does(R, A)|Pending], Fs, Viewer, [does(R, A1)|Pending1]) :-
    (   R == Viewer
    ->  A1 = A
    ;   gdl_actions(R, Fs, Bs),
        random_member(A1, Bs)
    ),
    gdl_resample(Pending, Fs, Viewer, Pending1).

% gdl_hidden_move(+State): the choice made now does not end the round.
gdl_hidden_move(gdl(Fs, Pending, _)) :-
    gdl_kinds(Fs, Kinds),
    gdl_mover(Kinds, Pending, _, false).

% gdl_simultaneous(+Playouts, +MaxPlies): some round of these random
% playouts has two roles choosing.
gdl_simultaneous(N, Max) :-
    between(1, N, _),
    initial_state([], S0),
    gdl_probe(S0, Max),
    !.

% gdl_walk(+Walks, +MaxPlies, -Plies): random games from the start, each
% cut after MaxPlies, and the plies they played (what a ply costs on each
% path is measured on them when the game loads).
gdl_walk(N, Max, Plies) :-
    initial_state([], S0),
    findall(P, ( between(1, N, _), gdl_walk(S0, 0, Max, P) ), Ps),
    sum_list(Ps, Plies).

gdl_walk(S, P0, Max, P) :-
    (   P0 < Max,
        \+ game_over(S, _),
        findall(M, move(S, M), Ms),
        random_member(M1, Ms),
        move(S, M1, S2)
    ->  P1 is P0 + 1,
        gdl_walk(S2, P1, Max, P)
    ;   P = P0
    ).

gdl_probe(gdl(Fs, _, _), _) :-
    gdl_kinds(Fs, Kinds),
    gdl_choosers(Kinds, [_, _|_]),
    !.
gdl_probe(S, Max) :-
    Max > 0,
    \+ game_over(S, _),
    findall(M, move(S, M), Ms),
    random_member(M1, Ms),
    move(S, M1, S2),
    !,
    Max1 is Max - 1,
    gdl_probe(S2, Max1).

% ---------------------------------------------------------------------------
% The web board: the grid relation (as in display/2) drawn as squares
% c(X, Y), a value that is a role drawn as that role's piece, other values
% as labels, except the one filling most of the grid at the start (the
% "empty" mark); the other fluents and the choices as text. A move is
% clicked on the squares its integer pairs name, e.g. (move 1 2 1 3).
% ---------------------------------------------------------------------------

view(gdl(Fs, Pending, Rounds), Viewer, Items) :-
    gdl_ii_private(Fs, Pending, Rounds, Viewer, Texts),
    !,
    % The empty board (its extent is in the rules), and what Viewer knows.
    gdl_frame([], _, Frame),
    findall(text(T), member(T, Texts), Lines),
    append(Frame, Lines, Items).
view(gdl(Fs, Pending, _), Viewer, Items) :-
    gdl_roles(Roles),
    gdl_groups(Fs, Groups),
    gdl_frame(Fs, Name, Frame),
    (   Name \== none
    ->  gdl_empty_mark(Name, Empty),
        findall(Item,
                ( member(F, Fs), F =.. [Name, X, Y|Rest], integer(X), integer(Y),
                  gdl_kif_args(Rest, Text), Text \== Empty,
                  (   Rest = [V], memberchk(V, Roles)
                  ->  Item = piece(c(X, Y), V, '')
                  ;   Item = label(c(X, Y), Text)
                  ) ),
                Marks)
    ;   Marks = []
    ),
    findall(text(T),
            ( member(G, Groups), G = N/_-_, N \== Name, gdl_group_text(G, T) ),
            Texts),
    findall(text(T), ( member(does(R, A), Pending), gdl_choice_text(R, A, Viewer, T) ), Chosen),
    append([Frame, Marks, Texts, Chosen], Items).

% gdl_frame(+Fluents, -Name, -Items): the squares c(X, Y) of the grid
% relation Name (see gdl_board/6) with the labels of its columns and rows;
% Name is none, and there are no items, where the game has no grid.
gdl_frame(Fs, Name, Items) :-
    (   gdl_board(Fs, Name, X0, X1, Y0, Y1)
    ->  findall(site(c(X, Y), SX, SY),
                ( between(Y0, Y1, Y), between(X0, X1, X), SX is X - X0, SY is Y1 - Y ),
                Sites),
        Below is Y1 - Y0 + 1,
        findall(label(SX, Below, X), ( between(X0, X1, X), SX is X - X0 ), Columns),
        findall(label(-1, SY, Y), ( between(Y0, Y1, Y), SY is Y1 - Y ), Rows),
        append([Sites, Columns, Rows], Items)
    ;   Name = none,
        Items = []
    ).

% gdl_board(+Fluents, -Name, -X0, -X1, -Y0, -Y1): the grid relation and the
% extent of its coordinates now, at the start, and in the game's `base`
% fluents (GDL's optional list of every fluent there can be).
gdl_board(Fs, Name, X0, X1, Y0, Y1) :-
    initial_state([], gdl(Init, _, _)),
    findall(B, gdl_base(B), Base),
    append([Fs, Init, Base], All),
    member(F, All),
    functor(F, Name, Arity),
    Arity >= 3,
    arg(1, F, FX), integer(FX), arg(2, F, FY), integer(FY),
    !,
    findall(X-Y, ( member(G, All), functor(G, Name, Arity), arg(1, G, X), arg(2, G, Y),
                   integer(X), integer(Y) ), Points),
    findall(X, member(X-_, Points), Xs),
    findall(Y, member(_-Y, Points), Ys),
    min_list(Xs, X0), max_list(Xs, X1),
    min_list(Ys, Y0), max_list(Ys, Y1).

% The value, not a role, that fills at least half of the grid at the
% start, if any.
gdl_empty_mark(Name, Empty) :-
    initial_state([], gdl(Init, _, _)),
    findall(T, ( member(F, Init), F =.. [Name, X, Y|Rest], integer(X), integer(Y),
                 gdl_kif_args(Rest, T) ), Ts),
    length(Ts, N),
    msort(Ts, Sorted),
    gdl_runs(Sorted, Runs),
    max_member(C-E, Runs),
    C * 2 >= N,
    gdl_roles(Roles),
    \+ memberchk(E, Roles),
    !,
    Empty = E.
gdl_empty_mark(_, '').

% gdl_runs(+Sorted, -Runs): Count-Item for each run of equal items.
gdl_runs([], []).
gdl_runs([T|Ts], [C-T|Runs]) :-
    gdl_run(Ts, T, 1, C, Rest),
    gdl_runs(Rest, Runs).

gdl_run([T|Ts], T, C0, C, Rest) :-
    !,
    C1 is C0 + 1,
    gdl_run(Ts, T, C1, C, Rest).
gdl_run(Ts, _, C, C, Ts).

gdl_group_text(_/0-Fs, T) :-
    !,
    atomic_list_concat(Fs, ', ', T).
gdl_group_text(Name/_-Fs, T) :-
    findall(Text, (member(F, Fs), F =.. [_|Args], gdl_kif_args(Args, Text)), Texts),
    atomic_list_concat(Texts, ', ', All),
    format(atom(T), '~w: ~w', [Name, All]).

gdl_choice_text(R, A, R, T) :-
    !,
    gdl_kif(A, Text),
    format(atom(T), 'you chose ~w', [Text]).
gdl_choice_text(R, _, _, T) :-
    format(atom(T), '~w has chosen', [R]).

move_clicks(gdl(Fs0, _, _), Action, Clicks) :-
    Action =.. [_|Args],
    gdl_pairs(Args, Pairs),
    % In GDL-II the players' boards show the rules' extent only.
    (   gdl_ii(true) -> Fs = [] ; Fs = Fs0 ),
    (   Pairs \== [],
        gdl_board(Fs, _, X0, X1, Y0, Y1),
        forall(member(c(X, Y), Pairs), (X >= X0, X =< X1, Y >= Y0, Y =< Y1))
    ->  Clicks = Pairs
    ;   Clicks = []
    ).

gdl_pairs([X, Y|Rest], [c(X, Y)|Pairs]) :-
    integer(X), integer(Y),
    !,
    gdl_pairs(Rest, Pairs).
gdl_pairs([_|Rest], Pairs) :-
    !,
    gdl_pairs(Rest, Pairs).
gdl_pairs([], []).

% gdl_reach(+Base, +Step, +Question, +Env): a relation that is a question
% of reachability (see `reach_text` in src/gdl/emit.rs), searched breadth
% first, each question once: Question holds if Base proves it, or if Step
% leads from it to a question that holds.
gdl_reach(Base, Step, Question, Env) :-
    gdl_reach([Question], [Question], Base, Step, Env).

gdl_reach([Q|Queue], Seen, Base, Step, Env) :-
    (   call(Base, Q, Env)
    ->  true
    ;   findall(Q2, (call(Step, Q, Env, Q2), \+ ord_memberchk(Q2, Seen)), Qs),
        sort(Qs, New),
        append(Seen, New, Seen0),
        sort(Seen0, Seen1),
        append(Queue, New, Queue1),
        gdl_reach(Queue1, Seen1, Base, Step, Env)
    ).

% gdl_memo(+Key, +Fluents, +Template, +Goal, -Answers): the answers of a
% relation in a state (Template for each proof of Goal, sorted), computed
% once a state: global variable Key keeps the last state asked and its
% answers (see `memo` in src/gdl/emit.rs).
gdl_memo(Key, Fs, Template, Goal, Answers) :-
    (   nb_current(Key, memo(Fs0, Answers0)),
        Fs0 == Fs
    ->  Answers = Answers0
    ;   findall(Template, Goal, As),
        sort(As, Answers),
        nb_setval(Key, memo(Fs, Answers))
    ).

% ---------------------------------------------------------------------------
% GDL-II: what a player knows is its own moves and what it saw (`sees`),
% round by round; never the fluents, nor the others' moves.
% ---------------------------------------------------------------------------

% gdl_ii_private(+Fluents, +Pending, +Rounds, +Viewer, -Texts): in a GDL-II
% game, what Viewer knows, as lines of text: a player its own moves and
% percepts; anyone else (a spectator) only how many rounds were played.
% Once the game is over everyone sees everything (this fails).
gdl_ii_private(Fs, Pending, Rounds, Viewer, Texts) :-
    gdl_ii(true),
    \+ ( Pending == [], gdl_terminal(Fs) ),
    gdl_players(Players),
    (   memberchk(Viewer, Players)
    ->  gdl_seen_texts(Rounds, Pending, Viewer, Texts)
    ;   length(Rounds, N),
        format(atom(T), '~d rounds played; the players see only their own moves and percepts', [N]),
        Texts = [T]
    ).

% gdl_seen_texts(+Rounds, +Pending, +Viewer, -Texts): Viewer's rounds as
% lines of text, oldest first, then its choice in this round if made.
gdl_seen_texts(Rounds, Pending, Viewer, Texts) :-
    reverse(Rounds, Played),
    format(atom(Head), 'you play ~w', [Viewer]),
    findall(T,
            ( nth1(I, Played, r(Joint, Seen)),
              memberchk(does(Viewer, A), Joint),
              gdl_kif(A, AText),
              findall(PT, ( member(seen(Viewer, P), Seen), gdl_kif(P, PT) ), PTs),
              (   PTs == []
              ->  SeenText = 'nothing'
              ;   atomic_list_concat(PTs, ', ', SeenText)
              ),
              format(atom(T), 'round ~d: you did ~w, and saw ~w', [I, AText, SeenText]) ),
            Lines),
    (   memberchk(does(Viewer, A), Pending)
    ->  gdl_kif(A, AText),
        format(atom(Now), 'this round: you chose ~w', [AText]),
        append([Head|Lines], [Now], Texts)
    ;   Texts = [Head|Lines]
    ).

% gdl_ii_sample_state(+State, +Viewer, -Sampled): a state Viewer cannot
% tell from State: rounds from the start in which Viewer made the same
% moves and saw the same, the other roles' moves (and chance's) drawn at
% random, searched depth first; then this round's choices Viewer has not
% seen drawn again.
gdl_ii_sample_state(gdl(Fs, Pending, Rounds), Viewer, gdl(Fs1, Pending1, Rounds1)) :-
    reverse(Rounds, Played),
    initial_state([], gdl(Fs0, [], [])),
    gdl_roles(Roles),
    nb_setval(gdl_tries, 0),
    gdl_replay(Played, Roles, Viewer, Fs0, [], Fs1, Rounds1),
    % Whether the game is over, and who is to choose, Viewer knows too.
    (   gdl_terminal(Fs)
    ->  gdl_terminal(Fs1),
        Pending1 = Pending
    ;   \+ gdl_terminal(Fs1),
        gdl_redraw(Pending, Viewer, Fs1, Pending1),
        to_move(gdl(Fs, Pending, Rounds), Mover),
        to_move(gdl(Fs1, Pending1, Rounds1), Mover)
    ),
    !.

% gdl_replay(+Played, +Roles, +Viewer, +Fluents, +Acc, -FluentsN, -RoundsN):
% the rounds Played again from Fluents, with joint moves in which Viewer
% does and sees the same (a round was played, so the game was not over).
gdl_replay([], _, _, Fs, Rounds, Fs, Rounds).
gdl_replay([r(Joint, Seen)|Played], Roles, Viewer, Fs, Acc, FsN, RoundsN) :-
    \+ gdl_terminal(Fs),
    findall(P, member(seen(Viewer, P), Seen), Saw),
    gdl_draw_joint(Roles, Joint, Viewer, Fs, Joint1),
    gdl_count_try,
    gdl_percepts(Fs, Joint1, Seen1),
    findall(P, member(seen(Viewer, P), Seen1), Saw),
    gdl_next_fluents(Fs, Joint1, Fs1),
    gdl_replay(Played, Roles, Viewer, Fs1, [r(Joint1, Seen1)|Acc], FsN, RoundsN).

% gdl_count_try: one more joint move tried by the search for a play of
% the game consistent with what a player saw; the search is bounded (an
% error, never a hang, where what the player saw leaves too many plays).
gdl_count_try :-
    nb_getval(gdl_tries, N),
    N1 is N + 1,
    nb_setval(gdl_tries, N1),
    (   N1 > 100000
    ->  throw(error(resource_error(gdl_sample_tries),
                    context(sample_state/3, 'no play of the game showing the player what it saw was found in 100000 joint moves tried')))
    ;   true
    ).

% gdl_draw_joint(+Roles, +Joint, +Viewer, +Fluents, -Joint1): Viewer's
% action as in Joint (legal in Fluents), the others' each of their legal
% actions in a random order, on backtracking.
gdl_draw_joint([], _, _, _, []).
gdl_draw_joint([R|Rs], Joint, Viewer, Fs, [does(R, A)|Joint1]) :-
    (   R == Viewer
    ->  memberchk(does(R, A), Joint),
        \+ \+ gdl_legal(R, A, Fs)
    ;   gdl_actions(R, Fs, As),
        random_permutation(As, Drawn),
        member(A, Drawn)
    ),
    gdl_draw_joint(Rs, Joint, Viewer, Fs, Joint1).

% gdl_redraw(+Pending, +Viewer, +Fluents, -Pending1): this round's choices,
% Viewer's kept (if still legal), the others' drawn again.
gdl_redraw([], _, _, []).
gdl_redraw([does(R, A)|Pending], Viewer, Fs, [does(R, A1)|Pending1]) :-
    (   R == Viewer
    ->  \+ \+ gdl_legal(R, A, Fs),
        A1 = A
    ;   gdl_actions(R, Fs, As),
        random_member(A1, As)
    ),
    gdl_redraw(Pending, Viewer, Fs, Pending1).

% gdl_ii_believed(+Record, +Viewer, -State): a state of the game Viewer
% cannot tell from the real one, found from what a GDL-II game master told
% it: Record holds its rounds, oldest first, as r(Action, Percepts), the
% action it made and the percepts it got, written as KIF text. The other
% roles' moves are drawn at random and searched depth first.
gdl_ii_believed(Record, Viewer, gdl(Fs, [], Rounds)) :-
    initial_state([], gdl(Fs0, [], [])),
    gdl_roles(Roles),
    nb_setval(gdl_tries, 0),
    gdl_believe(Record, Roles, Viewer, Fs0, [], Fs, Rounds),
    !.

gdl_believe([], _, _, Fs, Rounds, Fs, Rounds).
gdl_believe([r(Text, Told)|Record], Roles, Viewer, Fs, Acc, FsN, RoundsN) :-
    \+ gdl_terminal(Fs),
    gdl_actions(Viewer, Fs, Mine),
    member(A, Mine),
    gdl_kif(A, Text),
    gdl_draw_joint(Roles, [does(Viewer, A)], Viewer, Fs, Joint),
    gdl_count_try,
    gdl_percepts(Fs, Joint, Seen),
    findall(T, ( member(seen(Viewer, P), Seen), gdl_kif(P, T) ), Ts),
    sort(Ts, Sorted),
    sort(Told, Sorted),
    gdl_next_fluents(Fs, Joint, Fs1),
    gdl_believe(Record, Roles, Viewer, Fs1, [r(Joint, Seen)|Acc], FsN, RoundsN).

% gdl_told(+State, +Role, -Action, -Percepts): what a GDL-II game master
% tells Role after the round that led to State: its action in it and its
% percepts, as KIF text.
gdl_told(gdl(_, _, [r(Joint, Seen)|_]), Role, Action, Percepts) :-
    memberchk(does(Role, A), Joint),
    gdl_kif(A, Action),
    findall(T, ( member(seen(Role, P), Seen), gdl_kif(P, T) ), Percepts).

% gdl_ii_observation(+State, +Viewer, -Numbers): what a learning agent of a
% GDL-II game sees, as numbers of a fixed length (what the player knows,
% no more): whose turn it is (one per player), then Viewer's choice this
% round and, for each of its last 8 rounds (latest first), its action and
% its percepts, each written as KIF and hashed into 32 buckets (1 where
% one falls). The buckets are a hash, so two texts may share one; the
% same text always lands in the same.
gdl_ii_observation(gdl(Fs, Pending, Rounds), Viewer, Numbers) :-
    gdl_players(Players),
    (   \+ ( Pending == [], gdl_terminal(Fs) ),
        to_move(gdl(Fs, Pending, Rounds), Mover)
    ->  true
    ;   Mover = none
    ),
    findall(X, ( member(P, Players), ( P == Mover -> X = 1 ; X = 0 ) ), Turn),
    findall(T, ( member(does(Viewer, A), Pending), gdl_kif(A, T) ), Chosen),
    gdl_buckets(Chosen, Now),
    length(Slots, 8),
    gdl_fill_slots(Slots, Rounds),
    findall(B,
            ( member(Slot, Slots),
              (   Slot = r(Joint, Seen), memberchk(does(Viewer, A), Joint)
              ->  gdl_kif(A, AT),
                  findall(PT, ( member(seen(Viewer, P), Seen), gdl_kif(P, PT) ), PTs)
              ;   AT = none, PTs = []
              ),
              ( AT == none -> gdl_buckets([], Did) ; gdl_buckets([AT], Did) ),
              gdl_buckets(PTs, Saw),
              append(Did, Saw, B) ),
            Blocks),
    append([Turn, Now|Blocks], Numbers).

% gdl_fill_slots(?Slots, +Rounds): the first rounds in the slots, `none`
% in the slots past the last round.
gdl_fill_slots([], _).
gdl_fill_slots([S|Ss], Rounds) :-
    (   Rounds = [R|Rest]
    ->  S = R
    ;   S = none,
        Rest = []
    ),
    gdl_fill_slots(Ss, Rest).

% gdl_buckets(+Texts, -Bits): 32 numbers, 1 in each text's bucket.
gdl_buckets(Texts, Bits) :-
    findall(H, ( member(T, Texts), gdl_text_hash(T, H) ), Hs),
    findall(X, ( between(0, 31, I), ( memberchk(I, Hs) -> X = 1 ; X = 0 ) ), Bits).

gdl_text_hash(Text, H) :-
    atom_codes(Text, Codes),
    foldl(gdl_hash_step, Codes, 7, H0),
    H is H0 mod 32.

gdl_hash_step(C, A0, A) :-
    A is (A0 * 31 + C) mod 1000003.
