import { seedRange } from "./seeds.ts";

seedRange(1, 125);
