// Renders the Vega-Lite specs embedded as <script type="application/json"> with the bundled vega-embed.
// With ast: true vega-embed evaluates expressions with its bundled interpreter, so the page needs no 'unsafe-eval'.
// A switchable chart (.switch) draws one of its choices at a time: its picker sets which spec the figure draws
// and which choice's table is shown; an address ending in #<choice id> opens that choice.
"use strict";
(function () {
  if (!window.vegaEmbed) return;

  function draw(el) {
    const holder = document.getElementById(el.getAttribute("data-spec"));
    el.removeAttribute("data-rendered");
    el.removeAttribute("data-error");
    if (!holder) { el.setAttribute("data-error", "no spec"); return Promise.resolve(); }
    let spec;
    try { spec = JSON.parse(holder.textContent); } catch (e) { el.setAttribute("data-error", "spec"); return Promise.resolve(); }
    el.textContent = "";
    const ticket = String((+el.getAttribute("data-ticket") || 0) + 1);
    el.setAttribute("data-ticket", ticket);
    return window.vegaEmbed(el, spec, {
      actions: false, renderer: "svg", ast: true,
      defaultStyle: false, tooltip: false
    }).then(function (res) {
      if (el.getAttribute("data-ticket") !== ticket) { res.finalize(); return; } // a later pick replaced this one
      el.setAttribute("data-rendered", "true");
    }).catch(function (err) { el.setAttribute("data-error", String(err)); });
  }

  function setupSwitch(box) {
    const select = box.querySelector("select[data-switch-select]");
    const fig = box.querySelector("figure[data-switch-figure]");
    const el = fig.querySelector(".vega");
    const cap = fig.querySelector("figcaption");
    const choices = Array.from(box.querySelectorAll(".choice[data-choice]"));
    function show(id) {
      const holder = document.getElementById(id + "-spec");
      for (const c of choices) c.hidden = c.getAttribute("data-choice") !== id;
      fig.setAttribute("data-shown", id);
      if (!holder) {
        fig.hidden = true;
        return;
      }
      fig.hidden = false;
      fig.setAttribute("data-chart", holder.getAttribute("data-chart") || "");
      cap.textContent = "";
      const strong = document.createElement("strong");
      strong.textContent = holder.getAttribute("data-title") || "";
      cap.appendChild(strong);
      cap.appendChild(document.createTextNode(". " + (holder.getAttribute("data-description") || "")));
      el.setAttribute("data-spec", id + "-spec");
      draw(el);
    }
    // The metric picker narrows the class picker to that metric's classes (optgroups), and draws the first of them.
    const group = box.querySelector("select[data-switch-group]");
    function narrow() {
      if (!group) return;
      const want = (select.selectedOptions[0] && select.selectedOptions[0].parentElement.label) || group.value;
      group.value = want;
      for (const og of select.querySelectorAll("optgroup")) og.hidden = og.label !== want;
    }
    if (group) {
      group.addEventListener("change", function () {
        const og = Array.from(select.querySelectorAll("optgroup")).find(function (g) { return g.label === group.value; });
        if (og && og.querySelector("option")) select.value = og.querySelector("option").value;
        narrow();
        show(select.value);
      });
    }
    select.addEventListener("change", function () { narrow(); show(select.value); });
    const wanted = window.location.hash.slice(1);
    if (wanted && Array.from(select.options).some(function (o) { return o.value === wanted; })) select.value = wanted;
    box.switchTo = function (id) { select.value = id; narrow(); show(id); };
    narrow();
    show(select.value);
  }

  const switches = Array.from(document.querySelectorAll(".switch[data-switch]"));
  const inSwitch = new Set(switches.map(function (b) { return b.querySelector("figure[data-switch-figure] .vega"); }));
  for (const el of document.querySelectorAll(".vega[data-spec]")) if (!inSwitch.has(el)) draw(el);
  for (const box of switches) setupSwitch(box);
  window.addEventListener("hashchange", function () {
    const id = window.location.hash.slice(1);
    for (const box of switches) {
      if (box.querySelector('.choice[data-choice="' + CSS.escape(id) + '"]') && box.switchTo) box.switchTo(id);
    }
  });
})();
