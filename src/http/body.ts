// Request body helpers: every body is hostile until parsed and checked.
import type { Context } from "hono";
import { badRequest } from "./errors.ts";

export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  const v = await readJson(c);
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw badRequest("the body must be a JSON object");
  }
  return v as Record<string, unknown>;
}

export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") throw badRequest("the body is empty; JSON expected");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`the body is not valid JSON: ${(e as Error).message}`);
  }
}
