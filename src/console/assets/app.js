// The console's shell: the login form, the hash router and each page's lifecycle (its timers and
// streams stop when another page is shown).
import { fill, h } from "./dom.js";
import {
  api,
  clearBanner,
  errorText,
  hasToken,
  isUnauthorized,
  OMIT,
  setToken,
  setUnauthorizedHandler,
  showBanner,
} from "./api.js";
import { clusterPage } from "./cluster.js";
import { topicPage, topicsPage } from "./topics.js";
import { messagesPage } from "./messages.js";
import { groupPage, groupsPage } from "./groups.js";

const main = () => document.getElementById("main");
let loginShown = false;

function showLogin(reason) {
  if (loginShown) return;
  loginShown = true;
  leavePage();
  clearBanner();
  const hadToken = hasToken();
  setToken("");
  renderWho();
  const input = h("input", {
    type: "password",
    id: "token",
    autocomplete: "off",
    "data-testid": "login-token",
    required: true,
  });
  const msg = h(
    "p",
    { class: "error", "data-testid": "login-error" },
    hadToken && reason ? reason : "",
  );
  const submit = async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    const t = input.value;
    try {
      // Checked before it is kept, so a wrong token leaves the form as it is.
      const res = await fetch("/cluster", {
        credentials: OMIT,
        headers: { authorization: `Bearer ${t}` },
      });
      if (res.status === 401) {
        msg.textContent = "That token is not accepted.";
        return;
      }
    } catch (e) {
      msg.textContent = errorText(e);
      return;
    }
    setToken(t);
    loginShown = false;
    renderWho();
    route();
  };
  fill(
    main(),
    h(
      "form",
      { class: "login", "data-testid": "login", onsubmit: submit },
      h("h1", null, "Sign in"),
      h(
        "p",
        null,
        "This broker requires its HTTP token (",
        h("code", null, "--http-token"),
        "). The console keeps it in this page's memory only: reloading the page forgets it.",
      ),
      h("label", { for: "token" }, "Token "),
      input,
      " ",
      h("button", { type: "submit", class: "primary", "data-testid": "login-submit" }, "Sign in"),
      msg,
    ),
  );
  input.focus();
}

function renderWho() {
  fill(
    document.getElementById("who"),
    hasToken()
      ? h("button", {
        type: "button",
        class: "link",
        "data-testid": "logout",
        onclick: () => showLogin(),
      }, "Sign out")
      : "",
  );
}

/** The page being shown. */
let current = null;

function leavePage() {
  if (!current) return;
  current.abort.abort();
  for (const t of current.timers) clearInterval(t);
  current = null;
}

const ROUTES = [
  [/^(cluster)?$/, "cluster", clusterPage],
  [/^topics$/, "topics", topicsPage],
  [/^topics\/([^?]+)$/, "topics", topicPage],
  [/^messages$/, "messages", messagesPage],
  [/^groups$/, "groups", groupsPage],
  [/^groups\/([^?]+)$/, "groups", groupPage],
];

/** "#/topics/orders?x=1" -> ["topics/orders", URLSearchParams]. */
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  return q < 0
    ? [raw, new URLSearchParams()]
    : [raw.slice(0, q), new URLSearchParams(raw.slice(q + 1))];
}

/** Show the page the hash names. */
async function route() {
  if (loginShown) return;
  leavePage();
  clearBanner();
  const [path, params] = parseHash();
  let hit;
  for (const [re, nav, page] of ROUTES) {
    const m = re.exec(path);
    if (m) {
      hit = { m, nav, page };
      break;
    }
  }
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("active", a.dataset.page === hit?.nav);
  }
  const el = main();
  if (!hit) {
    fill(el, h("h1", null, "Not found"), h("p", null, "No console page here."));
    return;
  }
  const abort = new AbortController();
  const ctx = {
    main: el,
    params,
    /** The name in the path (a topic or a group), when the page has one. */
    arg: hit.nav !== "cluster" && hit.m[1] !== undefined ? decodeURIComponent(hit.m[1]) : "",
    signal: abort.signal,
    abort,
    timers: [],
    /** An API call that is cancelled when the page is left. */
    api: (p, opts = {}) => api(p, { signal: abort.signal, ...opts }),
    get alive() {
      return !abort.signal.aborted;
    },
    /** Run fn every ms while the page is shown; a failed round shows its error, the next clears it. */
    every(ms, fn) {
      let busy = false;
      const run = async () => {
        if (busy || abort.signal.aborted) return;
        busy = true;
        try {
          await fn();
          clearBanner();
        } catch (e) {
          if (!abort.signal.aborted && !isUnauthorized(e)) showBanner(errorText(e));
        } finally {
          busy = false;
        }
      };
      this.timers.push(setInterval(run, ms));
      // For a refresh button: a round now (unless one is running).
      return run;
    },
  };
  current = ctx;
  fill(el, h("p", { class: "muted" }, "Loading…"));
  try {
    await hit.page(ctx);
  } catch (e) {
    if (abort.signal.aborted || isUnauthorized(e)) return;
    fill(
      el,
      h("h1", null, "Cannot show this page"),
      h("p", { class: "error", "data-testid": "page-error" }, errorText(e)),
    );
  }
}

setUnauthorizedHandler((e) => showLogin(e.message));
globalThis.addEventListener("hashchange", route);
// The first call tells whether a token is needed: a 401 shows the login form instead.
api("/cluster").then(route, (e) => {
  if (!isUnauthorized(e)) route();
});
