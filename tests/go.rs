//! Go (`games/go.rules`) against GNU Go, over GTP: the legal moves of
//! every position of random games (`all_legal`, with GNU Go told to play
//! positional superko), and the final score of games played out to the
//! end (`final_score` with the Chinese rules: area scoring), where no
//! stone on the board is dead and the score is a count nobody can argue
//! with. The perft table (`games/go.perft`) is also what
//! `compat/perft/go.py`, an independent Python program, counts.

mod common;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use tabula::ai::{self, Controller};
use tabula::game::{Game, Move, Outcome, State};

fn go() -> Game {
    tabula::loader::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("games/go.rules")).unwrap().0
}

/// GNU Go (`apt-get install gnugo`).
fn gnugo() -> Option<PathBuf> {
    common::reference_program("gnugo", "the Go cross-checks")
}

/// A GTP session with GNU Go.
struct Gtp {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Gtp {
    fn start(path: &Path, size: u32, komi: &str) -> Gtp {
        let mut child = Command::new(path)
            .args(["--mode", "gtp", "--chinese-rules", "--positional-superko", "--level", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("gnugo runs");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut gtp = Gtp { child, input, output };
        gtp.ask(&format!("boardsize {size}"));
        gtp.ask("clear_board");
        gtp.ask(&format!("komi {komi}"));
        gtp
    }

    /// A command's answer, without its `= `; a `?` answer fails the test.
    fn ask(&mut self, command: &str) -> String {
        writeln!(self.input, "{command}").unwrap();
        self.input.flush().unwrap();
        let mut answer = String::new();
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "gnugo stopped after {command}");
            if line.trim().is_empty() && !answer.is_empty() {
                break;
            }
            answer.push_str(&line);
        }
        let answer = answer.trim();
        match answer.strip_prefix('=') {
            Some(rest) => rest.trim().to_string(),
            None => panic!("gnugo refused `{command}`: {answer}"),
        }
    }
}

impl Drop for Gtp {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "quit");
        let _ = self.child.wait();
    }
}

/// How many moves GNU Go keeps for its superko check (MAX_MOVE_HISTORY in
/// its sources; beyond it the oldest moves are folded into the start).
const GNUGO_HISTORY: usize = 500;

fn start(game: &mut Game, size: u32, komi: &str) -> State {
    let o = game.options_term(&[("size".into(), size.to_string()), ("komi".into(), komi.into())]).unwrap();
    game.initial_state(&o, 0).unwrap()
}

/// The points where the player to move may play, as tabula and as GNU Go
/// see them: the same set, or the test fails naming the moves so far.
fn same_legal_points(game: &mut Game, gtp: &mut Gtp, s: &State, moves: &[String]) -> Vec<tabula::game::LegalMove> {
    let legal = game.legal_moves(s).unwrap();
    let ours: BTreeSet<String> = legal.iter().map(|m| m.text.clone()).filter(|t| t != "pass").collect();
    let colour = game.to_move(s).unwrap();
    let theirs: BTreeSet<String> =
        gtp.ask(&format!("all_legal {colour}")).split_whitespace().map(String::from).collect();
    assert_eq!(ours, theirs, "legal points for {colour} after {}: tabula (left), GNU Go (right)", moves.join(" "));
    assert!(legal.iter().any(|m| m.text == "pass"), "pass is always legal");
    legal
}

/// Random games (every legal move as likely, passes rare) on small and
/// full boards: the legal points of each position; among them, positions
/// where superko forbids a point next to an empty one (not a simple ko,
/// not suicide: only a longer cycle forbids such a point).
#[test]
fn legal_moves_agree_with_gnugo_in_random_games() {
    let Some(path) = gnugo() else { return };
    let mut game = go();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut positions, mut superko) = (0, 0);
    for (size, games, max_plies) in [(5, 40, 400), (7, 20, 400), (9, 12, 400), (13, 3, 450), (19, 2, 490)] {
        for _ in 0..games {
            let mut gtp = Gtp::start(&path, size, "7.5");
            let mut s = start(&mut game, size, "7.5");
            let mut moves = Vec::new();
            while game.outcome(&s).unwrap().is_none() && moves.len() < max_plies {
                let legal = same_legal_points(&mut game, &mut gtp, &s, &moves);
                positions += 1;
                superko += usize::from(forbidden_beside_empty(&mut gtp, size, &legal));
                // Passes rarely, so that the board fills and captures come.
                let m = if rng.gen_bool(0.97) || legal.len() == 1 {
                    legal.iter().filter(|m| m.text != "pass").collect::<Vec<_>>().choose(&mut rng).copied()
                } else {
                    None
                }
                .unwrap_or_else(|| legal.iter().find(|m| m.text == "pass").unwrap());
                let colour = game.to_move(&s).unwrap();
                gtp.ask(&format!("play {colour} {}", m.text));
                moves.push(m.text.clone());
                s = m.next.clone();
            }
        }
    }
    eprintln!("{positions} positions agree; in {superko} of them superko forbids a point next to an empty one");
    assert!(positions > 15000 && superko > 0, "{positions} positions, {superko} with superko beyond a simple ko");
}

