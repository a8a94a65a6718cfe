//! The measured loops: warm up, size a batch so one sample takes about `sample_target`, then
//! produce one sample per run. A driver calls these; tests call them with tiny budgets.

use std::time::{Duration, Instant};

use crate::callgrind::Counter;
use crate::ceiling::CeilingSampler;
use crate::counters::CounterMeter;
use crate::flights;
use crate::heap::{self, HeapMeter};
use crate::sample::{Sample, Sampler};
use crate::split::Class;
use tlsmatrix_harness::aead::{self, RecordAead};
use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::memio::{MemIo, Probe};
use tlsmatrix_harness::pair::{self, Clock, Meter, Pair, PairError};
use tlsmatrix_model::floor::min_handshakes;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::{BulkScenario, ConnParams};
use tlsmatrix_model::side::Side;

#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Samples to produce after warm-up.
    pub runs: usize,
    /// Warm-up time, also used to size handshake batches.
    pub warmup: Duration,
    /// Roughly how long one handshake sample should take.
    pub sample_target: Duration,
    /// Bytes sent per bulk sample.
    pub bulk_bytes: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            runs: 10,
            warmup: Duration::from_millis(200),
            sample_target: Duration::from_millis(100),
            bulk_bytes: 64 << 20,
        }
    }
}

/// Handshakes in batches sized to take about `sample_target`; a sample is the mean per
/// handshake of each side's time (full or resumed, as the scenario says).
pub struct HandshakeSampler<'a> {
    client: &'a dyn EndpointFactory,
    server: &'a dyn EndpointFactory,
    params: ConnParams,
    batch: u64,
}

impl<'a> HandshakeSampler<'a> {
    /// Handshakes per timed sample.
    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// Primes (a session to resume), warms up for `warmup`, and sizes the batch from it.
    pub fn warm(
        client: &'a dyn EndpointFactory,
        server: &'a dyn EndpointFactory,
        params: &ConnParams,
        warmup: Duration,
        sample_target: Duration,
    ) -> Result<Self, PairError> {
        pair::prime(client, server, params)?;
        let batch = handshake_batch(warmup, sample_target, params.handshake_period(), || {
            pair::handshake(client, server, params).map(drop)
        })?;
        Ok(HandshakeSampler {
            client,
            server,
            params: *params,
            batch,
        })
    }
}

/// Runs `handshake` for `warmup` (at least twice), then sizes a batch to take about
/// `sample_target` in whole periods of `period` (the cost that repeats: RSA blinding
/// renewals, so that with the re-warm handshake the renewal moves by one place per sample
/// and 32 of 33 samples hold one).
///
/// The batch is sized from a stretch after the warm-up. Sized from the warm-up itself, the
/// first cell of a process, whose first handshakes pay the process's one-time costs (lazy
/// initialisation, first-touch page faults: 20 ms and more), got batches of one handshake
/// where its partners got 19, and a sample of one handshake carries whatever ran before it
/// in full.
pub fn handshake_batch<E>(
    warmup: Duration,
    sample_target: Duration,
    period: u64,
    mut handshake: impl FnMut() -> Result<(), E>,
) -> Result<u64, E> {
    let start = Instant::now();
    let mut warm = 0u32;
    while warm < 2 || start.elapsed() < warmup {
        handshake()?;
        warm += 1;
    }
    let stretch = Instant::now();
    let mut n = 0u32;
    while n < 4 || stretch.elapsed() < warmup / 4 {
        handshake()?;
        n += 1;
    }
    let per = stretch.elapsed() / n;
    let batch = (sample_target.as_nanos() / per.as_nanos().max(1)).clamp(1, 100_000) as u64;
    Ok(batch.next_multiple_of(period))
}

/// Untimed handshakes before each timed batch. Paired cells take turns, so a sample starts
/// with the caches another cell's code and keys left behind; the first handshake after a
/// switch ran up to 45% over the others here. Timed, it made each per-round ratio depend on
/// what ran before the two cells (interquartile ranges up to 11% across cells; at most 5%
/// with it untimed). One handshake refills them; the batch then measures the warm cost a block of
/// one cell measures. It costs one handshake per sample, about 5% of a paired run.
pub const REWARM_HANDSHAKES: u32 = 1;

impl Sampler for HandshakeSampler<'_> {
    fn sample(&mut self) -> anyhow::Result<Sample> {
        for _ in 0..REWARM_HANDSHAKES {
            pair::handshake(self.client, self.server, &self.params)?;
        }
        let (mut client_ns, mut server_ns) = (0u64, 0u64);
        for _ in 0..self.batch {
            let p = pair::handshake(self.client, self.server, &self.params)?;
            client_ns += p.client_ns;
            server_ns += p.server_ns;
        }
        let n = self.batch as f64;
        Ok(vec![
            (Metric::ClientCpuNs, client_ns as f64 / n),
            (Metric::ServerCpuNs, server_ns as f64 / n),
            (
                Metric::HandshakesPerS,
                n * 1e9 / (client_ns + server_ns).max(1) as f64,
            ),
        ])
    }
}

