% Compatibility for running tabula's .rules files in SWI-Prolog: the
% builtins tabula has that SWI-Prolog lacks. Load it before a game file:
%   swipl compat/swi.pl games/breakthrough.rules

% set_arg(+N, +Term, +Value, -NewTerm): NewTerm is a copy of Term with
% argument N replaced by Value (variables shared with Term stay shared).
set_arg(N, Term, Value, NewTerm) :-
    (   ground(Term)
    ->  duplicate_term(Term, NewTerm),
        setarg(N, NewTerm, Value)
    ;   functor(Term, Name, Arity),
        functor(NewTerm, Name, Arity),
        set_arg_copy(Arity, N, Term, Value, NewTerm)
    ).

set_arg_copy(0, _, _, _, _) :- !.
set_arg_copy(I, N, Term, Value, NewTerm) :-
    (   I =:= N -> arg(I, NewTerm, Value)
    ;   arg(I, Term, A), arg(I, NewTerm, A)
    ),
    I1 is I - 1,
    set_arg_copy(I1, N, Term, Value, NewTerm).

% '$sample'(+Template, :Goal, -X): X is one solution of Goal (as Template),
% drawn uniformly; fails when Goal has none. (tabula samples while it
% enumerates, without collecting every solution.)
'$sample'(T, G, X) :-
    findall(T, G, L), L \== [], length(L, K), I is random(K), nth0(I, L, X).
