// AgentNava's pages: the few behaviours that would otherwise be inline script, which the
// Content-Security-Policy forbids (script-src 'self', no eval: htmx runs with allowEval off).
(function () {
  "use strict";
  function closest(node, selector) {
    return node && node.closest ? node.closest(selector) : null;
  }

  // A button with data-confirm asks first; "Cancel" keeps its form from being sent.
  document.addEventListener("click", function (event) {
    var button = closest(event.target, "[data-confirm]");
    if (button && !window.confirm(button.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });

  // A form marked data-reset-on-success is emptied once htmx has sent it successfully.
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail && event.detail.elt;
    if (form && form.matches && form.matches("form[data-reset-on-success]") && event.detail.successful) {
      form.reset();
    }
  });

  // A form marked data-warn-unsaved asks before the page is left with edits not yet saved.
  var dirty = new Set();
  document.addEventListener("input", function (event) {
    var form = closest(event.target, "form[data-warn-unsaved]");
    if (form) dirty.add(form);
  });
  document.addEventListener("change", function (event) {
    var form = closest(event.target, "form[data-warn-unsaved]");
    if (form) dirty.add(form);
  });
  document.addEventListener("submit", function (event) {
    dirty.delete(event.target);
  });
  window.addEventListener("beforeunload", function (event) {
    if (dirty.size) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // A switch (checkbox with data-switch-words) says its state in words beside it.
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[data-switch-words]")) return;
    var words = document.getElementById(input.getAttribute("data-switch-words"));
    if (words) words.textContent = words.getAttribute(input.checked ? "data-on" : "data-off");
  });

  // Copy buttons: data-copy names the element whose text is copied.
  document.addEventListener("click", function (event) {
    var button = closest(event.target, "[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent;
    var done = function () {
      button.textContent = "Copied";
      window.setTimeout(function () {
        button.textContent = button.getAttribute("data-label") || "Copy";
      }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {
        selectText(source);
      });
    } else {
      selectText(source);
      try {
        document.execCommand("copy");
        done();
      } catch (e) {
        /* the text stays selected for Ctrl+C */
      }
    }
  });
  function selectText(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // Escape: cancels a line edit, closes an open <details> panel (the Builder), and returns focus.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var lineForm = closest(event.target, ".line-form");
    if (lineForm) {
      var cancel = lineForm.querySelector("[data-escape-cancel]");
      if (cancel) {
        event.preventDefault();
        // Pressed the moment the form appears, htmx may not have taken the link over yet: a plain
        // click would reload the page and drop focus on it.
        if (window.htmx) window.htmx.process(cancel);
        cancel.click();
      }
      return;
    }
    var panel = closest(event.target, "details[data-escape-close]") || document.querySelector("details[data-escape-close][open]");
    if (panel && panel.open) {
      panel.open = false;
      var summary = panel.querySelector("summary");
      if (summary) summary.focus();
    }
  });

  // Opening the Builder moves focus into its message box.
  document.addEventListener("toggle", function (event) {
    var panel = event.target;
    if (panel.matches && panel.matches("details[data-escape-close]") && panel.open) {
      var box = panel.querySelector("textarea");
      if (box) box.focus();
    }
  }, true);

  // After htmx swaps a part of the page, focus goes where the person is: an autofocus field in
  // the new part, or its status message, so it is never lost on <body>.
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || !target.isConnected) {
      target = document.getElementById(event.detail && event.detail.target && event.detail.target.id);
    }
    var part = target && target.isConnected ? target : event.detail.elt && document.getElementById(event.detail.elt.id);
    if (!part) part = document.getElementById("lines");
    if (!part || !part.querySelector) return;
    var field = part.querySelector("[autofocus]");
    if (field) {
      field.focus();
      if (field.setSelectionRange && field.value) field.setSelectionRange(field.value.length, field.value.length);
      return;
    }
    var status = part.querySelector(".flash[role=status], .flash[role=alert]");
    if (status && part.id === "lines") {
      status.setAttribute("tabindex", "-1");
      status.focus();
    }
  });

  // The chart: the numbers of the day pointed at (or focused) in words under it.
  function showTip(event) {
    var day = closest(event.target, ".chart-day");
    var tip = document.getElementById("chart-tip");
    if (day && tip) tip.textContent = day.getAttribute("data-tip");
  }
  document.addEventListener("mouseover", showTip);
  document.addEventListener("focusin", showTip);
})();

// A close button inside a <details> panel (data-close-details names it) closes it.
document.addEventListener("click", function (event) {
  var button = event.target.closest ? event.target.closest("[data-close-details]") : null;
  if (!button) return;
  var panel = document.getElementById(button.getAttribute("data-close-details"));
  if (panel) {
    panel.open = false;
    var summary = panel.querySelector("summary");
    if (summary) summary.focus();
  }
});

