//! How long the rest of `make report` will take on a new machine, told once its first look is
//! on screen and again once its stacks are built: the phases of a reference run (a whole
//! `make report` on a new machine, its timings file as `scripts/stage` and `scripts/step`
//! wrote it) after that point, with the builds and the counted stages scaled by how long this
//! machine took for the work done so far against the reference: the Rust workspace, then the
//! other stacks' builds, a larger and later measure of a shared host whose speed drifts. Both
//! are CPU work on every core; the timed stages are not scaled, since their samples and
//! warm-ups are fixed in milliseconds.

use anyhow::{bail, Context, Result};

use crate::timings::{duration, Stage, Timings};

/// The first look's stage and the workspace's build step, as the timings name them.
const FIRST_LOOK: &str = "first-look";
const WORKSPACE: &str = "build rust-workspace";
/// The first timed stage: the counted stages end when it begins.
const TIMED: &str = "timed-suite";
/// A workspace build under this share of the reference's was a partial rebuild, not a
/// measure of the machine: the estimate is then left unscaled.
const LEAST_SCALE: f64 = 0.25;

/// A reference run's time after its first look, in three phases (seconds of wall time).
#[derive(Debug, Clone, PartialEq)]
pub struct Phases {
    /// The builds of the stacks with builds of their own.
    pub builds: f64,
    /// The counted stages, in their lanes beside each other.
    pub counted: f64,
    /// The timed stages, one after another.
    pub timed: f64,
}

impl Phases {
    /// The phases of a reference run: from its first look's end to its last build's end,
    /// from there to the timed suite's start, and from there to its last step's end.
    pub fn of(reference: &Timings) -> Result<Phases> {
        let span = |s: &Stage| {
            s.span()
                .with_context(|| format!("the reference's {} has no start time", s.name))
        };
        let find = |name: &str| {
            reference
                .stages
                .iter()
                .find(|s| s.name == name)
                .with_context(|| {
                    format!("the reference has no {name} step: it is not a new machine's whole run")
                })
        };
        let looked = span(find(FIRST_LOOK)?)?.1;
        let timed_from = span(find(TIMED)?)?.0;
        let mut built = looked;
        let mut last = timed_from;
        for s in &reference.stages {
            let (a, b) = span(s)?;
            // A build step inside the timed stages (`make bench-go` checks its builds are
            // up to date) is part of them.
            if s.is_build() && a >= looked && a < timed_from {
                built = built.max(b);
            }
            last = last.max(b);
        }
        // `built` starts at `looked`, so this also refuses a first look after the timed suite.
        if built > timed_from {
            bail!("the reference's steps are not in the main job's order (first look, builds, counted stages, timed stages)");
        }
        Ok(Phases {
            builds: built - looked,
            counted: timed_from - built,
            timed: last - timed_from,
        })
    }
}

/// How far this run has come: what the estimate is of, and what it is scaled by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Its first look is done: the builds, the counted and the timed stages are to come,
    /// scaled by the workspace build.
    FirstLook,
    /// Its stacks are built too: the counted and the timed stages are to come, scaled by the
    /// builds since the first look.
    Built,
}

impl Point {
    /// What this machine's speed is measured by at this point.
    fn measure(self) -> &'static str {
        match self {
            Point::FirstLook => "workspace build",
            Point::Built => "builds of the other stacks",
        }
    }

    /// Which of the reference's phases left are scaled by that measure.
    fn scaled(self) -> &'static str {
        match self {
            Point::FirstLook => "its builds and counted stages",
            Point::Built => "its counted stages",
        }
    }
}

/// The rest of this run, estimated from a reference run's phases.
#[derive(Debug, Clone, PartialEq)]
pub struct JobEstimate {
    pub point: Point,
    /// The reference's phases, as it took them.
    pub reference: Phases,
    /// This machine's time for the work done so far over the reference's (seconds), when this
    /// run did that work whole.
    pub scale: Option<(f64, f64)>,
    /// The phases left here: builds (none once built) and counted stages scaled, timed stages
    /// as they were.
    pub here: Phases,
    /// The reference's date and CPU, as its header gives them.
    pub reference_about: String,
}

