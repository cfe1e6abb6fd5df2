#!/usr/bin/env bash
# The code's own rules, enforced (run by scripts/test.sh):
#   - clippy, warnings denied, on both crates; the extension crate's lints
#     (Cargo.toml: unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks) make every
#     unsafe operation an explicit block with a SAFETY comment;
#   - no function of either crate over 80 lines (tests aside);
#   - no import cycle among the files of either crate (scripts/module-cycles.py: per file);
#   - no match on a wire ends in a wildcard arm, and no code outside core/src/wire/ names a
#     wire's variant (scripts/wire-matches.py): a new wire is a compile error wherever it
#     must be decided, and it is decided in its folder;
#   - every file that names the version agrees with Cargo.toml (scripts/version-check.py);
#   - ARCHITECTURE.md names every Rust file of both crates (scripts/architecture-map.py);
#   - the core's documentation builds without a warning (a link to a private item or to
#     nothing is one), so the face's docs name only what a reader of the face can open.
#   - the 0.5.0 -> 0.6.0 update is what sql/updates/gen.py makes of today's SQL.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
PG_MAJOR=${PG_MAJOR:-15}

cargo clippy --quiet -p pgprompt-core --all-targets -- -D warnings
cargo clippy --quiet -p pgprompt --all-targets --no-default-features --features "pg$PG_MAJOR pg_test" -- -D warnings
python3 scripts/function-length.py core/src 80
python3 scripts/function-length.py src 80
python3 scripts/module-cycles.py core/src src
python3 scripts/wire-matches.py core/src src
python3 scripts/version-check.py
python3 scripts/architecture-map.py
RUSTDOCFLAGS="-D warnings" cargo doc --quiet -p pgprompt-core --no-deps
python3 sql/updates/gen.py 0.5.0 0.6.0 sql/releases/pgprompt--0.6.0.sql --check
echo "lints: clean"
