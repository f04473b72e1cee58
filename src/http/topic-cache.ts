// What a produce request needs to know about its topic (id, partition count, internal), kept
// between requests: the metadata store answers it with SQL queries that cost more than the rest
// of a one-record produce. Each use checks the entry against the open partition logs, which the
// broker keeps in step with the metadata: a recreated topic has a new id, added partitions open
// new logs and a deleted topic has none, so a stale entry is never used.
import type { Broker } from "../broker.ts";

export interface TopicRoute {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: number;
}

/** Bounds the entries (topic names come from request paths). */
const MAX_ENTRIES = 10_000;

export class TopicRoutes {
  readonly #entries = new Map<string, TopicRoute>();

  constructor(readonly broker: Pick<Broker, "meta" | "partitions">) {}

  get(name: string): TopicRoute | undefined {
    const hit = this.#entries.get(name);
    if (hit !== undefined && this.#fresh(hit)) return hit;
    const t = this.broker.meta.getTopic(name);
    if (t === undefined) {
      this.#entries.delete(name);
      return undefined;
    }
    const route: TopicRoute = {
      name: t.name,
      topicId: t.topicId,
      internal: t.internal,
      partitions: t.partitions.length,
    };
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(name, route);
    return route;
  }

  /** Only when this broker holds the first and last partition (else it asks the metadata). */
  #fresh(r: TopicRoute): boolean {
    const pm = this.broker.partitions;
    const n = r.partitions;
    if (n === 0 || pm.has(r.name, n) || !pm.has(r.name, n - 1) || !pm.has(r.name, 0)) {
      return false;
    }
    return pm.partition(r.name, 0).topicId === r.topicId &&
      pm.partition(r.name, n - 1).topicId === r.topicId;
  }
}
