#!/usr/bin/env bash
# A check by hand, not part of scripts/test.sh (Citus is not packaged here): the steps of
# docs/scale-out.md, extracted from that file and run as written, then pgprompt on Citus
# against a single node.
#
# Runs as root. Needs Citus built and installed into the local PostgreSQL 15 (the
# "Building Citus" block of the docs; it is not run here). Everything else comes from the
# docs' blocks: `sh citus-install` as root, then `sh citus-env` + `sh citus-setup` as
# postgres (a coordinator and two workers from empty data directories, the database and
# citus on each, the workers added, pgprompt and docs/citus.sql, the demo loaded, a
# compile), later `sh citus-env` + `sh citus-grow` (a third worker and a rebalance).
# Ports are free ones picked now, directories a fresh mktemp; every server this script
# started is stopped on exit, and the directory removed when the check passed.
#
# Checked against a single node of its own (same rows, same calls): compile_turn,
# preview_turn, explain_turn, estimate_turn, sealed_body and transcript of every reply
# turn, byte-identical before and after sealing, after rounds, a Side and deferred tools,
# and after the rebalance; search_deferred and prune_seals through the coordinator; a
# sealed turn refused; SET LOCAL pgprompt.allow_history_rewrite reaching the workers.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/citus-nodes.sh

