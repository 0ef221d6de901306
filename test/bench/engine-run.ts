// Bundled by test/bench/engine.ts with the Lambda bundling options and run by
// plain Node: the engine measured as deployed. Prints one JSON line.
import { defaultHealthRules } from '../../shared/rules/load.js';
import { scoreFleet } from '../../shared/scoring/fleet-score.js';
import { syntheticFleet } from './synthetic-fleet.js';

const now = new Date();
const rules = await defaultHealthRules();
const fleet = syntheticFleet(10_000, now).data;
scoreFleet(fleet.slice(0, 500), rules, now); // warm the JIT
const runs: number[] = [];
for (let i = 0; i < 7; i++) {
  const start = process.hrtime.bigint();
  scoreFleet(fleet, rules, now);
  runs.push(Number(process.hrtime.bigint() - start) / 1e6);
}
runs.sort((a, b) => a - b);
console.log(JSON.stringify({ best: runs[0], median: runs[3], clusters: fleet.length }));
