// NavigationValues Inspector: a page served by the server itself at /inspector/.
//
// Plain JavaScript, no dependencies, nothing from another host. It talks to the server's own API:
// GET /v1/sessions (the list), /v1/events (every session's events, live), and for one session
// GET …/{id}, …/replay?at=N, …/diff?from=&to=, …/history, …/events (live), …/export, plus
// POST /v1/sessions/import and /v1/sessions/fork. Streams are opened with stream tickets
// (POST /v1/tickets), since EventSource cannot send an Authorization header. The token is kept
// in sessionStorage only. Long lists are virtualised: only the rows on screen are in the page,
// and history is fetched a page at a time as it scrolls into view.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const storage = window.sessionStorage;
  const EVENT_TYPES = [
    "session.created", "screen.pushed", "screens.popped", "path.replaced", "values.updated",
    "handler.set", "handler.removed", "preference.published", "session.ended",
    // Several stacks (docs/Stacks.md). EventSource hands a named event only to a listener of
    // that name, so every type must be here.
    "stack.created", "stack.selected", "stack.removed", "stack.moved", "stack.presented", "stack.dismissed",
    "stack.screen.pushed", "stack.screens.popped", "stack.path.replaced", "screens.replaced",
    "screen.returned", "batch.applied",
  ];
  const HISTORY_PAGE = 500;

  // MARK: - Small helpers

  /** An element with attributes and children (strings become text, never HTML). */
  function h(tag, attributes = {}, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") element.className = value;
      else if (name === "dataset") Object.assign(element.dataset, value);
      else element.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      element.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return element;
  }

  /** JSON on one line, cut to `limit` characters. */
  function short(value, limit = 80) {
    const text = JSON.stringify(value);
    if (text === undefined) return "undefined";
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  function shortID(id) {
    return typeof id === "string" && id.length > 9 ? id.slice(0, 9) + "…" : String(id);
  }

  function ago(iso) {
    const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (!Number.isFinite(seconds)) return "";
    if (seconds < 60) return Math.floor(seconds) + "s";
    if (seconds < 3600) return Math.floor(seconds / 60) + "m";
    if (seconds < 86400) return Math.floor(seconds / 3600) + "h";
    return Math.floor(seconds / 86400) + "d";
  }

  function clock(iso) {
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? "" : date.toLocaleTimeString([], { hour12: false });
  }

  function setStatus(state, text) {
    $("status").dataset.state = state;
    $("status-text").textContent = text;
  }

  // MARK: - The API

  class Problem extends Error {
    constructor(status, body) {
      super((body && (body.detail || body.title)) || `HTTP ${status}`);
      this.status = status;
      this.body = body;
    }
  }

  const auth = {
    token: null,
    /** "admin" (every session) or "session" (the sessions in `tokens`). */
    kind: null,
    /** Session id → the token that reads it, in session mode. */
    tokens: {},
  };

  function tokenFor(session) {
    return (session && auth.tokens[session]) || auth.token;
  }

  async function api(path, { method = "GET", body, raw, type, session, signal } = {}) {
    const headers = { Accept: "application/json" };
    const token = tokenFor(session);
    if (token) headers.Authorization = "Bearer " + token;
    let payload;
    if (raw !== undefined) {
      payload = raw;
      headers["Content-Type"] = type || "application/octet-stream";
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["Content-Type"] = "application/json";
    }
    const response = await fetch(path, { method, headers, body: payload, signal, cache: "no-store" });
    const contentType = response.headers.get("Content-Type") || "";
    const data = contentType.includes("json") && response.status !== 204 ? await response.json() : null;
    if (!response.ok) throw new Problem(response.status, data);
    return data;
  }

  const sessionPath = (id) => "/v1/sessions/" + encodeURIComponent(id);

  /** An event stream opened with a fresh ticket, reopened (with a new ticket) when it drops. */
  class LiveStream {
    constructor({ ticketFor, url, onEvent, onState }) {
      Object.assign(this, { ticketFor, url, onEvent, onState });
      this.closed = false;
      this.retry = 500;
      this.open();
    }

    async open() {
      if (this.closed) return;
      this.onState("connecting");
      let ticket;
      try {
        ticket = (await api("/v1/tickets", { method: "POST", body: this.ticketFor, session: this.ticketFor.session })).ticket;
      } catch (error) {
        this.onState("error", error.message);
        return this.later();
      }
      if (this.closed) return;
      const source = new EventSource(this.url() + (this.url().includes("?") ? "&" : "?") + "ticket=" + encodeURIComponent(ticket));
      this.source = source;
      source.onopen = () => {
        this.retry = 500;
        this.onState("live");
      };
      const handle = (message) => {
        let data;
        try {
          data = JSON.parse(message.data);
        } catch {
          return;
        }
        this.onEvent(message.type, data);
      };
      for (const type of EVENT_TYPES) source.addEventListener(type, handle);
      source.onmessage = handle;
      // EventSource retries by itself with the same URL; once its ticket has expired that fails
      // and it gives up (CLOSED): then a new ticket, resuming after the last event seen.
      source.onerror = () => {
        if (source.readyState === EventSource.CLOSED) {
          source.close();
          this.later();
        } else {
          this.onState("connecting");
        }
      };
    }

    later() {
      if (this.closed) return;
      this.onState("connecting");
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.open(), this.retry);
      this.retry = Math.min(this.retry * 2, 10000);
    }

    close() {
      this.closed = true;
      clearTimeout(this.timer);
      if (this.source) this.source.close();
    }
  }

  // MARK: - Virtual lists

  /** A list of fixed-height rows of which only those in view (and a few more) exist. */
  class VirtualList {
    constructor(element, { render, onClick, onRange }) {
      Object.assign(this, { element, render, onRange });
      this.count = 0;
      this.rows = new Map();
      this.pool = [];
      this.spacer = h("div", { class: "spacer" });
      element.append(this.spacer);
      this.measure();
      element.addEventListener("scroll", () => this.schedule(), { passive: true });
      new ResizeObserver(() => {
        this.measure();
        this.schedule();
      }).observe(element);
      element.addEventListener("click", (event) => {
        const row = event.target.closest(".vrow");
        if (row && onClick) onClick(Number(row.dataset.index), row);
      });
    }

    measure() {
      const height = parseFloat(getComputedStyle(this.element).getPropertyValue("--row"));
      const changed = height > 0 && height !== this.rowHeight;
      this.rowHeight = height > 0 ? height : 30;
      if (changed) {
        for (const [index, row] of this.rows) row.style.top = index * this.rowHeight + "px";
        this.spacer.style.height = this.count * this.rowHeight + "px";
      }
    }

    setCount(count) {
      this.count = count;
      this.spacer.style.height = count * this.rowHeight + "px";
      this.schedule();
    }

    schedule() {
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
    }

    draw() {
      const top = this.element.scrollTop;
      const height = this.element.clientHeight || 600;
      const first = Math.max(0, Math.floor(top / this.rowHeight) - 6);
      const last = Math.min(this.count, Math.ceil((top + height) / this.rowHeight) + 6);
      for (const [index, row] of this.rows) {
        if (index < first || index >= last) {
          row.remove();
          this.rows.delete(index);
          this.pool.push(row);
        }
      }
      for (let index = first; index < last; index++) {
        let row = this.rows.get(index);
        if (!row) {
          row = this.pool.pop() || h("div", { role: "option" });
          row.dataset.index = String(index);
          row.style.top = index * this.rowHeight + "px";
          this.element.append(row);
          this.rows.set(index, row);
        }
        row.replaceChildren();
        this.render(index, row);
      }
      if (this.onRange) this.onRange(first, last);
    }

    /** Scrolls just enough to show row `index`. */
    reveal(index) {
      const top = index * this.rowHeight;
      const element = this.element;
      if (top < element.scrollTop) element.scrollTop = top;
      else if (top + this.rowHeight > element.scrollTop + element.clientHeight) {
        element.scrollTop = top + this.rowHeight - element.clientHeight;
      }
      this.schedule();
    }
  }

  // MARK: - The list of sessions

  const sessions = {
    byID: new Map(),
    order: [],
    filter: "",
    cursor: undefined,
    loading: false,
    fresh: new Map(),
    stream: null,
  };

  const sessionList = new VirtualList($("sessions-list"), {
    render(index, row) {
      const summary = sessions.byID.get(sessions.order[index]);
      if (!summary) return;
      const isFresh = (sessions.fresh.get(summary.id) || 0) > Date.now();
      row.className = "vrow session-row sessions-cols" + (summary.id === view.id ? " selected" : "");
      row.dataset.id = summary.id;
      row.append(
        h("span", { class: "mono" + (summary.state === "ended" ? " ended" : ""), title: summary.id }, summary.id),
        h("span", { class: isFresh ? "fresh" : "" }, summary.version),
        h("span", {}, summary.depth ?? "…"),
        h("span", { class: "muted", title: summary.updatedAt }, ago(summary.updatedAt)),
      );
    },
    onClick(index) {
      const id = sessions.order[index];
      if (id) openSession(id);
    },
    onRange(first, last) {
      if (last >= sessions.order.length - 20 && sessions.cursor && !sessions.loading) loadSessions();
    },
  });

  function resortSessions() {
    const filter = sessions.filter.toLowerCase();
    sessions.order = [...sessions.byID.values()]
      .filter((summary) => !filter || summary.id.toLowerCase().includes(filter))
      .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.id < b.id ? -1 : 1))
      .map((summary) => summary.id);
    $("sessions-count").textContent = String(sessions.byID.size);
    $("sessions-empty").hidden = sessions.byID.size > 0;
    sessionList.setCount(sessions.order.length);
    sessionList.schedule();
  }

  let resortFrame = 0;
  function scheduleResort() {
    if (resortFrame) return;
    resortFrame = requestAnimationFrame(() => {
      resortFrame = 0;
      resortSessions();
    });
  }

  async function loadSessions(restart = false) {
    if (auth.kind !== "admin") return;
    if (restart) sessions.cursor = undefined;
    sessions.loading = true;
    try {
      const query = "?limit=1000" + (sessions.cursor ? "&cursor=" + encodeURIComponent(sessions.cursor) : "");
      const page = await api("/v1/sessions" + query);
      for (const summary of page.sessions) sessions.byID.set(summary.id, summary);
      sessions.cursor = page.nextCursor || undefined;
      scheduleResort();
    } catch (error) {
      setStatus("error", error.message);
    } finally {
      sessions.loading = false;
    }
  }

  /** Keeps a session's line up to date from one of its events. */
  function noteEvent(id, event) {
    let summary = sessions.byID.get(id);
    if (!summary) {
      summary = { id, version: event.seq, state: "active", depth: event.type === "session.created" ? 1 : null, updatedAt: event.at };
      sessions.byID.set(id, summary);
      // An imported or forked session shows up with its last copied event: ask for its depth.
      if (summary.depth === null) {
        api(sessionPath(id), { session: id })
          .then((session) => {
            summary.depth = session.screens.length;
            sessionList.schedule();
          })
          .catch(() => {});
      }
    } else if (event.seq > summary.version) {
      summary.version = event.seq;
      summary.updatedAt = event.at;
      if (summary.depth !== null) summary.depth = mainDepthAfter(summary.depth, event);
    }
    if (event.type === "session.ended") summary.state = "ended";
    sessions.fresh.set(id, Date.now() + 3000);
    scheduleResort();
  }

  /** The main stack's depth after `event` (the list's `depth` is the main stack's). */
  function mainDepthAfter(depth, event) {
    const onMain = event.stack === "main";
    switch (event.type) {
      case "screen.pushed":
        return depth + 1;
      case "screens.popped":
        return depth - event.screens.length;
      case "path.replaced":
        return 1 + event.pushed.length;
      case "stack.screens.popped":
        return onMain ? depth - event.screens.length : depth;
      case "stack.path.replaced":
        return onMain ? 1 + event.pushed.length : depth;
      case "screens.replaced":
        return onMain ? depth - event.popped.length + event.pushed.length : depth;
      case "screen.returned":
        return onMain ? depth - event.popped.length : depth;
      case "batch.applied":
        return (event.events || []).reduce(mainDepthAfter, depth);
      default:
        return depth;
    }
  }

  function watchEverySession() {
    if (sessions.stream) sessions.stream.close();
    let wasLive = false;
    sessions.stream = new LiveStream({
      ticketFor: { all: true },
      url: () => "/v1/events",
      onEvent(type, event) {
        if (event.session) noteEvent(event.session, event);
      },
      onState(state, message) {
        streamStates.every = state;
        showStreamState(message);
        // The stream of every session has no resume: after a gap, read the list again.
        if (state === "live" && wasLive) loadSessions(true);
        if (state === "live") wasLive = true;
      },
    });
  }

  // MARK: - One session

  const view = {
    id: null,
    /** The newest version known (from the stream). */
    version: 0,
    /** The revision shown, and the session as it was then. */
    shown: 0,
    session: null,
    /** The change from shown − 1 to shown (a JSON Patch) and the event at shown. */
    patch: [],
    event: null,
    live: true,
    selectedID: null,
    events: new Map(),
    pagesLoading: new Set(),
    replays: new Map(),
    names: new Map(),
    stream: null,
    request: null,
    playing: false,
    generation: 0,
  };

  const streamStates = { every: null, session: null };

  function showStreamState(message) {
    const states = Object.values(streamStates).filter(Boolean);
    if (states.includes("error")) setStatus("error", message || "stream failed; retrying");
    else if (states.includes("connecting")) setStatus("connecting", "connecting…");
    else if (states.length) setStatus("live", "live");
  }

  const stackList = new VirtualList($("stack-list"), {
    render(index, row) {
      const screen = currentScreens()[index];
      if (!screen) return;
      const walk = walkStates();
      const state = walk.get(screen.id);
      row.className =
        "vrow stack-row" +
        (screen.id === view.selectedID ? " selected" : "") +
        (changedScreens().has(index) ? " changed" : "") +
        (state === "received" ? " walk-received" : state === "stopped" ? " walk-stopped" : "");
      row.dataset.id = screen.id;
      row.dataset.name = screen.name;
      const handlers = Object.entries(screen.handlers || {});
      row.append(
        h("span", { class: "index" }, index),
        h("span", { class: "name" }, h("b", {}, screen.name || "(unnamed)"), h("span", { class: "mono" }, shortID(screen.id))),
        h("span", { class: "muted" }, Object.keys(screen.values || {}).length),
        h(
          "span",
          { class: "handlers", title: handlers.map(([key, handler]) => `${key}: ${handler.passBack ? "passes back" : "stops"}`).join(", ") },
          handlers.length
            ? handlers.map(([key, handler]) =>
                h("span", { class: handler.passBack ? "pass" : "stop" }, (handler.passBack ? "\u21A9 " : "\u00D7 ") + key + " "),
              )
            : h("span", { class: "muted" }, "\u2013"),
        ),
      );
    },
    onClick(index) {
      const screen = currentScreens()[index];
      if (!screen) return;
      view.selectedID = screen.id;
      stackList.schedule();
      renderDetail();
    },
  });

  const eventList = new VirtualList($("events-list"), {
    render(index, row) {
      const seq = index + 1;
      const event = view.events.get(seq);
      row.className =
        "vrow event-row" + (seq === view.shown ? " selected" : "") + (seq > view.shown ? " future" : "") + (event ? "" : " pending");
      row.dataset.seq = String(seq);
      row.title = event ? `#${seq} ${event.type} ${summarize(event)}` : "";
      row.append(
        h("span", { class: "seq" }, "#" + seq),
        event
          ? h("span", { class: "what" }, h("span", { class: "type " + event.type.replaceAll(".", "-") }, event.type), summarize(event))
          : h("span", { class: "what" }, "…"),
        h("span", { class: "time" }, event ? clock(event.at) : ""),
      );
    },
    onClick(index) {
      stopPlaying();
      goTo(index + 1);
      if (isNarrow()) showPanel("session");
    },
    onRange(first, last) {
      if (view.id) loadEvents(first + 1, last);
    },
  });

  function nameOf(id) {
    const name = view.names.get(id);
    return name !== undefined ? `${name || "(unnamed)"}` : shortID(id);
  }

  function learnNames(event) {
    const screens = [event.root, typeof event.screen === "object" ? event.screen : null, ...(event.pushed || [])];
    if (event.stack && typeof event.stack === "object") screens.push(...(event.stack.screens || []));
    for (const screen of screens) if (screen && screen.id) view.names.set(screen.id, screen.name);
    for (const step of event.events || []) learnNames(step);
  }

  /** A stack's name as the log shows it: `main`, a tab's name, a presentation's short id. */
  function stackName(id) {
    return String(id).startsWith("p_") ? shortID(id) : id;
  }

  function screenNames(ids) {
    return ids.length ? ids.map(nameOf).join(", ") : "nothing";
  }

  function dismissedNote(event) {
    return event.dismissed && event.dismissed.length ? ` · dismissed ${event.dismissed.map(stackName).join(", ")}` : "";
  }

  function summarize(event) {
    switch (event.type) {
      case "session.created":
        return `root ${event.root ? event.root.name : ""}`;
      case "screen.pushed":
        return `${event.screen.name} (${shortID(event.screen.id)})`;
      case "screens.popped":
        return event.screens.length ? event.screens.map(nameOf).join(", ") : "nothing";
      case "path.replaced":
        return `−${event.popped.length} +${event.pushed.map((screen) => screen.name).join(", ")}`;
      case "values.updated": {
        const set = Object.entries(event.set || {}).map(([key, value]) => `${key}=${short(value, 24)}`);
        const removed = (event.removed || []).map((key) => `−${key}`);
        return `${nameOf(event.screen)}: ${[...set, ...removed].join(" ") || "nothing"}`;
      }
      case "handler.set":
        return `${nameOf(event.screen)} ${event.key} ${event.passBack ? "passes back" : "stops"}`;
      case "handler.removed":
        return `${nameOf(event.screen)} ${event.key}`;
      case "preference.published":
        return `${event.key}=${short(event.value, 24)} from ${nameOf(event.screen)} → ${event.deliveries.length} ${
          event.stoppedAt ? "· stopped at " + nameOf(event.stoppedAt) : "· past the root"
        }`;
      case "session.ended":
        return "";
      case "stack.created":
        return `tab ${event.stack.id}, root ${event.stack.screens.length ? event.stack.screens[0].name : ""}`;
      case "stack.selected":
        return stackName(event.stack);
      case "stack.removed":
        return `${stackName(event.stack)}: ${screenNames(event.screens)}${dismissedNote(event)} · ${stackName(event.selected)} selected`;
      case "stack.moved":
        return `${stackName(event.stack)} to tab position ${event.position}`;
      case "stack.presented":
        return `${event.stack.kind} ${stackName(event.stack.id)} from ${nameOf(event.stack.presenter)}, root ${
          event.stack.screens.length ? event.stack.screens[0].name : ""
        }`;
      case "stack.dismissed":
        return `${stackName(event.stack)}: ${screenNames(event.screens)}${dismissedNote(event)}`;
      case "stack.screen.pushed":
        return `${event.screen.name} (${shortID(event.screen.id)}) onto ${stackName(event.stack)}`;
      case "stack.screens.popped":
        return `${stackName(event.stack)}: ${screenNames(event.screens)}${dismissedNote(event)}`;
      case "stack.path.replaced":
        return `${stackName(event.stack)}: −${event.popped.length} +${event.pushed.map((screen) => screen.name).join(", ")}${dismissedNote(event)}`;
      case "screens.replaced":
        return `above ${nameOf(event.screen)}: −${event.popped.length} +${event.pushed.map((screen) => screen.name).join(", ")}${dismissedNote(event)}`;
      case "screen.returned":
        return `${event.key}=${short(event.value, 24)} from ${nameOf(event.screen)} → ${event.deliveries.length}, then −${
          event.popped.length
        } from ${stackName(event.stack)}${dismissedNote(event)}`;
      case "batch.applied":
        return `${(event.events || []).length} steps: ${(event.events || []).map((step) => step.type).join(", ")}`;
      default:
        return "";
    }
  }

  // MARK: - Stacks

  /** Every stack of a session shown: the main one first, then the tabs, then the presentations. */
  function stacksOf(session) {
    if (!session) return [];
    return [{ id: "main", kind: "main", presenter: null, screens: session.screens }, ...(session.stacks || [])];
  }

  function stackOfScreen(session, id) {
    return stacksOf(session).find((stack) => stack.screens.some((screen) => screen.id === id)) || null;
  }

  /** The stack shown in the stack list: the selected screen's. */
  function viewedStack() {
    return stackOfScreen(view.session, view.selectedID) || stacksOf(view.session)[0] || null;
  }

  function currentScreens() {
    const stack = viewedStack();
    return stack ? stack.screens : [];
  }

  /** The screens a value or a walk passes through from the top of `stack` down: its own screens
   * above those of its presenter's stack up to the presenter, and so on (docs/Stacks.md §2, §3). */
  function chainOf(session, stack, depth = 0) {
    if (!stack) return [];
    if (!stack.presenter || depth > 64) return stack.screens.slice();
    const parent = stackOfScreen(session, stack.presenter);
    if (!parent) return stack.screens.slice();
    const below = chainOf(session, parent, depth + 1);
    return below.slice(0, below.findIndex((screen) => screen.id === stack.presenter) + 1).concat(stack.screens);
  }

  /** The stacks as a tree: the main stack and the tabs, each followed by what its screens present. */
  function stackTree(session) {
    const all = stacksOf(session);
    const rows = [];
    const visit = (stack, depth) => {
      rows.push({ stack, depth });
      for (const screen of stack.screens) {
        for (const child of all) if (child.presenter === screen.id) visit(child, depth + 1);
      }
    };
    for (const stack of all) if (!stack.presenter) visit(stack, 0);
    return rows;
  }

  function renderStackPicker() {
    const picker = $("stack-picker");
    const session = view.session;
    const rows = stackTree(session);
    picker.hidden = rows.length <= 1;
    picker.replaceChildren();
    if (rows.length <= 1) return;
    const viewed = viewedStack();
    const visible = stackOfScreen(session, session.visibleScreen);
    for (const { stack, depth } of rows) {
      const label =
        stack.kind === "main" || stack.kind === "tab"
          ? stack.id
          : `from ${nameOf(stack.presenter)} · ${shortID(stack.id)}`;
      const button = h(
        "button",
        {
          type: "button",
          class: "stack-node" + (viewed && viewed.id === stack.id ? " viewed" : ""),
          dataset: { stack: stack.id, kind: stack.kind, depth: String(depth) },
          "aria-pressed": String(Boolean(viewed && viewed.id === stack.id)),
          title: `${stack.kind} ${stack.id}: ${stack.screens.length} screen(s)`,
        },
        h("span", { class: "kind " + stack.kind }, stack.kind === "fullScreenCover" ? "cover" : stack.kind),
        h("span", { class: "label" }, label),
        h("span", { class: "muted" }, stack.screens.length),
        session.selectedStack === stack.id ? h("span", { class: "chip" }, "selected") : null,
        visible && visible.id === stack.id ? h("span", { class: "chip own" }, "visible") : null,
      );
      // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
      button.style.setProperty("--depth", String(depth));
      button.addEventListener("click", () => {
        const top = stack.screens[stack.screens.length - 1];
        if (!top) return;
        view.selectedID = top.id;
        render();
      });
      picker.append(button);
    }
  }

  /** Fetches the history pages that hold events `from`…`to` (1-based). */
  function loadEvents(from, to) {
    const id = view.id;
    const generation = view.generation;
    for (let page = Math.floor((from - 1) / HISTORY_PAGE); page * HISTORY_PAGE < to; page++) {
      const after = page * HISTORY_PAGE;
      if (view.pagesLoading.has(page) || view.events.has(after + 1) || after >= view.version) continue;
      view.pagesLoading.add(page);
      api(`${sessionPath(id)}/history?after=${after}&limit=${HISTORY_PAGE}`, { session: id })
        .then((history) => {
          if (generation !== view.generation) return;
          for (const event of history.events) {
            learnNames(event);
            view.events.set(event.seq, event);
          }
          eventList.schedule();
          if (view.shown && view.events.has(view.shown) && !view.event) {
            view.event = view.events.get(view.shown);
            renderChange();
          }
        })
        .catch((error) => setStatus("error", error.message))
        .finally(() => view.pagesLoading.delete(page));
    }
  }

  async function eventAt(seq, signal) {
    if (view.events.has(seq)) return view.events.get(seq);
    const history = await api(`${sessionPath(view.id)}/history?after=${seq - 1}&limit=1`, { session: view.id, signal });
    for (const event of history.events) {
      learnNames(event);
      view.events.set(event.seq, event);
    }
    return view.events.get(seq) || null;
  }

  async function openSession(id) {
    stopPlaying();
    if (view.stream) view.stream.close();
    if (view.request) view.request.abort();
    Object.assign(view, {
      id,
      version: 0,
      shown: 0,
      session: null,
      patch: [],
      event: null,
      live: true,
      selectedID: null,
      events: new Map(),
      pagesLoading: new Set(),
      replays: new Map(),
      names: new Map(),
      stream: null,
      generation: view.generation + 1,
    });
    if (location.hash !== "#" + id) history.replaceState(null, "", "#" + id);
    $("session-placeholder").hidden = true;
    $("session-body").hidden = false;
    $("events-empty").hidden = true;
    sessionList.schedule();
    showPanel("session");
    const generation = view.generation;
    let session;
    try {
      session = await api(sessionPath(id), { session: id });
    } catch (error) {
      $("session-title").textContent = id;
      $("change-event").textContent = error.message;
      return;
    }
    if (generation !== view.generation) return;
    for (const stack of stacksOf(session)) for (const screen of stack.screens) view.names.set(screen.id, screen.name);
    view.version = session.version;
    view.session = session;
    view.shown = session.version;
    view.selectedID = session.visibleScreen || session.screens[session.screens.length - 1].id;
    view.replays.set(session.version, session);
    renderHeader();
    eventList.setCount(view.version);
    setLive(true);
    await show(session.version, { session });
    eventList.reveal(view.version - 1);
    watchSession(id);
  }

  function watchSession(id) {
    const generation = view.generation;
    view.stream = new LiveStream({
      ticketFor: { session: id },
      // Resume after the newest event seen, so that nothing is missed or repeated.
      url: () => `${sessionPath(id)}/events?after=${view.version}`,
      onEvent(type, event) {
        if (generation !== view.generation || !event.seq) return;
        learnNames(event);
        view.events.set(event.seq, event);
        if (auth.kind !== "admin") noteEvent(id, event);
        if (event.seq > view.version) {
          view.version = event.seq;
          eventList.setCount(view.version);
          renderHeader();
          if (view.live && !view.playing) followLatest();
        }
        eventList.schedule();
      },
      onState(state, message) {
        streamStates.session = state;
        showStreamState(message);
      },
    });
  }

  let following = false;
  async function followLatest() {
    if (following) return;
    following = true;
    try {
      while (view.live && view.shown < view.version) {
        // A failed step (the server is away) ends the catch-up; the next event starts another.
        if (!(await show(view.version))) break;
        eventList.reveal(view.version - 1);
      }
    } finally {
      following = false;
    }
  }

  /** Shows revision `seq`: the session then (replay, or the shown one with the diff applied) and
   * what changed from seq − 1 (diff). Aborts whatever was being fetched for an earlier request.
   * Returns whether it is shown. */
  async function show(seq, { session } = {}) {
    if (view.request) view.request.abort();
    const request = new AbortController();
    view.request = request;
    const { signal } = request;
    const id = view.id;
    const from = view.shown;
    try {
      let state = session || view.replays.get(seq);
      let patch;
      if (!state && view.session && from === seq - 1) {
        // One step forward: the diff is both the change to show and the way to get there.
        patch = await api(`${sessionPath(id)}/diff?from=${from}&to=${seq}`, { session: id, signal });
        try {
          state = applyPatch(view.session, patch);
        } catch {
          state = null;
        }
      }
      const [replayed, change, event] = await Promise.all([
        state ? state : api(`${sessionPath(id)}/replay?at=${seq}`, { session: id, signal }),
        patch ? patch : seq > 1 ? api(`${sessionPath(id)}/diff?from=${seq - 1}&to=${seq}`, { session: id, signal }) : [],
        eventAt(seq, signal),
      ]);
      if (signal.aborted || id !== view.id) return false;
      remember(seq, replayed);
      view.session = replayed;
      view.shown = seq;
      view.patch = change;
      view.event = event;
      for (const stack of stacksOf(replayed)) for (const screen of stack.screens) view.names.set(screen.id, screen.name);
      if (!stackOfScreen(replayed, view.selectedID)) {
        view.selectedID = replayed.visibleScreen || replayed.screens[replayed.screens.length - 1].id;
      }
      render();
      return true;
    } catch (error) {
      if (error.name !== "AbortError") $("change-event").textContent = error.message;
      return false;
    } finally {
      if (view.request === request) view.request = null;
    }
  }

  function remember(seq, session) {
    view.replays.set(seq, session);
    if (view.replays.size > 48) view.replays.delete(view.replays.keys().next().value);
  }

  let pending = null;
  /** Goes to revision `seq` (clamped), leaving live mode unless it is the latest. */
  function goTo(seq, { debounce = 0 } = {}) {
    if (!view.session) return;
    seq = Math.max(1, Math.min(view.version, Math.round(seq)));
    setLive(seq === view.version);
    $("scrubber").value = String(seq);
    $("revision-label").textContent = String(seq);
    clearTimeout(pending);
    if (debounce) pending = setTimeout(() => show(seq), debounce);
    else show(seq);
  }

  function setLive(isLive) {
    view.live = isLive;
    $("live").setAttribute("aria-pressed", String(isLive));
    if (isLive && view.shown < view.version) followLatest();
  }

  // MARK: - Playing

  function stopPlaying() {
    view.playing = false;
    $("play").textContent = "\u25B6";
    $("play").setAttribute("aria-label", "Play");
    $("play").title = "Play";
  }

  async function play() {
    if (view.playing) return stopPlaying();
    view.playing = true;
    $("play").textContent = "\u275A\u275A";
    $("play").setAttribute("aria-label", "Pause");
    $("play").title = "Pause";
    if (view.shown >= view.version) await show(1);
    setLive(false);
    const generation = view.generation;
    while (view.playing && generation === view.generation && view.shown < view.version) {
      const started = performance.now();
      if (!(await show(view.shown + 1))) break;
      eventList.reveal(view.shown - 1);
      const wait = 1000 / Number($("speed").value) - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    if (generation === view.generation && view.shown === view.version) setLive(true);
    stopPlaying();
  }

  // MARK: - JSON Patch (RFC 6902), to step forward with a diff

  function pointer(path) {
    if (path === "") return [];
    if (path[0] !== "/") throw new Error("bad pointer " + path);
    return path.slice(1).split("/").map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
  }

  function applyPatch(document, patch) {
    let root = structuredClone(document);
    const parentOf = (tokens) => {
      let node = root;
      for (const token of tokens.slice(0, -1)) {
        node = Array.isArray(node) ? node[Number(token)] : node[token];
        if (node === undefined || node === null || typeof node !== "object") throw new Error("no parent");
      }
      return node;
    };
    const read = (tokens) => tokens.reduce((node, token) => {
      if (node === undefined || node === null) throw new Error("missing");
      return Array.isArray(node) ? node[Number(token)] : node[token];
    }, root);
    for (const op of patch) {
      const tokens = pointer(op.path);
      const key = tokens[tokens.length - 1];
      if (op.op === "test") {
        if (JSON.stringify(read(tokens)) !== JSON.stringify(op.value)) throw new Error("test failed");
        continue;
      }
      if (tokens.length === 0) {
        if (op.op === "add" || op.op === "replace") root = structuredClone(op.value);
        else throw new Error("unsupported");
        continue;
      }
      const parent = parentOf(tokens);
      if (op.op === "add") {
        if (Array.isArray(parent)) parent.splice(key === "-" ? parent.length : Number(key), 0, structuredClone(op.value));
        else parent[key] = structuredClone(op.value);
      } else if (op.op === "remove") {
        if (Array.isArray(parent)) parent.splice(Number(key), 1);
        else delete parent[key];
      } else if (op.op === "replace") {
        if (Array.isArray(parent)) parent[Number(key)] = structuredClone(op.value);
        else parent[key] = structuredClone(op.value);
      } else {
        throw new Error("unsupported " + op.op);
      }
    }
    return root;
  }

  // MARK: - Drawing the session

  function render() {
    $("scrubber").max = String(Math.max(1, view.version));
    $("scrubber").value = String(view.shown);
    $("revision-label").textContent = String(view.shown);
    $("version-label").textContent = String(view.version);
    $("step-back").disabled = view.shown <= 1;
    $("step-forward").disabled = view.shown >= view.version;
    renderHeader();
    renderChange();
    renderWalk();
    renderStackPicker();
    const screens = currentScreens();
    stackList.setCount(screens.length);
    stackList.schedule();
    const selected = screens.findIndex((screen) => screen.id === view.selectedID);
    if (selected >= 0) stackList.reveal(selected);
    renderDetail();
    eventList.schedule();
  }

  function renderHeader() {
    const session = view.session;
    $("session-title").textContent = view.id;
    $("events-count").textContent = String(view.version);
    $("version-label").textContent = String(view.version);
    $("scrubber").max = String(Math.max(1, view.version));
    if (!session) return;
    $("session-state").textContent = session.state;
    $("session-state").className = "badge" + (session.state === "ended" ? " ended" : "");
    const origin = $("session-origin");
    if (session.origin) {
      origin.hidden = false;
      origin.textContent = `forked from ${shortID(session.origin.session)} at rev ${session.origin.version}`;
      origin.href = "#" + session.origin.session;
      origin.dataset.session = session.origin.session;
    } else {
      origin.hidden = true;
    }
    $("fork-button").textContent = `Fork at rev ${view.shown || view.version}`;
  }

  /** Indices of screens the shown change touched. */
  let changedCache = { patch: null, stack: null, set: new Set() };
  function changedScreens() {
    const stack = viewedStack();
    const position = stack && view.session ? (view.session.stacks || []).indexOf(stack) : -1;
    const prefix = position >= 0 ? `/stacks/${position}/screens/` : "/screens/";
    if (changedCache.patch === view.patch && changedCache.stack === prefix) return changedCache.set;
    const set = new Set();
    for (const op of view.patch || []) {
      if (!op.path.startsWith(prefix)) continue;
      const match = /^(\d+)/.exec(op.path.slice(prefix.length));
      if (match) set.add(Number(match[1]));
    }
    changedCache = { patch: view.patch, stack: prefix, set };
    return set;
  }

  function renderChange() {
    const event = view.event;
    const line = $("change-event");
    line.replaceChildren();
    if (event) {
      line.append(
        h("span", { class: "muted" }, `#${event.seq} · ${clock(event.at)} · `),
        h("span", { class: "type " + event.type.replaceAll(".", "-") }, event.type),
        " ",
        summarize(event),
      );
    }
    const ops = $("change-ops");
    ops.replaceChildren();
    const changes = (view.patch || []).filter((op) => op.op !== "test");
    for (const op of changes.slice(0, 200)) {
      ops.append(
        h(
          "li",
          {},
          h("span", { class: "op " + op.op }, op.op),
          h("span", {}, op.path),
          op.value !== undefined ? h("span", {}, " " + short(op.value, 120)) : null,
        ),
      );
    }
    if (changes.length > 200) ops.append(h("li", {}, `… ${changes.length - 200} more`));
    if (view.shown === 1 && event) ops.append(h("li", {}, "the first revision: the session as created"));
  }

  /** For a shown preference.published event: each screen the walk visited, from the publisher
   * back to the root, and what happened there (docs/SEMANTICS.md §3). */
  let walkCache = { key: null, map: new Map(), steps: [] };
  function walkSteps() {
    const event = view.event;
    const session = view.session;
    const key = event && session ? `${view.id}:${event.seq}:${session.version}` : null;
    if (walkCache.key === key) return walkCache.steps;
    const steps = [];
    if (event && session && (event.type === "preference.published" || event.type === "screen.returned")) {
      // The walk runs from the publisher down its chain (a presentation's root passes on to its
      // presenter). After a return the publisher is gone: start at the topmost screen still there
      // that the walk reached.
      let chain = chainOf(session, stackOfScreen(session, event.screen));
      let start = chain.findIndex((screen) => screen.id === event.screen);
      const left = start < 0 ? stacksOf(session).find((candidate) => candidate.id === event.stack) : null;
      if (left) {
        // Popped from a stack that is still there: the walk went on from its new top.
        chain = chainOf(session, left);
        start = chain.length - 1;
      } else if (start < 0) {
        const reached = [...event.deliveries.map((delivery) => delivery.screen), event.stoppedAt].filter(Boolean);
        for (const id of reached) {
          const candidate = chainOf(session, stackOfScreen(session, id));
          const at = candidate.findIndex((screen) => screen.id === id);
          if (at >= 0 && (start < 0 || candidate.length > chain.length)) {
            chain = candidate;
            start = Math.max(...reached.map((other) => candidate.findIndex((screen) => screen.id === other)));
          }
        }
      }
      const delivered = new Map(event.deliveries.map((delivery) => [delivery.screen, delivery.value]));
      let stopped = false;
      for (let index = start; index >= 0; index--) {
        const screen = chain[index];
        let state;
        if (stopped) state = "unreached";
        else if (screen.id === event.stoppedAt) {
          state = "stopped";
          stopped = true;
        } else if (delivered.has(screen.id)) state = "received";
        else if (screen.handlers && screen.handlers[event.key]) state = "remembered";
        else state = "transparent";
        steps.push({ screen, index, state, value: delivered.get(screen.id), isPublisher: screen.id === event.screen });
      }
    }
    walkCache = { key, steps, map: new Map(steps.map((step) => [step.screen.id, step.state])) };
    return steps;
  }

  function walkStates() {
    walkSteps();
    return walkCache.map;
  }

  function renderWalk() {
    const steps = walkSteps();
    const walk = $("walk");
    walk.hidden = steps.length === 0;
    if (!steps.length) return;
    const event = view.event;
    $("walk-title").textContent = `${event.key} = ${short(event.value, 40)}`;
    const list = $("walk-steps");
    list.replaceChildren();
    const words = {
      received: (step) => `received ${short(step.value, 30)}, passed on`,
      stopped: (step) => (step.value !== undefined ? `received ${short(step.value, 30)}, stopped it` : "stopped it (remembered)"),
      remembered: () => "had it already, passed on",
      transparent: () => "no handler, passed through",
      unreached: () => "not reached",
    };
    if (event.type === "screen.returned") {
      list.append(
        h(
          "li",
          { class: "walk-step", dataset: { state: "gone" } },
          h("b", {}, nameOf(event.screen)),
          h("span", { class: "muted" }, " (publisher)"),
          ` returned it, then left ${stackName(event.stack)}`,
        ),
      );
    }
    for (const step of steps) {
      list.append(
        h(
          "li",
          { class: "walk-step", dataset: { state: step.state, screen: step.screen.id } },
          h("b", {}, step.screen.name || "(unnamed)"),
          step.isPublisher ? h("span", { class: "muted" }, " (publisher)") : null,
          " ",
          words[step.state](step),
        ),
      );
    }
    if (!event.stoppedAt) list.append(h("li", { class: "walk-step", dataset: { state: "unreached" } }, "past the root"));
  }

  function table(rows, columns) {
    if (!rows.length) return h("p", { class: "none" }, "none");
    return h("table", { class: "kv" }, h("tbody", {}, rows.map((row) => columns(row))));
  }

  function renderDetail() {
    const detail = $("screen-detail");
    detail.replaceChildren();
    const session = view.session;
    if (!session) return;
    const stack = viewedStack();
    const chain = chainOf(session, stack);
    const index = chain.findIndex((screen) => screen.id === view.selectedID);
    const screen = chain[index];
    if (!screen) return;
    detail.dataset.screen = screen.id;
    detail.append(
      h("div", { class: "screen-name", id: "detail-name" }, screen.name || "(unnamed)"),
      h(
        "div",
        { class: "mono muted" },
        `${screen.id} · #${screen.index ?? index}${stack && stack.id !== "main" ? " in " + stackName(stack.id) : ""} · ${screen.role}`,
      ),
    );
    detail.append(h("h3", {}, "Own values"));
    detail.append(
      table(Object.entries(screen.values || {}).sort(), ([key, value]) =>
        h("tr", { dataset: { key } }, h("td", {}, key), h("td", { class: "value" }, short(value, 200))),
      ),
    );
    // Where each resolved value comes from, as the server explains it (?explain=1): the screen
    // whose own value it is, or the schema's default. Shown once the explanation has arrived.
    const explanation = explanationOf(screen);
    const resolved = Object.entries(screen.resolved || {}).sort();
    detail.append(h("h3", {}, "Resolved values"));
    detail.append(
      table(resolved, ([key, value]) => {
        const origin = explanation && explanation.values ? explanation.values[key] : undefined;
        if (!origin) {
          return h("tr", { dataset: { key } }, h("td", {}, key), h("td", { class: "value" }, short(value, 200)), h("td", {}, "…"));
        }
        const from = origin.source === "screen" ? screenByID(session, origin.screen) : null;
        const chip =
          origin.source !== "screen"
            ? h("span", { class: "chip" }, "default")
            : origin.screen === screen.id
              ? h("span", { class: "chip own" }, "own")
              : h(
                  "span",
                  { class: "chip", title: origin.screen },
                  `from ${from ? from.name || "(unnamed)" : origin.screen}${from ? " #" + from.index : ""}${
                    from && origin.stack !== (stack ? stack.id : "main") ? " in " + stackName(origin.stack) : ""
                  }`,
                );
        return h(
          "tr",
          { dataset: { key, source: origin.source === "screen" ? (from ? from.name : origin.screen) : "default" } },
          h("td", {}, key),
          h("td", { class: "value" }, short(value, 200)),
          h("td", { class: "source" }, chip),
        );
      }),
    );
    detail.append(h("h3", {}, "Handlers"));
    detail.append(
      table(Object.entries(screen.handlers || {}).sort(), ([key, handler]) =>
        h(
          "tr",
          { dataset: { key } },
          h("td", {}, key),
          h("td", {}, handler.passBack ? h("span", { class: "chip pass" }, "passes back") : h("span", { class: "chip stop" }, "stops")),
        ),
      ),
    );
    detail.append(h("h3", {}, "Preferences received"));
    detail.append(
      table(Object.entries(screen.preferences || {}).sort(), ([key, value]) => {
        // The walk that delivered it, as the server explains it: publisher first, each hop's decision.
        const arrival = explanation && explanation.preferences ? explanation.preferences[key] : undefined;
        let walk = null;
        if (arrival) {
          const words = arrival.hops.map((hop) => {
            const at = screenByID(session, hop.screen);
            const name = at ? at.name || "(unnamed)" : hop.screen || "?";
            const what = hop.handling === "transparent" ? "passed through" : hop.decision === "stopped" ? "stopped it" : "passed it";
            return `${name}: ${hop.handling === "remembered" ? "remembered, " : ""}${what}`;
          });
          const publisher = screenByID(session, arrival.publisher);
          walk = h(
            "span",
            { class: "chip", title: words.join(" → ") },
            `from ${publisher ? publisher.name || "(unnamed)" : arrival.publisher || "?"}${arrival.index > 0 ? ` via ${arrival.index} hop${arrival.index > 1 ? "s" : ""}` : ""}`,
          );
        } else if (arrival === null) {
          walk = h("span", { class: "chip", title: "the walk happened before the server loaded this session" }, "walk not kept");
        }
        return h(
          "tr",
          { dataset: { key, publisher: arrival ? arrival.publisher || "" : "" } },
          h("td", {}, key),
          h("td", { class: "value" }, short(value, 200)),
          h("td", { class: "walk-source" }, walk),
        );
      }),
    );
  }

  function screenByID(session, id) {
    for (const stack of stacksOf(session)) {
      const found = stack.screens.find((screen) => screen.id === id);
      if (found) return found;
    }
    return null;
  }

  // MARK: - Explanations

  /** The server's explanation of a screen at the shown revision (?explain=1): fetched once per
   * session, revision and screen, one request at a time (the newest asked for next); undefined
   * until it arrives, and the detail is drawn again then. */
  const explanations = new Map();
  let explaining = null;
  let explainNext = null;
  function explanationOf(screen) {
    const key = `${view.id}:${view.shown}:${screen.id}`;
    if (explanations.has(key)) return explanations.get(key);
    explainNext = { key, id: view.id, revision: view.shown, latest: view.shown === view.version, screen: screen.id };
    if (!explaining) explainNextOne();
    return undefined;
  }

  async function explainNextOne() {
    const next = explainNext;
    explainNext = null;
    if (!next || explanations.has(next.key)) return;
    explaining = next;
    try {
      let found;
      if (next.latest) {
        found = (await api(`${sessionPath(next.id)}/screens/${encodeURIComponent(next.screen)}?explain=1`, { session: next.id }))
          .explanation;
      } else {
        const session = await api(`${sessionPath(next.id)}/replay?at=${next.revision}&explain=1`, { session: next.id });
        const screen = screenByID(session, next.screen);
        found = screen ? screen.explanation : null;
      }
      if (explanations.size > 500) explanations.clear();
      explanations.set(next.key, found || null);
    } catch (error) {
      explanations.set(next.key, null);
    }
    explaining = null;
    if (view.session && `${view.id}:${view.shown}:${view.selectedID}` === next.key) renderDetail();
    if (explainNext) explainNextOne();
  }

  // MARK: - Export, import, fork

  async function exportSession() {
    const id = view.id;
    try {
      const response = await fetch(`${sessionPath(id)}/export`, {
        headers: { Authorization: "Bearer " + tokenFor(id) },
        cache: "no-store",
      });
      if (!response.ok) throw new Problem(response.status, await response.json().catch(() => null));
      const url = URL.createObjectURL(await response.blob());
      const link = h("a", { href: url, download: `${id}.ndjson` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (error) {
      showDialog("Export failed", h("p", {}, error.message));
    }
  }

  async function importFile(file) {
    try {
      const created = await api("/v1/sessions/import", { method: "POST", raw: await file.text(), type: "application/x-ndjson" });
      showCreated("Imported", created);
    } catch (error) {
      showDialog("Import failed", h("p", {}, error.message));
    }
  }

  async function forkSession() {
    try {
      const created = await api("/v1/sessions/fork", {
        method: "POST",
        body: { session: view.id, at: view.shown },
        session: view.id,
      });
      showCreated(`Forked at rev ${view.shown}`, created);
    } catch (error) {
      showDialog("Fork failed", h("p", {}, error.message));
    }
  }

  // MARK: - Hand-off

  /** Makes a hand-off code of the open session and shows it with a link that redeems it here. */
  async function handOff() {
    const id = view.id;
    try {
      const made = await api(`${sessionPath(id)}/handoff`, { method: "POST", body: {}, session: id });
      // The code rides in the fragment, which a browser never sends to a server.
      const link = `${location.origin}${location.pathname}#handoff=${made.code}`;
      showDialog(
        "Hand-off code",
        h(
          "div",
          {},
          h("p", {}, "Another device redeems it once to continue this session with a token of its own:"),
          h("code", { class: "token", id: "handoff-code" }, made.code),
          h("p", {}, h("a", { id: "handoff-link", href: link }, "Open it in an inspector")),
          h("p", { class: "muted", id: "handoff-expiry" }, `Until ${new Date(made.expiresAt).toLocaleTimeString()}, once.`),
        ),
      );
    } catch (error) {
      showDialog("Hand-off failed", h("p", {}, error.message));
    }
  }

  /** Redeems the code of a `#handoff=` link: this inspector then holds the new device's token. */
  async function redeemFromLink(code) {
    history.replaceState(null, "", location.pathname);
    try {
      const joined = await api("/v1/handoffs/redeem", { method: "POST", body: { code } });
      Object.assign(auth, { token: joined.token, kind: "session", tokens: { [joined.id]: joined.token } });
      saveAuth();
      $("login").hidden = true;
      startApp(joined.id);
    } catch (error) {
      $("login").hidden = false;
      $("login-error").textContent = `This hand-off link cannot be used: ${error.message}`;
      $("login-error").hidden = false;
    }
  }

  let dialogOpen = null;
  function showDialog(title, body, open) {
    $("dialog-title").textContent = title;
    $("dialog-body").replaceChildren(body);
    $("dialog-open").hidden = !open;
    dialogOpen = open || null;
    $("dialog").showModal();
  }

  function showCreated(title, created) {
    showDialog(
      title,
      h(
        "div",
        {},
        h("p", {}, "A new session: ", h("code", { id: "created-id" }, created.id)),
        h("p", { class: "muted" }, "Its token, shown only now (keep it to change the session):"),
        h("code", { class: "token" }, created.token),
      ),
      () => {
        auth.tokens[created.id] = created.token;
        saveAuth();
        if (auth.kind !== "admin") noteEvent(created.id, { seq: created.version, type: "session.created", at: created.updatedAt });
        openSession(created.id);
      },
    );
  }

  // MARK: - Sign-in

  function saveAuth() {
    storage.setItem("nv.inspector", JSON.stringify({ token: auth.token, kind: auth.kind, tokens: auth.tokens }));
  }

  async function signIn(token, session) {
    auth.token = token;
    auth.tokens = {};
    if (session) {
      await api(sessionPath(session));
      auth.kind = "session";
      auth.tokens[session] = token;
    } else {
      await api("/v1/sessions?limit=1");
      auth.kind = "admin";
    }
    saveAuth();
  }

  function signOut() {
    storage.removeItem("nv.inspector");
    location.hash = "";
    location.reload();
  }

  function startApp(initial) {
    $("login").hidden = true;
    $("app").hidden = false;
    $("who").hidden = false;
    $("who-text").textContent = auth.kind === "admin" ? "every session" : "session token";
    showPanel(initial ? "session" : "sessions");
    if (auth.kind === "admin") {
      loadSessions(true);
      watchEverySession();
    } else {
      for (const id of Object.keys(auth.tokens)) {
        api(sessionPath(id), { session: id })
          .then((session) => {
            sessions.byID.set(id, { id, version: session.version, state: session.state, depth: session.screens.length, updatedAt: session.updatedAt });
            scheduleResort();
          })
          .catch(() => {});
      }
    }
    const target = initial || (auth.kind === "session" ? Object.keys(auth.tokens)[0] : null);
    if (target) openSession(target);
    setInterval(() => sessionList.schedule(), 10000);
  }

  // MARK: - Layout

  function isNarrow() {
    return window.matchMedia("(max-width: 760px)").matches;
  }

  function showPanel(name) {
    $("app").dataset.panel = name;
    for (const tab of document.querySelectorAll(".tab")) tab.setAttribute("aria-selected", String(tab.dataset.panel === name));
    requestAnimationFrame(() => {
      for (const list of [sessionList, stackList, eventList]) {
        list.measure();
        list.schedule();
      }
    });
  }

  // MARK: - Wiring

  function wire() {
    $("login-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const token = $("token").value.trim();
      const session = $("login-session").value.trim();
      $("login-error").hidden = true;
      $("connect").disabled = true;
      try {
        await signIn(token, session);
        startApp(session || location.hash.slice(1) || null);
      } catch (error) {
        $("login-error").textContent = error.status === 401 || error.status === 403 ? `${error.message} (HTTP ${error.status})` : error.message;
        $("login-error").hidden = false;
      } finally {
        $("connect").disabled = false;
      }
    });
    $("sign-out").addEventListener("click", signOut);
    $("sessions-filter").addEventListener("input", (event) => {
      sessions.filter = event.target.value.trim();
      resortSessions();
    });
    $("scrubber").addEventListener("input", (event) => {
      stopPlaying();
      goTo(Number(event.target.value), { debounce: 60 });
    });
    $("step-back").addEventListener("click", () => {
      stopPlaying();
      goTo(view.shown - 1);
    });
    $("step-forward").addEventListener("click", () => {
      stopPlaying();
      goTo(view.shown + 1);
    });
    $("play").addEventListener("click", () => play());
    $("live").addEventListener("click", () => {
      stopPlaying();
      if (view.live) setLive(false);
      else goTo(view.version);
    });
    $("export-button").addEventListener("click", exportSession);
    $("fork-button").addEventListener("click", forkSession);
    $("handoff-button").addEventListener("click", handOff);
    $("import-file").addEventListener("change", (event) => {
      const file = event.target.files[0];
      event.target.value = "";
      if (file) importFile(file);
    });
    $("dialog-open").addEventListener("click", () => {
      $("dialog").close();
      if (dialogOpen) dialogOpen();
    });
    $("session-origin").addEventListener("click", (event) => {
      event.preventDefault();
      const origin = event.currentTarget.dataset.session;
      if (origin) openSession(origin);
    });
    for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showPanel(tab.dataset.panel));
    window.addEventListener("hashchange", () => {
      // A hand-off link followed in this tab: redeemed as the page loads.
      if (location.hash.startsWith("#handoff=")) return location.reload();
      const id = location.hash.slice(1);
      if (id && id !== view.id && auth.kind) openSession(id);
    });
    document.addEventListener("keydown", (event) => {
      if (!view.id || event.target.matches("input, select, textarea")) return;
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        stopPlaying();
        goTo(view.shown + (event.key === "ArrowLeft" ? -1 : 1));
      } else if (event.key === " ") {
        event.preventDefault();
        play();
      }
    });
  }

  wire();
  let saved = null;
  try {
    saved = JSON.parse(storage.getItem("nv.inspector") || "null");
  } catch {
    saved = null;
  }
  if (location.hash.startsWith("#handoff=")) {
    redeemFromLink(decodeURIComponent(location.hash.slice("#handoff=".length)));
  } else if (saved && saved.token) {
    Object.assign(auth, { token: saved.token, kind: saved.kind, tokens: saved.tokens || {} });
    startApp(location.hash.slice(1) || null);
  } else {
    $("login").hidden = false;
    $("token").focus();
  }
})();
