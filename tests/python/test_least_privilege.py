"""Least privilege and fixed identities (README, "Security"): nothing the guarded can shape
decides what they may do.

- Who holds what is the README's table, compared with the catalogs after a superuser
  install, a trusted install, updates from 0.4.0 and 0.5.0 and the tenancy example.
- A database owner that installed pgprompt as trusted cannot become superuser: it holds no
  TRIGGER, and the update from 0.5 (which gave it one) drops what it left on the tables
  before writing anything.
- No code pgprompt did not create runs inside its writes: a writer's trigger (a careless
  GRANT ALL past the event trigger) stops a compile instead of forging what was sent.
- Keys never change, so no rename makes a delete look like a cascade.
- What a seal sent is frozen, and verify_seals checks it.
- Tenancy is declared: emptying or leaving the tenancy tables confines, never frees.
- Every callable function, driven as every actor, raises no XX000.
"""
import json
import re
import shutil
import uuid

import psycopg
import pytest

from conftest import PG_MAJOR, PGBIN, ROOT, connect, grant_all_carelessly, make_database
from test_response_loop import CALL_IDS, final_response, new_conversation, new_turn, record, tool_call_response

C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"
T1, T2 = "00000000-0000-4000-8000-0000000d0001", "00000000-0000-4000-8000-0000000d0002"
ACME, GLOBEX = "00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-00000000a002"
ADA, LARK = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
GLOBEX_CONV, GLOBEX_TURN = "00000000-0000-4000-8000-00000000c0b1", "00000000-0000-4000-8000-0000000b0001"
ROLES = {"administrator": "pgprompt_lp_admin", "writer": "pgprompt_lp_writer", "reader": "pgprompt_lp_reader"}
TENANT, OTHER, NOBODY = "pgprompt_lp_acme", "pgprompt_lp_globex", "pgprompt_lp_nobody"
DBO, DBO_APP = "pgprompt_lp_dbo", "pgprompt_lp_dbo_app"
ALL_ROLES = [*ROLES.values(), TENANT, OTHER, NOBODY, "pgprompt_lp_careless", DBO_APP, DBO]


def refused(conn, sql, args=(), sqlstate=None):
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql, args)
    if sqlstate:
        assert e.value.sqlstate == sqlstate, (sql, e.value.sqlstate, str(e.value))
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.execute("ROLLBACK")
    return e.value


def as_role(conn, name, fn):
    conn.execute(f"SET ROLE {name}")
    try:
        return fn()
    finally:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
        conn.execute("RESET ROLE")


def make_roles():
    with connect("postgres") as admin:
        for name in ALL_ROLES + ["prompt_tenant"]:
            login = "LOGIN" if name == DBO else "NOLOGIN"
            admin.execute(f"DO $$ BEGIN CREATE ROLE {name} {login}; EXCEPTION WHEN duplicate_object THEN NULL; END $$")


@pytest.fixture(scope="module", autouse=True)
def roles():
    make_roles()
    yield
    with connect("postgres") as admin:
        for db in ("pgprompt_lp", "pgprompt_lp_matrix", "pgprompt_lp_trusted", "pgprompt_lp_fuzz"):
            admin.execute(f"DROP DATABASE IF EXISTS {db}")
        admin.execute(f"REVOKE SET ON PARAMETER pgprompt.allow_history_rewrite FROM {ROLES['administrator']}")
        for name in ALL_ROLES:
            admin.execute(f"DROP ROLE IF EXISTS {name}")


# -- The README's grants and matrix --------------------------------------------------------

def readme_security() -> str:
    text = (ROOT / "README.md").read_text()
    return text[text.index("## Security"):text.index("## Reliability")]


def readme_grants(installer: psycopg.Connection):
    """The README's role grants, run as documented (its role names replaced by the test's)."""
    sql = re.search(r"```sql\n(.*?)```", readme_security(), re.S).group(1)
    for actor, role in ROLES.items():
        sql = sql.replace({"administrator": "app_admin", "writer": "app_writer", "reader": "app_reader"}[actor], role)
    for stmt in [s for s in re.sub(r"--[^\n]*", "", sql).split(";") if s.strip()]:
        if "ON PARAMETER" in stmt and not installer.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
            # A parameter's privilege is the cluster's: a superuser grants it (README).
            with connect("postgres") as su:
                su.execute(stmt)
            continue
        installer.execute(stmt)


ACTORS = ["tables' owner", "installing role", "administrator", "writer", "reader", "tenant", "PUBLIC"]
TENANCY_TABLES = {"tenants", "administrators", "workspace_members", "tenancy"}


