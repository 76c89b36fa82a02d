(function () {
  "use strict";
  // No innerHTML anywhere: every value on the page is untrusted text already escaped
  // by the renderer, and the script only reads attributes and moves existing nodes.
  var runs = document.getElementById("runs");
  var onlyGated = document.getElementById("only-gated");
  var setupFilter = document.getElementById("setup-filter");
  var shown = document.getElementById("runs-shown");
  var state = { sort: "", gated: false, setup: "" };

  function valueOf(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-sort");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortTable(table, index, direction) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var numeric = rows.every(function (r) {
      var v = valueOf(r, index);
      return v === "" || !isNaN(Number(v));
    });
    rows.sort(function (a, b) {
      var x = valueOf(a, index), y = valueOf(b, index);
      if (x === y) { return 0; }
      if (x === "") { return 1; }  // blanks last in both directions
      if (y === "") { return -1; }
      var order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return direction === "ascending" ? order : -order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    var key = "";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === index) { th.setAttribute("aria-sort", direction); key = th.getAttribute("data-key"); }
      else { th.removeAttribute("aria-sort"); }
    });
    state.sort = table.id + ":" + key + ":" + (direction === "ascending" ? "asc" : "desc");
  }
  function toggle(table, index) {
    var th = table.tHead.rows[0].cells[index];
    var next = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    sortTable(table, index, next);
    writeHash();
  }
  function applyFilters() {
    if (!runs) { return; }
    runs.classList.toggle("only-gated", state.gated);
    var visible = 0, total = 0;
    Array.prototype.forEach.call(runs.tBodies[0].rows, function (r) {
      var other = state.setup !== "" && r.getAttribute("data-setup") !== state.setup;
      r.classList.toggle("other-setup", other);
      total += 1;
      if (!other && (!state.gated || r.classList.contains("gated"))) { visible += 1; }
    });
    if (shown) { shown.textContent = "showing " + visible + " of " + total + " runs"; }
    runs.setAttribute("data-visible", String(visible));
  }
  // A link carries the view: #sort=<table id>:<column key>:<asc|desc>&gated=1&setup=<id>
  function writeHash() {
    var parts = [];
    if (state.sort) { parts.push("sort=" + state.sort); }
    if (state.gated) { parts.push("gated=1"); }
    if (state.setup) { parts.push("setup=" + encodeURIComponent(state.setup)); }
    var base = window.location.pathname + window.location.search;
    try { history.replaceState(null, "", base + (parts.length ? "#" + parts.join("&") : "")); }
    catch (e) { /* some file:// contexts refuse; the view still works */ }
  }
  function readHash() {
    var params = {};
    window.location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var eq = part.indexOf("=");
      if (eq > 0) {
        try { params[part.slice(0, eq)] = decodeURIComponent(part.slice(eq + 1)); }
        catch (e) { /* a malformed escape is ignored */ }
      }
    });
    return params;
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.tabIndex = 0;
      th.title = "Sort by " + th.textContent.trim();
      th.addEventListener("click", function () { toggle(table, index); });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(table, index); }
      });
    });
    table.setAttribute("data-sortable", "ready");
  });
  if (onlyGated) {
    onlyGated.addEventListener("change", function () {
      state.gated = onlyGated.checked; applyFilters(); writeHash();
    });
  }
  if (setupFilter) {
    setupFilter.addEventListener("change", function () {
      state.setup = setupFilter.value; applyFilters(); writeHash();
    });
  }

  var params = readHash();
  var m = /^([A-Za-z0-9_-]+):([A-Za-z0-9_-]+):(asc|desc)$/.exec(params.sort || "");
  if (m) {
    var table = document.getElementById(m[1]);
    if (table && table.tHead) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
        if (th.getAttribute("data-key") === m[2]) {
          sortTable(table, index, m[3] === "asc" ? "ascending" : "descending");
        }
      });
    }
  }
  state.gated = params.gated === "1";
  if (onlyGated) { onlyGated.checked = state.gated; }
  if (setupFilter && params.setup) {
    var known = Array.prototype.some.call(setupFilter.options, function (o) {
      return o.value === params.setup;
    });
    if (known) { setupFilter.value = params.setup; state.setup = params.setup; }
  }
  applyFilters();
})();
