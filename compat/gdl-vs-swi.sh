#!/usr/bin/env bash
# GDL games side by side: random playouts per second of tabula (one
# thread; the path each game takes, grounded or translation) and of
# SWI-Prolog running the same game's translation (`tabula translate`) with
# tabula's game driver, in one run.
#
#   compat/gdl-vs-swi.sh [SECONDS] GAME.kif...
#
# SECONDS (default 3) is how long each side plays each game at least.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=3
if [[ "${1:-}" =~ ^[0-9.]+$ ]]; then seconds=$1; shift; fi
tabula=target/release/tabula
[ -x "$tabula" ] || cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/bench.pl" <<'PL'
% Random playouts from the start for at least Seconds of CPU time.
swi_bench(Seconds) :-
    initial_state([], S),
    statistics(cputime, T0),
    swi_bench(S, T0, Seconds, 0, N),
    statistics(cputime, T1),
    Rate is N / (T1 - T0),
    format("~2f~n", [Rate]).
swi_bench(S, T0, Seconds, N0, N) :-
    '$playout'(S, 0, _, _),
    N1 is N0 + 1,
    statistics(cputime, T),
    (   T - T0 >= Seconds, N1 >= 3 -> N = N1 ; swi_bench(S, T0, Seconds, N1, N) ).
PL
printf '%-28s %12s %12s %8s  %s\n' game "tabula/s" "swipl/s" ratio "tabula's path"
for kif in "$@"; do
    name=$(basename "$kif" .kif)
    # A game that breaks GDL's rules in a random game (3pffa) has no rate.
    path=$("$tabula" translate "$kif" -o "$work/$name.pl" 2>&1 >/dev/null | sed -n 's/^path: //p' || true)
    ours=$("$tabula" bench --threads 1 --seconds "$seconds" "$kif" 2>/dev/null \
        | sed -n 's/.*: \([0-9.]*\) playouts\/s.*/\1/p' || true)
    swi=$(swipl -g "set_random(seed(1)), swi_bench($seconds)" -t halt compat/swi.pl "$work/$name.pl" \
        crates/games/src/game/driver.pl "$work/bench.pl" 2>/dev/null | tail -1 || true)
    ours=${ours:--}
    swi=${swi:--}
    ratio=$(awk -v a="$ours" -v b="$swi" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1f", a / b; else print "-" }')
    printf '%-28s %12s %12s %8s  %s\n' "$name" "$ours" "$swi" "$ratio" "${path%% *}"
done
