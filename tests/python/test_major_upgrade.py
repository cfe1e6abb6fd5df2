"""pg_upgrade from PostgreSQL 15 to 18 with pgprompt in place (README, "Upgrading"): a
15 cluster with sealed and unsealed turns, a run with rounds sent, tenancy and grants is
upgraded by pg_upgrade to 18; afterwards verify_seals() is empty, every sealed body and
every preview is byte for byte what it was, and the policies and grants are the same.

Runs on the PostgreSQL 18 pass of the test command, with PostgreSQL 15 beside it (the
.deb the 15 pass built, or built here). This machine's PostgreSQL 15.20 stamps an
attribute option pg_attver on every column it creates, which 18 refuses: it is cleared
from pg_attribute before the upgrade, as the README says.
"""
import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import psycopg
import pytest

from conftest import PG_CONFIG, PG_MAJOR, ROOT, cluster_user_command, give_to_cluster_user

OLD_BIN = pathlib.Path("/usr/lib/postgresql/15/bin")
C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"
ACME = "00000000-0000-4000-8000-00000000a001"

pytestmark = pytest.mark.skipif(PG_MAJOR != 18 or not (OLD_BIN / "pg_ctl").exists(),
                                reason="pg_upgrade 15 -> 18 runs on the 18 pass, beside Debian's PostgreSQL 15")


