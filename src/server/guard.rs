//! What keeps one client from taking the server: per-client counts of
//! connections, sessions, event streams and computer moves in progress, a
//! request rate, and the memory budget of the whole process.
//!
//! A client is an address (an IPv6 address by its /64 network, which one
//! host usually has whole). A count is held by a guard that gives it back
//! when dropped, so no path that ends a connection or a stream can forget
//! to.

use super::{Failure, fail};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// Limits on what one client may hold or do at once.
#[derive(Clone, Debug)]
pub struct ClientLimits {
    /// Open connections (TCP, and HTTP with keep-alive).
    pub connections: usize,
    /// Game sessions it opened that are still open.
    pub sessions: usize,
    /// Event streams (`GET /api/events`) open.
    pub streams: usize,
    /// `ai` and `hint` requests being thought about.
    pub thinking: usize,
    /// Requests per second, on average...
    pub rate: f64,
    /// ...with bursts of this many.
    pub burst: f64,
}

impl Default for ClientLimits {
    /// Enough for a family behind one address playing several games on
    /// several devices; not enough for a script to fill the server.
    fn default() -> ClientLimits {
        ClientLimits { connections: 32, sessions: 16, streams: 16, thinking: 4, rate: 50.0, burst: 100.0 }
    }
}

/// Who sent a request: an address, or the process itself (`play --web`
/// opens its session in-process), which no per-client limit applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Client {
    Local,
    Addr(IpAddr),
}

impl Client {
    /// The client at `ip`: an IPv6 address stands for its /64 network.
    pub fn of(ip: IpAddr) -> Client {
        match ip {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Client::Addr(IpAddr::V4(v4)),
                None => {
                    let s = v6.segments();
                    Client::Addr(IpAddr::V6([s[0], s[1], s[2], s[3], 0, 0, 0, 0].into()))
                }
            },
            v4 => Client::Addr(v4),
        }
    }
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Client::Local => write!(f, "this process"),
            Client::Addr(a) => write!(f, "{a}"),
        }
    }
}

/// What one client holds now.
#[derive(Default)]
struct Use {
    connections: usize,
    sessions: usize,
    streams: usize,
    thinking: usize,
    /// The request bucket: tokens left, when last filled.
    tokens: f64,
    filled: Option<Instant>,
}

impl Use {
    fn idle(&self) -> bool {
        self.connections + self.sessions + self.streams + self.thinking == 0
    }
}

/// The kinds of count a client holds.
#[derive(Clone, Copy, Debug)]
pub enum Held {
    Connection,
    Session,
    Stream,
    Thinking,
}

impl Held {
    fn what(self) -> &'static str {
        match self {
            Held::Connection => "open connections",
            Held::Session => "open game sessions",
            Held::Stream => "open event streams",
            Held::Thinking => "computer moves being thought about",
        }
    }

    fn count(self, u: &mut Use) -> &mut usize {
        match self {
            Held::Connection => &mut u.connections,
            Held::Session => &mut u.sessions,
            Held::Stream => &mut u.streams,
            Held::Thinking => &mut u.thinking,
        }
    }

    /// Seconds to suggest waiting when the count is full.
    fn retry(self) -> u64 {
        match self {
            Held::Thinking => 2,
            Held::Connection | Held::Stream => 5,
            Held::Session => 30,
        }
    }
}

/// Every client's counts.
pub struct Clients {
    limits: ClientLimits,
    uses: Mutex<HashMap<IpAddr, Use>>,
}

/// Past this many clients known, those that hold nothing and whose bucket
/// is full again are forgotten (clients that only sent requests are not
/// forgotten one by one).
const SWEEP_AT: usize = 4096;

/// One count a client holds, given back when dropped.
pub struct Hold {
    clients: Arc<Clients>,
    client: Client,
    held: Held,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.clients.give_back(self.client, self.held);
    }
}

impl Clients {
    pub fn new(limits: ClientLimits) -> Clients {
        Clients { limits, uses: Mutex::new(HashMap::new()) }
    }

    fn uses(&self) -> MutexGuard<'_, HashMap<IpAddr, Use>> {
        self.uses.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn limit(&self, held: Held) -> usize {
        match held {
            Held::Connection => self.limits.connections,
            Held::Session => self.limits.sessions,
            Held::Stream => self.limits.streams,
            Held::Thinking => self.limits.thinking,
        }
    }

    /// Takes one more `held` for `client`, or a `client_limit` error when
    /// it holds its limit already.
    pub fn hold(self: &Arc<Self>, client: Client, held: Held) -> Result<Hold, Failure> {
        if let Client::Addr(ip) = client {
            let limit = self.limit(held);
            let mut uses = self.uses();
            let n = held.count(uses.entry(ip).or_default());
            if *n >= limit {
                return Err(fail(
                    "client_limit",
                    format!("{client} has {limit} {} already, the most one client may have", held.what()),
                )
                .retry_after(held.retry()));
            }
            *n += 1;
        }
        Ok(Hold { clients: self.clone(), client, held })
    }

    fn give_back(&self, client: Client, held: Held) {
        if let Client::Addr(ip) = client {
            let mut uses = self.uses();
            if let Some(u) = uses.get_mut(&ip) {
                let n = held.count(u);
                *n = n.saturating_sub(1);
                // A client that holds nothing and whose bucket is full again
                // is forgotten.
                if u.idle() && self.refilled(u) {
                    uses.remove(&ip);
                }
            }
        }
    }