/// Handshake samples: each is the mean over a batch of handshakes (full or resumed, as the
/// scenario says), per side.
pub fn handshakes(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let mut sampler =
        HandshakeSampler::warm(client, server, params, budget.warmup, budget.sample_target)?;
    for _ in 0..budget.runs {
        on_sample(sampler.sample()?);
    }
    Ok(())
}

/// Bulk data client to server over one connection in writes of the scenario's size; a sample
/// is `bytes` sent, the client's time giving the send rate and the server's the receive rate.
pub struct BulkSampler {
    stream: BulkStream,
    bytes: usize,
}

impl BulkSampler {
    /// Handshakes, warms up for `warmup`, and sizes a sample to take about `sample_target`
    /// (whole writes), or to `fixed_bytes` when given.
    pub fn warm(
        client: &dyn EndpointFactory,
        server: &dyn EndpointFactory,
        params: &ConnParams,
        write_size: usize,
        warmup: Duration,
        size: BulkSize,
    ) -> Result<Self, PairError> {
        let mut stream = BulkStream::open(client, server, params, write_size)?;
        let chunk = (1usize << 20).max(write_size);
        let start = Instant::now();
        let mut sent = 0usize;
        while sent == 0 || start.elapsed() < warmup {
            stream.send(&mut Clock::default(), chunk)?;
            sent += chunk;
        }
        let bytes = match size {
            BulkSize::Bytes(b) => b,
            BulkSize::Time(target) => {
                // Sized after the warm-up, as handshake batches are (see `HandshakeSampler`).
                let stretch = Instant::now();
                let mut sent = 0usize;
                while sent < 2 * chunk || stretch.elapsed() < warmup / 4 {
                    stream.send(&mut Clock::default(), chunk)?;
                    sent += chunk;
                }
                let per_byte = stretch.elapsed().as_secs_f64() / sent as f64;
                let writes = (target.as_secs_f64() / per_byte / write_size as f64).ceil();
                write_size * (writes as usize).clamp(1, (1 << 30) / write_size.max(1))
            }
        };
        Ok(BulkSampler { stream, bytes })
    }
}

/// How much a bulk sample sends: a fixed amount, or about as much as takes this long.
#[derive(Debug, Clone, Copy)]
pub enum BulkSize {
    Bytes(usize),
    Time(Duration),
}

/// Bytes sent untimed before each bulk sample, for the reason of [`REWARM_HANDSHAKES`]: the
/// key schedule and tables of the cipher, and the library's record path, come back into cache.
pub const REWARM_BYTES: usize = 64 * 1024;

impl Sampler for BulkSampler {
    fn sample(&mut self) -> anyhow::Result<Sample> {
        let writes = REWARM_BYTES.div_ceil(self.stream.write_size.max(1));
        self.stream
            .send(&mut Clock::default(), writes * self.stream.write_size)?;
        let mut clock = Clock::default();
        self.stream.send(&mut clock, self.bytes)?;
        // bytes per ns * 1e3 = MB/s with MB = 10^6 bytes.
        let bytes = self.bytes as f64;
        Ok(vec![
            (
                Metric::SendMbPerS,
                bytes * 1e3 / clock.client_ns.max(1) as f64,
            ),
            (
                Metric::RecvMbPerS,
                bytes * 1e3 / clock.server_ns.max(1) as f64,
            ),
        ])
    }
}

/// Bulk samples: client to server over one connection, `budget.bulk_bytes` per sample in
/// writes of `write_size`; the client's time is the send rate, the server's the receive rate.
pub fn bulk(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    write_size: usize,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let size = BulkSize::Bytes(budget.bulk_bytes);
    let mut sampler = BulkSampler::warm(client, server, params, write_size, budget.warmup, size)?;
    for _ in 0..budget.runs {
        on_sample(sampler.sample()?);
    }
    Ok(())
}

/// One connection carrying bulk data client to server in writes of a fixed size, the
/// receiver reading each write before the next.
struct BulkStream {
    pair: Pair,
    payload: PageOffsetBuf,
    sink: PageOffsetBuf,
    write_size: usize,
}

