#!/usr/bin/env python3
"""The shipped model catalog against the providers' newest SDKs (README, "Model profiles"):
every model id of anthropic's `Model`, openai's `ChatModel` and `ResponsesModel` and
google-genai's model list must resolve to its family's profile (`prompt._model_profile`),
on exactly the wires its SDK lists it for (an id the SDK lists for Responses only is not
served on chat), and retire on the day the SDK's own deprecation tables give. Prints every
id that does not, one line each, and exits 1 when there is any; prints nothing and exits 0
otherwise.

    scripts/catalog.py [DATABASE]     # a database with pgprompt (default: a scratch one)

Run by the tests against the pinned SDKs (tests/python/test_model_catalog.py) and by
scripts/release.sh against the newest the registry serves, which refuses to release while
it prints anything. Connects with the usual PG* variables.
"""
import datetime
import os
import re
import sys
import typing

# The family of an id that is neither a profile's own name nor a dated id of one: a
# suffix of a family's name that the family serves.
FAMILY = {
    "gpt-5-mini": "gpt-5", "gpt-5-nano": "gpt-5", "gpt-5.1-mini": "gpt-5.1",
    "gpt-4.1-mini": "gpt-4.1", "gpt-4o-mini": "gpt-4o",
    "gpt-4-1106-preview": "gpt-4", "gpt-4-0613": "gpt-4", "gpt-4-32k-0314": "gpt-4-32k", "gpt-4-32k-0613": "gpt-4-32k",
    "gpt-3.5-turbo-0125": "gpt-3.5-turbo", "gpt-3.5-turbo-16k-0613": "gpt-3.5-turbo-16k",
    "gpt-4-turbo-2024-04-09": "gpt-4-turbo",
    "gemini-3.1-pro-preview-customtools": "gemini-3.1-pro-preview",
}
DATED = re.compile(r"^(.+?)-(\d{4}-\d{2}-\d{2}|\d{8})$")


def literal_ids(tp) -> list:
    """The string literals of an SDK's model type (a Literal, or a Union of Literals and str)."""
    if typing.get_origin(tp) is typing.Literal:
        return [a for a in typing.get_args(tp) if isinstance(a, str)]
    out = []
    for arg in typing.get_args(tp):
        out += literal_ids(arg)
    return out


def sdk_ids() -> dict:
    """{provider: ids}, and the openai ids by the wire their SDK lists them for."""
    from anthropic.types import Model as AnthropicModel
    from openai.types.shared import chat_model, responses_model
    gemini = __import__("google.genai._gaos.types.interactions.model", fromlist=["Model"]).Model
    return {
        "anthropic": set(literal_ids(AnthropicModel)),
        "chat": set(literal_ids(chat_model.ChatModel)),
        "responses": set(literal_ids(responses_model.ResponsesModel)),
        "gemini": set(literal_ids(gemini)),
    }


def deprecated_values(path: str) -> dict:
    """The shutdown day of each id a "Deprecated values:" docstring lists: items
    '- "id", "id": Announced shutdown date: YYYY-MM-DD. ...'."""
    text = open(path).read()
    if "Deprecated values:" not in text:
        return {}
    out = {}
    for item in re.split(r"\n\s*- ", text.split("Deprecated values:", 1)[1]):
        day = re.search(r"Announced shutdown date:\s*(\d{4}-\d{2}-\d{2})", item)
        if day:
            for model in re.findall(r'"([^"]+)"', item.split(":", 1)[0]):
                out[model] = day.group(1)
    return out


def retirements() -> dict:
    """{id: day} from the SDKs' own tables: anthropic's DEPRECATED_MODELS, the deprecated
    values under openai's ChatModel and the Responses model field."""
    from anthropic._data.deprecated_models import DEPRECATED_MODELS
    from openai.types.responses import response_compact_params
    from openai.types.shared import chat_model
    out = {}
    for model, day in DEPRECATED_MODELS.items():
        day = re.sub(r"(\d+)(st|nd|rd|th)", r"\1", day)
        out[model] = datetime.datetime.strptime(day, "%B %d, %Y").date().isoformat()
    out.update(deprecated_values(chat_model.__file__))
    out.update(deprecated_values(response_compact_params.__file__))
    return out


def expected(name: str, shipped: set):
    if name in FAMILY:
        return FAMILY[name]
    if name in shipped:
        return name
    m = DATED.match(name)
    return expected(m.group(1), shipped) if m else None


def problems(conn) -> list:
    """Every id of the SDKs that resolves wrongly or not at all, as lines."""
    ids = sdk_ids()
    days = retirements()
    shipped = {r[0] for r in conn.execute("SELECT name FROM prompt.model_profiles WHERE shipped")}
    every = set().union(*ids.values())
    got = {n: p for n, p in conn.execute(
        "SELECT n, prompt._model_profile(n, NULL)::jsonb FROM unnest(%s::text[]) AS n", (sorted(every),))}
    out = []
    for name in sorted(every):
        profile, want = got[name], expected(name, shipped)
        have = profile["name"] if profile else None
        if want is None or have != want:
            out.append(f"{name}: resolves to {have or 'no profile'}, its family is {want or 'unknown (give it a profile)'}")
            continue
        wires = set(profile["wires"])
        if name in ids["chat"] or name in ids["responses"]:
            listed = {w for w in ("chat", "responses") if name in ids[w]}
            if wires & {"chat", "responses"} != listed:
                out.append(f"{name}: served on {sorted(wires)}, its SDK lists it for {sorted(listed)}")
        for provider in ("anthropic", "gemini"):
            if name in ids[provider] and provider not in wires:
                out.append(f"{name}: served on {sorted(wires)}, not {provider}")
        if name in days and profile.get("retires_at") != days[name]:
            out.append(f"{name}: retires on {profile.get('retires_at')}, its SDK says {days[name]}")
    return out


def main() -> int:
    import psycopg
    dbname = sys.argv[1] if len(sys.argv) > 1 else None
    scratch = dbname is None
    if scratch:
        dbname = "pgprompt_catalog_check"
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {dbname}")
            admin.execute(f"CREATE DATABASE {dbname}")
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            if scratch:
                conn.execute("CREATE EXTENSION pgprompt")
            lines = problems(conn)
    finally:
        if scratch:
            with psycopg.connect(dbname="postgres", autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {dbname}")
    for line in lines:
        print(line)
    return 1 if lines else 0


if __name__ == "__main__":
    os.environ.setdefault("PGUSER", "postgres")
    sys.exit(main())
