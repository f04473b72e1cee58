import { seedRange } from "./seeds.ts";

seedRange(376, 125);
