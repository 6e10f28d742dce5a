// A paywatch webhook receiver in Node.js (no dependencies).
//
//   PAYWATCH_WEBHOOK_SECRET=... PORT=8000 node receiver.js
//
// It accepts a delivery only when its Paywatch-Signature verifies under the
// secret, and only when the signature's timestamp is within 5 minutes of
// now; it answers 2xx to an event id it has already handled without
// handling it again (paywatch delivers at least once). Keep the handled ids
// where your orders are (a unique key written in the same transaction as
// the order's update), not in memory as this example does.
"use strict";
const http = require("http");
const crypto = require("crypto");

const secret = process.env.PAYWATCH_WEBHOOK_SECRET;
if (!secret) {
  console.error("set PAYWATCH_WEBHOOK_SECRET (the sandbox writes it to .paywatch/sandbox.env)");
  process.exit(1);
}
const port = Number(process.env.PORT || 8000);
const TOLERANCE_SECONDS = 300;
const seen = new Set(); // handled event ids

// verify returns "" when the delivery is genuine, else why not.
function verify(header, body) {
  let t = -1;
  const sigs = [];
  for (const part of (header || "").split(",")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    const k = part.slice(0, i).trim(), v = part.slice(i + 1).trim();
    if (k === "t") {
      if (!/^\d+$/.test(v)) return "bad timestamp";
      t = Number(v);
    } else if (k === "v1") sigs.push(v);
  }
  if (t < 0 || sigs.length === 0) return "no signature";
  if (Math.abs(Date.now() / 1000 - t) > TOLERANCE_SECONDS) return "timestamp outside the 5 minute window";
  const want = crypto.createHmac("sha256", secret).update(t + ".").update(body).digest();
  for (const s of sigs) {
    const got = Buffer.from(s, "hex");
    if (got.length === want.length && crypto.timingSafeEqual(got, want)) return "";
  }
  return "signature does not match";
}

http.createServer((req, res) => {
  if (req.method !== "POST") { res.writeHead(405).end(); return; }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks); // the raw bytes: verify before parsing
    const reason = verify(req.headers["paywatch-signature"], body);
    if (reason) {
      console.log("refused", reason);
      res.writeHead(400).end(reason);
      return;
    }
    let ev;
    try { ev = JSON.parse(body.toString("utf8")); } catch (e) { ev = null; }
    if (!ev || !ev.id) { res.writeHead(400).end("not an event"); return; }
    if (seen.has(ev.id)) {
      console.log("duplicate", ev.id);
      res.writeHead(200).end(); // handled before: say so, do nothing
      return;
    }
    seen.add(ev.id);
    // Handle the event here (intent.paid: ship the order, ...).
    console.log("accepted", ev.id, ev.type);
    res.writeHead(200).end();
  });
}).listen(port, "127.0.0.1", () => console.log("listening on 127.0.0.1:" + port));
