// The reference server of the HTTP benchmark: a bare Bun.serve answering a constant (the body of
// a one-record produce answer) without reading the request. Prints its port on stdout.
const body = '{"offsets":[{"partition":0,"offset":0}]}';
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(body, { headers: { "content-type": "application/json" } }),
});
process.stdout.write(`${server.port}\n`);
// The parent kills this process; the bound is a backstop should the parent die first.
setTimeout(() => {
  server.stop(true);
  process.exit(0);
}, 15 * 60_000);