impl JobEstimate {
    /// The estimate for the run whose timings so far are `now`.
    pub fn new(reference: &Timings, now: &Timings) -> Result<JobEstimate> {
        let phases = Phases::of(reference)?;
        let built_whole = |t: &Timings| {
            t.stages
                .iter()
                .find(|s| s.name == WORKSPACE && s.outcome == "built")
                .map(|s| s.seconds)
        };
        let (point, here, there) = match builds_since_first_look(now) {
            Some(built) => (Point::Built, Some(built), Some(phases.builds)),
            None => (Point::FirstLook, built_whole(now), built_whole(reference)),
        };
        let scale = match (here, there) {
            (Some(here), Some(there)) if there > 0.0 && here / there >= LEAST_SCALE => {
                Some((here, there))
            }
            _ => None,
        };
        let k = scale.map_or(1.0, |(here, there)| here / there);
        let about = |key: &str| {
            reference
                .about
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let reference_about = [
            about("started").map(|s| s.get(..10).unwrap_or(s)),
            about("cpu"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        Ok(JobEstimate {
            point,
            here: Phases {
                builds: match point {
                    Point::FirstLook => phases.builds * k,
                    Point::Built => 0.0,
                },
                counted: phases.counted * k,
                timed: phases.timed,
            },
            reference: phases,
            scale,
            reference_about,
        })
    }

    /// Seconds left, all phases together.
    pub fn total(&self) -> f64 {
        self.here.builds + self.here.counted + self.here.timed
    }

    /// Two lines for the terminal: the estimate, then where it comes from.
    pub fn render(&self) -> String {
        let minutes = |s: f64| format!("{:.0}", (s / 60.0).max(1.0));
        let h = &self.here;
        let builds = match self.point {
            Point::FirstLook => format!("the other stacks' builds {}, ", minutes(h.builds)),
            Point::Built => String::new(),
        };
        let mut out = format!(
            "the rest, estimated: about {} min ({builds}counted stages {}, timed stages {})\n",
            minutes(self.total()),
            minutes(h.counted),
            minutes(h.timed),
        );
        let whose = if self.reference_about.is_empty() {
            "a new machine's run".to_string()
        } else {
            format!("a new machine's run ({})", self.reference_about)
        };
        match self.scale {
            Some((here, there)) => out.push_str(&format!(
                "  from {whose}, {} scaled by this machine's {} ({} against {}); timed stages take the same time anywhere\n",
                self.point.scaled(),
                self.point.measure(),
                duration(here),
                duration(there)
            )),
            None => out.push_str(&format!(
                "  from {whose} as it took them: this run's {} took too little to say how fast this machine is (up to date, or a partial rebuild)\n",
                self.point.measure()
            )),
        }
        out
    }
}

/// How long this run's builds after its first look took, from the first look's end to the
/// last build step's end; `None` before any build step follows the first look (or without one).
fn builds_since_first_look(now: &Timings) -> Option<f64> {
    let looked = now.stages.iter().find(|s| s.name == FIRST_LOOK)?.span()?.1;
    now.stages
        .iter()
        .filter(|s| s.is_build())
        .filter_map(Stage::span)
        .filter(|&(a, _)| a >= looked)
        .map(|(_, b)| b - looked)
        .reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timings::parse;

    /// A new machine's run: the workspace 0-200 s, the first look 200-210, two builds
    /// 210-500 and 500-800, counted stages 800-1500 in two lanes, timed stages 1500-2100
    /// (with an up-to-date check of a build inside them).
    const REFERENCE: &str = "# started 2026-12-02T13:07:20Z\n# cpu AMD EPYC (2 cores)\n# epoch 1000.0\n\
        build rust-workspace\t200.0\tbuilt\t1000.0\nfirst-look\t10.0\texit 0\t1200.0\n\
        build rust-workspace\t0.3\tup to date\t1210.0\nbuild openssl-lib-3.5\t290.0\tbuilt\t1210.0\n\
        build driver-boringssl\t300.0\tbuilt\t1500.0\nconformance\t700.0\texit 0\t1800.0\n\
        instructions\t600.0\texit 0\t1800.0\ntimed-suite\t400.0\texit 0\t2500.0\n\
        go-benchmarks\t200.0\texit 0\t2900.0\nbuild driver-boringssl\t0.1\tup to date\t2901.0\n";

    #[test]
    fn a_reference_run_splits_into_builds_counted_and_timed_stages() {
        let p = Phases::of(&parse(REFERENCE).unwrap()).unwrap();
        assert_eq!(
            p,
            Phases {
                builds: 590.0,
                counted: 700.0,
                timed: 600.0
            }
        );
    }

    #[test]
    fn builds_and_counted_stages_scale_with_the_workspace_build_timed_stages_do_not() {
        let reference = parse(REFERENCE).unwrap();
        let slower = parse("# epoch 5000.0\nbuild rust-workspace\t500.0\tbuilt\t5000.0\n").unwrap();
        let e = JobEstimate::new(&reference, &slower).unwrap();
        assert_eq!(e.scale, Some((500.0, 200.0)));
        assert_eq!(e.here.builds, 590.0 * 2.5);
        assert_eq!(e.here.counted, 700.0 * 2.5);
        assert_eq!(e.here.timed, 600.0);
        assert_eq!(e.total(), (590.0 + 700.0) * 2.5 + 600.0);
        let text = e.render();
        assert!(text.starts_with("the rest, estimated: about 64 min (the other stacks' builds 25, counted stages 29, timed stages 10)\n"), "{text}");
        assert!(
            text.contains("(2026-12-02, AMD EPYC (2 cores))")
                && text.contains("(8 min 20 s against 3 min 20 s)"),
            "{text}"
        );
    }

    #[test]
    fn an_estimate_without_a_whole_workspace_build_is_left_unscaled_and_says_so() {
        let reference = parse(REFERENCE).unwrap();
        for now in [
            "build rust-workspace\t0.3\tup to date\t5000.0\n",
            // One crate compiled again: a partial rebuild, not the machine's speed.
            "build rust-workspace\t30.0\tbuilt\t5000.0\n",
        ] {
            let e = JobEstimate::new(&reference, &parse(now).unwrap()).unwrap();
            assert_eq!(e.scale, None, "{now}");
            assert_eq!(e.here, e.reference);
            assert!(e
                .render()
                .contains("workspace build took too little to say how fast"));
        }
    }

    #[test]
    fn once_built_the_counted_stages_scale_with_the_builds_since_the_first_look() {
        let reference = parse(REFERENCE).unwrap();
        // The workspace as fast as the reference's, the builds after the first look (which
        // ends at 5210) twice as slow: they end at 6390, 1,180 s against 590.
        let now = parse(
            "# epoch 5000.0\nbuild rust-workspace\t200.0\tbuilt\t5000.0\nfirst-look\t10.0\texit 0\t5200.0\n\
             build rust-workspace\t0.3\tup to date\t5210.0\nbuild openssl-lib-3.5\t580.0\tbuilt\t5210.0\n\
             build driver-boringssl\t600.0\tbuilt\t5790.0\n",
        )
        .unwrap();
        let e = JobEstimate::new(&reference, &now).unwrap();
        assert_eq!(e.point, Point::Built);
        assert_eq!(e.scale, Some((1180.0, 590.0)));
        assert_eq!(e.here.builds, 0.0);
        assert_eq!(e.here.counted, 1400.0);
        assert_eq!(e.here.timed, 600.0);
        let text = e.render();
        assert!(
            text.starts_with(
                "the rest, estimated: about 33 min (counted stages 23, timed stages 10)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("its counted stages scaled by this machine's builds of the other stacks (19 min 40 s against 9 min 50 s)"),
            "{text}"
        );
        // Builds that were all up to date say nothing of the machine.
        let quick = parse(
            "# epoch 5000.0\nfirst-look\t10.0\texit 0\t5200.0\nbuild driver-boringssl\t0.2\tup to date\t5210.0\n",
        )
        .unwrap();
        let e = JobEstimate::new(&reference, &quick).unwrap();
        assert_eq!((e.point, e.scale), (Point::Built, None));
        assert!(e
            .render()
            .contains("builds of the other stacks took too little to say"));
    }

    #[test]
    fn the_shipped_reference_is_a_new_machines_whole_run() {
        let t = parse(include_str!("../../../scripts/reference-timings.tsv")).unwrap();
        let p = Phases::of(&t).unwrap();
        assert!(
            p.builds > 60.0 && p.counted > 60.0 && p.timed > 60.0,
            "{p:?}"
        );
        assert!(t.about.iter().any(|(k, _)| k == "cpu"), "{:?}", t.about);
    }

    #[test]
    fn a_reference_that_is_not_a_new_machines_whole_run_is_refused() {
        let warm =
            "build rust-workspace\t0.3\tup to date\t1000.0\ntimed-suite\t400.0\texit 0\t1001.0\n";
        let e = Phases::of(&parse(warm).unwrap()).unwrap_err().to_string();
        assert!(e.contains("no first-look step"), "{e}");
        let unstarted = "first-look\t10.0\texit 0\ntimed-suite\t400.0\texit 0\n";
        let e = Phases::of(&parse(unstarted).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no start time"), "{e}");
        let shuffled = "timed-suite\t400.0\texit 0\t1000.0\nfirst-look\t10.0\texit 0\t1500.0\n";
        let e = Phases::of(&parse(shuffled).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("order"), "{e}");
    }
}
