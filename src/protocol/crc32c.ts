// CRC-32C (Castagnoli, reflected poly 0x82F63B78, init/xorout 0xFFFFFFFF).
// Native @node-rs/crc32 when it loads (in a compiled binary it is unpacked at run time and may
// fail), otherwise a pure-JS slicing-by-8 fallback. Both produce identical results.

const POLY = 0x82f63b78;

/** 8 tables of 256 entries for slicing-by-8. */
const TABLES: Uint32Array[] = (() => {
  const t: Uint32Array[] = [];
  const t0 = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[i] = c >>> 0;
  }
  t.push(t0);
  for (let s = 1; s < 8; s++) {
    const prev = t[s - 1];
    const cur = new Uint32Array(256);
    for (let i = 0; i < 256; i++) cur[i] = ((prev[i] >>> 8) ^ t0[prev[i] & 0xff]) >>> 0;
    t.push(cur);
  }
  return t;
})();

/** Pure-JS CRC-32C; `initial` continues a previous result (same convention as the native one). */
export function crc32cJs(data: Uint8Array, initial = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
  let crc = ~initial >>> 0;
  let i = 0;
  const n = data.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const a = (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)) ^ crc;
    crc = t7[a & 0xff] ^ t6[(a >>> 8) & 0xff] ^ t5[(a >>> 16) & 0xff] ^ t4[a >>> 24] ^
      t3[data[i + 4]] ^ t2[data[i + 5]] ^ t1[data[i + 6]] ^ t0[data[i + 7]];
    i += 8;
  }
  while (i < n) crc = t0[(crc ^ data[i++]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}

type NativeFn = (input: Uint8Array, initial?: number) => number;

function loadNative(): NativeFn | null {
  try {
    // A literal require (not createRequire) so `bun build --compile` embeds the native addon;
    // the binary unpacks it at run time, and a noexec temp dir lands in the catch below.
    const mod = require("@node-rs/crc32") as { crc32c?: NativeFn };
    const fn = mod.crc32c;
    if (typeof fn !== "function") return null;
    // Self-check against the standard vector before trusting it.
    if (fn(new TextEncoder().encode("123456789")) >>> 0 !== 0xe3069283) return null;
    return fn;
  } catch {
    return null;
  }
}

const native = loadNative();

/** True when the native implementation is in use. */
export const crc32cIsNative: boolean = native !== null;

/** CRC-32C of `data`, optionally continuing from `initial`. */
export function crc32c(data: Uint8Array, initial = 0): number {
  if (native !== null) return native(data, initial) >>> 0;
  return crc32cJs(data, initial);
}