def version() -> str:
    import re
    return re.search(r'^version = "([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.M).group(1)


def as_postgres(*cmd, cwd=None, env=None):
    done = subprocess.run(cluster_user_command(*cmd), cwd=cwd, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        logs = ""
        if cwd is not None:
            # pg_upgrade's own logs say why it stopped.
            for log in sorted(pathlib.Path(cwd).rglob("*.txt")) + sorted(pathlib.Path(cwd).rglob("*.log")):
                logs += f"\n--- {log}\n" + log.read_text(errors="replace")[-4000:]
        raise AssertionError(f"{cmd[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}{logs}")
    return done


def connect(sock, port, db="postgres"):
    return psycopg.connect(host=str(sock), port=port, user="postgres", dbname=db, autocommit=True)


def snapshot(conn):
    """What must survive: every reply turn's sealed body and preview, the verification,
    the policies and the grants."""
    turns = conn.execute("SELECT conversation_id::text, id::text, sealed_at IS NOT NULL FROM prompt.turns "
                         "WHERE kind = 'reply' ORDER BY conversation_id, seq").fetchall()
    bodies = {}
    for conv, turn, sealed in turns:
        fn = "compile_turn" if sealed else "preview_turn"
        try:
            bodies[(conv, turn)] = conn.execute(f"SELECT prompt.{fn}(%s, %s)::text", (conv, turn)).fetchone()[0]
        except psycopg.Error as e:
            bodies[(conv, turn)] = e.sqlstate
    return {
        "bodies": bodies,
        "verify": conn.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0],
        "policies": conn.execute("SELECT c.relname, p.polname, p.polpermissive, p.polcmd, pg_get_expr(p.polqual, p.polrelid) "
                                 "FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid "
                                 "WHERE c.relnamespace = 'prompt'::regnamespace ORDER BY 1, 2").fetchall(),
        # Each grant, less MAINTAIN: 17 added it, and an owner has it on 18 by default.
        "grants": conn.execute("SELECT c.relname, g.grantor::regrole::text, CASE g.grantee WHEN 0 THEN 'PUBLIC' ELSE g.grantee::regrole::text END, "
                               "g.privilege_type, g.is_grantable "
                               "FROM pg_class c, LATERAL aclexplode(c.relacl) g "
                               "WHERE c.relnamespace = 'prompt'::regnamespace AND c.relkind IN ('r', 'v') "
                               "AND g.privilege_type <> 'MAINTAIN' ORDER BY 1, 2, 3, 4").fetchall(),
        "tenants": conn.execute("SELECT role_name::text, role_oid IS NOT NULL FROM prompt.tenants ORDER BY 1").fetchall(),
    }


def built_from_this_tree(deb: pathlib.Path) -> bool:
    """Whether the .deb's install script is this tree's (the frozen release script): a
    package left by an earlier build of other code is built again, never upgraded from."""
    import io
    import tarfile
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
    name = f"./usr/share/postgresql/15/extension/pgprompt--{version()}.sql"
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        try:
            script = t.extractfile(name).read().decode()
        except KeyError:
            return False
    return script == (ROOT / f"sql/releases/pgprompt--{version()}.sql").read_text()


def root_command(*cmd) -> list:
    """A command that writes PostgreSQL's directories: as root, or through sudo."""
    return [*cmd] if os.geteuid() == 0 else ["sudo", *cmd]


@contextlib.contextmanager
def installed_15(deb: pathlib.Path):
    """The .deb installed into Debian's PostgreSQL 15 while the block runs; then removed, and
    whatever pgprompt files were there before (the demo's build) put back."""
    lib = pathlib.Path("/usr/lib/postgresql/15/lib")
    ext = pathlib.Path("/usr/share/postgresql/15/extension")
    saved = pathlib.Path(tempfile.mkdtemp(prefix="pgprompt-15-before-"))
    before = [p for p in [lib / "pgprompt.so", *ext.glob("pgprompt*")] if p.exists()]
    for p in before:
        shutil.copy2(p, saved / p.name)
    subprocess.run(root_command("dpkg", "-i", str(deb)), check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(root_command("dpkg", "-r", "postgresql-15-pgprompt"), check=False, capture_output=True)
        for p in before:
            subprocess.run(root_command("cp", "-p", str(saved / p.name), str(p)), check=True, capture_output=True)
        shutil.rmtree(saved, ignore_errors=True)


def test_pg_upgrade_from_15_to_18_keeps_every_byte():
    deb = ROOT / f"target/dist/postgresql-15-pgprompt_{version()}_amd64.deb"
    if not deb.exists() or not built_from_this_tree(deb):
        subprocess.run([str(ROOT / "scripts/package.sh")], env=dict(os.environ, PG_MAJOR="15"), check=True,
                       capture_output=True)
    with installed_15(deb):
        upgrade_keeps_every_byte()


def upgrade_keeps_every_byte():
    new_bin = pathlib.Path(subprocess.run([PG_CONFIG, "--bindir"], capture_output=True, text=True, check=True).stdout.strip())
    work = pathlib.Path(tempfile.mkdtemp(prefix="pgprompt-pg-upgrade-"))
    give_to_cluster_user(work)
    old, new = work / "old", work / "new"
    try:
        # 18's initdb turns data checksums on by default, 15's off: pg_upgrade needs both alike.
        for bin_dir, data, extra in ((OLD_BIN, old, ()), (new_bin, new, ("--no-data-checksums",))):
            as_postgres(bin_dir / "initdb", "-D", data, "-A", "trust", "-U", "postgres", "--locale=C.UTF-8",
                        "--encoding=UTF8", "--no-sync", *extra)
        opts = f"-p 54369 -k {work} -c listen_addresses=''"
        as_postgres(OLD_BIN / "pg_ctl", "-D", old, "-o", opts, "-l", work / "old.log", "-w", "start")
        try:
            with connect(work, 54369) as c:
                c.execute("CREATE DATABASE app")
            with connect(work, 54369, "app") as c:
                c.execute("CREATE EXTENSION pgprompt")
                for path in ("demo/example.sql", "tests/fixtures/scenarios.sql", "examples/tenancy.sql"):
                    c.execute((ROOT / path).read_text())
                c.execute("DO $$ BEGIN CREATE ROLE pgprompt_upgrade_acme NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
                c.execute("GRANT prompt_tenant TO pgprompt_upgrade_acme")
                c.execute("INSERT INTO prompt.tenants (role_name, workspace_id) VALUES ('pgprompt_upgrade_acme', %s)", (ACME,))
                c.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
                # A run: its first request sealed, a tool call recorded, its result, a continuation sent.
                run = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, mode, model, tools) "
                                "VALUES (%s, 'reply', '00000000-0000-4000-8000-000000000001', 'Weather?', 'run', 'claude-sonnet-5', "
                                "'[{\"name\": \"w\", \"input_schema\": {\"type\": \"object\"}}]') RETURNING id::text", (C1,)).fetchone()[0]
                c.execute("SELECT prompt.compile_turn(%s, %s)", (C1, run))
                answer = json.loads((ROOT / "tests/fixtures/responses/anthropic.json").read_text())
                c.execute("SELECT prompt.record_response(%s, %s, %s)", (C1, run, json.dumps(answer)))
                call = next(b["id"] for b in answer["content"] if b["type"] == "tool_use")
                c.execute("SELECT prompt.record_tool_results(%s, %s, %s)", (C1, run, json.dumps([{"call_id": call, "content": "15 C"}])))
                c.execute("SELECT prompt.compile_turn(%s, %s)", (C1, run))
                before = snapshot(c)
                assert before["verify"] == 0 and len(before["bodies"]) > 3
            # PostgreSQL 15.20 of this machine: an attribute option 18 refuses.
            with connect(work, 54369) as c:
                dbs = [r[0] for r in c.execute("SELECT datname FROM pg_database WHERE datallowconn")]
            for db in dbs:
                with connect(work, 54369, db) as c:
                    c.execute("UPDATE pg_catalog.pg_attribute SET attoptions = "
                              "nullif(ARRAY(SELECT o FROM unnest(attoptions) o WHERE o NOT LIKE 'pg_attver=%'), '{}') "
                              "WHERE attoptions IS NOT NULL AND EXISTS (SELECT 1 FROM unnest(attoptions) o WHERE o LIKE 'pg_attver=%')")
        finally:
            as_postgres(OLD_BIN / "pg_ctl", "-D", old, "-m", "fast", "-w", "stop")
        as_postgres(new_bin / "pg_upgrade", "-b", OLD_BIN, "-B", new_bin, "-d", old, "-D", new, "-p", "54369", "-P", "54379",
                    "-U", "postgres", cwd=work)
        as_postgres(new_bin / "pg_ctl", "-D", new, "-o", opts.replace("54369", "54379"), "-l", work / "new.log", "-w", "start")
        try:
            with connect(work, 54379, "app") as c:
                assert c.execute("SELECT extversion FROM pg_extension WHERE extname = 'pgprompt'").fetchone()[0] == version()
                assert c.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0] == 18
                after = snapshot(c)
        finally:
            as_postgres(new_bin / "pg_ctl", "-D", new, "-m", "fast", "-w", "stop")
        assert after["verify"] == 0
        assert after["bodies"] == before["bodies"]
        assert after["policies"] == before["policies"]
        assert after["grants"] == before["grants"]
        assert after["tenants"] == before["tenants"] == [("pgprompt_upgrade_acme", True)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
