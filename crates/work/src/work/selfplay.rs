//! Self-play data: the positions of games between computer players, for
//! learning. For each move of each game: the mover's observation, the
//! legal actions (a mask), the search's visit distribution over the
//! actions (the chosen move alone for controllers that do not search by
//! visits), the mover's return at the end of the game (1 to the
//! winner, -1/(n-1) to the others, 0 on a draw or a game cut off), and
//! the return the search expected of the move it chose (on the same
//! scale; the final return where the controller estimates none): a value
//! target with far less noise than one game's result.
//!
//! Game `g` is seeded with seed + g as in a match, so self-play splits
//! into shards like any job; each shard writes its positions as NumPy
//! `.npy` files, which `numpy.load` reads directly.

use super::{Games, Job, Part, ShardFile, Task, Unit, WorkError, run_items};
use crate::ai;
use crate::game::{ActionSpace, Game, Observer, Outcome};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The most actions self-play stores a dense mask and policy for.
pub const MAX_ACTIONS: usize = 1 << 16;

/// The positions of some games, as flat arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Positions {
    /// Numbers per observation, and actions per mask and policy.
    pub observation_len: usize,
    pub actions: usize,
    pub observations: Vec<f32>,
    pub masks: Vec<u8>,
    pub policies: Vec<f32>,
    pub returns: Vec<f32>,
    /// The search's expected return (`NaN` until the game's end fills in
    /// the final return for a controller that estimates none).
    pub values: Vec<f32>,
    /// The mover's seat, the game's number, the ply.
    pub seats: Vec<u8>,
    pub games: Vec<u32>,
    pub plies: Vec<u32>,
}

impl Positions {
    pub fn len(&self) -> usize {
        self.returns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.returns.is_empty()
    }

    fn append(&mut self, mut more: Positions) {
        self.observations.append(&mut more.observations);
        self.masks.append(&mut more.masks);
        self.policies.append(&mut more.policies);
        self.returns.append(&mut more.returns);
        self.values.append(&mut more.values);
        self.seats.append(&mut more.seats);
        self.games.append(&mut more.games);
        self.plies.append(&mut more.plies);
    }

    /// The arrays as `.npy` files: (name, bytes).
    pub fn npy_files(&self) -> Vec<(&'static str, Vec<u8>)> {
        let n = self.len();
        let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let u32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        vec![
            ("observations", npy("<f4", &[n, self.observation_len], &f32s(&self.observations))),
            ("masks", npy("|u1", &[n, self.actions], &self.masks)),
            ("policies", npy("<f4", &[n, self.actions], &f32s(&self.policies))),
            ("returns", npy("<f4", &[n], &f32s(&self.returns))),
            ("values", npy("<f4", &[n], &f32s(&self.values))),
            ("seats", npy("|u1", &[n], &self.seats)),
            ("games", npy("<u4", &[n], &u32s(&self.games))),
            ("plies", npy("<u4", &[n], &u32s(&self.plies))),
        ]
    }

    /// Writes the `.npy` files into `dir` as `PREFIX-NAME.npy`; gives their
    /// paths.
    pub fn write(&self, dir: &Path, prefix: &str) -> Result<Vec<PathBuf>, WorkError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| WorkError(format!("cannot make the folder {}: {e}", dir.display())))?;
        let mut written = Vec::new();
        for (name, bytes) in self.npy_files() {
            let path = dir.join(format!("{prefix}-{name}.npy"));
            std::fs::write(&path, bytes).map_err(|e| WorkError(format!("cannot write {}: {e}", path.display())))?;
            written.push(path);
        }
        Ok(written)
    }
}

/// An array in NumPy's `.npy` format (version 1.0): `descr` is the
/// element type (`<f4`, `|u1`, `<u4`), `data` its bytes in C order.
pub fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // Magic (6), version (2), header length (2), then the header padded
    // with spaces and ended by a newline to a multiple of 64 bytes.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// What a worker thread keeps: the options, how to observe, the actions.
struct Context {
    options: crate::engine::Tmpl,
    observer: Observer,
    space: ActionSpace,
}

