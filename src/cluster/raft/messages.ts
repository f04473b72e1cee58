// Validation of Raft messages from the network (hostile input): returns a typed message or
// undefined, never throws. The wire encoding itself belongs to the transport.
import type { ConfChange, Config, Entry, Message, Snapshot } from "./types.ts";

type Obj = Record<string, unknown>;
const MAX_ENTRIES = 10_000;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function nat(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function nodeId(v: unknown): v is number {
  return nat(v) && v <= 0x7fffffff;
}

function ids(v: unknown): number[] | undefined {
  if (!Array.isArray(v) || v.length > 1000 || !v.every(nodeId)) return undefined;
  return new Set(v).size === v.length ? [...v] : undefined;
}

function config(v: unknown): Config | undefined {
  if (!isObj(v)) return undefined;
  const voters = ids(v.voters);
  const learners = ids(v.learners);
  if (voters === undefined || learners === undefined) return undefined;
  if (voters.some((x) => learners.includes(x))) return undefined;
  return { voters, learners };
}

function change(v: unknown): ConfChange | undefined {
  if (!isObj(v) || !nodeId(v.node)) return undefined;
  if (v.op === "addLearner" || v.op === "promote" || v.op === "remove") {
    return { op: v.op, node: v.node };
  }
  return undefined;
}

export function parseEntry(v: unknown): Entry | undefined {
  if (!isObj(v) || !nat(v.index) || v.index < 1 || !nat(v.term)) return undefined;
  const { index, term } = v;
  switch (v.kind) {
    case "normal":
      return typeof v.data === "string" ? { index, term, kind: "normal", data: v.data } : undefined;
    case "noop":
      return { index, term, kind: "noop" };
    case "conf": {
      const c = change(v.change);
      return c === undefined ? undefined : { index, term, kind: "conf", change: c };
    }
    default:
      return undefined;
  }
}

function snapshot(v: unknown): Snapshot | undefined {
  if (!isObj(v) || !isObj(v.meta) || typeof v.data !== "string") return undefined;
  const m = v.meta;
  const c = config(m.config);
  if (!nat(m.index) || !nat(m.term) || c === undefined) return undefined;
  return { meta: { index: m.index, term: m.term, config: c }, data: v.data };
}

/** A well-formed Message, or undefined. */
export function parseMessage(v: unknown): Message | undefined {
  if (!isObj(v) || !nodeId(v.from) || !nodeId(v.to) || !nat(v.term)) return undefined;
  const { from, to, term } = v;
  switch (v.type) {
    case "app": {
      if (!nat(v.prevIndex) || !nat(v.prevTerm) || !nat(v.commit)) return undefined;
      if (!Array.isArray(v.entries) || v.entries.length > MAX_ENTRIES) return undefined;
      const entries: Entry[] = [];
      for (let i = 0; i < v.entries.length; i++) {
        const e = parseEntry(v.entries[i]);
        // Entries must follow prevIndex contiguously, with terms never going down.
        if (e === undefined || e.index !== v.prevIndex + 1 + i || e.term > term) return undefined;
        if (e.term < (i === 0 ? v.prevTerm : entries[i - 1].term)) return undefined;
        entries.push(e);
      }
      return {
        type: "app",
        from,
        to,
        term,
        prevIndex: v.prevIndex,
        prevTerm: v.prevTerm,
        entries,
        commit: v.commit,
      };
    }
    case "appResp":
      if (!nat(v.index) || typeof v.reject !== "boolean" || !nat(v.hint)) return undefined;
      return { type: "appResp", from, to, term, index: v.index, reject: v.reject, hint: v.hint };
    case "vote":
    case "prevote":
      if (!nat(v.lastIndex) || !nat(v.lastTerm) || typeof v.transfer !== "boolean") {
        return undefined;
      }
      return {
        type: v.type,
        from,
        to,
        term,
        lastIndex: v.lastIndex,
        lastTerm: v.lastTerm,
        transfer: v.transfer,
      };
    case "voteResp":
    case "prevoteResp":
      if (typeof v.granted !== "boolean") return undefined;
      return { type: v.type, from, to, term, granted: v.granted };
    case "hb":
      if (!nat(v.commit) || !nat(v.readSeq)) return undefined;
      return { type: "hb", from, to, term, commit: v.commit, readSeq: v.readSeq };
    case "hbResp":
      if (!nat(v.readSeq)) return undefined;
      return { type: "hbResp", from, to, term, readSeq: v.readSeq };
    case "snap": {
      const s = snapshot(v.snapshot);
      return s === undefined ? undefined : { type: "snap", from, to, term, snapshot: s };
    }
    case "timeoutNow":
      return { type: "timeoutNow", from, to, term };
    case "readReq":
      if (typeof v.ctx !== "string" || v.ctx.length > 256) return undefined;
      return { type: "readReq", from, to, term, ctx: v.ctx };
    case "readResp":
      if (typeof v.ctx !== "string" || v.ctx.length > 256 || !nat(v.index)) return undefined;
      return { type: "readResp", from, to, term, ctx: v.ctx, index: v.index };
    default:
      return undefined;
  }
}
