//! Who holds the `/metrics` connection slots (issue #38 item 8, issue #48 item 10).
//!
//! - **Handshakes per source**: at most [`MAX_HANDSHAKES_PER_SOURCE`] connections of one address
//!   in their TLS handshake at once (a new one past it is closed at once): idle TCP connections
//!   from one address, which never finish a handshake, cannot take the slots before Prometheus.
//!   A connection that finished its handshake no longer counts there.
//! - **Overall**: at most [`MAX_CONNECTIONS`]. When they are all taken, a new connection takes
//!   the place of the oldest connection that has not been served an allowed request yet (not
//!   *trusted*), of the address holding the most connections; only when every connection is
//!   trusted or in its handshake is the new one refused. A connection is trusted once one of its
//!   requests passed the review (an answer `200`): trusted connections are never closed for
//!   another. So clients sending random tokens, however many and from whichever address (the
//!   scraper's own: host-network pods, a NAT), take the place of each other and never the
//!   scraper's: its new connection finishes its handshake and its first request (its token was
//!   allowed before: a lane of its own in the review budget) in milliseconds, and then stays.
//!   (Before, a per-address limit of 16 connections counted every connection: 300 random-token
//!   clients from the scraper's address left it no slot, 0 of 9 scrapes answered.)

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

/// Most `/metrics` connections open at once (TLS handshakes included). A connection costs its
/// TLS and HTTP buffers (tens of KiB): this bounds them.
pub const MAX_CONNECTIONS: usize = 512;
/// Most connections of one address in their TLS handshake at once.
pub const MAX_HANDSHAKES_PER_SOURCE: usize = 16;

/// Why a new connection is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its address has [`MAX_HANDSHAKES_PER_SOURCE`] handshakes going; `first`: the first
    /// refusal since it went under (to log once).
    Source { first: bool },
    /// Every slot is taken by a trusted connection or a handshake.
    Full,
}

struct Conn {
    ip: IpAddr,
    since: Instant,
    handshaking: bool,
    trusted: bool,
    /// Closes the connection when it is evicted.
    evict: Arc<Notify>,
}

#[derive(Default)]
struct Table {
    conns: HashMap<u64, Conn>,
    /// Handshakes going, by address, and whether the limit was logged since it was reached.
    handshakes: HashMap<IpAddr, (usize, bool)>,
    next: u64,
}

/// The slots of one `/metrics` server.
#[derive(Default)]
pub struct Slots {
    table: Mutex<Table>,
}

/// One connection's slot (released on drop).
pub struct Slot {
    slots: Arc<Slots>,
    id: u64,
    /// Notified when the connection is closed for a newcomer.
    pub evicted: Arc<Notify>,
}

/// An admitted connection, and the connection it took the place of (closed for it), if any.
pub struct Admission {
    /// The new connection's slot.
    pub slot: Slot,
    /// The address of the connection evicted for it.
    pub evicted: Option<IpAddr>,
}

impl Slots {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a new connection from `ip` (in its handshake), or why not.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Admission, Refusal> {
        let ip = ip.to_canonical();
        let mut t = self.lock();
        let (count, logged) = t.handshakes.entry(ip).or_insert((0, false));
        if *count >= MAX_HANDSHAKES_PER_SOURCE {
            return Err(Refusal::Source {
                first: !std::mem::replace(logged, true),
            });
        }
        let mut evicted = None;
        if t.conns.len() >= MAX_CONNECTIONS {
            let victim = victim(&t.conns).ok_or(Refusal::Full)?;
            if let Some(c) = t.conns.remove(&victim) {
                c.evict.notify_one();
                evicted = Some(c.ip);
            }
        }
        let id = t.next;
        t.next += 1;
        let evict = Arc::new(Notify::new());
        t.conns.insert(
            id,
            Conn {
                ip,
                since: Instant::now(),
                handshaking: true,
                trusted: false,
                evict: evict.clone(),
            },
        );
        if let Some((count, _)) = t.handshakes.get_mut(&ip) {
            *count += 1;
        }
        Ok(Admission {
            slot: Slot {
                slots: self.clone(),
                id,
                evicted: evict,
            },
            evicted,
        })
    }

    /// Open connections, and how many of them are trusted.
    pub fn counts(&self) -> (usize, usize) {
        let t = self.lock();
        (
            t.conns.len(),
            t.conns.values().filter(|c| c.trusted).count(),
        )
    }
}

/// The connection to close for a newcomer when every slot is taken: of the address holding the
/// most connections that can be closed (done with the handshake, not trusted), the oldest.
fn victim(conns: &HashMap<u64, Conn>) -> Option<u64> {
    let evictable = |c: &Conn| !c.handshaking && !c.trusted;
    let mut per_ip: HashMap<IpAddr, usize> = HashMap::new();
    for c in conns.values() {
        *per_ip.entry(c.ip).or_default() += 1;
    }
    let heaviest = conns
        .values()
        .filter(|c| evictable(c))
        .map(|c| c.ip)
        .max_by_key(|ip| (per_ip.get(ip).copied().unwrap_or(0), *ip))?;
    conns
        .iter()
        .filter(|(_, c)| c.ip == heaviest && evictable(c))
        .min_by_key(|(id, c)| (c.since, **id))
        .map(|(id, _)| *id)
}

