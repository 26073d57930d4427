% Exceptions: throw from a deep recursion and catch it, many times.
deep(0, X) :- !, throw(found(X)).
deep(N, X) :- N1 is N - 1, deep(N1, X).
try(I, R) :- catch(deep(50, I), found(R), true).
loop(0, S, S) :- !.
loop(I, S0, S) :- try(I, R), S1 is S0 + R, I1 is I - 1, loop(I1, S1, S).
top(S) :- loop(200, 0, S).
