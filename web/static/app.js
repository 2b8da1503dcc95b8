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

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-score-form]").forEach(liveTotal);
  });
})();
