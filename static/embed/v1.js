/*
 * AgentNava website chat, v1. One file, plain JavaScript, no framework, its own CSS (in a shadow root,
 * so the page's styles and ours never mix).
 *
 *   <script src="https://YOUR-AGENTNAVA/embed/v1.js" data-agent-id="agt_..." defer></script>
 *
 * Attributes: data-agent-id (required); data-memory="off" (new chats start without memory until the
 * page calls AgentNava.memory.set('on')); data-end-user-id + data-end-user-hash (a signed-in user of
 * the site, hash = HMAC-SHA256 of the id with the agent's identity secret, computed on the site's
 * server); data-open="true" (open the chat at once).
 *
 * window.AgentNava.memory.set('on' | 'off') records the site's own consent step and applies from the
 * next chat. A page may call it before this script has loaded by queueing the value:
 *   window.AgentNava = window.AgentNava || {memory: {_queue: []}}; AgentNava.memory._queue.push('on');
 *
 * The visitor's id is issued and signed by the server and kept in localStorage; an id that does not
 * verify is refused and replaced. The current chat is kept in sessionStorage, so a reload resumes it.
 * A new visitor (or a site's user) is only read about on page view: the end user and the chat are
 * made with the first message or the answer to the ask-first question, never by a page view.
 */
(function () {
  "use strict";

  var script =
    document.currentScript || document.querySelector('script[src*="/embed/v1.js"][data-agent-id]');
  if (!script || !script.getAttribute("data-agent-id")) {
    if (window.console) console.error("AgentNava: the script tag needs data-agent-id.");
    return;
  }

  var agentId = script.getAttribute("data-agent-id");
  var base = new URL(script.src, window.location.href).origin + "/embed/v1";
  var siteUserId = script.getAttribute("data-end-user-id") || "";
  var siteUserHash = script.getAttribute("data-end-user-hash") || "";
  var memoryAttrOn = (script.getAttribute("data-memory") || "on").toLowerCase() !== "off";
  var openAtOnce = script.getAttribute("data-open") === "true";
  var KEY = "agentnava:" + agentId + ":";
  var MAX_CHARS = 4000; // the server's limit (413 message_too_long), said before sending
  var NEAR_CHARS = 3500; // the counter shows from here
  var NOTICE_LINE = "This assistant remembers chats.";
  var OFF_LINE = "Memory is off for this chat.";
  var ASKING_LINE = "Memory is off until you answer the question above.";

  // --- Storage (a browser may refuse it; the chat still works for this page) ---------------------
  function store(kind) {
    try {
      return window[kind];
    } catch (e) {
      return null;
    }
  }
  function get(kind, name) {
    var s = store(kind);
    try {
      return s ? s.getItem(KEY + name) : null;
    } catch (e) {
      return null;
    }
  }
  function put(kind, name, value) {
    var s = store(kind);
    try {
      if (!s) return;
      if (value === null) s.removeItem(KEY + name);
      else s.setItem(KEY + name, value);
    } catch (e) {
      /* full or blocked */
    }
  }

  // --- Server ---------------------------------------------------------------------------------
  function call(method, path, body) {
    var init = { method: method, headers: {}, credentials: "omit" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(base + path, init).then(
      function (response) {
        return response.json().then(
          function (data) {
            if (!response.ok) {
              var err = new Error((data && data.error && data.error.message) || "Something went wrong.");
              err.code = data && data.error && data.error.code;
              err.status = response.status;
              throw err;
            }
            return data;
          },
          function () {
            var err = new Error("The assistant gave an unreadable answer. Try again.");
            err.status = response.status;
            throw err;
          }
        );
      },
      function () {
        var err = new Error("Could not reach the assistant. Check your connection and try again.");
        err.code = "network";
        throw err;
      }
    );
  }

  function identity() {
    if (siteUserId) return { endUserId: siteUserId, endUserHash: siteUserHash };
    var id = get("localStorage", "visitor");
    return id ? { visitorId: id } : {};
  }

  function keepVisitorId(data) {
    if (data && data.visitorId) put("localStorage", "visitor", data.visitorId);
  }

  function withIdentity(extra) {
    var body = identity();
    for (var k in extra) if (Object.prototype.hasOwnProperty.call(extra, k)) body[k] = extra[k];
    return body;
  }

  // The site's own consent step (memory.set) wins over data-memory, from the next chat on.
  function memoryWanted() {
    var chosen = get("localStorage", "memory");
    if (chosen === "on") return true;
    if (chosen === "off") return false;
    return memoryAttrOn;
  }

  // --- CSS ------------------------------------------------------------------------------------
  var CSS = [
    ":host { all: initial; }",
    "* { box-sizing: border-box; }",
    ".an { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, Ubuntu, sans-serif; color: #1f2430; }",
    ".an-launcher { position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; border: 0; border-radius: 999px;",
    "  background: #4f46e5; color: #fff; padding: 12px 18px; font: 600 14px/1 system-ui, sans-serif; cursor: pointer;",
    "  box-shadow: 0 6px 20px rgba(17, 24, 39, .25); }",
    ".an-panel { position: fixed; right: 20px; bottom: 20px; z-index: 2147483001; width: 370px; max-width: calc(100vw - 24px);",
    "  height: 560px; max-height: calc(100vh - 40px); background: #fff; border: 1px solid #e5e7eb; border-radius: 14px;",
    "  box-shadow: 0 12px 40px rgba(17, 24, 39, .18); display: flex; flex-direction: column; overflow: hidden; }",
    ".an-panel[hidden], .an-launcher[hidden], [hidden] { display: none !important; }",
    ".an-chat { display: contents; }",
    ".an-head { display: flex; align-items: center; gap: 8px; padding: 12px 14px; border-bottom: 1px solid #e5e7eb; }",
    ".an-title { font-weight: 650; font-size: 15px; flex: 1; }",
    ".an-icon { border: 0; background: transparent; color: #6b7280; cursor: pointer; padding: 4px; border-radius: 6px;",
    "  display: inline-flex; align-items: center; justify-content: center; font: 18px/1 system-ui, sans-serif; }",
    ".an-icon:hover, .an-icon[aria-expanded='true'] { background: #eef2ff; color: #4f46e5; }",
    ".an-icon svg { width: 18px; height: 18px; }",
    ".an-body { flex: 1; overflow-y: auto; padding: 14px; display: flex; flex-direction: column; gap: 8px; background: #f7f7fb; }",
    ".an-msg { max-width: 85%; padding: 8px 12px; border-radius: 12px; white-space: pre-wrap; word-wrap: break-word; }",
    ".an-msg.user { align-self: flex-end; background: #4f46e5; color: #fff; border-bottom-right-radius: 4px; }",
    ".an-msg.agent { align-self: flex-start; background: #fff; border: 1px solid #e5e7eb; border-bottom-left-radius: 4px; }",
    ".an-empty { color: #6b7280; text-align: center; margin: auto 0; }",
    ".an-ask { background: #eef2ff; border: 1px solid #c7d2fe; border-radius: 12px; padding: 12px; }",
    ".an-ask p { margin: 0 0 10px; }",
    ".an-row { display: flex; gap: 8px; flex-wrap: wrap; }",
    ".an-btn { font: inherit; border-radius: 8px; padding: 6px 14px; border: 1px solid #d1d5db; background: #fff; color: #1f2430; cursor: pointer; }",
    ".an-btn.primary { background: #4f46e5; border-color: #4f46e5; color: #fff; font-weight: 600; }",
    ".an-btn:disabled { opacity: .5; cursor: not-allowed; }",
    ".an-foot { border-top: 1px solid #e5e7eb; padding: 10px 12px 8px; background: #fff; }",
    ".an-form { display: flex; gap: 8px; align-items: flex-end; }",
    ".an-input { flex: 1; font: inherit; border: 1px solid #d1d5db; border-radius: 10px; padding: 8px 10px; resize: none;",
    "  min-height: 38px; max-height: 120px; color: #1f2430; background: #fff; }",
    ".an-input:focus { outline: 2px solid #eef2ff; border-color: #4f46e5; }",
    ".an-send { padding: 8px 12px; }",
    ".an-line { color: #6b7280; font-size: 12px; margin-top: 6px; min-height: 16px; }",
    ".an-error { color: #b91c1c; background: #fee2e2; border-radius: 8px; padding: 6px 10px; font-size: 13px; margin-bottom: 8px; }",
    ".an-settings { flex: 1; overflow-y: auto; padding: 16px; }",
    ".an-settings h2 { font-size: 15px; margin: 0 0 8px; }",
    ".an-settings p { margin: 0 0 12px; }",
    ".an-notice { color: #374151; }",
    ".an-switch { display: flex; align-items: center; gap: 10px; margin: 12px 0; cursor: pointer; }",
    ".an-switch input { width: 36px; height: 20px; appearance: none; -webkit-appearance: none; background: #d1d5db;",
    "  border-radius: 999px; position: relative; cursor: pointer; margin: 0; flex: none; transition: background .15s; }",
    ".an-switch input::after { content: ''; position: absolute; top: 2px; left: 2px; width: 16px; height: 16px; border-radius: 50%;",
    "  background: #fff; transition: left .15s; }",
    ".an-switch input:checked { background: #4f46e5; } .an-switch input:checked::after { left: 18px; }",
    ".an-switch input:disabled { opacity: .5; cursor: not-allowed; }",
    ".an-status { font-size: 13px; color: #374151; background: #f3f4f6; border-radius: 8px; padding: 8px 10px; margin: 0 0 12px; }",
    ".an-link { color: #4f46e5; text-decoration: none; } .an-link:hover { text-decoration: underline; }",
    ".an-muted { color: #6b7280; font-size: 13px; }",
    ".an-typing { align-self: flex-start; color: #4b5563; font-size: 13px; }",
    ".an-msg.user[data-pending] { box-shadow: 0 0 0 2px #c7d2fe; }",
    ".an-body:focus-visible { outline: 2px solid #4f46e5; outline-offset: -2px; }",
    ".an-count { font-size: 12px; color: #4b5563; text-align: right; margin-top: 4px; }",
    ".an-count.over { color: #b91c1c; font-weight: 600; }",
    ".an-next { font-size: 13px; color: #1f2430; background: #eef2ff; border-radius: 8px; padding: 6px 10px; margin-bottom: 8px;",
    "  display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }",
    ".an-next .an-btn { padding: 3px 10px; font-size: 13px; }",
    ".an-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }",
  ].join("\n");

  var GEAR =
    '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">' +
    '<circle cx="12" cy="12" r="3"></circle><path d="M19.4 15a1.65 1.65 0 0 0 .33 1.82l.06.06a2 2 0 1 1-2.83 2.83l-.06-.06a1.65 1.65 0 0 0-1.82-.33 ' +
    "1.65 1.65 0 0 0-1 1.51V21a2 2 0 1 1-4 0v-.09a1.65 1.65 0 0 0-1.08-1.51 1.65 1.65 0 0 0-1.82.33l-.06.06a2 2 0 1 1-2.83-2.83l.06-.06a1.65 " +
    "1.65 0 0 0 .33-1.82 1.65 1.65 0 0 0-1.51-1H3a2 2 0 1 1 0-4h.09a1.65 1.65 0 0 0 1.51-1.08 1.65 1.65 0 0 0-.33-1.82l-.06-.06a2 2 0 1 1 " +
    "2.83-2.83l.06.06a1.65 1.65 0 0 0 1.82.33H9a1.65 1.65 0 0 0 1-1.51V3a2 2 0 1 1 4 0v.09a1.65 1.65 0 0 0 1 1.51 1.65 1.65 0 0 0 1.82-.33l.06-.06a2 " +
    "2 0 1 1 2.83 2.83l-.06.06a1.65 1.65 0 0 0-.33 1.82V9a1.65 1.65 0 0 0 1.51 1H21a2 2 0 1 1 0 4h-.09a1.65 1.65 0 0 0-1.51 1z\"></path></svg>";

  // --- DOM helpers ----------------------------------------------------------------------------
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, k)) continue;
        if (k === "text") node.textContent = attrs[k];
        else if (k === "html") node.innerHTML = attrs[k]; // only our own constant markup (the gear icon)
        else if (k === "class") node.className = attrs[k];
        else node.setAttribute(k, attrs[k]);
      }
    }
    (children || []).forEach(function (c) {
      if (c) node.appendChild(c);
    });
    return node;
  }

  // --- The chat -------------------------------------------------------------------------------
  var host = el("div", { "data-agentnava": agentId });
  var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;
  // A constructed style sheet where the browser has them: a customer's page whose CSP forbids inline
  // styles (style-src without 'unsafe-inline') still draws the chat. A <style> element otherwise.
  if (root !== host && "adoptedStyleSheets" in root && typeof CSSStyleSheet === "function" && CSSStyleSheet.prototype.replaceSync) {
    var sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
  } else {
    root.appendChild(el("style", { text: CSS }));
  }

  var ui = {};
  // Its name is its visible text ("Chat with Support"): a voice user says what they see.
  ui.launcher = el("button", { class: "an-launcher", type: "button", "data-an": "launcher", text: "Chat" });
  ui.title = el("div", { class: "an-title", "data-an": "title", text: "Chat" });
  ui.gear = el("button", { class: "an-icon", type: "button", "data-an": "settings-button", "aria-label": "Settings", "aria-expanded": "false", title: "Settings", html: GEAR });
  ui.close = el("button", { class: "an-icon", type: "button", "data-an": "close", "aria-label": "Close chat", title: "Close", text: "\u00d7" });
  ui.askText = el("p", { "data-an": "ask-question" });
  ui.askYes = el("button", { class: "an-btn primary", type: "button", "data-an": "ask-yes", text: "Yes" });
  ui.askNo = el("button", { class: "an-btn", type: "button", "data-an": "ask-no", text: "No" });
  ui.ask = el("div", { class: "an-ask", "data-an": "ask", hidden: "" }, [ui.askText, el("div", { class: "an-row" }, [ui.askYes, ui.askNo])]);
  // Messages go before the ask-first question, which stays last in the list.
  // The scrolling log is reachable by keyboard (tabindex 0) to scroll it, and named.
  ui.messages = el("div", { class: "an-body", "data-an": "messages", role: "log", "aria-live": "polite", "aria-label": "Messages", tabindex: "0" }, [ui.ask]);
  ui.error = el("div", { class: "an-error", "data-an": "error", role: "alert", hidden: "" });
  // No maxlength: a longer paste stays whole and the counter says it is too long before sending.
  ui.input = el("textarea", { class: "an-input", "data-an": "input", rows: "1", placeholder: "Type a message...", "aria-label": "Message", "aria-describedby": "an-count" });
  ui.send = el("button", { class: "an-btn primary an-send", type: "submit", "data-an": "send", "aria-label": "Send", text: "\u27a4" });
  ui.form = el("form", { class: "an-form", "data-an": "form" }, [ui.input, ui.send]);
  ui.line = el("div", { class: "an-line", "data-an": "notice-line" });
  ui.count = el("div", { class: "an-count", id: "an-count", "data-an": "counter", "aria-hidden": "true", hidden: "" });
  ui.countSpoken = el("div", { class: "an-sr", "data-an": "counter-spoken", "aria-live": "polite" });
  // What happens next after the site's step or "Remember me again" changed memory mid-chat.
  ui.nextText = el("span", { "data-an": "next-step-text" });
  ui.nextStart = el("button", { class: "an-btn", type: "button", "data-an": "next-step-start", text: "Start a new chat" });
  ui.next = el("div", { class: "an-next", "data-an": "next-step", role: "status", hidden: "" }, [ui.nextText, ui.nextStart]);
  ui.foot = el("div", { class: "an-foot" }, [ui.error, ui.next, ui.form, ui.count, ui.countSpoken, ui.line]);

  ui.notice = el("p", { class: "an-notice", "data-an": "notice" });
  ui.status = el("p", { class: "an-status", "data-an": "memory-status" });
  ui.switchInput = el("input", { type: "checkbox", role: "switch", "data-an": "switch", "aria-describedby": "an-switch-hint" });
  ui.switchLabel = el("label", { class: "an-switch", "data-an": "switch-label" }, [ui.switchInput, el("span", { text: "Memory for this chat" })]);
  ui.switchHint = el("p", { class: "an-muted", id: "an-switch-hint", "data-an": "switch-hint", hidden: "" });
  ui.allow = el("button", { class: "an-btn", type: "button", "data-an": "allow-memory", hidden: "", text: "Allow memory" });
  ui.rememberAgain = el("button", { class: "an-btn", type: "button", "data-an": "remember-again", hidden: "", text: "Remember me again" });
  ui.privacy = el("a", { class: "an-link", "data-an": "privacy-link", target: "_blank", rel: "noopener", text: "Privacy policy" });
  ui.startOver = el("button", { class: "an-btn", type: "button", "data-an": "start-over", text: "Start over" });
  ui.back = el("button", { class: "an-btn primary", type: "button", "data-an": "settings-done", text: "Back to chat" });
  ui.settings = el("div", { class: "an-settings", "data-an": "settings", hidden: "" }, [
    el("h2", { text: "About this chat" }),
    ui.notice,
    ui.status,
    ui.switchLabel,
    ui.switchHint,
    el("p", {}, [ui.allow, ui.rememberAgain]),
    el("p", {}, [ui.privacy]),
    el("div", { class: "an-row" }, [ui.startOver, ui.back]),
    el("p", { class: "an-muted", text: "Start over opens a new chat. What the assistant remembers is kept." }),
  ]);
  ui.chat = el("div", { class: "an-chat" }, [ui.messages, ui.foot]);
  ui.panel = el("div", { class: "an-panel", "data-an": "panel", role: "dialog", "aria-label": "Chat", hidden: "" }, [
    el("div", { class: "an-head" }, [ui.title, ui.gear, ui.close]),
    ui.chat,
    ui.settings,
  ]);
  root.appendChild(el("div", { class: "an" }, [ui.launcher, ui.panel]));

  var state = {
    agent: null,
    endUser: null,
    conversation: null, // {id, token, memory: {used, reason, line, switchable}, hasMessages}
    asking: false,
    busy: false,
    pendingNote: "", // what memory.set / Allow memory will do from the next chat
    next: null, // {text, offerNewChat}: what happens next, said in the open chat
    switchOn: true, // the switch before the chat has started: how the first message starts it
  };
  var ready; // resolves once the visitor is known (and a chat started or the question shown)

  function showError(message) {
    ui.error.textContent = message || "";
    if (message) ui.error.removeAttribute("hidden");
    else ui.error.setAttribute("hidden", "");
  }

  function addMessage(role, text) {
    var empty = ui.messages.querySelector(".an-empty");
    if (empty) empty.remove();
    var node = el("div", { class: "an-msg " + role, "data-an": "message", "data-role": role, text: text });
    ui.messages.insertBefore(node, ui.ask);
    ui.messages.scrollTop = ui.messages.scrollHeight;
    return node;
  }

  function showEmptyIfNone() {
    if (ui.messages.querySelector("[data-an=message], .an-empty")) return;
    ui.messages.insertBefore(el("div", { class: "an-empty", text: "Ask a question to get started." }), ui.ask);
  }

  function clearMessages() {
    Array.prototype.slice.call(ui.messages.querySelectorAll("[data-an=message], .an-empty, .an-typing")).forEach(function (n) {
      n.remove();
    });
    showEmptyIfNone();
  }

  // --- The message box: what it holds, and the counter near the limit -------------------------
  function charCount(text) {
    return Array.from(text).length; // code points, as the server counts them
  }
  function tooLong() {
    return charCount(ui.input.value.trim()) > MAX_CHARS;
  }
  function fmt(n) {
    return n.toLocaleString("en-US");
  }
  var spokenTimer = null;
  function updateCount() {
    var n = charCount(ui.input.value.trim());
    var over = n > MAX_CHARS;
    var text = "";
    if (over) text = "Too long: " + fmt(n) + " of " + fmt(MAX_CHARS) + " characters. Shorten it by " + fmt(n - MAX_CHARS) + " to send.";
    else if (n > NEAR_CHARS) text = fmt(n) + " of " + fmt(MAX_CHARS) + " characters";
    ui.count.textContent = text;
    ui.count.className = "an-count" + (over ? " over" : "");
    if (text) ui.count.removeAttribute("hidden");
    else ui.count.setAttribute("hidden", "");
    // Said to a screen reader once typing pauses, not at every key.
    clearTimeout(spokenTimer);
    spokenTimer = setTimeout(function () {
      ui.countSpoken.textContent = text;
    }, 700);
    setBusy(state.busy);
  }

  // The box can be used once the agent is known; a chat starts with the first message.
  function setBusy(busy) {
    state.busy = busy;
    var known = !!state.agent;
    ui.send.disabled = busy || state.asking || !known || tooLong();
    ui.input.disabled = state.asking || !known;
  }

  function render() {
    var agent = state.agent;
    if (!agent) return;
    var memory = agent.memory;
    ui.title.textContent = agent.name;
    ui.launcher.textContent = "Chat with " + agent.name;
    var conv = state.conversation;
    var stopped = state.endUser && state.endUser.memory && state.endUser.memory.stopped;
    // The line under the message box (R25): never that it remembers while ask-first is pending.
    var line = "";
    if (state.asking) line = memory.available ? ASKING_LINE : "";
    else if (conv && conv.memory.reason === "stopped" && !stopped) line = "Memory is on again from your next chat.";
    else if (conv) line = conv.memory.line;
    else if (memory.available) line = !memoryWanted() || !state.switchOn ? OFF_LINE : answeredHere() === false ? "Memory is off: you said no." : NOTICE_LINE;
    ui.line.textContent = line;
    // Ask first (R26): a yes or no before the first message.
    ui.askText.textContent = memory.askFirstQuestion;
    if (state.asking) ui.ask.removeAttribute("hidden");
    else ui.ask.setAttribute("hidden", "");
    var empty = ui.messages.querySelector(".an-empty");
    if (empty) empty.hidden = state.asking;
    ui.input.placeholder = state.asking ? "Answer the question above first" : "Type a message...";
    // Settings: the full notice, the switch, the privacy link.
    ui.notice.textContent = memory.available ? memory.notice : "This assistant does not remember anything between chats.";
    if (memory.privacyUrl) {
      ui.privacy.setAttribute("href", memory.privacyUrl);
      ui.privacy.parentNode.removeAttribute("hidden");
    } else {
      ui.privacy.removeAttribute("href");
      ui.privacy.parentNode.setAttribute("hidden", "");
    }
    var consent = state.endUser && state.endUser.consent;
    var status = "";
    if (!memory.available) status = "";
    else if (stopped) status = "You asked this assistant to stop remembering you. It keeps nothing from your chats.";
    else if (state.asking) status = "Memory is off until you answer the question in the chat.";
    else if (conv && conv.memory.used) status = "Memory is on for this chat.";
    else if (conv && conv.memory.reason === "consent") status = "Memory is off: you said no.";
    else if (conv) status = "Memory is off for this chat.";
    else status = line === NOTICE_LINE ? "Memory is on for this chat." : line;
    if (state.pendingNote) status += (status ? " " : "") + state.pendingNote;
    ui.status.textContent = status;
    if (status) ui.status.removeAttribute("hidden");
    else ui.status.setAttribute("hidden", "");
    if (memory.showSwitch && conv && !stopped) {
      ui.switchLabel.removeAttribute("hidden");
      ui.switchInput.checked = !!conv.memory.used;
      // Off while it is on. Back on: at once when nothing was said yet, else in a new chat (this
      // one stays out of memory), which the hint says before the switch is touched.
      var turnedOff = conv.memory.reason === "switch";
      ui.switchInput.disabled = !(conv.memory.switchable || turnedOff);
      var hint;
      if (conv.memory.used) hint = "On: this assistant may remember details from this chat. Turn it off to leave this chat out of memory.";
      else if (turnedOff && conv.hasMessages) hint = "Off: nothing from this chat will be remembered. Turning it back on starts a new chat with memory on.";
      else if (turnedOff) hint = "Off for this chat. Turn it on to use memory.";
      else if (state.pendingNote) hint = state.pendingNote;
      else if (conv.memory.reason === "requested") hint = "Off: this site keeps memory off until you agree to it on the page.";
      else if (conv.memory.reason === "consent") hint = "Off: you said no. Allow memory below to change that.";
      else hint = "Memory is off for this chat.";
      ui.switchHint.textContent = hint;
      ui.switchHint.removeAttribute("hidden");
    } else if (memory.showSwitch && !conv && !stopped && !state.asking && memoryWanted() && answeredHere() !== false) {
      // Before the first message: the switch says how the chat will start.
      ui.switchLabel.removeAttribute("hidden");
      ui.switchInput.checked = state.switchOn;
      ui.switchInput.disabled = false;
      ui.switchHint.textContent = state.switchOn
        ? "On: this assistant may remember details from this chat. Turn it off to leave this chat out of memory."
        : "Off for this chat. Turn it on to use memory.";
      ui.switchHint.removeAttribute("hidden");
    } else {
      ui.switchLabel.setAttribute("hidden", "");
      ui.switchHint.setAttribute("hidden", "");
    }
    var declined = consent && consent.declinedAt && !consent.agreedAt;
    if (memory.available && memory.askFirst && declined && !stopped) ui.allow.removeAttribute("hidden");
    else ui.allow.setAttribute("hidden", "");
    // After "stop remembering me" they can change their mind here (memory.stop(false)).
    if (memory.available && stopped) ui.rememberAgain.removeAttribute("hidden");
    else ui.rememberAgain.setAttribute("hidden", "");
    var next = state.next;
    if (!next && conv && conv.memory.reason === "stopped" && !stopped) next = { text: "I'll remember you again from your next chat.", offerNewChat: true };
    ui.nextText.textContent = next ? next.text : "";
    if (next) ui.next.removeAttribute("hidden");
    else ui.next.setAttribute("hidden", "");
    if (next && next.offerNewChat) ui.nextStart.removeAttribute("hidden");
    else ui.nextStart.setAttribute("hidden", "");
    setBusy(state.busy);
  }

  function takeServerState(data) {
    if (data.agent) state.agent = data.agent;
    if (data.endUser) state.endUser = data.endUser;
    if (data.conversation !== undefined) {
      state.conversation = data.conversation;
      if (data.conversation) put("sessionStorage", "conversation", JSON.stringify({ id: data.conversation.id, token: data.conversation.token }));
    }
    keepVisitorId(data);
  }

  function start(options) {
    var keepLog = options && options.keepLog; // the first message is already in the log, waiting
    showError("");
    state.conversation = null;
    setBusy(state.busy); // nothing can be sent until the new chat exists
    put("sessionStorage", "conversation", null);
    return call("POST", "/agents/" + encodeURIComponent(agentId) + "/start", withIdentity({ memory: memoryWanted(), switch: state.switchOn })).then(
      function (data) {
        takeServerState(data);
        if (data.visitorIdReplaced && window.console) console.info("AgentNava: the stored visitor id was refused; a new one was issued.");
        state.asking = !!data.ask;
        state.pendingNote = "";
        state.next = null;
        state.switchOn = true;
        if (!keepLog) clearMessages();
        render();
      }
    );
  }

  // Who answered the ask-first question in this browser, and how (null: not here). A site's user
  // is told apart from the anonymous visitor, so one answer never stands for another person.
  function answeredHere() {
    var saved;
    try {
      saved = JSON.parse(get("localStorage", "answered") || "null");
    } catch (e) {
      saved = null;
    }
    return saved && saved.who === (siteUserId || "visitor") ? !!saved.agreed : null;
  }
  function keepAnswer(agreed) {
    put("localStorage", "answered", JSON.stringify({ who: siteUserId || "visitor", agreed: agreed }));
  }

  // No chat yet. A returning visitor (a signed id kept here) starts one at once, as their end user
  // exists. A new visitor or a site's user only reads the agent's settings: their end user and
  // chat are made by the first message or the answer to the ask-first question.
  function prepare() {
    if (!siteUserId && get("localStorage", "visitor")) return start();
    return call("GET", "/agents/" + encodeURIComponent(agentId) + "/config").then(function (data) {
      state.agent = data.agent;
      state.conversation = null;
      var memory = data.agent.memory;
      state.asking = !!(memory.available && memory.askFirst && memoryWanted() && answeredHere() === null);
      clearMessages();
      render();
    });
  }

  // The chat the next message goes to, started now when there is none yet; null when the server
  // says to ask first (the question is then shown).
  function ensureChat() {
    if (state.conversation) return Promise.resolve(state.conversation);
    return start({ keepLog: true }).then(function () {
      return state.asking ? null : state.conversation;
    });
  }

  function resume() {
    var saved;
    try {
      saved = JSON.parse(get("sessionStorage", "conversation") || "null");
    } catch (e) {
      saved = null;
    }
    if (!saved || !saved.id || !saved.token) return prepare();
    return call("POST", "/conversations/" + encodeURIComponent(saved.id) + "/transcript", withIdentity({ token: saved.token })).then(
      function (data) {
        takeServerState(data);
        state.asking = false;
        clearMessages();
        data.messages.forEach(function (m) {
          addMessage(m.role, m.text);
        });
        render();
      },
      function () {
        return prepare(); // another visitor's chat, an old one, or a refused id: begin afresh
      }
    );
  }

  function boot() {
    ready = resume().then(
      function () {
        drainQueue();
      },
      function (err) {
        state.agent = state.agent || { name: "Chat", memory: { available: false, line: "", notice: "", askFirstQuestion: "" } };
        render();
        showError(err.message);
      }
    );
    return ready;
  }

  // The visitor's message shows at once and the box empties; the agent is shown replying; if it
  // cannot be sent the message leaves the log and its words come back to the box.
  function send(event) {
    if (event) event.preventDefault();
    var text = ui.input.value.trim();
    if (!text || state.busy || state.asking || !state.agent) return;
    if (charCount(text) > MAX_CHARS) {
      updateCount(); // the counter says by how much; nothing is cut
      return;
    }
    ui.input.value = "";
    updateCount();
    deliver(text, true);
  }

  function deliver(text, fromBox) {
    showError("");
    var mine = addMessage("user", text);
    mine.setAttribute("data-pending", "");
    var typing = el("div", { class: "an-typing", "data-an": "typing", text: (state.agent.name || "The assistant") + " is replying\u2026" });
    ui.messages.insertBefore(typing, ui.ask);
    ui.messages.scrollTop = ui.messages.scrollHeight;
    setBusy(true);
    function unsend() {
      typing.remove();
      mine.remove();
      showEmptyIfNone();
      if (fromBox) ui.input.value = ui.input.value ? text + "\n" + ui.input.value : text;
      setBusy(false);
      updateCount();
    }
    ensureChat()
      .then(function (conv) {
        if (!conv) return null; // the ask-first question comes first
        return call("POST", "/conversations/" + encodeURIComponent(conv.id) + "/messages", { token: conv.token, text: text });
      })
      .then(
        function (data) {
          if (!data) {
            unsend();
            render();
            return;
          }
          typing.remove();
          mine.removeAttribute("data-pending");
          mine.textContent = data.message.text;
          addMessage("agent", data.reply.text);
          takeServerState(data);
          setBusy(false);
          render();
          ui.input.focus();
        },
        function (err) {
          unsend();
          showError(fromBox ? "Not sent: " + err.message : err.message);
          if (err.code === "conversation_not_found") start();
        }
      );
  }

  function answer(agreed) {
    ui.askYes.disabled = ui.askNo.disabled = true;
    call("POST", "/agents/" + encodeURIComponent(agentId) + "/consent", withIdentity({ agreed: agreed, source: "chat_prompt" }))
      .then(function (data) {
        keepVisitorId(data);
        keepAnswer(agreed);
        state.endUser = data.endUser;
        return start();
      })
      .then(
        function () {
          ui.askYes.disabled = ui.askNo.disabled = false;
          ui.input.focus();
        },
        function (err) {
          ui.askYes.disabled = ui.askNo.disabled = false;
          showError(err.message);
        }
      );
  }

  function switchChanged() {
    var conv = state.conversation;
    showError("");
    if (!conv) {
      state.switchOn = ui.switchInput.checked; // no chat yet: the first message starts it this way
      render();
      return;
    }
    if (!ui.switchInput.checked) {
      call("POST", "/conversations/" + encodeURIComponent(conv.id) + "/switch", { token: conv.token, on: false }).then(
        function (data) {
          takeServerState(data);
          render();
        },
        function (err) {
          showError(err.message);
          render();
        }
      );
    } else {
      // Back on: this chat stays out of memory, so a new chat starts with memory on (the hint said so).
      openSettings(false);
      start().then(
        function () {
          ui.input.focus();
        },
        function (err) {
          showError(err.message);
          render();
        }
      );
    }
  }

  function allowMemory() {
    call("POST", "/agents/" + encodeURIComponent(agentId) + "/consent", withIdentity({ agreed: true, source: "chat_prompt" })).then(
      function (data) {
        keepVisitorId(data);
        state.endUser = data.endUser;
        keepAnswer(true);
        if (state.conversation && !state.conversation.hasMessages) return start();
        state.pendingNote = "Memory will be on from your next chat.";
        state.next = { text: "Memory will be on from your next chat.", offerNewChat: true };
        render();
      },
      function (err) {
        showError(err.message);
      }
    );
  }

  function openSettings(open) {
    if (open) {
      ui.settings.removeAttribute("hidden");
      ui.chat.setAttribute("hidden", "");
    } else {
      ui.settings.setAttribute("hidden", "");
      ui.chat.removeAttribute("hidden");
    }
    ui.gear.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function openChat(open) {
    if (open) {
      ui.panel.removeAttribute("hidden");
      ui.launcher.setAttribute("hidden", "");
      if (!ready) boot();
      ui.input.focus();
    } else {
      ui.panel.setAttribute("hidden", "");
      ui.launcher.removeAttribute("hidden");
      ui.launcher.focus(); // focus goes back to what opened the chat
    }
  }

  // Escape closes the settings (back to the chat), else the chat; Tab stays inside the open panel.
  ui.panel.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      event.preventDefault();
      if (!ui.settings.hasAttribute("hidden")) {
        openSettings(false);
        ui.gear.focus();
      } else {
        openChat(false);
      }
      return;
    }
    if (event.key !== "Tab") return;
    var focusable = Array.prototype.filter.call(
      ui.panel.querySelectorAll("button, a[href], textarea, input"),
      function (node) {
        return !node.disabled && node.offsetParent !== null;
      }
    );
    if (!focusable.length) return;
    var first = focusable[0], last = focusable[focusable.length - 1];
    var active = root.activeElement || document.activeElement;
    if (event.shiftKey && active === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && active === last) {
      event.preventDefault();
      first.focus();
    }
  });

  setBusy(false); // the message box stays disabled until a chat has started

  ui.launcher.addEventListener("click", function () {
    openChat(true);
  });
  ui.close.addEventListener("click", function () {
    openChat(false);
  });
  ui.gear.addEventListener("click", function () {
    var open = ui.settings.hasAttribute("hidden");
    openSettings(open);
    (open ? ui.back : ui.input).focus();
  });
  ui.back.addEventListener("click", function () {
    openSettings(false);
    ui.input.focus();
  });
  ui.form.addEventListener("submit", send);
  ui.input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  ui.askYes.addEventListener("click", function () {
    answer(true);
  });
  ui.askNo.addEventListener("click", function () {
    answer(false);
  });
  ui.switchInput.addEventListener("change", switchChanged);
  ui.allow.addEventListener("click", allowMemory);
  ui.input.addEventListener("input", updateCount);
  ui.rememberAgain.addEventListener("click", function () {
    // Their own words, through the chat: the server answers it as memory.stop(false).
    openSettings(false);
    if (!state.busy) deliver("Remember me again", false);
  });
  ui.nextStart.addEventListener("click", function () {
    start().then(
      function () {
        ui.input.focus();
      },
      function (err) {
        showError(err.message);
      }
    );
  });
  ui.startOver.addEventListener("click", function () {
    openSettings(false);
    start().catch(function (err) {
      showError(err.message);
    });
  });

  // --- window.AgentNava.memory.set ------------------------------------------------------------
  var instance = {
    agentId: agentId,
    setMemory: function (value) {
      put("localStorage", "memory", value);
      return (ready || boot()).then(function () {
        return call(
          "POST",
          "/agents/" + encodeURIComponent(agentId) + "/consent",
          withIdentity({ agreed: value === "on", source: "site_step" })
        ).then(function (data) {
          keepVisitorId(data);
          state.endUser = data.endUser;
          var conv = state.conversation;
          if (!conv || !conv.hasMessages) {
            // Nothing said yet: the chat about to begin follows the site's answer at once.
            if (conv) {
              state.conversation = null;
              put("sessionStorage", "conversation", null);
            }
            state.pendingNote = "";
            state.next = {
              text: value === "on" ? "Thanks: this assistant may remember details from this chat to help next time." : "Memory stays off for this chat.",
              offerNewChat: false,
            };
          } else {
            state.pendingNote = value === "on" ? "Memory will be on from your next chat." : "Memory will be off from your next chat.";
            state.next = { text: state.pendingNote, offerNewChat: true };
          }
          render();
          return data.consent;
        });
      });
    },
  };

  var AN = (window.AgentNava = window.AgentNava || {});
  var queued = (AN.memory && AN.memory._queue) || [];
  AN.version = "1";
  AN._instances = AN._instances || [];
  AN._instances.push(instance);
  AN.memory = {
    set: function (value) {
      if (value !== "on" && value !== "off") {
        return Promise.reject(new TypeError("AgentNava.memory.set takes 'on' or 'off'."));
      }
      return Promise.all(
        AN._instances.map(function (chat) {
          return chat.setMemory(value);
        })
      ).then(function (results) {
        return results.length === 1 ? results[0] : results;
      });
    },
  };
  function drainQueue() {
    while (queued.length) AN.memory.set(queued.shift());
  }

  // On a phone, a page that keeps memory off until its own consent step (data-memory="off") and
  // has had no answer yet opens the chat collapsed: the open panel would cover the site's button.
  function siteStepPendingOnPhone() {
    var phone = window.matchMedia && window.matchMedia("(max-width: 480px)").matches;
    return !!phone && !memoryAttrOn && get("localStorage", "memory") === null;
  }

  function mount() {
    document.body.appendChild(host);
    if (openAtOnce && !siteStepPendingOnPhone()) openChat(true);
    else boot(); // read the agent now, so memory.set works before the chat is opened
  }
  if (document.body) mount();
  else document.addEventListener("DOMContentLoaded", mount);
})();