def readme_matrix():
    """{(object kind, object group): {actor: {(privilege, grantable)}}} from the README."""
    text = readme_security()
    table = text[text.index("**Who holds what**"):text.index("**The threat model**")]
    rows = [l for l in table.splitlines() if l.startswith("| ") and "|---" not in l]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    assert header == ["object"] + ACTORS, header
    matrix = {}
    for row in rows[1:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == len(header), row
        label, grants = cells[0], dict(zip(ACTORS, cells[1:]))
        matrix[label] = {a: cell for a, cell in grants.items()}
    return matrix


def expected_privileges(cell: str, kind: str):
    """A cell as a set of (privilege, grantable); `all` as the catalogs' default for the owner."""
    if cell in ("—", ""):
        return set()
    if cell == "all":
        return "all"
    out = set()
    for p in cell.replace("\\*", "*").split(","):
        p = p.strip()
        out.add((p.rstrip("*"), p.endswith("*")))
    return out


def actual_acl(conn, installer_oid):
    """{(kind, object): {actor: {(privilege, grantable)}}} from aclexplode over the catalogs,
    every grantee mapped to its actor (an unknown grantee fails the test)."""
    names = {"PUBLIC": 0}
    for actor, role in {**ROLES, "tenant": "prompt_tenant"}.items():
        oid = conn.execute("SELECT oid FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        names[actor] = oid[0] if oid else None
    owner = conn.execute("SELECT relowner FROM pg_class WHERE oid = 'prompt.turns'::regclass").fetchone()[0]
    by_oid = {v: k for k, v in names.items() if v is not None}
    by_oid[owner] = "tables' owner"
    if installer_oid != owner:
        by_oid[installer_oid] = "installing role"
    rows = conn.execute("""
        SELECT 'schema', 'prompt', a.grantee, a.privilege_type, a.is_grantable
          FROM pg_namespace n, LATERAL aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a WHERE n.nspname = 'prompt'
        UNION ALL
        SELECT 'relation', c.relname, a.grantee, a.privilege_type, a.is_grantable
          FROM pg_class c, LATERAL aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
         WHERE c.relnamespace = 'prompt'::regnamespace AND c.relkind IN ('r', 'v', 'p', 'm', 'S', 'f')
        UNION ALL
        SELECT 'function', p.oid::regprocedure::text, a.grantee, a.privilege_type, a.is_grantable
          FROM pg_proc p, LATERAL aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
         WHERE p.pronamespace = 'prompt'::regnamespace""").fetchall()
    out = {}
    for kind, obj, grantee, privilege, grantable in rows:
        actor = by_oid.get(grantee)
        assert actor is not None, f"{kind} {obj}: a privilege of a role the matrix does not name ({grantee}): {privilege}"
        out.setdefault((kind, obj), {}).setdefault(actor, set()).add((privilege, grantable))
    defaults = {kind: {p for p, in conn.execute(f"SELECT a.privilege_type FROM aclexplode(acldefault('{k}', 10::oid)) a")}
                for kind, k in (("schema", "n"), ("relation", "r"), ("function", "f"))}
    return out, defaults


def compare_matrix(conn, installer_oid, trusted: bool):
    matrix = readme_matrix()
    actual, defaults = actual_acl(conn, installer_oid)
    wrong = []
    for (kind, obj), held in sorted(actual.items()):
        if kind == "schema":
            row = matrix["schema `prompt`"]
        elif kind == "function":
            row = matrix["every function and procedure"]
        elif obj in TENANCY_TABLES:
            row = next(v for k, v in matrix.items() if "`tenancy`" in k)
        else:
            row = matrix["every table and view but the four below"]
        for actor in ACTORS:
            if actor == "installing role" and not trusted:
                continue
            want = expected_privileges(row[actor], kind)
            if want == "all":
                want = {(p, False) for p in defaults[kind]}
            if actor == "tables' owner":
                # The owner's grant options are implicit: compare privileges only.
                got = {(p, False) for p, _ in held.get(actor, set())}
            else:
                got = held.get(actor, set())
            if got != want:
                wrong.append(f"{kind} {obj}, {actor}: the catalogs say {sorted(got)}, the README {sorted(want)}")
    assert wrong == [], "\n".join(wrong[:40])


def installer_connection(dbname, trusted):
    if not trusted:
        return connect(dbname)
    import os
    return psycopg.connect(host=os.environ.get("PGHOST", "/tmp/pgprompt-cluster"),
                           port=int(os.environ.get("PGPORT", "54329")), user=DBO, dbname=dbname, autocommit=True)


def fresh_database(name, owner=None):
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}" + (f" OWNER {owner}" if owner else ""))


def frozen_release(version):
    """An older release's frozen install script, where CREATE EXTENSION ... VERSION finds it."""
    from test_upgrade import extension_dir
    shutil.copy(ROOT / f"sql/releases/pgprompt--{version}.sql", extension_dir() / f"pgprompt--{version}.sql")


INSTALLS = ["superuser", "trusted", "update from 0.4.0", "update from 0.5.0 (trusted)"]


@pytest.mark.parametrize("install", INSTALLS)
def test_the_privilege_matrix_is_the_catalogs(install):
    trusted = "trusted" in install
    fresh_database("pgprompt_lp_matrix", DBO if trusted else None)
    with installer_connection("pgprompt_lp_matrix", trusted) as c:
        if install.startswith("update from"):
            old = install.split()[2]
            frozen_release(old)
            c.execute(f"CREATE EXTENSION pgprompt VERSION '{old}'")
            if old == "0.5.0":
                # What 0.5 let a database owner do: grant everything on, TRIGGER included.
                c.execute(f"GRANT USAGE ON SCHEMA prompt TO {DBO_APP}")
                c.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA prompt TO {DBO_APP}")
            c.execute("ALTER EXTENSION pgprompt UPDATE")
            if old == "0.5.0":
                c.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA prompt FROM {DBO_APP}")
                c.execute(f"REVOKE USAGE ON SCHEMA prompt FROM {DBO_APP}")
        else:
            c.execute("CREATE EXTENSION pgprompt")
        installer = c.execute("SELECT oid FROM pg_roles WHERE rolname = current_user").fetchone()[0]
        # Before any grant: the owner, the installing role and PUBLIC only.
        compare_matrix_before_grants(c, installer, trusted)
        readme_grants(c)
        c.execute((ROOT / "examples/tenancy.sql").read_text())
        compare_matrix(c, installer, trusted)
        assert c.execute("SELECT count(*) FROM prompt.security_check()").fetchone()[0] == 0, \
            c.execute("SELECT * FROM prompt.security_check()").fetchall()


def compare_matrix_before_grants(conn, installer_oid, trusted):
    actual, _ = actual_acl(conn, installer_oid)
    for (kind, obj), held in actual.items():
        extra = set(held) - {"tables' owner", "installing role", "PUBLIC"}
        assert not extra, (kind, obj, extra)
    forbidden = {(obj, a, p) for (kind, obj), held in actual.items() if kind == "relation"
                 for a, ps in held.items() if a != "tables' owner"
                 for p, _ in ps if p in ("TRIGGER", "TRUNCATE", "REFERENCES", "MAINTAIN")}
    assert forbidden == set()


# -- A database owner after a trusted install ------------------------------------------------

ESCALATE = """
CREATE FUNCTION public.lp_escalate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE {dbo} SUPERUSER';
    END IF;
    RETURN NULL;
END $$"""


ESCALATE_WHEN = """
CREATE FUNCTION public.lp_escalate_when() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE {dbo} SUPERUSER';
    END IF;
    RETURN false;
END $$"""


def superuser(conn) -> bool:
    return conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", (DBO,)).fetchone()[0]


def test_a_role_without_the_schema_grants_on_its_own_tables():
    """The GRANT guard runs for every GRANT in the database: a role that may not use schema
    prompt (it can name no prompt table) still grants on its own table, and still cannot
    reach a prompt table's privileges by the schema's name."""
    fresh_database("pgprompt_lp")
    with connect("pgprompt_lp") as c:
        c.execute("CREATE EXTENSION pgprompt")
        c.execute("DO $$ BEGIN CREATE ROLE pgprompt_lp_stranger; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        c.execute("GRANT CREATE ON SCHEMA public TO pgprompt_lp_stranger")
        assert not c.execute("SELECT has_schema_privilege('pgprompt_lp_stranger', 'prompt', 'USAGE')").fetchone()[0]

        def grants():
            c.execute("CREATE TABLE public.strangers_own (x int)")
            c.execute("GRANT SELECT ON public.strangers_own TO PUBLIC")
            refused(c, "GRANT TRIGGER ON ALL TABLES IN SCHEMA prompt TO PUBLIC", sqlstate="42501")

        as_role(c, "pgprompt_lp_stranger", grants)
        assert c.execute("SELECT has_table_privilege('public', 'public.strangers_own', 'SELECT')").fetchone()[0]
        c.execute("DROP TABLE public.strangers_own")
        c.execute("REVOKE CREATE ON SCHEMA public FROM pgprompt_lp_stranger")
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE pgprompt_lp")
        admin.execute("DROP ROLE pgprompt_lp_stranger")


def test_references_on_a_column_is_the_owners_alone():
    """A column's REFERENCES lets a foreign key reach a prompt table as the table's does (a
    hole of 0.6's guard, which read the tables' ACLs only): the guard refuses it however it
    is spelled, and nothing of the statement stays."""
    fresh_database("pgprompt_lp")
    with connect("pgprompt_lp") as c:
        c.execute("CREATE EXTENSION pgprompt")
        c.execute("DO $$ BEGIN CREATE ROLE pgprompt_lp_fk; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        for grant in ("GRANT REFERENCES (id) ON prompt.conversations TO pgprompt_lp_fk",
                      "GRANT SELECT (id), REFERENCES (id, workspace_id) ON prompt.conversations TO pgprompt_lp_fk",
                      "GRANT ALL (id) ON prompt.turns TO pgprompt_lp_fk",
                      "GRANT REFERENCES (id) ON prompt.conversations TO PUBLIC"):
            refused(c, grant, sqlstate="42501")
        held = c.execute("SELECT count(*) FROM pg_attribute WHERE attrelid IN ('prompt.conversations'::regclass, "
                         "'prompt.turns'::regclass) AND attacl IS NOT NULL").fetchone()[0]
        assert held == 0, held
        c.execute("GRANT SELECT (id) ON prompt.conversations TO pgprompt_lp_fk")
        assert c.execute("SELECT has_column_privilege('pgprompt_lp_fk', 'prompt.conversations', 'id', 'SELECT')").fetchone()[0]
        # With the guard off (a superuser's act), a column grant whose grantor then loses the
        # table's grant option: REVOKE ... CASCADE on the table leaves it held. security_check
        # lists it, and its fix takes it.
        c.execute("ALTER EVENT TRIGGER pgprompt_privileges DISABLE")
        c.execute("GRANT USAGE ON SCHEMA prompt TO pgprompt_lp_fk")
        c.execute("GRANT REFERENCES ON prompt.conversations TO pgprompt_lp_fk WITH GRANT OPTION")
        c.execute("SET ROLE pgprompt_lp_fk")
        c.execute("GRANT REFERENCES (id) ON prompt.conversations TO PUBLIC")
        c.execute("RESET ROLE")
        c.execute("REVOKE REFERENCES ON prompt.conversations FROM pgprompt_lp_fk CASCADE")
        c.execute("ALTER EVENT TRIGGER pgprompt_privileges ENABLE")
        assert c.execute("SELECT has_column_privilege('public', 'prompt.conversations', 'id', 'REFERENCES')").fetchone()[0]
        rows = c.execute("SELECT object, fix FROM prompt.security_check() WHERE severity = 'critical'").fetchall()
        assert [r[0] for r in rows] == ["prompt.conversations(id)"], rows
        c.execute(rows[0][1])
        assert not c.execute("SELECT has_column_privilege('public', 'prompt.conversations', 'id', 'REFERENCES')").fetchone()[0]
        assert c.execute("SELECT * FROM prompt.security_check() WHERE severity = 'critical'").fetchall() == []
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE pgprompt_lp")
        admin.execute("DROP ROLE pgprompt_lp_fk")


def test_a_database_owner_cannot_become_superuser():
    """As the database owner of a trusted install: no trigger on pgprompt's tables (42501:
    it holds no TRIGGER), no grant of TRIGGER to its own role (it has none to give); a
    superuser's compile afterwards leaves it what it was."""
    fresh_database("pgprompt_lp_trusted", DBO)
    with installer_connection("pgprompt_lp_trusted", True) as c:
        c.execute("CREATE EXTENSION pgprompt")
        c.execute((ROOT / "demo/example.sql").read_text())
        c.execute(ESCALATE.format(dbo=DBO))
        for table in ("seals", "seal_nodes", "turns", "rounds", "model_profiles", "conversations"):
            refused(c, f"CREATE TRIGGER lp_escalate AFTER INSERT OR UPDATE ON prompt.{table} "
                       "FOR EACH STATEMENT EXECUTE FUNCTION public.lp_escalate()", (), "42501")
        for privilege in ("TRIGGER", "TRUNCATE", "REFERENCES"):
            # PostgreSQL grants nothing, with a WARNING: the owner has none to give.
            c.execute(f"GRANT {privilege} ON prompt.seals TO {DBO_APP}")
            assert c.execute("SELECT has_table_privilege(%s, 'prompt.seals', %s)", (DBO_APP, privilege)).fetchone()[0] is False
        # GRANT ALL gives what the owner holds: never the four.
        c.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA prompt TO {DBO_APP}")
        assert c.execute("SELECT count(*) FROM pg_class c, aclexplode(c.relacl) a WHERE c.relnamespace = 'prompt'::regnamespace "
                         "AND a.privilege_type IN ('TRIGGER', 'TRUNCATE', 'REFERENCES', 'MAINTAIN') "
                         "AND a.grantee <> c.relowner").fetchone()[0] == 0
        refused(c, "CREATE FUNCTION prompt.lp_shadow() RETURNS int LANGUAGE sql AS 'SELECT 1'", (), "42501")
    with connect("pgprompt_lp_trusted") as su:
        su.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
        assert superuser(su) is False
        assert su.execute("SELECT count(*) FROM prompt.security_check()").fetchone()[0] == 0


def test_a_database_owner_gets_nothing_run_by_a_superusers_procedure_or_fix():
    """Found by the hostile review of 0.6: backfill_token_counts read its declarations with
    the caller's search_path, so a domain of the database owner's named uuid (its CHECK
    running as a superuser who CALLs it) made it superuser; and security_check() printed a
    relation's name unquoted in a fix, so a table named with SQL in it ran that SQL as the
    superuser who ran the fixes. Types are qualified, names quoted."""
    fresh_database("pgprompt_lp_trusted", DBO)
    with installer_connection("pgprompt_lp_trusted", True) as c:
        c.execute("CREATE EXTENSION pgprompt")
        c.execute((ROOT / "demo/example.sql").read_text())
        c.execute("CREATE SCHEMA lp")
        c.execute(ESCALATE_WHEN.format(dbo=DBO).replace("public.lp_escalate_when()", "lp.pwn(pg_catalog.uuid)")
                  .replace("RETURN false", "RETURN true"))
        for domain in ("uuid", "int8", "int4", "text"):
            c.execute(f"CREATE DOMAIN lp.{domain} AS pg_catalog.{domain} CHECK (lp.pwn(NULL::pg_catalog.uuid))")
        c.execute(f"ALTER DATABASE pgprompt_lp_trusted SET search_path = lp, pg_catalog")
    with connect("pgprompt_lp_trusted") as su:
        su.execute("CALL prompt.backfill_token_counts('o200k_base')")
        su.execute("CALL prompt.convert_seals_02()")
        assert superuser(su) is False
        # A relation named with SQL in it, made the extension's (as a superuser would for an
        # object the extension should own) and owned by the database owner: its fix is one
        # statement, whatever the name.
        nasty = 'turns OWNER TO CURRENT_USER; ALTER ROLE ' + DBO + ' SUPERUSER; --'
        su.execute(f'CREATE TABLE lp."{nasty}" ()')
        su.execute(f'ALTER TABLE lp."{nasty}" OWNER TO {DBO}')
        su.execute(f'ALTER EXTENSION pgprompt ADD TABLE lp."{nasty}"')
        fixes = [r[0] for r in su.execute("SELECT fix FROM prompt.security_check()").fetchall()]
        assert len(fixes) == 1 and fixes[0].startswith('ALTER TABLE lp."turns OWNER'), fixes
        for fix in fixes:
            su.execute(fix)
        assert superuser(su) is False
        su.execute(f'ALTER EXTENSION pgprompt DROP TABLE lp."{nasty}"')
        su.execute("ALTER DATABASE pgprompt_lp_trusted RESET search_path")


def test_the_update_from_0_5_drops_what_a_database_owner_left_on_the_tables():
    """0.5.0 gave a trusted install's database owner ALL (TRIGGER included): its trigger on
    prompt.seals, prompt.model_profiles and prompt.rounds would fire as the bootstrap
    superuser inside ALTER EXTENSION pgprompt UPDATE, which the database owner runs itself.
    The update drops those triggers before it writes anything (a WARNING names each), takes
    the four privileges back, and the owner stays what it was; so does a superuser's compile
    afterwards."""
    fresh_database("pgprompt_lp_trusted", DBO)
    frozen_release("0.5.0")
    with installer_connection("pgprompt_lp_trusted", True) as c:
        c.execute("CREATE EXTENSION pgprompt VERSION '0.5.0'")
        c.execute(ESCALATE.format(dbo=DBO))
        for table in ("seals", "model_profiles", "rounds", "turns"):
            c.execute(f"CREATE TRIGGER lp_escalate AFTER INSERT OR UPDATE OR DELETE ON prompt.{table} "
                      "FOR EACH STATEMENT EXECUTE FUNCTION public.lp_escalate()")
        # One of pgprompt's own functions, its WHEN the database owner's (found by the
        # hostile review of 0.6: a trigger is not pgprompt's because its function is).
        c.execute(ESCALATE_WHEN.format(dbo=DBO))
        c.execute("CREATE TRIGGER zz_when BEFORE UPDATE ON prompt.turns FOR EACH STATEMENT "
                  "WHEN (public.lp_escalate_when()) EXECUTE FUNCTION prompt._touch_updated_at()")
        # REFERENCES on a column reaches the table as the table's does.
        c.execute("GRANT REFERENCES (id) ON prompt.conversations TO PUBLIC")
        # A foreign key of the owner's onto pgprompt's table (its internal triggers run
        # inside pgprompt's writes; a hostile review of 0.6 found it kept).
        c.execute("CREATE TABLE public.lp_fk (m text REFERENCES prompt.models (name) ON UPDATE CASCADE ON DELETE CASCADE)")
        said = []
        c.add_notice_handler(lambda d: said.append(d.message_primary))
        c.execute("ALTER EXTENSION pgprompt UPDATE")
        assert superuser(c) is False
        assert sum("dropped trigger lp_escalate" in (m or "") for m in said) == 4, said
        assert sum("dropped trigger zz_when" in (m or "") for m in said) == 1, said
        assert sum("dropped foreign key" in (m or "") and "lp_fk" in (m or "") for m in said) == 1, said
        assert c.execute("SELECT count(*) FROM pg_constraint WHERE conrelid = 'public.lp_fk'::regclass AND contype = 'f'").fetchone()[0] == 0
        assert c.execute("SELECT count(*) FROM pg_trigger WHERE tgname IN ('lp_escalate', 'zz_when')").fetchone()[0] == 0
        assert c.execute("SELECT bool_or(has_table_privilege(current_user, oid, 'TRIGGER')) FROM pg_class "
                         "WHERE relnamespace = 'prompt'::regnamespace AND relkind = 'r'").fetchone()[0] is False
        assert c.execute("SELECT count(*) FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid, "
                         "LATERAL aclexplode(a.attacl) x WHERE r.relnamespace = 'prompt'::regnamespace "
                         "AND x.privilege_type = 'REFERENCES'").fetchone()[0] == 0
        c.execute((ROOT / "demo/example.sql").read_text())
    with connect("pgprompt_lp_trusted") as su:
        su.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
        assert superuser(su) is False


# -- A writer's code inside pgprompt's writes -----------------------------------------------------

@pytest.fixture(scope="module")
def lp():
    """The demo with a sealed turn and a run whose first round waits to be sent, tenants
    Acme and Globex (examples/tenancy.sql, tenancy on), and a writer given everything by a
    careless operator."""
    conn = make_database("pgprompt_lp")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    conn.execute("INSERT INTO prompt.workspaces (id, name) VALUES (%s, 'Globex')", (GLOBEX,))
    conn.execute("INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id) VALUES (%s, %s, %s, %s)",
                 (GLOBEX_CONV, GLOBEX, LARK, ADA))
    conn.execute("INSERT INTO prompt.turns (conversation_id, id, kind, poster_id, prompt) VALUES "
                 "(%s, %s, 'reply', %s, 'Globex secret question.')", (GLOBEX_CONV, GLOBEX_TURN, ADA))
    conn.execute("INSERT INTO prompt.memories (scope, workspace_id, path, body) VALUES ('workspace', %s, 'g.md', 'GLOBEX-7731')",
                 (GLOBEX,))
    conn.execute((ROOT / "examples/tenancy.sql").read_text())
    readme_grants(conn)
    for tenant, ws in ((TENANT, ACME), (OTHER, GLOBEX)):
        conn.execute(f"GRANT prompt_tenant TO {tenant}")
        conn.execute("INSERT INTO prompt.tenants (role_name, workspace_id) VALUES (%s, %s)", (tenant, ws))
    conn.execute("INSERT INTO prompt.workspace_members SELECT %s, id FROM prompt.users", (ACME,))
    conn.execute("INSERT INTO prompt.workspace_members VALUES (%s, %s)", (GLOBEX, LARK))
    conn.execute(f"GRANT USAGE ON SCHEMA prompt TO {NOBODY}, pgprompt_lp_careless")
    conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO {NOBODY}")
    grant_all_carelessly(conn, "pgprompt_lp_careless")
    conn.execute("INSERT INTO prompt.administrators (role_name) VALUES ('pgprompt_lp_careless')")
    conn.execute("GRANT CREATE ON SCHEMA public TO pgprompt_lp_careless")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (GLOBEX_CONV, GLOBEX_TURN))
    yield conn
    conn.close()


def fresh_id(response):
    """A response with an id of its own (a response id answers one turn)."""
    return {**response, "id": f"msg_{uuid.uuid4().hex}"}


def run_with_a_round_to_send(conn):
    """A run turn of Acme's conversation: compiled, a tool call recorded, its result written;
    its next compile marks round 1 sent."""
    run = new_turn(conn, C1, "anthropic")
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, run))
    record(conn, C1, run, fresh_id(tool_call_response("anthropic")))
    conn.execute("SELECT prompt.record_tool_results(%s, %s, %s)",
                 (C1, run, json.dumps([{"call_id": CALL_IDS["anthropic"], "content": "EUR 10.00"}])))
    return run


