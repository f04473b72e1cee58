// Log lines: JSON by default, one readable line each with --log-format text.
import { describe, expect, test } from "bun:test";
import { createLogger } from "../src/log.ts";

function capture(format: "json" | "text") {
  const lines: string[] = [];
  const log = createLogger("info", { component: "kafka" }, (l) => lines.push(l), format);
  return { log, lines };
}

describe("log formats", () => {
  test("json: one object per line with every field", () => {
    const { log, lines } = capture("json");
    log.child({ node: 1 }).info("broker started", { http: "127.0.0.1:8080" });
    const rec = JSON.parse(lines[0]);
    expect(rec).toMatchObject({
      level: "info",
      msg: "broker started",
      component: "kafka",
      node: 1,
      http: "127.0.0.1:8080",
    });
  });

  test("text: time, level, message, then key=value; children keep the format", () => {
    const { log, lines } = capture("text");
    log.child({ node: 1 }).warn("disk almost full", { free: 12, dir: "/var/lib/broker" });
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN {2}disk almost full component=kafka node=1 free=12 dir=\/var\/lib\/broker\n$/,
    );
  });

  test("text: values with spaces, quotes or control characters are quoted and escaped", () => {
    const { log, lines } = capture("text");
    log.info("client\nsaid \x1b[31mhi", {
      client_id: "a b",
      evil: 'x"\x1b]0;pwned\x07',
      obj: { a: [1] },
      error: new Error("boom"),
    });
    const line = lines[0];
    expect(line.split("\n").length).toBe(2); // one line, then the newline
    expect(line).not.toContain("\x1b");
    expect(line).not.toContain("\x07");
    expect(line).toContain("client\\u000asaid \\u001b[31mhi");
    expect(line).toContain('client_id="a b"');
    expect(line).toContain('obj={"a":[1]}');
    expect(line).toContain('error={"name":"Error","message":"boom"}');
  });
});
