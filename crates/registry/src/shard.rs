//! `--shard K/N`: a run's share of a plan.

/// Shard K of N: every Nth scenario of the plan, starting at the Kth. Whole scenarios go to a
/// shard, so the cells that are paired (a scenario's groups) always run together, and the
/// shards' results merge into one run (`tlsmatrix import`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 1, count: 1 }
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("'{s}' is not a shard; write K/N with 1 <= K <= N, e.g. 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// This shard's share of the scenarios, in their order.
    pub fn select<T: Copy>(self, all: &[T]) -> Vec<T> {
        all.iter()
            .enumerate()
            .filter(|(i, _)| *i as u32 % self.count == self.index - 1)
            .map(|(_, s)| *s)
            .collect()
    }
}
