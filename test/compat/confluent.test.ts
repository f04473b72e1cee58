// Compatibility suite: confluent through every flow of issue 4 (see flows.ts).
import { clientFlows } from "./flows.ts";
import { confluent } from "./harness.ts";

clientFlows(confluent);
