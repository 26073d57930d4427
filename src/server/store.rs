//! Where the server keeps its games so that they outlive it: every
//! session, its options and seats, every move with chance's draws, and
//! its seats' tokens (hashed). The server writes a change before it
//! acknowledges it, and a server started on the same store brings back
//! the sessions that were in play.
//!
//! [`Store`] is the whole interface the server uses; [`Sqlite`] is the
//! one there is: an embedded SQLite database in WAL mode, written with
//! `synchronous=FULL` (a commit is on the disk before the move is
//! acknowledged, power loss included) and locked to one server at a time.

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The layout this version writes; a database with a larger one was made
/// by a newer tabula and is refused.
const SCHEMA: i64 = 1;

const CREATE: &str = "
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    auto INTEGER NOT NULL,
    hidden INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    start TEXT,
    state TEXT NOT NULL,
    rng TEXT NOT NULL,
    outcome TEXT,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL
);
CREATE TABLE tokens (
    session INTEGER NOT NULL REFERENCES sessions(id),
    seat TEXT NOT NULL,
    hash BLOB NOT NULL,
    PRIMARY KEY (session, seat)
) WITHOUT ROWID;
CREATE TABLE moves (
    session INTEGER NOT NULL REFERENCES sessions(id),
    ply INTEGER NOT NULL,
    text TEXT NOT NULL,
    mover TEXT NOT NULL,
    chance INTEGER NOT NULL,
    PRIMARY KEY (session, ply)
) WITHOUT ROWID;
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO meta VALUES ('starts', 0);
CREATE INDEX sessions_open ON sessions(status) WHERE status = 'open';
";

/// A store that cannot do what was asked: what a person reads.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

/// A seat's token as it is kept: its SHA-256. Tokens are 128 random bits,
/// so the hash cannot be turned back into one by trying.
pub type TokenHash = [u8; 32];

pub fn hash_token(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether `token` is the one `hash` was made from, compared in time that
/// does not depend on where they differ.
pub fn token_matches(token: &str, hash: &TokenHash) -> bool {
    let h = hash_token(token);
    h.iter().zip(hash).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
}

/// How a session stands in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// In play: a server started on the store brings it back, and one
    /// that let it go (idle, or to make room) brings it back when asked.
    Open,
    /// Closed by a seat: its record and history can still be read.
    Closed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Closed => "closed",
        }
    }

    fn parse(s: &str) -> Status {
        if s == "open" { Status::Open } else { Status::Closed }
    }
}

/// One move as the store keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredMove {
    /// In the game's notation (replayed by it).
    pub text: String,
    pub mover: String,
    /// Chance's move (drawn by the server).
    pub chance: bool,
}

/// A session as the store keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    pub id: u64,
    /// The game's name (its file in the games folder).
    pub game: String,
    pub options: Vec<(String, String)>,
    pub seed: u64,
    /// Each seat's controller, as written.
    pub seats: Vec<(String, String)>,
    /// The session plays its computer seats' moves itself.
    pub auto: bool,
    /// The game hides moves or pieces from some players.
    pub hidden: bool,
    pub tokens: Vec<(String, TokenHash)>,
    /// The starting position as a term, where the record needs it (a deal
    /// of hidden hands).
    pub start: Option<String>,
    pub moves: Vec<StoredMove>,
    /// The position after the last move, as a term (checked on replay).
    pub state: String,
    /// Where the session's random generator is (its word position).
    pub rng: u128,
    pub status: Status,
    /// The outcome, once the game is over.
    pub outcome: Option<String>,
    /// When it last changed (seconds since 1970).
    pub updated: i64,
}

/// What a session changed since it was last written: the moves from ply
/// `from` on are replaced by `moves`.
pub struct Change<'a> {
    pub from: usize,
    pub moves: &'a [StoredMove],
    pub state: &'a str,
    pub rng: u128,
    pub outcome: Option<&'a str>,
}

/// What the server keeps its games in.
pub trait Store: Send + Sync {
    /// The largest session number ever given (0 for none).
    fn last_session(&self) -> Result<u64, StoreError>;
    /// Keeps a new session (its moves, if any, too).
    fn create(&self, s: &Stored) -> Result<(), StoreError>;
    /// Writes a session's change at once: when it returns, the change is
    /// stored.
    fn save(&self, id: u64, change: &Change) -> Result<(), StoreError>;
    /// Marks a session closed.
    fn end(&self, id: u64, status: Status) -> Result<(), StoreError>;
    /// The sessions in play, oldest first.
    fn in_play(&self) -> Result<Vec<Stored>, StoreError>;
    /// One session, whatever its status.
    fn load(&self, id: u64) -> Result<Option<Stored>, StoreError>;
    /// Every session's number, oldest first.
    fn sessions(&self) -> Result<Vec<u64>, StoreError>;
}

