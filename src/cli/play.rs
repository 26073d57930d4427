//! `tabula play GAME`: a game in the terminal, a human or a computer in
//! every seat, with undo, hints, saving and resuming records.

use super::CliError;
use super::setup::{GameArgs, StartArgs, open};
use crate::game::record::Record;
use crate::game::{LegalMove, Outcome, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    #[command(flatten)]
    pub game: GameArgs,
    #[command(flatten)]
    pub start: StartArgs,
    /// Who plays a seat: SEAT=CONTROLLER, with CONTROLLER `human`, `random`
    /// or `rules[:LEVEL]` (the game's own choose_move/3). Default: the
    /// first seat human, the others random.
    #[arg(long = "seat", value_name = "SEAT=CONTROLLER")]
    pub seats: Vec<String>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the game record to FILE after every move.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Replay a record (checking every move) and continue the game.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
}

/// Who chooses the moves of a seat.
#[derive(Clone, Debug, PartialEq)]
enum Controller {
    Human,
    Random,
    Rules(i64),
}

impl Controller {
    fn parse(s: &str) -> Result<Controller, CliError> {
        let (name, arg) = s.split_once(':').map_or((s, None), |(a, b)| (a, Some(b)));
        match (name, arg) {
            ("human", None) => Ok(Controller::Human),
            ("random", None) => Ok(Controller::Random),
            ("rules", None) => Ok(Controller::Rules(1)),
            ("rules", Some(l)) => {
                l.parse().map(Controller::Rules).map_err(|_| CliError(format!("rules:LEVEL needs a number, not `{l}`")))
            }
            _ => Err(CliError(format!(
                "unknown controller `{s}`: use human, random or rules[:LEVEL] (greedy, minimax and mcts come with the AI players)"
            ))),
        }
    }

    fn spec(&self) -> String {
        match self {
            Controller::Human => "human".into(),
            Controller::Random => "random".into(),
            Controller::Rules(l) => format!("rules:{l}"),
        }
    }
}

const HELP: &str = "Type a move in notation (e.g. as listed by `moves`), a unique prefix of one, or its number.
Commands: moves (list the legal moves), undo (take back your last move), hint (suggest a move),
save FILE (write the game record), help, quit.";

/// Lines typed by the person: the terminal with line editing, or stdin.
enum Input {
    Terminal(Box<rustyline::DefaultEditor>),
    Pipe(std::io::StdinLock<'static>),
}

impl Input {
    fn new() -> Input {
        if std::io::stdin().is_terminal()
            && let Ok(ed) = rustyline::DefaultEditor::new()
        {
            return Input::Terminal(Box::new(ed));
        }
        Input::Pipe(std::io::stdin().lock())
    }

    fn line(&mut self, prompt: &str) -> Option<String> {
        match self {
            Input::Terminal(ed) => match ed.readline(prompt) {
                Ok(l) => {
                    let _ = ed.add_history_entry(l.as_str());
                    Some(l)
                }
                Err(_) => None,
            },
            Input::Pipe(stdin) => {
                print!("{prompt}");
                let _ = std::io::stdout().flush();
                let mut s = String::new();
                match stdin.read_line(&mut s) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => {
                        println!("{}", s.trim_end());
                        Some(s)
                    }
                }
            }
        }
    }
}

struct Play {
    session: super::setup::Session,
    controllers: Vec<Controller>,
    /// Positions so far, with the move that led to each (notation).
    history: Vec<(State, Option<String>)>,
    rng: ChaCha8Rng,
    record: Record,
    record_file: Option<PathBuf>,
}

impl Play {
    fn state(&self) -> &State {
        &self.history.last().expect("a position").0
    }

    fn seat_of(&mut self, player: &str) -> usize {
        self.session.players.iter().position(|p| p == player).unwrap_or(0)
    }

