// This broker's side of its session with the controller: heartbeats carrying how far it has
// applied the metadata, the answer telling it whether it is fenced (a fenced broker leads
// nothing), and the controlled shutdown that moves its leaderships away before it stops. The
// decisions (schedule, what an answer changes, the lease) are SessionCore's (session-core.ts);
// this shell runs them over timers and the cluster transport.
import type { ClusterService } from "../cluster/node.ts";
import type { PeerLink } from "../cluster/peer-link.ts";
import type { Logger } from "../log.ts";
import type { ControllerService } from "./controller-service.ts";
import { SessionCore } from "./session-core.ts";

export class SessionClient {
  #link: PeerLink | undefined;
  #linkTo = -1;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  readonly #core: SessionCore;
  readonly #unfenced = Promise.withResolvers<void>();

  constructor(
    readonly cluster: ClusterService,
    readonly controller: ControllerService,
    readonly log: Logger,
    readonly onFenced: (fenced: boolean) => void,
    readonly heartbeatMs = 250,
    readonly sessionTimeoutMs = 3000,
  ) {
    this.#core = new SessionCore(heartbeatMs, sessionTimeoutMs);
  }

  get fenced(): boolean {
    return this.#core.fenced;
  }

  /** Resolves once the controller has unfenced this broker (or the client stops). */
  get unfenced(): Promise<void> {
    return this.#unfenced.promise;
  }

  start(): void {
    void this.#beat();
  }

  /** A call to the controller: this broker's own service when it is the controller. */
  async call(method: string, body: unknown, timeoutMs = 3000): Promise<unknown> {
    if (this.cluster.isController()) {
      const self = this.cluster.nodeId;
      // Answering its own heartbeat, a controller must first know it still is one: resumed
      // after a pause, it would otherwise confirm its own lease and write as a zombie.
      if (method === "heartbeat" && !(await this.cluster.confirmController(timeoutMs))) {
        throw new Error("no longer the controller");
      }
      const r = method === "heartbeat"
        ? await this.controller.heartbeat(self, body)
        : method === "alterPartition"
        ? await this.controller.alterPartition(self, body)
        : await this.controller.shutdown(self);
      return r.body;
    }
    const leader = this.cluster.controllerId();
    if (leader < 0) throw new Error("no controller known");
    if (this.#linkTo !== leader || this.#link === undefined) {
      this.#link?.close();
      this.#link = this.cluster.link(leader);
      this.#linkTo = leader;
      if (this.#link === undefined) throw new Error(`controller ${leader} has no known address`);
    }
    return (await this.#link.call(method, body, timeoutMs)).body;
  }

  /** Whether this broker may act as a leader now (SessionCore.leaseValid). */
  leaseValid(nowMs = performance.now()): boolean {
    return this.#core.leaseValid(nowMs);
  }

  async #beat(): Promise<void> {
    if (this.#stopped) return;
    const core = this.#core;
    const sent = performance.now();
    const alone = this.cluster.isController() && this.cluster.quorumSize() === 1;
    const body = core.onHeartbeatSent(sent, this.cluster.appliedIndex(), alone);
    try {
      const r = await this.call("heartbeat", body, core.callTimeoutMs);
      if (core.onAnswer(sent, r, performance.now())) this.onFenced(core.fenced);
      if (!core.fenced) this.#unfenced.resolve();
    } catch (e) {
      core.onFailure(performance.now());
      this.log.debug("heartbeat failed", { error: e instanceof Error ? e.message : String(e) });
    }
    if (!this.#stopped) {
      this.#timer = setTimeout(() => void this.#beat(), core.nextHeartbeatIn(performance.now()));
    }
  }

  /**
   * Controlled shutdown: ask the controller to move every leadership away, until it says done
   * or `timeoutMs` passes (a lone broker or RF 1 partitions have nowhere to go).
   */
  async shutdown(timeoutMs = 5000): Promise<boolean> {
    this.#core.beginShutdown();
    const until = performance.now() + timeoutMs;
    while (performance.now() < until && !this.#stopped) {
      try {
        const r = await this.call("shutdown", {}, 2000) as { done?: unknown } | null;
        if (r?.done === true) return true;
      } catch { /* controller moving: try again */ }
      await Bun.sleep(100);
    }
    return false;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#link?.close();
    this.#unfenced.resolve();
  }
}
