// broker cluster join-token|remove-node (cluster status is in group.ts).
import { readTokenFile, TOKEN_FILE, TokenFileError } from "../cluster/auth.ts";
import { join } from "node:path";
import { CliError } from "./client.ts";
import { type Command, need } from "./command.ts";
import { json, out } from "./format.ts";

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
    usage: "cluster remove-node NODE_ID [--force]",
    summary: "Remove a dead broker from the metadata quorum (a voter or a learner).",
    flags: [
      "--force         remove it even while it is connected to the leader (alive)",
    ],
    examples: [
      "broker cluster remove-node 3",
      "broker cluster remove-node 3 --server http://broker-0:8080 --json",
    ],
    options: { force: { type: "boolean" } },
    async run(ctx) {
      const raw = need(ctx, 0, "node id", "cluster remove-node");
      if (!/^\d{1,10}$/.test(raw) || Number(raw) > 2147483647) {
        throw new CliError(`the node id must be an integer ≥ 0, not ${JSON.stringify(raw)}`);
      }
      const id = Number(raw);
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
