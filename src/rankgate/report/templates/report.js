// Unpacks the embedded plotly.js (gzip, base64) and draws every chart.
// Figures are JSON in #rg-figures, keyed by chart id; each goes into div[data-chart=ID].
(function () {
  "use strict";
  var figures = JSON.parse(document.getElementById("rg-figures").textContent);
  var statusLine = document.getElementById("rg-chart-status");
  var plots = document.querySelectorAll("div.plot[data-chart]");

  function say(text) {
    statusLine.textContent = text;
    statusLine.hidden = false;
  }

  function loadPlotly() {
    var packed = document.getElementById("rg-plotly").textContent.replace(/\s+/g, "");
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser lacks DecompressionStream (use a browser from 2023 or later)"));
    }
    var binary = atob(packed);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (code) {
      var script = document.createElement("script");
      script.textContent = code;
      document.head.appendChild(script);
      if (!window.Plotly) throw new Error("plotly.js did not load");
      return window.Plotly;
    });
  }

  function draw(Plotly) {
    var jobs = [];
    plots.forEach(function (div) {
      var id = div.getAttribute("data-chart");
      var fig = figures[id];
      if (!fig) return;
      var config = {
        responsive: true,
        displaylogo: false,
        modeBarButtonsToRemove: ["lasso2d", "select2d"],
        toImageButtonOptions: { format: "svg", filename: id }
      };
      jobs.push(Plotly.newPlot(div, fig.data, fig.layout, config).then(function () {
        div.style.minHeight = "";
        div.setAttribute("data-drawn", "true");
      }));
    });
    return Promise.all(jobs);
  }

  if (!plots.length) {
    document.body.setAttribute("data-charts", "none");
    return;
  }
  say("Drawing " + plots.length + " charts...");
  loadPlotly().then(draw).then(function () {
    statusLine.hidden = true;
    document.body.setAttribute("data-charts", "drawn");
  }).catch(function (err) {
    console.error("rankgate report: the charts could not be drawn:", err);
    say("The charts could not be drawn: " + err.message + ". The tables are complete without them.");
    document.body.setAttribute("data-charts", "failed");
    plots.forEach(function (div) {
      if (!div.getAttribute("data-drawn")) {
        var note = document.createElement("p");
        note.className = "rg-failed";
        note.textContent = "Chart not drawn.";
        div.appendChild(note);
      }
    });
  });
})();
