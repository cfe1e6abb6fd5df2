"""Assembles sql/pgprompt--0.4.0--0.5.0.sql from sql/updates/0.4.0--0.5.0.template.sql: blocks copied from
sql/schema.sql, sql/finalize.sql, sql/profiles.sql and the generated install script, so the
update creates exactly what a fresh install does.

Run after a change to those files: python3 sql/updates/gen.py sql/releases/pgprompt--0.5.0.sql
"""
import os, re, sys
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
gen = open(sys.argv[1]).read()  # the install script cargo pgrx generates (or its frozen copy)
schema = open(f"{ROOT}/sql/schema.sql").read()
fin = open(f"{ROOT}/sql/finalize.sql").read()
profiles = open(f"{ROOT}/sql/profiles.sql").read()
old = open(f"{ROOT}/sql/releases/pgprompt--0.4.0.sql").read()

def fn(name):
    # A body in $$ quotes, or SQL-standard (BEGIN ATOMIC ... END;).
    m = re.search(r"(?ms)^CREATE FUNCTION prompt\.%s\(.*?(?:\$\$;|^END;)\n" % re.escape(name), fin)
    assert m, name
    return m.group(0).rstrip("\n")

def block(text, start):
    i = text.index(start)
    if start.startswith("DO $rls$"):
        j = text.index("$rls$;", i) + len("$rls$;")
    elif start.startswith("DO $owner$"):
        j = text.index("$owner$;", i) + len("$owner$;")
    else:
        j = text.index(";\n", i) + 1
    return text[i:j]

def pgrx(name):
    m = re.search(r'(?s)CREATE  FUNCTION "%s"\(.*?;\n' % re.escape(name), gen)
    assert m, name
    return m.group(0).replace('CREATE  FUNCTION "%s"' % name, 'CREATE FUNCTION prompt."%s"' % name).rstrip("\n")

def triggers(names):
    out = []
    for n in names.split(","):
        m = re.search(r"(?ms)^CREATE TRIGGER %s\b.*?;\n" % re.escape(n), fin)
        assert m, n
        out.append(m.group(0).rstrip("\n"))
    return "\n".join(out)

def view(name):
    m = re.search(r"(?ms)^CREATE VIEW prompt\.%s\b.*?;\n" % re.escape(name), fin)
    assert m, name
    return m.group(0).rstrip("\n")

def comments():
    """Every COMMENT of the fresh install that 0.4's script does not have, as it is."""
    def comment_stmts(text):
        return re.findall(r"(?ms)^COMMENT ON .*?';\n", text)
    have = set(" ".join(c.split()) for c in comment_stmts(old))
    return "".join(c for c in comment_stmts(fin) if " ".join(c.split()) not in have).rstrip("\n")

t = open(f"{ROOT}/sql/updates/0.4.0--0.5.0.template.sql").read()
def sub(m):
    kind, arg = m.group(1), m.group(2)
    if kind == "fn": return fn(arg)
    if kind == "fn-replace": return fn(arg).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
    if kind == "pgrx": return pgrx(arg)
    if kind == "pgrx-replace": return pgrx(arg).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
    if kind == "triggers": return triggers(arg)
    if kind == "view": return view(arg)
    if kind == "file": return profiles.rstrip("\n")
    if kind == "comment":
        m = re.search(r"(?ms)^COMMENT ON %s IS.*?';\n" % re.escape(arg), fin)
        assert m, arg
        return m.group(0).rstrip("\n")
    if kind == "block":
        src, start = arg.split(":", 1)
        return block({"schema": schema, "finalize": fin}[src], start)
    if kind == "block-replace":
        src, start = arg.split(":", 1)
        return block({"schema": schema, "finalize": fin}[src], start).replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1)
    raise SystemExit(kind)
t = re.sub(r"\{\{([a-z-]+):([^}]*)\}\}", sub, t)
t = t.replace("{{comments}}", comments())
target = f"{ROOT}/sql/pgprompt--0.4.0--0.5.0.sql"
if "--check" in sys.argv:
    if open(target).read() != t + "\n":
        raise SystemExit(f"{target} is not what sql/updates/gen.py makes of today's SQL: run it")
else:
    open(target, "w").write(t + "\n")
    print("written", len(t))
