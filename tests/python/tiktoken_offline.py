"""The reference tiktoken, offline.

Python's tiktoken downloads its vocabularies from the web; this machine has none. The
tiktoken-rs crate ships byte-identical copies (tiktoken checks their SHA-256), so the
cache tiktoken reads is seeded from the crate in cargo's registry.
"""
import glob
import hashlib
import os
import shutil
import tempfile

URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def _seed_cache() -> str:
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "pgprompt-tiktoken-cache")
    os.makedirs(cache, exist_ok=True)
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    for name, url in URLS.items():
        target = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
        if os.path.exists(target):
            continue
        found = sorted(glob.glob(os.path.join(home, "registry/src/*/tiktoken-rs-*/assets", f"{name}.tiktoken")))
        if not found:
            raise RuntimeError(f"no {name}.tiktoken in {home}/registry: run cargo fetch first")
        shutil.copyfile(found[-1], target)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    return cache


def encoding(name: str):
    _seed_cache()
    import tiktoken

    return tiktoken.get_encoding(name)


def count(name: str, text: str) -> int:
    """Tokens of `text` as ordinary text (special-token spellings are characters)."""
    return len(encoding(name).encode_ordinary(text))