    /// Whether a client's bucket would be full by now (so forgetting it
    /// changes nothing).
    fn refilled(&self, u: &Use) -> bool {
        u.filled.is_none_or(|t| u.tokens + t.elapsed().as_secs_f64() * self.limits.rate >= self.limits.burst)
    }

    /// Counts a request against `client`'s rate: an error saying when to
    /// try again when its bucket is empty.
    pub fn request(&self, client: Client) -> Result<(), Failure> {
        let Client::Addr(ip) = client else { return Ok(()) };
        let ClientLimits { rate, burst, .. } = self.limits;
        let mut uses = self.uses();
        if uses.len() >= SWEEP_AT && !uses.contains_key(&ip) {
            uses.retain(|_, u| !(u.idle() && self.refilled(u)));
        }
        let u = uses.entry(ip).or_default();
        let now = Instant::now();
        u.tokens = match u.filled {
            None => burst,
            Some(t) => (u.tokens + now.duration_since(t).as_secs_f64() * rate).min(burst),
        };
        u.filled = Some(now);
        if u.tokens < 1.0 {
            let wait = ((1.0 - u.tokens) / rate).ceil().max(1.0) as u64;
            return Err(fail(
                "client_limit",
                format!("{client} sends more than {rate} requests a second (bursts of {burst}); slow down"),
            )
            .retry_after(wait));
        }
        u.tokens -= 1.0;
        Ok(())
    }
}

/// The memory budget of the whole process: what sessions hold between
/// requests and what running requests may use, in bytes.
pub struct Budget {
    pub total: usize,
    used: Mutex<usize>,
}

impl Budget {
    pub fn new(total: usize) -> Budget {
        Budget { total, used: Mutex::new(0) }
    }

    fn used(&self) -> MutexGuard<'_, usize> {
        self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes up to `want` bytes, at least `least`, so that `leave` bytes
    /// stay free: how many were taken, or `None` when there is not room
    /// for `least`.
    pub fn take(&self, want: usize, least: usize, leave: usize) -> Option<usize> {
        let mut used = self.used();
        let free = self.total.saturating_sub(*used).saturating_sub(leave);
        if free < least {
            return None;
        }
        let n = want.min(free).max(least);
        *used += n;
        Some(n)
    }

    /// Gives back `n` bytes taken before.
    pub fn give(&self, n: usize) {
        let mut used = self.used();
        *used = used.saturating_sub(n);
    }

    /// Changes a holding from `old` bytes to `new` (a session after a
    /// request: its database may have grown, its stacks shrunk). Growth
    /// always succeeds: it was within the request's share, given back at
    /// the same time.
    pub fn swap(&self, old: usize, new: usize) {
        let mut used = self.used();
        *used = used.saturating_sub(old) + new;
    }

    pub fn in_use(&self) -> usize {
        *self.used()
    }
}

/// A fraction of this machine's memory (of its cgroup's limit if lower):
/// the default budget of the whole server.
pub fn default_budget() -> usize {
    const FALLBACK: usize = 2 << 30;
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<usize>().ok()
        })
        .map_or(FALLBACK * 2, |kb| kb * 1024);
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse::<usize>().ok());
    total.min(cgroup.unwrap_or(usize::MAX)) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ClientLimits {
        ClientLimits { connections: 2, sessions: 1, streams: 1, thinking: 1, rate: 1.0, burst: 3.0 }
    }

    #[test]
    fn holds_stop_at_the_limit_and_come_back_when_dropped() {
        let clients = Arc::new(Clients::new(limits()));
        let a = Client::of("10.0.0.1".parse().unwrap());
        let b = Client::of("10.0.0.2".parse().unwrap());
        let first = clients.hold(a, Held::Connection).unwrap();
        let _second = clients.hold(a, Held::Connection).unwrap();
        let refused = clients.hold(a, Held::Connection).err().unwrap();
        assert_eq!((refused.code, refused.retry), ("client_limit", Some(5)));
        assert!(refused.message.contains("10.0.0.1 has 2 open connections"), "{}", refused.message);
        // Another client never notices; the process itself has no limit.
        assert!(clients.hold(b, Held::Connection).is_ok());
        let _many: Vec<Hold> = (0..10).map(|_| clients.hold(Client::Local, Held::Session).unwrap()).collect();
        drop(first);
        assert!(clients.hold(a, Held::Connection).is_ok());
    }

    #[test]
    fn the_request_bucket_allows_bursts_then_the_rate() {
        let clients = Clients::new(limits());
        let a = Client::of("2001:db8::1".parse().unwrap());
        // The same /64 is the same client.
        let same = Client::of("2001:db8::ffff:2".parse().unwrap());
        assert_eq!(a, same);
        for _ in 0..3 {
            clients.request(a).unwrap();
        }
        let slow_down = clients.request(same).err().unwrap();
        assert_eq!((slow_down.code, slow_down.retry), ("client_limit", Some(1)));
        assert!(clients.request(Client::of("2001:db9::1".parse().unwrap())).is_ok());
        assert!(clients.request(Client::Local).is_ok());
    }

    #[test]
    fn the_budget_takes_what_is_free_and_leaves_room_when_asked() {
        let b = Budget::new(100);
        assert_eq!(b.take(60, 10, 0), Some(60));
        assert_eq!(b.take(60, 10, 0), Some(40));
        assert_eq!(b.take(1, 1, 0), None);
        b.give(40);
        assert_eq!(b.take(30, 30, 20), None);
        assert_eq!(b.take(20, 20, 20), Some(20));
        b.swap(60, 10);
        assert_eq!(b.in_use(), 30);
    }
}
