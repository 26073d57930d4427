//! The web board in a real browser (headless Chromium through WebDriver):
//! a whole Breakthrough game clicked to its end against `random`, with a
//! reload in the middle; a refused click told why, from the rules; a Domin-Up tile placed from the hand by clicks,
//! and seat 2's page holding none of seat 1's tiles; a Campo Bello jump
//! with a removal; two browsers on one session seeing each other's moves;
//! a GDL game (tic-tac-toe) clicked square by square to its end; a GDL-II
//! game (Krieg tic-tac-toe) whose page never shows the other's marks; a
//! page that goes on after its server was killed and started again; the
//! analysis page, reached from the new-game form, comparing two variants.
//! Screenshots of the boards go to `target/screenshots/`. Without
//! chromedriver the tests say they skipped, except under `CI=true`.

mod common;

use common::web::{Browser, ok, start};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn shot(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots").join(format!("{name}.png"))
}

/// Waits for the page to show a position after ply `after` where it is the
/// page's seat to move, or the end; the view.
fn my_turn(b: &Browser, seat: &str, after: i64) -> Value {
    b.wait(
        &format!(
            "const v = window.tabulaView; \
             return v && v.ply > {after} && !document.querySelector('#turn.thinking') \
               && (v.game_over || (v.to_move === '{seat}' && v.moves.length > 0)) ? v : false"
        ),
        &format!("{seat}'s turn after ply {after}"),
    )
}

/// A seat's page: its link, with its token.
fn page(addr: std::net::SocketAddr, g: &Value, seat: &str) -> String {
    format!("http://{addr}/?session={}&seat={seat}&token={}", g["session"], g["tokens"][seat].as_str().unwrap())
}

/// A CSS selector for a click: a site or a hand item.
fn target(id: &str) -> String {
    let quoted = id.replace('\\', "\\\\").replace('"', "\\\"");
    format!("[data-site=\"{quoted}\"], [data-hand=\"{quoted}\"]")
}

/// Clicks a move's sites and hand items, one after another.
fn click_move(b: &Browser, m: &Value) {
    for c in m["clicks"].as_array().unwrap() {
        b.click(&target(c.as_str().unwrap()));
    }
}

#[test]
fn a_whole_breakthrough_game_is_clicked_to_its_end_against_random() {
    let Some(b) = Browser::start() else { return };
    let s = start();
    let g = ok(
        s.addr,
        json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5},
               "seats": {"white": "human", "black": "random"}, "auto": true, "seed": 9}),
    );
    let url = page(s.addr, &g, "white");
    b.go(&url);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut ply = -1;
    let mut reloaded = false;
    let end = loop {
        let v = my_turn(&b, "white", ply);
        if !v["game_over"].is_null() {
            break v;
        }
        if v["ply"] == json!(4) && !reloaded {
            // A reload mid-game shows the same game, and play goes on.
            reloaded = true;
            b.go(&url);
            let again = my_turn(&b, "white", -1);
            assert_eq!(again["history"], v["history"]);
        }
        let moves = v["moves"].as_array().unwrap();
        let m = &moves[rng.gen_range(0..moves.len())];
        click_move(&b, m);
        ply = v["ply"].as_i64().unwrap();
        // The move is played (and the computer replies) without a reload.
        b.wait(&format!("return window.tabulaView.ply > {ply}"), "the move to be played");
        let now = b.script("return window.tabulaView.history");
        assert_eq!(now[ply as usize], m["text"], "{now}");
    };
    // How long the page took to show moves (reported, never asserted).
    let t = b.script("return window.tabulaTimings");
    let median = |k: &str| {
        let mut v: Vec<f64> = t[k].as_array().unwrap().iter().filter_map(Value::as_f64).collect();
        v.sort_by(f64::total_cmp);
        (v.len(), v.get(v.len() / 2).copied().unwrap_or(f64::NAN))
    };
    eprintln!(
        "page timings: a click's move shown, median of {:?} ms; the computer's, after its news, {:?} ms",
        median("click"),
        median("news")
    );
    let turn = b.script("return document.getElementById('turn').textContent");
    assert!(turn.as_str().unwrap().starts_with("Game over"), "{turn}");
    let server = ok(s.addr, json!({"op": "status", "session": g["session"]}));
    assert_eq!(server["game_over"], end["game_over"]);
    b.screenshot(&shot("breakthrough"));
}

