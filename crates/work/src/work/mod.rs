//! Work units: `match`, `tournament`, `perft` and `bench` as jobs that
//! split into shards.
//!
//! A [`Job`] says everything a run depends on (the game and a digest of
//! its rules, the options, the seed, the command's own arguments). Shard
//! `I` of `N` does the items `i` with `i mod N == I`: game `g` of a match,
//! playout `i` of a bench, node `j` of a perft's frontier. An item's result
//! depends on the job and the item alone, so [`merge`] of the `N` shards'
//! results is exactly the result of the whole run, whatever `N` is, and
//! however many threads or machines ran them. The command line runs a
//! whole job as the one shard `0/1`; `--shard I/N` writes one
//! [`ShardFile`] as JSON, `tabula merge` combines them, and the Python
//! package runs the shards as Ray tasks.

mod analyze;
mod report;
mod selfplay;
mod tournament;

pub use analyze::{Variant, compared, metrics_of, plots, seating_of, text as metrics_text};
pub use report::{PERFT_HEADER, Timing, perft_line, report_json, report_text, wilson};
pub use selfplay::{MAX_ACTIONS, Positions, npy, run_selfplay};
pub use tournament::{check_size, pairings, ratings};

use crate::ai::{self, Controller};
use crate::game::{Game, GameError, Outcome, Play, Spec, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The format a shard file declares; `merge` refuses any other.
pub const FORMAT: &str = "tabula-shard/1";

/// An error of a work unit: what went wrong, in words a user can act on.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkError(pub String);

impl fmt::Display for WorkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkError {}

impl From<GameError> for WorkError {
    fn from(e: GameError) -> Self {
        WorkError(e.to_string())
    }
}

/// Shard `index` of `count` (counted from 0), written `I/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole job as one shard.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether item `i` is this shard's.
    pub fn owns(&self, i: u64) -> bool {
        i % self.count == self.index
    }

    /// How many of the items `0..total` are this shard's.
    pub fn len(&self, total: u64) -> u64 {
        if total <= self.index { 0 } else { (total - self.index).div_ceil(self.count) }
    }

    /// This shard's `k`-th item.
    pub fn item(&self, k: u64) -> u64 {
        self.index + k * self.count
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let help = "write I/N: shard I of N, I from 0 to N-1 (e.g. 0/4 ... 3/4)";
        let (i, n) = s.split_once('/').ok_or_else(|| format!("`{s}` is not a shard: {help}"))?;
        let (i, n) = match (i.trim().parse::<u64>(), n.trim().parse::<u64>()) {
            (Ok(i), Ok(n)) => (i, n),
            _ => return Err(format!("`{s}` is not a shard: {help}")),
        };
        if n == 0 {
            return Err(format!("`{s}` is not a shard: N must be at least 1"));
        }
        if i >= n {
            return Err(format!(
                "`{s}` is not a shard: I must be below N (the shards of {n} are 0/{n} to {}/{n})",
                n - 1
            ));
        }
        Ok(Shard { index: i, count: n })
    }
}

/// What a run does, and everything its result depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The game's name (its file name without the extension).
    pub game: String,
    /// A digest of the rules' text: shards of different rules never merge.
    pub digest: String,
    /// Every option of the game with its value (given or default).
    pub options: BTreeMap<String, String>,
    /// The seats, in turn order.
    pub players: Vec<String>,
    pub seed: u64,
    #[serde(flatten)]
    pub task: Task,
}

/// The command's own arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "lowercase")]
pub enum Task {
    /// Games between controllers (one per seat, in seat order), rotated a
    /// seat on after each game.
    Match { controllers: Vec<String>, think: Option<f64>, games: u64, max_plies: u32 },
    /// A round robin: every set of as many controllers as the game has
    /// seats plays `games` games, rotated a seat on after each.
    Tournament { controllers: Vec<String>, think: Option<f64>, games: u64, max_plies: u32 },
    /// Games between controllers (one per seat, rotated as in a match)
    /// whose positions are kept for learning; the first `explore` plies
    /// of each game draw their move from the search's visits.
    Selfplay { controllers: Vec<String>, think: Option<f64>, games: u64, max_plies: u32, explore: u32 },
    /// Leaves of the move tree for depths 1..depth, or at `depth` under
    /// each first move.
    Perft { depth: u32, start: Option<String>, divide: bool },
    /// Uniformly random playouts, playout `i` seeded with seed + i.
    Bench { playouts: u64, start: Option<String> },
    /// Games for a game's metrics: a controller a seat, in seat order (not
    /// rotated: the seats' results are the point); `decisive`, the search
    /// that judges each position, if decisive moves are wanted.
    Analyze { controllers: Vec<String>, think: Option<f64>, games: u64, max_plies: u32, decisive: Option<String> },
}

