#!/usr/bin/env python3
"""A Standard Webhooks receiver for tests, verifying every request with the reference
`standardwebhooks` package (PyPI), apart from Cohort's own code.

usage: webhook_receiver.py SECRET RECORDS PORTFILE [PORT] [SCRIPT]
Listens on 127.0.0.1:PORT (0: any), writes the port to PORTFILE, appends one JSON line per request
to RECORDS ({"id", "timestamp", "verified", "body"}). SCRIPT is a JSON list of answers given in
turn ({"status": 500}, {"status": 429, "retry_after": "2"}, {"sleep": 5}, {"status": 302,
"location": "http://..."}); after it, every answer is 200.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

secret, records, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
port = int(sys.argv[4]) if len(sys.argv) > 4 else 0
script = json.loads(sys.argv[5]) if len(sys.argv) > 5 else []
webhook = Webhook(secret)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            webhook.verify(body, headers)
            verified = True
        except Exception:
            verified = False
        with open(records, "a") as out:
            out.write(json.dumps({"id": headers.get("webhook-id"), "timestamp": headers.get("webhook-timestamp"),
                                  "verified": verified, "body": body.decode()}) + "\n")
        answer = script.pop(0) if script else {"status": 200}
        if "sleep" in answer:
            time.sleep(answer["sleep"])
        status = answer.get("status", 200) if verified else 401
        self.send_response(status)
        if "retry_after" in answer:
            self.send_header("Retry-After", answer["retry_after"])
        if "location" in answer:
            self.send_header("Location", answer["location"])
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


# The test stops the receiver by closing its standard input.
import os
import threading
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()

server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
with open(portfile + ".tmp", "w") as out:
    out.write(str(server.server_address[1]))
os.rename(portfile + ".tmp", portfile)
server.serve_forever()
