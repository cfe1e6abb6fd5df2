"""The providers' prompt-cache rules as their documentation states them, written apart from
the extension's own model (core/src/cache.rs) so each checks the other: the cache report's
tests and the agent-run benchmark (bench/cache_runs.py) run every request through both.

Anthropic: a request is its blocks in cache order (tools, system, each message's content
blocks); a breakpoint (`cache_control` on a block, or the request-level `cache_control`,
which marks the last block that is not thinking) reads the longest prefix an earlier
breakpoint wrote that ends within 20 blocks before it and has not expired; the request
writes the prefix up to its last breakpoint of at least the model's minimum length, less
what it read; an entry lives for its TTL from the last request that wrote or read it.
Tokens are counted per block: a text block's text, any other block's JSON (keys sorted,
cache marks dropped)."""
import json

MARKS = ("cache_control", "prompt_cache_breakpoint")


def dumps(v) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def unmarked(v):
    if isinstance(v, dict):
        return {k: unmarked(x) for k, x in v.items() if k not in MARKS}
    if isinstance(v, list):
        return [unmarked(x) for x in v]
    return v


def marked(v) -> bool:
    if isinstance(v, dict):
        return any(k in MARKS for k in v) or any(marked(x) for x in v.values())
    if isinstance(v, list):
        return any(marked(x) for x in v)
    return False


class Blocks:
    """A body as the provider's cache reads it: Anthropic's (each content block a block),
    or OpenAI Responses' (each input item a block, after the tools and instructions)."""

    def __init__(self, body: dict, count, wire: str = "anthropic"):
        raw = [("", t) for t in body.get("tools", [])]
        if wire == "responses":
            raw += [("", body["instructions"])] if "instructions" in body else []
            raw += [(item.get("role", ""), item) for item in body["input"]]
        else:
            system = body.get("system", [])
            raw += [("", b) for b in system] if isinstance(system, list) else [("", system)]
            for m in body["messages"]:
                content = m["content"]
                raw += [(m["role"], b) for b in content] if isinstance(content, list) else [(m["role"], content)]
        self.keys, self.tokens, self.marks, self.cum = [], [], [], []
        prefix = ()
        for role, b in raw:
            plain = unmarked(b)
            if isinstance(plain, dict) and isinstance(plain.get("text"), str):
                text = plain["text"]
            else:
                text = plain if isinstance(plain, str) else dumps(plain)
            prefix = hash((prefix, role, dumps(plain)))
            self.keys.append(prefix)
            self.tokens.append(count(text))
            self.marks.append(marked(b))
            self.cum.append((self.cum[-1] if self.cum else 0) + self.tokens[-1])
        if "cache_control" in body:
            cacheable = [i for i, (_, b) in enumerate(raw)
                         if not (isinstance(b, dict) and str(b.get("type", "")).endswith("thinking"))]
            if cacheable:
                self.marks[cacheable[-1]] = True

    @property
    def total(self) -> int:
        return self.cum[-1] if self.cum else 0


class Provider:
    """A cache of explicit breakpoints: entries by prefix, each with its expiry. Anthropic's
    looks 20 blocks back from a breakpoint; OpenAI's explicit breakpoints (`lookback=None`)
    any distance."""

    def __init__(self, minimum: int, ttl: float = 300, lookback: int = 20):
        self.minimum, self.ttl, self.lookback, self.entries = minimum, ttl, lookback, {}

    def send(self, b: Blocks, at: float) -> dict:
        marks = [i for i, m in enumerate(b.marks) if m]
        hit = None
        for m in marks:
            low = 0 if self.lookback is None else max(0, m - self.lookback + 1)
            for j in range(m, low - 1, -1):
                if self.entries.get(b.keys[j], -1) >= at:
                    hit = j if hit is None else max(hit, j)
                    break
        read = b.cum[hit] if hit is not None else 0
        eligible = [m for m in marks if b.cum[m] >= self.minimum]
        write = max(0, b.cum[eligible[-1]] - read) if eligible else 0
        for m in eligible + ([hit] if hit is not None else []):
            self.entries[b.keys[m]] = at + self.ttl
        return {"input_tokens": b.total, "predicted_cache_read": read, "predicted_cache_write": write,
                "predicted_uncached": b.total - read - write}