FORGE = """
CREATE FUNCTION public.lp_forge() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.results := replace(NEW.results::text, 'EUR 10.00', 'EUR 99999.00 (approved by the CFO)')::jsonb;
    -- The digest of what was sent, computed by hand: no helper of pgprompt's needed.
    NEW.sent_digest := sha256(convert_to(jsonb_build_array(NEW.assistant, NEW.results, NEW.steers, NEW.aborted)::text, 'UTF8'));
    RETURN NEW;
END $$"""


def test_a_writers_trigger_never_runs_inside_pgprompts_write(lp):
    """X2 of the 0.5.0 review: with GRANT ALL, a writer's BEFORE UPDATE trigger on
    prompt.rounds, named to run after pgprompt's own, rewrote the results inside the compile's
    mark-sent UPDATE and recomputed the digest. The compile now refuses to write while the
    trigger stands (foreign_code_refused, 42501, naming it and how to drop it); the round is
    as it was; once the owner drops it, the compile sends EUR 10.00. A RAISE trigger on
    seal_nodes and a foreign key onto prompt.seal_nodes are refused the same way."""
    run = run_with_a_round_to_send(lp)

    def plant():
        lp.execute(FORGE)
        lp.execute("CREATE TRIGGER zz_forge BEFORE UPDATE ON prompt.rounds FOR EACH ROW EXECUTE FUNCTION public.lp_forge()")
    as_role(lp, "pgprompt_lp_careless", plant)
    try:
        for who in ("pgprompt_lp_careless", ROLES["administrator"], TENANT, None):
            def compile_():
                return refused(lp, "SELECT prompt.compile_turn(%s, %s)", (C1, run), "42501")
            e = as_role(lp, who, compile_) if who else compile_()
            assert e.diag.message_primary == 'foreign_code_refused: trigger "zz_forge" on prompt.rounds is not pgprompt\'s', e
            assert "DROP TRIGGER zz_forge ON prompt.rounds;" in e.diag.message_hint
        assert lp.execute("SELECT results::text LIKE '%%EUR 10.00%%', sent_at IS NULL FROM prompt.rounds "
                          "WHERE turn_id = %s", (run,)).fetchone() == (True, True)
        found = lp.execute("SELECT severity, fix FROM prompt.security_check() WHERE object = 'trigger zz_forge on prompt.rounds'").fetchall()
        assert found == [("critical", "DROP TRIGGER zz_forge ON prompt.rounds;")], found
    finally:
        lp.execute("DROP TRIGGER IF EXISTS zz_forge ON prompt.rounds")
        lp.execute("DROP FUNCTION IF EXISTS public.lp_forge()")
    body = lp.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, run)).fetchone()[0]
    assert "EUR 10.00" in body and "99999" not in body
    assert lp.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0
    # A trigger that raises on seal_nodes, and a foreign key of the writer's table onto it.
    turn = lp.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt) VALUES (%s, 'reply', %s, 'x') "
                      "RETURNING id::text", (C1, ADA)).fetchone()[0]
    plants = {
        "lp_stop": ["CREATE FUNCTION public.lp_stop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE 'stop'; END $$",
                    "CREATE TRIGGER lp_stop BEFORE INSERT ON prompt.seal_nodes FOR EACH STATEMENT EXECUTE FUNCTION public.lp_stop()"],
        "lp_key": ["CREATE TABLE public.lp_refs (c uuid, n bigint, FOREIGN KEY (c, n) REFERENCES prompt.seal_nodes (conversation_id, id) "
                   "ON DELETE CASCADE)"],
        # pgprompt's own function, the writer's WHEN (the hostile review of 0.6).
        "lp_when": ["CREATE FUNCTION public.lp_when() RETURNS bool LANGUAGE sql AS 'SELECT false'",
                    "CREATE TRIGGER lp_when BEFORE INSERT ON prompt.seals FOR EACH STATEMENT WHEN (public.lp_when()) "
                    "EXECUTE FUNCTION prompt._touch_updated_at()"],
    }
    for name, statements in plants.items():
        for sql in statements:
            as_role(lp, "pgprompt_lp_careless", lambda sql=sql: lp.execute(sql))
        try:
            e = refused(lp, "SELECT prompt.compile_turn(%s, %s)", (C1, turn), "42501")
            assert e.diag.message_primary.startswith("foreign_code_refused: "), e
            assert ("lp_refs" in e.diag.message_primary) == (name == "lp_key"), e
        finally:
            lp.execute("DROP TRIGGER IF EXISTS lp_stop ON prompt.seal_nodes")
            lp.execute("DROP FUNCTION IF EXISTS public.lp_stop()")
            lp.execute("DROP TABLE IF EXISTS public.lp_refs")
            lp.execute("DROP TRIGGER IF EXISTS lp_when ON prompt.seals")
            lp.execute("DROP FUNCTION IF EXISTS public.lp_when()")
    assert lp.execute("SELECT prompt.compile_turn(%s, %s) IS NOT NULL", (C1, turn)).fetchone()[0]


