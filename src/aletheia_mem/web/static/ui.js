// Aletheia web UI: a little progressive JavaScript. Every page works without it; with it the
// Memories list searches as you type (and on Enter) without reloading the page, and shows new
// memories as they are saved.
"use strict";
(function () {
  var list = document.getElementById("memories");
  var form = document.getElementById("filters");
  if (!list || !form) return;
  var POLL_MS = 3000;
  var DEBOUNCE_MS = 150;
  var FIND = "find_project";
  var pending = null;
  var typed = null;

  function params() {
    var found = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (value !== "") found.set(key, value);
    });
    return found;
  }

  var label = document.getElementById("results-label");
  var more = document.getElementById("more");

  function fetchRows(query) {
    return fetch("/memories/rows?" + query.toString(), {
      credentials: "same-origin",
      headers: { Accept: "text/html" },
    }).then(function (response) {
      // A redirect (to the sign-in page) is no list of rows either.
      if (response.status === 401 || (response.redirected && signInPage(response.url))) {
        throw new SignedOut();
      }
      if (!response.ok || response.redirected) throw new Error("HTTP " + response.status);
      return response;
    });
  }

  function SignedOut() {}

  function signInPage(url) {
    try { return new URL(url).pathname === "/sign-in"; } catch (e) { return false; }
  }

  // The sign-in ended (signed out in another tab, or the key changed): say so where the
  // results are, rather than leave the old ones under the new query.
  function signedOut(url) {
    list.innerHTML = "";
    list.removeAttribute("data-live");
    if (more) more.hidden = true;
    if (!label) return;
    var link = document.createElement("a");
    link.href = "/sign-in?" + new URLSearchParams({ next: url }).toString();
    link.textContent = "sign in again";
    label.textContent = "Signed out: ";
    label.appendChild(link);
    label.setAttribute("role", "alert");
  }

  function newestId() {
    var first = list.querySelector("li[data-id]");
    return first ? first.getAttribute("data-id") : "0";
  }

  function poll() {
    if (!list.hasAttribute("data-live") || document.hidden) return;
    var query = params();
    query.set("after", newestId());
    fetchRows(query).then(function (response) {
      // More than a page arrived: the newest page of them would leave a hole below it, so
      // the list stops here and offers to show itself anew.
      if (response.headers.get("x-feed-more")) return feedMore();
      return response.text();
    }).then(function (html) {
      if (!html || !html.trim()) return;
      var empty = list.querySelector("li.empty");
      if (empty) empty.remove();
      list.insertAdjacentHTML("afterbegin", html);
    }).catch(function () {});
  }

  var feedNotice = document.getElementById("feed-more");

  function feedMore() {
    list.removeAttribute("data-live");
    if (!feedNotice) return;
    feedNotice.querySelector("a").setAttribute("href", "/?" + params().toString());
    feedNotice.hidden = false;
  }

  function search(remember) {
    var query = params();
    var url = "/?" + query.toString();
    var started = performance.now();
    if (pending) pending.abort = true;
    var mine = { abort: false };
    pending = mine;
    fetchRows(query).then(function (response) {
      return response.text().then(function (html) {
        if (mine.abort) return;
        show(query, html, response.headers);
        if (remember) history.pushState(null, "", url);
        else history.replaceState(null, "", url);
        shown = location.search;
        document.body.setAttribute("data-search-ms", String(Math.round(performance.now() - started)));
        document.body.setAttribute("data-searched", query.toString());
      });
    }).catch(function (error) {
      if (mine.abort) return;
      // Enter on a search the rows cannot show (a bad date, signed out): load it as a page.
      if (remember) location.assign(url);
      else if (error instanceof SignedOut) signedOut(url);
    });
  }

  function show(query, html, headers) {
    list.innerHTML = html;
    if (feedNotice) feedNotice.hidden = true;
    var browsing = !query.get("q") && !query.get("file") && !query.get("dismissed") &&
      query.get("order") !== "date_asc";  // new memories join the newest-first list only
    if (browsing) list.setAttribute("data-live", "1");
    else list.removeAttribute("data-live");
    if (label) {
      label.removeAttribute("role");
      label.textContent = headers.get("x-results-label") || label.textContent;
    }
    if (more) {
      var next = headers.get("x-more-query") || "";
      more.hidden = !next;
      if (next) more.querySelector("a").setAttribute("href", "/?" + next);
    }
  }

  form.addEventListener("input", function (event) {
    if (event.target && event.target.id === "q") {
      clearTimeout(typed);
      typed = setTimeout(function () { search(false); }, DEBOUNCE_MS);
    }
  });
  form.addEventListener("change", function (event) {
    if (event.target && event.target.id !== "q" && event.target.id !== FIND) search(false);
  });
  // Enter (or the Search button): the same rows without reloading the page, kept in history.
  // Enter in Find project loads the page, whose Project list the server fills anew.
  form.addEventListener("submit", function (event) {
    var active = document.activeElement;
    if (active && active.id === FIND) return;
    event.preventDefault();
    clearTimeout(typed);
    search(true);
  });
  // Back or Forward to another search reloads it; a jump to #main (the skip link) does not.
  var shown = location.search;
  window.addEventListener("popstate", function () {
    if (location.search !== shown) location.reload();
  });
  setInterval(poll, POLL_MS);
})();
