//! Chess (`games/chess.rules`) against Stockfish: the perft of the
//! positions of `games/chess.perft` (the start, the usual suite and the
//! hard cases), move by move (`go perft` divides by the first move), and
//! the rules' own answers: algebraic notation, FEN, the draw rules and
//! clear errors for a bad FEN. The legal moves of thousands of positions
//! are compared with python-chess's in the Python tests
//! (`bindings/python/tests/test_chess.py`).

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tabula::game::{Game, Outcome, State};

fn chess() -> Game {
    tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/chess.rules")).unwrap().0
}

/// Stockfish (`apt-get install stockfish`).
fn stockfish() -> Option<PathBuf> {
    common::reference_program("stockfish", "the chess cross-checks")
}

/// Stockfish's `go perft`: the count under each first move (UCI) and the
/// total.
fn stockfish_perft(sf: &Path, fen: &str, depth: u32) -> (BTreeMap<String, u64>, u64) {
    let mut child = Command::new(sf).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("stockfish runs");
    let script = format!("uci\nposition fen {fen}\ngo perft {depth}\nquit\n");
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let mut divide = BTreeMap::new();
    let mut total = None;
    for line in out.lines() {
        if let Some(n) = line.strip_prefix("Nodes searched: ") {
            total = n.trim().parse().ok();
        } else if let Some((mv, n)) = line.split_once(": ")
            && mv.len() >= 4
            && mv.len() <= 5
            && let Ok(n) = n.trim().parse()
        {
            divide.insert(mv.to_string(), n);
        }
    }
    (divide, total.unwrap_or_else(|| panic!("no perft from stockfish for {fen}:\n{out}")))
}

/// tabula's perft divided by the first move, keyed by UCI (`notation/2`).
fn tabula_perft(game: &mut Game, s: &State, depth: u32) -> BTreeMap<String, u64> {
    let mut divide = BTreeMap::new();
    for m in game.legal_moves(s).unwrap() {
        let n = game.perft(&m.next, depth - 1).unwrap();
        divide.insert(game.move_text(&m.mv).unwrap(), n);
    }
    divide
}

