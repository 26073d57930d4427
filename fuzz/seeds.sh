#!/usr/bin/env bash
# Lays out each fuzz target's seed corpus in fuzz/corpus/TARGET (not kept
# in the repository): the project's games, the GGP corpus beside the
# checkout (if there), the records and queries of the tests, requests.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
c="$here/corpus"
mkdir -p "$c"/{rules,kif,record,query,lines,http}
cp "$root"/games/*.rules "$c/rules/"
cp "$root"/tests/fixtures/queries/*.pl "$c/rules/" 2>/dev/null || true
cp "$root"/games/*.kif "$c/kif/"
gdl="$root/../shared/gdl-corpus"
if [ -d "$gdl" ]; then
  # The corpus games that load quickly under the fuzzer's instrumentation
  # (fuzz/kif-seeds.txt says how they were chosen).
  sed '/^#/d' "$here/kif-seeds.txt" | while read -r f; do
    if [ -f "$gdl/$f" ]; then cp "$gdl/$f" "$c/kif/"; fi
  done
fi
find "$root/tests" -name '*.record' -exec cp {} "$c/record/" \;
printf '# tabula game record\ngame: breakthrough\noptions: rows=5 cols=5\nseed: 1\nseats: white=human black=random\nmoves:\nb2-b3\na4-a3\n' > "$c/record/seed.record"
printf 'app(X, Y, [1,2,3])' > "$c/query/app"
printf 'findall(X-Y, (between(1, 3, X), atom_length(abc, Y)), L), msort(L, M)' > "$c/query/findall"
printf 'catch(throw(e), E, true), format("~w~n", [E])' > "$c/query/catch"
printf 'X = "text", sub_atom(hello, B, 2, A, S), atom_codes(S, C), number_codes(N, "42")' > "$c/query/atoms"
printf 'assertz(fact(2)), retract(fact(1)), aggregate_all(count, fact(_), N)' > "$c/query/db"
printf '{"op":"games"}\n{"op":"new","game":"breakthrough","options":{"rows":5,"cols":5}}\n{"op":"moves","session":1}\n' > "$c/lines/game"
printf '{"op":"new","game":"connect4","seats":{"yellow":"random"},"auto":true}\n{"op":"play","session":1,"move":"4","token":"x"}\n{"op":"query","session":1,"goal":"X = 1"}\n' > "$c/lines/play"
body='{"op":"new","game":"tictactoe"}'
printf 'POST /api HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s' "${#body}" "$body" > "$c/http/new"
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /board.js HTTP/1.1\r\nConnection: close\r\n\r\n' > "$c/http/page"
