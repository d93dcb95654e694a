// inferkb site behaviour: sortable tables, facet filters, search start-up. No inline script anywhere; this file only.
"use strict";
(function () {
  document.documentElement.classList.add("js");
  for (const el of document.querySelectorAll(".noscript")) el.hidden = true;

  function cellKey(row, col) {
    const cell = row.cells[col];
    if (!cell) return "";
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim().toLowerCase();
  }

  function sortTable(table, col, numeric, th) {
    const body = table.tBodies[0];
    const current = th.getAttribute("aria-sort");
    const dir = current === "ascending" ? -1 : 1;
    for (const other of table.tHead.rows[0].cells) other.setAttribute("aria-sort", "none");
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    const rows = Array.from(body.rows);
    rows.sort(function (a, b) {
      const x = cellKey(a, col), y = cellKey(b, col);
      if (numeric) {
        const nx = parseFloat(x), ny = parseFloat(y);
        const ax = isNaN(nx), ay = isNaN(ny);
        if (ax || ay) return ax === ay ? 0 : ax ? 1 : -1; // blanks last either way
        return (nx - ny) * dir;
      }
      if (x === y) return 0;
      if (x === "" || x === "—") return 1;
      if (y === "" || y === "—") return -1;
      return x < y ? -dir : dir;
    });
    const frag = document.createDocumentFragment();
    for (const r of rows) frag.appendChild(r);
    body.appendChild(frag);
    if (table.inferkbApply) table.inferkbApply(); // the first rows in the new order are the ones drawn
  }

  for (const table of document.querySelectorAll("table.sortable")) {
    for (const btn of table.querySelectorAll("th button[data-sort-col]")) {
      btn.addEventListener("click", function () {
        const col = parseInt(btn.getAttribute("data-sort-col"), 10);
        sortTable(table, col, btn.hasAttribute("data-numeric"), btn.closest("th"));
      });
    }
  }

  // Rows drawn at once: a table of thousands re-lays out slowly; the rest are one click away. The page arrives
  // with the rows after the first page already hidden (data-page-rows), so the browser never lays them out.
  for (const form of document.querySelectorAll("form.filters")) {
    const table = document.getElementById(form.getAttribute("data-table"));
    if (!table) continue;
    const PAGE_ROWS = parseInt(table.getAttribute("data-page-rows"), 10) || 500;
    const counter = document.querySelector('[data-count-for="' + table.id + '"]');
    const more = document.querySelector('[data-more-for="' + table.id + '"]');
    const selects = Array.from(form.querySelectorAll("select[data-facet]"));
    const text = form.querySelector("[data-text-filter]");
    let limit = PAGE_ROWS;
    let applied = 0;
    function apply() {
      const rows = table.tBodies[0].rows; // live: follows the order a sort left
      const wanted = selects.filter(function (s) { return s.value !== ""; })
        .map(function (s) { return ["data-f-" + s.getAttribute("data-facet"), s.value]; });
      const needle = text ? text.value.trim().toLowerCase() : "";
      let matched = 0;
      for (const row of rows) {
        let ok = true;
        for (const [attr, value] of wanted) {
          const have = (row.getAttribute(attr) || "").split("\t");
          if (have.indexOf(value) < 0) { ok = false; break; }
        }
        if (ok && needle) ok = row.textContent.toLowerCase().indexOf(needle) >= 0;
        if (ok) matched += 1;
        const show = ok && matched <= limit;
        if (row.hidden === show) row.hidden = !show; // touch only rows that change
      }
      table.setAttribute("data-matches", String(matched));
      if (counter) {
        counter.textContent = matched + " of " + rows.length + " match" + (matched > limit ? " (first " + limit + " shown)" : "");
      }
      if (more) {
        more.hidden = matched <= limit;
        more.textContent = "show all " + matched;
      }
      applied += 1;
      form.setAttribute("data-applied", String(applied));
    }
    table.inferkbApply = apply;
    if (more) more.addEventListener("click", function () { limit = Infinity; apply(); });
    // ?facet=value in the address preselects a filter (record pages and the gaps page link to filtered tables).
    const params = new URLSearchParams(window.location.search);
    for (const s of selects) {
      const want = params.get(s.getAttribute("data-facet"));
      if (want !== null && Array.from(s.options).some(function (o) { return o.value === want; })) s.value = want;
    }
    let timer = 0;
    form.addEventListener("change", function () { limit = PAGE_ROWS; apply(); });
    form.addEventListener("input", function (e) {
      if (e.target !== text) return; // selects are handled by "change"
      window.clearTimeout(timer);
      timer = window.setTimeout(function () { limit = PAGE_ROWS; apply(); }, 120); // filter once the reader pauses
    });
    form.addEventListener("reset", function () { window.setTimeout(function () { limit = PAGE_ROWS; apply(); }, 0); });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    apply();
  }

  // Navigation pickers ("another model"): the button opens the picked page; choosing alone never navigates,
  // so moving through the options with the keyboard stays on this page.
  for (const form of document.querySelectorAll("form.picker[data-nav]")) {
    const select = form.querySelector("select");
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      if (select && select.value) window.location.assign(select.value);
    });
  }

  const ui = document.querySelector("[data-search-ui]");
  if (ui && window.PagefindUI) {
    // Result URLs are site-relative; the site may live below the host's root, so anchor them at this page's folder.
    const base = new URL(".", window.location.href).pathname;
    new window.PagefindUI({ element: "#" + ui.id, baseUrl: base, bundlePath: base + "pagefind/", showSubResults: false, showImages: false, resetStyles: false });
  }
})();
