% The zebra puzzle: who owns the zebra?
houses([house(_,_,_,_,_), house(_,_,_,_,_), house(_,_,_,_,_), house(_,_,_,_,_), house(_,_,_,_,_)]).
right_of(A, B, [B,A|_]).
right_of(A, B, [_|Y]) :- right_of(A, B, Y).
next_to(A, B, [A,B|_]).
next_to(A, B, [B,A|_]).
next_to(A, B, [_|Y]) :- next_to(A, B, Y).
in(X, [X|_]).
in(X, [_|Y]) :- in(X, Y).
zebra(H) :-
    houses(H),
    in(house(red, english, _, _, _), H),
    in(house(_, spanish, dog, _, _), H),
    in(house(green, _, _, coffee, _), H),
    in(house(_, ukrainian, _, tea, _), H),
    right_of(house(green, _, _, _, _), house(ivory, _, _, _, _), H),
    in(house(_, _, snails, _, winstons), H),
    in(house(yellow, _, _, _, kools), H),
    H = [_, _, house(_, _, _, milk, _), _, _],
    H = [house(_, norwegian, _, _, _)|_],
    next_to(house(_, _, _, _, chesterfields), house(_, _, fox, _, _), H),
    next_to(house(_, _, _, _, kools), house(_, _, horse, _, _), H),
    in(house(_, _, _, orange_juice, lucky_strikes), H),
    in(house(_, japanese, _, _, parliaments), H),
    next_to(house(_, norwegian, _, _, _), house(blue, _, _, _, _), H),
    in(house(_, _, zebra, _, _), H),
    in(house(_, _, _, water, _), H).
top(Owner) :- zebra(H), in(house(_, Owner, zebra, _, _), H).
