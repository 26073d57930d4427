//! `tabula play GAME`: a game in the terminal, a human or a computer in
//! every seat, with undo, hints, saving and resuming records.

use super::CliError;
use crate::ai::{self, Controller, Kind};
use crate::game::explain::{self, Verdict};
use crate::game::record::Record;
use crate::game::{LegalMove, Outcome, Play, Secrecy, Shown, State};
use crate::plan::open::{GameArgs, Session, StartArgs, open, read_record};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    #[command(flatten)]
    pub game: GameArgs,
    #[command(flatten)]
    pub start: StartArgs,
    /// Who plays a seat: SEAT=CONTROLLER, with CONTROLLER `human`, `random`,
    /// `greedy`, `minimax[:DEPTH]`, `mcts[:PLAYOUTS]`, `guided[:ITERATIONS]`, `uct[:PLAYOUTS]` or `rules[:LEVEL]`
    /// (the game's own choose_move/3). Default: the first seat human, the
    /// others mcts with a time budget of about 1.5 seconds a move.
    #[arg(long = "seat", value_name = "SEAT=CONTROLLER")]
    pub seats: Vec<String>,
    /// Time budget of the computer players, in seconds per move.
    #[arg(long, value_name = "SECONDS")]
    pub think: Option<f64>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the game record to FILE after every move.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Replay a record (checking every move) and continue the game.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Play in the browser instead: serve the web board on ADDR (default
    /// 127.0.0.1:8080) with this game set up, and print its address.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    pub web: Option<String>,
    /// With --web: allow an address other than loopback.
    #[arg(long, requires = "web")]
    pub public: bool,
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

/// A game in the terminal: the game in progress, and who plays each seat.
struct Terminal {
    session: crate::plan::open::Session,
    controllers: Vec<Controller>,
    play: Play,
    rng: ChaCha8Rng,
    record: Record,
    record_file: Option<PathBuf>,
}

impl Terminal {
    fn state(&self) -> &State {
        self.play.state()
    }

    fn seat_of(&mut self, player: &str) -> usize {
        self.session.players.iter().position(|p| p == player).unwrap_or(0)
    }

    fn save(&mut self, path: &Path) -> Result<(), CliError> {
        self.play.fill_record(&mut self.session.game, &mut self.record)?;
        self.record.save(path).map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))
    }

    /// Plays a move, telling the hidden moves it reveals.
    fn play_move(&mut self, m: &LegalMove) -> Result<(), CliError> {
        for i in self.play.make(&mut self.session.game, m)? {
            let mover = self.play.steps()[i].mover.clone();
            println!("{mover} had chosen {}", self.play.name(&mut self.session.game, i)?);
        }
        if let Some(f) = self.record_file.clone() {
            self.save(&f)?;
        }
        Ok(())
    }

    fn draw(&mut self, viewer: &str) -> Result<(), CliError> {
        let state = self.state().clone();
        let board = self.session.game.display(&state, viewer)?;
        print!("\n{board}");
        if let Some(i) = self.play.ply().checked_sub(1) {
            match self.play.shown(&mut self.session.game, i, viewer)? {
                Shown::Chosen(p) => println!("last move: {p} has chosen"),
                Shown::Move(m) => println!("last move: {m}"),
            }
        }
        Ok(())
    }

    /// A computer player's move: the index of the move it chose among
    /// the legal ones.
    fn computer_move(&mut self, c: &Controller, legal: &[LegalMove]) -> Result<(usize, String), CliError> {
        let state = self.state().clone();
        let players = self.session.players.clone();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let choice = ai::choose(&mut self.session.game, &players, &state, c, self.rng.r#gen(), threads)?;
        let k = ai::position_of(&mut self.session.game, legal, &choice)?;
        Ok((k, choice.info))
    }

    /// The strongest computer player at the table that looks ahead, or
    /// the default one (`random` and `greedy` give no hints worth having).
    fn advisor(&self) -> Controller {
        self.controllers
            .iter()
            .filter(|c| c.looks_ahead())
            .max_by_key(|c| c.strength())
            .cloned()
            .unwrap_or(Controller { kind: Kind::Mcts(None), think: Some(ai::DEFAULT_THINK) })
    }
}