# -- Keys --------------------------------------------------------------------------------

def test_keys_never_change(lp):
    """The rename of 0.5.0's review, as a tenant with examples/tenancy.sql's grants: a turn's
    id renamed in a writable CTE made the delete of its seal look like a cascade. Every key
    refuses UPDATE (key_immutable, 22023), so the seal stays and the turn compiles to the
    bytes that were sent; the same for conversations, workspaces, rounds, responses, counts
    and the tenancy rows."""
    run = run_with_a_round_to_send(lp)
    lp.execute("SELECT prompt.compile_turn(%s, %s)", (C1, run))
    record(lp, C1, run, fresh_id(final_response("anthropic")))
    lp.execute("SELECT prompt.record_count(%s, %s, 100)", (C1, run))
    sealed = lp.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0]
    attacks = [
        ("WITH u AS (UPDATE prompt.turns SET id = '00000000-0000-4000-8000-0000000dffff' WHERE id = %s RETURNING 1) "
         "DELETE FROM prompt.seals WHERE turn_id = %s AND EXISTS (SELECT 1 FROM u)", (T4, T4)),
        ("WITH u AS (UPDATE prompt.turns SET seq = seq + 1000 WHERE id = %s RETURNING 1) "
         "DELETE FROM prompt.rounds WHERE turn_id = %s AND EXISTS (SELECT 1 FROM u)", (run, run)),
        ("UPDATE prompt.turns SET conversation_id = %s WHERE id = %s", (GLOBEX_CONV, T4)),
        ("UPDATE prompt.conversations SET id = '00000000-0000-4000-8000-00000000cfff' WHERE id = %s", (C1,)),
        ("UPDATE prompt.workspaces SET id = '00000000-0000-4000-8000-00000000afff' WHERE id = %s", (ACME,)),
        ("UPDATE prompt.rounds SET n = n + 10 WHERE turn_id = %s", (run,)),
        ("UPDATE prompt.responses SET step = step + 10 WHERE turn_id = %s", (run,)),
        ("UPDATE prompt.counts SET turn_id = %s WHERE turn_id = %s", (T4, run)),
    ]
    for who in (TENANT, ROLES["administrator"], None):
        for sql, args in attacks:
            def attack():
                return refused(lp, sql, args)
            e = as_role(lp, who, attack) if who else attack()
            # The key's refusal; a sealed turn's own guard or row-level security may refuse first.
            assert e.sqlstate in ("22023", "55000", "42501", "23503"), (who, sql, e)
            if e.sqlstate in ("22023", "55000"):
                assert e.diag.message_primary.startswith(("key_immutable: ", "sealed_turn_immutable: ")), e
    for sql, args in (("UPDATE prompt.tenants SET role_name = %s WHERE role_name = %s", (NOBODY, TENANT)),
                      ("UPDATE prompt.administrators SET role_name = %s WHERE role_name = %s", (NOBODY, ROLES["administrator"]))):
        e = refused(lp, sql, args, "22023")
    assert lp.execute("SELECT prompt.compile_turn(%s, %s)::text", (C1, T4)).fetchone()[0] == sealed
    assert lp.execute("SELECT count(*) FROM prompt.seals WHERE turn_id = %s", (T4,)).fetchone()[0] == 1
    assert lp.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0