#[test]
fn a_refused_click_is_told_why_from_the_rules() {
    let Some(b) = Browser::start() else { return };
    let s = start();
    let g = ok(
        s.addr,
        json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5},
               "seats": {"white": "human", "black": "random"}, "auto": true, "seed": 3}),
    );
    b.go(&page(s.addr, &g, "white"));
    my_turn(&b, "white", -1);
    // A pawn onto the pawn in front of it: no legal move is clicked so.
    b.click(&target("b1"));
    b.click(&target("b2"));
    let why = b.wait(
        "const w = document.getElementById('why'); return !w.hidden && w.textContent ? w.textContent : false",
        "why the clicks make no move",
    );
    let why = why.as_str().unwrap();
    assert!(why.contains("`landing(DX, Target, Me, Captured)` failed, with"), "{why}");
    b.screenshot(&shot("breakthrough-why"));
    // The next click puts it away, and play goes on from it.
    b.click(&target("b3"));
    b.wait("return document.getElementById('why').hidden", "the explanation to go");
    b.wait("return window.tabulaView.ply > 0", "b2-b3 to be played");
    assert_eq!(b.script("return window.tabulaView.history[0]"), json!("b2-b3"));
}

/// Plays random moves through the API until `pred` holds for the view of
/// the seat to move; that seat and its view.
fn play_until(s: std::net::SocketAddr, g: &Value, seed: u64, pred: impl Fn(&Value) -> bool) -> (String, Value) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let session = &g["session"];
    for _ in 0..200 {
        let st = ok(s, json!({"op": "status", "session": session}));
        let seat = st["to_move"].as_str().expect("the game goes on").to_string();
        let token = &g["tokens"][&seat];
        let v = ok(s, json!({"op": "view", "session": session, "viewer": seat, "token": token}));
        if pred(&v) {
            return (seat, v);
        }
        let moves = v["moves"].as_array().unwrap();
        let m = &moves[rng.gen_range(0..moves.len())];
        ok(s, json!({"op": "play", "session": session, "move": m["text"], "token": token}));
    }
    panic!("no such position in 200 plies");
}

#[test]
fn a_domin_up_tile_is_placed_from_the_hand_and_the_other_seat_never_sees_it() {
    let Some(b) = Browser::start() else { return };
    let s = start();
    let g = ok(s.addr, json!({"op": "new", "game": "domin-up", "seed": 12}));
    let (seat, v) = play_until(s.addr, &g, 12, |v| v["history"].as_array().unwrap().len() >= 6);
    let other = if seat == "p1" { "p2" } else { "p1" };
    // Seat 2's page: no tile of the mover's hand, in the page or its data.
    b.go(&page(s.addr, &g, other));
    b.wait("return window.tabulaView && window.tabulaView.board", "the other seat's board");
    let source = b.source();
    let data = b.script("return JSON.stringify(window.tabulaView)").as_str().unwrap().to_string();
    let hand = v["board"]["hands"].as_array().unwrap().iter().find(|h| h["player"] == json!(seat)).unwrap().clone();
    assert!(source.contains("hidden"), "the other seat sees the count");
    // (Hand ids are places in the viewer's own hand: the labels tell.)
    for item in hand["items"].as_array().unwrap() {
        let label = item["label"].as_str().unwrap();
        assert!(
            !source.contains(&format!(">{label}<")) && !data.contains(&format!("\"{label}\"")),
            "{other} sees {label}"
        );
    }
    b.screenshot(&shot("domin-up-other-seat"));
    // The mover's page: the tile from the hand, then its two cells.
    b.go(&page(s.addr, &g, &seat));
    let v = my_turn(&b, &seat, -1);
    let m =
        v["moves"].as_array().unwrap().iter().find(|m| m["clicks"].as_array().is_some_and(|c| c.len() == 3)).unwrap();
    assert!(m["clicks"][0].as_str().unwrap().starts_with("hand("), "{m}");
    b.screenshot(&shot("domin-up"));
    click_move(&b, m);
    played(&b, s.addr, &g, &v, m);
}

/// Waits for the page to show a move after the position `v`, and checks
/// the server's last move is `m`.
fn played(b: &Browser, addr: std::net::SocketAddr, g: &Value, v: &Value, m: &Value) {
    let ply = v["ply"].as_i64().unwrap();
    b.wait(&format!("return window.tabulaView.ply > {ply}"), "the move to be played");
    let last = ok(addr, json!({"op": "status", "session": g["session"]}))["last_move"].clone();
    assert_eq!(&last, &m["text"]);
}