/// Plays self-play game `g` and gives its positions and its record.
fn play(
    game: &mut Game,
    cx: &Context,
    job: &Job,
    controllers: &[ai::Controller],
    (max_plies, explore): (u32, u32),
    g: u64,
) -> Result<(Positions, super::Played), WorkError> {
    let players = &job.players;
    let n = players.len();
    let by_seat: Vec<usize> = (0..n).map(|i| (i + g as usize) % n).collect();
    let mut pos = Positions { observation_len: cx.observer.len(), actions: cx.space.len(), ..Positions::default() };
    // Chance's moves are no one's decision: a position is recorded at each
    // seat's turn only.
    let record = |game: &mut Game, turn: super::Turn, rng: &mut ChaCha8Rng| -> Result<usize, WorkError> {
        let mover = &players[turn.seat];
        pos.observations.extend(game.observation_with_mover(&cx.observer, turn.state, mover, Some(mover))?);
        let mut mask = vec![0u8; cx.space.len()];
        let mut action_of = Vec::with_capacity(turn.legal.len());
        for m in turn.legal {
            let a = game.action_of(&cx.space, &m.mv)?.ok_or_else(|| {
                WorkError(format!("{}: the legal move {} has no action in the game's action space", job.game, m.text))
            })?;
            mask[a] = 1;
            action_of.push(a);
        }
        // The policy: the visits of the search, or the move it chose.
        let mut policy = vec![0f32; cx.space.len()];
        let total: f64 = turn.choice.visits.iter().map(|(_, v)| v).sum();
        if total > 0.0 {
            for (m, v) in &turn.choice.visits {
                if let Some(k) = turn.legal.iter().position(|l| l.mv == *m) {
                    policy[action_of[k]] += (v / total) as f32;
                }
            }
        } else {
            policy[action_of[turn.chosen]] = 1.0;
        }
        // The first plies explore: a move drawn by the policy.
        let k = if turn.ply < explore && total > 0.0 {
            let mut x = rng.gen_range(0.0..1.0_f32);
            let mut pick = turn.chosen;
            for (k, &a) in action_of.iter().enumerate() {
                x -= policy[a];
                if x < 0.0 && policy[a] > 0.0 {
                    pick = k;
                    break;
                }
            }
            pick
        } else {
            turn.chosen
        };
        // The reward in [0, 1] on the returns' scale: 1 stays 1, 0 becomes
        // -1/(n-1), a draw's 1/n becomes 0.
        let value = turn.choice.value.map_or(f32::NAN, |r| {
            if n > 1 { ((r * n as f64 - 1.0) / (n - 1) as f64) as f32 } else { (2.0 * r - 1.0) as f32 }
        });
        pos.values.push(value);
        pos.masks.extend(mask);
        pos.policies.extend(policy);
        pos.seats.push(turn.seat as u8);
        pos.games.push(g as u32);
        pos.plies.push(turn.ply);
        Ok(k)
    };
    let played = super::play_seated(game, (&cx.options, job), (controllers, by_seat), max_plies, g, record)?;
    // Each position's return, for its mover.
    let loss = if n > 1 { -1.0 / (n - 1) as f32 } else { -1.0 };
    pos.returns = pos
        .seats
        .iter()
        .map(|&s| match &played.outcome {
            Some(Outcome::Winner(w)) if *w == players[s as usize] => 1.0,
            Some(Outcome::Winner(_)) => loss,
            _ => 0.0,
        })
        .collect();
    for (v, r) in pos.values.iter_mut().zip(&pos.returns) {
        if v.is_nan() {
            *v = *r;
        }
    }
    Ok((pos, played))
}

/// Runs shard `shard` of a self-play job: its shard file, and the
/// positions of its games in order.
pub fn run_selfplay(u: &Unit) -> Result<(ShardFile, Positions), WorkError> {
    let (job, shard) = (u.job, u.shard);
    let Task::Selfplay { controllers, think, games, max_plies, explore } = &job.task else {
        return Err(WorkError("not a self-play job".into()));
    };
    super::check_rules(u.spec, job)?;
    let parsed = super::seated_players(job, controllers, *think)?;
    let started = Instant::now();
    let total = shard.len(*games) as usize;
    let pairs = job.option_pairs();
    let setup = |game: &mut Game| -> Result<Context, WorkError> {
        let options = game.options_term(&pairs)?;
        let space = game.action_space(&options)?.ok_or_else(|| {
            WorkError(format!(
                "{} does not number its moves: self-play stores actions, so the game needs action_space/2 \
                 (or action_count/2 and action/3)",
                job.game
            ))
        })?;
        if space.len() > MAX_ACTIONS {
            return Err(WorkError(format!(
                "{} has {} actions; self-play stores a mask and a policy of every action for each position, \
                 up to {MAX_ACTIONS} actions",
                job.game,
                space.len()
            )));
        }
        let observer = game.observer(&options, job.seed)?;
        Ok(Context { options, observer, space })
    };
    let work = |game: &mut Game, cx: &Context, g: u64| play(game, cx, job, &parsed, (*max_plies, *explore), g);
    let done = run_items(u, (total, &|k| shard.item(k as u64)), &setup, &work)?;
    let interrupted = done.len() < total;
    let mut record = Games::new(parsed.len());
    let mut positions: Option<Positions> = None;
    for (pos, played) in done {
        record.record(&played, &job.players);
        match &mut positions {
            Some(all) => all.append(pos),
            None => positions = Some(pos),
        }
    }
    let positions = positions.unwrap_or_default();
    let result = Part::Selfplay { games: record, positions: positions.len() as u64 };
    Ok((ShardFile::new(job, shard, started, interrupted, result), positions))
}

#[cfg(test)]
mod tests {
    use super::npy;

    #[test]
    fn npy_headers_are_padded_to_64_bytes() {
        let a = npy("<f4", &[2, 3], &[0; 24]);
        assert_eq!(&a[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([a[8], a[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let header = std::str::from_utf8(&a[10..10 + hlen]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), "{header}");
        assert!(header.ends_with('\n'));
        assert_eq!(a.len(), 10 + hlen + 24);
        let b = npy("|u1", &[5], &[1, 2, 3, 4, 5]);
        assert!(std::str::from_utf8(&b[10..]).unwrap().contains("'shape': (5,)"));
    }
}