# -- What a seal sent -----------------------------------------------------------------------

def test_what_a_seal_sent_is_frozen(lp):
    """A message turn T4's seal sent (T1) and a reply's prompt and answer (T2): a tenant or a
    writer changing what was sent is refused (55000) without the rewrite privilege; a
    superuser's rewrite on purpose goes through, and the next seal marks the turn again.
    Edited with the guards off, verify_seals lists it. An answer that comes after the seal
    that sent its turn fills in."""
    edits = [("UPDATE prompt.turns SET content = 'forged' WHERE id = %s", (T1,)),
             ("UPDATE prompt.turns SET role = 'assistant' WHERE id = %s", (T1,)),
             ("UPDATE prompt.turns SET prompt = 'forged' WHERE id = %s", (T2,)),
             ("UPDATE prompt.turns SET content = 'forged' WHERE id = %s", (T2,)),
             ("UPDATE prompt.turns SET created_at = created_at - interval '1 day' WHERE id = %s", (T2,))]
    for who in (TENANT, ROLES["administrator"], None):
        for sql, args in edits:
            def edit():
                return refused(lp, sql, args, "55000")
            try:
                e = as_role(lp, who, edit) if who else edit()
            except BaseException:
                print("not refused:", who, sql)
                raise
            assert "was sent by a later sealed turn" in e.diag.message_primary, e
    assert lp.execute("SELECT sent_at IS NOT NULL AND sent_digest IS NOT NULL FROM prompt.turns WHERE id = %s", (T1,)).fetchone()[0]
    with lp.transaction():
        lp.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
        lp.execute("UPDATE prompt.turns SET content = content || ' (edited)' WHERE id = %s", (T1,))
    assert lp.execute("SELECT sent_digest FROM prompt.turns WHERE id = %s", (T1,)).fetchone()[0] is None
    with lp.transaction():
        lp.execute("SET LOCAL pgprompt.allow_history_rewrite = on")
        lp.execute("UPDATE prompt.turns SET content = replace(content, ' (edited)', '') WHERE id = %s", (T1,))
    # Guards off (replica mode, a superuser's): verify_seals sees it.
    with lp.transaction():
        lp.execute("SET LOCAL session_replication_role = replica")
        lp.execute("UPDATE prompt.turns SET prompt = prompt || '!' WHERE id = %s", (T2,))
    assert lp.execute("SELECT problem FROM prompt.verify_seals(%s) WHERE turn_id = %s", (C1, T2)).fetchall() == [
        ("the turn was sent by a later seal and no longer matches what was sent",)]
    with lp.transaction():
        lp.execute("SET LOCAL session_replication_role = replica")
        lp.execute("UPDATE prompt.turns SET prompt = rtrim(prompt, '!') WHERE id = %s", (T2,))
    # A late answer: turn A sealed, turn B sealed before A's answer came.
    conv = new_conversation(lp, "anthropic")
    a = new_turn(lp, conv, "anthropic", mode="direct_reply")
    lp.execute("SELECT prompt.compile_turn(%s, %s)", (conv, a))
    b = new_turn(lp, conv, "anthropic", mode="direct_reply", prompt="And Lyon?")
    lp.execute("SELECT prompt.compile_turn(%s, %s)", (conv, b))
    assert lp.execute("SELECT sent_at IS NOT NULL, content FROM prompt.turns WHERE id = %s", (a,)).fetchone() == (True, None)
    record(lp, conv, a, final_response("anthropic"))
    assert lp.execute("SELECT content IS NOT NULL, sent_digest FROM prompt.turns WHERE id = %s", (a,)).fetchone() == (True, None)
    refused(lp, "UPDATE prompt.turns SET content = 'forged' WHERE id = %s", (a,), "55000")
    c = new_turn(lp, conv, "anthropic", mode="direct_reply", prompt="And Nice?")
    lp.execute("SELECT prompt.compile_turn(%s, %s)", (conv, c))
    assert lp.execute("SELECT sent_digest IS NOT NULL FROM prompt.turns WHERE id = %s", (a,)).fetchone()[0]
    assert lp.execute("SELECT count(*) FROM prompt.verify_seals()").fetchone()[0] == 0
    # Nobody marks a turn sent but a seal.
    for sql in ("UPDATE prompt.turns SET sent_at = NULL WHERE id = %s", "UPDATE prompt.turns SET sent_digest = '\\x00' WHERE id = %s",
                "UPDATE prompt.turns SET sent_at = now() WHERE id = %s"):
        refused(lp, sql, (c,) if "now()" in sql else (T2,), "55000")