/// Who sees the board: the person to move, else the only person at the
/// table, else a spectator.
fn viewer_of(play: &Terminal, seat: Option<usize>) -> String {
    let humans: Vec<usize> = (0..play.controllers.len()).filter(|&i| play.controllers[i].is_human()).collect();
    match seat {
        Some(i) if play.controllers[i].is_human() => play.session.players[i].clone(),
        _ if humans.len() == 1 => play.session.players[humans[0]].clone(),
        _ => "spectator".to_string(),
    }
}

/// `play --web`: the web board's server with this game set up; the seats'
/// pages printed (each with its secret token).
fn web(session: &Session, controllers: &[Controller], seed: u64, addr: &str, a: &PlayArgs) -> Result<i32, CliError> {
    if a.resume.is_some() || a.record.is_some() || a.start.state.is_some() || a.start.after.is_some() {
        return Err(CliError(
            "--web starts a new game from the initial position: --resume, --record, --state and --after do not go with it (serve --records DIR keeps records)".into(),
        ));
    }
    let game = &session.game;
    let dir = game.path().parent().map(Path::to_path_buf).unwrap_or_default();
    let mut server = crate::server::Server::new(crate::server::Config { games_dir: dir, ..Default::default() });
    let bound = server.listen_http(addr).map_err(|e| CliError(format!("cannot listen on {addr}: {e}")))?;
    super::serve::exposed(bound, a.public)?;
    let options: serde_json::Map<String, serde_json::Value> =
        session.option_pairs.iter().map(|(k, v)| (k.clone(), serde_json::json!(v))).collect();
    let seats: serde_json::Map<String, serde_json::Value> =
        session.players.iter().zip(controllers).map(|(p, c)| (p.clone(), serde_json::json!(c.to_string()))).collect();
    let reply = server.request(serde_json::json!({
        "op": "new", "game": game.name, "options": options, "seed": seed, "seats": seats, "auto": true,
    }));
    if reply["ok"] != serde_json::json!(true) {
        return Err(CliError(format!("cannot set the game up: {}", reply["error"]["message"])));
    }
    let id = &reply["session"];
    println!("{} on the web board (Ctrl-C stops):", game.title);
    for (p, c) in session.players.iter().zip(controllers) {
        if c.is_human() {
            let token = reply["tokens"][p].as_str().unwrap_or_default();
            println!("  {p}: open http://{bound}/?session={id}&seat={p}&token={token}");
        } else {
            println!("  {p}: {c}");
        }
    }
    println!("  spectators: http://{bound}/?session={id}");
    let stop = server.stop_flag();
    ctrlc::set_handler(move || stop.store(true, std::sync::atomic::Ordering::SeqCst))
        .map_err(|e| CliError(format!("cannot handle Ctrl-C: {e}")))?;
    server.run().map_err(|e| CliError(format!("server: {e}")))?;
    Ok(0)
}

