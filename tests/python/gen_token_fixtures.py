"""Writes tests/fixtures/tiktoken_counts.json: counts from the reference Python tiktoken
for a corpus chosen to exercise the pretokenizer (whitespace runs, contractions,
numbers, punctuation runs, scripts without spaces, emoji, special-token spellings).
The Rust core's tests compare its counts with these.

    python3 tests/python/gen_token_fixtures.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tiktoken_offline import count  # noqa: E402

CORPUS = [
    "",
    "hello world",
    "Hello, world! How's it going? I'll be there; you'd better be too. WE'VE DONE IT'S",
    "The quick brown fox jumps over the lazy dog.\n\nNew paragraph.\r\nWindows line.",
    "   leading spaces and trailing spaces   ",
    "tabs\tand\t\tmore\ttabs\n\t\tindented",
    "a  b   c    d     e      f",
    "\n\n\n\n",
    " \n \n \n",
    "x" + " " * 100 + "y",
    " " * 1000,
    " " * 10000,
    "\n" * 500,
    "1234567890 3.14159 1,000,000 2026-11-30T12:00:00Z 0x1F4A9",
    "<|endoftext|> <|fim_prefix|><|fim_middle|><|fim_suffix|> <|endofprompt|>",
    "def f(x):\n    return {'a': [1, 2, 3], \"b\": (x ** 2) // 3}\n",
    "fn main() { let v: Vec<u8> = vec![0; 1024]; println!(\"{v:?}\"); }",
    "SELECT count(*) FROM prompt.turns WHERE conversation_id = $1 AND seq < $2;",
    "日本語のテキストとひらがな、カタカナ、漢字。中文文本没有空格。",
    "한국어 텍스트입니다. Ελληνικά κείμενα. Русский текст. עברית. العربية.",
    "emoji 🎉🎉🎉 👩‍👩‍👧‍👦 🇫🇷 ✅✅",
    "{{agent}} {{user}} {{ }} {{#if x}} {{a b}}",
    "<message from=\"@lark\" kind=\"agent\" user=\"00000000-0000-0000-0000-000000000001\">\nhi &lt;/message>\n</message>",
    "[Summary of the earlier conversation]\nThey agreed on Tuesday.",
    "!!!???...,,,;;;:::---___===+++***&&&%%%$$$###@@@",
    "/usr/lib/postgresql/15/bin/pg_config --sharedir //double//slashes/",
    "MixedCASEWordsLikeThisAndTHAT and camelCaseIdentifiers snake_case_names",
    "don't DON'T Don'T i'm I'M you're YOU'RE they've THEY'VE",
    "a\u00a0non-breaking\u2009thin\u3000ideographic space",
    "e\u0301 composed é vs decomposed e\u0301\u0301",
    "word " * 300,
    "{" * 2000,
    "}" * 1500 + "{" * 1500,
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "The end.  \n",
]


def main() -> None:
    rows = [{"text": t, "cl100k_base": count("cl100k_base", t), "o200k_base": count("o200k_base", t)} for t in CORPUS]
    out = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tiktoken_counts.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(rows, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(rows)} rows to {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
