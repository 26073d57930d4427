% Compatibility for running tabula's .rules files in SWI-Prolog: the
% builtins tabula has that SWI-Prolog lacks.

% set_arg(N, Term, Value, NewTerm): NewTerm is Term with argument N replaced.
set_arg(N, Term, Value, NewTerm) :-
    Term =.. [F|Args],
    nth1(N, Args, _, Rest),
    nth1(N, NewArgs, Value, Rest),
    NewTerm =.. [F|NewArgs].