def test_a_turn_edited_while_a_seal_is_written_is_not_marked_with_what_was_not_sent(lp):
    """Found by the hostile review of 0.6: a turn edited (and committed) between a compile's
    read and its seal was marked sent with the edited text's digest, which the seal never
    sent. A seal marks a turn only where it still reads as the compile read it."""
    import threading
    import time
    conv = new_conversation(lp, "anthropic")
    first = new_turn(lp, conv, "anthropic", mode="direct_reply", prompt="Refund the duplicate, please.")
    lp.execute("UPDATE prompt.turns SET content = 'Refunded.' WHERE id = %s", (first,))
    second = new_turn(lp, conv, "anthropic", mode="direct_reply", prompt="And the credit note?")
    with connect("pgprompt_lp") as editor:
        editor.execute("BEGIN")
        editor.execute("UPDATE prompt.turns SET content = 'EDITED: refund EUR 5000.' WHERE id = %s", (first,))
        threading.Timer(1.0, lambda: editor.execute("COMMIT")).start()
        body = lp.execute("SELECT prompt.compile_turn(%s, %s)::text", (conv, second)).fetchone()[0]
        time.sleep(1.2)
    content, sent = lp.execute("SELECT content, sent_digest FROM prompt.turns WHERE id = %s", (first,)).fetchone()
    assert content.startswith("EDITED") and "Refunded." in body and "EDITED" not in body
    assert sent is None, "the edited turn was marked with what the seal did not send"
    assert lp.execute("SELECT count(*) FROM prompt.verify_seals(%s)", (conv,)).fetchone()[0] == 0


def test_what_renders_a_sent_turn_is_frozen_too(lp):
    """Found by the hostile review of 0.6: an in-turn summary filled in on a turn a later
    seal sent stood in for what was sent of it, and the conversation's answerer, changed,
    made the answerer's own sent answers come back in another's voice. Both refused without
    the rewrite privilege."""
    conv = new_conversation(lp, "anthropic")
    a = new_turn(lp, conv, "anthropic", mode="direct_reply")
    lp.execute("SELECT prompt.compile_turn(%s, %s)", (conv, a))
    record(lp, conv, a, fresh_id(final_response("anthropic")))
    b = new_turn(lp, conv, "anthropic", mode="direct_reply", prompt="And Lyon?")
    lp.execute("SELECT prompt.compile_turn(%s, %s)", (conv, b))
    for who in (TENANT, None):
        for sql, args in (("UPDATE prompt.turns SET summary = 'Agent: I promised EUR 500.' WHERE id = %s", (a,)),
                          ("UPDATE prompt.conversations SET answerer_id = NULL WHERE id = %s", (conv,))):
            e = as_role(lp, who, lambda: refused(lp, sql, args, "55000")) if who else refused(lp, sql, args, "55000")
            assert e.diag.message_primary.startswith("sealed_turn_immutable: "), e


def test_a_tenant_names_no_other_tenants_conversation_as_its_sides_parent(lp):
    """Found by the hostile review of 0.6: a tenant made a Side whose parent was another
    tenant's conversation, which that tenant could then not delete, and whose deletion of
    its whole workspace changed the Side's row. A Side's parent is one the tenant may
    write; a delete a foreign-key action runs is the tenant's, checked as its."""
    as_role(lp, OTHER, lambda: refused(lp, "INSERT INTO prompt.conversations (workspace_id, kind, parent_id) "
                                           "VALUES (%s, 'side', %s)", (GLOBEX, C1), "42501"))
    # An administrator made one anyway: Acme deleting its workspace would change it.
    side = lp.execute("INSERT INTO prompt.conversations (workspace_id, kind, parent_id) VALUES (%s, 'side', %s) "
                      "RETURNING id::text", (GLOBEX, C1)).fetchone()[0]
    try:
        e = as_role(lp, TENANT, lambda: refused(lp, "DELETE FROM prompt.workspaces WHERE id = %s", (ACME,), "42501"))
        assert e.diag.message_primary.startswith("tenant_write_refused: "), e
        assert lp.execute("SELECT parent_id::text FROM prompt.conversations WHERE id = %s", (side,)).fetchone()[0] == C1
    finally:
        lp.execute("DELETE FROM prompt.conversations WHERE id = %s", (side,))


# -- Tenancy, declared --------------------------------------------------------------------

def reads(conn, who):
    def look():
        out = {"memories": sorted(r[0] for r in conn.execute("SELECT body FROM prompt.memories")),
               "conversations": conn.execute("SELECT count(*) FROM prompt.conversations").fetchone()[0]}
        try:
            out["globex"] = "GLOBEX-7731" in conn.execute("SELECT prompt.preview_turn(%s, %s)::text",
                                                          (GLOBEX_CONV, GLOBEX_TURN)).fetchone()[0]
        except psycopg.Error as e:
            out["globex"] = e.sqlstate
        return out
    return as_role(conn, who, look)


def reads_in_transaction(conn, who):
    """What `who` reads, inside the open transaction (SET LOCAL ROLE, then back)."""
    conn.execute(f"SET LOCAL ROLE {who}")
    try:
        out = {"memories": sorted(r[0] for r in conn.execute("SELECT body FROM prompt.memories")),
               "conversations": conn.execute("SELECT count(*) FROM prompt.conversations").fetchone()[0]}
        conn.execute("SAVEPOINT r")
        try:
            out["globex"] = "GLOBEX-7731" in conn.execute("SELECT prompt.preview_turn(%s, %s)::text",
                                                          (GLOBEX_CONV, GLOBEX_TURN)).fetchone()[0]
        except psycopg.Error as e:
            out["globex"] = e.sqlstate
            conn.execute("ROLLBACK TO SAVEPOINT r")
        return out
    finally:
        conn.execute("RESET ROLE")


def test_tenancy_is_declared(lp):
    """0.5.0 inferred tenancy from prompt.tenants: a tenant that emptied it (TRUNCATE with a
    careless grant), or the last tenant deleting its workspace, unconfined everyone. Tenancy
    is on because an administrator turned it on: emptying the tenancy tables confines every
    unlisted role to nothing; only an administrator turns it off or writes the tenancy rows."""
    assert reads(lp, TENANT)["globex"] == "P0002"
    assert reads(lp, NOBODY) == {"memories": [], "conversations": 0, "globex": "P0002"}
    for who in (TENANT, NOBODY, ROLES["writer"], ROLES["reader"]):
        e = as_role(lp, who, lambda: refused(lp, "SELECT prompt.set_tenancy(false)", (), "42501"))
        assert e.diag.message_primary == "administrator_required: turning tenancy off is an administrator's", e
        for sql in ("DELETE FROM prompt.tenancy", "UPDATE prompt.tenancy SET enabled_by = 'x'"):
            as_role(lp, who, lambda sql=sql: refused(lp, sql, (), "42501"))
        # Listing itself, or another, as a tenant of Globex: row-level security refuses it.
        as_role(lp, who, lambda: refused(lp, "INSERT INTO prompt.tenants (role_name, workspace_id) VALUES (current_user, %s)",
                                         (GLOBEX,), "42501"))
    assert lp.execute("SELECT count(*) FROM prompt.tenancy").fetchone()[0] == 1
    # A careless grant gives TRUNCATE: the tenancy row takes no TRUNCATE but an
    # administrator's; emptying prompt.tenants confines everyone unlisted. (Each case in a
    # transaction rolled back.)
    lp.execute("BEGIN")
    try:
        lp.execute("DELETE FROM prompt.administrators WHERE role_name = 'pgprompt_lp_careless'")
        lp.execute("SET LOCAL ROLE pgprompt_lp_careless")
        lp.execute("SAVEPOINT s")
        with pytest.raises(psycopg.Error) as e:
            lp.execute("TRUNCATE prompt.tenancy")
        assert e.value.sqlstate == "42501", e.value
        lp.execute("ROLLBACK TO SAVEPOINT s")
        lp.execute("TRUNCATE prompt.tenants")
        assert lp.execute("SELECT count(*) FROM prompt.memories WHERE body = 'GLOBEX-7731'").fetchone()[0] == 0
        lp.execute("RESET ROLE")
        for who in (TENANT, OTHER, NOBODY):
            assert reads_in_transaction(lp, who) == {"memories": [], "conversations": 0, "globex": "P0002"}, who
    finally:
        lp.execute("ROLLBACK")
    # The last tenant of a workspace leaves it, then an administrator empties the table.
    lp.execute("BEGIN")
    try:
        lp.execute("DELETE FROM prompt.tenants WHERE role_name = %s", (OTHER,))
        assert reads_in_transaction(lp, OTHER) == {"memories": [], "conversations": 0, "globex": "P0002"}
        lp.execute("DELETE FROM prompt.tenants")
        for who in (TENANT, NOBODY):
            assert reads_in_transaction(lp, who)["conversations"] == 0, who
    finally:
        lp.execute("ROLLBACK")
    # Every tenant deletes its own workspace (the cascade takes its tenants row): each
    # then reads nothing, nor does anyone unlisted (0.5.0: the last one unconfined all).
    lp.execute("BEGIN")
    try:
        for tenant, ws in ((TENANT, ACME), (OTHER, GLOBEX)):
            lp.execute(f"SET LOCAL ROLE {tenant}")
            assert lp.execute("DELETE FROM prompt.workspaces WHERE id = %s", (ws,)).rowcount == 1
            lp.execute("RESET ROLE")
        assert lp.execute("SELECT count(*) FROM prompt.tenants").fetchone()[0] == 0
        for who in (TENANT, OTHER, NOBODY):
            assert reads_in_transaction(lp, who)["conversations"] == 0, who
    finally:
        lp.execute("ROLLBACK")
    # Off, by an administrator: grants decide again.
    lp.execute("BEGIN")
    try:
        lp.execute("SET LOCAL ROLE pgprompt_lp_careless")
        lp.execute("SELECT prompt.set_tenancy(false)")
        lp.execute("RESET ROLE")
        assert reads_in_transaction(lp, NOBODY)["globex"] is True
    finally:
        lp.execute("ROLLBACK")
    assert reads(lp, NOBODY)["globex"] == "P0002"


