// This broker's side of its session with the controller: heartbeats carrying how far it has
// applied the metadata, the answer telling it whether it is fenced (a fenced broker leads
// nothing), and the controlled shutdown that moves its leaderships away before it stops.
import type { ClusterService } from "../cluster/node.ts";
import type { PeerLink } from "../cluster/peer-link.ts";
import type { Logger } from "../log.ts";
import type { ControllerService } from "./controller-service.ts";

export class SessionClient {
  #link: PeerLink | undefined;
  #linkTo = -1;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #fenced = true;
  #shuttingDown = false;
  /** When the last heartbeat that the controller answered "unfenced" was sent. */
  #confirmedAt = -Infinity;
  readonly #unfenced = Promise.withResolvers<void>();

  constructor(
    readonly cluster: ClusterService,
    readonly controller: ControllerService,
    readonly log: Logger,
    readonly onFenced: (fenced: boolean) => void,
    readonly heartbeatMs = 250,
    readonly sessionTimeoutMs = 3000,
  ) {}

  get fenced(): boolean {
    return this.#fenced;
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

  /**
   * Whether this broker may act as a leader now: unfenced, and confirmed so by a heartbeat sent
   * less than a session timeout ago. The controller ends a session no sooner than that after the
   * heartbeat arrived, so a broker that was paused (SIGSTOP, a long stall) and may have been
   * fenced and replaced meanwhile writes nothing as a zombie until a fresh answer says it is not.
   */
  leaseValid(nowMs = performance.now()): boolean {
    // A lone broker is its own controller: no other leader can exist, whatever it stalled for.
    if (this.#alone) return !this.#fenced;
    return !this.#fenced && nowMs - this.#confirmedAt < this.sessionTimeoutMs;
  }

  #alone = false;

  async #beat(): Promise<void> {
    if (this.#stopped) return;
    const sent = performance.now();
    this.#alone = this.cluster.isController() && this.cluster.quorumSize() === 1;
    try {
      const r = await this.call("heartbeat", {
        appliedIndex: this.cluster.appliedIndex(),
        shuttingDown: this.#shuttingDown,
      }, Math.max(1000, this.heartbeatMs * 4)) as { fenced?: unknown } | null;
      const fenced = r?.fenced !== false;
      if (fenced !== this.#fenced) {
        this.#fenced = fenced;
        this.onFenced(fenced);
      }
      if (!fenced) {
        this.#confirmedAt = Math.max(this.#confirmedAt, sent);
        this.#unfenced.resolve();
      }
    } catch (e) {
      this.log.debug("heartbeat failed", { error: e instanceof Error ? e.message : String(e) });
    }
    if (!this.#stopped) this.#timer = setTimeout(() => void this.#beat(), this.heartbeatMs);
  }

  /**
   * Controlled shutdown: ask the controller to move every leadership away, until it says done
   * or `timeoutMs` passes (a lone broker or RF 1 partitions have nowhere to go).
   */
  async shutdown(timeoutMs = 5000): Promise<boolean> {
    this.#shuttingDown = true;
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
