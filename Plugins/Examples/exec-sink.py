#!/usr/bin/env python3
"""An example exec sink (see Docs/Plugins.md): Cohort runs it once per notice, with the notice as one
JSON line on standard input.

Exit 0: delivered. Exit 75: try again later (here: when the inbox folder is missing). Anything else:
give up on this notice; what is printed on standard error is recorded with it.

Configure it with:
    [[sinks]]
    type = "exec"
    command = ["python3", "exec-sink.py", "/path/to/inbox"]
"""
import json
import os
import sys

inbox = sys.argv[1] if len(sys.argv) > 1 else "inbox"
notice = json.loads(sys.stdin.readline())

if not os.path.isdir(inbox):
    print(f"{inbox} is not there yet", file=sys.stderr)
    sys.exit(75)
if notice.get("type") not in {"content.created", "content.edited", "content.renamed", "content.moved",
                              "content.deleted", "content.commented", "membership.added",
                              "membership.removed", "mention"}:
    print(f"unknown notice type {notice.get('type')!r}", file=sys.stderr)
    sys.exit(1)

with open(os.path.join(inbox, notice["id"] + ".json"), "w") as out:
    json.dump(notice, out, indent=2, sort_keys=True)
sys.exit(0)
