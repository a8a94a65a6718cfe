//! Jobs spread over a few worker threads ("lanes"), their results handed back in job order
//! as soon as every earlier job's is in: the writer sees the same sequence whatever the
//! number of lanes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Runs `job(index, lane)` for every index below `count` on `lanes` threads (a lane takes
/// the next job when its last one ends) and calls `take(index, result)` in index order.
/// An error from `take` stops the hand-out: jobs already running finish, no new one starts.
pub fn in_order<R: Send, E>(
    count: usize,
    lanes: usize,
    job: impl Fn(usize, usize) -> R + Sync,
    mut take: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for lane in 0..lanes.clamp(1, count.max(1)) {
            let (tx, next, job) = (tx.clone(), &next, &job);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count || tx.send((i, job(i, lane))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, R> = BTreeMap::new();
        let mut due = 0;
        for (i, result) in rx {
            waiting.insert(i, result);
            while let Some(result) = waiting.remove(&due) {
                if let Err(e) = take(due, result) {
                    // Later jobs are not started; the receiver's drop ends each lane's loop.
                    next.store(count, Ordering::Relaxed);
                    return Err(e);
                }
                due += 1;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    #[test]
    fn results_come_in_order_and_lanes_never_overlap_themselves() {
        // Jobs of uneven length, so that later jobs finish before earlier ones.
        let spans: Mutex<Vec<(usize, Instant, Instant)>> = Mutex::new(Vec::new());
        let mut seen = Vec::new();
        in_order(
            9,
            3,
            |i, lane| {
                let start = Instant::now();
                std::thread::sleep(Duration::from_millis([30, 5, 10][i % 3]));
                spans.lock().unwrap().push((lane, start, Instant::now()));
                i * 10
            },
            |i, r| -> Result<(), ()> {
                seen.push((i, r));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..9).map(|i| (i, i * 10)).collect::<Vec<_>>());
        let spans = spans.into_inner().unwrap();
        assert_eq!(spans.len(), 9);
        let lanes: std::collections::BTreeSet<usize> = spans.iter().map(|s| s.0).collect();
        assert_eq!(lanes.len(), 3, "every lane took work: {lanes:?}");
        // One lane runs one job at a time: its jobs' spans are disjoint.
        for (a, b) in spans.iter().flat_map(|a| spans.iter().map(move |b| (a, b))) {
            if a.0 == b.0 && a.1 < b.1 {
                assert!(a.2 <= b.1, "lane {} ran two jobs at once", a.0);
            }
        }
    }

    #[test]
    fn an_error_stops_the_hand_out() {
        let started = AtomicUsize::new(0);
        let r = in_order(
            100,
            2,
            |i, _| {
                started.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
                i
            },
            |i, _| if i == 3 { Err(i) } else { Ok(()) },
        );
        assert_eq!(r, Err(3));
        assert!(started.load(Ordering::Relaxed) < 100);
        assert_eq!(in_order(0, 2, |i, _| i, |_, _| Err(())), Ok(()));
    }
}
