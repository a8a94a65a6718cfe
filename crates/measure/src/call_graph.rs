//! A callgrind dump as a call graph: each function's own cost and each call's inclusive
//! cost, and what share of a function's work was done on behalf of a set of callers
//! (`reached_share`), as gprof shares a callee's time among its callers.

use std::collections::HashMap;

/// One function of a dump: its name and its own (self) cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Function {
    pub name: String,
    pub instructions: u64,
    /// Global bus events (atomic read-modify-writes), where the dump has them.
    pub atomics: u64,
}

/// One caller-callee pair: how often the caller called, and what those calls cost
/// inclusively (the callee and everything below it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Call {
    pub caller: usize,
    pub callee: usize,
    pub count: u64,
    pub inclusive: u64,
}

/// A dump's functions (by index) and calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    pub functions: Vec<Function>,
    pub calls: Vec<Call>,
}

impl Graph {
    /// Reads a callgrind dump (its first event is instructions). Names are compressed in
    /// dumps (`fn=(12) name` once, `fn=(12)` after), positions may be relative (`+3`, `-2`,
    /// `*`), trailing zeros of a cost line may be left out, and the cost line after a
    /// `calls=` line is that call's inclusive cost, which is no one's own cost.
    pub fn parse(text: &str) -> Graph {
        let mut graph = Graph::default();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut names: HashMap<String, String> = HashMap::new();
        let mut index_of = |graph: &mut Graph, spec: &str| -> usize {
            let name = expand(&mut names, spec);
            *by_name.entry(name.clone()).or_insert_with(|| {
                graph.functions.push(Function {
                    name,
                    ..Function::default()
                });
                graph.functions.len() - 1
            })
        };
        // Which column of a cost line holds the bus events, after the position: none unless
        // the `events:` line names them (`--collect-bus=yes`).
        let mut atomics_at = None;
        let mut current = None;
        let mut callee = None;
        let mut pending_calls: Option<u64> = None;
        for line in text.lines() {
            if let Some(events) = line.strip_prefix("events:") {
                atomics_at = events.split_whitespace().position(|e| e == "Ge");
                continue;
            }
            if let Some(spec) = line.strip_prefix("fn=") {
                current = Some(index_of(&mut graph, spec));
                continue;
            }
            if let Some(spec) = line.strip_prefix("cfn=") {
                callee = Some(index_of(&mut graph, spec));
                continue;
            }
            if let Some(calls) = line.strip_prefix("calls=") {
                pending_calls = Some(
                    calls
                        .split_whitespace()
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0),
                );
                continue;
            }
            let starts_cost = line
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == '+' || c == '-' || c == '*');
            if !starts_cost {
                continue;
            }
            let value = |at: usize| -> u64 {
                line.split_whitespace()
                    .nth(1 + at)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            let Some(caller) = current else {
                continue;
            };
            if let Some(count) = pending_calls.take() {
                if let Some(callee) = callee {
                    graph.calls.push(Call {
                        caller,
                        callee,
                        count,
                        inclusive: value(0),
                    });
                }
                continue;
            }
            let f = &mut graph.functions[caller];
            f.instructions += value(0);
            if let Some(at) = atomics_at {
                f.atomics += value(at);
            }
        }
        graph
    }

    /// Per function, the share of its work done on behalf of the functions `source` says
    /// are the source (share 1 each): a function's share is the inclusive cost of its calls
    /// from each caller weighted by that caller's share, over the inclusive cost of all its
    /// calls. Functions `cut` says stop the walk keep share 0 and pass none on (their work is
    /// their own, whoever asked). Iterated to a fixed point, so recursion settles.
    pub fn reached_share(
        &self,
        source: impl Fn(usize) -> bool,
        cut: impl Fn(usize) -> bool,
    ) -> Vec<f64> {
        let n = self.functions.len();
        let mut into = vec![0u64; n];
        for c in &self.calls {
            into[c.callee] += c.inclusive;
        }
        let mut share: Vec<f64> = (0..n).map(|i| if source(i) { 1.0 } else { 0.0 }).collect();
        for _ in 0..64 {
            let mut carried = vec![0.0; n];
            for c in &self.calls {
                if !cut(c.caller) {
                    carried[c.callee] += c.inclusive as f64 * share[c.caller];
                }
            }
            let mut moved = 0.0f64;
            for i in 0..n {
                if source(i) || cut(i) || into[i] == 0 {
                    continue;
                }
                let next = (carried[i] / into[i] as f64).min(1.0);
                moved = moved.max((next - share[i]).abs());
                share[i] = next;
            }
            if moved < 1e-9 {
                break;
            }
        }
        share
    }
}

