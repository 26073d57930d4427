//! A game session: the state, its history, the seats' controllers, and
//! every op on it. Owned by its thread; transports reach it through
//! [`Job`]s.

use super::guard::Budget;
use super::store::{self, Change, Status, Store, Stored, StoredMove, TokenHash};
use super::{Config, Failure, Job, Reply, fail, one, required, text_field};
use crate::ai::{self, Controller};
use crate::engine::{Limits, QueryError};
use crate::game::explain::{self, Verdict};
use crate::game::record::Record;
use crate::game::{Allowed, Game, GameError, LegalMove, Outcome, Play, Shown, list_games};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The computer player a hint asks when the seat to move has none.
const HINT: &str = "mcts:500";

/// Bytes a request of a session always gets (if the server has them),
/// even when its database has filled the session's share: enough to play
/// on.
const LEAST_ROOM: usize = 16 << 20;

/// Bytes a session holds beyond what its engine and history measure: the
/// compiled rules, its thread, its channels.
const OVERHEAD: usize = 4 << 20;

/// A game being played: owned by its thread.
pub(super) struct Session {
    game: Game,
    /// The game's options, as the rules read them.
    options: crate::engine::Tmpl,
    players: Vec<String>,
    seats: Vec<(String, Controller)>,
    /// The game in progress.
    play: Play,
    rng: ChaCha8Rng,
    /// Whether the session plays its computer seats' moves itself.
    auto: bool,
    /// Event streams of the pages following the session.
    followers: Vec<mpsc::Sender<Value>>,
    /// Each seat's secret, hashed: who shows it may play the seat and see
    /// what the seat sees. The creator of the session gets them all.
    tokens: Vec<(String, TokenHash)>,
    /// The tokens in clear, for the creator's reply only.
    fresh_tokens: Vec<(String, String)>,
    id: u64,
    /// Where the session is kept, and how many of its moves are there.
    store: Option<Arc<dyn Store>>,
    synced: usize,
    /// The game's name, its options and seed as asked.
    name: String,
    asked: Vec<(String, String)>,
    seed: u64,
    /// Where the session keeps its game record.
    record: Option<PathBuf>,
    config: Config,
    /// The server's memory, and the bytes of it the session holds between
    /// requests (given back when it ends).
    budget: Arc<Budget>,
    held: usize,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.budget.give(self.held);
    }
}

/// What a `new` request asks for (or a stored session gives).
pub(super) struct Opening {
    pub id: u64,
    pub store: Option<Arc<dyn Store>>,
    pub path: PathBuf,
    pub options: Vec<(String, String)>,
    pub seed: u64,
    pub seats: Vec<(String, Controller)>,
    /// The session plays its computer seats' moves itself.
    pub auto: bool,
    /// Where to keep the game record.
    pub record: Option<PathBuf>,
}

impl Session {
    /// Loads the game and sets it up, chance's first moves drawn, and
    /// keeps it in the store; `held` is the memory the session took from
    /// `budget` to load it (measured again once it has).
    pub(super) fn open(o: Opening, config: Config, budget: Arc<Budget>, held: usize) -> Result<Session, Failure> {
        let mut s = Session::load(o, config, budget, held)?;
        s.chance_moves()?;
        if let Some(store) = s.store.clone() {
            store.create(&s.stored()?).map_err(|e| fail("storage", format!("the session was not stored: {e}")))?;
            s.synced = s.play.ply();
        }
        s.remeasure(held);
        Ok(s)
    }

    /// Brings back a stored session: the game loaded anew, its moves
    /// replayed and the position reached checked against the stored one.
    pub(super) fn restore(
        stored: &Stored,
        o: Opening,
        config: Config,
        budget: Arc<Budget>,
        held: usize,
    ) -> Result<Session, Failure> {
        let mut s = Session::load(o, config, budget, held)?;
        s.tokens = stored.tokens.clone();
        s.fresh_tokens.clear();
        s.replay_stored(stored)?;
        s.remeasure(held);
        Ok(s)
    }

    /// Puts the play back to the stored one: from the start, every stored
    /// move replayed, the position checked, the random generator where it
    /// was.
    fn replay_stored(&mut self, stored: &Stored) -> Result<(), Failure> {
        let id = self.id;
        let cannot = |why: String| fail("storage", format!("session {id} cannot be brought back: {why}"));
        let start = self.play.start().clone();
        let play = if self.record.is_some() { Play::new(start).keeping_positions() } else { Play::new(start) };
        self.play = play;
        let moves: Vec<(String, usize)> =
            stored.moves.iter().enumerate().map(|(i, m)| (m.text.clone(), i + 1)).collect();
        self.play.replay(&mut self.game, &moves).map_err(|(ply, e)| {
            cannot(format!("its move {ply} `{}` is not legal under the rules now ({e})", moves[ply - 1].0))
        })?;
        let state = self.game.engine().term_text(self.play.state().term());
        if state != stored.state {
            return Err(cannot(format!(
                "replaying its moves under the rules now reaches another position than the stored one (the rules of {} changed?)",
                self.name
            )));
        }
        self.rng.set_word_pos(stored.rng);
        self.synced = self.play.ply();
        Ok(())
    }