/// A buffer that starts at a chosen offset within a page, whatever the allocator.
pub(crate) struct PageOffsetBuf {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl PageOffsetBuf {
    pub(crate) fn new(len: usize, page_offset: usize, fill: u8) -> PageOffsetBuf {
        let buf = vec![fill; len + 8192];
        let start = (page_offset + 4096 - buf.as_ptr() as usize % 4096) % 4096;
        PageOffsetBuf { buf, start, len }
    }
    pub(crate) fn get(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }
    pub(crate) fn get_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

/// Where in its page the application's buffers (what is sent, where it is received) start.
/// Fixed, so that no allocator decides it: glibc's memcpy copies 16 KiB about 15 times slower
/// when the destination lies a few bytes past the source modulo 4 KiB (measured by
/// `--measure ceiling` as `aliased_copy_mb_per_s`), and rustls copies each record's
/// plaintext to 5 bytes into a fresh block, which jemalloc and mimalloc align to a page: a
/// page-aligned payload then cuts rustls's send rate to a third on those allocators. The
/// copy is slow for any destination up to ~200 bytes past the source that is not a multiple
/// of 32 (13 bytes: 3,100 MB/s; 59: 16,500; 64: 88,000), and libraries read records from
/// and write them to page-aligned blocks a few bytes in, so the middle of a page is the
/// place no library's record buffer lies just before or just behind.
pub const APP_BUFFER_PAGE_OFFSET: usize = 2048;

impl BulkStream {
    fn open(
        client: &dyn EndpointFactory,
        server: &dyn EndpointFactory,
        params: &ConnParams,
        write_size: usize,
    ) -> Result<BulkStream, PairError> {
        Ok(BulkStream {
            pair: pair::handshake(client, server, params)?,
            payload: PageOffsetBuf::new(write_size, APP_BUFFER_PAGE_OFFSET, 0x5a),
            sink: PageOffsetBuf::new(write_size.clamp(1, 64 * 1024), APP_BUFFER_PAGE_OFFSET, 0),
            write_size,
        })
    }

