"""The offline optimum the cache benchmark measures pgprompt's breakpoints against
(bench/cache_optimum.py) equals an exhaustive search over every
placement of breakpoints under the same relaxed rules, on small random conversations
(no entry expires: all are sent within the TTL)."""
import itertools
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from cache_optimum import optimum  # noqa: E402


class Request:
    """A request as the cache reads it: its blocks' prefix keys and cumulative tokens."""

    def __init__(self, blocks):
        self.keys = [tuple(blocks[:i + 1]) for i in range(len(blocks))]
        self.cum, n = [], 0
        for _, tokens in blocks:
            n += tokens
            self.cum.append(n)
        self.total = n


def exhaustive(requests, minimum, read=0.1, write=1.25) -> float:
    """The cheapest cost over every set of breakpoints on every request: a breakpoint reads
    the longest entry at or before it, the request writes up to its last breakpoint of at
    least the minimum less what it read, and each such breakpoint becomes an entry."""
    choices = [[s for k in range(len(r.keys) + 1) for s in itertools.combinations(range(len(r.keys)), k)]
               for r in requests]
    best = None
    for placement in itertools.product(*choices):
        entries, cost = set(), 0.0
        for r, marks in zip(requests, placement):
            hits = [i for i in range(len(r.keys)) if r.keys[i] in entries and any(m >= i for m in marks)]
            got = r.cum[max(hits)] if hits else 0
            eligible = [m for m in marks if r.cum[m] >= minimum]
            wrote = max(0, r.cum[max(eligible)] - got) if eligible else 0
            entries |= {r.keys[m] for m in eligible}
            cost += read * got + write * wrote + (r.total - got - wrote)
        best = cost if best is None else min(best, cost)
    return best


def conversation(rng):
    """3 or 4 requests of up to 4 blocks, each extending or diverging from an earlier one."""
    requests, pool = [], []
    for _ in range(rng.choice([3, 4])):
        base = list(rng.choice(pool)) if pool and rng.random() < 0.8 else []
        base = base[:rng.randint(0, len(base))]
        while len(base) < rng.randint(1, 4) or not base:
            base.append((rng.randrange(1000), rng.choice([1, 2, 5, 10])))
        pool.append(base)
        requests.append(Request(base[:4]))
    return requests


def test_the_offline_optimum_is_the_cheapest_placement():
    rng = random.Random(5)
    for case in range(150):
        requests = conversation(rng)
        minimum = rng.choice([1, 3, 8])
        total = sum(r.total for r in requests)
        got = optimum([(r, 0.0) for r in requests], minimum, ttl=300)["relative_cost"] * total
        assert abs(got - exhaustive(requests, minimum)) < 1e-9, (case, [r.keys for r in requests], minimum)