/// A compressed name spec's name: `(12) name` defines 12, `(12)` uses it, anything else is
/// the name itself.
fn expand(names: &mut HashMap<String, String>, spec: &str) -> String {
    let spec = spec.trim();
    if let Some(rest) = spec.strip_prefix('(') {
        if let Some((id, name)) = rest.split_once(')') {
            let name = name.trim();
            if name.is_empty() {
                return names.get(id).cloned().unwrap_or_default();
            }
            names.insert(id.to_string(), name.to_string());
            return name.to_string();
        }
    }
    spec.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_costs_and_inclusive_calls_are_read_apart() {
        let dump = "version: 1\nevents: Ir Ge\n\
            fn=(1) a\n3 10\n+1 5 1\n\
            cfn=(2) b\ncalls=2 0\n+2 40 2\n\
            fn=(2)\n0 40 2\n\
            totals: 55 3\n";
        let g = Graph::parse(dump);
        assert_eq!(g.functions.len(), 2);
        assert_eq!(
            (g.functions[0].instructions, g.functions[0].atomics),
            (15, 1)
        );
        assert_eq!(
            (g.functions[1].instructions, g.functions[1].atomics),
            (40, 2)
        );
        assert_eq!(
            g.calls,
            [Call {
                caller: 0,
                callee: 1,
                count: 2,
                inclusive: 40
            }]
        );
    }

    #[test]
    fn a_callee_s_share_follows_its_callers_and_stops_at_a_cut() {
        // fetch (source) and parse (cut) both call lock; lock's calls from fetch cost 30 of
        // its 40. parse calls alloc, which no source reaches through a cut.
        let dump = "events: Ir\n\
            fn=(1) fetch\n0 5\ncfn=(2) lock\ncalls=3 0\n0 30\ncfn=(3) parse\ncalls=1 0\n0 20\n\
            fn=(3)\n0 10\ncfn=(2)\ncalls=1 0\n0 10\ncfn=(4) alloc\ncalls=1 0\n0 0\n\
            fn=(2)\n0 40\n\
            fn=(4)\n0 0\n";
        let g = Graph::parse(dump);
        let name = |i: usize| g.functions[i].name.as_str();
        let share = g.reached_share(|i| name(i) == "fetch", |i| name(i) == "parse");
        let of = |n: &str| share[g.functions.iter().position(|f| f.name == n).unwrap()];
        assert_eq!(of("fetch"), 1.0);
        assert_eq!(of("lock"), 0.75);
        assert_eq!(of("parse"), 0.0);
        assert_eq!(of("alloc"), 0.0);
    }

    #[test]
    fn recursion_settles() {
        // f (source) calls g; g calls itself: g is wholly f's.
        let dump = "events: Ir\n\
            fn=(1) f\n0 1\ncfn=(2) g\ncalls=1 0\n0 100\n\
            fn=(2)\n0 100\ncfn=(2)\ncalls=9 0\n0 90\n";
        let g = Graph::parse(dump);
        let share = g.reached_share(|i| i == 0, |_| false);
        assert!((share[1] - 1.0).abs() < 1e-6, "{share:?}");
    }
}
