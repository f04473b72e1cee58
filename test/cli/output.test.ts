// broker consume's stdout (output.ts): every byte once and in order through a pipe whose reader is
// slower than the writer, also when the pipe is non-blocking (another process sharing it, or
// process.stdout touched, makes it so: writes then meet EAGAIN); a closed pipe (`| head`) ends
// the command with status 0.
import { expect, test } from "bun:test";
import { join } from "node:path";

const OUTPUT = join(import.meta.dir, "../../src/cli/output.ts");
const LINES = 120_000;

/** A child writing LINES numbered lines through Output, buffers reused between flushes. */
function writer(nonBlocking: boolean): string[] {
  const script = `
    import { Output } from ${JSON.stringify(OUTPUT)};
    ${nonBlocking ? "void process.stdout.isTTY; // makes a piped stdout non-blocking" : ""}
    const out = new Output();
    for (let i = 0; i < ${LINES}; i++) {
      out.push(String(i).padStart(79, "0") + "\\n");
      await out.maybeFlush();
    }
    await out.flush();
  `;
  return [process.execPath, "-e", script];
}

async function readSlowly(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const chunk of stream) {
    parts.push(chunk);
    // A slow reader: the writer fills the pipe and has to wait for it.
    if (++n % 8 === 0) await Bun.sleep(2);
  }
  return Buffer.concat(parts);
}

for (const nonBlocking of [false, true]) {
  test(
    `every line once, in order, to a slow reader (${nonBlocking ? "non-" : ""}blocking pipe)`,
    async () => {
      const p = Bun.spawn(writer(nonBlocking), { stdout: "pipe", stderr: "pipe" });
      const got = (await readSlowly(p.stdout)).toString("latin1");
      expect(await p.exited).toBe(0);
      const lines = got.split("\n");
      expect(lines.pop()).toBe("");
      expect(lines.length).toBe(LINES);
      for (let i = 0; i < LINES; i++) {
        if (Number(lines[i]) !== i) throw new Error(`line ${i} is ${lines[i].slice(0, 100)}`);
      }
    },
    60_000,
  );
}

test("a closed pipe ends the writer with status 0", async () => {
  const p = Bun.spawn([
    "bash",
    "-c",
    'set -o pipefail; "$@" | head -c 100 > /dev/null',
    "bash",
    ...writer(true),
  ], {
    stdout: "ignore",
    stderr: "pipe",
  });
  expect(await p.exited).toBe(0);
}, 60_000);

test("chunks set aside for a large reservation are reused once written, bytes intact", async () => {
  const { Output, setOutputFd } = await import("../../src/cli/output.ts");
  const { mkdtempSync, openSync, closeSync, readFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "output-"));
  const file = join(dir, "out");
  const fd = openSync(file, "w");
  setOutputFd(fd);
  try {
    const out = new Output();
    const want: Uint8Array[] = [];
    // Pages as broker consume prints them: a large batch reserves room for its worst case, which
    // often does not fit behind the bytes already gathered, so the chunk is set aside.
    for (let round = 0; round < 40; round++) {
      const len = round % 2 === 0 ? 940_000 : 108_000 + (round % 7);
      const buf = out.reserve(len + 120_000);
      const at = out.at;
      const piece = new Uint8Array(len).fill(round & 0xff);
      buf.set(piece, at);
      out.commit(at + len);
      want.push(piece);
      await out.maybeFlush();
    }
    await out.flush();
    expect(Buffer.compare(readFileSync(file), Buffer.concat(want))).toBe(0);
    // Besides the first chunk, at most two more: one set aside while the next one fills.
    expect(out.allocated).toBeLessThanOrEqual(2 * (2 << 20));
  } finally {
    setOutputFd(1);
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});
