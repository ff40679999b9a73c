//! [`Network`]: replication messages between simulated DB servers, with random delays and
//! losses, delivered in time order (ties in send order).
//!
//! Not TCP: messages between two servers may overtake each other (writes are unique values,
//! so order does not matter to the model); a lost message is simply never delivered.

/// A replication message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// A leader ships one write to a follower.
    Replicate {
        shard: usize,
        epoch: u64,
        value: u64,
    },
    /// A follower's answer: applied (`ok`) or refused.
    Answer {
        shard: usize,
        epoch: u64,
        value: u64,
        ok: bool,
    },
}

/// A message in flight.
#[derive(Clone, Debug)]
pub struct Envelope {
    pub at: u64,
    pub seq: u64,
    pub from: usize,
    pub to: usize,
    pub msg: Msg,
}

/// Every message in flight.
#[derive(Default)]
pub struct Network {
    in_flight: Vec<Envelope>,
    next_seq: u64,
}

impl Network {
    pub fn send(&mut self, at: u64, from: usize, to: usize, msg: Msg) {
        self.next_seq += 1;
        self.in_flight.push(Envelope {
            at,
            seq: self.next_seq,
            from,
            to,
            msg,
        });
    }

    /// Takes the messages due at `now` whose receiver `ready` accepts now, in order; the
    /// others stay.
    pub fn due(&mut self, now: u64, ready: &dyn Fn(usize) -> bool) -> Vec<Envelope> {
        let (mut due, stay): (Vec<Envelope>, Vec<Envelope>) = self
            .in_flight
            .drain(..)
            .partition(|envelope| envelope.at <= now && ready(envelope.to));
        self.in_flight = stay;
        due.sort_by_key(|envelope| (envelope.at, envelope.seq));
        due
    }
}
