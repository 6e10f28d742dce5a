// paywatch console: progressive enhancement only. Every action works without
// this file; it adds local times on hover, live counts, keyboard navigation
// on the inbox and tabs for the resolve forms.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d)) t.title = d.toLocaleString() + " (your local time)";
    });
  }

  // Live: long-poll /console/live, which answers when a new event exists
  // (or after a few seconds), with the inbox count and network health.
  function live() {
    var seq = -1, failures = 0;
    function set(sel, text, show) {
      document.querySelectorAll(sel).forEach(function (el) { el.textContent = text; el.hidden = !show; });
    }
    function apply(v) {
      if (typeof v.inbox_unresolved === "number") {
        set('[data-live="inbox"]', String(v.inbox_unresolved), v.inbox_unresolved > 0);
        var total = document.getElementById("inbox-total");
        if (total && document.body.dataset.page === "inbox" && location.search === "") total.textContent = String(v.inbox_unresolved);
      }
      if (v.networks) {
        var bad = 0;
        v.networks.forEach(function (n) {
          if (!n.healthy || n.critical) bad++;
          document.querySelectorAll('[data-live-health="' + n.network + '"]').forEach(function (el) {
            el.innerHTML = "";
            var s = document.createElement("span");
            s.className = "health " + (n.critical ? "critical" : n.healthy ? "good" : "bad");
            s.textContent = n.critical ? "critical" : n.healthy ? "healthy" : "unhealthy";
            el.appendChild(s);
          });
          document.querySelectorAll('[data-live-lag="' + n.network + '"]').forEach(function (el) { el.textContent = String(n.lag_blocks); });
          document.querySelectorAll('[data-live-scanned="' + n.network + '"]').forEach(function (el) { el.textContent = String(n.scanned_height); });
        });
        set('[data-live="unhealthy"]', String(bad), bad > 0);
      }
    }
    function poll() {
      fetch("/console/live?seq=" + seq, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) {
          if (r.status === 429) {
            // Too many long-polls: wait what the server says, then go on.
            var after = parseInt(r.headers.get("Retry-After"), 10) || 5;
            setTimeout(poll, after * 1000);
            return null;
          }
          if (!r.ok) throw new Error(r.status);
          return r.json();
        })
        .then(function (v) { if (!v) return; failures = 0; seq = v.seq; apply(v); document.body.dataset.live = "1"; setTimeout(poll, 250); })
        .catch(function () { failures++; setTimeout(poll, Math.min(30000, 1000 * failures * failures)); });
    }
    poll();
  }

  function inboxKeys() {
    var table = document.getElementById("inbox");
    if (!table) return;
    var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr[data-href]"));
    var i = -1;
    function select(n) {
      if (!rows.length) return;
      if (i >= 0) rows[i].classList.remove("sel");
      i = Math.max(0, Math.min(rows.length - 1, n));
      rows[i].classList.add("sel");
      rows[i].scrollIntoView({ block: "nearest" });
    }
    rows.forEach(function (r, n) {
      r.addEventListener("click", function (e) { if (e.target.tagName !== "A") select(n); });
      r.addEventListener("dblclick", function () { location.href = r.dataset.href; });
    });
    document.addEventListener("keydown", function (e) {
      var tag = (e.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "textarea" || tag === "select" || e.metaKey || e.ctrlKey || e.altKey) return;
      if (e.key === "j" || e.key === "ArrowDown") { select(i + 1); e.preventDefault(); }
      else if (e.key === "k" || e.key === "ArrowUp") { select(i - 1); e.preventDefault(); }
      else if (e.key === "Enter" && i >= 0) { location.href = rows[i].dataset.href; }
      else if (e.key === "n") { var next = document.getElementById("next-page"); if (next) location.href = next.href; }
    });
  }

  function searchKey() {
    document.addEventListener("keydown", function (e) {
      var tag = (e.target.tagName || "").toLowerCase();
      if (e.key !== "/" || tag === "input" || tag === "textarea" || tag === "select") return;
      var box = document.getElementById("global-search");
      if (box) { box.focus(); e.preventDefault(); }
    });
  }

  // Resolve forms: one at a time behind tabs (all four show without JS).
  function tabs() {
    var forms = document.querySelectorAll("form.action[data-action]");
    if (!forms.length) return;
    var links = document.querySelectorAll(".tabs a[data-tab]");
    function show(action) {
      forms.forEach(function (f) { f.hidden = f.dataset.action !== action; });
      links.forEach(function (a) { a.classList.toggle("on", a.dataset.tab === action); });
    }
    links.forEach(function (a) {
      a.addEventListener("click", function (e) { e.preventDefault(); show(a.dataset.tab); var n = document.querySelector("#form-" + a.dataset.tab + " textarea"); if (n) n.focus(); });
    });
    var on = document.querySelector(".tabs a.on");
    show(on ? on.dataset.tab : forms[0].dataset.action);
  }

  // One-time sign-in link: the code is in the fragment (never sent by the
  // browser); move it into the form, which the person then submits. The
  // fragment is dropped from the address bar and the history.
  function signinLink() {
    var field = document.querySelector("#signin-link input[name=token]");
    if (!field || location.hash.length < 2) return;
    field.value = decodeURIComponent(location.hash.slice(1));
    history.replaceState(null, "", location.pathname);
    var button = document.getElementById("signin");
    if (button) button.focus();
  }

  document.addEventListener("DOMContentLoaded", function () {
    signinLink();
    localTimes(document);
    searchKey();
    inboxKeys();
    tabs();
    if (document.querySelector(".top nav")) live();
  });
})();
