#!/usr/bin/env python3
"""Prints the CREATE FUNCTION statements of the named functions from the install script
`cargo pgrx install` generated (for writing an update script by hand, without copying
them wrong):

    scripts/extension-functions.py /usr/share/postgresql/15/extension/pgprompt--0.3.0.sql compile_turn ...
"""
import re
import sys

script, names = open(sys.argv[1]).read(), sys.argv[2:]
for name in names:
    m = re.search(rf'^CREATE  FUNCTION "{name}"\(.*?;$', script, re.S | re.M)
    if not m:
        sys.exit(f"no function {name} in {sys.argv[1]}")
    text = re.sub(r" /\*.*?\*/", "", m.group(0))
    print(text.replace(f'CREATE  FUNCTION "{name}"', f'CREATE FUNCTION prompt."{name}"', 1))
