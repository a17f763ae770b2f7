// The rankgate dashboard's page script: draws the charts (figures are JSON in #rg-figures, keyed by
// chart id; each goes into div[data-chart=ID]), opens an evaluation when one of its points is
// clicked, and fills the per-query table a page at a time from the JSON endpoint. Text from the
// store is only ever set with textContent, never as HTML.
(function () {
  "use strict";

  function say(text) {
    var status = document.getElementById("rg-chart-status");
    status.textContent = text;
    status.hidden = false;
  }

  function drawCharts() {
    var figures = JSON.parse(document.getElementById("rg-figures").textContent);
    var plots = document.querySelectorAll("div.plot[data-chart]");
    if (!plots.length) {
      document.body.setAttribute("data-charts", "none");
      return;
    }
    if (!window.Plotly) {
      say("The charts could not be drawn: plotly.js did not load. The tables are complete without them.");
      document.body.setAttribute("data-charts", "failed");
      return;
    }
    var jobs = [];
    plots.forEach(function (div) {
      var fig = figures[div.getAttribute("data-chart")];
      if (!fig) return;
      var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
      jobs.push(window.Plotly.newPlot(div, fig.data, fig.layout, config).then(function () {
        div.style.minHeight = "";
        div.setAttribute("data-drawn", "true");
        if (div.getAttribute("data-click") === "evaluation") {
          div.on("plotly_click", function (event) {
            var point = event.points && event.points[0];
            var id = point && point.customdata && point.customdata[0];
            if (typeof id === "number") window.location.assign("/evaluations/" + id);
          });
        }
      }));
    });
    Promise.all(jobs).then(function () {
      document.body.setAttribute("data-charts", "drawn");
    }).catch(function (err) {
      console.error("rankgate dashboard: a chart could not be drawn:", err);
      say("A chart could not be drawn: " + err.message);
      document.body.setAttribute("data-charts", "failed");
    });
  }

  function fmt(value) {
    return value === null || value === undefined ? "n/a" : Number(value).toFixed(4);
  }

  function queryTable(table) {
    var api = table.getAttribute("data-api");
    var body = table.querySelector("tbody");
    var heads = table.querySelectorAll("th[data-sort]");
    var search = document.getElementById("rg-search");
    var status = document.getElementById("rg-query-status");
    var hasText = table.querySelector("thead th:nth-child(2)").hasAttribute("data-sort") === false;
    var state = { offset: 0, limit: 50, sort: "qid", order: "asc", q: "", matching: 0 };
    var asked = 0;

    function row(item, measures) {
      var tr = document.createElement("tr");
      var td = document.createElement("td");
      td.className = "mono";
      td.textContent = item.qid;
      tr.appendChild(td);
      if (hasText) {
        td = document.createElement("td");
        td.className = "qtext";
        td.textContent = item.text || "";
        tr.appendChild(td);
      }
      measures.forEach(function (m) {
        var cell = document.createElement("td");
        cell.className = "num";
        cell.textContent = fmt(item.values[m]);
        tr.appendChild(cell);
      });
      return tr;
    }

    function load() {
      var mine = ++asked;
      var params = new URLSearchParams({ offset: state.offset, limit: state.limit, sort: state.sort,
        order: state.order, q: state.q });
      table.setAttribute("data-state", "loading");
      fetch(api + "?" + params.toString(), { credentials: "same-origin" }).then(function (response) {
        return response.json().then(function (data) {
          if (!response.ok) throw new Error(data.error || response.statusText);
          return data;
        });
      }).then(function (data) {
        if (mine !== asked) return;  // a newer request is on its way
        state.matching = data.matching;
        body.replaceChildren.apply(body, data.rows.map(function (item) { return row(item, data.measures); }));
        var last = Math.min(data.offset + data.rows.length, data.matching);
        status.textContent = data.matching ? (data.offset + 1) + "-" + last + " of " + data.matching +
          (data.matching < data.total ? " matching (" + data.total + " queries)" : " queries") : "no query matches";
        table.setAttribute("data-state", "loaded");
      }).catch(function (err) {
        if (mine !== asked) return;
        status.textContent = "could not load the queries: " + err.message;
        table.setAttribute("data-state", "failed");
      });
    }

    heads.forEach(function (th) {
      th.addEventListener("click", function () {
        var key = th.getAttribute("data-sort");
        state.order = state.sort === key && state.order === "asc" ? "desc" : (state.sort === key ? "asc" :
          (key === "qid" ? "asc" : "desc"));
        state.sort = key;
        state.offset = 0;
        heads.forEach(function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", state.order === "asc" ? "ascending" : "descending");
        load();
      });
    });
    search.addEventListener("input", function () {
      state.q = search.value;
      state.offset = 0;
      load();
    });
    document.getElementById("rg-prev").addEventListener("click", function () {
      if (state.offset === 0) return;
      state.offset = Math.max(0, state.offset - state.limit);
      load();
    });
    document.getElementById("rg-next").addEventListener("click", function () {
      if (state.offset + state.limit >= state.matching) return;
      state.offset += state.limit;
      load();
    });
    load();
  }

  var table = document.getElementById("rg-queries");
  if (table) queryTable(table);
  drawCharts();
})();