impl Job {
    /// A job for `game` as loaded, with the options given (the others take
    /// their defaults).
    pub fn new(game: &mut Game, given: &[(String, String)], seed: u64, task: Task) -> Result<Job, WorkError> {
        let options_term = game.options_term(given)?;
        let players = game.players(&options_term)?;
        let options = game
            .options
            .iter()
            .map(|o| {
                let v = given.iter().find(|(k, _)| *k == o.name).map_or_else(|| o.default.clone(), |(_, v)| v.clone());
                (o.name.clone(), v)
            })
            .collect();
        Ok(Job { game: game.name.clone(), digest: game.spec().digest(), options, players, seed, task })
    }

    fn option_pairs(&self) -> Vec<(String, String)> {
        self.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

pub use crate::game::spec::digest;

/// A controller's games in a match.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// The longest a move took, in seconds.
    pub slowest: f64,
}

/// Games between controllers, added up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Games {
    pub played: u64,
    pub plies: u64,
    /// Games still going at `max_plies` (counted as draws).
    pub unfinished: u64,
    /// One per controller, in the order of the job's controllers.
    pub controllers: Vec<Record>,
}

impl Games {
    fn new(controllers: usize) -> Games {
        Games { controllers: vec![Record::default(); controllers], ..Games::default() }
    }

    /// Counts a game; gives the winner's controller, if one won.
    fn record(&mut self, r: &Played, players: &[String]) -> Option<usize> {
        self.played += 1;
        self.plies += r.plies;
        for (c, t) in r.slowest.iter().enumerate() {
            self.controllers[c].slowest = self.controllers[c].slowest.max(*t);
        }
        let winner = match &r.outcome {
            Some(Outcome::Winner(p)) => players.iter().position(|q| q == p).map(|seat| r.by_seat[seat]),
            Some(Outcome::Draw) | None => None,
        };
        self.unfinished += u64::from(r.outcome.is_none());
        for &c in &r.by_seat {
            let rec = &mut self.controllers[c];
            match winner {
                Some(w) if w == c => rec.wins += 1,
                Some(_) => rec.losses += 1,
                None => rec.draws += 1,
            }
        }
        winner
    }

    fn add(&mut self, more: &Games) -> Result<(), String> {
        if self.controllers.len() != more.controllers.len() {
            return Err("its controllers are not the others'".into());
        }
        self.played += more.played;
        self.plies += more.plies;
        self.unfinished += more.unfinished;
        for (r, r2) in self.controllers.iter_mut().zip(&more.controllers) {
            r.wins += r2.wins;
            r.draws += r2.draws;
            r.losses += r2.losses;
            r.slowest = r.slowest.max(r2.slowest);
        }
        Ok(())
    }
}

/// What a shard (or a whole run) found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "lowercase")]
pub enum Part {
    Match(Games),
    /// A round robin: the games, and for each two controllers how often
    /// the first won a game the second lost (`ahead[i][j]`) and how often
    /// they drew (`drawn[i][j]`).
    Tournament {
        games: Games,
        ahead: Vec<Vec<u64>>,
        drawn: Vec<Vec<u64>>,
    },
    /// Self-play: the games, and how many positions they left.
    Selfplay {
        games: Games,
        positions: u64,
    },
    Perft {
        /// Leaves at depths 1..depth (empty with divide).
        nodes: Vec<u64>,
        /// Seconds each depth took (the sum over shards, once merged).
        seconds: Vec<f64>,
        /// With divide: each first move and the leaves under it.
        divide: Vec<(String, u64)>,
    },
    Bench {
        played: u64,
        plies: u64,
        draws: u64,
        /// Wins by seat, in seat order.
        wins: Vec<(String, u64)>,
        /// Seconds spent playing, loading left out (the sum over shards,
        /// once merged; 0 in files of earlier versions, which had only the
        /// shard's seconds).
        #[serde(default)]
        seconds: f64,
    },
    /// The games of an analysis, each whole, in the order of their
    /// numbers.
    Analyze {
        games: Vec<crate::game::metrics::Played>,
    },
}

