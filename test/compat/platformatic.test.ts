// Compatibility suite: platformatic through every flow of issue 4 (see flows.ts).
import { clientFlows } from "./flows.ts";
import { platformatic } from "./harness.ts";

clientFlows(platformatic);