    /// The session as the store keeps it.
    fn stored(&mut self) -> Result<Stored, Failure> {
        let moves = (0..self.play.ply()).map(|i| self.stored_move(i)).collect::<Result<_, _>>()?;
        let start = self.game.hidden().then(|| self.game.engine().term_text(self.play.start().term()));
        Ok(Stored {
            id: self.id,
            game: self.name.clone(),
            options: self.asked.clone(),
            seed: self.seed,
            seats: self.seats.iter().map(|(s, c)| (s.clone(), c.to_string())).collect(),
            auto: self.auto,
            hidden: self.game.hidden(),
            tokens: self.tokens.clone(),
            start,
            moves,
            state: self.game.engine().term_text(self.play.state().term()),
            rng: self.rng.get_word_pos(),
            status: Status::Open,
            outcome: self.game.outcome(self.play.state())?.map(|o| o.to_string()),
            updated: store::now(),
        })
    }

    fn stored_move(&mut self, i: usize) -> Result<StoredMove, Failure> {
        let text = self.play.name(&mut self.game, i)?.to_string();
        let step = &self.play.steps()[i];
        Ok(StoredMove { text, mover: step.mover.clone(), chance: step.chance })
    }

    /// Writes the moves made since the store last heard (and those taken
    /// back): when it returns `Ok`, they are stored.
    fn persist(&mut self) -> Result<(), Failure> {
        let Some(store) = self.store.clone() else { return Ok(()) };
        let from = self.synced.min(self.play.ply());
        let moves: Vec<StoredMove> = (from..self.play.ply()).map(|i| self.stored_move(i)).collect::<Result<_, _>>()?;
        let state = self.game.engine().term_text(self.play.state().term());
        let outcome = self.game.outcome(self.play.state())?.map(|o| o.to_string());
        let change =
            Change { from, moves: &moves, state: &state, rng: self.rng.get_word_pos(), outcome: outcome.as_deref() };
        store
            .save(self.id, &change)
            .map_err(|e| fail("storage", format!("the move was not stored, so it is not made: {e}")))?;
        self.synced = self.play.ply();
        Ok(())
    }

    /// After a change the store refused: the play put back to what the
    /// store holds. False when that cannot be done (the session must end;
    /// the store still has it).
    fn rewind(&mut self) -> bool {
        let Some(store) = self.store.clone() else { return true };
        match store.load(self.id) {
            Ok(Some(stored)) => self.replay_stored(&stored).is_ok(),
            _ => false,
        }
    }

    /// Marks the session closed or ended in the store.
    pub(super) fn end(&self, status: Status) -> Result<(), Failure> {
        match &self.store {
            Some(store) => store.end(self.id, status).map_err(|e| fail("storage", e.to_string())),
            None => Ok(()),
        }
    }