/// One shard's result, as `--shard` writes it and `merge` reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    pub format: String,
    /// The tabula version that ran it.
    pub version: String,
    pub shard: Shard,
    pub job: Job,
    /// Seconds the shard took.
    pub seconds: f64,
    /// Stopped (Ctrl-C) before all its items were done.
    pub interrupted: bool,
    pub result: Part,
}

/// Hooks of a run: progress and a stop flag.
pub struct Hooks<'a> {
    /// Called as items finish (with how many finished).
    pub tick: &'a (dyn Fn(u64) + Sync),
    /// Set to stop handing out items (the items being done finish).
    pub stop: &'a AtomicBool,
    /// A perft depth finished: depth, leaves so far, seconds (whole runs
    /// print depths as they come).
    pub depth_done: &'a (dyn Fn(u32, u64, f64) + Sync),
    /// A bench for a time: a thread starts no item after this long from
    /// when its engine is loaded (not a stop).
    pub time: Option<Duration>,
}

impl Default for Hooks<'static> {
    fn default() -> Self {
        static NEVER: AtomicBool = AtomicBool::new(false);
        Hooks { tick: &|_| {}, stop: &NEVER, depth_done: &|_, _, _| {}, time: None }
    }
}

/// One shard of a job to run: the rules (which must be the job's), the
/// job, the shard, how many threads (each loads its own engine) and the
/// hooks.
pub struct Unit<'a> {
    pub spec: &'a Spec,
    pub job: &'a Job,
    pub shard: Shard,
    pub threads: usize,
    pub hooks: &'a Hooks<'a>,
}

/// Runs a shard of a job: its shard file.
pub fn run(u: &Unit) -> Result<ShardFile, WorkError> {
    let (job, shard) = (u.job, u.shard);
    check_rules(u.spec, job)?;
    let started = Instant::now();
    let (result, interrupted) = match &job.task {
        Task::Match { .. } => run_match(u)?,
        Task::Tournament { .. } => tournament::run_tournament(u)?,
        Task::Perft { .. } => run_perft(u)?,
        Task::Bench { .. } => run_bench(u)?,
        Task::Analyze { .. } => analyze::run_analyze(u)?,
        Task::Selfplay { .. } => {
            let (file, _positions) = run_selfplay(u)?;
            (file.result, file.interrupted)
        }
    };
    Ok(ShardFile::new(job, shard, started, interrupted, result))
}

impl ShardFile {
    /// What shard `shard` of `job`, started at `started`, found.
    fn new(job: &Job, shard: Shard, started: Instant, interrupted: bool, result: Part) -> ShardFile {
        ShardFile {
            format: FORMAT.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            shard,
            job: job.clone(),
            seconds: started.elapsed().as_secs_f64(),
            interrupted,
            result,
        }
    }
}

/// That `spec` holds the job's rules.
fn check_rules(spec: &Spec, job: &Job) -> Result<(), WorkError> {
    if spec.digest() != job.digest {
        return Err(WorkError(format!(
            "the rules in {} are not the rules of this job (digest {}, the job's {}): every shard must run the same file",
            spec.path().display(),
            spec.digest(),
            job.digest
        )));
    }
    Ok(())
}

/// Does `work` on the items `index(0)`, `index(1)`, ... (`total` of them)
/// on `threads` threads. A thread loads its own engine and makes its
/// context with `setup` once. Items are handed out in order until all are
/// done, one fails, `hooks.stop` is set or `hooks.time` passes; every
/// item handed out is finished, so the results (in order) are those of the
/// first items, and fewer than `total` only after a stop.
fn run_items<C, T: Send>(
    u: &Unit,
    items: (usize, &(dyn Fn(usize) -> u64 + Sync)),
    setup: &(dyn Fn(&mut Game) -> Result<C, WorkError> + Sync),
    work: &(dyn Fn(&mut Game, &C, u64) -> Result<T, WorkError> + Sync),
) -> Result<Vec<T>, WorkError> {
    Ok(run_items_timed(u, items, setup, work)?.0)
}