#[test]
fn a_campo_bello_jump_then_the_mover_to_remove() {
    let Some(b) = Browser::start() else { return };
    let s = start();
    let g = ok(s.addr, json!({"op": "new", "game": "campo-bello", "seed": 3}));
    // A position where a jump over an opponent makes the mover remove one
    // of its own: a move whose notation has ` x `.
    let removal =
        |v: &Value| v["moves"].as_array().unwrap().iter().any(|m| m["text"].as_str().unwrap().contains(" x "));
    let (seat, v) = play_until(s.addr, &g, 3, removal);
    let m =
        v["moves"].as_array().unwrap().iter().find(|m| m["text"].as_str().unwrap().contains(" x ")).unwrap().clone();
    b.go(&page(s.addr, &g, &seat));
    my_turn(&b, &seat, -1);
    b.screenshot(&shot("campo-bello"));
    let clicks = m["clicks"].as_array().unwrap();
    // The jump path: each point but the last offers what may follow.
    for (i, c) in clicks.iter().enumerate() {
        let id = c.as_str().unwrap();
        let offered = b.script(&format!(
            "return [...document.querySelectorAll('.site.target')].map(e => e.dataset.site).includes({})",
            json!(id)
        ));
        if i > 0 || offered == json!(true) {
            assert_eq!(offered, json!(true), "click {i} ({id}) of {} is not offered", m["text"]);
        }
        b.click(&target(id));
    }
    // Played at once, or, where the path could also go on, a button to
    // stop here.
    let ply = v["ply"].as_i64().unwrap();
    let stop = format!("[...document.querySelectorAll('#choices button')].find(e => e.textContent === {})", m["text"]);
    let how = b.wait(
        &format!("return window.tabulaView.ply > {ply} ? 'played' : ({stop} ? 'offered' : false)"),
        "the jump to be played or offered",
    );
    if how == json!("offered") {
        b.script(&format!("{stop}.click()"));
    }
    played(&b, s.addr, &g, &v, &m);
}

#[test]
fn two_browsers_on_one_session_see_each_others_moves() {
    let Some(white) = Browser::start() else { return };
    let Some(black) = Browser::start() else { return };
    let s = start();
    let g = ok(s.addr, json!({"op": "new", "game": "hasami-shogi", "seed": 1, "seats": {}}));
    black.go(&page(s.addr, &g, "black"));
    white.go(&page(s.addr, &g, "white"));
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // Hasami Shogi: black moves first.
    let (mut mover, mut waiter, mut seats) = (&black, &white, ("black", "white"));
    for ply in 0..4 {
        let v = my_turn(mover, seats.0, ply - 1);
        let moves = v["moves"].as_array().unwrap();
        let m = &moves[rng.gen_range(0..moves.len())];
        click_move(mover, m);
        // The other page hears of it and redraws, with no reload.
        let seen = waiter.wait(
            &format!("return window.tabulaView && window.tabulaView.ply > {ply} ? window.tabulaView.last_move : false"),
            "the other page to see the move",
        );
        assert_eq!(&seen, &m["text"]);
        (mover, waiter) = (waiter, mover);
        seats = (seats.1, seats.0);
    }
    white.screenshot(&shot("hasami-shogi"));
}

/// Plays `seat` in the page to the end, each move its first one clicked on
/// its one square, at most `most` moves; `each` sees every view where the
/// seat is to move, with the moves clicked so far. The moves clicked.
fn click_to_the_end(b: &Browser, seat: &str, most: usize, mut each: impl FnMut(&Value, usize)) -> usize {
    let mut ply = -1;
    let mut clicked = 0;
    loop {
        let v = my_turn(b, seat, ply);
        if !v["game_over"].is_null() {
            return clicked;
        }
        each(&v, clicked);
        let m = v["moves"][0].clone();
        assert_eq!(m["clicks"].as_array().unwrap().len(), 1, "a square per move: {m}");
        click_move(b, &m);
        clicked += 1;
        ply = v["ply"].as_i64().unwrap();
        assert!(clicked <= most, "{seat} moves at most {most} times");
    }
}

/// A GDL game in the page: tic-tac-toe's grid drawn from its fluents, each
/// move one click on a square, against `random` to the end.
#[test]
fn a_gdl_tictactoe_game_is_clicked_to_its_end() {
    let Some(b) = Browser::start() else { return };
    let s = start();
    let g = ok(
        s.addr,
        json!({"op": "new", "game": "tictactoe", "seats": {"x": "human", "o": "random"}, "auto": true, "seed": 4}),
    );
    b.go(&page(s.addr, &g, "x"));
    let clicked = click_to_the_end(&b, "x", 5, |_, _| {});
    assert!(clicked >= 3, "{clicked} moves");
    let turn = b.script("return document.getElementById('turn').textContent");
    assert!(turn.as_str().unwrap().starts_with("Game over"), "{turn}");
    b.screenshot(&shot("tictactoe"));
}

