// Topic admin over HTTP: list, create, describe, delete, alter configs, add partitions.
import type { Hono } from "hono";
import type { Broker } from "../broker.ts";
import { badRequest } from "./errors.ts";
import { readJsonObject } from "./body.ts";

function describeTopic(broker: Broker, name: string) {
  const t = broker.meta.getTopic(name);
  if (!t) return undefined;
  return {
    name: t.name,
    topic_id: t.topicId,
    internal: t.internal,
    configs: t.configs,
    partitions: t.partitions.map((p) => {
      const open = broker.partitions.has(t.name, p.partition)
        ? broker.partitions.partition(t.name, p.partition)
        : undefined;
      return {
        partition: p.partition,
        leader: p.leader,
        leader_epoch: p.leaderEpoch,
        replicas: p.replicas,
        isr: p.isr,
        log_start_offset: open?.log.logStartOffset() ?? null,
        high_watermark: open ? broker.partitions.highWatermark(t.name, p.partition) : null,
        size_bytes: open?.log.sizeBytes() ?? null,
      };
    }),
  };
}

function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) {
    throw badRequest(`${what} must be an object of config names to values`);
  }
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== "string" && typeof val !== "number" && typeof val !== "boolean") {
      throw badRequest(`${what}.${k} must be a string or number`);
    }
    out[k] = String(val);
  }
  return out;
}

function intField(v: unknown, name: string, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v)) throw badRequest(`${name} must be an integer`);
  return v;
}

export function topicRoutes(app: Hono, broker: Broker) {
  app.get("/topics", (c) => {
    const all = c.req.query("internal") === "true";
    return c.json(
      broker.meta.listTopics().filter((t) => all || !t.internal).map((t) => ({
        name: t.name,
        partitions: t.partitions.length,
        replication_factor: t.partitions[0]?.replicas.length ?? 0,
        internal: t.internal,
      })),
    );
  });

  app.post("/topics", async (c) => {
    const body = await readJsonObject(c);
    if (typeof body.name !== "string") throw badRequest("name is required (a string)");
    const validateOnly = c.req.query("validate_only") === "true";
    await broker.partitions.createTopic(
      body.name,
      intField(body.partitions, "partitions", -1),
      intField(body.replication_factor, "replication_factor", -1),
      stringMap(body.configs, "configs"),
      validateOnly,
    );
    if (validateOnly) return c.json({ name: body.name, validated: true });
    return c.json(describeTopic(broker, body.name), 201);
  });

  app.get("/topics/:topic", (c) => {
    const d = describeTopic(broker, c.req.param("topic"));
    if (!d) {
      return c.json({ error_code: 40403, message: `topic ${c.req.param("topic")} not found` }, 404);
    }
    return c.json(d);
  });

  app.delete("/topics/:topic", async (c) => {
    await broker.partitions.deleteTopic(c.req.param("topic"));
    return c.body(null, 204);
  });

  app.get("/topics/:topic/configs", (c) => {
    const name = c.req.param("topic");
    if (!broker.meta.getTopic(name)) {
      return c.json({ error_code: 40403, message: `topic ${name} not found` }, 404);
    }
    return c.json(
      broker.meta.describeTopicConfigs(name).map((d) => ({
        name: d.name,
        value: d.value,
        source: d.source,
        is_default: d.isDefault,
      })),
    );
  });

  // Body: {"retention.ms": "3600000", "segment.ms": null} — null resets a config to its default.
  // Also accepted: {"set": {...}, "delete": [...]}.
  app.patch("/topics/:topic/configs", async (c) => {
    const name = c.req.param("topic");
    const body = await readJsonObject(c);
    let set: Record<string, string>;
    let del: string[];
    if ("set" in body || "delete" in body) {
      set = stringMap(body.set, "set");
      if (
        body.delete !== undefined &&
        (!Array.isArray(body.delete) || body.delete.some((d) => typeof d !== "string"))
      ) {
        throw badRequest("delete must be an array of config names");
      }
      del = (body.delete as string[] | undefined) ?? [];
    } else {
      del = Object.entries(body).filter(([, v]) => v === null).map(([k]) => k);
      set = stringMap(
        Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)),
        "configs",
      );
    }
    await broker.partitions.alterTopicConfigs(
      name,
      set,
      del,
      c.req.query("validate_only") === "true",
    );
    return c.json(describeTopic(broker, name));
  });

  app.post("/topics/:topic/partitions", async (c) => {
    const name = c.req.param("topic");
    const body = await readJsonObject(c);
    const count = intField(body.count, "count", NaN);
    if (Number.isNaN(count)) {
      throw badRequest("count is required: the new total number of partitions");
    }
    await broker.partitions.createPartitions(name, count, c.req.query("validate_only") === "true");
    return c.json(describeTopic(broker, name));
  });
}