/// [`run_items`], with the seconds spent on the items: from the first
/// thread ready (its engine loaded, its context made) to the last item's
/// end, so a rate leaves out the loading.
fn run_items_timed<C, T: Send>(
    u: &Unit,
    (total, index): (usize, &(dyn Fn(usize) -> u64 + Sync)),
    setup: &(dyn Fn(&mut Game) -> Result<C, WorkError> + Sync),
    work: &(dyn Fn(&mut Game, &C, u64) -> Result<T, WorkError> + Sync),
) -> Result<(Vec<T>, f64), WorkError> {
    let span: Mutex<Option<(Instant, Instant)>> = Mutex::new(None);
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<WorkError>> = Mutex::new(None);
    let (spec, hooks) = (u.spec, u.hooks);
    let threads = u.threads.clamp(1, total.max(1));
    let fail = |e: WorkError| {
        let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(e);
        next.store(total, Ordering::SeqCst);
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let worker = || -> Result<(), WorkError> {
                let (mut game, _) = spec.build()?;
                let context = setup(&mut game)?;
                let ready = Instant::now();
                let deadline = hooks.time.map(|t| ready + t);
                let mark = |end: Instant| {
                    let mut span = span.lock().unwrap_or_else(|p| p.into_inner());
                    let (first, last) = span.get_or_insert((ready, end));
                    *first = (*first).min(ready);
                    *last = (*last).max(end);
                };
                loop {
                    if hooks.stop.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d) {
                        mark(Instant::now());
                        return Ok(());
                    }
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= total {
                        mark(Instant::now());
                        return Ok(());
                    }
                    let r = work(&mut game, &context, index(k))?;
                    let mut slots = slots.lock().map_err(|_| WorkError("a worker thread failed".into()))?;
                    if slots.len() <= k {
                        slots.resize_with(k + 1, || None);
                    }
                    slots[k] = Some(r);
                    drop(slots);
                    (hooks.tick)(1);
                }
            };
            let spawned = std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(scope, move || {
                if let Err(e) = worker() {
                    fail(e);
                }
            });
            if let Err(e) = spawned {
                fail(WorkError(format!("cannot start a worker thread: {e}")));
            }
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let slots = slots.into_inner().map_err(|_| WorkError("a worker thread failed".into()))?;
    let span = span.into_inner().unwrap_or_else(|p| p.into_inner());
    let seconds = span.map_or(0.0, |(first, last)| (last - first).as_secs_f64());
    Ok((slots.into_iter().map_while(|s| s).collect(), seconds))
}

/// One game of a match: the controller (by index) in each seat, the
/// outcome (`None`: still going at the ply limit), its length, and each
/// controller's slowest move.
struct Played {
    by_seat: Vec<usize>,
    outcome: Option<Outcome>,
    plies: u64,
    slowest: Vec<f64>,
}

/// A seat's turn in a game of a job, as [`play_seated`] hands it over.
struct Turn<'a> {
    state: &'a State,
    legal: &'a [crate::game::LegalMove],
    seat: usize,
    ply: u32,
    /// The controller's choice, and its index in `legal`.
    choice: &'a ai::Choice,
    chosen: usize,
}

