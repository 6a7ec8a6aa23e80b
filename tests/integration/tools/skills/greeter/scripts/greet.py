import json
import os
import sys

if len(sys.argv) < 2 or not sys.argv[1]:
    print("usage: greet.py NAME", file=sys.stderr)
    sys.exit(2)
print(json.dumps({"greeting": "hello " + sys.argv[1],
                  "args": sys.argv[1:],
                  # PWD comes from the kernel's cwd, LC_CTYPE from Python's
                  # own C-locale coercion (PEP 538): neither from the server
                  "env": sorted(k for k in os.environ
                                if k not in ("PWD", "LC_CTYPE")),
                  "cwd": os.getcwd()}))
