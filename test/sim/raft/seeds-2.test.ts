import { seedRange } from "./seeds.ts";

seedRange(126, 125);
