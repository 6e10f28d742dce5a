"""A paywatch webhook receiver in Python (standard library only).

    PAYWATCH_WEBHOOK_SECRET=... PORT=8000 python3 receiver.py

It accepts a delivery only when its Paywatch-Signature verifies under the
secret, and only when the signature's timestamp is within 5 minutes of now;
it answers 2xx to an event id it has already handled without handling it
again (paywatch delivers at least once). Keep the handled ids where your
orders are (a unique key written in the same transaction as the order's
update), not in memory as this example does.
"""
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ.get("PAYWATCH_WEBHOOK_SECRET", "").encode()
if not SECRET:
    sys.exit("set PAYWATCH_WEBHOOK_SECRET (the sandbox writes it to .paywatch/sandbox.env)")
PORT = int(os.environ.get("PORT", "8000"))
TOLERANCE_SECONDS = 300
seen = set()  # handled event ids
lock = threading.Lock()


def verify(header, body):
    """Returns "" when the delivery is genuine, else why not."""
    t, sigs = -1, []
    for part in (header or "").split(","):
        k, _, v = part.strip().partition("=")
        if k == "t":
            if not v.isdigit():
                return "bad timestamp"
            t = int(v)
        elif k == "v1":
            sigs.append(v)
    if t < 0 or not sigs:
        return "no signature"
    if abs(time.time() - t) > TOLERANCE_SECONDS:
        return "timestamp outside the 5 minute window"
    want = hmac.new(SECRET, str(t).encode() + b"." + body, hashlib.sha256).hexdigest()
    if any(hmac.compare_digest(s, want) for s in sigs):
        return ""
    return "signature does not match"


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))  # raw bytes: verify first
        reason = verify(self.headers.get("Paywatch-Signature"), body)
        if reason:
            print("refused", reason, flush=True)
            return self.answer(400, reason)
        try:
            ev = json.loads(body)
        except ValueError:
            ev = None
        if not isinstance(ev, dict) or not ev.get("id"):
            return self.answer(400, "not an event")
        with lock:
            dup = ev["id"] in seen
            seen.add(ev["id"])
        if dup:
            print("duplicate", ev["id"], flush=True)
            return self.answer(200, "")  # handled before: say so, do nothing
        # Handle the event here (intent.paid: ship the order, ...).
        print("accepted", ev["id"], ev.get("type"), flush=True)
        self.answer(200, "")

    def answer(self, status, text):
        self.send_response(status)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text.encode())

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Receiver)
print("listening on 127.0.0.1:%d" % PORT, flush=True)
server.serve_forever()