    /// Loads the game and sets it up at its start.
    fn load(o: Opening, config: Config, budget: Arc<Budget>, held: usize) -> Result<Session, Failure> {
        let Opening { id, store, path, options, seed, seats, auto, record } = o;
        let asked = options.clone();
        let options = &options[..];
        let (mut game, _) = crate::loader::load(&path)?;
        let limits = Limits { max_memory: config.session_memory, ..game.engine().limits().clone() };
        game.engine().set_limits(limits);
        let opts = game.options_term(options)?;
        let players = game.players(&opts)?;
        if let Some((s, _)) = seats.iter().find(|(s, _)| !players.contains(s)) {
            return Err(fail("bad_request", format!("no seat `{s}`; the seats are {}", players.join(", "))));
        }
        for (_, c) in &seats {
            c.serves(&game).map_err(|e| fail("bad_controller", e))?;
        }
        let state = game.initial_state(&opts, seed)?;
        // The positions' texts (chess: FEN) are kept for the record.
        let play = if record.is_some() { Play::new(state).keeping_positions() } else { Play::new(state) };
        // From the operating system's generator, never from the game's seed.
        let mut os = rand::thread_rng();
        let fresh_tokens: Vec<(String, String)> =
            players.iter().map(|p| (p.clone(), format!("{:032x}", os.r#gen::<u128>()))).collect();
        let tokens = fresh_tokens.iter().map(|(p, t)| (p.clone(), store::hash_token(t))).collect();
        let name = path.file_stem().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        Ok(Session {
            tokens,
            fresh_tokens,
            id,
            store,
            synced: 0,
            name,
            asked,
            seed,
            record,
            options: opts,
            game,
            players,
            seats,
            play,
            rng: ChaCha8Rng::seed_from_u64(seed),
            auto,
            followers: Vec::new(),
            config,
            budget,
            held,
        })
    }

    /// Bytes the session holds between requests: its engine's, its
    /// history's, and the rest about.
    fn measure(&mut self) -> usize {
        let history: usize = (self.play.steps().iter())
            .map(|s| {
                let terms = s.before.term().cells.len() + s.mv.0.cells.len();
                terms * size_of::<crate::engine::Cell>()
                    + s.text().map_or(0, str::len)
                    + s.mover.len()
                    + size_of::<crate::game::Step>()
            })
            .sum();
        self.game.engine().footprint() + history + OVERHEAD
    }

    /// After a request that held `taken` bytes of the budget: gives back
    /// the room a big query's stacks grew to and holds what the session
    /// measures now.
    fn remeasure(&mut self, taken: usize) {
        self.game.engine().trim();
        self.held = self.measure();
        self.budget.swap(taken, self.held);
    }

    /// Room for one request in the server's memory: the session's share
    /// (less what it holds already), at least [`LEAST_ROOM`]; the engine's
    /// data may take half of it (a growing stack doubles its buffer). A
    /// request that may leave data behind (a query: clauses, atoms) only
    /// gets room while one session's share stays free beside it, so that
    /// what sessions keep never starves the games in play. The room, or a
    /// `limit` error when the server is short of memory now.
    fn room(&mut self, time: Duration, keeps: bool) -> Result<usize, Failure> {
        let want = self.config.session_memory.saturating_sub(self.held).max(LEAST_ROOM);
        let leave = if keeps { self.config.session_memory } else { 0 };
        let Some(room) = self.budget.take(want, LEAST_ROOM, leave) else {
            return Err(fail(
                "limit",
                format!(
                    "the server is short of memory now ({} MB in use of {} MB); try again in a moment",
                    self.budget.in_use() >> 20,
                    self.budget.total >> 20
                ),
            )
            .retry_after(5));
        };
        let engine = self.game.engine();
        let max_memory = engine.memory_used() + room / 2;
        engine.set_limits(Limits { max_steps: None, timeout: Some(time), max_memory });
        Ok(room)
    }

    /// What `new` replies: the session, and its seats' tokens (the only
    /// time they are told).
    pub(super) fn summary(&mut self, id: u64) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session".into(), json!(id));
        m.insert("game".into(), json!(self.game.name));
        m.insert("title".into(), json!(self.game.title));
        m.insert("players".into(), json!(self.players));
        m.insert("seats".into(), self.seats_json());
        m.insert("hidden".into(), json!(self.game.hidden()));
        let tokens = std::mem::take(&mut self.fresh_tokens);
        m.insert("tokens".into(), json!(tokens.into_iter().map(|(s, t)| (s, json!(t))).collect::<Map<_, _>>()));
        match self.status() {
            Ok(s) => {
                m.insert("status".into(), Value::Object(s));
            }
            Err(f) => {
                m.insert("status".into(), json!({"error": f.message}));
            }
        }
        m
    }

    fn seats_json(&self) -> Value {
        json!(self.seats.iter().map(|(s, c)| (s.clone(), json!(c.to_string()))).collect::<Map<_, _>>())
    }

    /// Answers jobs until `close`, the channel's end, idleness, or a
    /// change the store refused that cannot be taken back.
    pub(super) fn serve(&mut self, rx: mpsc::Receiver<Job>) {
        self.computer_turns_within_memory();
        loop {
            let job = match rx.recv_timeout(self.config.idle) {
                Ok(j) => j,
                Err(_) => return,
            };
            let (req, reply_tx) = match job {
                Job::Request { req, reply } => (req, reply),
                Job::Follow(tx) => {
                    self.followers.push(tx);
                    continue;
                }
            };
            let op = req.get("op").and_then(Value::as_str).unwrap_or("").to_string();
            let ply = self.play.ply();
            let mut reply = self.within_memory(op == "query", |s| s.handle(&req));
            let changed = self.play.ply() != ply || (op == "undo" && reply.is_ok());
            // A move is acknowledged once it is stored; one the store
            // refuses is taken back.
            if changed && let Err(f) = self.persist() {
                reply = Err(f);
                if !self.rewind() {
                    let _ = reply_tx.send(reply);
                    return;
                }
            }
            let closed = op == "close" && reply.is_ok();
            let _ = reply_tx.send(reply);
            if closed {
                return;
            }
            if self.play.ply() != ply || op == "undo" {
                self.save_record();
                self.tell_move();
                self.computer_turns_within_memory();
            }
        }
    }

    /// Runs `f` (a request, or the computer seats' turns) within the
    /// room the server can give it (`keeps`: it may leave data behind);
    /// the session's holding is measured again after it.
    fn within_memory(&mut self, keeps: bool, f: impl FnOnce(&mut Session) -> Reply) -> Reply {
        // A computer move takes its time; anything else in the rules is
        // stopped well after.
        let time = Duration::from_secs_f64(self.config.max_think * 2.0 + 10.0);
        let room = self.room(time, keeps)?;
        let reply = f(self);
        self.remeasure(self.held + room);
        reply
    }

    /// The game's record so far.
    fn record(&mut self) -> Result<Record, GameError> {
        let seats = self.seats.iter().map(|(s, c)| (s.clone(), c.to_string())).collect();
        let start = self.game.hidden().then(|| self.game.engine().term_text(self.play.start().term()));
        let game = self.game.name.clone();
        let mut r = Record { game, options: self.asked.clone(), seed: self.seed, seats, start, ..Record::default() };
        self.play.fill_record(&mut self.game, &mut r)?;
        Ok(r)
    }

    /// Replaces the session's record with the moves so far (a failure is
    /// told to the followers; the game goes on).
    fn save_record(&mut self) {
        let Some(path) = self.record.clone() else { return };
        let saved = self.record().map_err(|e| e.to_string());
        if let Err(e) = saved.and_then(|r| r.save(&path).map_err(|e| e.to_string())) {
            let message = format!("cannot write the record {}: {e}", path.display());
            self.tell(json!({"event": "error", "code": "record", "message": message}));
        }
    }

    /// Tells every follower `event` (and forgets those that are gone).
    fn tell(&mut self, event: Value) {
        self.followers.retain(|f| f.send(event.clone()).is_ok());
    }

    fn tell_move(&mut self) {
        // The session names each move as it makes it: showing it cannot fail.
        let last = self.play.ply().checked_sub(1).and_then(|i| self.shown(i, "spectator").ok());
        let event = json!({"event": "move", "ply": self.play.ply(), "last_move": last});
        self.tell(event);
    }

    /// Move `i` as `viewer` may see it: its notation, or who made it while
    /// it is still hidden from the others.
    fn shown(&mut self, i: usize, viewer: &str) -> Result<String, GameError> {
        self.play.shown(&mut self.game, i, viewer).map(Shown::written)
    }

    fn computer_turns_within_memory(&mut self) {
        if !self.auto {
            return;
        }
        let turns = self.within_memory(false, |s| {
            s.computer_turns();
            Ok(Map::new())
        });
        if let Err(f) = turns {
            self.tell(json!({"event": "error", "code": f.code, "message": f.message}));
        }
    }

    /// With `auto`, the computer seats' moves, one after another, each
    /// announced before it is thought about and after it is played.
    fn computer_turns(&mut self) {
        if !self.auto {
            return;
        }
        loop {
            if !matches!(self.game.outcome(self.play.state()), Ok(None)) {
                return;
            }
            let Ok(mover) = self.game.to_move(self.play.state()) else { return };
            if !self.seats.iter().any(|(s, c)| *s == mover && !c.is_human()) {
                return;
            }
            self.tell(json!({"event": "thinking", "player": mover}));
            match self.ai(None).and_then(|_| self.persist()) {
                Ok(()) => {
                    self.save_record();
                    self.tell_move();
                }
                Err(f) if f.code == "storage" => {
                    self.tell(json!({"event": "error", "code": f.code, "message": f.message}));
                    self.rewind();
                    return;
                }
                Err(f) => {
                    self.tell(json!({"event": "error", "code": f.code, "message": f.message}));
                    return;
                }
            }
        }
    }

    fn handle(&mut self, req: &Map<String, Value>) -> Reply {
        match req.get("op").and_then(Value::as_str).unwrap_or("") {
            "moves" => {
                // Where hands are hidden, the moves name the mover's tiles.
                if self.game.hidden() {
                    self.seat_to_move(req)?;
                }
                self.moves()
            }
            "play" => {
                let typed = required(req, "move", "play")?;
                self.seat_to_move(req)?;
                let mut m = self.play(typed)?;
                // The position after it, for the page that played it, now:
                // before any computer seat's reply, which may take a while.
                if req.contains_key("viewer") {
                    let viewer = self.viewer(req)?;
                    m.insert("view".into(), Value::Object(self.view(&viewer)?));
                }
                Ok(m)
            }
            "explain" => {
                // Only the mover hears why: with hidden pieces, the
                // explanation is of the mover's own view.
                self.seat_to_move(req)?;
                self.explain(req)
            }
            "ai" => {
                self.seat_to_move(req)?;
                self.ai(text_field(req, "controller")?)
            }
            "hint" => {
                self.seat_to_move(req)?;
                self.hint(text_field(req, "controller")?)
            }
            "status" => self.status(),
            "display" => {
                let viewer = self.viewer(req)?;
                let text = self.game.display(self.play.state(), &viewer)?;
                Ok(one("text", json!(text)))
            }
            "view" => {
                let viewer = self.viewer(req)?;
                self.view(&viewer)
            }
            "undo" => {
                self.some_seat(req, "undo")?;
                self.undo()
            }
            "query" => {
                let goal = required(req, "goal", "query")?;
                // Only the session's players may change its database.
                let writes = self.players.iter().any(|p| self.shows_token(req, p).unwrap_or(false));
                self.query(goal, writes)
            }
            "close" => {
                self.some_seat(req, "close")?;
                self.end(Status::Closed)?;
                Ok(one("closed", json!(true)))
            }
            "history" => {
                let viewer = self.viewer(req)?;
                let history = self.play.history(&mut self.game, &viewer)?;
                Ok(one("history", json!(history)))
            }
            "record" => {
                // Hidden hands are in the record: the players see it once
                // the game is over.
                if self.game.hidden() {
                    self.some_seat(req, "record")?;
                    if self.game.outcome(self.play.state())?.is_none() {
                        return Err(fail(
                            "forbidden",
                            "the record of a game with hidden hands is shown once it is over",
                        ));
                    }
                }
                Ok(one("record", json!(self.record()?.to_text())))
            }
            other => Err(fail("bad_request", format!("unknown op `{other}`"))),
        }
    }

    /// Whether the request shows `seat`'s token.
    fn shows_token(&self, req: &Map<String, Value>, seat: &str) -> Result<bool, Failure> {
        let given = text_field(req, "token")?;
        Ok(given.is_some_and(|t| self.tokens.iter().any(|(s, h)| s == seat && store::token_matches(t, h))))
    }

    fn forbidden(seat: &str, what: &str) -> Failure {
        fail("forbidden", format!("{what} needs seat {seat}'s `token` (the creator of the session got every seat's)"))
    }

    /// The request may act for the seat to move.
    fn seat_to_move(&mut self, req: &Map<String, Value>) -> Result<(), Failure> {
        self.not_over()?;
        let mover = self.game.to_move(self.play.state())?;
        let op = req.get("op").and_then(Value::as_str).unwrap_or("");
        if self.shows_token(req, &mover)? { Ok(()) } else { Err(Self::forbidden(&mover, &format!("`{op}` now"))) }
    }

    /// The request shows some seat's token (a spectator may not undo or
    /// close).
    fn some_seat(&self, req: &Map<String, Value>, op: &str) -> Result<(), Failure> {
        for p in &self.players {
            if self.shows_token(req, p)? {
                return Ok(());
            }
        }
        Err(fail("forbidden", format!("`{op}` needs the `token` of a seat of the session")))
    }

    /// The request's `viewer`: a seat (with its token), or `spectator`
    /// (the default).
    fn viewer(&self, req: &Map<String, Value>) -> Result<String, Failure> {
        let viewer = text_field(req, "viewer")?.unwrap_or("spectator");
        if viewer == "spectator" {
            return Ok(viewer.to_string());
        }
        if !self.players.iter().any(|p| p == viewer) {
            return Err(fail(
                "bad_request",
                format!("no viewer `{viewer}`: use a seat ({}) or spectator", self.players.join(", ")),
            ));
        }
        if !self.shows_token(req, viewer)? {
            return Err(Self::forbidden(viewer, &format!("seeing the game as {viewer}")));
        }
        Ok(viewer.to_string())
    }

    pub(super) fn status(&mut self) -> Reply {
        let mut m = Map::new();
        let over = self.game.outcome(self.play.state())?;
        let to_move = if over.is_none() { Some(self.game.to_move(self.play.state())?) } else { None };
        m.insert("to_move".into(), json!(to_move));
        m.insert("game_over".into(), over.as_ref().map_or(Value::Null, Outcome::to_json));
        let scores = self.game.scores(self.play.state(), &self.players)?;
        // A score is a number when it is one, else its text.
        let score = |s: String| {
            s.parse::<i64>().map(Value::from).or_else(|_| s.parse::<f64>().map(Value::from)).unwrap_or(Value::String(s))
        };
        m.insert("scores".into(), Value::Object(scores.into_iter().map(|(p, s)| (p, score(s))).collect()));
        m.insert("ply".into(), json!(self.play.ply()));
        let last = self.play.ply().checked_sub(1).map(|i| self.shown(i, "spectator")).transpose()?;
        m.insert("last_move".into(), json!(last));
        Ok(m)
    }

    /// Everything a page draws for `viewer`: the status, the moves so far,
    /// the seats, the board (`view/3`, else `display/2`'s text), and, for
    /// the player to move (or anyone when nothing is hidden), the legal
    /// moves with their clicks.
    fn view(&mut self, viewer: &str) -> Reply {
        let mut m = self.status()?;
        m.insert("title".into(), json!(self.game.title));
        m.insert("viewer".into(), json!(viewer));
        m.insert("players".into(), json!(self.players));
        m.insert("seats".into(), self.seats_json());
        let history = self.play.history(&mut self.game, viewer)?;
        let last = self.play.ply().checked_sub(1);
        // The clicks of the last move, to mark it, unless it is hidden
        // from the viewer.
        let last_clicks = match last {
            Some(i) if self.play.hidden_mover(i).is_none_or(|m| m == viewer) => {
                let step = &self.play.steps()[i];
                self.game.move_clicks(&step.before, &step.mv).ok().flatten()
            }
            _ => None,
        };
        m.insert("last_move".into(), json!(history.last()));
        m.insert("history".into(), json!(history));
        m.insert("last_clicks".into(), json!(last_clicks));
        let board = self.game.view(self.play.state(), viewer)?;
        m.insert("board".into(), serde_json::to_value(&board).unwrap_or(Value::Null));
        if board.is_none() {
            m.insert("text".into(), json!(self.game.display(self.play.state(), viewer)?));
        }
        let to_move = m.get("to_move").and_then(Value::as_str).map(str::to_string);
        let mut moves = Vec::new();
        if let Some(mover) = to_move
            && (mover == viewer || !self.game.hidden())
        {
            for l in self.game.legal_moves(self.play.state())? {
                let clicks = self.game.move_clicks(self.play.state(), &l.mv)?;
                moves.push(json!({"text": l.text, "clicks": clicks}));
            }
        }
        m.insert("moves".into(), Value::Array(moves));
        Ok(m)
    }

    fn moves(&mut self) -> Reply {
        if let Some(o) = self.game.outcome(self.play.state())? {
            let mut m = one("moves", json!([]));
            m.insert("game_over".into(), o.to_json());
            return Ok(m);
        }
        let to_move = self.game.to_move(self.play.state())?;
        let legal = self.game.legal_moves(self.play.state())?;
        let mut m = one("to_move", json!(to_move));
        m.insert("moves".into(), json!(legal.iter().map(|l| l.text.clone()).collect::<Vec<_>>()));
        Ok(m)
    }

    fn not_over(&mut self) -> Result<(), Failure> {
        match self.game.outcome(self.play.state())? {
            Some(o) => Err(fail("game_over", format!("the game is over ({o})"))),
            None => Ok(()),
        }
    }

    fn play(&mut self, typed: &str) -> Reply {
        self.not_over()?;
        let legal = self.game.legal_moves(self.play.state())?;
        let k = match self.game.match_move(&legal, typed) {
            Ok(k) => k,
            Err(e @ GameError::IllegalMove { .. }) => {
                // Why, from the rules (for the mover: with hidden pieces,
                // on a re-deal and without values).
                let mut f = Failure::from(e);
                let mover = self.game.to_move(self.play.state())?;
                let state = self.play.state().clone();
                if let Ok(Verdict::Refused { whys, sampled }) = self.game.judge(&self.options, &state, typed) {
                    let file = self.game.path().file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
                    f.why = Some(explain::refusal(&whys, sampled, &mover, &file));
                }
                return Err(f);
            }
            Err(e) => return Err(e.into()),
        };
        self.apply(&legal[k])
    }

    /// What the rules say of a move typed (`move`) or clicked (`clicks`,
    /// the sites and hand items in order): legal, no move of the game, or
    /// refused and why.
    fn explain(&mut self, req: &Map<String, Value>) -> Reply {
        self.not_over()?;
        let state = self.play.state().clone();
        let verdict = match req.get("clicks") {
            Some(Value::Array(items)) if !items.is_empty() && items.len() <= 64 => {
                let clicks: Vec<String> = (items.iter())
                    .map(|c| c.as_str().filter(|c| c.len() <= 256).map(str::to_string))
                    .collect::<Option<_>>()
                    .ok_or_else(|| fail("bad_request", "`clicks` must be a list of site and hand ids (strings)"))?;
                match self.game.move_of_clicks(&self.options, &state, &clicks)? {
                    Some(mv) => self.game.judge_move(&state, &mv)?,
                    None => Verdict::NoSuchMove,
                }
            }
            Some(_) => return Err(fail("bad_request", "`clicks` must be a list of 1 to 64 site and hand ids")),
            None => {
                let typed = required(req, "move", "explain")?;
                self.game.judge(&self.options, &state, typed)?
            }
        };
        let mut m = Map::new();
        match verdict {
            Verdict::Legal(text) => {
                m.insert("verdict".into(), json!("legal"));
                m.insert("move".into(), json!(text));
            }
            Verdict::NoSuchMove => {
                m.insert("verdict".into(), json!("no_such_move"));
            }
            Verdict::Refused { whys, sampled } => {
                let mover = self.game.to_move(&state)?;
                let file = self.game.path().file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
                m.insert("verdict".into(), json!("refused"));
                m.insert("why".into(), json!(explain::refusal(&whys, sampled, &mover, &file)));
            }
        }
        Ok(m)
    }

    fn apply(&mut self, l: &LegalMove) -> Reply {
        let mover = self.game.to_move(self.play.state())?;
        self.play.make(&mut self.game, l)?;
        self.chance_moves()?;
        let mut m = one("move", json!(l.text));
        m.insert("player".into(), json!(mover));
        m.insert("status".into(), Value::Object(self.status()?));
        Ok(m)
    }

    /// Chance's moves (`chance/1`), drawn at once: no seat makes them.
    fn chance_moves(&mut self) -> Result<(), Failure> {
        self.play.chance_moves(&mut self.game, &mut self.rng)?;
        Ok(())
    }

    /// Takes back the last move; in a session that plays its computer
    /// seats, also the computer moves before it, back to a person's turn.
    fn undo(&mut self) -> Reply {
        let (seats, auto) = (&self.seats, self.auto);
        let computer = |mover: &str| seats.iter().any(|(s, c)| s == mover && !c.is_human());
        let steps = self.play.undo(&mut self.game, |mover| auto && computer(mover))?;
        self.synced = self.synced.min(self.play.ply());
        // A hidden choice stays hidden from whoever takes it back.
        let undone: Vec<String> = (steps.into_iter())
            .map(|u| if u.hidden { format!("({} has chosen)", u.step.mover) } else { u.text })
            .collect();
        if undone.is_empty() {
            return Err(fail("bad_request", "no move to take back"));
        }
        // Back to the start, where chance moves first: drawn again.
        self.chance_moves()?;
        let mut m = one("undone", json!(undone));
        m.insert("status".into(), Value::Object(self.status()?));
        Ok(m)
    }

    /// The computer's move for the player to move: `spec`'s, else the
    /// seat's controller, else (`or`) a default.
    fn computer_choice(
        &mut self,
        spec: Option<&str>,
        or: Option<&str>,
    ) -> Result<(LegalMove, Controller, String), Failure> {
        self.not_over()?;
        let mover = self.game.to_move(self.play.state())?;
        let seat = self.seats.iter().find(|(s, _)| *s == mover).map(|(_, c)| c.clone());
        let c = match (spec, seat, or) {
            (Some(s), _, _) => Controller::parse(s, None).map_err(|e| fail("bad_controller", e))?,
            (None, Some(c), _) if !c.is_human() || or.is_none() => c,
            (None, _, Some(d)) => Controller::parse(d, None).map_err(|e| fail("bad_controller", e))?,
            (None, _, None) => {
                return Err(fail(
                    "bad_request",
                    format!("`ai` needs a `controller` (no controller was given for seat {mover})"),
                ));
            }
        };
        if c.is_human() {
            return Err(fail("bad_controller", "`human` is not a computer player"));
        }
        // However big a search is asked for, it stops at the server's time.
        let max = self.config.max_think;
        let c = Controller { think: Some(c.think.map_or(max, |t| t.min(max))), ..c };
        let legal = self.game.legal_moves(self.play.state())?;
        let choice = ai::choose(&mut self.game, &self.players, self.play.state(), &c, self.rng.r#gen(), 1)?;
        let k = ai::position_of(&mut self.game, &legal, &choice)?;
        Ok((legal[k].clone(), c, choice.info))
    }

    fn ai(&mut self, spec: Option<&str>) -> Reply {
        let (l, c, info) = self.computer_choice(spec, None)?;
        let mut m = self.apply(&l)?;
        m.insert("controller".into(), json!(c.to_string()));
        m.insert("info".into(), json!(info));
        Ok(m)
    }

    /// A move the computer suggests for the player to move, not played.
    fn hint(&mut self, spec: Option<&str>) -> Reply {
        let (l, c, info) = self.computer_choice(spec, Some(HINT))?;
        let mut m = one("move", json!(l.text));
        m.insert("clicks".into(), json!(self.game.move_clicks(self.play.state(), &l.mv)?));
        m.insert("controller".into(), json!(c.to_string()));
        m.insert("info".into(), json!(info));
        Ok(m)
    }

    /// A goal against the game's rules, within the server's step and time
    /// limits; read-only unless `writes` (a seat's token was shown).
    fn query(&mut self, goal: &str, writes: bool) -> Reply {
        let engine = self.game.engine();
        let saved = engine.limits().clone();
        // What a query leaves behind (its database) never takes the
        // session past its share.
        engine.set_limits(Limits {
            max_steps: Some(self.config.query_steps),
            timeout: Some(self.config.query_time),
            max_memory: saved.max_memory.min(self.config.session_memory),
        });
        engine.set_read_only(!writes);
        let result = run_query(engine, goal, self.config.max_answers, self.config.max_reply);
        let engine = self.game.engine();
        engine.set_read_only(false);
        engine.set_limits(saved);
        match result {
            Err(f) if !writes && f.message.contains("No permission to call sandboxed") => Err(fail(
                "forbidden",
                format!("{}: a query without the `token` of a seat of the session may only read", f.message),
            )),
            r => r,
        }
    }
}

/// The games in `dir`, each with its title, seats and options (for a new
/// game's form); a game that does not load is listed with its error.
pub(super) fn games(dir: &Path) -> Value {
    let mut out = Vec::new();
    for path in list_games(dir) {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut g = match crate::loader::load(&path) {
            Ok((g, _)) => g,
            Err(e) => {
                out.push(json!({"name": name, "error": e.to_string()}));
                continue;
            }
        };
        let players = g.options_term(&[]).and_then(|o| g.players(&o)).unwrap_or_default();
        let options: Vec<Value> = g
            .options
            .iter()
            .map(|o| {
                let allowed = match &o.allowed {
                    Allowed::Between(l, h) => json!({"between": [l, h]}),
                    Allowed::OneOf(v) => json!({"oneof": v}),
                    Allowed::Any => json!("any"),
                    Allowed::Text => json!("text"),
                };
                json!({"name": o.name, "default": o.default, "allowed": allowed, "help": o.help})
            })
            .collect();
        out.push(json!({
            "name": name,
            "title": g.title,
            "description": g.description,
            "players": players,
            "options": options,
            "board": g.has_view(),
        }));
    }
    Value::Array(out)
}

fn run_query(engine: &mut crate::engine::Engine, goal: &str, max: usize, max_reply: usize) -> Reply {
    let goal = goal.trim().trim_end_matches('.').trim();
    let mut q = engine.query(goal).map_err(|e| match e {
        QueryError::Syntax(d) => fail("query_syntax", crate::syntax::render("goal", goal, std::slice::from_ref(&d))),
        e => fail("query_error", e.to_string()),
    })?;
    let mut answers = Vec::new();
    let mut output = String::new();
    let mut more = false;
    let mut size = 0;
    let too_big = || {
        fail(
            "limit",
            format!(
                "the reply would hold more than {max_reply} bytes of answers and output (the server's --max-reply)"
            ),
        )
    };
    loop {
        if answers.len() >= max {
            more = !q.is_done();
            break;
        }
        match q.next() {
            Some(Ok(a)) => {
                size += a.output.len() + a.bindings.iter().map(|b| b.name.len() + b.text.len()).sum::<usize>();
                if size > max_reply {
                    return Err(too_big());
                }
                output.push_str(&a.output);
                let b: Map<String, Value> = a.bindings.iter().map(|b| (b.name.clone(), json!(b.text))).collect();
                answers.push(Value::Object(b));
                if q.is_done() {
                    break;
                }
            }
            None => break,
            Some(Err(QueryError::Limit { message, .. })) => return Err(fail("limit", message)),
            Some(Err(QueryError::Halt(_))) => {
                return Err(fail("query_error", "halt/0 is not allowed in a served query"));
            }
            Some(Err(e)) => return Err(fail("query_error", e.to_string())),
        }
    }
    output.push_str(&q.take_output());
    if size + output.len() > max_reply {
        return Err(too_big());
    }
    let mut m = one("result", json!(if answers.is_empty() { "false" } else { "true" }));
    m.insert("answers".into(), Value::Array(answers));
    m.insert("more".into(), json!(more));
    if !output.is_empty() {
        m.insert("output".into(), json!(output));
    }
    Ok(m)
}
