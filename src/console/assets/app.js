// The console's shell: the login form, the hash router and each page's lifecycle (its timers and
// streams stop when another page is shown).
import { fill, h } from "./dom.js";
import {
  api,
  basicHeader,
  clearBanner,
  errorText,
  hasToken,
  isUnauthorized,
  OMIT,
  setToken,
  setUnauthorizedHandler,
  setUser,
  showBanner,
  signedInUser,
} from "./api.js";
import { clusterPage } from "./cluster.js";
import { topicPage, topicsPage } from "./topics.js";
import { messagesPage } from "./messages.js";
import { groupPage, groupsPage } from "./groups.js";

const main = () => document.getElementById("main");
let loginShown = false;

/** Whether the broker offered user logins (HTTP Basic) in its last 401. */
let basicOffered = false;

function showLogin(reason, basic = basicOffered) {
  if (loginShown) return;
  loginShown = true;
  basicOffered = basic;
  leavePage();
  clearBanner();
  const hadLogin = hasToken();
  setToken("");
  renderWho();
  const field = (id, type, testid, autocomplete) =>
    h("input", { type, id, autocomplete, "data-testid": testid });
  const token = field("token", "password", "login-token", "off");
  const user = field("user", "text", "login-user", "username");
  const password = field("password", "password", "login-password", "current-password");
  const msg = h(
    "p",
    { class: "error", "data-testid": "login-error" },
    hadLogin && reason ? reason : "",
  );
  const submit = async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    const asUser = basic && user.value !== "";
    if (!asUser && token.value === "") {
      msg.textContent = basic ? "Give the token, or a user name and password." : "Give the token.";
      return;
    }
    const authorization = asUser
      ? basicHeader(user.value, password.value)
      : `Bearer ${token.value}`;
    try {
      // Checked before it is kept, so a refused login leaves the form as it is.
      const res = await fetch("/cluster", { credentials: OMIT, headers: { authorization } });
      if (res.status === 401) {
        msg.textContent = asUser
          ? `The broker refused user ${user.value}: the user name or password is wrong.`
          : "That token is not accepted.";
        (asUser ? password : token).value = "";
        return;
      }
    } catch (e) {
      msg.textContent = errorText(e);
      return;
    }
    if (asUser) setUser(user.value, password.value);
    else setToken(token.value);
    loginShown = false;
    renderWho();
    route();
  };
  const users = basic
    ? [
      h(
        "p",
        { class: "muted" },
        "Or sign in as a user of the broker (",
        h("code", null, "broker user add"),
        "):",
      ),
      h("label", { for: "user" }, "User "),
      user,
      " ",
      h("label", { for: "password" }, "Password "),
      password,
      " ",
    ]
    : [];
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
        basic ? ") or a user's name and password" : ")",
        ". The console keeps them in this page's memory only: reloading the page forgets them.",
      ),
      h("label", { for: "token" }, "Token "),
      token,
      " ",
      ...users,
      h("button", { type: "submit", class: "primary", "data-testid": "login-submit" }, "Sign in"),
      msg,
    ),
  );
  token.focus();
}

function renderWho() {
  fill(
    document.getElementById("who"),
    hasToken()
      ? h(
        "span",
        null,
        signedInUser()
          ? h("span", { class: "muted", "data-testid": "signed-in-as" }, `${signedInUser()} `)
          : "",
        h("button", {
          type: "button",
          class: "link",
          "data-testid": "logout",
          onclick: () => showLogin(),
        }, "Sign out"),
      )
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

setUnauthorizedHandler((e) => showLogin(e.message, e.basic));
globalThis.addEventListener("hashchange", route);
// The first call tells whether a token is needed: a 401 shows the login form instead.
api("/cluster").then(route, (e) => {
  if (!isUnauthorized(e)) route();
});
