// POST /topics/{topic}/partitions/{partition}/repair: an operator's decision on this broker's copy
// of a partition whose damaged acknowledged records were quarantined (src/core/repair.ts). Only
// "accept_loss" is a decision the broker can carry out; the answer says what else can be done.
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { acceptLoss, lossRefusal, NothingToRepairError } from "../core/repair.ts";
import { type HttpContext, on } from "./context.ts";
import { HttpError, partitionNotFound, topicNotFound } from "./errors.ts";
import { commonErrors, err, jsonOk, PartitionParams, valid, z } from "./schemas.ts";

const RepairBody = z.object({
  accept_loss: z.literal(true).openapi({
    description: "give up the quarantined records: the log continues after them at the " +
      "broker's next start, and their offsets stay a gap no record reuses",
  }),
  force: z.boolean().optional().openapi({
    description: "even though other replicas may hold the records (a follower copy, or " +
      "other in-sync replicas)",
  }),
}).strict().openapi("RepairDecision");

const RepairAnswer = z.object({
  topic: z.string(),
  partition: z.number().int(),
  node_id: z.number().int(),
  decision: z.literal("accept_loss"),
  lost_from_offset: z.number().int(),
  lost_to_offset: z.number().int().openapi({ description: "exclusive" }),
  applies: z.literal("at the next start of this broker"),
}).openapi("RepairAnswer");

export function repairRoutes(app: OpenAPIHono, { broker }: HttpContext) {
  on(
    app,
    createRoute({
      method: "post",
      path: "/topics/{topic}/partitions/{partition}/repair",
      tags: ["topics"],
      summary: "Give up the quarantined (damaged) records of this broker's copy of a partition",
      request: {
        params: PartitionParams,
        body: { required: true, content: { "application/json": { schema: RepairBody } } },
      },
      responses: {
        200: jsonOk(RepairAnswer, "recorded; applied at the broker's next start"),
        409: err("nothing is quarantined in this copy, or other replicas may hold the records"),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { topic, partition: ps } = valid(c, "param", PartitionParams);
      const body = valid(c, "json", RepairBody);
      const partition = Number(ps);
      const t = broker.meta.getTopic(topic);
      if (!t) throw topicNotFound(topic);
      const p = t.partitions.find((x) => x.partition === partition);
      if (p === undefined) throw partitionNotFound(`${topic} has no partition ${partition}`);
      if (!broker.partitions.has(topic, partition)) {
        throw new HttpError(
          409,
          40900,
          `broker ${broker.nodeId} holds no copy of ${topic}-${partition}: ask a broker of ` +
            `replicas ${p.replicas.join(", ")}`,
        );
      }
      const damage = broker.partitions.partition(topic, partition).log.damaged();
      if (damage?.state !== "quarantined") {
        throw new HttpError(
          409,
          40900,
          `broker ${broker.nodeId}'s copy of ${topic}-${partition} has no quarantined offsets`,
        );
      }
      const why = lossRefusal(
        { nodeId: broker.nodeId, leader: p.leader, replicas: p.replicas, isr: p.isr },
        body.force === true,
      );
      if (why !== undefined) throw new HttpError(409, 40900, why);
      let entry;
      try {
        entry = await acceptLoss(broker.dataDir, topic, partition);
      } catch (e) {
        if (e instanceof NothingToRepairError) throw new HttpError(409, 40900, e.message);
        throw e;
      }
      broker.log.warn("operator gave up quarantined records: applied at the next start", {
        topic,
        partition,
        fromOffset: entry.from,
        toOffset: entry.to,
        forced: body.force === true,
      });
      return c.json({
        topic,
        partition,
        node_id: broker.nodeId,
        decision: "accept_loss" as const,
        lost_from_offset: entry.from,
        lost_to_offset: entry.to,
        applies: "at the next start of this broker" as const,
      });
    },
  );
}
