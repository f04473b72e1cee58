// drizzle-kit configuration: `npx drizzle-kit generate` writes SQL migrations for
// src/meta/schema.ts into migrations/; then `bun scripts/check-migrations.ts --write`
// refreshes src/meta/embedded-migrations.ts so the binary embeds the new file.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/meta/schema.ts",
  out: "./migrations",
});
