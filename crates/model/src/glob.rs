//! `*` and `?` wildcard matching for scenario patterns; nothing else is special.

pub fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?'])
}

pub fn matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Iterative matcher with backtracking to the last `*`: linear in practice.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn wildcards() {
        let id = "handshake-tls13-ecdsa-p256-x25519-full";
        assert!(matches("handshake-tls13-*", id));
        assert!(matches("*", id));
        assert!(matches("*-x25519-*", id));
        assert!(matches("handshake-tls1?-ecdsa-p256-x25519-full", id));
        assert!(!matches("handshake-tls12-*", id));
        assert!(!matches("bulk*", id));
        assert!(matches(id, id));
        assert!(!matches("", id));
    }
}