/// Plays game `g` of a job with controller `by_seat[i]` in seat `i`; the
/// game's setup and the controllers' choices are seeded with seed + g,
/// chance's moves drawn with the same seed. At each seat's turn `decide`
/// sees the controller's choice and says which legal move is made (a
/// match makes the choice; self-play records the position, and may
/// explore with the game's random numbers).
fn play_seated(
    game: &mut Game,
    (options, job): (&crate::engine::Tmpl, &Job),
    (controllers, by_seat): (&[Controller], Vec<usize>),
    max_plies: u32,
    g: u64,
    mut decide: impl FnMut(&mut Game, Turn, &mut ChaCha8Rng) -> Result<usize, WorkError>,
) -> Result<Played, WorkError> {
    let players = &job.players;
    let game_seed = job.seed.wrapping_add(g);
    let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
    let mut play = Play::new(game.initial_state(options, game_seed)?);
    let mut slowest = vec![0.0; controllers.len()];
    for ply in 0..max_plies {
        if let Some(o) = game.outcome(play.state())? {
            return Ok(Played { by_seat, outcome: Some(o), plies: ply as u64, slowest });
        }
        let legal = game.legal_moves(play.state())?;
        let Some(seat) = ai::seat_to_move(game, players, play.state())? else {
            play.make(game, &legal[ai::pick(&mut rng, legal.len())?])?;
            continue;
        };
        let c = by_seat[seat];
        let started = Instant::now();
        let choice = ai::choose(game, players, play.state(), &controllers[c], rng.r#gen(), 1)?;
        slowest[c] = f64::max(slowest[c], started.elapsed().as_secs_f64());
        let chosen = ai::position_of(game, &legal, &choice)?;
        let turn = Turn { state: play.state(), legal: &legal, seat, ply, choice: &choice, chosen };
        let k = decide(game, turn, &mut rng)?;
        play.make(game, &legal[k])?;
    }
    let outcome = game.outcome(play.state())?;
    Ok(Played { by_seat, outcome, plies: max_plies as u64, slowest })
}

/// The controllers of a match or tournament, none of them human.
fn computer_players(specs: &[String], think: Option<f64>) -> Result<Vec<Controller>, WorkError> {
    let parsed: Vec<Controller> =
        specs.iter().map(|c| Controller::parse(c, think)).collect::<Result<_, _>>().map_err(WorkError)?;
    if let Some(c) = parsed.iter().find(|c| c.is_human()) {
        return Err(WorkError(format!("games between computer players only; `{c}` is not one")));
    }
    Ok(parsed)
}

/// The controllers of a match or self-play, one for each seat.
fn seated_players(job: &Job, specs: &[String], think: Option<f64>) -> Result<Vec<Controller>, WorkError> {
    if specs.len() != job.players.len() {
        return Err(WorkError(format!(
            "{} needs a controller for each of its {} seats, not {}",
            job.game,
            job.players.len(),
            specs.len()
        )));
    }
    computer_players(specs, think)
}

fn run_match(u: &Unit) -> Result<(Part, bool), WorkError> {
    let (job, shard) = (u.job, u.shard);
    let Task::Match { controllers, think, games, max_plies } = &job.task else { unreachable!("a match job") };
    let parsed = seated_players(job, controllers, *think)?;
    let total = shard.len(*games) as usize;
    let pairs = job.option_pairs();
    let setup = |game: &mut Game| Ok(game.options_term(&pairs)?);
    // Controller (i + g) mod n takes seat i.
    let n = job.players.len();
    let work = |game: &mut Game, options: &crate::engine::Tmpl, g: u64| {
        let by_seat = (0..n).map(|i| (i + g as usize) % n).collect();
        play_seated(game, (options, job), (&parsed, by_seat), *max_plies, g, |_, turn, _| Ok(turn.chosen))
    };
    let done = run_items(u, (total, &|k| shard.item(k as u64)), &setup, &work)?;
    let interrupted = done.len() < total;
    let mut games = Games::new(parsed.len());
    for r in &done {
        games.record(r, &job.players);
    }
    Ok((Part::Match(games), interrupted))
}

/// The start of a perft or bench: the state written in the job, or the
/// initial state dealt with the seed.
fn start_state(game: &mut Game, job: &Job, start: &Option<String>) -> Result<State, WorkError> {
    Ok(match start {
        Some(text) => game.parse_state(text)?,
        None => {
            let options = game.options_term(&job.option_pairs())?;
            game.initial_state(&options, job.seed)?
        }
    })
}

fn run_bench(u: &Unit) -> Result<(Part, bool), WorkError> {
    let (job, shard) = (u.job, u.shard);
    let Task::Bench { playouts, start } = &job.task else { unreachable!("a bench job") };
    // A bench for a time plays until the deadline (its playouts are then
    // u64::MAX, and it is not a shard).
    let total = usize::try_from(shard.len(*playouts)).unwrap_or(usize::MAX);
    let pairs = job.option_pairs();
    let setup = |game: &mut Game| -> Result<_, WorkError> {
        let options = game.options_term(&pairs)?;
        let from = match start {
            Some(_) => Some(start_state(game, job, start)?),
            None => None,
        };
        Ok((options, from))
    };
    // From the initial state each playout is dealt anew with its own seed.
    let work = |game: &mut Game, (options, from): &(crate::engine::Tmpl, Option<State>), i: u64| {
        Ok(game.seeded_playout(options, from.as_ref(), job.seed.wrapping_add(i))?)
    };
    let (done, seconds) = run_items_timed(u, (total, &|k| shard.item(k as u64)), &setup, &work)?;
    let interrupted = done.len() < total && u.hooks.stop.load(Ordering::SeqCst);
    let mut tally = crate::game::Tally::new(&job.players);
    for (len, outcome) in done {
        tally.record(len, outcome);
    }
    let crate::game::Tally { played, plies, draws, wins } = tally;
    Ok((Part::Bench { played, plies, draws, wins, seconds }, interrupted))
}

/// The positions `split` plies deep, each with the index of the first move
/// that leads to it, and the number of leaves at each depth up to `split`
/// with the seconds each level took. Finished games stop there (they have
/// no leaves deeper).
type Frontier = (Vec<(usize, State)>, Vec<u64>, Vec<f64>);

fn frontier(game: &mut Game, root: &State, split: u32) -> Result<Frontier, WorkError> {
    let mut clock = Instant::now();
    let mut level: Vec<(usize, State)> = Vec::new();
    if game.outcome(root)?.is_none() {
        for (k, (_, s)) in game.successors(root)?.into_iter().enumerate() {
            level.push((k, s));
        }
    }
    let (mut counts, mut seconds) = (vec![level.len() as u64], vec![clock.elapsed().as_secs_f64()]);
    for _ in 1..split {
        clock = Instant::now();
        let mut deeper = Vec::new();
        for (k, s) in &level {
            if game.outcome(s)?.is_none() {
                deeper.extend(game.successors(s)?.into_iter().map(|(_, t)| (*k, t)));
            }
        }
        level = deeper;
        counts.push(level.len() as u64);
        seconds.push(clock.elapsed().as_secs_f64());
    }
    Ok((level, counts, seconds))
}

/// Frontier nodes wanted per shard: enough that the shards' subtrees even
/// out and each shard's threads have work.
const NODES_PER_SHARD: u64 = 32;

fn run_perft(u: &Unit) -> Result<(Part, bool), WorkError> {
    let (job, shard) = (u.job, u.shard);
    let Task::Perft { depth, start, divide } = &job.task else { unreachable!("a perft job") };
    let depth = *depth;
    if depth == 0 {
        return Err(WorkError("perft counts depths from 1: give a depth of at least 1".into()));
    }
    let (mut game, _) = u.spec.build()?;
    let root = start_state(&mut game, job, start)?;
    let first_moves: Vec<String> = if *divide && game.outcome(&root)?.is_none() {
        game.legal_moves(&root)?.into_iter().map(|m| m.text).collect()
    } else {
        Vec::new()
    };
    // The split depth depends on the job and the number of shards only, so
    // that every shard cuts the tree at the same place.
    let mut split = 1;
    let (mut nodes, mut counts, mut level_seconds) = frontier(&mut game, &root, split)?;
    while split < depth && (nodes.len() as u64) < NODES_PER_SHARD * shard.count && !nodes.is_empty() {
        split += 1;
        (nodes, counts, level_seconds) = frontier(&mut game, &root, split)?;
    }
    let texts: Vec<(usize, String)> = nodes.iter().map(|(k, s)| (*k, game.engine().term_text(s.term()))).collect();
    drop(nodes);
    let owned: Vec<u64> = (0..texts.len() as u64).filter(|&j| shard.owns(j)).collect();
    let setup = |_: &mut Game| Ok(());
    let started = Instant::now();
    if *divide {
        let rest = depth - split;
        let work = |game: &mut Game, _: &(), j: u64| {
            let state = game.parse_state(&texts[j as usize].1)?;
            Ok(game.perft(&state, rest)?)
        };
        let done = run_items(u, (owned.len(), &|k| owned[k]), &setup, &work)?;
        let interrupted = done.len() < owned.len();
        let mut per_move: Vec<(String, u64)> = first_moves.into_iter().map(|m| (m, 0)).collect();
        for (j, n) in owned.iter().zip(done) {
            per_move[texts[*j as usize].0].1 += n;
        }
        let secs = started.elapsed().as_secs_f64();
        return Ok((Part::Perft { nodes: Vec::new(), seconds: vec![secs], divide: per_move }, interrupted));
    }
    // Depths up to the split are counted by shard 0 alone; deeper ones
    // are the sum over each shard's nodes. Items run depth by depth.
    let mut nodes_by_depth = vec![0u64; depth as usize];
    let mut seconds = vec![0.0; depth as usize];
    for d in 1..=split.min(depth) {
        let i = d as usize - 1;
        if shard.index == 0 {
            (nodes_by_depth[i], seconds[i]) = (counts[i], level_seconds[i]);
        }
        (u.hooks.depth_done)(d, nodes_by_depth[i], seconds[i]);
    }
    let deeper: Vec<u32> = (split + 1..=depth).collect();
    let width = texts.len() as u64;
    // Item k is node owned[k mod |owned|] at depth deeper[k / |owned|].
    let total = deeper.len() * owned.len();
    let index = |k: usize| (k / owned.len()) as u64 * width + owned[k % owned.len()];
    // Depth d is reported when its last item is done and every shallower
    // depth has been reported.
    let pending: Mutex<(Vec<usize>, Vec<u64>, usize, Instant)> =
        Mutex::new((vec![owned.len(); deeper.len()], vec![0; deeper.len()], 0, started));
    let reported: Mutex<Vec<(u64, f64)>> = Mutex::new(Vec::new());
    let work = |game: &mut Game, _: &(), item: u64| -> Result<u64, WorkError> {
        let (e, j) = ((item / width) as usize, (item % width) as usize);
        let state = game.parse_state(&texts[j].1)?;
        let n = game.perft(&state, deeper[e] - split)?;
        let mut p = pending.lock().map_err(|_| WorkError("a worker thread failed".into()))?;
        p.0[e] -= 1;
        p.1[e] += n;
        while p.2 < deeper.len() && p.0[p.2] == 0 {
            let secs = p.3.elapsed().as_secs_f64();
            p.3 = Instant::now();
            let (d, total) = (deeper[p.2], p.1[p.2]);
            (u.hooks.depth_done)(d, total, secs);
            if let Ok(mut r) = reported.lock() {
                r.push((total, secs));
            }
            p.2 += 1;
        }
        Ok(n)
    };
    let done = if total == 0 { Vec::new() } else { run_items(u, (total, &index), &setup, &work)? };
    let interrupted = done.len() < total;
    let reported = reported.into_inner().unwrap_or_default();
    for (e, d) in deeper.iter().enumerate() {
        let (n, secs) = reported.get(e).copied().unwrap_or((0, 0.0));
        if owned.is_empty() {
            // This shard has no nodes: its deeper depths are all 0.
            (u.hooks.depth_done)(*d, 0, 0.0);
        }
        nodes_by_depth[*d as usize - 1] = n;
        seconds[*d as usize - 1] = secs;
    }
    Ok((Part::Perft { nodes: nodes_by_depth, seconds, divide: Vec::new() }, interrupted))
}

/// Reads a shard file's JSON, naming the file in any error.
pub fn read_shard(name: &str, text: &str) -> Result<ShardFile, WorkError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| WorkError(format!("{name}: not a shard file: {e}")))?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        Some(other) => {
            return Err(WorkError(format!("{name}: a shard file of format `{other}`; this tabula reads `{FORMAT}`")));
        }
        None => return Err(WorkError(format!("{name}: not a shard file (no \"format\": \"{FORMAT}\")"))),
    }
    serde_json::from_value(value).map_err(|e| WorkError(format!("{name}: a broken shard file: {e}")))
}

