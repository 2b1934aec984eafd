// The admin inbox's script (docs/inbox.md): live updates, the reply and canned-reply
// helpers of the composer, and selects that submit their form. No framework.
//
// Live updates: the page's root carries `data-live-url` and `data-live-etag`. Every two
// seconds (while the tab is visible) the script asks the live URL with If-None-Match;
// a 304 costs the server almost nothing. Any other answer means the page changed: the
// script fetches the page again and swaps in its live regions, leaving alone a region
// the staff member is typing in.
(function () {
  "use strict";

  var POLL_MS = 2000;
  // Redrawn whenever the page changed; `inbox-state` and the composer only when safe.
  var REGIONS = ["inbox-live-region", "inbox-timeline"];

  function ready(callback) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", callback);
    } else {
      callback();
    }
  }

  // Selects that submit their form when changed (the template picker, the organization).
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches && target.matches("[data-submit-on-change]") && target.form) {
      target.form.submit();
    }
    if (target.id === "inbox-canned" && target.value) {
      insertText(document.querySelector("#inbox-reply-form textarea"), target.value);
      target.value = "";
    }
  });

  function insertText(textarea, text) {
    if (!textarea) {
      return;
    }
    var start = textarea.selectionStart || 0;
    var end = textarea.selectionEnd || 0;
    textarea.value = textarea.value.slice(0, start) + text + textarea.value.slice(end);
    textarea.focus();
    textarea.selectionStart = textarea.selectionEnd = start + text.length;
  }

  // "Reply" on a message: the composer answers it (Meta's context), until cancelled.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-reply-to]");
    var form = document.getElementById("inbox-reply-form");
    if (button && form) {
      form.elements.reply_to.value = button.getAttribute("data-reply-to");
      document.getElementById("inbox-replying-text").textContent =
        button.getAttribute("data-reply-text");
      document.getElementById("inbox-replying").hidden = false;
      form.elements.message.focus();
    }
    if (event.target.id === "inbox-cancel-reply" && form) {
      form.elements.reply_to.value = "";
      document.getElementById("inbox-replying").hidden = true;
    }
  });

  function scrollToEnd() {
    var timeline = document.getElementById("inbox-timeline");
    if (timeline) {
      timeline.scrollTop = timeline.scrollHeight;
    }
  }

  function atEnd(element) {
    return element.scrollHeight - element.scrollTop - element.clientHeight < 40;
  }

  function typingIn(element) {
    return element.contains(document.activeElement) && document.activeElement !== document.body;
  }

  function swap(fresh) {
    var root = document.querySelector("[data-live-url]");
    var freshRoot = fresh.querySelector("[data-live-url]");
    if (!root || !freshRoot) {
      return;
    }
    var timeline = document.getElementById("inbox-timeline");
    var wasAtEnd = timeline ? atEnd(timeline) : false;
    var scrolled = timeline ? timeline.scrollTop : 0;
    REGIONS.forEach(function (id) {
      var old = document.getElementById(id);
      var replacement = fresh.getElementById(id);
      if (old && replacement) {
        old.replaceWith(replacement);
      }
    });
    var state = document.getElementById("inbox-state");
    if (state && !typingIn(state)) {
      state.replaceWith(fresh.getElementById("inbox-state"));
    }
    var composer = document.getElementById("inbox-composer");
    var freshComposer = fresh.getElementById("inbox-composer");
    if (composer && freshComposer &&
        composer.getAttribute("data-mode") !== freshComposer.getAttribute("data-mode")) {
      composer.replaceWith(freshComposer);
    }
    root.setAttribute("data-live-url", freshRoot.getAttribute("data-live-url"));
    root.setAttribute("data-live-etag", freshRoot.getAttribute("data-live-etag"));
    var newTimeline = document.getElementById("inbox-timeline");
    if (wasAtEnd) {
      scrollToEnd();
    } else if (newTimeline) {
      newTimeline.scrollTop = scrolled;  // reading older messages: stay there
    }
  }

  function refresh() {
    return fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) {
          window.location.reload();  // gone, or no longer ours: the page says why
          return null;
        }
        return response.text();
      })
      .then(function (html) {
        if (html) {
          swap(new DOMParser().parseFromString(html, "text/html"));
        }
      });
  }

  function poll() {
    var root = document.querySelector("[data-live-url]");
    if (!root || document.hidden) {
      return Promise.resolve();
    }
    var headers = {};
    var etag = root.getAttribute("data-live-etag");
    if (etag) {
      headers["If-None-Match"] = etag;
    }
    return fetch(root.getAttribute("data-live-url"), {
      headers: headers,
      credentials: "omit",
      cache: "no-store",
    }).then(function (response) {
      if (response.status === 304) {
        return null;
      }
      if (response.status === 404) {
        window.location.reload();
        return null;
      }
      return refresh();  // changed (200), or the token expired (403): a new page, a new token
    });
  }

  function loop() {
    poll()
      .catch(function () {})  // offline for a moment: try again at the next tick
      .then(function () {
        window.setTimeout(loop, POLL_MS);
      });
  }

  ready(function () {
    scrollToEnd();
    if (document.querySelector("[data-live-url]")) {
      window.setTimeout(loop, POLL_MS);
      document.addEventListener("visibilitychange", function () {
        if (!document.hidden) {
          poll().catch(function () {});
        }
      });
    }
  });
})();