/// The SQLite store.
pub struct Sqlite {
    path: PathBuf,
    conn: Mutex<Connection>,
}

/// Seconds since 1970.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

impl Sqlite {
    /// Opens (or makes) the database at `path` for one server: refused if
    /// another process holds it, if a newer tabula made it, if it is
    /// damaged, or if it cannot be written.
    pub fn open(path: &Path) -> Result<Sqlite, StoreError> {
        let at = path.display();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError(format!("cannot make the folder {} for the database: {e}", dir.display())))?;
        }
        // SQLite opens a file it cannot write for reading, and says so only
        // at the first write, as an I/O error: found here, in words.
        let unwritable = |e: std::io::Error| {
            StoreError(format!("{at} cannot be written ({e}): give the server a database it may write"))
        };
        if path.exists() {
            std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(unwritable)?;
        }
        let mut probe = path.as_os_str().to_owned();
        probe.push("-probe");
        std::fs::write(&probe, b"").and_then(|()| std::fs::remove_file(&probe)).map_err(unwritable)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| StoreError(format!("cannot open {at}: {e}")))?;
        let what = |e: rusqlite::Error| StoreError(describe(path, &e));
        // One server at a time: the lock is taken by the first write below
        // and held while the connection lives (the WAL index then lives in
        // the process, not in a shared file).
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE").map_err(what)?;
        conn.busy_timeout(std::time::Duration::from_millis(500)).map_err(what)?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(what)?;
        if version > SCHEMA {
            return Err(StoreError(format!(
                "{at} was written by a newer tabula (database layout {version}; this one knows up to {SCHEMA}): use that version, or another --db"
            )));
        }
        let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)).map_err(what)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError(format!("{at}: cannot use write-ahead logging (journal mode stays {mode})")));
        }
        conn.pragma_update(None, "synchronous", "FULL").map_err(what)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(what)?;
        let check: String = conn.pragma_query_value(None, "quick_check", |r| r.get(0)).map_err(what)?;
        if check != "ok" {
            return Err(StoreError(format!(
                "{at} is damaged ({check}); keep a copy, then recover what it holds with `sqlite3 {at} .recover`, or start on another --db"
            )));
        }
        if version == 0 {
            let tables: i64 = conn
                .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))
                .map_err(what)?;
            if tables > 0 {
                return Err(StoreError(format!("{at} is a database of something else than tabula's server")));
            }
            let batch = format!("BEGIN IMMEDIATE; {CREATE} PRAGMA user_version = {SCHEMA}; COMMIT;");
            conn.execute_batch(&batch).map_err(what)?;
        }
        // A write now (the servers started on it, counted): takes the lock,
        // and finds a file that cannot be written before any player is
        // told a move is stored.
        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'starts'", []).map_err(what)?;
        Ok(Sqlite { path: path.to_path_buf(), conn: Mutex::new(conn) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many servers have started on this database, this one included.
    pub fn starts(&self) -> Result<u64, StoreError> {
        let n: i64 = (self.conn().query_row("SELECT value FROM meta WHERE key = 'starts'", [], |r| r.get(0)))
            .map_err(|e| self.error(e))?;
        Ok(n as u64)
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn error(&self, e: rusqlite::Error) -> StoreError {
        StoreError(describe(&self.path, &e))
    }

    fn read(&self, conn: &Connection, id: u64) -> rusqlite::Result<Option<Stored>> {
        let row = conn
            .query_row(
                "SELECT game, options, seed, seats, auto, hidden, status, start, state, rng, outcome, updated FROM sessions WHERE id = ?1",
                [id as i64],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, bool>(4)?,
                        r.get::<_, bool>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, Option<String>>(7)?,
                        r.get::<_, String>(8)?,
                        r.get::<_, String>(9)?,
                        r.get::<_, Option<String>>(10)?,
                        r.get::<_, i64>(11)?,
                    ))
                },
            )
            .optional()?;
        let Some((game, options, seed, seats, auto, hidden, status, start, state, rng, outcome, updated)) = row else {
            return Ok(None);
        };
        let bad = |what: &str| {
            rusqlite::Error::FromSqlConversionFailure(
                0,
                rusqlite::types::Type::Text,
                format!("session {id}: {what}").into(),
            )
        };
        let options: Vec<(String, String)> = serde_json::from_str(&options).map_err(|_| bad("options"))?;
        let seats: Vec<(String, String)> = serde_json::from_str(&seats).map_err(|_| bad("seats"))?;
        let rng: u128 = rng.parse().map_err(|_| bad("random generator"))?;
        let mut tokens = Vec::new();
        let mut q = conn.prepare_cached("SELECT seat, hash FROM tokens WHERE session = ?1 ORDER BY seat")?;
        for t in q.query_map([id as i64], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?)))? {
            let (seat, hash) = t?;
            tokens.push((seat, hash.try_into().map_err(|_| bad("token"))?));
        }
        let mut moves = Vec::new();
        let mut q =
            conn.prepare_cached("SELECT ply, text, mover, chance FROM moves WHERE session = ?1 ORDER BY ply")?;
        for m in q.query_map([id as i64], |r| {
            Ok((r.get::<_, i64>(0)?, StoredMove { text: r.get(1)?, mover: r.get(2)?, chance: r.get(3)? }))
        })? {
            let (ply, m) = m?;
            if ply != moves.len() as i64 {
                return Err(bad(&format!("move {} is missing", moves.len() + 1)));
            }
            moves.push(m);
        }
        Ok(Some(Stored {
            id,
            game,
            options,
            seed: seed as u64,
            seats,
            auto,
            hidden,
            tokens,
            start,
            moves,
            state,
            rng,
            status: Status::parse(&status),
            outcome,
            updated,
        }))
    }
}