    /// Sends `bytes`, each side's calls made through `meter`.
    fn send(&mut self, meter: &mut impl Meter, bytes: usize) -> Result<(), PairError> {
        self.pair.transfer_metered(
            meter,
            Side::Client,
            bytes,
            self.write_size,
            self.payload.get(),
            self.sink.get_mut(),
            |_| {},
        )
    }
}

/// OS counters per side (`crate::counters`): each sample is the work of one timed sample
/// (a batch of handshakes sized the same way), every call between two `getrusage` calls; the
/// figures are per handshake.
pub fn handshake_counters(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let sampler =
        HandshakeSampler::warm(client, server, params, budget.warmup, budget.sample_target)?;
    let n = sampler.batch as f64;
    for _ in 0..budget.runs {
        let mut m = CounterMeter::default();
        for _ in 0..sampler.batch {
            pair::handshake_metered(&mut m, client, server, params)?;
        }
        on_sample(vec![
            (Metric::ClientPageFaults, m.client.page_faults as f64 / n),
            (Metric::ServerPageFaults, m.server.page_faults as f64 / n),
            (
                Metric::ClientContextSwitches,
                m.client.context_switches as f64 / n,
            ),
            (
                Metric::ServerContextSwitches,
                m.server.context_switches as f64 / n,
            ),
        ]);
    }
    Ok(())
}

/// OS counters per side over bulk data client to server, `budget.bulk_bytes` per sample in
/// the scenario's writes; the figures are per MiB sent (client) and received (server).
pub fn bulk_counters(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    write_size: usize,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let size = BulkSize::Bytes(budget.bulk_bytes);
    let mut sampler = BulkSampler::warm(client, server, params, write_size, budget.warmup, size)?;
    let mib = budget.bulk_bytes as f64 / f64::from(1u32 << 20);
    heap::set_tracking(true);
    let sampled = (0..budget.runs).try_for_each(|_| -> anyhow::Result<()> {
        let mut m = CounterMeter::default();
        sampler.stream.send(&mut m, sampler.bytes)?;
        let per_mib = |count: u64| count as f64 / mib;
        on_sample(vec![
            (Metric::SendPageFaultsPerMib, per_mib(m.client.page_faults)),
            (Metric::RecvPageFaultsPerMib, per_mib(m.server.page_faults)),
            (
                Metric::SendContextSwitchesPerMib,
                per_mib(m.client.context_switches),
            ),
            (
                Metric::RecvContextSwitchesPerMib,
                per_mib(m.server.context_switches),
            ),
            (Metric::SendColdBlocksPerMib, per_mib(m.client.cold_blocks)),
            (Metric::RecvColdBlocksPerMib, per_mib(m.server.cold_blocks)),
        ]);
        Ok(())
    });
    // Off however the samples ended: a failed send must not leave every later call tracked.
    heap::set_tracking(false);
    sampled
}

/// Where each side's time goes in a bulk transfer (`crate::profile`): perf attached to this
/// thread for the whole cell (it attaches during the warm-up), every call of each side
/// logged, each sample a transfer of about `budget.sample_target`, and then every perf
/// sample charged to the side whose call it fell in: the sender's shares are the client's.
/// `Ok(Some(reason))`: perf could not name enough of the functions for shares to mean
/// anything (a stripped library), so the cell is unsupported, with the objects named.
pub fn bulk_profile(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    write_size: usize,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<Option<String>> {
    use crate::profile::{
        attribute, bulk_class, CallLog, PerfRecording, Tally, ATTACH, MAX_UNNAMED,
    };
    let perf = PerfRecording::start()?;
    let size = BulkSize::Time(budget.sample_target);
    let warmup = budget.warmup.max(ATTACH);
    let mut sampler = BulkSampler::warm(client, server, params, write_size, warmup, size)?;
    let mut log = CallLog::default();
    for k in 0..budget.runs {
        log.sample = k;
        sampler.stream.send(&mut log, sampler.bytes)?;
    }
    let tally: Tally = attribute(&log.calls, &perf.finish()?, budget.runs, bulk_class);
    let mut samples = Vec::with_capacity(tally.len());
    for (k, sides) in tally.iter().enumerate() {
        let mut values = Vec::with_capacity(10);
        for (t, side, metrics) in [
            (&sides[0], "sender", Metric::SEND_PROFILE),
            (&sides[1], "receiver", Metric::RECV_PROFILE),
        ] {
            let n = t.total();
            anyhow::ensure!(
                n >= MIN_PROFILE_SAMPLES,
                "perf charged only {n} samples to the {side}'s calls in sample {k} (at least {MIN_PROFILE_SAMPLES} needed): it may have attached late, or may not sample this thread"
            );
            if t.unnamed_share() > MAX_UNNAMED {
                return Ok(Some(format!(
                    "perf could not name the functions of {:.0}% of the {side}'s samples, in {}: a library without a symbol table (as Debian ships its libcrypto) hides its cipher among the rest",
                    t.unnamed_share() * 100.0,
                    t.unnamed_in.join(", ")
                )));
            }
            values.extend(metrics.iter().copied().zip(t.shares()));
        }
        samples.push(values);
    }
    samples.into_iter().for_each(&mut on_sample);
    Ok(None)
}

/// Fewer perf samples than this on one side make shares coarser than 1 in 20.
const MIN_PROFILE_SAMPLES: u32 = 100;

/// Where each side's handshake time goes (`--measure profile` on a handshake scenario): perf
/// samples the thread while batches of handshakes run, each sample charged to the side whose
/// call it fell in and classed by its function's name as the instruction split classes
/// functions, plus the kernel. A sample's figures are each class's share of the side's perf
/// samples; a stripped library's code is its own class, unnamed, which the report weighs.
/// With `floor`, each sample also runs the side's crypto floor (the floor run's operations
/// through the library's own API, each side's inside its calls to the meter it is given:
/// `crate::floor::FloorSampler::run_metered`) and splits it by the same classes, so that the
/// time above the floor can be split class by class; a side whose floor perf sampled too
/// thinly has no floor figures, said on stderr.
pub fn handshake_profile(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    budget: &Budget,
    mut floor: Option<impl FnMut(&mut crate::profile::CallLog) -> anyhow::Result<()>>,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    use crate::profile::{
        attribute, handshake_class, CallLog, PerfRecording, Tally, ATTACH, TIME_CLASSES,
    };
    let perf = PerfRecording::start()?;
    let warmup = budget.warmup.max(ATTACH);
    let sampler = HandshakeSampler::warm(client, server, params, warmup, budget.sample_target)?;
    let mut log = CallLog::default();
    let mut floor_log = CallLog::default();
    for k in 0..budget.runs {
        log.sample = k;
        for _ in 0..sampler.batch() {
            pair::handshake_metered(&mut log, client, server, params)?;
        }
        if let Some(run_floor) = floor.as_mut() {
            floor_log.sample = k;
            run_floor(&mut floor_log)?;
        }
    }
    let perf = perf.finish()?;
    let tally: Tally<TIME_CLASSES> = attribute(&log.calls, &perf, budget.runs, handshake_class);
    let floor_tally: Option<Tally<TIME_CLASSES>> = floor
        .is_some()
        .then(|| attribute(&floor_log.calls, &perf, budget.runs, handshake_class));
    // A side's floor is split in every sample or in none, so that its records hold a figure
    // for each sample.
    let floor_sides: [bool; 2] = [Side::Client, Side::Server].map(|side| {
        let Some(t) = &floor_tally else {
            return false;
        };
        let fewest = t.iter().map(|s| s[side.index()].total()).min().unwrap_or(0);
        if fewest < MIN_PROFILE_SAMPLES {
            eprintln!(
                "the {side}'s crypto floor got as few as {fewest} perf samples in a sample (at least {MIN_PROFILE_SAMPLES} needed): no floor split for it"
            );
        }
        fewest >= MIN_PROFILE_SAMPLES
    });
    let mut samples = Vec::with_capacity(tally.len());
    for (k, sides) in tally.iter().enumerate() {
        let mut values = Vec::with_capacity(4 * TIME_CLASSES);
        for (t, side) in sides.iter().zip([Side::Client, Side::Server]) {
            let n = t.total();
            anyhow::ensure!(
                n >= MIN_PROFILE_SAMPLES,
                "perf charged only {n} samples to the {side}'s handshake calls in sample {k} (at least {MIN_PROFILE_SAMPLES} needed): give each sample more time (--sample-ms), or perf may have attached late"
            );
            values.extend(
                Metric::time_split_of(side)
                    .into_iter()
                    .zip(t.class_shares()),
            );
            if let (true, Some(f)) = (floor_sides[side.index()], &floor_tally) {
                values.extend(
                    Metric::floor_split_of(side)
                        .into_iter()
                        .zip(f[k][side.index()].class_shares()),
                );
            }
        }
        samples.push(values);
    }
    samples.into_iter().for_each(&mut on_sample);
    Ok(())
}

/// The stack's bulk rates and its own library's AEAD on the same records, sampled in turns
/// (the order alternating), so that each sample's share of the ceiling is a ratio of two
/// figures taken milliseconds apart: a bulk sample of about `budget.sample_target`, then
/// sealing and opening records for about as long, and the copy probes.
pub fn bulk_against_ceiling(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    bulk: &BulkScenario,
    aead: Box<dyn RecordAead>,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let (warmup, target) = (budget.warmup, budget.sample_target);
    let write = bulk.size.bytes();
    let mut stack = BulkSampler::warm(
        client,
        server,
        params,
        write,
        warmup,
        BulkSize::Time(target),
    )?;
    let mut own = CeilingSampler::warm(aead, aead::record_plaintext(bulk), warmup, target)?;
    for i in 0..budget.runs {
        let (rates, ceiling) = if i % 2 == 0 {
            let r = stack.sample()?;
            (r, own.sample()?)
        } else {
            let c = own.sample()?;
            (stack.sample()?, c)
        };
        let of = |s: &Sample, m: Metric| s.iter().find(|(x, _)| *x == m).map_or(0.0, |v| v.1);
        let share = |rate: Metric, ceil: Metric| of(&rates, rate) / of(&ceiling, ceil).max(1e-9);
        let mut values = rates.clone();
        values.extend(ceiling.iter().copied());
        values.push((
            Metric::SendShareOfSeal,
            share(Metric::SendMbPerS, Metric::SealMbPerS),
        ));
        values.push((
            Metric::RecvShareOfOpen,
            share(Metric::RecvMbPerS, Metric::OpenMbPerS),
        ));
        on_sample(values);
    }
    Ok(())
}

/// Handshakes counted per side under callgrind: each sample is `per_sample` handshakes, rounded
/// up to whole periods of the cost that repeats ([`ConnParams::handshake_period`]), with only
/// the client's calls collected, then as many with only the server's. Setup outside the calls
/// (the harness, the negotiated-parameter check) is never collected.
pub fn handshake_instructions(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    runs: usize,
    per_sample: u32,
    counter: &mut Counter,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    // Lazy initialisation (CPU feature probes, provider caches) happens once, uncounted.
    pair::prime(client, server, params)?;
    for _ in 0..2 {
        pair::handshake(client, server, params)?;
    }
    let n = per_sample_of(per_sample, params);
    for _ in 0..runs {
        let mut sample = Vec::new();
        for side in [Side::Client, Side::Server] {
            let (total, split) = counted_handshakes(counter, side, client, server, params, n)?;
            let per = |v: u64| v as f64 / f64::from(n);
            let (all, parts, locks) = Metric::split_of(side);
            sample.push((all, per(total)));
            sample.extend(split.per_handshake(parts, n));
            sample.push((locks, per(split.lock_calls)));
            sample.push((Metric::atomics_of(side), per(split.atomics)));
            // Only a library with the layer has figures for it (none is not zero).
            if split
                .instructions
                .get(&Class::Provider)
                .is_some_and(|&n| n > 0)
            {
                let (layer_locks, layer_atomics) = Metric::provider_locks_of(side);
                sample.push((layer_locks, split.provider_lock_calls / f64::from(n)));
                sample.push((layer_atomics, split.provider_atomics / f64::from(n)));
            }
        }
        on_sample(sample);
    }
    Ok(())
}

/// `n` TCP handshakes with only `side`'s calls collected: their instructions, and the split.
pub(crate) fn counted_handshakes(
    counter: &mut Counter,
    side: Side,
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    n: u32,
) -> anyhow::Result<(u64, crate::split::Split)> {
    counter.zero();
    for _ in 0..n {
        pair::handshake_metered(&mut counter.side(side), client, server, params)?;
    }
    counter.take_split(&format!("{side} x{n}"))
}

/// Handshakes a side per counted sample: `asked`, at least as many as a mean over the
/// handshake's operations needs ([`min_handshakes`]: ML-DSA signs in a loop of varying
/// length), rounded up to whole periods of the cost that repeats, so that every sample holds
/// as many renewals as the next.
pub(crate) fn per_sample_of(asked: u32, params: &ConnParams) -> u32 {
    let period = u32::try_from(params.handshake_period()).unwrap_or(u32::MAX);
    asked.max(min_handshakes(params)).next_multiple_of(period)
}

/// Bulk counted per side under callgrind: each sample sends `budget.bulk_bytes` client to
/// server with the sender's calls collected, then again with the receiver's.
pub fn bulk_instructions(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    write_size: usize,
    budget: &Budget,
    counter: &mut Counter,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let mut stream = BulkStream::open(client, server, params, write_size)?;
    stream.send(&mut Clock::default(), write_size * 4)?;
    let mib = budget.bulk_bytes as f64 / f64::from(1u32 << 20);
    for _ in 0..budget.runs {
        let mut per_side = [0.0; 2];
        for (slot, side) in per_side.iter_mut().zip([Side::Client, Side::Server]) {
            counter.zero();
            stream.send(&mut counter.side(side), budget.bulk_bytes)?;
            *slot = counter.take(&format!("{side} bulk"))? as f64 / mib;
        }
        on_sample(vec![
            (Metric::SendInstrPerMib, per_side[0]),
            (Metric::RecvInstrPerMib, per_side[1]),
        ]);
    }
    Ok(())
}

/// What a memory sample's transport reserves per queue before counting starts: a full TLS
/// record with room to spare, more than any handshake flight of the test certificates.
const MEMORY_QUEUE_BYTES: usize = 20 * 1024;
/// What each side sends after the handshake, as the published memory comparisons do.
pub const MEMORY_IO_BYTES: usize = 1024;

/// Heap per connection, one sample per run: `sessions` client+server pairs are handshaken
/// in turn and all kept alive, then each sends 1 KiB each way. A side is charged with the net
/// heap its own calls left allocated (a [`HeapMeter`] around each call), so a cross-library
/// pair says which side costs what. The harness's queues are allocated before counting and
/// must not grow; the binary must count allocations (see `heap`).
pub fn memory(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    sessions: usize,
    runs: usize,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    ensure_heap_counted()?;
    // Lazy initialisation (tables, provider caches) is the library's, not a session's.
    pair::handshake(client, server, params)?;
    for _ in 0..runs {
        let heap = memory_sample(client, server, params, sessions)?;
        let per = |bytes: i64| bytes as f64 / sessions as f64;
        on_sample(vec![
            (Metric::ClientHeapBytes, per(heap.handshaken.client_bytes)),
            (Metric::ServerHeapBytes, per(heap.handshaken.server_bytes)),
            (
                Metric::ClientHeapBytesAfterIo,
                per(heap.after_io.client_bytes),
            ),
            (
                Metric::ServerHeapBytesAfterIo,
                per(heap.after_io.server_bytes),
            ),
        ]);
    }
    Ok(())
}

/// Fails unless this binary counts allocations (see `heap`).
pub fn ensure_heap_counted() -> anyhow::Result<()> {
    anyhow::ensure!(
        heap::AVAILABLE,
        "this binary does not count allocations (built without tlsmatrix-measure's heap-accounting)"
    );
    Ok(())
}

/// What `sessions` live connections hold, each side's total: after their handshakes, and
/// after 1 KiB each way besides.
pub struct HeapHeld {
    pub handshaken: HeapMeter,
    pub after_io: HeapMeter,
}

/// One memory sample over TCP (see [`memory`]).
pub fn memory_sample(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    sessions: usize,
) -> anyhow::Result<HeapHeld> {
    let payload = vec![0x5au8; MEMORY_IO_BYTES];
    let mut sink = vec![0u8; MEMORY_IO_BYTES];
    let mut pairs: Vec<Pair> = Vec::with_capacity(sessions);
    let transports: Vec<(MemIo, MemIo)> = (0..sessions)
        .map(|_| MemIo::pair_reserved(MEMORY_QUEUE_BYTES))
        .collect();
    let probes: Vec<Probe> = transports.iter().map(|(c, _)| c.probe()).collect();
    let queue_bytes = || probes.iter().map(Probe::capacity).sum::<usize>();
    let reserved = queue_bytes();
    let mut meter = HeapMeter::default();
    heap::set_counting(true);
    for io in transports {
        let (c, s) = pair::handshake_over(&mut meter, client, server, params, io)?;
        pairs.push(Pair {
            client: c,
            server: s,
            client_ns: 0,
            server_ns: 0,
        });
    }
    let handshaken = meter;
    for p in &mut pairs {
        for from in [Side::Client, Side::Server] {
            let n = MEMORY_IO_BYTES;
            p.transfer_metered(&mut meter, from, n, n, &payload, &mut sink, |_| {})?;
        }
    }
    heap::set_counting(false);
    let grown = queue_bytes() - reserved;
    anyhow::ensure!(
        grown == 0,
        "the harness's queues grew by {grown} bytes during the measurement"
    );
    Ok(HeapHeld {
        handshaken,
        after_io: meter,
    })
}

/// Builds one thread's client and server factories (endpoints are bound to their thread).
pub type MakeFactories<'a> =
    dyn Fn() -> anyhow::Result<(Box<dyn EndpointFactory>, Box<dyn EndpointFactory>)> + Sync + 'a;

/// Handshake throughput with `threads` threads, each handshaking its own pairs one after
/// another. Samples are windows of `budget.sample_target` wall time that every thread keeps
/// to by the clock (no barrier, so a thread that fails cannot hang the others); a window's
/// figures are the threads' rates summed: handshakes per second of wall time, and what the
/// server side alone would sustain (handshakes over the time the server calls took).
pub fn throughput(
    make: &MakeFactories,
    params: &ConnParams,
    threads: usize,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let window = budget.sample_target;
    // Room for every thread to build its factories before the warm-up ends.
    let first = Instant::now() + budget.warmup + Duration::from_millis(100);
    let per_thread: Vec<anyhow::Result<Vec<WindowTally>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| s.spawn(|| thread_windows(make, params, first, window, budget.runs)))
            .collect();
        joined(handles)
    });
    let tallies: Vec<Vec<WindowTally>> = per_thread.into_iter().collect::<anyhow::Result<_>>()?;
    for run in 0..budget.runs {
        let (mut wall_rate, mut server_rate) = (0.0, 0.0);
        for t in &tallies {
            let w = &t[run];
            wall_rate += w.handshakes as f64 * 1e9 / w.wall_ns.max(1) as f64;
            server_rate += w.handshakes as f64 * 1e9 / w.server_ns.max(1) as f64;
        }
        on_sample(vec![
            (Metric::ThroughputPerS, wall_rate),
            (Metric::ServerCapacityPerS, server_rate),
        ]);
    }
    Ok(())
}

