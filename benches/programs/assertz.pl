% Assert-heavy code: a counter kept in the database, facts asserted and
% retracted in a loop, and a lookup table built with assertz.
:- dynamic(counter/1).
:- dynamic(fact/2).
bump :- retract(counter(N)), N1 is N + 1, assertz(counter(N1)).
fill(0) :- !.
fill(I) :- K is I mod 97, assertz(fact(I, K)), bump, I1 is I - 1, fill(I1).
top(S-C) :- retractall(counter(_)), retractall(fact(_, _)), assertz(counter(0)),
    fill(300), aggregate_all(sum(K), fact(_, K), S), counter(C),
    retractall(fact(_, _)).
