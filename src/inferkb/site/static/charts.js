// Renders the Vega-Lite specs embedded as <script type="application/json"> with the bundled vega-embed.
// With ast: true vega-embed evaluates expressions with its bundled interpreter, so the page needs no 'unsafe-eval'.
"use strict";
(function () {
  if (!window.vegaEmbed) return;
  for (const el of document.querySelectorAll(".vega[data-spec]")) {
    const holder = document.getElementById(el.getAttribute("data-spec"));
    if (!holder) continue;
    let spec;
    try { spec = JSON.parse(holder.textContent); } catch (e) { el.setAttribute("data-error", "spec"); continue; }
    el.textContent = "";
    window.vegaEmbed(el, spec, {
      actions: false, renderer: "svg", ast: true,
      defaultStyle: false, tooltip: false
    }).then(function () { el.setAttribute("data-rendered", "true"); })
      .catch(function (err) { el.setAttribute("data-error", String(err)); });
  }
})();
