// Bundled by test/bench/engine.ts with the Lambda bundling options and run by
// plain Node: the engine measured as deployed. Prints one JSON line: the fold of
// the fleet's rollup columns into columnar aggregates (one pass per cluster, as the
// refresh does), scoring from them (the columnar pass, building the answers from its
// columns, and both: scoreFleet given the aggregates), and fold and scoring together
// (scoreFleet given only the rollup columns), best and median of 7 each.
import { defaultHealthRules } from '../../shared/rules/load.js';
import { fleetScoresFrom, scoreColumns, scoreFleet } from '../../shared/scoring/fleet-score.js';
import { aggregateFleet, lookbackStart } from '../../shared/scoring/inputs.js';
import { syntheticFleet } from './synthetic-fleet.js';

const now = new Date();
const rules = await defaultHealthRules();
const fleet = syntheticFleet(10_000, now).columnar;
const from = lookbackStart(rules.lookback_days, now);

function measure(work: () => unknown): { best: number; median: number } {
  work(); // warm the JIT
  const runs: number[] = [];
  for (let i = 0; i < 7; i++) {
    const start = process.hrtime.bigint();
    work();
    runs.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  runs.sort((a, b) => a - b);
  return { best: runs[0]!, median: runs[3]! };
}

scoreFleet(fleet.slice(0, 500), rules, now); // warm the JIT on a small fleet first
const aggregates = aggregateFleet(fleet, from);
const fold = measure(() => aggregateFleet(fleet, from));
const pass = measure(() => scoreColumns(fleet, rules, now, aggregates));
const columns = scoreColumns(fleet, rules, now, aggregates);
const answers = measure(() => fleetScoresFrom(columns));
const score = measure(() => scoreFleet(fleet, rules, now, aggregates));
const total = measure(() => scoreFleet(fleet, rules, now));
console.log(JSON.stringify({ ...score, pass, answers, fold, total, clusters: fleet.length }));