/// `e` for a person: what it means for the server.
fn describe(path: &Path, e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as C;
    let at = path.display();
    match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => {
            format!(
                "{at} is in use by another process (another tabula serve?): one server per database; give this one another --db, or --no-db"
            )
        }
        Some(C::ReadOnly) => format!("{at} cannot be written ({e}): give the server a database it may write"),
        Some(C::DiskFull) => format!("{at}: the disk is full ({e})"),
        Some(C::NotADatabase | C::DatabaseCorrupt) => {
            format!("{at} is damaged or not a database ({e}); keep a copy and start on another --db")
        }
        Some(C::CannotOpen) => format!("cannot open {at} ({e})"),
        _ => format!("{at}: {e}"),
    }
}

fn insert_moves(tx: &rusqlite::Transaction, id: u64, from: usize, moves: &[StoredMove]) -> rusqlite::Result<()> {
    let mut q =
        tx.prepare_cached("INSERT INTO moves (session, ply, text, mover, chance) VALUES (?1, ?2, ?3, ?4, ?5)")?;
    for (i, m) in moves.iter().enumerate() {
        q.execute(params![id as i64, (from + i) as i64, m.text, m.mover, m.chance])?;
    }
    Ok(())
}

impl Store for Sqlite {
    fn last_session(&self) -> Result<u64, StoreError> {
        let n: Option<i64> =
            self.conn().query_row("SELECT max(id) FROM sessions", [], |r| r.get(0)).map_err(|e| self.error(e))?;
        Ok(n.unwrap_or(0) as u64)
    }

