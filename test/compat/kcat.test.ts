// Compatibility suite: kcat through every flow of issue 4 (see flows.ts).
import { clientFlows } from "./flows.ts";
import { kcat } from "./harness.ts";

clientFlows(kcat);
