# Sourced by scripts/step and scripts/stage: how they print a step's time.
fmt() { # seconds -> "1m 05s" or "12.3 s"
  awk -v s="$1" 'BEGIN { if (s >= 60) printf "%dm %02ds", s / 60, s % 60; else printf "%.1f s", s }'
}
