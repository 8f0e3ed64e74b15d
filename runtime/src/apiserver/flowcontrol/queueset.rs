// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The queues of one `Limited` priority level and their fair dispatch, as k8s.io/apiserver's
//! `fairqueuing/queueset` runs them, at this server's scale:
//!
//! - a request takes one seat (kube's width estimation, which gives a big list more seats,
//!   is not done) and runs at once while the level has a free seat and nothing waits;
//! - with `Queue`, a flow's hash deals a hand of queues ([`super::shuffle_sharding`]); the
//!   request joins the hand's queue holding the fewest requests (waiting plus executing, the
//!   first in the hand on a tie), or is rejected (`queue-full`) when that queue already holds
//!   `queueLengthLimit` waiting requests; with `Reject`, a request finding no free seat is
//!   rejected (`concurrency-limit`) at once;
//! - a freed seat goes to the head of the queue with the lowest virtual start time (start-time
//!   fair queuing): each dispatch advances its queue's virtual start by the request's seats,
//!   and a queue turning busy starts at the level's virtual time, so busy queues take turns
//!   and a queue that was idle is served within one turn of each busy queue. Where kube
//!   estimates each request's service time and corrects it when the request ends, every
//!   request counts the same here;
//! - a request that waited longer than the wait limit leaves its queue and is rejected
//!   (`time-out`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;

use super::shuffle_sharding::Dealer;

/// Why a request was not given a seat: kube's `reason` label of
/// `apiserver_flowcontrol_rejected_requests_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Its queue held `queueLengthLimit` requests already.
    QueueFull,
    /// A `Reject` level had no free seat.
    ConcurrencyLimit,
    /// It waited past the wait limit.
    TimedOut,
}

impl Rejection {
    /// The metric's `reason` label, as kube spells it.
    pub fn reason(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue-full",
            Rejection::ConcurrencyLimit => "concurrency-limit",
            Rejection::TimedOut => "time-out",
        }
    }
}

/// How a level that is out of seats answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queuing {
    /// Reject at once.
    Reject,
    /// Queue in a hand dealt by `dealer` out of `queues`, at most `queue_length_limit`
    /// waiting in each.
    Queue {
        /// The number of queues.
        queues: u32,
        /// Deals each flow its hand of queues.
        dealer: Dealer,
        /// The most requests waiting in one queue.
        queue_length_limit: u32,
    },
}

struct Waiter {
    id: u64,
    send: oneshot::Sender<Seat>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    executing: usize,
    /// The virtual time at which its next request starts.
    next_start: u64,
}

#[derive(Default)]
struct State {
    executing: usize,
    queues: Vec<Queue>,
    /// The virtual start of the request dispatched last.
    virtual_time: u64,
    /// The queue dispatched last; ties go to the next one after it.
    last: usize,
    next_id: u64,
}

/// The seats and queues of one priority level. Shared (`Arc`) by every request of the level.
pub struct QueueSet {
    concurrency: AtomicUsize,
    queuing: Queuing,
    state: Mutex<State>,
}

/// A seat held: the request executes while it lives; dropping it frees the seat and hands it
/// to the next waiting request.
pub struct Seat {
    set: Arc<QueueSet>,
    queue: Option<usize>,
    armed: bool,
}

impl Drop for Seat {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let set = self.set.clone();
        let mut s = set.lock();
        s.executing = s.executing.saturating_sub(1);
        if let Some(q) = self.queue.and_then(|q| s.queues.get_mut(q)) {
            q.executing = q.executing.saturating_sub(1);
        }
        set.dispatch(&mut s);
    }
}

/// A request admitted to a queue (or already given its seat).
pub struct Waiting {
    set: Arc<QueueSet>,
    queue: usize,
    id: u64,
    seat: oneshot::Receiver<Seat>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        // A request that gives up (its client went away) leaves its queue.
        let mut s = self.set.lock();
        if let Some(q) = s.queues.get_mut(self.queue) {
            q.waiting.retain(|w| w.id != self.id);
        }
    }
}

impl Waiting {
    /// Waits for the seat at most `limit`; [`Rejection::TimedOut`] after it, the request
    /// having left its queue.
    pub async fn wait(mut self, limit: Duration) -> Result<Seat, Rejection> {
        if let Ok(Ok(seat)) = tokio::time::timeout(limit, &mut self.seat).await {
            return Ok(seat);
        }
        let still_queued = {
            let mut s = self.set.lock();
            let q = &mut s.queues[self.queue];
            let before = q.waiting.len();
            q.waiting.retain(|w| w.id != self.id);
            q.waiting.len() != before
        };
        if still_queued {
            return Err(Rejection::TimedOut);
        }
        // Dispatched between the timeout and the lock: the seat is in the channel.
        self.seat.try_recv().map_err(|_| Rejection::TimedOut)
    }

    /// The seat if it has been given already (for tests and for callers that poll).
    pub fn try_seat(&mut self) -> Option<Seat> {
        self.seat.try_recv().ok()
    }
}

