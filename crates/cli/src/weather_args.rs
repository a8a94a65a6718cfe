//! `tlsmatrix weather`'s arguments; the experiment itself is `tlsmatrix_runner::weather_series`.

use std::path::PathBuf;

use tlsmatrix_model::scenario::Scenario;
use tlsmatrix_runner::weather_series::SeriesOptions;

#[derive(clap::Args)]
pub struct WeatherArgs {
    /// The impl to follow.
    #[arg(long = "impl", value_name = "NAME")]
    pub imp: String,
    /// The impl it is compared with.
    #[arg(long, default_value = "rustls-aws-lc", value_name = "NAME")]
    pub baseline: String,
    /// A timed handshake or bulk scenario id.
    #[arg(
        long,
        default_value = "handshake-tls12-ecdsa-p256-x25519-ticket",
        value_name = "ID"
    )]
    pub scenario: Scenario,
    /// How long to follow, in minutes (a turn takes about half a second).
    #[arg(long, default_value_t = 5.0, value_parser = parse_minutes)]
    pub minutes: f64,
    /// The CPU every turn runs on (default: the last this process may use).
    #[arg(long, value_name = "N")]
    pub core: Option<usize>,
    /// Where the test certificates are kept (made if missing).
    #[arg(long, default_value = "results/certs", value_name = "DIR")]
    pub certs: PathBuf,
    /// CSV file for every turn (replaced).
    #[arg(long, default_value = "results/weather.csv", value_name = "FILE")]
    pub out: PathBuf,
}

/// `--minutes`: a positive number of minutes, at most a day.
fn parse_minutes(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(m) if m > 0.0 && m <= 1440.0 => Ok(m),
        _ => Err(format!(
            "'{s}' is not a number of minutes between 0 and 1440"
        )),
    }
}

impl From<WeatherArgs> for SeriesOptions {
    fn from(a: WeatherArgs) -> SeriesOptions {
        SeriesOptions {
            imp: a.imp,
            baseline: a.baseline,
            scenario: a.scenario,
            minutes: a.minutes,
            core: a.core,
            certs: a.certs,
            out: a.out,
        }
    }
}