/// Whether an empty point with an empty neighbour is not among the legal
/// moves (the board read from GNU Go's `list_stones`).
fn forbidden_beside_empty(gtp: &mut Gtp, size: u32, legal: &[tabula::game::LegalMove]) -> bool {
    let name = |x: u32, y: u32| format!("{}{}", "ABCDEFGHJKLMNOPQRST".as_bytes()[x as usize] as char, y + 1);
    let stones: BTreeSet<String> = ["black", "white"]
        .iter()
        .flat_map(|c| gtp.ask(&format!("list_stones {c}")).split_whitespace().map(String::from).collect::<Vec<_>>())
        .collect();
    let legal: BTreeSet<&str> = legal.iter().map(|m| m.text.as_str()).collect();
    let empty = |x: u32, y: u32| !stones.contains(&name(x, y));
    (0..size).any(|y| {
        (0..size).any(|x| {
            empty(x, y)
                && !legal.contains(name(x, y).as_str())
                && [(1i32, 0i32), (-1, 0), (0, 1), (0, -1)].iter().any(|(dx, dy)| {
                    let (nx, ny) = (x as i32 + dx, y as i32 + dy);
                    (0..size as i32).contains(&nx) && (0..size as i32).contains(&ny) && empty(nx as u32, ny as u32)
                })
        })
    })
}

/// Games played to the end by the rules' own player (it takes what it can
/// and never fills its own eyes, so nearly every stone left is alive):
/// where GNU Go finds no dead stone and no seki at the end (a capture that
/// superko forbids can leave one), its final score is tabula's result and
/// margin.
#[test]
fn played_out_games_score_as_gnugo_scores_them() {
    let Some(path) = gnugo() else { return };
    let player = Controller::parse("rules:1", None).unwrap();
    let players = vec!["black".to_string(), "white".to_string()];
    let boards = [(9, "7.5", 0..30), (9, "0", 30..40), (13, "6.5", 40..44), (19, "7.5", 44..46)];
    score_as_gnugo(&path, &boards, |game, s, seed| ai::choose(game, &players, s, &player, seed, 1).unwrap().mv);
}

/// The playout policy of the rules (`playout_move/2`, which `mcts`'s
/// playouts follow) plays only legal moves, and plays a game out as people
/// would: it fills no eye of its own and passes when nothing else is left,
/// so the games it plays end with every stone alive, and score as GNU Go
/// scores them.
#[test]
fn the_playout_policy_plays_games_out() {
    let Some(path) = gnugo() else { return };
    let boards = [(9, "7.5", 100..110), (13, "6.5", 110..112), (19, "7.5", 112..113)];
    score_as_gnugo(&path, &boards, |game, s, seed| {
        game.seed(seed);
        game.playout_move(s).unwrap().expect("go.rules has a playout policy")
    });
}

