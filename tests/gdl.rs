//! GDL (`.kif`) games: the static checks and their messages, garbage that
//! never panics, what the translation must get right (set semantics, `or`,
//! names that clash with builtins, recursion, simultaneous moves), and
//! `tabula translate`. The games themselves (perft tables, SWI-Prolog
//! cross-checks, snapshots) are covered with every game in `games.rs`.

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::process::Command;
use tabula::engine::{Engine, Limits};
use tabula::game::{Draw, Game, State};

fn tabula(args: &[&str]) -> (String, String, i32) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_tabula")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// A game from KIF text on the grounded path (where it grounds) or the
/// translation's alone.
fn game_on(name: &str, kif: &str, ground: bool) -> Game {
    let path = std::env::temp_dir().join(format!("{name}.kif"));
    let t = tabula::gdl::translate_game_with(name, kif, ground).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    assert_eq!(t.net.is_ok(), ground, "{name}: {:?}", t.net.as_ref().err());
    t.into_game(&path).unwrap()
}

/// A game from KIF text (written to a temporary `.kif` file), with its
/// load warnings.
fn game_warned(name: &str, kif: &str) -> (Game, String) {
    let dir = std::env::temp_dir().join(format!("tabula-gdl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.kif"));
    std::fs::write(&path, kif).unwrap();
    tabula::loader::load(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A game from KIF text that loads without a warning.
fn game(name: &str, kif: &str) -> Game {
    let (g, warnings) = game_warned(name, kif);
    assert!(warnings.is_empty(), "{warnings}");
    g
}

fn start(g: &mut Game) -> State {
    let o = g.options_term(&[]).unwrap();
    g.initial_state(&o, 1).unwrap()
}

fn moves(g: &mut Game, s: &State) -> Vec<String> {
    g.legal_moves(s).unwrap().into_iter().map(|m| m.text).collect()
}

/// Every kind of static error, each with its place underlined; every file
/// fails `tabula check` with exit code 1.
#[test]
fn static_errors_are_reported_at_their_spans() {
    let dir = common::fixtures("gdl_broken");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 15);
    let mut all = String::new();
    for f in files {
        let rel = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_str().unwrap().to_string();
        let (out, err, code) = tabula(&["check", &rel]);
        assert_eq!(code, 1, "{rel}: {out}{err}");
        assert!(err.contains("error"), "{rel}: {err}");
        all.push_str(&err);
        all.push_str(&out);
    }
    insta::assert_snapshot!(all);
}

/// Unbalanced brackets, nesting 100,000 deep, random bytes and random
/// token soup: errors, never a panic; and whatever passes the checks loads
/// in the engine without a single diagnostic.
#[test]
fn garbage_never_panics_and_what_passes_loads() {
    let deep = "(".repeat(100_000) + &")".repeat(100_000);
    let err = tabula::gdl::translate("deep", &deep).unwrap_err();
    assert!(err[0].message.contains("nested too deeply"), "{:?}", err[0]);
    for text in ["(", ")", "((role a)", "(role a))", "(<=)", "(<= ())", "(not)", "?x", "(distinct a)", "\u{0}\u{1}("] {
        assert!(tabula::gdl::translate("g", text).is_err(), "{text:?} was accepted");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    for _ in 0..300 {
        let bytes: Vec<u8> = (0..rng.gen_range(0..200)).map(|_| rng.r#gen()).collect();
        let _ = tabula::gdl::translate("g", &String::from_utf8_lossy(&bytes));
    }
    const TOKENS: &[&str] = &[
        "(", ")", "(", ")", "<=", "role", "init", "true", "does", "next", "legal", "terminal", "goal", "not",
        "distinct", "or", "and", "?x", "?y", "a", "b", "1", "cell", "succ", "member", "\n", " ", "; note\n",
    ];
    let mut accepted = 0;
    for _ in 0..3000 {
        let n = rng.gen_range(1..60);
        let text: String = (0..n).map(|_| TOKENS[rng.gen_range(0..TOKENS.len())]).collect::<Vec<_>>().join(" ");
        if let Ok(t) = tabula::gdl::translate("soup", &text) {
            accepted += 1;
            let mut e = Engine::new();
            e.set_limits(Limits { max_steps: Some(100_000), ..Limits::default() });
            let report = e.load("soup", &t.program);
            assert!(report.diagnostics.is_empty(), "{text}\n{:?}\n{}", report.diagnostics, t.program);
            for goal in ["initial_state([], S), to_move(S, R)", "initial_state([], S), findall(M, move(S, M, _), Ms)"] {
                let _ = e.query(goal).map(|mut q| q.next());
            }
        }
    }
    // Random soup rarely makes a whole game; the loop above still must not
    // panic whatever it makes.
    eprintln!("{accepted} of 3000 token soups were games");
}

/// GDL is set-based: a move derived twice is one move, a fluent derived
/// twice is one fluent, and `or` gives alternatives.
#[test]
fn legal_moves_and_fluents_are_sets() {
    let mut g = game(
        "sets",
        "(role a) (role b)
         (init (count 0))
         (succ 0 1) (succ 1 2)
         (<= (legal a (go ?n)) (true (count ?c)) (succ ?c ?n))
         (<= (legal a (go ?n)) (true (count ?c)) (succ ?c ?n) (succ ?n ?m))
         (<= (legal a (go ?n)) (or (true (count ?n)) (true (count ?n))))
         (<= (legal b wait) (role b))
         (<= (next (count ?n)) (does a (go ?n)))
         (<= (next (count ?n)) (or (does a (go ?n)) (does b (go ?n))))
         (<= terminal (true (count 2)))
         (<= (goal ?r 100) (role ?r))",
    );
    let s = start(&mut g);
    assert_eq!(moves(&mut g, &s), ["(go 0)", "(go 1)"]);
    let after = g.legal_moves(&s).unwrap()[1].next.clone();
    let text = g.engine().term_text(after.term());
    assert_eq!(text, "gdl([count(1)],[],[])");
}

/// Relations named like Prolog builtins and library predicates, and
/// symbols that need quotes, are the game's own.
#[test]
fn names_that_clash_with_builtins_are_the_games_own() {
    let mut g = game(
        "clash",
        "(role x) (role o)
         (member 1) (member 2)
         (<= (length ?a ?b) (member ?a) (member ?b) (distinct ?a ?b))
         (<= (is ?a) (length ?a ?b))
         (<= (append ?a) (is ?a))
         (init (control x))
         (<= (legal ?p (write ?a 'quoted')) (true (control ?p)) (append ?a))
         (<= (legal ?p nl) (role ?p) (not (true (control ?p))))
         (<= (next (done ?a)) (does ?p (write ?a 'quoted')))
         (<= terminal (true (done ?a)))
         (<= (goal ?r 50) (role ?r))",
    );
    let s = start(&mut g);
    assert_eq!(moves(&mut g, &s), ["(write 1 'quoted')", "(write 2 'quoted')"]);
}

/// Recursion terminates: left-recursive static relations are computed
/// bottom-up, and a recursive relation over the state puts its recursive
/// call last.
#[test]
fn recursion_terminates() {
    // On both paths: the network iterates a recursive group to its least
    // fixpoint; the translation runs it top-down.
    for ground in [true, false] {
        recursion_on(ground);
    }
}

fn recursion_on(ground: bool) {
    let mut g = game_on(
        "reach",
        "(role a) (role b)
         (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
         (<= (smaller ?x ?y) (smaller ?x ?z) (succ ?z ?y))
         (<= (smaller ?x ?y) (succ ?x ?y))
         (init (edge 1 2)) (init (edge 2 3)) (init (edge 3 4)) (init (at 1))
         (<= (reach ?x ?y) (reach ?x ?z) (true (edge ?z ?y)))
         (<= (reach ?x ?y) (true (edge ?x ?y)))
         (<= (legal a (go ?y)) (true (at ?x)) (reach ?x ?y) (smaller ?x ?y))
         (<= (legal b wait) (role b))
         (<= (next (at ?y)) (does a (go ?y)))
         (<= (next (edge ?x ?y)) (true (edge ?x ?y)))
         (<= terminal (true (at 4)))
         (<= (goal a 100) (true (at 4)))
         (<= (goal b 0) (true (at 4)))",
        ground,
    );
    let s = start(&mut g);
    assert_eq!(moves(&mut g, &s), ["(go 2)", "(go 3)", "(go 4)"]);
    // 1-2, 1-3, 1-4; then 1-2-3, 1-2-4, 1-3-4; then 1-2-3-4.
    assert_eq!((g.perft(&s, 2).unwrap(), g.perft(&s, 3).unwrap()), (3, 1));

    // alexChess's pattern: the recursive call written first, the literal
    // that relates its argument to the head's last, and an empty square
    // that would let `(above ?p ?x ?y0)` bind ?y0 to ?y itself. The lookup
    // of `nextrank` by its bound second argument comes first, so the
    // recursion walks down the file.
    let mut g = game_on(
        "slide",
        "(role a)
         (nextrank 1 2) (nextrank 2 3) (nextrank 3 4) (nextrank 4 5)
         (init (piece 3)) (init (empty 1)) (init (empty 2)) (init (empty 4)) (init (empty 5))
         (<= (above ?y) (true (piece ?y0)) (nextrank ?y0 ?y))
         (<= (above ?y) (above ?y0) (true (empty ?y0)) (nextrank ?y0 ?y))
         (<= (legal a (to ?y)) (true (empty ?y)) (above ?y))
         (<= (next (piece ?y)) (does a (to ?y)))
         (<= (next (empty ?y)) (true (empty ?y)) (not (does a (to ?y))))
         (<= (next (empty ?y)) (true (piece ?y)))
         (<= terminal (true (piece 5)))
         (<= (goal a 100) terminal)",
        ground,
    );
    let s = start(&mut g);
    assert_eq!(moves(&mut g, &s), ["(to 4)", "(to 5)"]);
    // (to 4) then (to 5), or (to 5) at once, which ends the game.
    assert_eq!((g.perft(&s, 1).unwrap(), g.perft(&s, 2).unwrap()), (2, 1));

    // linesOfAction's pattern: left recursion over a cyclic, symmetric
    // adjacency, asked with every argument bound. Run top-down as written
    // it never ends (1 -> 2 -> 1 ...); it is searched as reachability.
    let ring = "(role a)
         (adj 1 2) (adj 2 1) (adj 2 3) (adj 3 2) (adj 3 1) (adj 1 3) (adj 4 5) (adj 5 4)
         (init (stone 1)) (init (stone 2)) (init (stone 3)) (init (stone 5)) (init (count 0))
         (succ 0 1) (succ 1 2)
         (<= (linked ?x ?y) (true (stone ?x)) (adj ?x ?y) (true (stone ?y)))
         (<= (linked ?x ?z) (linked ?x ?y) (adj ?y ?z) (true (stone ?z)))
         (<= (apart ?x ?y) (true (stone ?x)) (true (stone ?y)) (not (linked ?x ?y)))
         (<= (legal a (join ?x ?y)) (apart ?x ?y))
         (<= (legal a wait) (not (apart 1 3)))
         (<= (next (count ?n)) (true (count ?m)) (succ ?m ?n))
         (<= (next (stone ?x)) (true (stone ?x)))
         (<= terminal (true (count 2)))
         (<= (goal a 100) terminal)";
    let mut g = game_on("ring", ring, ground);
    let program = tabula::gdl::translate("ring", ring).unwrap().program;
    assert!(program.contains("gdl_reach(r_linked__bb_base, r_linked__bb_step"), "{program}");
    let s = start(&mut g);
    // 5 is linked to nothing (4 has no stone), and nothing to 5; 1, 2, 3
    // are linked to each other and to themselves through the ring (so
    // `wait`: 1 and 3 are not apart).
    assert_eq!(
        moves(&mut g, &s),
        ["wait", "(join 1 5)", "(join 2 5)", "(join 3 5)", "(join 5 1)", "(join 5 2)", "(join 5 3)", "(join 5 5)"]
    );
    assert_eq!(g.perft(&s, 2).unwrap(), 64);
}

/// Arithmetic over a number range, as the corpus writes it (kalaha's
/// `plus`, two-thirds' `absDiff`): the static relations are computed at
/// load, however long their chains. A relation too costly for that (like
/// sudoku's `exactlyFirst`, nine digits each different) is computed
/// during play instead, with a warning, and the game plays the same.
#[test]
fn large_static_relations_load_or_are_computed_during_play() {
    let numbers: String = (0..300).map(|i| format!("(succ n{i} n{})", i + 1)).collect::<Vec<_>>().join(" ");
    let values: String = (0..40).map(|i| format!("(val v{i})")).collect::<Vec<_>>().join(" ");
    let kif = format!(
        "(role p) {numbers} {values}
         (number n0) (<= (number ?y) (succ ?x ?y))
         (<= (plus ?x n0 ?x) (number ?x))
         (<= (plus ?x ?y ?z) (succ ?y2 ?y) (succ ?x ?x2) (plus ?x2 ?y2 ?z))
         (<= (linked ?a ?b) (val ?a) (val ?b) (val ?c) (val ?d) (val ?e)
             (distinct ?a ?c) (distinct ?c ?d) (distinct ?d ?e) (distinct ?b ?e))
         (digitStep 1 n1) (digitStep 2 n2) (digitStep 3 n3) (digitStep 4 n4) (digitStep 5 n5)
         (digitStep 6 n6) (digitStep 7 n7) (digitStep 8 n8) (digitStep 9 n9)
         (init (at n0))
         (<= (legal p (add ?d)) (digitStep ?d ?n) (true (at ?x)))
         (<= (next (at ?z)) (does p (add ?d)) (true (at ?x)) (digitStep ?d ?y) (plus ?x ?y ?z))
         (<= (next linked) (does p (add 1)) (true (at n0)) (linked v1 v2))
         (<= (next linked) (true linked))
         (<= terminal (true (at ?x)) (plus n280 ?y ?x))
         (<= (goal p 100) terminal (true linked))
         (<= (goal p 50) terminal (not (true linked)))
         (<= (goal p 0) (not terminal))"
    );
    let (mut g, warnings) = game_warned("arith", &kif);
    // 40^5 ways to try, past the load-time step budget: computed during
    // play, said in a warning; `plus` (45,451 facts) at load.
    assert!(warnings.contains("`linked`") && warnings.contains("computed during play"), "{warnings}");
    assert!(!warnings.contains("`plus`"), "plus is computed at load: {warnings}");
    // A relation computed during play cannot be grounded: the game takes
    // the translation's path, and says why.
    assert!(g.spec().extension().is_none());
    assert_eq!(g.spec().note(), Some("does not ground: `linked` is computed during play"));
    let s = start(&mut g);
    assert_eq!(moves(&mut g, &s).len(), 9);
    // Each digit d moves d numbers on; the first move by 1 also asks
    // `linked` (v1 and v2 are linked, through v0 v1 v0).
    let after = g.legal_moves(&s).unwrap().into_iter().find(|m| m.text == "(add 1)").unwrap().next;
    let text = g.engine().term_text(after.term());
    assert!(text.contains("at(n1)") && text.contains("linked"), "{text}");
    assert_eq!(g.perft(&s, 2).unwrap(), 81);
    // A random game ends at n280 or beyond: 32 to 280 moves of 1 to 9.
    let (plies, _) = g.playout(&s).unwrap();
    assert!((32..=280).contains(&plies), "{plies}");
}

/// A relation computed during play, asked with no argument bound, lists
/// its whole extent: the translation asks it after the literal that binds
/// its argument, even a recursive one (laikLee_hex's visited lists).
#[test]
fn a_relation_computed_during_play_waits_for_its_arguments() {
    const CELLS: usize = 12;
    let cell = |i: usize| format!("c{i}");
    let mut kif = String::from("(role p) (isList nil)\n");
    for i in 0..CELLS {
        kif += &format!("(le {}) (init (off {})) ", cell(i), cell(i));
        if i + 1 < CELLS {
            kif += &format!("(adj {a} {b}) (adj {b} {a}) ", a = cell(i), b = cell(i + 1));
        }
    }
    // isList: every list of up to CELLS cells, written out length by
    // length as laikLee_hex does (12^12 lists: computed during play).
    for n in 1..=CELLS {
        let (mut list, mut body) = (String::from("nil"), String::new());
        for k in (1..=n).rev() {
            list = format!("(list ?e{k} {list})");
            body += &format!(" (le ?e{k})");
        }
        kif += &format!("\n(<= (isList {list}){body})");
    }
    kif += "
        (<= (append_el ?el nil (list ?el nil)) (le ?el))
        (<= (append_el ?el (list ?head ?tail) (list ?head ?newtail))
            (le ?head) (le ?el) (distinct ?el ?head) (isList ?tail)
            (append_el ?el ?tail ?newtail) (isList ?newtail))
        (<= (conn ?x ?y ?list) (append_el ?x ?list ?list2) (conn2 ?x ?y ?list2))
        (<= (conn2 ?x ?y ?list) (adj ?x ?y) (true (on ?y)) (isList ?list))
        (<= (conn2 ?x ?y ?list) (adj ?x ?z) (true (on ?z)) (conn ?z ?y ?list) (isList ?list))
        (<= (legal p (turn ?x)) (true (off ?x)))
        (<= (next (on ?x)) (does p (turn ?x)))
        (<= (next (on ?x)) (true (on ?x)))
        (<= (next (off ?x)) (true (off ?x)) (not (does p (turn ?x))))
        (<= through (true (on c0)) (conn c0 c11 nil))
        (<= terminal through)
        (<= (goal p 100) through)
        (<= (goal p 0) (not through))";
    let (mut g, warnings) = game_warned("lists", &kif);
    assert!(warnings.contains("`islist`") && warnings.contains("computed during play"), "{warnings}");
    // Asked first, `(isList ?newtail)` lists 12^k lists for a path of k
    // cells: far past this budget. Asked last, each test is one lookup.
    g.engine().set_limits(tabula::engine::Limits { max_steps: Some(20_000_000), ..Default::default() });
    let s = start(&mut g);
    // The game ends when the cells from c0 to c11 are all on: after the
    // twelfth move, whatever the order.
    for seed in 0..3 {
        g.seed(seed);
        let (plies, outcome) = g.playout(&s).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!((plies, outcome), (12, tabula::game::Outcome::Winner("p".into())), "seed {seed}");
    }
}

/// A game without `init` starts from the empty state (GDL allows it; the
/// corpus's nonograms and sudoku build their boards with `next`).
#[test]
fn a_game_without_init_starts_from_the_empty_state() {
    let mut g = game(
        "marks",
        "(role p) (index 1) (index 2)
         (<= (legal p (mark ?x)) (index ?x) (not (true (marked ?x))))
         (<= (next (marked ?x)) (does p (mark ?x)))
         (<= (next (marked ?x)) (true (marked ?x)))
         (<= terminal (true (marked 1)) (true (marked 2)))
         (<= (goal p 100) terminal)
         (<= (goal p 0) (not terminal))",
    );
    let s = start(&mut g);
    assert_eq!(moves(&mut g, &s), ["(mark 1)", "(mark 2)"]);
    assert_eq!(g.outcome(&s).unwrap(), None);
    // Two orders, each to the end.
    assert_eq!((g.perft(&s, 2).unwrap(), g.perft(&s, 3).unwrap()), (2, 0));
}

/// Simultaneous moves: the second role chooses without seeing the first
/// role's choice, which its display and its samples keep hidden; the
/// joint move is applied once both have chosen.
#[test]
fn simultaneous_choices_stay_hidden_until_the_round_ends() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/rock-paper-scissors.kif");
    let (mut g, _) = tabula::loader::load(&path).unwrap();
    assert!(g.hidden(), "a simultaneous game has hidden information");
    let s = start(&mut g);
    assert_eq!(g.to_move(&s).unwrap(), "left");
    let legal = g.legal_moves(&s).unwrap();
    let rock = legal.iter().find(|m| m.text == "rock").unwrap().next.clone();
    assert_eq!(g.to_move(&rock).unwrap(), "right");
    let shown = g.display(&rock, "right").unwrap();
    assert!(shown.contains("left has chosen") && !shown.contains("rock"), "{shown}");
    assert!(g.display(&rock, "left").unwrap().contains("left chose rock"));
    let mut seen = std::collections::BTreeSet::new();
    g.seed(5);
    for _ in 0..30 {
        let sample = g.sample_state(&rock, "right").unwrap();
        seen.insert(g.engine().term_text(sample.term()));
    }
    assert_eq!(seen.len(), 3, "right's samples of left's choice: {seen:?}");
    let own = g.sample_state(&rock, "left").unwrap();
    assert_eq!(own, rock);
    // Paper beats rock: right wins the round.
    let next = g.legal_moves(&rock).unwrap().into_iter().find(|m| m.text == "paper").unwrap().next;
    let shown = g.display(&next, "spectator").unwrap();
    assert!(shown.contains("round: 2") && shown.contains("right 1"), "{shown}");
    // A turn-taking game has no hidden information.
    let (ttt, _) = tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/tictactoe.kif")).unwrap();
    assert!(!ttt.hidden());
}

/// `tabula translate` prints a program that loads in tabula with no
/// diagnostic; a broken file gets its errors and exit code 1; a `.rules`
/// file is refused.
#[test]
fn translate_prints_a_program() {
    let (out, err, code) = tabula(&["translate", "games/tictactoe.kif"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("gdl_legal(") && out.contains("move(gdl(Fs, Pending, Rounds)"), "{out}");
    // Which path the game takes, on standard error.
    assert!(err.contains("path: grounded (") && err.contains("propositions"), "{err}");
    let mut e = Engine::new();
    assert!(e.load("t.pl", &out).diagnostics.is_empty());
    let (_, err, code) = tabula(&["translate", "tests/fixtures/gdl_broken/unsafe.kif"]);
    assert_eq!(code, 1);
    assert!(err.contains("unsafe variable `?x` in the head"), "{err}");
    let (_, err, code) = tabula(&["translate", "games/breakthrough.rules"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a GDL file"), "{err}");
}

/// GDL games are games everywhere: listed, their rules shown, moves typed
/// by prefix or number, played to the end.
#[test]
fn kif_games_work_in_every_command() {
    let (out, _, code) = tabula(&["list"]);
    assert_eq!(code, 0);
    for name in ["tictactoe", "connect-four", "breakthrough-8x8", "nim", "rock-paper-scissors"] {
        assert!(out.contains(name), "{out}");
    }
    let (out, _, _) = tabula(&["rules", "nim"]);
    assert!(out.contains("Whoever takes the last stone wins"), "{out}");
    let (out, err, code) = tabula(&["moves", "tictactoe", "--after", "(mark 2 2)"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("o to move, 8 legal moves"), "{out}");
    let (out, _, code) =
        tabula(&["match", "tictactoe", "--seat", "random", "--seat", "random", "--games", "4", "--seed", "2"]);
    assert_eq!(code, 0, "{out}");
    let (out, err, code) = tabula(&["play", "nim", "--seat", "first=human", "--seat", "second=random", "--seed", "1"]);
    // Standard input is empty: the game stops at the first human turn.
    assert!(code == 0 || code == 1, "{out}{err}");
    assert!(out.contains("stones: a 3, b 4, c 5"), "{out}");
}

/// What `tabula ARGS` prints with `typed` as its input.
fn play_typed(args: &[&str], typed: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(typed.as_bytes()).unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}

/// `tabula play` keeps a computer's simultaneous choice from the person
/// choosing after it, and tells it once the round is over.
#[test]
fn play_hides_a_choice_until_the_round_ends() {
    let out = play_typed(
        &["play", "rock-paper-scissors", "--seat", "left=random", "--seat", "right=human", "--seed", "3"],
        "rock\nrock\nrock\n",
    );
    assert_eq!(out.matches("left (random) has chosen").count(), 3, "{out}");
    assert_eq!(out.matches("left had chosen").count(), 3, "{out}");
    assert!(!out.contains("left (random) plays"), "{out}");
    // Before each of right's turns, only that left has chosen is shown.
    for turn in out.split("right> ").take(3) {
        let last_round = turn.rsplit("round:").next().unwrap();
        assert!(last_round.contains("last move: left has chosen"), "{turn}");
    }
    assert!(out.contains("game over"), "{out}");
}

fn our_game(name: &str) -> Game {
    tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(name)).unwrap().0
}

fn play_text(g: &mut Game, s: &State, text: &str) -> State {
    let legal = g.legal_moves(s).unwrap();
    legal.into_iter().find(|m| m.text == text).unwrap_or_else(|| panic!("{text} is not legal")).next
}

/// GDL-II's `random` is chance, not a seat: its moves are drawn, and a
/// computer player never decides them; minimax takes their expectation.
#[test]
fn the_role_random_is_chance() {
    let mut g = our_game("kuhn-poker.kif");
    let o = g.options_term(&[]).unwrap();
    let players = g.players(&o).unwrap();
    assert_eq!(players, ["first", "second"]);
    let s = start(&mut g);
    assert!(g.chance(&s).unwrap() && g.to_move(&s).unwrap() == "random");
    assert_eq!(moves(&mut g, &s).len(), 6);
    assert_eq!(tabula::ai::seat_to_move(&mut g, &players, &s).unwrap(), None);
    // Whatever the controller, chance's move is drawn among the six deals,
    // and differently for different seeds.
    let mut drawn = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let c = tabula::ai::Controller::parse("minimax:2", None).unwrap();
        let choice = tabula::ai::choose(&mut g, &players, &s, &c, seed, 1).unwrap();
        assert!(choice.info.starts_with("chance"), "{}", choice.info);
        drawn.insert(g.engine().term_text(&choice.mv.0));
    }
    assert_eq!(drawn.len(), 6, "{drawn:?}");
    let dealt = play_text(&mut g, &s, "(deal 3 1)");
    assert!(!g.chance(&dealt).unwrap());
    assert_eq!(g.to_move(&dealt).unwrap(), "first");
}

/// A GDL-II player sees its own moves and its percepts, never the
/// fluents or the other's moves; a sample of what it cannot see keeps
/// what it saw and draws the rest: the other's card is either card but its
/// own.
#[test]
fn a_gdl_ii_player_sees_only_its_percepts() {
    let mut g = our_game("kuhn-poker.kif");
    assert!(g.hidden());
    let s = start(&mut g);
    let dealt = play_text(&mut g, &s, "(deal 3 1)");
    let bet = play_text(&mut g, &dealt, "bet");
    let first = g.display(&bet, "first").unwrap();
    let second = g.display(&bet, "second").unwrap();
    assert!(first.contains("saw (card 3)") && !first.contains("(card 1)"), "{first}");
    assert!(second.contains("saw (card 1)") && !second.contains("(card 3)"), "{second}");
    assert!(second.contains("(did first bet)"), "{second}");
    assert!(g.private_move(&dealt).unwrap() && g.private_move(&s).unwrap());
    // A spectator (anyone, on a server) sees nothing hidden until the end.
    let spectator = g.display(&bet, "spectator").unwrap();
    assert!(spectator.contains("2 rounds played") && !spectator.contains("holds"), "{spectator}");
    let call = play_text(&mut g, &bet, "call");
    assert!(g.display(&call, "spectator").unwrap().contains("holds: first 3, second 1"));
    g.seed(9);
    let mut others = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let sample = g.sample_state(&bet, "second").unwrap();
        assert_eq!(g.display(&sample, "second").unwrap(), second, "the sample shows second something else");
        assert_eq!(g.to_move(&sample).unwrap(), "second");
        let term = g.engine().term_text(sample.term());
        assert!(term.contains("holds(second,1)"), "{term}");
        others.insert(term.contains("holds(first,2)"));
    }
    assert_eq!(others.len(), 2, "second's samples never drew both of first's possible cards");
}

/// In Krieg tic-tac-toe a try on a square the other holds is told to the
/// player who made it; the other player learns nothing, and its samples
/// put the first player's mark anywhere it could be.
#[test]
fn krieg_tictactoe_keeps_each_players_marks_hidden() {
    let mut g = our_game("krieg-tictactoe.kif");
    let s = start(&mut g);
    let x = play_text(&mut g, &s, "(mark 2 2)");
    let o = play_text(&mut g, &x, "(mark 2 2)");
    let seen_by_o = g.display(&o, "oplayer").unwrap();
    assert!(seen_by_o.contains("saw (taken 2 2)"), "{seen_by_o}");
    let seen_by_x = g.display(&o, "xplayer").unwrap();
    assert!(!seen_by_x.contains("(mark 2 2), and saw (taken") && !seen_by_x.contains("oplayer"), "{seen_by_x}");
    // o knows where x is; x does not know where o tried.
    g.seed(4);
    let mut o_tries = std::collections::BTreeSet::new();
    for _ in 0..60 {
        // o found x's only mark: its samples are the position itself.
        assert_eq!(g.sample_state(&o, "oplayer").unwrap(), o);
        let sample = g.sample_state(&o, "xplayer").unwrap();
        o_tries.insert(g.engine().term_text(sample.term()));
    }
    assert!(o_tries.len() >= 5, "x's samples of o's try: {o_tries:?}");
}

/// `tabula play` draws chance's moves itself and tells a person only what
/// the rules let it see: the other's moves are never shown.
#[test]
fn play_draws_chance_and_keeps_private_moves_private() {
    let out = play_typed(
        &["play", "kuhn-poker", "--seat", "first=human", "--seat", "second=random", "--seed", "2"],
        "bet\ncall\n",
    );
    assert!(out.starts_with("random (chance) has moved"), "{out}");
    assert!(out.contains("second (random) has chosen") && !out.contains("second (random) plays"), "{out}");
    assert!(!out.contains("(deal "), "the deal was shown: {out}");
    assert!(out.contains("game over"), "{out}");
}

/// Where what a player saw leaves too many plays to search, sampling
/// stops with an error that says so, never a hang: here b learns only
/// after four secret picks of a out of 30 whether all four were 29.
#[test]
fn a_sample_that_cannot_be_found_is_an_error_not_a_hang() {
    let picks: String = (0..30).map(|n| format!("(num {n}) ")).collect();
    let mut g = game(
        "needle",
        &format!(
            "(role a) (role b) {picks}
             (init (round 0))
             (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
             (<= (legal a (pick ?n)) (num ?n) (true (round ?r)) (distinct ?r 4))
             (<= (legal b noop) (true (round ?r)))
             (<= (legal a noop) (true (round 4)))
             (<= (next (round ?s)) (true (round ?r)) (succ ?r ?s))
             (<= (next all29) (true (round 0)) (does a (pick 29)))
             (<= (next all29) (true all29) (does a (pick 29)))
             (<= (sees b yes) (true (round 3)) (true all29) (does a (pick 29)))
             (<= terminal (true (round 4)))
             (<= (goal ?r 50) (role ?r))"
        ),
    );
    let mut s = start(&mut g);
    for _ in 0..4 {
        s = play_text(&mut g, &s, "(pick 29)");
    }
    assert!(g.engine().term_text(s.term()).contains("seen(b,yes)"), "b saw yes in the last round");
    g.seed(1);
    let err = g.sample_state(&s, "b").unwrap_err().to_string();
    assert!(err.contains("100000 joint moves tried"), "{err}");
    // a saw nothing it did not do: its sample is found at once.
    assert!(g.sample_state(&s, "a").is_ok());
}

/// Chance choosing in the same round as a player: the player chooses
/// first, chance last (it cannot see the player's choice, nor the player
/// the coin until the round ends), and each sees the coin afterwards.
#[test]
fn chance_and_a_player_in_one_round() {
    let mut g = game(
        "coin",
        "(role random) (role guesser)
         (side heads) (side tails)
         (init (round 0))
         (<= (legal random (flip ?s)) (side ?s) (true (round 0)))
         (<= (legal guesser (guess ?s)) (side ?s) (true (round 0)))
         (<= (next (round 1)) (true (round 0)))
         (<= (next (right)) (does random (flip ?s)) (does guesser (guess ?s)))
         (<= (sees guesser (coin ?s)) (does random (flip ?s)))
         (<= terminal (true (round 1)))
         (<= (goal guesser 100) (true (right)))
         (<= (goal guesser 0) (not (true (right))))",
    );
    let s = start(&mut g);
    assert_eq!(g.to_move(&s).unwrap(), "guesser");
    assert!(!g.chance(&s).unwrap());
    assert_eq!((g.perft(&s, 1).unwrap(), g.perft(&s, 2).unwrap()), (2, 4));
    let guessed = play_text(&mut g, &s, "(guess heads)");
    assert!(g.chance(&guessed).unwrap() && g.hidden_move(&s).unwrap());
    assert!(g.display(&guessed, "guesser").unwrap().contains("you chose (guess heads)"));
    let flipped = play_text(&mut g, &guessed, "(flip tails)");
    assert!(g.engine().term_text(flipped.term()).contains("seen(guesser,coin(tails))"));
    // The game is over: everyone sees everything.
    assert!(g.display(&flipped, "guesser").unwrap().contains("round: 1"));
    assert_eq!(g.outcome(&flipped).unwrap(), Some(tabula::game::Outcome::Winner("guesser".into())));
    // A search decides the guess over chance's flips.
    let c = tabula::ai::Controller::parse("mcts:50", None).unwrap();
    let choice = tabula::ai::choose(&mut g, &["guesser".to_string()], &s, &c, 3, 1).unwrap();
    assert!(g.engine().term_text(&choice.mv.0).starts_with("guess("));
}

/// A GDL-II player's observation (what a learning agent gets) holds what
/// it saw and nothing else: first's changes with its card, second's does
/// not when only first's card differs.
#[test]
fn a_gdl_ii_observation_holds_what_the_player_saw() {
    let mut g = our_game("kuhn-poker.kif");
    let o = g.options_term(&[]).unwrap();
    let observer = g.observer(&o, 1).unwrap();
    let s = start(&mut g);
    let mut seen = Vec::new();
    for deal in ["(deal 1 2)", "(deal 3 2)"] {
        let dealt = play_text(&mut g, &s, deal);
        let first = g.observation(&observer, &dealt, "first").unwrap();
        let second = g.observation(&observer, &dealt, "second").unwrap();
        assert_eq!(first.len(), 2 + 32 + 8 * 64);
        assert_eq!(&first[..2], &[1.0, 0.0], "first is to move");
        seen.push((first, second));
    }
    assert_ne!(seen[0].0, seen[1].0, "first saw different cards");
    assert_eq!(seen[0].1, seen[1].1, "second saw the same");
}

/// The states one round of `g` leads to from `s` (every choice of every
/// role that chooses in it), as text.
fn rounds_from(g: &mut Game, s: &State, out: &mut std::collections::HashSet<String>) {
    for (_, next) in g.successors(s).unwrap() {
        let text = g.engine().term_text(next.term());
        if text.ends_with(",[],[])") {
            out.insert(text);
        } else {
            rounds_from(g, &next, out);
        }
    }
}

/// A game grounded into a network of propositions plays as its
/// translation does: in every state of seeded random games the same legal
/// moves and the same end, each round a native random playout plays is one
/// the translation allows, and the game ends with the same result.
#[test]
fn the_grounded_path_plays_as_the_translation_does() {
    use tabula::game::PlayoutEnd;
    for name in ["tictactoe", "connect-four", "breakthrough-6x6", "nim", "rock-paper-scissors"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(format!("{name}.kif"));
        let src = std::fs::read_to_string(&path).unwrap();
        let grounded = tabula::gdl::translate_game_with(name, &src, true).unwrap();
        assert!(grounded.net.is_ok(), "{name} is not grounded: {:?}", grounded.net.err());
        let mut g = grounded.into_game(&path).unwrap();
        let mut t = tabula::gdl::translate_game_with(name, &src, false).unwrap().into_game(&path).unwrap();
        assert!(g.spec().extension().is_some() && t.spec().extension().is_none());
        for seed in 0..4 {
            let mut s = start(&mut g);
            g.seed(seed);
            let mut rounds = 0;
            loop {
                let text = g.engine().term_text(s.term());
                let ts = State::new(t.engine().parse_term(&text).unwrap());
                assert_eq!(moves(&mut g, &s), moves(&mut t, &ts), "{name}: the moves in {text}");
                let end = t.outcome(&ts).unwrap();
                assert_eq!(g.outcome(&s).unwrap(), end, "{name}: the end in {text}");
                let mut allowed = std::collections::HashSet::new();
                if end.is_none() {
                    rounds_from(&mut t, &ts, &mut allowed);
                }
                match g.random_playout(&s, 1, None, Draw::Uniform).unwrap().unwrap() {
                    (0, PlayoutEnd::Over(o)) => {
                        assert_eq!(Some(o), end, "{name}: the result in {text}");
                        break;
                    }
                    (_, PlayoutEnd::Over(o)) => {
                        // One round, which ended the game: one the
                        // translation allows ends it so.
                        let ends: Vec<_> = allowed
                            .iter()
                            .map(|a| {
                                let s = State::new(t.engine().parse_term(a).unwrap());
                                t.outcome(&s).unwrap()
                            })
                            .collect();
                        assert!(ends.contains(&Some(o)), "{name}: no round from {text} ends so");
                        rounds += 1;
                        break;
                    }
                    (_, PlayoutEnd::Cut(next)) => {
                        let next_text = g.engine().term_text(next.term());
                        assert!(allowed.contains(&next_text), "{name}: {next_text} is not a round from {text}");
                        s = next;
                        rounds += 1;
                    }
                }
            }
            assert!(rounds > 0, "{name}: seed {seed} played no round");
        }
    }
}

/// A relation that several rules search in the same state is computed once
/// a state and its answers kept (`gdl_memo/5`); a search in another state
/// computes them anew. The kept answers give the moves and the perft counts
/// the grounded path gives, whatever order the states are asked in.
#[test]
fn answers_kept_for_a_state_are_not_used_in_another() {
    let kif = "(role x) (role o)
        (init (cell 1 b)) (init (cell 2 b)) (init (cell 3 b)) (init (cell 4 b)) (init (cell 5 b))
        (init (control x))
        (<= (open ?c) (true (cell ?c b)))
        (<= (legal ?p (mark ?c)) (true (control ?p)) (open ?c))
        (<= (legal ?p (pair ?c ?d)) (true (control ?p)) (open ?c) (open ?d) (distinct ?c ?d))
        (<= (legal ?p noop) (role ?p) (not (true (control ?p))))
        (<= (taken ?c) (does ?p (mark ?c)))
        (<= (taken ?c) (does ?p (pair ?c ?d)))
        (<= (taken ?d) (does ?p (pair ?c ?d)))
        (<= (next (cell ?c ?p)) (role ?p) (does ?p (mark ?c)))
        (<= (next (cell ?c ?p)) (does ?p (pair ?c ?d)))
        (<= (next (cell ?d ?p)) (does ?p (pair ?c ?d)))
        (<= (next (cell ?c b)) (true (cell ?c b)) (not (taken ?c)))
        (<= (next (cell ?c ?q)) (true (cell ?c ?q)) (distinct ?q b))
        (<= (next (control o)) (true (control x)))
        (<= (next (control x)) (true (control o)))
        (<= anyopen (open ?c))
        (<= terminal (not anyopen))
        (<= (goal ?p 50) (role ?p))";
    let program = tabula::gdl::translate_with("kept", kif, false).unwrap().program;
    assert!(program.contains("gdl_memo(r_open, S,"), "open/1 is not kept:\n{program}");
    let mut t = game_on("kept", kif, false);
    let mut g = game_on("kept", kif, true);
    let (s, sg) = (start(&mut t), start(&mut g));
    // Depth 3 visits the states depth first, each asked after others.
    for depth in 1..=3 {
        assert_eq!(t.perft(&s, depth).unwrap(), g.perft(&sg, depth).unwrap(), "perft {depth}");
    }
    // A game's states asked last to first, then first to last.
    let mut states = vec![s];
    for _ in 0..3 {
        let last = states.last().unwrap();
        let (_, next) = t.successors(last).unwrap().pop().unwrap();
        states.push(next);
    }
    let texts: Vec<String> = states.iter().map(|x| t.engine().term_text(x.term())).collect();
    for text in texts.iter().rev().chain(texts.iter()) {
        let (ts, gs) =
            (State::new(t.engine().parse_term(text).unwrap()), State::new(g.engine().parse_term(text).unwrap()));
        assert_eq!(moves(&mut t, &ts), moves(&mut g, &gs), "the moves in {text}");
    }
    assert_ne!(moves(&mut t, &states[0]), moves(&mut t, &states[2]), "the states differ in their moves");
}

/// A network travels as JSON (to a cluster's shards) and plays the same
/// games there; a damaged one is refused when read, not met during play.
#[test]
fn a_network_read_back_from_json_plays_the_same_games() {
    use tabula::game::Spec;
    use tabula::gdl::{network_json, with_network_json};
    let mut g = our_game("breakthrough-6x6.kif");
    let text = network_json(g.spec()).unwrap().expect("breakthrough grounds");
    let (path, source) = (g.path().to_path_buf(), g.spec().source().to_string());
    let rules = || Spec::new(&path, source.as_str());
    let (mut h, _) = with_network_json(rules(), &text).unwrap().build().unwrap();
    assert!(h.spec().extension().is_some());
    let o = g.options_term(&[]).unwrap();
    for seed in 0..5 {
        assert_eq!(g.seeded_playout(&o, None, seed).unwrap(), h.seeded_playout(&o, None, seed).unwrap(), "seed {seed}");
    }
    let damaged = text.replacen("\"lits\":[", "\"lits\":[4000000000,", 1);
    let e = with_network_json(rules(), &damaged).unwrap_err();
    assert!(e.contains("damaged network of propositions"), "{e}");
    let e = with_network_json(rules(), &text[..text.len() / 2]).unwrap_err();
    assert!(e.contains("not a network"), "{e}");
    let other = Spec::new(&path, format!("{source}\n% edited"));
    let e = with_network_json(other, &text).unwrap_err();
    assert!(e.contains("the network is for other rules"), "{e}");
}