impl Slot {
    /// The TLS handshake is done (or failed): the connection no longer counts against its
    /// address's handshakes.
    pub fn handshake_done(&self) {
        let mut t = self.slots.lock();
        let Some(c) = t.conns.get_mut(&self.id) else {
            return;
        };
        if !std::mem::replace(&mut c.handshaking, false) {
            return;
        }
        let ip = c.ip;
        release_handshake(&mut t, ip);
    }

    /// One of its requests passed the review: never closed for another connection.
    pub fn trust(&self) {
        if let Some(c) = self.slots.lock().conns.get_mut(&self.id) {
            c.trusted = true;
        }
    }
}

fn release_handshake(t: &mut Table, ip: IpAddr) {
    if let Some((count, logged)) = t.handshakes.get_mut(&ip) {
        *count = count.saturating_sub(1);
        *logged = false;
        if *count == 0 {
            t.handshakes.remove(&ip);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut t = self.slots.lock();
        if let Some(c) = t.conns.remove(&self.id)
            && c.handshaking
        {
            release_handshake(&mut t, c.ip);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    /// Issue #38 item 8: one address has at most [`MAX_HANDSHAKES_PER_SOURCE`] handshakes going;
    /// the limit is logged once until the source goes under it again; other sources (and the
    /// IPv4-mapped form of the same address) are counted as what they are.
    #[test]
    fn one_source_has_at_most_its_share_of_the_handshakes() {
        let slots = Arc::new(Slots::default());
        let (idle, mapped, scraper) = (ip("10.128.0.7"), ip("::ffff:10.128.0.7"), ip("10.129.2.3"));
        let held: Vec<Slot> = (0..MAX_HANDSHAKES_PER_SOURCE)
            .map(|i| {
                let ip = if i % 2 == 0 { idle } else { mapped };
                slots.admit(ip).map(|a| a.slot).expect("a slot")
            })
            .collect();
        assert_eq!(
            slots.admit(idle).err(),
            Some(Refusal::Source { first: true })
        );
        assert_eq!(
            slots.admit(mapped).err(),
            Some(Refusal::Source { first: false })
        );
        let other = slots.admit(scraper).expect("another source is served");
        // A finished handshake frees its place among the handshakes (not its slot).
        held[0].handshake_done();
        let again = slots.admit(idle).expect("a handshake slot freed");
        assert_eq!(
            slots.admit(idle).err(),
            Some(Refusal::Source { first: true }),
            "logged again once full again"
        );
        assert_eq!(slots.counts(), (MAX_HANDSHAKES_PER_SOURCE + 2, 0));
        drop((held, again, other));
        let t = slots.lock();
        assert!(t.conns.is_empty() && t.handshakes.is_empty());
    }

    /// Issue #48 item 10: with every slot taken by clients of random tokens from the scraper's
    /// own address, the scraper's new connection takes the place of the oldest of them; once
    /// trusted, no newcomer takes its place.
    #[test]
    fn a_newcomer_takes_the_place_of_the_oldest_untrusted_connection_of_the_busiest_source() {
        let slots = Arc::new(Slots::default());
        let (nat, other) = (ip("10.0.0.1"), ip("10.0.0.2"));
        let mut flood: Vec<Slot> = Vec::new();
        for i in 0..MAX_CONNECTIONS {
            let a = slots
                .admit(if i < 500 { nat } else { other })
                .expect("room");
            a.slot.handshake_done();
            flood.push(a.slot);
        }
        // The scraper, from the same address as 500 of them.
        let scraper = slots.admit(nat).expect("admitted");
        assert_eq!(scraper.evicted, Some(nat), "from the busiest address");
        assert!(
            flood[0].evicted.notified().now_or_never_is_ready(),
            "the oldest is closed"
        );
        scraper.slot.handshake_done();
        scraper.slot.trust();
        // Another newcomer never takes the trusted scraper's place.
        for _ in 0..MAX_CONNECTIONS - 1 {
            let a = slots.admit(nat).expect("admitted");
            a.slot.handshake_done();
            flood.push(a.slot);
        }
        assert_eq!(
            slots.counts(),
            (MAX_CONNECTIONS, 1),
            "the scraper is still in"
        );
        // Only handshakes and trusted connections left: a newcomer is refused.
        let mut hs = Vec::new();
        let mut n = 0u8;
        loop {
            match slots.admit(IpAddr::from([10, 1, n / 16, n % 16])) {
                Ok(a) => hs.push(a.slot),
                Err(Refusal::Full) => break,
                Err(e) => panic!("{e:?}"),
            }
            n = n.wrapping_add(1);
            assert!(hs.len() <= MAX_CONNECTIONS, "never more than the slots");
        }
        assert_eq!(slots.counts(), (MAX_CONNECTIONS, 1));
    }

    trait NowOrNever {
        fn now_or_never_is_ready(self) -> bool;
    }

    impl<F: std::future::Future> NowOrNever for F {
        fn now_or_never_is_ready(self) -> bool {
            let waker = std::task::Waker::noop();
            let mut cx = std::task::Context::from_waker(waker);
            let mut f = std::pin::pin!(self);
            f.as_mut().poll(&mut cx).is_ready()
        }
    }
}
