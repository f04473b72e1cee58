// A stranger's look at a broker's cluster port: what a plain-text hello gets back.
import { createConnection } from "node:net";
import { FrameKind, jsonFrame } from "../../src/cluster/transport.ts";

/**
 * The bytes a plain-text cluster hello (no token, no TLS) gets back from `addr` before the
 * connection closes (at most 8 s).
 */
export function plainHelloAnswer(addr: string): Promise<Buffer> {
  const i = addr.lastIndexOf(":");
  return new Promise((resolve) => {
    const s = createConnection({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)) });
    const got: Buffer[] = [];
    s.on("connect", () =>
      s.write(jsonFrame(FrameKind.hello, {
        nonce: "A".repeat(32),
        clusterId: null,
        nodeId: null,
        addr: null,
        session: "request",
      })));
    s.on("data", (d: Buffer) => got.push(d));
    s.on("error", () => {});
    s.on("close", () => resolve(Buffer.concat(got)));
    setTimeout(() => s.destroy(), 8000);
  });
}
