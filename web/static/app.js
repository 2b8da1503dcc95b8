// pitchtank: progressive enhancement only; every page works without it.
// The scorecard form shows its weighted total live, computed from the
// weights in data-weight attributes exactly as the server does
// (sum(weight * score) / 100). The server's total is the one stored.
(function () {
  "use strict";

  function liveTotal(form) {
    var out = form.querySelector("[data-live-total]");
    if (!out) return;
    var selects = form.querySelectorAll("select[data-weight]");
    function update() {
      var sum = 0, complete = true;
      selects.forEach(function (sel) {
        var w = parseFloat(sel.getAttribute("data-weight")) || 0;
        if (sel.value === "") { complete = false; return; }
        sum += w * parseFloat(sel.value);
      });
      var total = (sum / 100).toFixed(2);
      out.textContent = complete ? total : total + " so far";
    }
    selects.forEach(function (sel) { sel.addEventListener("change", update); });
    update();
  }

  // A run page whose run is queued or running follows its server-sent
  // events: status, phase, shape, samples and the running median. On the
  // final status it reloads once to show the stored result. Without this
  // script the page refreshes itself (meta refresh in <noscript>).
  function followRun(el) {
    if (!window.EventSource || !el.hasAttribute("data-live")) return;
    var src = new EventSource(el.getAttribute("data-events"));
    function set(sel, text) {
      document.querySelectorAll(sel).forEach(function (n) { n.textContent = text; });
    }
    src.addEventListener("status", function (e) {
      var ev = JSON.parse(e.data);
      document.querySelectorAll("[data-run-status]").forEach(function (n) {
        n.textContent = ev.status;
        n.className = "badge badge-" + ev.status;
      });
      if (ev.status === "queued" || ev.status === "running") {
        set("[data-run-phase]", ev.status);
        return;
      }
      src.close();
      if (ev.reason) {
        var r = document.querySelector("[data-run-reason]");
        if (r) { r.textContent = ev.reason; r.hidden = false; }
      }
      // Reload without ?ok=queued: "Run queued." does not belong on the
      // finished run's page.
      window.location.replace(window.location.pathname + window.location.hash);
    });
    src.addEventListener("progress", function (e) {
      var p = JSON.parse(e.data).progress;
      if (!p) return;
      set("[data-run-phase]", p.phase);
      set("[data-run-shape]", (p.shape + 1) + " of " + p.shapes);
      set("[data-run-samples]", String(p.samples));
      set("[data-run-median]", p.median_us ? p.median_us.toFixed(2) + " µs" : "—");
    });
    src.onerror = function () {
      // The stream ends after the final status; a dropped connection is
      // retried by EventSource itself.
    };
  }

  // A page answering a refused form post names the form's GET address;
  // putting it in place of the POST's history entry means Back, Forward and
  // reload never ask to resubmit the form.
  function replacePostEntry() {
    var url = document.body.getAttribute("data-replace-url");
    if (url && url.charAt(0) === "/" && url.charAt(1) !== "/" && window.history.replaceState) {
      window.history.replaceState(null, "", url);
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    replacePostEntry();
    document.querySelectorAll("form[data-score-form]").forEach(liveTotal);
    document.querySelectorAll("[data-run][data-live]").forEach(followRun);
  });
})();
