// Compatibility suite: kafka-python through every flow of issue 4 (see flows.ts).
import { clientFlows } from "./flows.ts";
import { kafkaPython } from "./harness.ts";

clientFlows(kafkaPython);
