// broker cluster join-token|remove-node (cluster status is in group.ts).
import { readTokenFile, TOKEN_FILE, TokenFileError } from "../cluster/auth.ts";
import { join } from "node:path";
import { CliError, UsageError } from "./client.ts";
import { type Command, need } from "./command.ts";
import { json, out } from "./format.ts";
import { type RunContext } from "./command.ts";
import { type PlanEntry, submitPlan, watchUntilDone } from "./reassign.ts";

/**
 * Before a broker leaves the quorum: the partitions that still name it. Refused while there
 * are any, unless `move`: then a reassignment onto the other live brokers moves them (only the
 * partitions that name it change), and this waits, with progress, until it is done.
 */
async function moveReplicasOff(ctx: RunContext, id: number, move: boolean): Promise<void> {
  const c = await ctx.client.call<{ brokers: { node_id: number; fenced: boolean }[] }>(
    "GET",
    "/cluster",
  );
  const others = c.brokers.filter((b) => b.node_id !== id && !b.fenced).map((b) => b.node_id);
  const g = await ctx.client.call<{
    current: { partitions: PlanEntry[] };
    proposed: { partitions: PlanEntry[] };
  }>("POST", "/reassignments/generate", {
    topics: [],
    brokers: others.length > 0 ? others : [id],
    include_internal: true,
  }).catch((e) => {
    if (!move) return undefined;
    throw e;
  });
  const hosted = g === undefined
    ? []
    : g.current.partitions.flatMap((p, i) =>
      p.replicas?.includes(id) ? [{ cur: p, next: g.proposed.partitions[i] }] : []
    );
  if (g === undefined && !move) {
    throw new CliError(
      `cannot tell whether broker ${id} holds replicas (no plan over the other live brokers); ` +
        "use --ignore-replicas to remove it anyway",
    );
  }
  if (hosted.length === 0) return;
  const names = hosted.map((h) => `${h.cur.topic}-${h.cur.partition}`);
  if (!move) {
    throw new CliError(
      `broker ${id} still holds ${hosted.length} replica(s) (${names.slice(0, 10).join(", ")}${
        names.length > 10 ? ", ..." : ""
      }): move them first with --move-replicas, or remove it anyway with --ignore-replicas`,
    );
  }
  const throttle = ctx.values.throttle === undefined ? undefined : Number(ctx.values.throttle);
  if (throttle !== undefined && !(Number.isSafeInteger(throttle) && throttle >= 0)) {
    throw new UsageError("--throttle must be bytes/s (an integer >= 0)");
  }
  const r = await submitPlan(ctx.client, hosted.map((h) => h.next), throttle);
  const bad = r.results.filter((x) => x.error_code !== 0);
  if (bad.length > 0) {
    throw new CliError(
      `could not move ${bad.length} replica(s) off broker ${id}: ` +
        bad.slice(0, 5).map((b) => `${b.topic}-${b.partition}: ${b.message}`).join("; "),
    );
  }
  if (!ctx.json) out(`Moving ${hosted.length} replica(s) off broker ${id}...\n`);
  await watchUntilDone(ctx, new Set(names));
  if (!ctx.json) out(`Broker ${id} holds no replica any more.\n`);
}

/** The NODE_ID argument of `cmd`: a broker id (a non-negative int32). */
export function nodeIdArg(ctx: RunContext, cmd: string): number {
  const raw = need(ctx, 0, "node id", cmd);
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > 2147483647) {
    throw new UsageError(`the node id must be an integer ≥ 0, not ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

export const clusterCommands: Command[] = [
  {
    name: "cluster join-token",
    usage: "cluster join-token [--data-dir DIR]",
    summary: "Print the cluster's join token, read from a member's data dir on its machine.",
    flags: [
      "--data-dir DIR   the member's data dir (default ./data)  [BROKER_DATA_DIR]",
    ],
    examples: [
      "broker cluster join-token --data-dir /var/lib/broker",
      "BROKER_JOIN_TOKEN=$(broker cluster join-token --data-dir /d/a) broker --data-dir /d/b --join 10.0.0.1:9093",
    ],
    options: { "data-dir": { type: "string" } },
    run(ctx) {
      // Read locally, never over the network: the token is the cluster port's only secret.
      const dir = (ctx.values["data-dir"] as string | undefined) ?? ctx.env.BROKER_DATA_DIR ??
        "./data";
      let token: string | undefined;
      try {
        token = readTokenFile(dir);
      } catch (e) {
        if (e instanceof TokenFileError) throw new CliError(e.message);
        throw e;
      }
      if (token === undefined) {
        throw new CliError(
          `no join token in ${join(dir, TOKEN_FILE)}: give the data dir of a cluster member ` +
            "(a broker writes its token there when it starts)",
        );
      }
      if (ctx.json) json({ join_token: token });
      else out(token + "\n");
      return Promise.resolve(0);
    },
  },
  {
    name: "cluster remove-node",
    usage:
      "cluster remove-node NODE_ID [--move-replicas [--throttle B]] [--ignore-replicas] [--force]",
    summary: "Remove a broker from the metadata quorum; refused while it holds replicas.",
    flags: [
      "--move-replicas   first move every replica off it (a reassignment onto the other live",
      "                  brokers, __consumer_offsets included), showing progress, then remove it",
      "--throttle B      with --move-replicas: bytes/s for the copy",
      "--ignore-replicas remove it although partitions still name it (a dead broker whose disk",
      "                  is gone: reassign them later)",
      "--force           remove it even while it is connected to the leader (alive)",
    ],
    examples: [
      "broker cluster remove-node 3 --move-replicas",
      "broker cluster remove-node 3 --ignore-replicas --force",
      "broker cluster remove-node 3 --server http://broker-0:8080 --json",
    ],
    options: {
      force: { type: "boolean" },
      "move-replicas": { type: "boolean" },
      "ignore-replicas": { type: "boolean" },
      throttle: { type: "string" },
    },
    async run(ctx) {
      const id = nodeIdArg(ctx, "cluster remove-node");
      if (ctx.values["ignore-replicas"] !== true) {
        await moveReplicasOff(ctx, id, ctx.values["move-replicas"] === true);
      }
      const r = await ctx.client.call<{
        node_id: number;
        removed: boolean;
        voters: number[];
        learners: number[];
      }>("DELETE", `/cluster/members/${id}${ctx.values.force ? "?force=true" : ""}`);
      if (ctx.json) {
        json(r);
        return 0;
      }
      out(
        `${
          r.removed
            ? `removed broker ${id} from the metadata quorum`
            : `broker ${id} is not a member of the metadata quorum`
        }; voters [${r.voters.join(", ")}], learners [${r.learners.join(", ")}]\n`,
      );
      return 0;
    },
  },
];
