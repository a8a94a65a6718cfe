//! One server context shared by several threads (`tlsmatrix-driver contention`): each thread
//! makes full handshakes against the same server context at once, as a server's worker
//! threads share one, from a client context of its own (the harness records what a client
//! verified in its context, which threads must not share), and counts its handshakes and the
//! times the kernel switched it out.
//! A thread that blocks on a lock another holds sleeps in a futex and is switched out
//! voluntarily; in-memory handshakes make no other blocking call, so voluntary switches per
//! handshake count the waits the library's locks cost. Involuntary switches are preemption:
//! with more threads than cores they are the scheduler's, not the library's.

use std::time::{Duration, Instant};

use crate::sample::Sample;
use crate::workload::Budget;
use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::pair;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::ConnParams;

/// What `threads` threads did in one window.
#[derive(Debug, Clone, Copy)]
pub struct Shared {
    pub threads: usize,
    pub handshakes: u64,
    /// The window's wall time.
    pub wall: Duration,
    /// Voluntary context switches of all the threads: blocking waits.
    pub waits: u64,
    /// Involuntary ones: preemption.
    pub preempted: u64,
}

impl Shared {
    pub fn per_second(&self) -> f64 {
        self.handshakes as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    pub fn waits_per_handshake(&self) -> f64 {
        self.waits as f64 / self.handshakes.max(1) as f64
    }
}

fn switches() -> (u64, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid pointer cannot fail on Linux.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    (u.ru_nvcsw as u64, u.ru_nivcsw as u64)
}

/// Makes a thread's client context.
pub type MakeClient<'a> = dyn Fn() -> anyhow::Result<Box<dyn EndpointFactory>> + Sync + 'a;

/// `threads` threads handshaking against one shared server context for `window` after
/// `warmup`, all starting together, each from its own client context.
pub fn shared_contexts(
    make_client: &MakeClient,
    server: &(dyn EndpointFactory + Sync),
    params: &ConnParams,
    threads: usize,
    warmup: Duration,
    window: Duration,
) -> anyhow::Result<Shared> {
    let start = Instant::now() + warmup + Duration::from_millis(20);
    let end = start + window;
    let per_thread: Vec<anyhow::Result<(u64, u64, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || -> anyhow::Result<(u64, u64, u64)> {
                    let client = make_client()?;
                    let client = client.as_ref();
                    while Instant::now() < start {
                        pair::handshake(client, server, params)?;
                    }
                    let (v0, i0) = switches();
                    let mut n = 0;
                    while Instant::now() < end || n == 0 {
                        pair::handshake(client, server, params)?;
                        n += 1;
                    }
                    let (v1, i1) = switches();
                    Ok((n, v1 - v0, i1 - i0))
                })
            })
            .collect();
        crate::workload::joined(handles)
    });
    let wall = Instant::now().max(end) - start;
    let mut out = Shared {
        threads,
        handshakes: 0,
        wall,
        waits: 0,
        preempted: 0,
    };
    for t in per_thread {
        let (n, v, i) = t?;
        out.handshakes += n;
        out.waits += v;
        out.preempted += i;
    }
    Ok(out)
}

/// The thread counts a sample measures: one, the two cores of the machines this runs on, and
/// more threads than cores, as a server with a worker per connection has.
pub const THREADS: [usize; 3] = [1, 2, 8];

/// Each sample: a window of `budget.sample_target` for each of [`THREADS`], in turn; the
/// rates, the scaling over one thread's rate (times the cores the threads can use) and the
/// blocking waits per handshake.
pub fn scaling(
    make_client: &MakeClient,
    server: &(dyn EndpointFactory + Sync),
    params: &ConnParams,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let window = budget.sample_target;
    for _ in 0..budget.runs {
        let [one, two, eight] =
            THREADS.map(|n| shared_contexts(make_client, server, params, n, budget.warmup, window));
        let (one, two, eight) = (one?, two?, eight?);
        let scaling =
            |r: &Shared| r.per_second() / (one.per_second() * r.threads.min(cores) as f64);
        on_sample(vec![
            (Metric::Contention1PerS, one.per_second()),
            (Metric::Contention2PerS, two.per_second()),
            (Metric::Contention8PerS, eight.per_second()),
            (Metric::Contention2Scaling, scaling(&two)),
            (Metric::Contention8Scaling, scaling(&eight)),
            (Metric::Contention2Waits, two.waits_per_handshake()),
            (Metric::Contention8Waits, eight.waits_per_handshake()),
        ]);
    }
    Ok(())
}
