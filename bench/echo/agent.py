"""The trivial echo agent: the cheapest possible peer, to measure the pipe round trip."""

import json
import sys

out = sys.stdout
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "ping":
        out.write(f'{{"type":"pong","id":{msg["id"]}}}\n')
    elif kind == "request":
        out.write(f'{{"type":"action","id":{msg["id"]},"action":"{msg["legal"][0]}"}}\n')
    elif kind == "hello":
        out.write('{"type":"ready","protocol":1,"name":"echo","version":"1.0.0"}\n')
    elif kind == "quit":
        break
    else:
        continue
    out.flush()