    fn save(&mut self, path: &PathBuf) -> Result<(), CliError> {
        self.record.moves = self.history.iter().filter_map(|(_, m)| m.clone().map(|m| (m, 0))).collect();
        std::fs::write(path, self.record.to_text())
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))
    }

    fn play_move(&mut self, m: &LegalMove) -> Result<(), CliError> {
        self.history.push((m.next.clone(), Some(m.text.clone())));
        if let Some(f) = self.record_file.clone() {
            self.save(&f)?;
        }
        Ok(())
    }

    fn draw(&mut self, viewer: &str) -> Result<(), CliError> {
        let state = self.state().clone();
        let board = self.session.game.display(&state, viewer)?;
        print!("\n{board}");
        if let Some(Some(m)) = self.history.last().map(|h| h.1.clone()) {
            println!("last move: {m}");
        }
        Ok(())
    }

    /// A computer player's move.
    fn computer_move(&mut self, c: &Controller, legal: &[LegalMove]) -> Result<usize, CliError> {
        match c {
            Controller::Rules(level) if self.session.game.has("choose_move", 3) => {
                let state = self.state().clone();
                self.session.game.seed(self.rng.r#gen());
                let m = self.session.game.choose_move(&state, *level)?;
                legal.iter().position(|l| l.mv == m).ok_or_else(|| {
                    CliError(format!(
                        "choose_move/3 chose a move that is not legal: {}",
                        self.session.game.engine().term_text(&m.0)
                    ))
                })
            }
            Controller::Rules(_) => Err(CliError("this game has no choose_move/3 for the rules controller".into())),
            _ => Ok(self.rng.gen_range(0..legal.len())),
        }
    }
}

