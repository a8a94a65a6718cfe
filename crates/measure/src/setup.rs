//! What a connection costs beside its handshake (`--measure setup`): each side's context made
//! from the certificates and key in memory and dropped, and a connection object made from a
//! context and dropped with no byte exchanged. OpenSSL's own reference for the second is
//! perftools' `sslnew` (SSL_new and SSL_free in a loop); a library that does handshake work
//! when its object is made (rustls's client builds its ClientHello, key shares included) pays
//! it here too, which is what an application pays per connection either way.

use std::time::Instant;

use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::memio::MemIo;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::side::Side;

use crate::batch::Batch;
use crate::sample::Sample;
use crate::workload::Budget;

/// Makes one side's context as the cell's configuration says.
pub type MakeContext<'a> = dyn Fn(Side) -> anyhow::Result<Box<dyn EndpointFactory>> + 'a;

/// The four costs, each a batch sized to a quarter of the sample target after a warm-up.
pub fn costs(
    make: &MakeContext,
    budget: &Budget,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let share = budget.sample_target / 4;
    let context_batch = |side| Batch::warm(budget.warmup / 4, share, || make(side).map(drop));
    let (client_ctx, server_ctx) = (context_batch(Side::Client)?, context_batch(Side::Server)?);
    let (cf, sf) = (make(Side::Client)?, make(Side::Server)?);
    let connection_batch = |f: &dyn EndpointFactory| {
        Batch::warm(budget.warmup / 4, share, || connections(f, 1).map(drop))
    };
    let (client_conn, server_conn) = (
        connection_batch(cf.as_ref())?,
        connection_batch(sf.as_ref())?,
    );
    for _ in 0..budget.runs {
        on_sample(vec![
            (
                Metric::ClientContextNs,
                client_ctx.time(|| make(Side::Client).map(drop))?,
            ),
            (
                Metric::ServerContextNs,
                server_ctx.time(|| make(Side::Server).map(drop))?,
            ),
            (
                Metric::ClientConnectionNs,
                connections(cf.as_ref(), client_conn.n)?,
            ),
            (
                Metric::ServerConnectionNs,
                connections(sf.as_ref(), server_conn.n)?,
            ),
        ]);
    }
    Ok(())
}

/// Nanoseconds per connection object made and dropped, over `n` of them.
fn connections(factory: &dyn EndpointFactory, n: u32) -> anyhow::Result<f64> {
    let pipes: Vec<MemIo> = (0..n).map(|_| MemIo::pair().0).collect();
    let started = Instant::now();
    for io in pipes {
        drop(factory.endpoint(io)?);
    }
    Ok(started.elapsed().as_nanos() as f64 / f64::from(n))
}