/// A GDL-II game in the page: Krieg tic-tac-toe's empty grid, clicked
/// square by square against `random`; until the game ends the page shows x
/// no mark of o's (nor its own: x knows them from what it was told, in
/// the lines beside the board), then the whole board.
#[test]
fn a_krieg_tictactoe_page_shows_only_what_its_seat_was_told() {
    let Some(b) = Browser::start() else { return };
    let s = start();
    let g = ok(
        s.addr,
        json!({"op": "new", "game": "krieg-tictactoe", "seats": {"xplayer": "human", "oplayer": "random"},
               "auto": true, "seed": 2}),
    );
    b.go(&page(s.addr, &g, "xplayer"));
    let clicked = click_to_the_end(&b, "xplayer", 9, |v, clicked| {
        assert_eq!(v["board"]["pieces"], json!([]), "a mark is drawn before the end: {v}");
        assert!(v["board"]["texts"].to_string().contains("you play xplayer"), "{v}");
        if clicked == 2 {
            b.screenshot(&shot("krieg-tictactoe-playing"));
        }
    });
    assert!(clicked >= 3, "{clicked} moves");
    let v = b.script("return window.tabulaView");
    assert!(!v["board"]["pieces"].as_array().unwrap().is_empty(), "the end shows the marks: {v}");
    b.screenshot(&shot("krieg-tictactoe"));
}

/// `tabula serve --http ADDR` on database `db`: the process, once it
/// listens.
fn serve_on(addr: std::net::SocketAddr, db: &Path) -> common::Process {
    use std::io::BufRead;
    let t = std::time::Instant::now();
    loop {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(["serve", "--http", &addr.to_string(), "--db"])
            .arg(db)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        if line.contains("http://") {
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
            return common::Process(child);
        }
        // The port is not free again yet.
        let _ = child.wait();
        assert!(t.elapsed().as_secs() < 30, "{line}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn the_page_reconnects_after_the_server_is_killed_and_started_again() {
    let Some(b) = Browser::start() else { return };
    let dir = std::env::temp_dir().join(format!("tabula-browser-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = dir.join("games.db");
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut server = serve_on(addr, &db);
    let g = ok(addr, json!({"op": "new", "game": "breakthrough", "options": {"rows": 5, "cols": 5}}));
    b.go(&page(addr, &g, "black"));
    b.wait("return window.tabulaView && window.tabulaView.ply === 0", "the page");
    server.kill().unwrap();
    server.wait().unwrap();
    let _server = serve_on(addr, &db);
    // A move made elsewhere after the restart reaches the page open
    // before it.
    ok(addr, json!({"op": "play", "session": g["session"], "move": "b2-b3", "token": g["tokens"]["white"]}));
    let v = b.wait("const v = window.tabulaView; return v && v.ply === 1 ? v : false", "the move after the restart");
    assert_eq!(v["history"], json!(["b2-b3"]));
    assert_eq!(v["to_move"], "black");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_analysis_page_compares_two_hex_boards_with_its_plots() {
    let Some(b) = Browser::start() else { return };
    let s = start();
    b.go(&format!("http://{}/", s.addr));
    // The new-game form links to the analysis of the game chosen.
    b.wait("return document.querySelectorAll('#game-choice option').length > 0", "the games");
    b.script("const c = document.getElementById('game-choice'); c.value = 'hex'; c.onchange(); return true");
    let link = b.script("return document.getElementById('analyze-link').getAttribute('href')");
    assert_eq!(link, json!("/analyze/hex"));
    b.click("#analyze-link");
    b.wait("return document.getElementById('analyze-form') !== null", "the analysis page");
    // 5x5 against 7x7, random in both seats.
    b.script(
        "const f = document.getElementById('analyze-form'); f.elements['a.size'].value = '5'; \
         f.elements['b.size'].value = '7'; f.elements['games'].value = '60'; return true",
    );
    b.click("#analyze-form button[type=submit]");
    let report = b.wait(
        "const r = document.getElementById('report'); \
         return r && document.querySelectorAll('figure.plot svg').length === 3 ? r.textContent : false",
        "the report and its three plots",
    );
    let report = report.as_str().unwrap();
    assert!(report.contains("A: size=5: 60 games, random against random"), "{report}");
    assert!(report.contains("A: size=5 against B: size=7:"), "{report}");
    // Seven rows take longer to join than five: beyond noise.
    let plies = report.lines().find(|l| l.trim_start().starts_with("plies ") && l.contains('→')).unwrap();
    assert!(plies.contains("beyond noise"), "{plies}");
    assert!(report.contains("coverage"), "{report}");
    b.screenshot(&shot("analysis-hex"));
    // A value the game refuses is told on the page, with the form.
    b.go(&format!("http://{}/analyze/hex?a.size=40", s.addr));
    let error = b.wait("const e = document.querySelector('.error'); return e ? e.textContent : false", "the error");
    assert!(error.as_str().unwrap().contains("size"), "{error}");
}
