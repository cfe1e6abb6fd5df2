#!/usr/bin/env bash
# The code's own rules, enforced (run by scripts/test.sh):
#   - clippy, warnings denied, on both crates; the extension crate's lints
#     (Cargo.toml: unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks) make every
#     unsafe operation an explicit block with a SAFETY comment;
#   - read from the syntax tree, whole files, test code skipped by item (pgprompt-lints,
#     its rules each shown failing by lints/tests/planted.rs): no function of either crate
#     over 80 lines; no arm that takes any wire or part kind (`_`, a binding, a tuple's
#     place) and no `matches!` on one, so a new wire or part kind is a compile error
#     wherever it must be decided; no code outside core/src/wire/ names a wire's variant;
#   - no import cycle among the files of either crate (scripts/module-cycles.py: per file);
#   - every file that names the version agrees with Cargo.toml (scripts/version-check.py);
#   - ARCHITECTURE.md places every Rust file of the three crates at its path
#     (scripts/architecture-map.py; tests/python/test_architecture_map.py plants errors);
#   - the core's documentation builds without a warning (a link to a private item or to
#     nothing is one), so the face's docs name only what a reader of the face can open.
#   - the 0.5.0 -> 0.6.0 update is what sql/updates/gen.py makes of today's SQL.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
PG_MAJOR=${PG_MAJOR:-15}

cargo clippy --quiet -p pgprompt-core --all-targets -- -D warnings
cargo clippy --quiet -p pgprompt --all-targets --no-default-features --features "pg$PG_MAJOR pg_test" -- -D warnings
cargo clippy --quiet -p pgprompt-lints --all-targets -- -D warnings
cargo test --quiet -p pgprompt-lints
cargo run --quiet -p pgprompt-lints -- 80 core/src src
python3 scripts/module-cycles.py core/src src
python3 scripts/version-check.py
python3 scripts/architecture-map.py
RUSTDOCFLAGS="-D warnings" cargo doc --quiet -p pgprompt-core --no-deps
python3 sql/updates/gen.py 0.5.0 0.6.0 sql/releases/pgprompt--0.6.0.sql --check
echo "lints: clean"
