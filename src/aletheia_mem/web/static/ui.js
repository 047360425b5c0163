// Aletheia web UI: a little progressive JavaScript. Every page works without it; with it the
// Memories list searches as you type and shows new memories without a reload.
"use strict";
(function () {
  var list = document.getElementById("memories");
  var form = document.getElementById("filters");
  if (!list || !form) return;
  var POLL_MS = 3000;
  var DEBOUNCE_MS = 150;
  var pending = null;
  var typed = null;

  function params() {
    var found = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (value !== "") found.set(key, value);
    });
    return found;
  }

  function rows(query) {
    return fetch("/memories/rows?" + query.toString(), {
      credentials: "same-origin",
      headers: { Accept: "text/html" },
    }).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.text();
    });
  }

  function newestId() {
    var first = list.querySelector("li[data-id]");
    return first ? first.getAttribute("data-id") : "0";
  }

  function poll() {
    if (!list.hasAttribute("data-live") || document.hidden) return;
    var query = params();
    query.set("after", newestId());
    rows(query).then(function (html) {
      if (!html.trim()) return;
      var empty = list.querySelector("li.empty");
      if (empty) empty.remove();
      list.insertAdjacentHTML("afterbegin", html);
    }).catch(function () {});
  }

  function search() {
    var query = params();
    var started = performance.now();
    if (pending) pending.abort = true;
    var mine = { abort: false };
    pending = mine;
    rows(query).then(function (html) {
      if (mine.abort) return;
      list.innerHTML = html;
      var browsing = !query.get("q") && !query.get("file") && !query.get("dismissed");
      if (browsing) list.setAttribute("data-live", "1");
      else list.removeAttribute("data-live");
      history.replaceState(null, "", "/?" + query.toString());
      document.body.setAttribute("data-search-ms", String(Math.round(performance.now() - started)));
      document.body.setAttribute("data-searched", query.toString());
    }).catch(function () {});
  }

  form.addEventListener("input", function (event) {
    if (event.target && event.target.id === "q") {
      clearTimeout(typed);
      typed = setTimeout(search, DEBOUNCE_MS);
    }
  });
  form.addEventListener("change", function (event) {
    if (event.target && event.target.id !== "q") search();
  });
  setInterval(poll, POLL_MS);
})();