def test_the_update_from_0_5_turns_tenancy_on_where_tenants_are_listed():
    fresh_database("pgprompt_lp_matrix")
    frozen_release("0.5.0")
    with connect("pgprompt_lp_matrix") as c:
        c.execute("CREATE EXTENSION pgprompt VERSION '0.5.0'")
        c.execute((ROOT / "demo/example.sql").read_text())
        c.execute("INSERT INTO prompt.tenants (role_name, workspace_id) VALUES (%s, %s)", (TENANT, ACME))
        c.execute("ALTER EXTENSION pgprompt UPDATE")
        assert c.execute("SELECT count(*) FROM prompt.tenancy").fetchone()[0] == 1
    fresh_database("pgprompt_lp_matrix")
    with connect("pgprompt_lp_matrix") as c:
        c.execute("CREATE EXTENSION pgprompt VERSION '0.5.0'")
        c.execute("ALTER EXTENSION pgprompt UPDATE")
        assert c.execute("SELECT count(*) FROM prompt.tenancy").fetchone()[0] == 0


# -- Readers, and the rest of 0.5.0's review --------------------------------------------------

def test_a_reader_writes_and_locks_nothing(lp):
    """A reader previews and explains, and writes nothing: no seal, no response; the
    internal lock of the turns trigger takes nothing for it (0.5 took the conversation's row
    lock as the tables' owner for anyone who asked)."""
    reader = ROLES["reader"]
    lp.execute("INSERT INTO prompt.tenants (role_name, workspace_id) VALUES (%s, %s)", (reader, ACME))
    assert as_role(lp, reader, lambda: lp.execute("SELECT prompt.preview_turn(%s, %s) IS NOT NULL", (C1, T4)).fetchone()[0])
    turn = lp.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt) VALUES (%s, 'reply', %s, 'r') "
                      "RETURNING id::text", (C1, ADA)).fetchone()[0]
    as_role(lp, reader, lambda: refused(lp, "SELECT prompt.compile_turn(%s, %s)", (C1, turn), "42501"))
    lp.execute("BEGIN")
    try:
        lp.execute(f"SET LOCAL ROLE {reader}")
        lp.execute("SELECT prompt._lock_conversation(%s)", (C1,))
        with connect("pgprompt_lp") as other:
            # NOWAIT: 55P03 if the reader's call locked the row.
            other.execute("SELECT 1 FROM prompt.conversations WHERE id = %s FOR UPDATE NOWAIT", (C1,))
    finally:
        lp.execute("ROLLBACK")
    lp.execute("DELETE FROM prompt.turns WHERE id = %s", (turn,))
    lp.execute("DELETE FROM prompt.tenants WHERE role_name = %s", (reader,))


RETIRED_SPELLINGS = ["Test-Lifecycle", " test-lifecycle ", "test-lifecycle@20260101", "test-lifecycle:latest",
                     "test-lifecycle\u200b", "TEST-LIFECYCLE-2026-01-01"]


@pytest.mark.parametrize("spelling", RETIRED_SPELLINGS)
def test_a_retired_model_is_refused_however_it_is_spelled(lp, spelling):
    lp.execute("INSERT INTO prompt.model_profiles (name, provider, wires, retires_at, replacement, lifecycle_source) "
               "VALUES ('test-lifecycle', 'openai', '{chat}', '2000-01-01', 'gpt-5.5', 'a test''s own day') "
               "ON CONFLICT DO NOTHING")
    lp.execute("INSERT INTO prompt.models (name, wire) VALUES (%s, 'chat') ON CONFLICT DO NOTHING", (spelling,))
    turn = lp.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt, model) "
                      "VALUES (%s, 'reply', %s, 'Hi', %s) RETURNING id::text", (C1, ADA, spelling)).fetchone()[0]
    try:
        e = refused(lp, "SELECT prompt.preview_turn(%s, %s)", (C1, turn), "22023")
        assert e.diag.message_primary.startswith("model_retired: "), e
    finally:
        lp.execute("DELETE FROM prompt.turns WHERE id = %s", (turn,))
        lp.execute("DELETE FROM prompt.models WHERE name = %s", (spelling,))


def test_a_finished_run_takes_no_more_responses(lp):
    """0.5.0 kept recording new response ids as new rounds after an end_turn answer."""
    run = run_with_a_round_to_send(lp)
    lp.execute("SELECT prompt.compile_turn(%s, %s)", (C1, run))
    final = fresh_id(final_response("anthropic"))
    record(lp, C1, run, final)
    e = refused(lp, "SELECT prompt.record_response(%s, %s, %s)", (C1, run, json.dumps(fresh_id(final))), "22023")
    assert e.diag.message_primary.startswith(f"response_invalid: the run of turn {run} ended with round 2"), e
    assert lp.execute("SELECT count(*) FROM prompt.rounds WHERE turn_id = %s", (run,)).fetchone()[0] == 2
    # The same response again is the one recorded (idempotent), not refused.
    assert record(lp, C1, run, final)["step"] == 2


# -- Every function, as every actor ----------------------------------------------------------------

ODD = {"uuid": ["NULL", "'00000000-0000-0000-0000-000000000000'", f"'{C1}'", f"'{T4}'"],
       "text": ["NULL", "''", "'x'", "repeat('-', 100000)", "'\u200b'", "'prompt.turns'", "'TRUNCATE'"],
       "jsonb": ["NULL", "'null'", "'[]'", "'{}'", "'\"x\"'", "'[{\"type\": \"tool_call\"}]'", "'{\"content\": [1]}'"],
       "json": ["NULL", "'null'", "'[]'", "'{}'", "'1e400'"],
       "integer": ["NULL", "0", "-1", "2147483647"], "bigint": ["NULL", "-1", "9223372036854775807"],
       "boolean": ["NULL", "true", "false"], "timestamp with time zone": ["NULL", "'infinity'", "now()"],
       "text[]": ["NULL", "'{}'", "'{NULL}'", "'{x,y}'"], "integer[]": ["NULL", "'{}'", "'{NULL,-1}'"],
       "regclass": ["NULL", "'prompt.turns'"]}


def test_every_function_as_every_actor(lp, no_crash):
    """Every function of schema prompt a role can call (not a trigger's or an event
    trigger's), with NULLs and odd values, as each actor: no XX000, and no backend crash."""
    fns = lp.execute("SELECT p.oid::regprocedure::text, p.proname, p.prokind, "
                     "ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t) "
                     "FROM pg_proc p WHERE p.pronamespace = 'prompt'::regnamespace "
                     "AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype) ORDER BY 1").fetchall()
    assert len(fns) > 50
    calls, states = 0, {}
    for who in (None, *ROLES.values(), TENANT, NOBODY):
        for sig, name, kind, types in fns:
            if name in ("backfill_token_counts", "convert_seals_02"):
                continue  # procedures that commit: tried in their own tests
            choices = [ODD.get(t, ["NULL"]) for t in types]
            for i in range(max([len(c) for c in choices] + [1])):
                args = ", ".join(c[i % len(c)] for c in choices)
                call = f"SELECT prompt.{name}({args})" if kind == "f" else f"CALL prompt.{name}({args})"
                # Each call in a transaction rolled back: nothing it writes stays.
                try:
                    with lp.transaction():
                        if who:
                            lp.execute(f"SET LOCAL ROLE {who}")
                        lp.execute("SET LOCAL statement_timeout = '5s'")
                        cur = lp.execute(call)
                        if cur.description is not None:
                            cur.fetchall()
                        raise _Rollback
                except _Rollback:
                    pass
                except psycopg.Error as e:
                    assert e.sqlstate != "XX000", (who, call, str(e))
                    states[e.sqlstate] = states.get(e.sqlstate, 0) + 1
                calls += 1
    assert calls > 500, calls