pub fn run(a: PlayArgs) -> Result<i32, CliError> {
    let mut session = open(&a.game)?;
    let resumed = match &a.resume {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
            let r =
                Record::parse(&text).map_err(|e| CliError(format!("{}:{}: {}", path.display(), e.line, e.message)))?;
            if r.game != session.game.name {
                return Err(CliError(format!(
                    "{} is a record of {}, not {}",
                    path.display(),
                    r.game,
                    session.game.name
                )));
            }
            if r.options != session.option_pairs {
                session.options = session.game.options_term(&r.options)?;
                session.option_pairs = r.options.clone();
                session.players = session.game.players(&session.options)?;
            }
            Some(r)
        }
        None => None,
    };
    let seed = resumed.as_ref().map_or(a.seed, |r| r.seed);
    // Controllers: defaults, then the record's seats, then --seat.
    let mut controllers: Vec<Controller> =
        (0..session.players.len()).map(|i| if i == 0 { Controller::Human } else { Controller::Random }).collect();
    let mut seat_specs: Vec<(String, String)> = resumed.as_ref().map(|r| r.seats.clone()).unwrap_or_default();
    for s in &a.seats {
        let (k, v) = s.split_once('=').ok_or_else(|| CliError(format!("--seat takes SEAT=CONTROLLER, not `{s}`")))?;
        seat_specs.retain(|(x, _)| x != k);
        seat_specs.push((k.to_string(), v.to_string()));
    }
    for (seat, spec) in &seat_specs {
        let i = session.players.iter().position(|p| p == seat).ok_or_else(|| {
            CliError(format!("no seat `{seat}` in {}; the seats are {}", session.game.name, session.players.join(", ")))
        })?;
        controllers[i] = Controller::parse(spec)?;
    }
    let start = session.start(&a.start, seed)?;
    let record = Record {
        game: session.game.name.clone(),
        options: session.option_pairs.clone(),
        seed,
        seats: session.players.iter().cloned().zip(controllers.iter().map(Controller::spec)).collect(),
        moves: Vec::new(),
    };
    let mut play = Play {
        session,
        controllers,
        history: vec![(start, None)],
        rng: ChaCha8Rng::seed_from_u64(seed),
        record,
        record_file: None,
    };
    if let Some(r) = resumed {
        let path = a.resume.as_ref().expect("resumed from a file");
        for (typed, line) in &r.moves {
            let state = play.state().clone();
            if play.session.game.outcome(&state)?.is_some() {
                return Err(CliError(format!("{}:{line}: the game was already over before `{typed}`", path.display())));
            }
            let legal = play.session.game.legal_moves(&state)?;
            let k = play
                .session
                .game
                .match_move(&legal, typed)
                .map_err(|e| CliError(format!("{}:{line}: {e}", path.display())))?;
            play.history.push((legal[k].next.clone(), Some(legal[k].text.clone())));
        }
        println!("resumed {} after {} moves", path.display(), r.moves.len());
    }
    play.record_file = a.record.clone();
    if let Some(f) = play.record_file.clone() {
        play.save(&f)?;
    }
    let mut input = Input::new();
    let humans = play.controllers.iter().filter(|c| **c == Controller::Human).count();
    loop {
        let state = play.state().clone();
        let over = play.session.game.outcome(&state)?;
        let mover = if over.is_none() { Some(play.session.game.to_move(&state)?) } else { None };
        let seat = mover.as_ref().map(|m| play.seat_of(m));
        let viewer = match seat {
            Some(i) if play.controllers[i] == Controller::Human => play.session.players[i].clone(),
            _ if humans == 1 => {
                let i = play.controllers.iter().position(|c| *c == Controller::Human).expect("one human");
                play.session.players[i].clone()
            }
            _ => "spectator".to_string(),
        };
        play.draw(&viewer)?;
        if let Some(o) = over {
            match &o {
                Outcome::Winner(p) => println!("game over: {p} wins"),
                Outcome::Draw => println!("game over: draw"),
            }
            let players = play.session.players.clone();
            let scores = play.session.game.scores(&state, &players)?;
            if !scores.is_empty() {
                let s: Vec<String> = scores.iter().map(|(p, v)| format!("{p} {v}")).collect();
                println!("scores: {}", s.join(", "));
            }
            return Ok(0);
        }
        let mover = mover.expect("not over");
        let seat = seat.expect("not over");
        let legal = play.session.game.legal_moves(&state)?;
        if legal.is_empty() {
            return Err(CliError(format!(
                "the rules give {mover} no legal move in a position that is not over (game_over/2 should end it, or move/3 should offer a pass)"
            )));
        }
        let controller = play.controllers[seat].clone();
        if controller != Controller::Human {
            let k = play.computer_move(&controller, &legal)?;
            println!("{mover} ({}) plays {}", controller.spec(), legal[k].text);
            play.play_move(&legal[k])?;
            continue;
        }
        // A person's turn: read until a move is made.
        loop {
            let Some(line) = input.line(&format!("{mover}> ")) else {
                println!("input ended; the game is not finished");
                return Ok(0);
            };
            let line = line.trim();
            let (cmd, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, r)| (c, r.trim()));
            match cmd {
                "" => continue,
                "help" | "?" => println!("{HELP}"),
                "quit" | "exit" => {
                    println!("game abandoned");
                    return Ok(0);
                }
                "moves" => {
                    let list: Vec<String> =
                        legal.iter().enumerate().map(|(i, m)| format!("{}:{}", i + 1, m.text)).collect();
                    println!("{}", list.join(" "));
                }
                "undo" => {
                    // Take back moves until it is this person's turn again.
                    let mut undone = 0;
                    while play.history.len() > 1 {
                        play.history.pop();
                        undone += 1;
                        let s = play.state().clone();
                        let m = play.session.game.to_move(&s)?;
                        let i = play.seat_of(&m);
                        if play.controllers[i] == Controller::Human {
                            break;
                        }
                    }
                    if undone == 0 {
                        println!("nothing to undo");
                        continue;
                    }
                    if let Some(f) = play.record_file.clone() {
                        play.save(&f)?;
                    }
                    break;
                }
                "hint" => {
                    let c =
                        if play.session.game.has("choose_move", 3) { Controller::Rules(1) } else { Controller::Random };
                    let k = play.computer_move(&c, &legal)?;
                    println!("hint ({}): {}", c.spec(), legal[k].text);
                }
                "save" => {
                    if rest.is_empty() {
                        println!("save needs a file name: save FILE");
                        continue;
                    }
                    let path = PathBuf::from(rest);
                    match play.save(&path) {
                        Ok(()) => println!("saved to {}", path.display()),
                        Err(CliError(e)) => println!("{e}"),
                    }
                }
                _ => match play.session.game.match_move(&legal, line) {
                    Ok(k) => {
                        play.play_move(&legal[k])?;
                        break;
                    }
                    Err(e) => println!("{e}\n(type `help` for the commands)"),
                },
            }
        }
    }
}
