# Sourced by scripts/step and scripts/stage: how they print a step's time.
fmt() { # seconds -> "1m 05s" or "12.3 s"
  awk -v s="$1" 'BEGIN { if (s >= 60) printf "%dm %02ds", s / 60, s % 60; else printf "%.1f s", s }'
}
# The CPU seconds (user + system) of the processes this shell has waited for, from bash's
# `times`, into $cpu: how much of the cores a step used, beside its wall time. (`times` in a
# command substitution would read a new subshell's, which has waited for nothing.)
cpu_seconds() {
  local f
  f=$(mktemp)
  times >"$f"
  cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.1f", t }' "$f")
  rm -f "$f"
}
