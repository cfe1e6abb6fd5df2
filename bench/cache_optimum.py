"""The cheapest cache writes: the cost of an offline optimum placement
of cache breakpoints for a sequence of requests, to compare pgprompt's placement with.

The optimum knows every later request. It is computed under the documented rules
relaxed (`tests/python/cache_rules.py` for the rules themselves): a breakpoint may go
after any block, any number of them, with no lookback limit, and an entry stays alive
while requests that contain its prefix follow one another within the TTL. Every
placement the real rules allow is one of the relaxed rules' placements, so the relaxed
optimum is a lower bound of the real one: pgprompt's cost over it bounds its distance
from the real optimum from above.

Under the relaxed rules the optimum is found request by request (no search is needed):
a token read from cache costs 0.1 and a token written 1.25 against 1 uncached, so a
prefix that a later request shares is worth writing (1.25 + 0.1 k < 1 + k for every
k >= 1 later reads) and worth writing first where it first appears, and a prefix no later
request shares is never worth writing. So each request reads the longest prefix (at least
the minimum cacheable length) that an earlier request still alive contains, and writes,
beyond what it read, up to the longest prefix of its own that a later request reads from
it.

    from cache_optimum import optimum
    optimum([(blocks, sent_at), ...], minimum=1024, ttl=300, read=0.1, write=1.25)
"""


def optimum(requests, minimum: int, ttl: float, read: float = 0.1, write: float = 1.25) -> dict:
    """The relaxed offline optimum of `requests` (each a `cache_rules.Blocks` and when it
    was sent, in order): tokens read, written and uncached, and the cost against no caching."""
    last = {}    # prefix key -> when a request that contains it was last sent
    writer = {}  # prefix key -> the request that wrote its live entry
    reads, wants = [], [0] * len(requests)
    for r, (b, at) in enumerate(requests):
        got = 0
        for i in range(len(b.keys) - 1, -1, -1):
            k = b.keys[i]
            if b.cum[i] >= minimum and k in last and at - last[k] <= ttl:
                got = b.cum[i]
                w = writer[k]
                wants[w] = max(wants[w], b.cum[i])
                break
        reads.append(got)
        for k in b.keys:
            if not (k in last and at - last[k] <= ttl):
                writer[k] = r
            last[k] = at
    total = sum(b.total for b, _ in requests)
    tokens_read = sum(reads)
    written = sum(max(0, wants[r] - reads[r]) for r in range(len(requests)))
    uncached = total - tokens_read - written
    cost = read * tokens_read + write * written + uncached
    return {"requests": len(requests), "input_tokens": total, "cache_read": tokens_read, "cache_write": written,
            "relative_cost": cost / total if total else 0.0}


def cost(rows, read: float = 0.1, write: float = 1.25) -> float:
    """The relative cost of simulated rows (`cache_rules.Provider.send`'s)."""
    total = sum(r["input_tokens"] for r in rows)
    got = sum(r["predicted_cache_read"] for r in rows)
    wrote = sum(r["predicted_cache_write"] for r in rows)
    return (read * got + write * wrote + (total - got - wrote)) / total if total else 0.0