/// The result of a whole run, from all its shards.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub job: Job,
    pub shards: u64,
    /// The shards' seconds added up.
    pub seconds: f64,
    pub result: Part,
}

/// Combines the `N` shards of one job (each exactly once) into the result
/// of the whole run. `names` name the shards in errors.
pub fn merge(shards: &[(String, ShardFile)]) -> Result<Merged, WorkError> {
    let Some((first_name, first)) = shards.first() else {
        return Err(WorkError("no shard files to merge".into()));
    };
    let count = first.shard.count;
    let mut seen: Vec<Option<&str>> = vec![None; count.min(1 << 20) as usize];
    if count > 1 << 20 {
        return Err(WorkError(format!("{first_name}: {count} shards is more than this tabula merges (1,048,576)")));
    }
    for (name, s) in shards {
        if s.job != first.job {
            return Err(WorkError(format!(
                "{name} is a shard of another run than {first_name}: {}",
                job_difference(&first.job, &s.job)
            )));
        }
        if s.shard.count != count {
            return Err(WorkError(format!(
                "{name} is shard {} but {first_name} is shard {}: a run is split one way only",
                s.shard, first.shard
            )));
        }
        if s.interrupted {
            return Err(WorkError(format!("{name}: shard {} was interrupted before its end; run it again", s.shard)));
        }
        let slot = &mut seen[s.shard.index as usize];
        if let Some(other) = slot {
            return Err(WorkError(format!("shard {} is given twice: {other} and {name}", s.shard)));
        }
        *slot = Some(name);
    }
    let missing: Vec<String> =
        seen.iter().enumerate().filter(|(_, s)| s.is_none()).map(|(i, _)| format!("{i}/{count}")).collect();
    if !missing.is_empty() {
        let shown = missing.iter().take(10).cloned().collect::<Vec<_>>().join(", ");
        let more = if missing.len() > 10 { format!(" and {} more", missing.len() - 10) } else { String::new() };
        return Err(WorkError(format!("missing shard{} {shown}{more}", if missing.len() == 1 { "" } else { "s" })));
    }
    let mut ordered: Vec<&ShardFile> = shards.iter().map(|(_, s)| s).collect();
    ordered.sort_by_key(|s| s.shard.index);
    let mut result = ordered[0].result.clone();
    for s in &ordered[1..] {
        add(&mut result, &s.result).map_err(|e| WorkError(format!("shard {}: {e}", s.shard)))?;
    }
    Ok(Merged { job: first.job.clone(), shards: count, seconds: ordered.iter().map(|s| s.seconds).sum(), result })
}

