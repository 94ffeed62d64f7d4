// Sorting and filtering for sessionfix reports. The page is complete without it. State lives
// in the URL fragment: #<section>.q=<text>&<section>.sort=[-]<column>&<section>.<column>=<value>
(function () {
  "use strict";
  var state = new URLSearchParams(location.hash.slice(1));
  var views = []; // per section: show(state) sets its controls from a fragment
  var each = function (list, fn) { Array.prototype.forEach.call(list, fn); };
  var text = function (row, i) { var c = row.cells[i]; return c ? c.textContent : ""; };
  var compare = function (a, b) {
    var x = Number(a), y = Number(b);
    if (a !== "" && b !== "" && isFinite(x) && isFinite(y)) { return x - y; }
    return a < b ? -1 : (a > b ? 1 : 0);
  };
  var save = function () {
    var s = state.toString();
    history.replaceState(null, "", s ? "#" + s : location.pathname + location.search);
  };
  var setParam = function (k, v) { if (v) { state.set(k, v); } else { state.delete(k); } };

  each(document.querySelectorAll("section[data-section]"), function (sec) {
    var id = sec.getAttribute("data-section");
    var table = sec.querySelector("table");
    if (!table) { return; }
    var body = table.tBodies[0];
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var names = heads.map(function (h) { return h.getAttribute("data-name"); });
    var input = sec.querySelector("input[data-filter]");
    var facets = Array.prototype.slice.call(sec.querySelectorAll("select[data-facet]"));
    var shown = sec.querySelector("[data-shown]");
    var total = body.rows.length;
    var sortCol = -1, sortDesc = false;

    var apply = function () {
      var q = input.value.toLowerCase(), n = 0;
      each(body.rows, function (row) {
        var ok = q === "" || row.textContent.toLowerCase().indexOf(q) >= 0;
        facets.forEach(function (f) {
          if (ok && f.value !== "" && text(row, Number(f.getAttribute("data-col"))) !== f.value) { ok = false; }
        });
        row.hidden = !ok;
        if (ok) { n++; }
      });
      var unit = total === 1 ? " row" : " rows";
      shown.textContent = n === total ? total + unit : n + " of " + total + unit;
    };
    var sortBy = function (col, desc) {
      var rows = Array.prototype.slice.call(body.rows);
      rows.forEach(function (r, i) { r.setAttribute("data-i", i); });
      rows.sort(function (a, b) {
        var r = compare(text(a, col), text(b, col));
        if (desc) { r = -r; }
        return r || Number(a.getAttribute("data-i")) - Number(b.getAttribute("data-i"));
      });
      rows.forEach(function (r) { r.removeAttribute("data-i"); body.appendChild(r); });
      heads.forEach(function (h, i) { h.setAttribute("aria-sort", i === col ? (desc ? "descending" : "ascending") : "none"); });
      sortCol = col;
      sortDesc = desc;
    };

    heads.forEach(function (h, i) {
      var b = document.createElement("button");
      b.type = "button";
      b.title = "sort by " + names[i];
      while (h.firstChild) { b.appendChild(h.firstChild); }
      h.appendChild(b);
      h.setAttribute("aria-sort", "none");
      b.addEventListener("click", function () {
        sortBy(i, sortCol === i ? !sortDesc : false);
        setParam(id + ".sort", (sortDesc ? "-" : "") + names[i]);
        save();
      });
    });
    input.addEventListener("input", function () { apply(); setParam(id + ".q", input.value); save(); });
    facets.forEach(function (f) {
      var name = names[Number(f.getAttribute("data-col"))];
      f.addEventListener("change", function () { apply(); setParam(id + "." + name, f.value); save(); });
    });
    var show = function (st) {
      facets.forEach(function (f) {
        var v = st.get(id + "." + names[Number(f.getAttribute("data-col"))]) || "";
        f.value = Array.prototype.some.call(f.options, function (o) { return o.value === v; }) ? v : "";
      });
      input.value = st.get(id + ".q") || "";
      var s = st.get(id + ".sort");
      if (s) {
        var desc = s.charAt(0) === "-", col = names.indexOf(desc ? s.slice(1) : s);
        if (col >= 0) { sortBy(col, desc); }
      }
      apply();
    };
    views.push({ id: id, sec: sec, show: show });
    sec.querySelector(".controls").hidden = false;
    show(state);
  });

  // A count card links to a filtered view ("#pairs.change=lost"): apply it and scroll to it.
  window.addEventListener("hashchange", function () {
    state = new URLSearchParams(location.hash.slice(1));
    views.forEach(function (v) {
      v.show(state);
      var keyed = false;
      state.forEach(function (_, k) { if (k.indexOf(v.id + ".") === 0) { keyed = true; } });
      if (keyed) { v.sec.scrollIntoView(); }
    });
  });
})();
