# Sourced by scripts/seed-target and scripts/seed-units: a cargo target folder copied to
# another place stands alone only once its build scripts' `output` files (link search paths,
# rerun-if-changed files) name the new place.
rebase_build_outputs() { # COPY ABS_FROM ABS_TO: rewrites ABS_FROM/ to ABS_TO/ in COPY's outputs
  find "$1/release/build" -maxdepth 2 -name output -type f | while read -r f; do
    # Each keeps its time: cargo takes a build script's output newer than its dependents'
    # builds as a reason to rebuild them all.
    when=$(stat -c %y "$f")
    sed -i "s|$2/|$3/|g" "$f"
    touch -d "$when" "$f"
  done
}
