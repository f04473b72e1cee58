// broker user add|list|delete: the users Kafka clients (SASL PLAIN, SCRAM-SHA-256/512) and the
// HTTP API (Basic) log in as. `add` derives the SCRAM credentials here and sends only salt and
// SaltedPassword (as Kafka's kafka-configs does), so the password never crosses the network.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { UsageError } from "./client.ts";
import { type Command, intFlag, need } from "./command.ts";
import { json, out, table } from "./format.ts";
import {
  hashOf,
  isScramMechanism,
  MAX_ITERATIONS,
  MIN_ITERATIONS,
  saltedPasswordAsync,
  SCRAM_MECHANISMS,
  type ScramMechanism,
} from "../kafka/sasl/scram.ts";

interface UserView {
  name: string;
  mechanisms: { mechanism: string; iterations: number }[];
}

function mechanismsFlag(v: unknown): ScramMechanism[] {
  if (v === undefined || v === "all") return [...SCRAM_MECHANISMS];
  const list = String(v).split(",").map((s) => s.trim().toUpperCase()).filter(Boolean);
  for (const m of list) {
    if (!isScramMechanism(m)) {
      throw new UsageError(
        `--mechanism: expected SCRAM-SHA-256, SCRAM-SHA-512 or all, not ${JSON.stringify(m)}`,
      );
    }
  }
  if (list.length === 0) throw new UsageError("--mechanism: name one");
  return [...new Set(list)] as ScramMechanism[];
}

/** --password, else BROKER_USER_PASSWORD, else stdin (one line; not a terminal). */
function readPassword(values: Record<string, unknown>, env: Record<string, string | undefined>) {
  if (typeof values.password === "string") return values.password;
  if (env.BROKER_USER_PASSWORD) return env.BROKER_USER_PASSWORD;
  if (process.stdin.isTTY) {
    throw new UsageError(
      "give the password on stdin (echo ... | broker user add NAME), in BROKER_USER_PASSWORD, " +
        "or with --password",
    );
  }
  const text = readFileSync("/dev/stdin", "utf8").replace(/\r?\n$/, "");
  if (text === "" || /[\r\n]/.test(text)) {
    throw new UsageError("the password on stdin must be one non-empty line");
  }
  return text;
}

export const userCommands: Command[] = [
  {
    name: "user add",
    usage: "user add NAME [--mechanism M] [--iterations N]",
    summary: "Add a user (or set its password) for SASL and HTTP Basic logins.",
    flags: [
      "--mechanism M      SCRAM-SHA-256, SCRAM-SHA-512, or all (default all; PLAIN logins " +
      "check against either)",
      `--iterations N     PBKDF2 iterations, ${MIN_ITERATIONS}..${MAX_ITERATIONS} (default ${MIN_ITERATIONS})`,
      "--password PW      the password (visible in ps: prefer stdin or BROKER_USER_PASSWORD)",
    ],
    examples: [
      "echo 's3cret' | broker user add alice",
      "BROKER_USER_PASSWORD=s3cret broker user add alice --mechanism SCRAM-SHA-512",
    ],
    options: {
      mechanism: { type: "string" },
      iterations: { type: "string" },
      password: { type: "string" },
    },
    async run(ctx) {
      const name = need(ctx, 0, "user name", "user add");
      const mechanisms = mechanismsFlag(ctx.values.mechanism);
      const iterations = intFlag(ctx.values.iterations, "iterations") ?? MIN_ITERATIONS;
      if (iterations < MIN_ITERATIONS || iterations > MAX_ITERATIONS) {
        throw new UsageError(`--iterations must be ${MIN_ITERATIONS}..${MAX_ITERATIONS}`);
      }
      const password = readPassword(ctx.values, ctx.env);
      const credentials = [];
      for (const m of mechanisms) {
        const salt = randomBytes(24);
        const salted = await saltedPasswordAsync(hashOf(m), password, salt, iterations);
        credentials.push({
          mechanism: m,
          iterations,
          salt: salt.toString("base64"),
          salted_password: Buffer.from(salted).toString("base64"),
        });
      }
      const u = await ctx.client.call<UserView>("POST", "/users", { name, credentials });
      if (ctx.json) json(u);
      else out(`user ${u.name}: ${u.mechanisms.map((m) => m.mechanism).join(", ")}\n`);
      return 0;
    },
  },
  {
    name: "user list",
    usage: "user list",
    summary: "List users and their SCRAM mechanisms.",
    examples: ["broker user list", "broker user list --json"],
    async run(ctx) {
      const users = await ctx.client.call<UserView[]>("GET", "/users");
      if (ctx.json) {
        json(users);
        return 0;
      }
      out(table(
        ["USER", "MECHANISMS", "ITERATIONS"],
        users.map((u) => [
          u.name,
          u.mechanisms.map((m) => m.mechanism).join(","),
          u.mechanisms.map((m) => m.iterations).join(","),
        ]),
      ));
      return 0;
    },
  },
  {
    name: "user delete",
    usage: "user delete NAME [--mechanism M]",
    summary: "Delete a user (every credential, or one mechanism's).",
    flags: ["--mechanism M      only this one: SCRAM-SHA-256 or SCRAM-SHA-512"],
    examples: ["broker user delete alice", "broker user delete alice --mechanism SCRAM-SHA-256"],
    options: { mechanism: { type: "string" } },
    async run(ctx) {
      const name = need(ctx, 0, "user name", "user delete");
      const m = ctx.values.mechanism === undefined
        ? undefined
        : mechanismsFlag(ctx.values.mechanism);
      if (m !== undefined && m.length !== 1) {
        throw new UsageError("--mechanism: name one mechanism to delete");
      }
      await ctx.client.call(
        "DELETE",
        `/users/${encodeURIComponent(name)}${m ? `?mechanism=${m[0]}` : ""}`,
      );
      if (ctx.json) json({ name, deleted: m ?? "all" });
      else out(`deleted ${m ? `${m[0]} of ` : ""}user ${name}\n`);
      return 0;
    },
  },
];