pub fn run(a: PlayArgs) -> Result<i32, CliError> {
    let mut session = open(&a.game)?;
    let resumed = match &a.resume {
        Some(path) => {
            let r = read_record(path)?;
            session.adopt(path, &r)?;
            Some(r)
        }
        None => None,
    };
    let seed = resumed.as_ref().map_or(a.seed, |r| r.seed);
    // Controllers: defaults, then the record's seats, then --seat.
    let mut controllers: Vec<Controller> = (0..session.players.len())
        .map(|i| Controller::parse(if i == 0 { "human" } else { "mcts" }, a.think))
        .collect::<Result<_, _>>()
        .map_err(CliError)?;
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
        controllers[i] = Controller::parse(spec, a.think).map_err(CliError)?;
    }
    for c in &controllers {
        c.serves(&session.game).map_err(CliError)?;
    }
    if let Some(addr) = &a.web {
        return web(&session, &controllers, seed, addr, &a);
    }
    // The start: the record's, or --state / the initial state, then --after.
    let start = match resumed.as_ref().and_then(|r| r.start.clone()) {
        Some(text) => {
            let path = a.resume.as_ref().expect("resumed from a file");
            session.game.parse_state(&text).map_err(|e| CliError(format!("{}: start: {e}", path.display())))?
        }
        None => session.start(&a.start, seed)?,
    };
    // The start is written down when the seed and options alone do not
    // give it back: a given state, moves played before, or a deal that
    // the players must not be able to change.
    let keep_start = session.game.hidden()
        || a.start.state.is_some()
        || a.start.after.is_some()
        || resumed.as_ref().is_some_and(|r| r.start.is_some());
    let record = Record {
        game: session.game.name.clone(),
        options: session.option_pairs.clone(),
        seed,
        seats: session.players.iter().cloned().zip(controllers.iter().map(|c| c.to_string())).collect(),
        start: keep_start.then(|| session.game.engine().term_text(start.term())),
        moves: Vec::new(),
        positions: Vec::new(),
    };
    let mut play = Terminal {
        session,
        controllers,
        play: Play::new(start).keeping_positions(),
        rng: ChaCha8Rng::seed_from_u64(seed),
        record,
        record_file: None,
    };
    if let Some(r) = resumed {
        let path = a.resume.as_ref().expect("resumed from a file");
        play.play
            .replay(&mut play.session.game, &r.moves)
            .map_err(|(line, e)| CliError(format!("{}:{line}: {e}", path.display())))?;
        println!("resumed {} after {} moves", path.display(), r.moves.len());
    }
    play.record_file = a.record.clone();
    if let Some(f) = play.record_file.clone() {
        play.save(&f)?;
    }
    let mut input = Input::new();
    // With secrets and several people at one screen, the board is hidden
    // between their turns.
    let humans = play.controllers.iter().filter(|c| c.is_human()).count();
    let screen_shared = humans >= 2 && play.session.game.hidden();
    let mut last_viewer = String::new();
    loop {
        let state = play.state().clone();
        let over = play.session.game.outcome(&state)?;
        if over.is_none() && play.session.game.chance(&state)? {
            let legal = play.session.game.legal_moves(&state)?;
            let k = ai::pick(&mut play.rng, legal.len())?;
            let mover = play.session.game.to_move(&state)?;
            match play.session.game.secrecy(&state, &mover)? {
                Secrecy::Open => println!("{mover} (chance) plays {}", legal[k].text),
                _ => println!("{mover} (chance) has moved"),
            }
            play.play_move(&legal[k])?;
            continue;
        }
        let mover = if over.is_none() { Some(play.session.game.to_move(&state)?) } else { None };
        let seat = mover.as_ref().map(|m| play.seat_of(m));
        let viewer = if over.is_some() && screen_shared { "spectator".to_string() } else { viewer_of(&play, seat) };
        if screen_shared && viewer != "spectator" && viewer != last_viewer {
            if std::io::stdout().is_terminal() {
                print!("\x1b[2J\x1b[H");
            }
            println!("\n{viewer}: your turn. Press Enter when only {viewer} can see the screen.");
            if input.line("").is_none() {
                println!("input ended; the game is not finished");
                return Ok(0);
            }
        }
        last_viewer = viewer.clone();
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
        if !controller.is_human() {
            let bar = super::progress(None, &format!("{mover} ({controller}) is thinking"));
            if let Some(b) = &bar {
                b.enable_steady_tick(std::time::Duration::from_millis(100));
            }
            let chosen = play.computer_move(&controller, &legal);
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let (k, _) = chosen?;
            match play.session.game.secrecy(&state, &mover)? {
                Secrecy::Open => println!("{mover} ({controller}) plays {}", legal[k].text),
                _ => println!("{mover} ({controller}) has chosen"),
            }
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
                    let (players, controllers) = (&play.session.players, &play.controllers);
                    let computer =
                        |m: &str| players.iter().position(|p| p == m).is_some_and(|i| !controllers[i].is_human());
                    let undone = play.play.undo(&mut play.session.game, computer)?;
                    if undone.is_empty() {
                        println!("nothing to undo");
                        continue;
                    }
                    if let Some(f) = play.record_file.clone() {
                        play.save(&f)?;
                    }
                    break;
                }
                "hint" => {
                    let c = play.advisor();
                    let (k, info) = play.computer_move(&c, &legal)?;
                    println!("hint ({c}): {} ({info})", legal[k].text);
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
                    Err(e) => {
                        println!("{e}");
                        // Why, from the rules, when the move is one of the
                        // game's (the explanation is a help: if it cannot
                        // be had, the refusal stands alone).
                        if matches!(e, crate::game::GameError::IllegalMove { .. }) {
                            let (game, options) = (&mut play.session.game, &play.session.options);
                            if let Ok(Verdict::Refused { whys, sampled }) = game.judge(options, &state, line) {
                                let file = game.spec().path().display().to_string();
                                print!("{}", explain::refusal(&whys, sampled, &mover, &file));
                            }
                        }
                        println!("(type `help` for the commands)");
                    }
                },
            }
        }
    }
}
