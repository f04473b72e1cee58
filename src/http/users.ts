// Users of the Kafka listener (SASL) and of this API (Basic): list, show, add or change, delete.
// Only SCRAM credentials are stored (salted, iterated); a password given here is turned into
// them at once and never kept. A client may also send a credential it derived itself (salt and
// SaltedPassword, as Kafka's AlterUserScramCredentials does), so the password never travels.
import { randomBytes } from "node:crypto";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { type HttpContext, on } from "./context.ts";
import { HttpError, kafkaError, notFound } from "./errors.ts";
import { ErrorCode } from "../protocol/kafka/error-codes.ts";
import { commonErrors, err, jsonOk, valid, z } from "./schemas.ts";
import {
  isUserMechanism,
  MAX_SCRAM_ITERATIONS,
  MIN_SCRAM_ITERATIONS,
  USER_MECHANISMS,
  type UserMechanism,
  userNameProblem,
} from "../meta/index.ts";
import type { MetadataStore } from "../meta/index.ts";
import {
  credentialFromSalted,
  hashOf,
  saltedPasswordAsync,
  type ScramCredential,
} from "../kafka/sasl/scram.ts";

const Mechanism = z.enum(USER_MECHANISMS);
const Iterations = z.number().int().min(MIN_SCRAM_ITERATIONS).max(MAX_SCRAM_ITERATIONS);
const Base64 = z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be base64").max(2048);

const UserView = z.object({
  name: z.string(),
  mechanisms: z.array(z.object({ mechanism: Mechanism, iterations: z.number().int() })),
}).openapi("User");

const UserBody = z.object({
  name: z.string().min(1).max(255).openapi({ example: "alice" }),
  password: z.string().min(1).max(1024).optional().openapi({
    description: "turned into SCRAM credentials here, never stored",
  }),
  mechanisms: z.array(Mechanism).min(1).optional().openapi({
    description: "with password: which credentials to store (default both)",
  }),
  iterations: Iterations.optional().openapi({ description: "with password (default 4096)" }),
  credentials: z.array(z.object({
    mechanism: Mechanism,
    iterations: Iterations,
    salt: Base64,
    salted_password: Base64.openapi({ description: "Hi(password, salt, iterations)" }),
  })).min(1).max(2).optional().openapi({
    description: "credentials derived by the client (instead of password)",
  }),
}).openapi("UserCredentials");

const UserParams = z.object({
  user: z.string().min(1).max(255).openapi({ param: { name: "user", in: "path" } }),
});

export function userView(meta: MetadataStore, name?: string) {
  const by = new Map<string, { mechanism: UserMechanism; iterations: number }[]>();
  for (const c of meta.listScramCredentials()) {
    if (name !== undefined && c.user !== name) continue;
    by.set(c.user, [...(by.get(c.user) ?? []), {
      mechanism: c.mechanism,
      iterations: c.iterations,
    }]);
  }
  return [...by].map(([n, mechanisms]) => ({ name: n, mechanisms }));
}

/** The credentials a POST /users body asks for. */
async function credentialsOf(b: z.output<typeof UserBody>): Promise<ScramCredential[]> {
  if ((b.password === undefined) === (b.credentials === undefined)) {
    throw new HttpError(400, 40000, "give either password or credentials");
  }
  if (b.credentials !== undefined) {
    const seen = new Set<string>();
    return b.credentials.map((c) => {
      if (seen.has(c.mechanism)) {
        throw new HttpError(
          400,
          40000,
          `${c.mechanism} is given twice`,
          ErrorCode.DUPLICATE_RESOURCE,
        );
      }
      seen.add(c.mechanism);
      const salt = new Uint8Array(Buffer.from(c.salt, "base64"));
      const salted = new Uint8Array(Buffer.from(c.salted_password, "base64"));
      const want = hashOf(c.mechanism) === "sha256" ? 32 : 64;
      if (salted.length !== want || salt.length < 8) {
        throw new HttpError(
          400,
          40000,
          `salted_password must be ${want} bytes and salt at least 8 for ${c.mechanism}`,
        );
      }
      return credentialFromSalted(c.mechanism, salt, c.iterations, salted);
    });
  }
  const iterations = b.iterations ?? MIN_SCRAM_ITERATIONS;
  const out: ScramCredential[] = [];
  for (const m of new Set(b.mechanisms ?? USER_MECHANISMS)) {
    const salt = new Uint8Array(randomBytes(24));
    const salted = await saltedPasswordAsync(hashOf(m), b.password!, salt, iterations);
    out.push(credentialFromSalted(m, salt, iterations, salted));
  }
  return out;
}

export function userRoutes(app: OpenAPIHono, ctx: HttpContext): void {
  const meta = ctx.broker.meta;

  on(
    app,
    createRoute({
      method: "get",
      path: "/users",
      tags: ["users"],
      summary: "List users and their SCRAM mechanisms",
      responses: { 200: jsonOk(z.array(UserView)), ...commonErrors },
    }),
    (c) => c.json(userView(meta)),
  );

  on(
    app,
    createRoute({
      method: "get",
      path: "/users/{user}",
      tags: ["users"],
      summary: "Show a user",
      request: { params: UserParams },
      responses: { 200: jsonOk(UserView), ...commonErrors },
    }),
    (c) => {
      const name = valid(c, "param", UserParams).user;
      const [u] = userView(meta, name);
      if (u === undefined) throw notFound(`user ${JSON.stringify(name)} does not exist`, 40491);
      return c.json(u);
    },
  );

  on(
    app,
    createRoute({
      method: "post",
      path: "/users",
      tags: ["users"],
      summary: "Add a user, or change its password",
      description: "Stores SCRAM-SHA-256 and/or SCRAM-SHA-512 credentials for the user " +
        "(replacing those of the same mechanisms); SASL/PLAIN and HTTP Basic check against them.",
      request: {
        body: { required: true, content: { "application/json": { schema: UserBody } } },
      },
      responses: {
        201: jsonOk(UserView, "stored"),
        ...commonErrors,
        422: err("unacceptable name or iterations"),
      },
    }),
    async (c) => {
      const body = valid(c, "json", UserBody);
      const why = userNameProblem(body.name);
      if (why !== undefined) throw kafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, why);
      const creds = await credentialsOf(body);
      // A refusal (MetaError) becomes 404/422 through the one error table (app.onError).
      for (const cred of creds) await meta.setScramCredential(body.name, cred);
      return c.json(userView(meta, body.name)[0], 201);
    },
  );

  on(
    app,
    createRoute({
      method: "delete",
      path: "/users/{user}",
      tags: ["users"],
      summary: "Delete a user (all its credentials, or one mechanism's)",
      request: {
        params: UserParams,
        query: z.object({ mechanism: Mechanism.optional() }),
      },
      responses: { 204: { description: "deleted" }, ...commonErrors },
    }),
    async (c) => {
      const name = valid(c, "param", UserParams).user;
      const only = c.req.query("mechanism");
      const mechs = userView(meta, name)[0]?.mechanisms.map((m) => m.mechanism) ?? [];
      const gone = only !== undefined && isUserMechanism(only)
        ? mechs.filter((m) => m === only)
        : mechs;
      if (gone.length === 0) {
        throw notFound(
          `user ${JSON.stringify(name)} has no ${only ?? "SCRAM"} credential`,
          40491,
        );
      }
      for (const m of gone) await meta.deleteScramCredential(name, m);
      return c.body(null, 204);
    },
  );
}
