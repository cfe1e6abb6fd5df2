"""Upgrades: installing the frozen 0.1.0 and updating equals a fresh install.

Every release keeps its full install script frozen (sql/releases/pgprompt--A.sql) and an
update script (sql/pgprompt--A--B.sql, which `cargo pgrx install` ships). The schemas
are compared with `pg_dump --schema-only --binary-upgrade` (plain pg_dump leaves an
extension's members out), with only OID-setting lines set aside.
"""
import os
import pathlib
import re
import shutil
import subprocess

from conftest import ROOT, connect, make_database

OLD = "0.1.0"


def extension_dir() -> pathlib.Path:
    share = subprocess.run(["/usr/lib/postgresql/15/bin/pg_config", "--sharedir"], capture_output=True, text=True, check=True)
    return pathlib.Path(share.stdout.strip()) / "extension"


def current_version() -> str:
    cargo = (ROOT / "Cargo.toml").read_text()
    return re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)


def schema_of(dbname: str) -> str:
    dump = subprocess.run(
        ["pg_dump", "--schema-only", "--binary-upgrade", "--no-owner", "-h", os.environ["PGHOST"], "-p", os.environ["PGPORT"], "-U", "postgres", dbname],
        capture_output=True, text=True, check=True,
    ).stdout
    # Set aside what binary-upgrade mode adds about OIDs and frozen xids.
    noise = ("binary_upgrade_set", "UPDATE pg_catalog.pg_class", "SET relfrozenxid", "WHERE oid = ", "\\restrict", "\\unrestrict")
    keep = [l for l in dump.splitlines() if l.strip() and not l.startswith("--") and not any(n in l for n in noise)]
    return "\n".join(keep)


def test_the_update_script_ships_and_the_old_release_is_frozen():
    assert (ROOT / f"sql/releases/pgprompt--{OLD}.sql").exists()
    assert (extension_dir() / f"pgprompt--{OLD}--{current_version()}.sql").exists()


def test_install_old_then_update_equals_a_fresh_install():
    shutil.copy(ROOT / f"sql/releases/pgprompt--{OLD}.sql", extension_dir() / f"pgprompt--{OLD}.sql")
    with connect("postgres") as admin:
        for name in ("pgprompt_upgraded", "pgprompt_fresh"):
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
            admin.execute(f"CREATE DATABASE {name}")
    with connect("pgprompt_upgraded") as c:
        c.execute(f"CREATE EXTENSION pgprompt VERSION '{OLD}'")
        # Rows written under the old release survive the update and compile after it.
        c.execute((ROOT / "demo/example.sql").read_text())
        c.execute("ALTER EXTENSION pgprompt UPDATE")
        assert c.execute("SELECT extversion FROM pg_extension WHERE extname = 'pgprompt'").fetchone()[0] == current_version()
        own = c.execute("SELECT own_entries FROM prompt.turns WHERE id = '00000000-0000-4000-8000-0000000d0002'").fetchone()[0]
        assert own == 2, "the update counts existing turns' entries"
        r = c.execute("SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004')").fetchone()[0]
        assert r["estimate"]["history"]["available"] == 4
        c.execute("TRUNCATE prompt.models, prompt.users, prompt.workspaces CASCADE")
    with connect("pgprompt_fresh") as c:
        c.execute("CREATE EXTENSION pgprompt")
    upgraded, fresh = schema_of("pgprompt_upgraded"), schema_of("pgprompt_fresh")
    if upgraded != fresh:
        import difflib

        diff = "\n".join(difflib.unified_diff(fresh.splitlines(), upgraded.splitlines(), "fresh", "upgraded", lineterm="", n=2))
        raise AssertionError(f"the updated schema differs from a fresh install:\n{diff[:4000]}")


def statements(sql: str) -> str:
    """SQL without comments (pgrx notes source lines and Rust types in them) or spacing."""
    sql = re.sub(r"/\*.*?\*/", "", sql, flags=re.S)
    sql = re.sub(r"--[^\n]*", "", sql)
    return " ".join(sql.split())


def test_the_current_release_is_frozen():
    """The schema cannot change without a new version: the install script cargo pgrx
    generates equals the frozen one of this version (a change means: bump the version,
    freeze the new script, write the update script)."""
    version = current_version()
    generated = (extension_dir() / f"pgprompt--{version}.sql").read_text()
    frozen = (ROOT / f"sql/releases/pgprompt--{version}.sql").read_text()
    assert statements(generated) == statements(frozen)
