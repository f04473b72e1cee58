// SWIM gossip membership: a pure state machine, its wire codec and parameters.
export * from "./types.ts";
export * from "./codec.ts";
export * from "./config.ts";
export { BroadcastQueue } from "./dissemination.ts";
export { SwimNode, type SwimNodeOptions } from "./node.ts";
