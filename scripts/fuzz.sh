#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time, on the stable toolchain; exits
# non-zero when any target finds a crash, a hang (an input over FUZZ_TIMEOUT seconds), a leak or
# an input that needs more than FUZZ_RSS_MB of memory, and prints the target and the input's
# path. See fuzz/README.md for what each target checks and how to run one for longer.
#
#   bash scripts/fuzz.sh                       every target in fuzz/fuzz_targets, FUZZ_SECONDS each
#   bash scripts/fuzz.sh request_pipeline      only the targets named
#
# Environment (defaults in brackets):
#   FUZZ_SECONDS [30]        fuzzing time per target, after its seeds and regressions ran;
#                            the six targets (journal_recovery, batch_multipart,
#                            import_parsers, request_pipeline, object_text, aql_functions)
#                            run FUZZ_JOBS at a time: on CI's two cores three rounds, 90 s
#   FUZZ_JOBS [CPUs, <= 4]   targets fuzzed at the same time
#   FUZZ_TIMEOUT [15]        seconds one input may take (libFuzzer -timeout)
#   FUZZ_RSS_MB [2048]       memory one target may use (libFuzzer -rss_limit_mb, -malloc_limit_mb)
#   FUZZ_SANITIZER [address] address or none (cargo fuzz --sanitizer)
#   FUZZ_CODEGEN_UNITS [16]  16 builds in about two thirds of the time of 1, and runs the
#                            server targets about 40 % slower; use 1 for long runs (changing it
#                            rebuilds everything)
#   FUZZ_TARGET_DIR [${XDG_CACHE_HOME:-~/.cache}/quince/fuzz-target]  where the instrumented
#                            build goes: outside the checkout, so a machine that runs the suite
#                            again (CI's, a developer's) rebuilds only Quince's crates, not every
#                            dependency (on two cores about 2.5 minutes instead of 7). Emptied
#                            first when it holds more than FUZZ_TARGET_MAX_GB [12] GiB.
#
# Stable Rust: -Zsanitizer=address is unstable, so the build runs with RUSTC_BOOTSTRAP=1, which
# lets stable rustc accept it (FUZZ_SANITIZER=none needs no such thing). cargo-fuzz is installed
# into ~/.cargo/bin when missing. Each target runs over a temporary copy of its seed corpus
# (fuzz/corpus/<target>) and its regression inputs (fuzz/regressions/<target>), so the tracked
# tree stays as it was; what a run finds is written to fuzz/artifacts/<target>/ (ignored by git).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
FUZZ_DIR="$ROOT/fuzz"
CARGO_FUZZ_VERSION=0.13.2

FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
FUZZ_TIMEOUT="${FUZZ_TIMEOUT:-15}"
FUZZ_RSS_MB="${FUZZ_RSS_MB:-2048}"
FUZZ_SANITIZER="${FUZZ_SANITIZER:-address}"
FUZZ_CODEGEN_UNITS="${FUZZ_CODEGEN_UNITS:-16}"
FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/quince/fuzz-target}"
FUZZ_TARGET_MAX_GB="${FUZZ_TARGET_MAX_GB:-12}"
cpus="$(nproc 2>/dev/null || echo 2)"
FUZZ_JOBS="${FUZZ_JOBS:-$((cpus < 4 ? cpus : 4))}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export RUST_BACKTRACE="${RUST_BACKTRACE:-1}"

log() { printf '==> %s\n' "$*"; }

# --- cargo-fuzz -------------------------------------------------------------------------------
export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo fuzz --version >/dev/null 2>&1; then
  log "installing cargo-fuzz $CARGO_FUZZ_VERSION into ~/.cargo/bin"
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION" --root "$HOME/.cargo"
fi
log "$(rustc --version), $(cargo fuzz --version)"

