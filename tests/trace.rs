//! The tracer: the ports a traced query reports, and that a traced query
//! answers exactly as an untraced one (cuts, if-then-else, negation, the
//! meta-predicates, every game's moves).

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use tabula::engine::{Engine, Port, TraceEvent, TraceOpts};

/// Every answer of `goal` (each as its bindings' text), or the error.
fn answers(e: &mut Engine, goal: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for a in e.query(goal).map_err(|e| e.to_string())? {
        let a = a.map_err(|e| e.to_string())?;
        out.push(a.bindings.iter().map(|b| format!("{}={}", b.name, b.text)).collect::<Vec<_>>().join(" "));
    }
    Ok(out)
}

/// Turns the trace on, collecting its events.
fn trace(e: &mut Engine, opts: TraceOpts) -> Rc<RefCell<Vec<TraceEvent>>> {
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    e.set_trace(Some((opts, Box::new(move |ev: &TraceEvent| sink.borrow_mut().push(ev.clone())))));
    events
}

const PROGRAM: &str = "p(X) :- q(X), X > 1.
q(1).
q(2).
q(3) :- !.
q(4).
";

/// `_G123` as `_G`: variable numbers are the heap's.
fn unnumbered(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if out.ends_with("_G") {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        }
    }
    out
}

/// Each event as `Port (depth) goal @line:column` (the clause line for
/// the query's own goals), variables unnumbered.
fn lines(events: &[TraceEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let at = match (&e.at, &e.clause) {
                (Some(a), _) => format!(" @{}:{}", a.line, a.column),
                (None, Some(c)) => format!(" clause {}", c.line),
                (None, None) => String::new(),
            };
            let ball = e.ball.as_ref().map(|b| format!(" raised {b}")).unwrap_or_default();
            unnumbered(&format!("{:?} ({}) {}{ball}{at}", e.port, e.depth, e.goal))
        })
        .collect()
}

#[test]
fn the_four_ports_with_depth_and_place() {
    let mut e = Engine::new();
    assert!(!e.load("p.pl", PROGRAM).has_errors());
    let events = trace(&mut e, TraceOpts::default());
    assert_eq!(answers(&mut e, "p(X)").unwrap(), ["X=2", "X=3"]);
    let got = lines(&events.borrow());
    let want = [
        "Call (1) p(_G)",
        "Call (2) q(_G) @1:9",
        "Exit (2) q(1) @1:9",
        "Call (2) 1>1 @1:15",
        "Fail (2) 1>1 @1:15",
        "Redo (2) q(1) @1:9",
        "Exit (2) q(2) @1:9",
        "Call (2) 2>1 @1:15",
        "Exit (2) 2>1 @1:15",
        "Exit (1) p(2) clause 1",
        "Redo (1) p(2) clause 1",
        // q(3) ends with a cut: its exit leaves nothing to go back into.
        "Redo (2) q(2) @1:9",
        "Exit (2) q(3) @1:9",
        "Call (2) 3>1 @1:15",
        "Exit (2) 3>1 @1:15",
        "Exit (1) p(3) clause 1",
    ];
    assert_eq!(got, want);
    // The exits say which clause answered.
    let clauses: Vec<usize> = (events.borrow().iter())
        .filter(|e| e.port == Port::Exit && e.goal.starts_with("q("))
        .map(|e| e.clause.as_ref().unwrap().line)
        .collect();
    assert_eq!(clauses, [2, 3, 4]);
}

#[test]
fn an_exception_passes_each_level_on_its_way_out() {
    let mut e = Engine::new();
    assert!(!e.load("x.pl", "top :- mid.\nmid :- atom_length(_, _).\n").has_errors());
    let events = trace(&mut e, TraceOpts::default());
    assert!(answers(&mut e, "top").unwrap_err().contains("instantiated"));
    let got = lines(&events.borrow());
    assert_eq!(got.len(), 6, "{got:#?}");
    assert!(got[2].starts_with("Call (3) atom_length(_G"), "{got:#?}");
    for (line, depth) in got[3..].iter().zip([3, 2, 1]) {
        assert!(line.starts_with(&format!("Exception ({depth})")), "{line}");
        assert!(line.contains("raised error(instantiation_error"), "{line}");
    }
}

#[test]
fn the_depth_and_port_filters() {
    let mut e = Engine::new();
    assert!(!e.load("p.pl", PROGRAM).has_errors());
    let events = trace(&mut e, TraceOpts { ports: vec![Port::Fail], ..TraceOpts::default() });
    answers(&mut e, "p(X)").unwrap();
    assert_eq!(lines(&events.borrow()), ["Fail (2) 1>1 @1:15"]);
    let events = trace(&mut e, TraceOpts { max_depth: Some(1), ..TraceOpts::default() });
    assert_eq!(answers(&mut e, "p(X)").unwrap(), ["X=2", "X=3"]);
    assert_eq!(
        lines(&events.borrow()),
        ["Call (1) p(_G)", "Exit (1) p(2) clause 1", "Redo (1) p(2) clause 1", "Exit (1) p(3) clause 1"]
    );
    e.set_trace(None);
    assert!(!e.tracing());
}