class _Rollback(Exception):
    pass


# -- security_check --------------------------------------------------------------------------

WEAKENINGS = [
    # (what, the statement that weakens, the statement that mends, severity, words of the problem)
    ("a careless grant", "ALTER EVENT TRIGGER pgprompt_privileges DISABLE | GRANT TRUNCATE ON prompt.turns TO {r} | "
                         "ALTER EVENT TRIGGER pgprompt_privileges ENABLE",
     "REVOKE TRUNCATE ON prompt.turns FROM {r}", "critical", "holds TRUNCATE"),
    ("a trigger of another's", "CREATE FUNCTION public.lp_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$ | "
                               "CREATE TRIGGER lp_noop AFTER INSERT ON prompt.counts FOR EACH STATEMENT EXECUTE FUNCTION public.lp_noop()",
     "DROP TRIGGER lp_noop ON prompt.counts | DROP FUNCTION public.lp_noop()", "critical", "did not create"),
    ("a foreign key onto a table", "CREATE TABLE public.lp_fk (id uuid REFERENCES prompt.conversations (id))",
     "DROP TABLE public.lp_fk", "critical", "a foreign key of"),
    ("REFERENCES on a column", "ALTER EVENT TRIGGER pgprompt_privileges DISABLE | "
                               "GRANT REFERENCES (id) ON prompt.conversations TO {r} | ALTER EVENT TRIGGER pgprompt_privileges ENABLE",
     "REVOKE REFERENCES (id) ON prompt.conversations FROM {r}", "critical", "REFERENCES on a column"),
    # Found by a hostile review of 0.6: what PostgreSQL reads as replica in another case,
    # the privilege to set it, the rewrite as a boolean spelled short, default privileges.
    ("replica spelled in capitals", "ALTER ROLE {r} SET session_replication_role = 'Replica'",
     "ALTER ROLE {r} RESET session_replication_role", "critical", "triggers do not fire"),
    ("SET on session_replication_role", "GRANT SET ON PARAMETER session_replication_role TO {r}",
     "REVOKE SET ON PARAMETER session_replication_role FROM {r}", "critical", "triggers do not fire"),
    ("the rewrite spelled t", "ALTER ROLE {r} SET pgprompt.allow_history_rewrite = 't'",
     "ALTER ROLE {r} RESET pgprompt.allow_history_rewrite", "warning", "history rewrite is on"),
    ("default privileges in the schema", "ALTER DEFAULT PRIVILEGES IN SCHEMA prompt GRANT SELECT ON TABLES TO {r}",
     "ALTER DEFAULT PRIVILEGES IN SCHEMA prompt REVOKE SELECT ON TABLES FROM {r}", "warning", "privilege matrix"),
    ("pgprompt's trigger disabled", "ALTER TABLE prompt.seals DISABLE TRIGGER seals_guard",
     "ALTER TABLE prompt.seals ENABLE TRIGGER seals_guard", "critical", "is disabled"),
    ("the event trigger disabled", "ALTER EVENT TRIGGER pgprompt_privileges_before DISABLE",
     "ALTER EVENT TRIGGER pgprompt_privileges_before ENABLE", "critical", "event trigger is disabled"),
    ("row-level security off", "ALTER TABLE prompt.memories DISABLE ROW LEVEL SECURITY",
     "ALTER TABLE prompt.memories ENABLE ROW LEVEL SECURITY", "critical", "row-level security is off"),
    ("an object in the schema", "CREATE FUNCTION prompt.lp_shadow() RETURNS int LANGUAGE sql AS 'SELECT 1'",
     "DROP FUNCTION prompt.lp_shadow()", "critical", "did not create"),
    ("CREATE on the schema", "GRANT CREATE ON SCHEMA prompt TO {r}", "REVOKE CREATE ON SCHEMA prompt FROM {r}",
     "critical", "may create objects"),
    ("an owner of another", "ALTER TABLE prompt.counts OWNER TO {r}", "ALTER TABLE prompt.counts OWNER TO {owner}",
     "critical", "owned by"),
    ("tenants listed, tenancy off", "SELECT prompt.set_tenancy(false)", "SELECT prompt.set_tenancy(true)",
     "warning", "tenancy is off"),
    ("a tenant naming no role", "INSERT INTO prompt.tenants (role_name, workspace_id) VALUES ('lp_no_such_role', '{ws}')",
     "DELETE FROM prompt.tenants WHERE role_name = 'lp_no_such_role'", "warning", "confines nobody"),
    ("the rewrite on for a role", "ALTER ROLE {r} SET pgprompt.allow_history_rewrite = on",
     "ALTER ROLE {r} RESET pgprompt.allow_history_rewrite", "warning", "history rewrite is on"),
    ("replica mode for the database", "ALTER DATABASE pgprompt_lp_check SET session_replication_role = replica",
     "ALTER DATABASE pgprompt_lp_check RESET session_replication_role", "critical", "triggers do not fire"),
    ("a policy of a user's", "CREATE POLICY lp_mine ON prompt.skills AS RESTRICTIVE USING (true)",
     "DROP POLICY lp_mine ON prompt.skills", "info", "a policy of a user"),
]


@pytest.fixture(scope="module")
def checked():
    """A correct install: the demo, the README's roles, the tenancy example and a tenant."""
    conn = make_database("pgprompt_lp_check")
    readme_grants(conn)
    conn.execute((ROOT / "examples/tenancy.sql").read_text())
    conn.execute(f"GRANT prompt_tenant TO {TENANT}")
    conn.execute("INSERT INTO prompt.tenants (role_name, workspace_id) VALUES (%s, %s)", (TENANT, ACME))
    conn.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
    yield conn
    conn.close()
    with connect("postgres") as admin:
        admin.execute("DROP DATABASE IF EXISTS pgprompt_lp_check")


@pytest.mark.parametrize("what,weaken,mend,severity,words", WEAKENINGS, ids=[w[0] for w in WEAKENINGS])
def test_security_check_lists_each_weakening(checked, what, weaken, mend, severity, words):
    """Empty on a correct install; each weakening listed, with its severity and the fix,
    and counted by prompt.status unless it is information; empty again once mended."""
    lp = checked
    owner = lp.execute("SELECT relowner::regrole::text FROM pg_class WHERE oid = 'prompt.turns'::regclass").fetchone()[0]
    fill = dict(r=NOBODY, owner=owner, ws=ACME)
    assert lp.execute("SELECT * FROM prompt.security_check()").fetchall() == []
    for stmt in weaken.format(**fill).split(" | "):
        lp.execute(stmt)
    try:
        rows = lp.execute("SELECT severity, problem, fix FROM prompt.security_check()").fetchall()
        # One row (a foreign key: one per action trigger it stands on the table with).
        assert rows and {r[0] for r in rows} == {severity} and all(words in r[1] and r[2] for r in rows), rows
        counted = lp.execute("SELECT DISTINCT security_problems FROM prompt.status").fetchall()
        assert counted == [(0 if severity == "info" else len(rows),)], counted
    finally:
        for stmt in mend.format(**fill).split(" | "):
            lp.execute(stmt)
    assert lp.execute("SELECT * FROM prompt.security_check()").fetchall() == []


def test_the_threat_model_names_tests_that_exist():
    """Each "cannot" of README's threat model names a test that is there."""
    text = readme_security()
    table = text[text.index("**The threat model**"):]
    named = set(re.findall(r"`(?:(test_[a-z_0-9]+)\.py::)?(test_[a-z_0-9]+)`", table))
    assert len(named) >= 8, named
    for module, test in named:
        source = (ROOT / f"tests/python/{module or 'test_least_privilege'}.py").read_text()
        assert f"def {test}(" in source, (module, test)
