// The web console: a single-page app served at /ui/ from files embedded in the binary (imported as
// text, so `bun build --compile` carries them). It talks to the broker only through the public
// HTTP API, with the operator's token (kept in page memory) when --http-token is set. The files
// themselves hold no data, so they are served without the token: the page shows a login form.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import indexBundle from "./assets/index.html" with { type: "text" };
import css from "./assets/console.css" with { type: "text" };
import favicon from "./assets/favicon.svg" with { type: "text" };
import appJs from "./assets/app.js" with { type: "text" };
import domJs from "./assets/dom.js" with { type: "text" };
import apiJs from "./assets/api.js" with { type: "text" };
import clusterJs from "./assets/cluster.js" with { type: "text" };
import topicsJs from "./assets/topics.js" with { type: "text" };
import messagesJs from "./assets/messages.js" with { type: "text" };
import groupsJs from "./assets/groups.js" with { type: "text" };

// With type "text" an HTML import is the file's text; bun-types describe the default (a bundle).
const indexHtml = indexBundle as unknown as string;
const JS = "text/javascript; charset=utf-8";
const ASSETS: Record<string, { body: string; type: string }> = {
  "console.css": { body: css, type: "text/css; charset=utf-8" },
  "favicon.svg": { body: favicon, type: "image/svg+xml" },
  "app.js": { body: appJs, type: JS },
  "dom.js": { body: domJs, type: JS },
  "api.js": { body: apiJs, type: JS },
  "cluster.js": { body: clusterJs, type: JS },
  "topics.js": { body: topicsJs, type: JS },
  "messages.js": { body: messagesJs, type: JS },
  "groups.js": { body: groupsJs, type: JS },
};

/**
 * Record keys and values shown by the console are written by whoever can produce: nothing but the
 * console's own files may run, nothing is framed or sent elsewhere, and Trusted Types make every
 * HTML string sink (innerHTML and the like) throw, so data can only ever reach the page as text.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

function serve(c: Context, body: string, type: string): Response {
  return c.body(body, 200, {
    "content-type": type,
    "content-security-policy": CONSOLE_CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    // Small files: revalidate each time, so a new binary's console is picked up at once.
    "cache-control": "no-cache",
  });
}

/** Register `/` (a redirect) and `/ui/…`; registered ahead of the token check (see above). */
export function consoleRoutes(app: OpenAPIHono): void {
  app.get("/", (c) => c.redirect("/ui/", 302));
  app.get("/ui", (c) => c.redirect("/ui/", 301));
  app.get("/ui/", (c) => serve(c, indexHtml, "text/html; charset=utf-8"));
  app.get("/ui/:file", (c, next) => {
    const a = Object.hasOwn(ASSETS, c.req.param("file")) ? ASSETS[c.req.param("file")] : undefined;
    // Anything else falls through to the API's own 404.
    return a ? serve(c, a.body, a.type) : next();
  });
}
