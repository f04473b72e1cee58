// The loss campaign (loss-campaign.ts) holds on the SWIM core as it is: the mutation suite
// (scripts/mutate.ts) runs up to its first 60 seeds against planted bugs, so those must pass.
import { expect, test } from "bun:test";
import { campaign } from "./loss-campaign.ts";

const SEEDS = 80;

test(`swim at 10 % loss: ${SEEDS} seeds within the false-positive bound`, () => {
  const failures: string[] = [];
  let suspicions = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const out = campaign.runSeed(seed);
    if (out.failure !== undefined) failures.push(`seed ${seed}: ${out.failure}`);
    suspicions += out.counts.suspicions;
  }
  expect(failures).toEqual([]);
  expect(suspicions).toBeGreaterThan(0); // the loss is felt: suspicions, all refuted in time
}, 120_000);