/// The positions of the perft table: each FEN (the start's is the
/// default) and the deepest depth listed.
fn table_positions() -> Vec<(String, u32)> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("games/chess.perft")).unwrap();
    let mut out: Vec<(String, u32)> = vec![("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_string(), 0)];
    for line in text.lines() {
        if let Some(opts) = line.strip_prefix("# options") {
            let pairs = tabula::game::record::parse_pairs(opts).unwrap();
            let fen = pairs.iter().find(|(k, _)| k == "fen").expect("each set gives a fen").1.clone();
            out.push((fen, 0));
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            let d = line.split_whitespace().next().unwrap().parse().unwrap();
            let last = out.last_mut().unwrap();
            last.1 = last.1.max(d);
        }
    }
    out
}

fn position(game: &mut Game, fen: &str) -> State {
    let o = game.options_term(&[("fen".into(), fen.into()), ("draws".into(), "off".into())]).unwrap();
    game.initial_state(&o, 0).unwrap()
}

fn agree(sf: &Path, game: &mut Game, fen: &str, depth: u32) -> u64 {
    let s = position(game, fen);
    let ours = tabula_perft(game, &s, depth);
    let (theirs, total) = stockfish_perft(sf, fen, depth);
    assert_eq!(ours, theirs, "perft {depth} of {fen}, by first move: tabula (left) and stockfish (right)");
    assert_eq!(ours.values().sum::<u64>(), total);
    total
}

/// Every position of the perft table, at its deepest depth, move by move
/// as Stockfish counts it.
#[test]
fn perft_table_agrees_with_stockfish() {
    let Some(sf) = stockfish() else { return };
    let mut game = chess();
    let positions = table_positions();
    assert!(positions.len() >= 9, "{positions:?}");
    for (fen, depth) in positions {
        agree(&sf, &mut game, &fen, depth);
    }
}

/// The perft the chess world quotes: depth 5 from the start, 4 from the
/// usual suite (release only; CI runs it).
#[test]
#[ignore]
fn deep_perft_agrees_with_stockfish() {
    let Some(sf) = stockfish() else { return };
    let mut game = chess();
    for (i, (fen, _)) in table_positions().into_iter().take(6).enumerate() {
        let depth = if i == 0 { 5 } else { 4 };
        let t = std::time::Instant::now();
        let n = agree(&sf, &mut game, &fen, depth);
        eprintln!("{fen}: perft {depth} = {n} ({:.0} nodes/s)", n as f64 / t.elapsed().as_secs_f64());
    }
}

fn moves_after(game: &mut Game, fen: &str, line: &[&str]) -> (State, Vec<String>) {
    let o = game.options_term(&[("fen".into(), fen.into())]).unwrap();
    let mut s = game.initial_state(&o, 0).unwrap();
    for typed in line {
        let legal = game.legal_moves(&s).unwrap();
        let i = game.match_move(&legal, typed).unwrap_or_else(|e| panic!("{typed}: {e}"));
        s = legal[i].next.clone();
    }
    let texts = game.legal_moves(&s).unwrap().into_iter().map(|m| m.text).collect();
    (s, texts)
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn fen_of(game: &mut Game, s: &State) -> String {
    game.display(s, "white").unwrap().lines().last().unwrap().trim_start_matches("FEN ").to_string()
}

#[test]
fn algebraic_notation_as_players_write_it() {
    let mut game = chess();
    // Castling, captures by pawns and pieces, checks.
    let (_, moves) = moves_after(&mut game, START, &["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "Ng5", "d5", "exd5"]);
    assert!(moves.contains(&"Nxd5".to_string()) && moves.contains(&"Bb4".to_string()), "{moves:?}");
    let (_, moves) = moves_after(&mut game, START, &["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"]);
    assert!(moves.contains(&"O-O".to_string()) && moves.contains(&"Bxf7+".to_string()), "{moves:?}");
    // Two knights that can reach the same square: told apart by file, then
    // by rank; a promotion with check, and mate.
    let (_, moves) = moves_after(&mut game, "k7/8/8/8/8/8/8/KN3N2 w - - 0 1", &[]);
    assert!(moves.contains(&"Nbd2".to_string()) && moves.contains(&"Nfd2".to_string()), "{moves:?}");
    let (_, moves) = moves_after(&mut game, "k7/8/8/8/1N6/8/1N6/K7 w - - 0 1", &[]);
    assert!(moves.contains(&"N4d3".to_string()) && moves.contains(&"N2d3".to_string()), "{moves:?}");
    let (_, moves) = moves_after(&mut game, "8/4P3/8/8/8/8/k7/4K2R w K - 0 1", &[]);
    for m in ["e8=Q", "e8=N", "O-O", "Rh2+"] {
        assert!(moves.contains(&m.to_string()), "{m} in {moves:?}");
    }
    let (_, moves) = moves_after(&mut game, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", &[]);
    assert!(moves.contains(&"Ra8#".to_string()), "{moves:?}");
    // `bxc3` is the pawn's capture and `Bxc3` the bishop's; UCI is
    // accepted too.
    let pieces = "4k3/8/8/8/8/2n5/1P1B4/4K3 w - - 0 1";
    let (s, _) = moves_after(&mut game, pieces, &["bxc3"]);
    assert_eq!(fen_of(&mut game, &s), "4k3/8/8/8/8/2P5/3B4/4K3 b - - 0 1");
    let (s, _) = moves_after(&mut game, pieces, &["Bxc3"]);
    assert_eq!(fen_of(&mut game, &s), "4k3/8/8/8/8/2B5/1P6/4K3 b - - 0 1");
    let (s, _) = moves_after(&mut game, START, &["e2e4", "c7c5", "g1f3"]);
    assert_eq!(fen_of(&mut game, &s), "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
}

#[test]
fn fen_round_trips_and_en_passant_is_shown_only_when_possible() {
    let mut game = chess();
    for fen in [
        START,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1",
    ] {
        let (s, _) = moves_after(&mut game, fen, &[]);
        assert_eq!(fen_of(&mut game, &s), fen);
    }
    // After 1. e4 no black pawn can take en passant: no square in the FEN
    // (as python-chess writes it); after 1. e4 d5 2. e5 f5 white can.
    let (s, _) = moves_after(&mut game, START, &["e4"]);
    assert_eq!(fen_of(&mut game, &s), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    let (s, moves) = moves_after(&mut game, START, &["e4", "d5", "e5", "f5"]);
    assert_eq!(fen_of(&mut game, &s), "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3");
    assert!(moves.contains(&"exf6".to_string()));
    // Castling rights the position cannot have are dropped.
    let (s, _) = moves_after(&mut game, "4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1", &[]);
    assert_eq!(fen_of(&mut game, &s), "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
}

fn outcome(game: &mut Game, fen: &str, line: &[&str]) -> Option<Outcome> {
    let (s, _) = moves_after(game, fen, line);
    game.outcome(&s).unwrap()
}

#[test]
fn the_game_ends_as_the_laws_say() {
    let mut game = chess();
    let white = Some(Outcome::Winner("white".into()));
    let black = Some(Outcome::Winner("black".into()));
    // Fool's mate; a stalemate.
    assert_eq!(outcome(&mut game, START, &["f3", "e5", "g4", "Qh4#"]), black);
    assert_eq!(outcome(&mut game, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", &[]), Some(Outcome::Draw));
    assert_eq!(outcome(&mut game, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", &["Ra8#"]), white);
    // Threefold repetition: the start again after two rounds of knight
    // moves is its third time.
    let knights = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"];
    assert_eq!(outcome(&mut game, START, &knights), None);
    assert_eq!(outcome(&mut game, START, &[&knights[..], &["Ng8"]].concat()), Some(Outcome::Draw));
    // The fifty-move rule: the hundredth ply without a capture or a pawn
    // move draws, unless it mates.
    assert_eq!(outcome(&mut game, "7k/8/8/8/8/8/8/K5R1 w - - 99 80", &["Rh1+"]), Some(Outcome::Draw));
    assert_eq!(outcome(&mut game, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80", &["Ra8#"]), white);
    assert_eq!(outcome(&mut game, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 98 80", &["Ra2"]), None);
    // Insufficient material: king against king and knight, bishops on one
    // colour; not a knight each (a mate can still happen).
    assert_eq!(outcome(&mut game, "4k3/8/8/8/8/8/8/4KN2 b - - 0 1", &[]), Some(Outcome::Draw));
    assert_eq!(outcome(&mut game, "4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", &[]), Some(Outcome::Draw));
    assert_eq!(outcome(&mut game, "4kn2/8/8/8/8/8/8/4KN2 w - - 0 1", &[]), None);
    // Taking the last pawn leaves a dead position.
    assert_eq!(outcome(&mut game, "4k3/8/8/8/8/8/3p4/4K3 w - - 0 1", &["Kxd2"]), Some(Outcome::Draw));
    // With the draw rules off, only mate and stalemate end the game.
    let o =
        game.options_term(&[("fen".into(), "4k3/8/8/8/8/8/8/4KN2 b - - 0 1".into()), ("draws".into(), "off".into())]);
    let s = game.initial_state(&o.unwrap(), 0).unwrap();
    assert_eq!(game.outcome(&s).unwrap(), None);
}

#[test]
fn a_bad_fen_says_what_is_wrong() {
    for (fen, says) in [
        ("hello", "expected six fields"),
        ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "`9` is not a piece"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "eight ranks"),
        ("8/8/8/8/8/8/8/8 w - - 0 1", "white must have exactly one king"),
        ("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "the side not to move is in check"),
        ("4k3/8/8/8/8/8/8/4K2P w - - 0 1", "a pawn on the first or last rank"),
        ("4k3/8/8/8/8/8/8/4K3 w - e4 0 1", "en passant square"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(["moves", "chess", "--option", &format!("fen={fen}")])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{fen}");
        assert!(err.contains(says) && err.contains("`fen` expected"), "{fen}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