/// Plays a game for each seed of each board (size, komi, seeds) to the
/// end, `next` choosing each move (from the game, the position and a
/// seed), the legal points of each position checked against GNU Go's; and
/// where GNU Go finds no dead stone and no seki at the end, its final score
/// must be tabula's result and margin: in at least two games of three, and
/// both colours must win some.
fn score_as_gnugo(
    path: &Path,
    boards: &[(u32, &str, std::ops::Range<u64>)],
    mut next: impl FnMut(&mut Game, &State, u64) -> Move,
) {
    let mut game = go();
    let players = vec!["black".to_string(), "white".to_string()];
    let mut results = BTreeSet::new();
    let (mut compared, mut played) = (0, 0);
    for (size, komi, seeds) in boards {
        for seed in seeds.clone() {
            let mut gtp = Gtp::start(path, *size, komi);
            let mut s = start(&mut game, *size, komi);
            let mut moves = Vec::new();
            while game.outcome(&s).unwrap().is_none() {
                // GNU Go remembers 500 moves (MAX_MOVE_HISTORY): past them
                // its superko no longer sees the whole game.
                let legal = if moves.len() < GNUGO_HISTORY {
                    same_legal_points(&mut game, &mut gtp, &s, &moves)
                } else {
                    game.legal_moves(&s).unwrap()
                };
                let mv = next(&mut game, &s, seed * 1000 + moves.len() as u64);
                let k = legal.iter().position(|m| m.mv == mv).unwrap_or_else(|| {
                    panic!("{} is not legal after {}", game.engine().term_text(&mv.0), moves.join(" "))
                });
                let colour = game.to_move(&s).unwrap();
                gtp.ask(&format!("play {colour} {}", legal[k].text));
                moves.push(legal[k].text.clone());
                s = legal[k].next.clone();
            }
            let scores = game.scores(&s, &players).unwrap();
            let black: f64 = scores[0].1.parse().unwrap();
            let white: f64 = scores[1].1.parse().unwrap();
            let ours = match game.outcome(&s).unwrap().unwrap() {
                Outcome::Winner(w) if w == "black" => format!("B+{:.1}", black - white),
                Outcome::Winner(_) => format!("W+{:.1}", white - black),
                Outcome::Draw => "0".to_string(),
            };
            played += 1;
            if !gtp.ask("final_status_list dead").is_empty() || !gtp.ask("final_status_list seki").is_empty() {
                continue;
            }
            let theirs = gtp.ask("final_score");
            assert_eq!(ours, theirs, "{size}x{size}, komi {komi}, after {}", moves.join(" "));
            compared += 1;
            results.insert(ours.chars().next().unwrap());
        }
    }
    eprintln!("{compared} of {played} games played out (no dead stone, no seki): the same score");
    assert!(compared >= played * 2 / 3, "only {compared} of {played} games were played out");
    assert!(results.contains(&'B') && results.contains(&'W'), "both colours win some: {results:?}");
}

/// The moves as GTP and players write them, the rules a beginner asks
/// about: capture, suicide, ko, the end after two passes, the komi.
#[test]
fn captures_suicide_ko_and_the_end() {
    let mut game = go();
    let play = |game: &mut Game, s: &State, text: &str| -> State {
        let legal = game.legal_moves(s).unwrap();
        let i = game.match_move(&legal, text).unwrap_or_else(|e| panic!("{text}: {e}"));
        legal[i].next.clone()
    };
    let texts = |game: &mut Game, s: &State| -> Vec<String> {
        game.legal_moves(s).unwrap().into_iter().map(|m| m.text).collect()
    };
    let s0 = start(&mut game, 5, "0.5");
    let first = texts(&mut game, &s0);
    assert_eq!(first.len(), 26);
    assert_eq!((first[0].as_str(), first[24].as_str(), first[25].as_str()), ("A1", "E5", "pass"));
    // A ko: black takes at C3; white may not take back at once.
    let mut s = s0.clone();
    for m in ["C4", "D4", "B3", "E3", "C2", "D2", "A1", "C3", "D3"] {
        s = play(&mut game, &s, m);
    }
    let after = texts(&mut game, &s);
    assert!(!after.contains(&"C3".to_string()), "white retakes the ko at once: {after:?}");
    assert!(
        game.display(&s, "white").unwrap().contains("black (X) 6, white (O) 3.5"),
        "{}",
        game.display(&s, "white").unwrap()
    );
    // Elsewhere first, and then the ko may be taken.
    s = play(&mut game, &s, "E5");
    s = play(&mut game, &s, "A5");
    assert!(texts(&mut game, &s).contains(&"C3".to_string()));
    // Suicide: a point with no liberty that captures nothing.
    let mut s = s0.clone();
    for m in ["A2", "E5", "B1"] {
        s = play(&mut game, &s, m);
    }
    assert!(!texts(&mut game, &s).contains(&"A1".to_string()), "white's A1 would be suicide");
    // Two passes end it: on an empty board white wins by the komi.
    let s = play(&mut game, &s0, "pass");
    assert_eq!(game.outcome(&s).unwrap(), None);
    let s = play(&mut game, &s, "pass");
    assert_eq!(game.outcome(&s).unwrap(), Some(Outcome::Winner("white".into())));
    // A komi that is not a number is refused with a clear message.
    let o = game.options_term(&[("komi".into(), "lots".into())]).unwrap();
    let e = game.initial_state(&o, 0).unwrap_err().to_string();
    assert!(e.contains("komi"), "{e}");
}

/// A game of random length is reproducible from its seed; the random
/// player only draws among the legal moves.
#[test]
fn a_random_game_on_nine_by_nine_ends() {
    let mut game = go();
    let s = start(&mut game, 9, "7.5");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    game.seed(rng.r#gen());
    let (plies, outcome) = game.playout(&s).unwrap();
    assert!(plies > 20, "{plies} plies");
    assert!(matches!(outcome, Outcome::Winner(_) | Outcome::Draw));
}
