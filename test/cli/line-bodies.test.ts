// broker produce's input (line-bodies.ts): stdin cut into bodies of whole lines, through a pipe
// written in chunks of any size (also non-blocking, as another process sharing it can make it) and
// from a file; every byte once and in order, each body's line count right, the size limits kept,
// and a body left intact while the next one is read (it is still being sent then).
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MOD = join(import.meta.dir, "../../src/cli/line-bodies.ts");

/**
 * A child reading its stdin through LineBodies; it prints "len lines\n" and the body per body,
 * and "CLOBBERED" if a body changed while the next one was read.
 */
const CHILD = `
  import { LineBodies } from ${JSON.stringify(MOD)};
  import { writeSync } from "node:fs";
  const input = new LineBodies(0, 1 << 20, 50_000);
  let prev, prevCopy;
  const out = (b) => { for (let at = 0; at < b.length;) at += writeSync(1, b, at); };
  for (let b; (b = await input.next()) !== undefined;) {
    if (prev && Buffer.compare(prev, prevCopy) !== 0) out(Buffer.from("CLOBBERED\\n"));
    prev = b.bytes;
    prevCopy = Buffer.from(b.bytes);
    out(Buffer.from(b.bytes.length + " " + b.lines + "\\n"));
    out(b.bytes);
  }
`;

/** python3 sets O_NONBLOCK on the pipe before it runs the child. */
const NONBLOCK = "import os,fcntl,sys\n" +
  "fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_NONBLOCK)\n" +
  "os.execvp(sys.argv[1], sys.argv[1:])";

interface Got {
  bodies: string[];
  lines: number[];
  clobbered: boolean;
}

function parse(raw: Buffer): Got {
  const got: Got = { bodies: [], lines: [], clobbered: false };
  for (let at = 0; at < raw.length;) {
    const nl = raw.indexOf(10, at);
    const head = raw.subarray(at, nl).toString();
    if (head === "CLOBBERED") {
      got.clobbered = true;
      at = nl + 1;
      continue;
    }
    const [len, lines] = head.split(" ").map(Number);
    got.bodies.push(raw.subarray(nl + 1, nl + 1 + len).toString("latin1"));
    got.lines.push(lines);
    at = nl + 1 + len;
  }
  return got;
}

async function throughPipe(text: string, chunk: number, nonBlocking: boolean): Promise<Got> {
  const cmd = [process.execPath, "-e", CHILD];
  const p = Bun.spawn(nonBlocking ? ["python3", "-c", NONBLOCK, ...cmd] : cmd, {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = new Response(p.stdout).arrayBuffer();
  const bytes = Buffer.from(text, "latin1");
  for (let at = 0, n = 0; at < bytes.length; at += chunk, n++) {
    p.stdin.write(bytes.subarray(at, at + chunk));
    await p.stdin.flush();
    // Now and then the reader finds the pipe empty (EAGAIN when it is non-blocking).
    if (n % 64 === 0) await Bun.sleep(1);
  }
  await p.stdin.end();
  const code = await p.exited;
  if (code !== 0) throw new Error(await new Response(p.stderr).text());
  return parse(Buffer.from(await stdout));
}

function checkBodies(got: Got, text: string): void {
  expect(got.clobbered).toBe(false);
  expect(got.bodies.join("")).toBe(text);
  for (let i = 0; i < got.bodies.length; i++) {
    const b = got.bodies[i];
    const newlines = b.split("\n").length - 1;
    // Every body but the last ends at a line end; its records are its lines.
    if (i < got.bodies.length - 1) expect(b.endsWith("\n")).toBe(true);
    expect(got.lines[i]).toBe(b.endsWith("\n") || b === "" ? newlines : newlines + 1);
    expect(got.lines[i]).toBeLessThanOrEqual(50_000);
    if (got.lines[i] > 1) expect(b.length).toBeLessThanOrEqual(1 << 20);
  }
}

const LINES = Array.from({ length: 130_000 }, (_, i) => `line-${i}`);

for (const nonBlocking of [false, true]) {
  test(
    `bodies of whole lines whatever the chunking (${nonBlocking ? "non-" : ""}blocking pipe)`,
    async () => {
      const text = LINES.join("\n"); // no final newline
      // (Fewer through a non-blocking pipe: the reader polls it, which takes longer.)
      for (const chunk of nonBlocking ? [65536, text.length] : [4096, 1 << 20, text.length]) {
        const got = await throughPipe(text, chunk, nonBlocking);
        checkBodies(got, text);
        expect(got.bodies.length).toBeGreaterThanOrEqual(3);
      }
      const short = LINES.slice(0, 5_000).join("\n") + "\n";
      if (!nonBlocking) checkBodies(await throughPipe(short, 7, nonBlocking), short);
      const shorter = LINES.slice(0, 300).join("\n");
      checkBodies(await throughPipe(shorter, 1, nonBlocking), shorter);
    },
    60_000,
  );
}

test("a line longer than a body is a body of its own; at most 50 000 lines a body", async () => {
  const long = "x".repeat(3 << 20) + "\nrest\n";
  let got = await throughPipe(long, 65536, false);
  checkBodies(got, long);
  expect(got.bodies.map((b) => b.length)).toEqual([(3 << 20) + 1, 5]);
  const many = "ab\n".repeat(120_000);
  got = await throughPipe(many, 1 << 20, false);
  checkBodies(got, many);
  expect(got.lines).toEqual([50_000, 50_000, 20_000]);
  // Lines that fill a body exactly, and a body's worth of empty lines after them.
  const exact = ("y".repeat(1023) + "\n").repeat(1024) + "\n".repeat(1024);
  got = await throughPipe(exact, 1 << 16, false);
  checkBodies(got, exact);
  expect(got.lines).toEqual([1024, 1024]);
  // A line whose newline would be the body's 1 MiB + 1st byte starts the next body.
  const over = ("y".repeat(1023) + "\n").repeat(1023) + "z".repeat(1024) + "\nend\n";
  got = await throughPipe(over, 1 << 16, false);
  checkBodies(got, over);
  expect(got.lines).toEqual([1023, 2]);
  expect(await throughPipe("", 1, false)).toEqual({ bodies: [], lines: [], clobbered: false });
}, 60_000);

test("from a file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "line-bodies-"));
  try {
    const file = join(dir, "in.txt");
    const text = LINES.join("\r\n") + "\r\n";
    writeFileSync(file, text);
    const p = Bun.spawn([process.execPath, "-e", CHILD], {
      stdin: Bun.file(file),
      stdout: "pipe",
      stderr: "pipe",
    });
    const raw = Buffer.from(await new Response(p.stdout).arrayBuffer());
    expect(await p.exited).toBe(0);
    checkBodies(parse(raw), text);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