UNSEALED="preview_turn explain_turn estimate_turn transcript"
SEALED="compile_turn preview_turn explain_turn estimate_turn sealed_body transcript"
TX="preview_turn explain_turn estimate_turn compile_turn sealed_body"
TX_TEXT="preview_turn explain_turn compile_turn sealed_body" # prompt_tx's *_text forms
NOT_SIDES="c.kind <> 'side'"
without_now() { # explain_turn's `cache` says what the provider's cache does with the body
    # sent now (TTLs from the times the seal and rounds were sent): compared without it; and
    # its `documents` name each document by its id, which demo/example.sql draws at random
    # in each database: compared without the ids
    if [ "$1" = explain_turn ]; then
        python3 -c 'import json, sys
t = sys.stdin.read()
try:
    d = json.loads(t); d.pop("cache", None)
    for doc in d.get("documents") or []:
        doc.pop("document_id", None)
    print(json.dumps(d))
except (ValueError, AttributeError):
    print(t)'
    else cat; fi
}
results() { # each reply turn's result of each function, as "function turn md5", in one order;
    # $3: the schema (prompt_tx: each call in its own BEGIN … COMMIT; prompt_tx_text: the
    # same, through prompt_tx's *_text forms), $4: which conversations
    local db=$1 fns=$2 schema=${3:-prompt} only=${4:-true} t fn call
    for t in $($db -At -c "SELECT t.conversation_id || ':' || t.id FROM prompt.turns t JOIN prompt.conversations c
                           ON c.id = t.conversation_id WHERE t.kind = 'reply' AND $only ORDER BY t.conversation_id, t.seq"); do
        for fn in $fns; do
            [ "$schema" != prompt ] && [ "$fn" = transcript ] && continue
            call="SELECT prompt.$fn('${t%%:*}', '${t##*:}')"
            [ "$fn" = estimate_turn ] && call="SELECT * FROM prompt.$fn('${t%%:*}', '${t##*:}')"
            [ "$schema" = prompt_tx ] && call="${call/prompt./prompt_tx.}"
            [ "$schema" = prompt_tx_text ] && call="SELECT prompt_tx.${fn}_text('${t%%:*}', '${t##*:}')"
            if [ "$schema" != prompt ]; then set -- -c BEGIN -c "$call" -c COMMIT; else set -- -c "$call"; fi
            echo "$fn ${t##*:} $($db -At "$@" 2>&1 | without_now "$fn" | md5sum | cut -c1-32)"
        done
    done
}
compare() { # $1: what, $2: the functions, $3: Citus's schema for them, $4: which conversations
    local what=$1 fns=$2 schema=${3:-prompt} only=${4:-true}
    results single "$fns" prompt "$only" >"$WORK/single.out"
    results citus "$fns" "$schema" "$only" >"$WORK/citus.out"
    diff "$WORK/single.out" "$WORK/citus.out" >&2 || { echo "$what: Citus and the single node differ" >&2; exit 1; }
    echo "$what: $(wc -l <"$WORK/single.out") results byte-identical on Citus and a single node"
}
same() { # $1: what was loaded. Before the compiles, the compiles (in a transaction through
    # prompt_tx where the form allows), after them; bare in autocommit and through prompt_tx
    compare "$1, before the compiles" "$UNSEALED"
    compare "$1, before the compiles, prompt_tx in a transaction" "$TX" prompt_tx "$NOT_SIDES"
    results single compile_turn >/dev/null
    results citus compile_turn prompt_tx "$NOT_SIDES" >/dev/null
    results citus compile_turn prompt "c.kind = 'side'" >/dev/null
    compare "$1, after the compiles" "$SEALED"
    compare "$1, after the compiles, prompt_tx in a transaction" "$TX" prompt_tx "$NOT_SIDES"
    compare "$1, after the compiles, prompt_tx's text forms in a transaction" "$TX_TEXT" prompt_tx_text "$NOT_SIDES"
}
for f in tests/citus/workload.sql; do single -f "$f" >/dev/null; citus -f "$f" >/dev/null; done
same "the demo and 16 conversations"
single -f tests/citus/rounds_and_side.sql >/dev/null; citus -f tests/citus/rounds_and_side.sql >/dev/null
same "rounds, a Side and deferred tools"

refused=$(citus -c "UPDATE prompt.turns SET prompt = 'edited' WHERE id = md5('r12')::uuid" 2>&1 || true)
grep -q "sealed_turn_immutable" <<<"$refused" || { echo "a sealed turn was not refused: $refused" >&2; exit 1; }
citus -c "BEGIN" -c "SET LOCAL pgprompt.allow_history_rewrite = on" \
    -c "DELETE FROM prompt.turns WHERE conversation_id = md5('conv2')::uuid AND id = md5('m12')::uuid" -c "ROLLBACK"
echo "a sealed turn refused through the coordinator; allow_history_rewrite reaches the workers"

echo "step 8 (a third worker on port $W3, rebalanced)"
as_postgres "$(blocks citus-env)"$'\n'"$(blocks citus-grow)" grow
moved=$(citus -At -c "SELECT count(*) FROM pg_dist_placement JOIN pg_dist_node USING (groupid) JOIN pg_dist_shard USING (shardid)
                         JOIN pg_dist_partition USING (logicalrelid) WHERE nodeport = $W3 AND partmethod = 'h'")
[ "$moved" -gt 0 ] || { echo "the rebalance moved no shard to the new worker" >&2; exit 1; }
compare "after the rebalance ($moved shards on the new worker)" "$SEALED"
compare "after the rebalance, prompt_tx in a transaction" "$TX" prompt_tx "$NOT_SIDES"

found() { $1 -At -c "SELECT prompt.search_deferred(md5('conv$2')::uuid, md5('r3$2')::uuid, 'refund duplicate')"; }
for n in 1 7 16; do
    [ "$(found single $n)" = "$(found citus $n)" ] || { echo "search_deferred differs for conv$n" >&2; exit 1; }
    grep -q issue_refund <<<"$(found citus $n)" || { echo "search_deferred found no deferred tool for conv$n" >&2; exit 1; }
done
prune() { $1 -At -c "SELECT prompt.prune_seals(md5('conv$2')::uuid, now() + interval '1 day')"; }
for n in 3 11; do
    pruned=$(prune citus $n)
    [ "$pruned" = "$(prune single $n)" ] && [ "$pruned" -gt 0 ] || { echo "prune_seals differs for conv$n" >&2; exit 1; }
    gone=$(citus -c "SELECT prompt.compile_turn(md5('conv$n')::uuid, md5('r1$n')::uuid)" 2>&1 || true)
    grep -q sealed_request_pruned <<<"$gone" || { echo "a pruned turn compiled through the coordinator: $gone" >&2; exit 1; }
done
echo "search_deferred and prune_seals through the coordinator agree with the single node"

remote() { citus -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = log" "$@" 2>&1 | grep -c issuing; }
n=$(remote -c BEGIN -c "SELECT prompt_tx.compile_turn(md5('conv5')::uuid, md5('r25')::uuid)" -c COMMIT)
[ "$n" = 3 ] || { echo "a sealed prompt_tx.compile_turn in a transaction issued $n remote commands, not 3" >&2; exit 1; }
echo "in a transaction, prompt_tx.compile_turn is delegated: $n remote commands (BEGIN, the call, COMMIT)"
n=$(remote -c BEGIN -c "SELECT prompt_tx.compile_turn_text(md5('conv5')::uuid, md5('r25')::uuid)" -c COMMIT)
[ "$n" = 3 ] || { echo "a sealed prompt_tx.compile_turn_text in a transaction issued $n remote commands, not 3" >&2; exit 1; }
echo "citus-check: passed"
