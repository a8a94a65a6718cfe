//! Records for tests, built the one way every crate's tests share: a metric's samples spread
//! evenly around a centre, for one pair in one run, through [`Record::from_samples`] so the
//! statistics are the real ones.

use crate::record::{Env, Metric, Record};

/// A record under construction; [`RecordFixture::build`] makes it.
#[derive(Debug, Clone)]
pub struct RecordFixture {
    run: String,
    scenario: String,
    client: (String, String),
    server: (String, String),
    metric: Metric,
    samples: Vec<f64>,
    env: Env,
    paired: Option<(String, Vec<f64>)>,
}

/// `n` samples rising from `centre` by `step` of it each: `centre * (1 + step * i)`.
pub fn spread(centre: f64, n: u32, step: f64) -> Vec<f64> {
    (0..n)
        .map(|i| centre * (1.0 + step * f64::from(i)))
        .collect()
}

/// An impl's name and the version it reports (`"<name> 1"`).
fn versioned(name: &str) -> (String, String) {
    (name.to_string(), format!("{name} 1"))
}

impl RecordFixture {
    /// `metric` for impl `a` with itself in run `r`, a TLS 1.3 handshake scenario, eight
    /// samples 1% apart from `centre`.
    pub fn new(metric: Metric, centre: f64) -> RecordFixture {
        RecordFixture {
            run: "r".into(),
            scenario: "handshake-tls13-ecdsa-p256-x25519-full".into(),
            client: versioned("a"),
            server: versioned("a"),
            metric,
            samples: spread(centre, 8, 0.01),
            env: Env {
                timestamp: "2026-11-23T10:00:00Z".into(),
                command: "tlsmatrix run".into(),
                ..Env::default()
            },
            paired: None,
        }
    }

    pub fn run(mut self, run: &str) -> Self {
        self.run = run.into();
        self
    }

    pub fn scenario(mut self, scenario: &str) -> Self {
        self.scenario = scenario.into();
        self
    }

    /// The client and server, each reporting version `"<name> 1"`.
    pub fn pair(mut self, client: &str, server: &str) -> Self {
        self.client = versioned(client);
        self.server = versioned(server);
        self
    }

    /// The versions the client and server report.
    pub fn versions(mut self, client: &str, server: &str) -> Self {
        self.client.1 = client.into();
        self.server.1 = server.into();
        self
    }

    pub fn samples(mut self, samples: Vec<f64>) -> Self {
        self.samples = samples;
        self
    }

    pub fn env(mut self, env: Env) -> Self {
        self.env = env;
        self
    }

    /// Sampled in turns with `reference` with itself: this record's sample over the
    /// reference's, one ratio per round, the rounds spread over two blocks.
    pub fn paired_with(mut self, reference: &str, ratios: &[f64]) -> Self {
        self.paired = Some((reference.into(), ratios.to_vec()));
        self
    }

    pub fn build(self) -> Record {
        let paired = self
            .paired
            .map(|(reference, ratios)| crate::record::Paired {
                reference_client: reference.clone(),
                reference_server: reference,
                reference_scenario: None,
                blocks: (0..ratios.len() as u32).map(|i| i % 2).collect(),
                ratios,
            });
        let mut r = Record::from_samples(
            &self.run,
            &self.scenario,
            (&self.client.0, &self.client.1),
            (&self.server.0, &self.server.1),
            self.metric,
            self.samples,
            self.env,
        )
        .expect("a fixture has samples");
        r.paired = paired;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixture_is_a_real_record() {
        let r = RecordFixture::new(Metric::SendMbPerS, 100.0)
            .pair("x", "y")
            .samples(vec![99.0, 100.0, 101.0])
            .build();
        assert_eq!((r.client.as_str(), r.server_version.as_str()), ("x", "y 1"));
        assert_eq!(r.median, 100.0);
        assert_eq!(r.unit, "MB/s");
        assert!(r.ci_low <= r.median && r.median <= r.ci_high);
    }
}