/// Programs whose control a tracer could get wrong, each query's answers
/// traced and not.
#[test]
fn traced_queries_answer_as_untraced_ones() {
    let program = r#"
        m(X) :- member(X, [a, b, c]).
        c1(X) :- m(X), !.
        c2(X) :- ( m(X), X \== a -> true ; X = none ).
        c3(X) :- ( m(X) ; X = d ), ( X == b -> ! ; true ).
        c4(X) :- \+ m(d), m(X), \+ X = b.
        c5(L) :- findall(X-Y, (m(X), m(Y), X @< Y), L).
        c6(X) :- once(m(X)) ; X = e.
        c7(X) :- ( m(X) *-> true ; X = none ).
        c8(X) :- G = (m(X), !), call(G).
        c9(X) :- call(c1, X) ; call(m, X).
        c10(L) :- maplist(double, [1, 2, 3], L).
        double(X, Y) :- Y is 2 * X.
        c11(S) :- foldl(add, [1, 2, 3], 0, S).
        add(X, S0, S) :- S is S0 + X.
        c12(X) :- catch(boom(X), oops(X), true).
        boom(X) :- m(X), X == b, throw(oops(X)).
        c13(X) :- forall(m(Y), atom(Y)), aggregate_all(count, m(_), X).
        c14(X) :- m(X), ( X == a -> fail ; X == b ), !.
        c15(X) :- ( X = 1, ! ; X = 2 ).
        c16(L) :- include(lt(b), [a, b, c], L).
        lt(A, B) :- B @> A.
        c17(X) :- c1(X), X == a, ! ; X = z.
        c18(N) :- count(0, N).
        count(N, N) :- N >= 3, !.
        count(N0, N) :- N1 is N0 + 1, count(N1, N).
        c19(X) :- ( m(X) -> fail ; true ) ; X = last.
        :- dynamic(fact/1).
        c20(X) :- assertz(fact(X)), fact(Y), retract(fact(Y)), X = Y.
    "#;
    let queries = [
        "c1(X)",
        "c2(X)",
        "c3(X)",
        "c4(X)",
        "c5(L)",
        "c6(X)",
        "c7(X)",
        "c8(X)",
        "c9(X)",
        "c10(L)",
        "c11(S)",
        "c12(X)",
        "c13(X)",
        "c14(X)",
        "c15(X)",
        "c16(L)",
        "c17(X)",
        "c18(N)",
        "c19(X)",
        "c20(1)",
        "m(X), c1(Y), !",
        "c3(X), c15(Y)",
    ];
    let mut plain = Engine::new();
    assert!(!plain.load("c.pl", program).has_errors());
    let mut traced = Engine::new();
    assert!(!traced.load("c.pl", program).has_errors());
    let events = trace(&mut traced, TraceOpts::default());
    for q in queries {
        let want = answers(&mut plain, q);
        events.borrow_mut().clear();
        let got = answers(&mut traced, q);
        assert_eq!(got, want, "{q}");
        assert!(!events.borrow().is_empty(), "{q}: nothing traced");
    }
}

/// Every `.rules` game lists the same moves from its start under the
/// tracer, traced to every depth: the clauses of real games run through it.
#[test]
fn every_game_moves_alike_traced() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
    let mut games: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rules"))
        .collect();
    games.sort();
    assert!(games.len() >= 10);
    for path in games {
        let src = std::fs::read_to_string(&path).unwrap();
        let (mut game, _) = tabula::loader::load(&path).unwrap();
        let options = game.options_term(&[]).unwrap();
        let options = game.engine().term_text(&options);
        let goal = format!("initial_state({options}, S), findall(M, move(S, M, _), L), length(L, N)");
        let name = path.display().to_string();
        let mut plain = Engine::new();
        assert!(!plain.load(&name, &src).has_errors());
        let want = answers(&mut plain, &goal).unwrap();
        let mut traced = Engine::new();
        assert!(!traced.load(&name, &src).has_errors());
        let events = trace(&mut traced, TraceOpts::default());
        let got = answers(&mut traced, &goal).unwrap();
        assert_eq!(got, want, "{name}");
        let events = events.borrow();
        // Goals of the file are placed in it, and exits name their clause.
        let placed = events.iter().filter(|e| e.at.as_ref().is_some_and(|a| a.file == name && a.line > 0)).count();
        assert!(placed * 2 > events.len(), "{name}: {placed} of {} placed", events.len());
        assert!(events.iter().any(|e| e.port == Port::Exit && e.clause.is_some()), "{name}");
    }
}

#[test]
fn goals_are_placed_where_written_in_nested_bodies() {
    let mut e = Engine::new();
    let src = "t :- (a, b), c, ( a -> \\+ z ; c ), findall(x, (c, a), _).\na.\nb.\nc.\nz :- fail.\n";
    assert!(!e.load("n.pl", src).has_errors());
    let events = trace(&mut e, TraceOpts { ports: vec![Port::Call], ..TraceOpts::default() });
    assert_eq!(answers(&mut e, "t").unwrap(), [""]);
    assert_eq!(
        lines(&events.borrow()),
        [
            "Call (1) t",
            "Call (2) a @1:7",
            "Call (2) b @1:10",
            "Call (2) c @1:14",
            "Call (2) a @1:19",
            "Call (2) \\+z @1:24",
            "Call (3) z @1:27",
            "Call (4) fail @5:6",
            "Call (2) findall(x,(c,a),_G) @1:36",
            "Call (3) c @1:48",
            "Call (3) a @1:51",
        ]
    );
}

#[test]
fn a_runaway_traced_query_stops_at_its_limits() {
    let mut e = Engine::new();
    assert!(!e.load("l.pl", "loop :- loop.\n").has_errors());
    e.set_limits(tabula::engine::Limits { max_steps: Some(20_000), ..tabula::engine::Limits::default() });
    let events = trace(&mut e, TraceOpts { ports: vec![Port::Call], ..TraceOpts::default() });
    let err = answers(&mut e, "loop").unwrap_err();
    assert!(err.starts_with("resource_error(steps)"), "{err}");
    let n = events.borrow().len();
    assert!(n > 100, "{n} calls traced before the limit");
    // The depth grows with the recursion, one a call.
    assert_eq!(events.borrow()[n - 1].depth as usize, n);
}