/// Each scoped thread's result, a panic as an error.
pub(crate) fn joined<T>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, anyhow::Result<T>>>,
) -> Vec<anyhow::Result<T>> {
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a thread panicked")))
        })
        .collect()
}

struct WindowTally {
    handshakes: u64,
    wall_ns: u64,
    server_ns: u64,
}

/// One thread's share: warm up until `first`, then handshake through `runs` windows.
fn thread_windows(
    make: &MakeFactories,
    params: &ConnParams,
    first: Instant,
    window: Duration,
    runs: usize,
) -> anyhow::Result<Vec<WindowTally>> {
    let (client, server) = make()?;
    let (c, s) = (client.as_ref(), server.as_ref());
    pair::prime(c, s, params)?;
    while Instant::now() < first {
        pair::handshake(c, s, params)?;
    }
    let mut out = Vec::with_capacity(runs);
    for k in 0..runs {
        let end = first + window * (k as u32 + 1);
        let start = Instant::now().max(first + window * k as u32);
        let mut tally = WindowTally {
            handshakes: 0,
            wall_ns: 0,
            server_ns: 0,
        };
        // At least one handshake, even in a window a busy machine let this thread miss.
        while Instant::now() < end || tally.handshakes == 0 {
            let p = pair::handshake(c, s, params)?;
            tally.handshakes += 1;
            tally.server_ns += p.server_ns;
        }
        tally.wall_ns = start.elapsed().as_nanos() as u64;
        out.push(tally);
    }
    Ok(out)
}