/// The first difference between two jobs, in words.
fn job_difference(a: &Job, b: &Job) -> String {
    let (ja, jb) = (serde_json::to_value(a).unwrap_or_default(), serde_json::to_value(b).unwrap_or_default());
    if let (Some(ma), Some(mb)) = (ja.as_object(), jb.as_object()) {
        for (k, va) in ma {
            let vb = mb.get(k).cloned().unwrap_or(serde_json::Value::Null);
            if *va != vb {
                return format!("its {k} is {vb}, not {va}");
            }
        }
    }
    "its job differs".to_string()
}

/// Adds a shard's result to a running total.
fn add(total: &mut Part, more: &Part) -> Result<(), String> {
    match (total, more) {
        (Part::Match(games), Part::Match(more)) => games.add(more),
        (Part::Selfplay { games, positions }, Part::Selfplay { games: g2, positions: p2 }) => {
            *positions += p2;
            games.add(g2)
        }
        (Part::Tournament { games, ahead, drawn }, Part::Tournament { games: g2, ahead: a2, drawn: d2 })
            if ahead.len() == a2.len() && drawn.len() == d2.len() =>
        {
            games.add(g2)?;
            for (row, row2) in ahead.iter_mut().chain(drawn.iter_mut()).zip(a2.iter().chain(d2)) {
                if row.len() != row2.len() {
                    return Err("its table is not the others'".into());
                }
                for (x, y) in row.iter_mut().zip(row2) {
                    *x += y;
                }
            }
            Ok(())
        }
        (Part::Perft { nodes, seconds, divide }, Part::Perft { nodes: n2, seconds: s2, divide: d2 })
            if nodes.len() == n2.len() && seconds.len() == s2.len() && divide.len() == d2.len() =>
        {
            for (n, m) in nodes.iter_mut().zip(n2) {
                *n += m;
            }
            for (s, t) in seconds.iter_mut().zip(s2) {
                *s += t;
            }
            for ((mv, n), (mv2, m)) in divide.iter_mut().zip(d2) {
                if mv != mv2 {
                    return Err(format!("its first moves differ ({mv2} where another has {mv})"));
                }
                *n += m;
            }
            Ok(())
        }
        (
            Part::Bench { played, plies, draws, wins, seconds },
            Part::Bench { played: p2, plies: l2, draws: d2, wins: w2, seconds: s2 },
        ) => {
            *played += p2;
            *seconds += s2;
            *plies += l2;
            *draws += d2;
            for (p, n) in w2 {
                match wins.iter_mut().find(|(q, _)| q == p) {
                    Some(r) => r.1 += n,
                    None => wins.push((p.clone(), *n)),
                }
            }
            Ok(())
        }
        (Part::Analyze { games }, Part::Analyze { games: more }) => {
            games.extend(more.iter().cloned());
            games.sort_by_key(|p| p.game);
            Ok(())
        }
        _ => Err("its result does not have the shape of the others'".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_written_i_of_n_from_zero() {
        assert_eq!("2/5".parse::<Shard>(), Ok(Shard { index: 2, count: 5 }));
        assert_eq!(" 0 / 1 ".parse::<Shard>(), Ok(Shard::WHOLE));
        for bad in ["3/2", "2/2", "1/0", "x/2", "2", "-1/3", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("is not a shard"), "{bad}: {e}");
        }
        assert!("3/2".parse::<Shard>().unwrap_err().contains("0/2 to 1/2"));
    }

    #[test]
    fn every_item_belongs_to_exactly_one_shard() {
        let n = 7;
        let mut all: Vec<u64> = (0..n)
            .flat_map(|i| {
                let s = Shard { index: i, count: n };
                (0..s.len(50)).map(move |k| s.item(k))
            })
            .collect();
        all.sort();
        assert_eq!(all, (0..50).collect::<Vec<_>>());
        assert_eq!(Shard { index: 3, count: 4 }.len(3), 0);
        assert_eq!(Shard { index: 2, count: 4 }.len(3), 1);
    }
}
