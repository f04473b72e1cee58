// Injected at build time by scripts/build.ts (--define); falls back to package.json when run from source.
import pkg from "../package.json" with { type: "json" };

declare const BROKER_VERSION: string | undefined;

export const VERSION: string = typeof BROKER_VERSION === "string" ? BROKER_VERSION : pkg.version;
