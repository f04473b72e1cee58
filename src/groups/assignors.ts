/**
 * Partition assignors the broker runs on behalf of a group whose leader is an HTTP member. They
 * follow the Java client's eager `range` and `roundrobin` assignors so mixed groups behave alike.
 */
import type { Subscription, TopicPartitions } from "./consumer-protocol.ts";

export interface AssignorMember {
  memberId: string;
  groupInstanceId: string | null;
  subscription: Subscription;
}

/** Partition count of a topic, or undefined when the topic does not exist. */
export type PartitionCounts = (topic: string) => number | undefined;

export type AssignmentPlan = Map<string, TopicPartitions[]>;

export interface Assignor {
  name: string;
  assign(members: readonly AssignorMember[], partitions: PartitionCounts): AssignmentPlan;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Java's MemberInfo order: static members (by instance id) first, then dynamic ones by member id. */
function memberOrder(a: AssignorMember, b: AssignorMember): number {
  if (a.groupInstanceId !== null && b.groupInstanceId !== null) {
    return cmp(a.groupInstanceId, b.groupInstanceId) || cmp(a.memberId, b.memberId);
  }
  if (a.groupInstanceId !== null) return -1;
  if (b.groupInstanceId !== null) return 1;
  return cmp(a.memberId, b.memberId);
}

/** Upper bound on partitions per topic we will enumerate (Kafka's own limit is far lower in practice). */
const MAX_PARTITIONS = 1_000_000;

function countOf(partitions: PartitionCounts, topic: string): number {
  const n = partitions(topic);
  if (n === undefined || !Number.isInteger(n) || n <= 0) return 0;
  return Math.min(n, MAX_PARTITIONS);
}

function emptyPlan(members: readonly AssignorMember[]): AssignmentPlan {
  const plan: AssignmentPlan = new Map();
  for (const m of members) plan.set(m.memberId, []);
  return plan;
}

function push(plan: AssignmentPlan, memberId: string, topic: string, partition: number): void {
  const list = plan.get(memberId)!;
  const last = list[list.length - 1];
  if (last !== undefined && last.topic === topic) last.partitions.push(partition);
  else list.push({ topic, partitions: [partition] });
}

function subscribedTopics(members: readonly AssignorMember[]): string[] {
  const all = new Set<string>();
  for (const m of members) for (const t of m.subscription.topics) all.add(t);
  return [...all].sort(cmp);
}

/** Per topic, consecutive ranges: the first (n mod c) subscribers get one partition more. */
export const rangeAssignor: Assignor = {
  name: "range",
  assign(members, partitions) {
    const plan = emptyPlan(members);
    const sorted = [...members].sort(memberOrder);
    for (const topic of subscribedTopics(members)) {
      const n = countOf(partitions, topic);
      const subs = sorted.filter((m) => m.subscription.topics.includes(topic));
      if (n === 0 || subs.length === 0) continue;
      const per = Math.floor(n / subs.length);
      const extra = n % subs.length;
      let next = 0;
      subs.forEach((m, i) => {
        const count = per + (i < extra ? 1 : 0);
        for (let k = 0; k < count; k++) push(plan, m.memberId, topic, next++);
      });
    }
    return plan;
  },
};

/** All partitions in (topic, partition) order dealt round the members, skipping non-subscribers. */
export const roundRobinAssignor: Assignor = {
  name: "roundrobin",
  assign(members, partitions) {
    const plan = emptyPlan(members);
    const sorted = [...members].sort(memberOrder);
    if (sorted.length === 0) return plan;
    let cursor = 0;
    for (const topic of subscribedTopics(members)) {
      const n = countOf(partitions, topic);
      for (let p = 0; p < n; p++) {
        // Some member subscribes to this topic (it came from a subscription), so this ends.
        for (let tries = 0; tries < sorted.length; tries++) {
          const m = sorted[cursor];
          cursor = (cursor + 1) % sorted.length;
          if (m.subscription.topics.includes(topic)) {
            push(plan, m.memberId, topic, p);
            break;
          }
        }
      }
    }
    return plan;
  },
};

/** Client protocol names mapped to the assignor that matches their semantics. */
const BY_NAME: ReadonlyMap<string, Assignor> = new Map([
  ["range", rangeAssignor],
  ["roundrobin", roundRobinAssignor],
  // kafkajs names its round-robin assignor this way; the payload format is the standard one.
  ["RoundRobinAssigner", roundRobinAssignor],
]);

export function assignorFor(protocolName: string): Assignor | undefined {
  return BY_NAME.get(protocolName);
}

/** Protocol names the broker can assign for, in its preference order (for HTTP members' joins). */
export const BROKER_ASSIGNOR_NAMES: readonly string[] = ["range", "roundrobin"];
