import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Codec, compress, type CompressOptions } from "../../../src/protocol/compression/index.ts";
import { equalBytes, jsonish, randomBytes } from "./plaintext.ts";

/**
 * Our encoders' output must decode with the reference implementations. These tests REQUIRE the
 * tools: apt-get install -y gzip lz4 zstd python3-snappy python3-lz4 python3-kafka
 */
const PY = "/usr/bin/python3";
const INSTALL = "apt-get install -y gzip lz4 zstd python3-snappy python3-lz4 python3-kafka";

function run(cmd: string[], input: Uint8Array): Uint8Array {
  const r = Bun.spawnSync({ cmd, stdin: input, stdout: "pipe", stderr: "pipe" });
  if (!r.success) {
    throw new Error(
      `${cmd.join(" ")} failed (exit ${r.exitCode}): ${r.stderr.toString()}\n` +
        `missing tool? run: ${INSTALL}`,
    );
  }
  return new Uint8Array(r.stdout);
}

/**
 * Runs a python snippet once per input (`d` = compressed bytes, must set `out`), in a single
 * interpreter so the slow kafka-python import is paid once. Returns the outputs in order.
 */
function py(snippet: string, inputs: Uint8Array[]): Uint8Array[] {
  const dir = mkdtempSync(join(tmpdir(), "codec-"));
  try {
    const files = inputs.map((data, i) => {
      const f = join(dir, `in${i}`);
      writeFileSync(f, data);
      return f;
    });
    const body = snippet.split("\n").map((l) => "    " + l).join("\n");
    const code = "import sys, struct\nfor name in sys.argv[1:]:\n" +
      "    d = open(name, 'rb').read()\n" + body + "\n" +
      "    sys.stdout.buffer.write(struct.pack('>Q', len(out)) + out)\n";
    const raw = run([PY, "-c", code, ...files], new Uint8Array(0));
    const outs: Uint8Array[] = [];
    const v = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    for (let p = 0; p < raw.length;) {
      const n = Number(v.getBigUint64(p));
      outs.push(raw.subarray(p + 8, p + 8 + n));
      p += 8 + n;
    }
    return outs;
  } finally {
    rmSync(dir, { recursive: true });
  }
}

const INPUTS: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["1 byte", new Uint8Array([42])],
  ["json 200 KiB", jsonish(200 * 1024, 77)],
  ["random 70 KiB", randomBytes(70 * 1024, 78)],
];

function check(codec: number, opts: CompressOptions, decode: (c: Uint8Array) => Uint8Array) {
  for (const [name, data] of INPUTS) {
    const got = decode(compress(codec, data, opts));
    if (!equalBytes(got, data)) throw new Error(`${name}: reference decoder disagrees`);
  }
}

function checkPy(codec: number, opts: CompressOptions, snippet: string) {
  const outs = py(snippet, INPUTS.map(([, data]) => compress(codec, data, opts)));
  expect(outs.length).toBe(INPUTS.length);
  INPUTS.forEach(([name, data], i) => {
    if (!equalBytes(outs[i], data)) throw new Error(`${name}: python decoder disagrees`);
  });
}

describe("reference tools decode our output", () => {
  test("tools are installed", () => {
    for (const t of ["gzip", "lz4", "zstd"]) {
      expect(Bun.which(t), `${t} missing: ${INSTALL}`).not.toBeNull();
    }
    expect(py("import snappy, lz4.frame, kafka.codec\nout = b'ok'", [new Uint8Array(1)]))
      .toEqual([new TextEncoder().encode("ok")]);
  });

  test("gzip -d", () => check(Codec.Gzip, {}, (c) => run(["gzip", "-dc"], c)));

  test("lz4 -d, FLG 0x60 and all flags", () => {
    check(Codec.Lz4, {}, (c) => run(["lz4", "-dc", "-q"], c));
    const all = { lz4: { contentSize: true, contentChecksum: true, blockChecksum: true } };
    check(Codec.Lz4, all, (c) => run(["lz4", "-dc", "-q"], c));
  });

  test("python lz4.frame and kafka-python's lz4_decode", () => {
    checkPy(Codec.Lz4, {}, "import lz4.frame\nout = lz4.frame.decompress(d)");
    checkPy(
      Codec.Lz4,
      { lz4: { contentSize: true } },
      "import kafka.codec\nout = kafka.codec.lz4_decode(d)",
    );
  });

  test("zstd -d", () => {
    check(Codec.Zstd, {}, (c) => run(["zstd", "-dc", "-q"], c));
    check(Codec.Zstd, { zstdChecksum: true, level: 9 }, (c) => run(["zstd", "-dc", "-q"], c));
  });

  test("python-snappy reads our raw block", () => {
    checkPy(Codec.Snappy, {}, "import snappy\nout = snappy.decompress(d)");
  });

  test("kafka-python snappy_decode reads our xerial stream and raw block", () => {
    const snippet = "import kafka.codec\nout = kafka.codec.snappy_decode(d)";
    checkPy(Codec.Snappy, { xerial: true }, snippet);
    checkPy(Codec.Snappy, {}, snippet);
  });

  test("python-snappy agrees our xerial header is what kafka-python detects", () => {
    const c = compress(Codec.Snappy, jsonish(100_000, 5), { xerial: true });
    const [out] = py(
      "import kafka.codec\nout = b'1' if kafka.codec._detect_xerial_stream(d) else b'0'",
      [c],
    );
    expect(new TextDecoder().decode(out)).toBe("1");
  });
});