    fn create(&self, s: &Stored) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let mut write = || -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            let options = serde_json::to_string(&s.options).unwrap_or_default();
            let seats = serde_json::to_string(&s.seats).unwrap_or_default();
            tx.execute(
                "INSERT INTO sessions (id, game, options, seed, seats, auto, hidden, status, start, state, rng, outcome, created, updated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)",
                params![
                    s.id as i64,
                    s.game,
                    options,
                    s.seed as i64,
                    seats,
                    s.auto,
                    s.hidden,
                    s.status.as_str(),
                    s.start,
                    s.state,
                    s.rng.to_string(),
                    s.outcome,
                    s.updated
                ],
            )?;
            for (seat, hash) in &s.tokens {
                tx.execute(
                    "INSERT INTO tokens (session, seat, hash) VALUES (?1, ?2, ?3)",
                    params![s.id as i64, seat, &hash[..]],
                )?;
            }
            insert_moves(&tx, s.id, 0, &s.moves)?;
            tx.commit()
        };
        let r = write();
        drop(conn);
        r.map_err(|e| self.error(e))
    }

    fn save(&self, id: u64, c: &Change) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let mut write = || -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            tx.prepare_cached("DELETE FROM moves WHERE session = ?1 AND ply >= ?2")?
                .execute(params![id as i64, c.from as i64])?;
            insert_moves(&tx, id, c.from, c.moves)?;
            let n = tx
                .prepare_cached("UPDATE sessions SET state = ?2, rng = ?3, outcome = ?4, updated = ?5 WHERE id = ?1")?
                .execute(params![id as i64, c.state, c.rng.to_string(), c.outcome, now()])?;
            if n != 1 {
                return Err(rusqlite::Error::QueryReturnedNoRows);
            }
            tx.commit()
        };
        let r = write();
        drop(conn);
        r.map_err(|e| self.error(e))
    }

    fn end(&self, id: u64, status: Status) -> Result<(), StoreError> {
        let conn = self.conn();
        let r = conn.execute(
            "UPDATE sessions SET status = ?2, updated = ?3 WHERE id = ?1 AND status = 'open'",
            params![id as i64, status.as_str(), now()],
        );
        drop(conn);
        r.map(drop).map_err(|e| self.error(e))
    }

    fn in_play(&self) -> Result<Vec<Stored>, StoreError> {
        let conn = self.conn();
        let read = || -> rusqlite::Result<Vec<Stored>> {
            let ids: Vec<i64> = conn
                .prepare("SELECT id FROM sessions WHERE status = 'open' ORDER BY id")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            ids.into_iter().filter_map(|id| self.read(&conn, id as u64).transpose()).collect()
        };
        let r = read();
        drop(conn);
        r.map_err(|e| self.error(e))
    }

    fn load(&self, id: u64) -> Result<Option<Stored>, StoreError> {
        let conn = self.conn();
        let r = self.read(&conn, id);
        drop(conn);
        r.map_err(|e| self.error(e))
    }

    fn sessions(&self) -> Result<Vec<u64>, StoreError> {
        let conn = self.conn();
        let read = || -> rusqlite::Result<Vec<u64>> {
            conn.prepare("SELECT id FROM sessions ORDER BY id")?
                .query_map([], |r| r.get::<_, i64>(0).map(|i| i as u64))?
                .collect()
        };
        let r = read();
        drop(conn);
        r.map_err(|e| self.error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: u64) -> Stored {
        Stored {
            id,
            game: "tictactoe".into(),
            options: vec![("size".into(), "3".into())],
            seed: u64::MAX,
            seats: vec![("x".into(), "human".into()), ("o".into(), "mcts:100".into())],
            auto: true,
            hidden: false,
            tokens: vec![("o".into(), hash_token("b")), ("x".into(), hash_token("a"))],
            start: None,
            moves: vec![StoredMove { text: "b2".into(), mover: "x".into(), chance: false }],
            state: "s(x)".into(),
            rng: u128::MAX - 3,
            status: Status::Open,
            outcome: None,
            updated: 1_800_000_000,
        }
    }

    fn mv(text: &str) -> StoredMove {
        StoredMove { text: text.into(), mover: "o".into(), chance: text.starts_with('c') }
    }

    #[test]
    fn a_session_reads_back_as_written_and_its_moves_replace_from_a_ply() {
        let dir = std::env::temp_dir().join(format!("tabula-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("a.db");
        let store = Sqlite::open(&path).unwrap();
        assert_eq!(store.last_session().unwrap(), 0);
        store.create(&session(7)).unwrap();
        assert_eq!(store.load(7).unwrap(), Some(session(7)));
        let moves = [mv("a1"), mv("c3")];
        store.save(7, &Change { from: 1, moves: &moves, state: "s(y)", rng: 5, outcome: None }).unwrap();
        store.save(7, &Change { from: 2, moves: &[mv("a3")], state: "s(z)", rng: 6, outcome: Some("draw") }).unwrap();
        let s = store.load(7).unwrap().unwrap();
        let texts: Vec<&str> = s.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["b2", "a1", "a3"]);
        assert_eq!((s.state.as_str(), s.rng, s.outcome.as_deref()), ("s(z)", 6, Some("draw")));
        assert!(token_matches("a", &s.tokens[1].1) && !token_matches("b", &s.tokens[1].1));
        store.end(7, Status::Closed).unwrap();
        assert!(store.in_play().unwrap().is_empty());
        assert_eq!(store.sessions().unwrap(), [7]);
        // A second server on the same file is refused while the first has it.
        let second = Sqlite::open(&path).err().unwrap();
        assert!(second.0.contains("in use by another process"), "{second}");
        drop(store);
        let again = Sqlite::open(&path).unwrap();
        assert_eq!(again.starts().unwrap(), 2);
        assert_eq!(again.last_session().unwrap(), 7);
        assert_eq!(again.load(7).unwrap().unwrap().status, Status::Closed);
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_database_from_a_newer_version_or_of_something_else_is_refused() {
        let dir = std::env::temp_dir().join(format!("tabula-store-v-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let newer = dir.join("newer.db");
        Connection::open(&newer).unwrap().execute_batch("PRAGMA user_version = 99;").unwrap();
        let e = Sqlite::open(&newer).err().unwrap();
        assert!(e.0.contains("newer tabula") && e.0.contains("99"), "{e}");
        let other = dir.join("other.db");
        Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x);").unwrap();
        let e = Sqlite::open(&other).err().unwrap();
        assert!(e.0.contains("something else"), "{e}");
        let text = dir.join("text.db");
        std::fs::write(&text, "not a database, just some text that is long enough to have a header\n".repeat(80))
            .unwrap();
        let e = Sqlite::open(&text).err().unwrap();
        assert!(e.0.contains("not a database"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