/// What [`QueueSet::start`] did with a request.
pub enum Admission {
    /// It runs now.
    Run(Seat),
    /// It waits in a queue.
    Queued(Waiting),
}

impl QueueSet {
    /// A level of `concurrency` seats (at least 1) answering as `queuing` says when they are
    /// all taken.
    pub fn new(concurrency: usize, queuing: Queuing) -> Arc<Self> {
        let queues = match queuing {
            Queuing::Reject => 0,
            Queuing::Queue { queues, .. } => queues as usize,
        };
        Arc::new(Self {
            concurrency: AtomicUsize::new(concurrency.max(1)),
            queuing,
            state: Mutex::new(State {
                queues: (0..queues).map(|_| Queue::default()).collect(),
                ..State::default()
            }),
        })
    }

    /// The seats of the level.
    pub fn concurrency(&self) -> usize {
        self.concurrency.load(Ordering::Relaxed)
    }

    /// How it answers when its seats are taken.
    pub fn queuing(&self) -> Queuing {
        self.queuing
    }

    /// Gives the level `concurrency` seats (at least 1) from now on, as kube's queue set
    /// takes a new concurrency limit when the configuration changes: requests executing keep
    /// their seats (with fewer seats, no new request runs until enough of them finish); with
    /// more, waiting requests are dispatched at once.
    pub fn set_concurrency(self: &Arc<Self>, concurrency: usize) {
        let mut s = self.lock();
        self.concurrency
            .store(concurrency.max(1), Ordering::Relaxed);
        self.dispatch(&mut s);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Requests waiting and requests executing now.
    pub fn counts(&self) -> (usize, usize) {
        let s = self.lock();
        (s.queues.iter().map(|q| q.waiting.len()).sum(), s.executing)
    }

    /// Admits a request of the flow whose hash is `flow_hash`: a seat now, a place in a
    /// queue, or the rejection.
    pub fn start(self: &Arc<Self>, flow_hash: u64) -> Result<Admission, Rejection> {
        let mut s = self.lock();
        let (dealer, limit) = match self.queuing {
            Queuing::Reject => {
                if s.executing >= self.concurrency() {
                    return Err(Rejection::ConcurrencyLimit);
                }
                s.executing += 1;
                return Ok(Admission::Run(self.seat(None)));
            }
            Queuing::Queue {
                dealer,
                queue_length_limit,
                ..
            } => (dealer, queue_length_limit as usize),
        };
        // The shortest queue of the hand, the first on a tie.
        let hand = dealer.deal(flow_hash);
        let mut best = hand[0] as usize;
        let load = |q: &Queue| q.waiting.len() + q.executing;
        for &card in &hand[1..] {
            if load(&s.queues[card as usize]) < load(&s.queues[best]) {
                best = card as usize;
            }
        }
        let (vt, executing) = (s.virtual_time, s.executing);
        let queue = &mut s.queues[best];
        if queue.waiting.len() >= limit {
            return Err(Rejection::QueueFull);
        }
        if queue.waiting.is_empty() && queue.executing == 0 {
            queue.next_start = queue.next_start.max(vt);
        }
        // A free seat and nobody ahead: run now.
        if queue.waiting.is_empty() && executing < self.concurrency() {
            let starts = queue.next_start;
            queue.next_start += 1;
            queue.executing += 1;
            s.executing += 1;
            s.virtual_time = s.virtual_time.max(starts);
            s.last = best;
            return Ok(Admission::Run(self.seat(Some(best))));
        }
        let id = s.next_id;
        s.next_id += 1;
        let (send, seat) = oneshot::channel();
        s.queues[best].waiting.push_back(Waiter { id, send });
        self.dispatch(&mut s);
        Ok(Admission::Queued(Waiting {
            set: self.clone(),
            queue: best,
            id,
            seat,
        }))
    }

    fn seat(self: &Arc<Self>, queue: Option<usize>) -> Seat {
        Seat {
            set: self.clone(),
            queue,
            armed: true,
        }
    }

    /// Hands free seats to the heads of the queues, lowest virtual start first.
    fn dispatch(self: &Arc<Self>, s: &mut State) {
        while s.executing < self.concurrency() {
            let n = s.queues.len();
            let mut pick: Option<usize> = None;
            for step in 1..=n {
                let i = (s.last + step) % n;
                if s.queues[i].waiting.is_empty() {
                    continue;
                }
                if pick.is_none_or(|p| s.queues[i].next_start < s.queues[p].next_start) {
                    pick = Some(i);
                }
            }
            let Some(i) = pick else { return };
            let Some(waiter) = s.queues[i].waiting.pop_front() else {
                return;
            };
            let queue = &mut s.queues[i];
            let starts = queue.next_start;
            queue.next_start += 1;
            queue.executing += 1;
            s.executing += 1;
            s.virtual_time = s.virtual_time.max(starts);
            s.last = i;
            if let Err(mut seat) = waiter.send.send(self.seat(Some(i))) {
                // Its request is gone: the seat was never used, take it back here (dropping
                // it armed would lock the state again).
                seat.armed = false;
                s.executing -= 1;
                s.queues[i].executing -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(set: &Arc<QueueSet>, hash: u64) -> Waiting {
        match set.start(hash).unwrap() {
            Admission::Queued(w) => w,
            Admission::Run(_) => panic!("ran at once"),
        }
    }

    fn runs(set: &Arc<QueueSet>, hash: u64) -> Seat {
        match set.start(hash).unwrap() {
            Admission::Run(s) => s,
            Admission::Queued(_) => panic!("was queued"),
        }
    }

    /// A hand of 1 out of 8: the flow of hash h always queues in queue h % 8.
    fn one_queue_per_flow(concurrency: usize, limit: u32) -> Arc<QueueSet> {
        QueueSet::new(
            concurrency,
            Queuing::Queue {
                queues: 8,
                dealer: Dealer::new(8, 1).unwrap(),
                queue_length_limit: limit,
            },
        )
    }

    /// Frees `seat` and returns the flow whose waiter got the freed seat, with the seat.
    fn next(seat: Seat, waiters: &mut Vec<(char, Waiting)>) -> Option<(char, Seat)> {
        drop(seat);
        for i in 0..waiters.len() {
            if let Some(s) = waiters[i].1.try_seat() {
                return Some((waiters.remove(i).0, s));
            }
        }
        None
    }

    #[test]
    fn busy_flows_take_turns_and_a_late_flow_is_not_starved() {
        let set = one_queue_per_flow(1, 50);
        let first = runs(&set, 0);
        let mut waiters: Vec<(char, Waiting)> = Vec::new();
        for _ in 0..4 {
            waiters.push(('a', queued(&set, 0)));
        }
        for _ in 0..2 {
            waiters.push(('b', queued(&set, 1)));
        }
        assert_eq!(set.counts(), (6, 1));
        let mut order = String::new();
        let mut seat = Some(first);
        while let Some((flow, s)) = seat.take().and_then(|s| next(s, &mut waiters)) {
            order.push(flow);
            seat = Some(s);
        }
        // b arrived after a's backlog and still alternates with it.
        assert_eq!(order, "babaaa");
        assert_eq!(set.counts(), (0, 0));
    }

    #[test]
    fn a_flow_joins_the_shortest_queue_of_its_hand() {
        let set = QueueSet::new(
            1,
            Queuing::Queue {
                queues: 8,
                dealer: Dealer::new(8, 2).unwrap(),
                queue_length_limit: 50,
            },
        );
        // Hash 0 deals [0, 1]: the first request runs from queue 0, the next waits in queue 1
        // (0 holds one executing), the third in queue 0 again (1 each).
        let _run = runs(&set, 0);
        let w1 = queued(&set, 0);
        let w2 = queued(&set, 0);
        assert_eq!((w1.queue, w2.queue), (1, 0));
    }

    #[test]
    fn a_full_queue_rejects_and_a_reject_level_refuses_past_its_seats() {
        let set = one_queue_per_flow(1, 2);
        let _run = runs(&set, 3);
        let _w = (queued(&set, 3), queued(&set, 3));
        assert_eq!(set.start(3).err(), Some(Rejection::QueueFull));
        // Another flow's queue still has room.
        let _other = queued(&set, 4);

        let reject = QueueSet::new(2, Queuing::Reject);
        let _seats = (runs(&reject, 0), runs(&reject, 1));
        assert_eq!(reject.start(2).err(), Some(Rejection::ConcurrencyLimit));
        drop(_seats);
        let _again = runs(&reject, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_waiting_past_the_limit_is_rejected_and_leaves_its_queue() {
        let set = one_queue_per_flow(1, 10);
        let run = runs(&set, 0);
        let waiting = queued(&set, 0);
        assert_eq!(
            waiting.wait(Duration::from_secs(15)).await.err(),
            Some(Rejection::TimedOut)
        );
        assert_eq!(set.counts(), (0, 1));
        // A request given its seat before the limit runs.
        let waiting = queued(&set, 0);
        drop(run);
        let seat = waiting.wait(Duration::from_secs(15)).await.unwrap();
        assert_eq!(set.counts(), (0, 1));
        drop(seat);
        assert_eq!(set.counts(), (0, 0));
    }

    #[test]
    fn a_request_that_gave_up_is_skipped_and_leaves_no_seat_taken() {
        let set = one_queue_per_flow(1, 10);
        let run = runs(&set, 0);
        let gone = queued(&set, 0);
        let mut kept = queued(&set, 1);
        drop(gone);
        assert_eq!(set.counts(), (1, 1));
        drop(run);
        let seat = kept.try_seat().expect("the waiting request got the seat");
        assert_eq!(set.counts(), (0, 1));
        drop(seat);
        assert_eq!(set.counts(), (0, 0));
    }
}