/// Wire samples: `budget.runs` traced connections (handshake, request, response) after a
/// warm-up, each checked against the round trips its protocol allows. A sample holds the
/// wire figures and the CPU both sides spent until the response; returns the median trace.
pub fn wire(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<tlsmatrix_model::trace::Trace> {
    pair::prime(client, server, params)?;
    let start = Instant::now();
    while start.elapsed() < budget.warmup {
        flights::trace(client, server, params)?;
    }
    let mut traces = Vec::with_capacity(budget.runs);
    for _ in 0..budget.runs {
        let t = flights::trace(client, server, params)?;
        tlsmatrix_model::trace::check_round_trips(params, &t)?;
        let f = t.figures();
        let cpu: u64 = t.flights.iter().map(|f| f.cpu_ns).sum::<u64>() + t.tail_ns;
        on_sample(vec![
            (Metric::ClientWireBytes, f.client_bytes as f64),
            (Metric::ServerWireBytes, f.server_bytes as f64),
            (Metric::ClientFlights, f.client_flights as f64),
            (Metric::ServerFlights, f.server_flights as f64),
            (Metric::ClientHelloBytes, f.client_hello_bytes as f64),
            (Metric::LargestFlightBytes, f.largest_flight_bytes as f64),
            (Metric::ClientReadyRtts, f.client_ready_rtts),
            (Metric::ServerReadyRtts, f.server_ready_rtts),
            (Metric::PathCpuNs, cpu as f64),
        ]);
        traces.push(t);
    }
    tlsmatrix_model::trace::median_trace(&traces).ok_or_else(|| {
        let shapes: Vec<String> = traces
            .iter()
            .map(|t| tlsmatrix_model::trace::describe(&t.flights))
            .collect();
        anyhow::anyhow!(
            "the connections' flights changed shape from one to the next: {}",
            shapes.join(" / ")
        )
    })
}

/// What ending a connection costs each side (`--measure teardown`): after a handshake that is
/// not timed, the client sends close_notify, the server reads it and sends its own, the client
/// reads that, and each side's connection is freed, every call timed on its side's clock. A
/// sample is a batch of connections sized, handshakes included, to `budget.sample_target`;
/// its figures are ns per connection.
pub fn teardowns(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let one = |clock: &mut Clock| teardown(pair::handshake(client, server, params)?, clock);
    let n = crate::batch::Batch::warm(budget.warmup, budget.sample_target, || {
        one(&mut Clock::default())
    })?
    .n;
    let batch = |n: u32| -> anyhow::Result<Clock> {
        let mut clock = Clock::default();
        for _ in 0..n {
            one(&mut clock)?;
        }
        Ok(clock)
    };
    for _ in 0..budget.runs {
        let clock = batch(n)?;
        let per = |ns: u64| ns as f64 / f64::from(n);
        on_sample(vec![
            (Metric::ClientTeardownNs, per(clock.client_ns)),
            (Metric::ServerTeardownNs, per(clock.server_ns)),
        ]);
    }
    Ok(())
}

/// One connection's end, each side's calls on its clock.
fn teardown(pair: Pair, clock: &mut Clock) -> anyhow::Result<()> {
    let (mut c, mut s) = (pair.client, pair.server);
    let mut buf = [0u8; 64];
    clock.on(Side::Client, || c.close())?;
    let read = clock.on(Side::Server, || s.recv(&mut buf));
    peer_closed(Side::Server, read)?;
    clock.on(Side::Server, || s.close())?;
    let read = clock.on(Side::Client, || c.recv(&mut buf));
    peer_closed(Side::Client, read)?;
    clock.on(Side::Client, || drop(c));
    clock.on(Side::Server, || drop(s));
    Ok(())
}

/// A read that must have found the peer's close_notify.
fn peer_closed(side: Side, read: anyhow::Result<usize>) -> anyhow::Result<()> {
    match read {
        Err(e) if e.is::<tlsmatrix_harness::endpoint::PeerClosed>() => Ok(()),
        Err(e) => Err(e.context(format!("the {side} failed to read its peer's close_notify"))),
        Ok(n) => anyhow::bail!(
            "the {side} read {n} bytes where its peer's close_notify should have ended the stream"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::scenario::Scenario;

    fn params(id: &str) -> ConnParams {
        id.parse::<Scenario>().unwrap().params()
    }

    /// An RSA server's counted sample holds whole blinding periods; others count what is asked.
    #[test]
    fn a_counted_sample_holds_whole_periods() {
        let rsa = params("handshake-tls13-rsa-2048-x25519-full");
        let ecdsa = params("handshake-tls13-ecdsa-p256-x25519-full");
        assert_eq!(per_sample_of(8, &rsa), 32);
        assert_eq!(per_sample_of(33, &rsa), 64);
        assert_eq!(per_sample_of(8, &ecdsa), 8);
        assert_eq!(per_sample_of(0, &ecdsa), 1);
        // ML-DSA's signing loop runs a varying number of times: a mean over 8 moved 13%.
        let mldsa = params("handshake-tls13-mldsa44-x25519-full");
        assert_eq!(per_sample_of(8, &mldsa), 64);
        let resumed = params("handshake-tls13-ecdsa-p256-x25519-ticket");
        assert_eq!(per_sample_of(8, &resumed), 8);
    }
}