# --- the targets ------------------------------------------------------------------------------
if [[ $# -gt 0 ]]; then
  TARGETS=("$@")
else
  TARGETS=()
  for file in "$FUZZ_DIR"/fuzz_targets/*.rs; do
    TARGETS+=("$(basename "$file" .rs)")
  done
fi
for target in "${TARGETS[@]}"; do
  [[ -f "$FUZZ_DIR/fuzz_targets/$target.rs" ]] || { echo "no fuzz target '$target'" >&2; exit 2; }
done

# --- build, once ------------------------------------------------------------------------------
triple="$(rustc -vV | sed -n 's/^host: //p')"
bootstrap=()
[[ "$FUZZ_SANITIZER" != none ]] && bootstrap=(env RUSTC_BOOTSTRAP=1)
log "building ${#TARGETS[@]} targets (sanitizer $FUZZ_SANITIZER, $FUZZ_CODEGEN_UNITS codegen units)"
build_start=$SECONDS
mkdir -p "$FUZZ_TARGET_DIR"
# Each change of Quince's crates adds their artifacts to the cache; cargo never removes old ones.
if [[ "$(du -s --block-size=1G "$FUZZ_TARGET_DIR" | cut -f1)" -gt "$FUZZ_TARGET_MAX_GB" ]]; then
  log "emptying $FUZZ_TARGET_DIR (over ${FUZZ_TARGET_MAX_GB} GiB)"
  rm -rf "$FUZZ_TARGET_DIR"
  mkdir -p "$FUZZ_TARGET_DIR"
fi
build() {
  "${bootstrap[@]}" cargo fuzz build --fuzz-dir "$FUZZ_DIR" --target "$triple" \
    --target-dir "$FUZZ_TARGET_DIR" --sanitizer "$FUZZ_SANITIZER" \
    --codegen-units "$FUZZ_CODEGEN_UNITS" "$@"
}
if [[ $# -eq 0 ]]; then
  build # every target, in one cargo invocation
else
  for target in "${TARGETS[@]}"; do build "$target"; done
fi
log "built in $((SECONDS - build_start))s"
BIN_DIR="$FUZZ_TARGET_DIR/$triple/release"

# --- run --------------------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/quince-fuzz.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
# The request and import targets keep a server's data directory here (see fuzz/src/server.rs).
export QUINCE_FUZZ_TMPDIR="$WORK/servers"

# Fuzzes one target; its output goes to $WORK/<target>.log, its exit status to .status.
run_target() {
  local target="$1"
  local corpus="$WORK/$target/corpus" regressions="$WORK/$target/regressions"
  local artifacts="$FUZZ_DIR/artifacts/$target"
  mkdir -p "$corpus" "$regressions" "$artifacts"
  cp -R "$FUZZ_DIR/corpus/$target/." "$corpus/"
  if [[ -d "$FUZZ_DIR/regressions/$target" ]]; then
    cp -R "$FUZZ_DIR/regressions/$target/." "$regressions/"
  fi
  # libFuzzer adds new inputs to the first directory only; both are copies. The outer timeout
  # catches a hang libFuzzer's own -timeout cannot see (outside an input).
  local status=0
  timeout -k 10 $((FUZZ_SECONDS + 4 * FUZZ_TIMEOUT + 120)) \
    "$BIN_DIR/$target" "$corpus" "$regressions" \
    -max_total_time="$FUZZ_SECONDS" -timeout="$FUZZ_TIMEOUT" \
    -rss_limit_mb="$FUZZ_RSS_MB" -malloc_limit_mb="$FUZZ_RSS_MB" \
    -artifact_prefix="$artifacts/" -print_final_stats=1 \
    >"$WORK/$target.log" 2>&1 || status=$?
  echo "$status" >"$WORK/$target.status"
}

log "fuzzing each target for ${FUZZ_SECONDS}s, $FUZZ_JOBS at a time"
run_start=$SECONDS
for target in "${TARGETS[@]}"; do
  while [[ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]]; do
    wait -n || true
  done
  run_target "$target" &
done
wait

failed=0
for target in "${TARGETS[@]}"; do
  status="$(cat "$WORK/$target.status" 2>/dev/null || echo missing)"
  log="$WORK/$target.log"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  corpus="$(grep -Eo 'corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1 || true)"
  if [[ "$status" == 0 ]]; then
    printf '  %-20s passed  %10s inputs run, %s\n' "$target" "${execs:-?}" "${corpus:-corp: ?}"
    continue
  fi
  failed=$((failed + 1))
  artifacts="$FUZZ_DIR/artifacts/$target"
  cp "$log" "$artifacts/last-failure.log"
  input="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
  [[ "$status" == 124 || "$status" == 137 ]] && input="(none: the target hung outside an input)"
  printf '\n  %-20s FAILED (exit %s) after %s inputs\n' "$target" "$status" "${execs:-?}"
  printf '  input:  %s\n' "${input:-(none written; see the log)}"
  for regression in "$FUZZ_DIR/regressions/$target"/*; do
    if [[ -f "$input" && -f "$regression" ]] && cmp -s "$input" "$regression"; then
      printf '          the regression input %s\n' "${regression#"$ROOT"/}"
    fi
  done
  printf '  replay: %s %s\n' "${BIN_DIR#"$ROOT"/}/$target" "${input:-<input>}"
  printf '  log:    %s\n' "${artifacts#"$ROOT"/}/last-failure.log"
  # The panic and its stack when there is one; else (a sanitizer report, a hang, running out
  # of memory) the end of the log.
  if grep -q 'panicked at' "$log"; then
    sed -n '/panicked at/,/rust_fuzzer_test_input/p' "$log" | head -n 60 | sed 's/^/  | /'
  else
    tail -n 40 "$log" | sed 's/^/  | /'
  fi
  printf '\n'
done
log "fuzzed in $((SECONDS - run_start))s"
if [[ $failed -gt 0 ]]; then
  log "$failed of ${#TARGETS[@]} targets failed"
  exit 1
fi
log "all ${#TARGETS[@]} targets passed"
