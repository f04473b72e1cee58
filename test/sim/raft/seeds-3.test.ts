import { seedRange } from "./seeds.ts";

seedRange(251, 125);
