#!/usr/bin/env bash
# Machine instructions, counted by callgrind, that one random playout of a
# game or one run of a classic program costs, for one or more builds of
# `tabula` side by side. Instruction counts do not vary with the load of a
# shared machine, as times do (single timed runs here swing by a third), so
# they show a change of a few percent that timing cannot.
#
#   benches/instructions.sh [-g GAME...] [-p PROGRAM...] BINARY [BINARY...]
#
# Each figure is the difference of two runs of different lengths divided
# by the difference in length, so loading, parsing and start-up are left
# out. Games: `tabula bench GAME --threads 1 --seed 7` with 20 and 60
# playouts (4 and 12 for long games: chess, hasami-shogi, othello, amazons,
# go, domin-up, draughts). Programs (benches/programs/NAME.pl): `top/1`,
# ITERATIONS/50 and 3*ITERATIONS/50 times. With no -g or -p: breakthrough,
# connect4, chess, deriv, nrev, tak and zebra.
#
# Native code is made for every clause at its first call
# (TABULA_NATIVE_AFTER=0 unless set otherwise): the figures are of the
# steady state, which a clause reaches after its first 100 calls by
# default; those calls, like loading, are left out of a playout's cost.
#
# Needs valgrind. Example, the build before a change against the one after:
#
#   cp target/release/tabula /tmp/tabula-before
#   (change, cargo build --release)
#   benches/instructions.sh /tmp/tabula-before target/release/tabula
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
games=()
programs=()
bins=()
while [ $# -gt 0 ]; do
    case "$1" in
        -g) games+=("$2"); shift 2 ;;
        -p) programs+=("$2"); shift 2 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) bins+=("$1"); shift ;;
    esac
done
if [ ${#bins[@]} -eq 0 ]; then
    echo "usage: $0 [-g GAME...] [-p PROGRAM...] BINARY [BINARY...]" >&2
    exit 2
fi
export TABULA_NATIVE_AFTER="${TABULA_NATIVE_AFTER:-0}"
command -v valgrind >/dev/null || { echo "$0: valgrind is not installed" >&2; exit 2; }
if [ ${#games[@]} -eq 0 ] && [ ${#programs[@]} -eq 0 ]; then
    games=(breakthrough connect4 chess)
    programs=(deriv nrev tak zebra)
fi

# Instructions callgrind counts for one command.
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        awk '/Collected/ { print $NF }'
}

# The instructions of one unit: (count(b) - count(a)) / (b - a).
per() {
    local a=$1 b=$2 x y
    shift 2
    x=$("$@" "$a")
    y=$("$@" "$b")
    if [ -z "$x" ] || [ -z "$y" ]; then
        echo "?"
    else
        echo $(((y - x) / (b - a)))
    fi
}

playouts() { count "$bin" bench "$game" --threads 1 --seed 7 --playouts "$1"; }
runs() { count "$bin" query "$file" "between(1, $1, _), top(_), fail ; true"; }

printf '%-22s' "instructions"
for bin in "${bins[@]}"; do printf ' %16s' "$(basename "$bin")"; done
printf '\n'
for game in "${games[@]}"; do
    case "$game" in
        chess|hasami-shogi|othello|amazons|go|domin-up|draughts) n=4 ;;
        *) n=20 ;;
    esac
    printf '%-22s' "$game (a playout)"
    for bin in "${bins[@]}"; do printf ' %16s' "$(per "$n" $((3 * n)) playouts)"; done
    printf '\n'
done
for program in "${programs[@]}"; do
    file="$here/programs/$program.pl"
    iterations=$(awk -F'\t' -v p="$program" '$1 == p { print $2 }' "$here/programs/expected.tsv")
    if [ -z "$iterations" ]; then
        echo "$0: no program $program in benches/programs/expected.tsv" >&2
        exit 2
    fi
    n=$(((iterations + 49) / 50))
    printf '%-22s' "$program (a run)"
    for bin in "${bins[@]}"; do printf ' %16s' "$(per "$n" $((3 * n)) runs)"; done
    printf '\n'
done
