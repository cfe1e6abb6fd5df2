"""Assembles the newest update script, sql/pgprompt--FROM--TO.sql, from its template
sql/updates/FROM--TO.template.sql: blocks copied from sql/schema.sql, sql/finalize.sql,
sql/profiles.sql and the generated install script, so the update creates exactly what a
fresh install does. An update once released is frozen: only the newest is generated.

Run after a change to those files:
    python3 sql/updates/gen.py FROM TO <the install script cargo pgrx generates> [--check]
(0.4.0 -> 0.5.0 was generated so and is frozen: sql/updates/0.4.0--0.5.0.template.sql.)
"""
import os, re, sys
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FROM, TO = sys.argv[1], sys.argv[2]
gen = open(sys.argv[3]).read()  # the install script cargo pgrx generates (or its frozen copy)
schema = open(f"{ROOT}/sql/schema.sql").read()
fin = open(f"{ROOT}/sql/finalize.sql").read()
profiles = open(f"{ROOT}/sql/profiles.sql").read()
old = open(f"{ROOT}/sql/releases/pgprompt--{FROM}.sql").read()

def fn(name):
    # A body in $$ quotes, or SQL-standard (BEGIN ATOMIC ... END;).
    m = re.search(r"(?ms)^CREATE FUNCTION prompt\.%s\(.*?(?:\$\$;|^END;)\n" % re.escape(name), fin)
    assert m, name
    return m.group(0).rstrip("\n")

def proc(name):
    m = re.search(r"(?ms)^CREATE PROCEDURE prompt\.%s\(.*?\$\$;\n" % re.escape(name), fin)
    assert m, name
    return m.group(0).rstrip("\n").replace("CREATE PROCEDURE", "CREATE OR REPLACE PROCEDURE", 1)

def block(text, start):
    i = text.index(start)
    tag = re.match(r"DO (\$[a-z_]+\$)", start)
    if tag:
        j = text.index(tag.group(1) + ";", i) + len(tag.group(1) + ";")
    else:
        j = text.index(";\n", i) + 1
    return text[i:j]

def pgrx(name):
    # NAME~TEXT: of the overloads of NAME, the one whose definition holds TEXT (a parameter).
    name, _, holding = name.partition("~")
    found = [m for m in re.finditer(r'(?s)CREATE  FUNCTION "%s"\(.*?;\n' % re.escape(name), gen)
             if holding in m.group(0)]
    assert len(found) == 1, (name, holding, len(found))
    return found[0].group(0).replace('CREATE  FUNCTION "%s"' % name, 'CREATE FUNCTION prompt."%s"' % name).rstrip("\n")

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
    """Every COMMENT of the fresh install that the previous release's script does not have, as it is."""
    def comment_stmts(text):
        return re.findall(r"(?ms)^COMMENT ON .*?';\n", text)
    have = set(" ".join(c.split()) for c in comment_stmts(old))
    return "".join(c for c in comment_stmts(fin) if " ".join(c.split()) not in have).rstrip("\n")

t = open(f"{ROOT}/sql/updates/{FROM}--{TO}.template.sql").read()
def sub(m):
    kind, arg = m.group(1), m.group(2)
    if kind == "fn": return fn(arg)
    if kind == "fn-replace": return fn(arg).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
    if kind == "proc-replace": return proc(arg)
    if kind == "pgrx": return pgrx(arg)
    if kind == "pgrx-replace": return pgrx(arg).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
    if kind == "triggers": return triggers(arg)
    if kind == "view": return view(arg)
    if kind == "view-replace": return view(arg).replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1)
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
target = f"{ROOT}/sql/pgprompt--{FROM}--{TO}.sql"
if "--check" in sys.argv:
    if open(target).read() != t + "\n":
        raise SystemExit(f"{target} is not what sql/updates/gen.py makes of today's SQL: run it")
else:
    open(target, "w").write(t + "\n")
    print("written", len(t))