// A table wider than the screen scrolls sideways inside itself (phones); a scrolling region must be
// reachable by keyboard, so it becomes a focus stop, whatever page it is on.
function keyboardScrollers() {
  document.querySelectorAll(".table, .table-wrap").forEach(function (el) {
    if (el.scrollWidth > el.clientWidth + 1) {
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "0");
    } else if (el.getAttribute("tabindex") === "0" && !el.hasAttribute("data-keep-tabindex") && el.matches(".table")) {
      el.removeAttribute("tabindex");
    }
  });
}
document.addEventListener("DOMContentLoaded", keyboardScrollers);
window.addEventListener("resize", keyboardScrollers);
document.addEventListener("htmx:afterSettle", keyboardScrollers);

// Times: each <time data-fmt> is written in the reader's own time zone, with the zone named
// ("3 Nov 14:02 GMT+5:30"); without JavaScript the server's zone is named instead.
function localTimes(root) {
  if (!window.Intl || !Intl.DateTimeFormat) return;
  (root || document).querySelectorAll("time[data-fmt][datetime]").forEach(function (el) {
    var at = new Date(el.getAttribute("datetime"));
    if (isNaN(at.getTime())) return;
    var fmt = el.getAttribute("data-fmt");
    var options = { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short" };
    if (fmt.indexOf("Y") >= 0) options.year = "numeric";
    if (fmt.indexOf(":s") >= 0) options.second = "2-digit";
    var parts = {};
    new Intl.DateTimeFormat("en-GB", options).formatToParts(at).forEach(function (part) {
      parts[part.type] = part.value;
    });
    var time = parts.hour + ":" + parts.minute + (parts.second ? ":" + parts.second : "");
    el.textContent = [parts.day, parts.month, parts.year, time, parts.timeZoneName].filter(Boolean).join(" ");
    el.setAttribute("title", at.toISOString().replace(".000Z", "Z"));
  });
}
document.addEventListener("DOMContentLoaded", function () {
  localTimes(document);
});
document.addEventListener("htmx:afterSettle", function () {
  localTimes(document);
});

// Parts that only work with this script are shown by it (data-needs-script starts hidden).
function revealScripted(root) {
  (root || document).querySelectorAll("[data-needs-script][hidden]").forEach(function (el) {
    el.hidden = false;
  });
}
document.addEventListener("DOMContentLoaded", function () {
  revealScripted(document);
  // A refused form's summary takes focus once, so the person hears what to fix first.
  var summary = document.querySelector("[data-focus-on-load]");
  if (summary) summary.focus();
});
document.addEventListener("htmx:afterSettle", function () {
  revealScripted(document);
});

// A button with data-tick ticks the checkbox it names (as a click would, so its own change handlers
// run) and moves focus to it.
document.addEventListener("click", function (event) {
  var button = event.target.closest ? event.target.closest("[data-tick]") : null;
  if (!button) return;
  var box = document.getElementById(button.getAttribute("data-tick"));
  if (!box) return;
  if (!box.checked) box.click();
  box.focus();
});

// Where focus goes once a part is swapped in: an element with data-focus-after names it (Cancel and
// Escape in a line edit go back to that line's edit button, never to the page).
var focusAfterSwap = null;
document.addEventListener("htmx:beforeRequest", function (event) {
  var elt = event.detail && event.detail.elt;
  var selector = elt && elt.getAttribute ? elt.getAttribute("data-focus-after") : null;
  focusAfterSwap = selector ? { xhr: event.detail.xhr, selector: selector } : null;
});
document.addEventListener("htmx:afterSettle", function (event) {
  // Only the answer to that request (an earlier one may settle after it was sent).
  if (!focusAfterSwap || !event.detail || event.detail.xhr !== focusAfterSwap.xhr) return;
  var target = document.querySelector(focusAfterSwap.selector);
  focusAfterSwap = null;
  if (target) target.focus();
});

// An Undo offer (data-expires, in seconds) leaves the page after a while: only the page holds the
// words it would bring back.
function expireOffers(root) {
  (root || document).querySelectorAll("[data-expires]:not([data-expiring])").forEach(function (el) {
    el.setAttribute("data-expiring", "");
    window.setTimeout(function () {
      if (el.contains(document.activeElement)) return; // never pulled from under the keyboard
      el.remove();
    }, 1000 * Number(el.getAttribute("data-expires")));
  });
}
document.addEventListener("htmx:afterSettle", function () {
  expireOffers(document);
});

// A link in an error summary goes to its field and puts the cursor in it.
document.addEventListener("click", function (event) {
  var link = event.target.closest ? event.target.closest(".error-summary a[href^='#']") : null;
  if (!link) return;
  var field = document.getElementById(link.getAttribute("href").slice(1));
  if (!field) return;
  event.preventDefault();
  field.focus();
  if (field.scrollIntoView) field.scrollIntoView({ block: "center" });
});
