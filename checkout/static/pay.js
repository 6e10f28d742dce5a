// The payment page's script: copy buttons, the countdown, and the live
// status (server-sent events from /pay/{token}/live). Everything it shows
// comes from the server in the page's language; without it the page works,
// a reload shows the latest status.
(function () {
  'use strict';
  var body = document.body;
  var skew = 0; // server time minus this device's time
  function setNow(iso) {
    var t = Date.parse(iso);
    if (!isNaN(t)) { skew = t - Date.now(); }
  }
  setNow(body.dataset.now);

  // Copy buttons: shown only when they can work.
  function copyText(button) {
    var el = document.getElementById(button.dataset.copy);
    if (!el) { return; }
    // data-value is the text as it must be sent (the page may show it
    // grouped or with the language's decimal mark).
    var text = el.dataset.value || el.textContent.trim();
    var label = button.textContent;
    var done = function () {
      button.textContent = button.dataset.copied;
      setTimeout(function () { button.textContent = label; }, 2000);
    };
    var fallback = function () {
      var range = document.createRange();
      range.selectNodeContents(el);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      try { if (document.execCommand('copy')) { done(); } } catch (e) { /* selected for a manual copy */ }
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  }
  function showCopy() {
    Array.prototype.forEach.call(document.querySelectorAll('button[data-copy], button[data-print]'), function (b) { b.hidden = false; });
    localTimes();
  }
  document.addEventListener('click', function (e) {
    var b = e.target.closest && e.target.closest('button[data-copy]');
    if (b) { copyText(b); }
    if (e.target.closest && e.target.closest('button[data-print]')) { window.print(); }
  });

  // Times in the customer's own time zone, its offset named; the page
  // says them in UTC until this runs (or without JavaScript).
  var lang = document.documentElement.lang || 'en';
  function localTimes() {
    if (!window.Intl || !Intl.DateTimeFormat) { return; }
    var fmt;
    try {
      fmt = new Intl.DateTimeFormat(lang, { year: 'numeric', month: 'long', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'shortOffset' });
    } catch (e) {
      try {
        fmt = new Intl.DateTimeFormat(lang, { year: 'numeric', month: 'long', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
      } catch (e2) { return; }
    }
    Array.prototype.forEach.call(document.querySelectorAll('time.local-time'), function (el) {
      var t = Date.parse(el.getAttribute('datetime'));
      if (!isNaN(t)) { el.textContent = fmt.format(new Date(t)); el.dataset.local = '1'; }
    });
  }
  showCopy();

  // Countdown to the deadline, in the server's time.
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function tick() {
    var countdown = document.getElementById('countdown');
    if (!countdown) { return; }
    var left = Date.parse(countdown.dataset.deadline) - (Date.now() + skew);
    if (left <= 0) {
      countdown.textContent = countdown.dataset.passed;
      countdown.classList.add('passed');
      atDeadline();
      return;
    }
    var s = Math.floor(left / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    var text = (h > 0 ? h + ':' + pad(m) : m) + ':' + pad(s % 60);
    countdown.textContent = countdown.dataset.left.replace('{left}', text);
  }
  tick();
  setInterval(tick, 1000);

  // At the deadline the page changes state in one step: the status the
  // server rendered for just after the deadline replaces the open one,
  // and the instructions go, together (the live stream then confirms).
  function atDeadline() {
    var t = document.getElementById('at-deadline');
    var st = document.getElementById('status');
    var p = document.getElementById('pay');
    if (!t || !st || !p || p.hidden || !t.innerHTML.trim()) { return; }
    st.innerHTML = t.innerHTML;
    st.dataset.id = '';
    p.hidden = true;
    p.innerHTML = '';
    body.dataset.state = t.dataset.state || 'expired';
    var change = document.getElementById('change');
    if (change) { change.hidden = true; }
    if (t.dataset.title) { document.title = t.dataset.title; }
    showCopy();
  }

  // Live status.
  var status = document.getElementById('status');
  var pay = document.getElementById('pay');
  var paused = document.getElementById('live-paused');
  function apply(m, id) {
    setNow(m.now);
    if (id && id === status.dataset.id) { return; } // the page shows it already
    status.dataset.id = id || '';
    status.innerHTML = m.html;
    if (pay) {
      pay.innerHTML = m.pay;
      pay.hidden = !m.open;
    }
    body.dataset.state = m.state;
    document.title = m.title;
    var change = document.getElementById('change');
    if (change) { change.hidden = !(m.open && m.state === 'waiting'); }
    var t = document.getElementById('at-deadline');
    if (t) {
      t.innerHTML = m.at_deadline || '';
      t.dataset.title = m.at_deadline_title || '';
      t.dataset.state = m.at_deadline_state || '';
    }
    showCopy();
    tick();
  }
  var url = body.dataset.live;
  if (!url || !window.EventSource || !status) { return; }
  var delay = 3000;
  function connect() {
    var es = new EventSource(url);
    es.addEventListener('state', function (e) {
      var m;
      try { m = JSON.parse(e.data); } catch (err) { return; }
      apply(m, e.lastEventId);
      body.dataset.connected = '1';
      if (m.final) { es.close(); }
    });
    es.onopen = function () { paused.hidden = true; delay = 3000; };
    es.onerror = function () {
      paused.hidden = false;
      if (es.readyState === EventSource.CLOSED) {
        // Refused (a limit, a restart): try again later, more slowly.
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 60000);
      }
    };
  }
  connect();
})();
