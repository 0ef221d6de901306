// Rule-text checks against hostile YAML (issue 15 point 3): every rule-set PUT
// must be checked within 100 ms for any input up to the size limit. Times the
// check of each shape of the hostile corpus (test/settings/hostile-yaml.ts)
// and of the shipped rule sets; reports the worst shape. Pure, so it runs
// before DynamoDB Local starts.
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText, RULE_SET_NAMES } from '../../shared/rules/defaults.js';
import { hostileCorpus } from '../settings/hostile-yaml.js';
import type { Report } from './run.js';

export const title = 'Rule-text checks (hostile YAML up to 64 KB)';

const RUNS = 7;

function timings(check: () => unknown): { median: number; max: number } {
  check(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    check();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(RUNS / 2)]!, max: ms.at(-1)! };
}

export async function run(report: Report): Promise<void> {
  const corpus = hostileCorpus();
  let worst = { name: '', median: 0, max: 0 };
  for (const { name, text } of corpus) {
    const t = timings(() => checkRuleText('health-rules', text));
    if (t.median > worst.median) worst = { name, ...t };
  }
  report(
    'rules',
    `worst check of ${corpus.length} hostile shapes (${worst.name}), median / max of ${RUNS}`,
    `${worst.median.toFixed(1)} / ${worst.max.toFixed(1)} ms (target < 100 ms)`,
  );
  const shipped = RULE_SET_NAMES.map((name) => timings(() => checkRuleText(name, defaultRuleText(name))).median);
  report('rules', 'check of a shipped rule set (slowest), median', `${Math.max(...shipped).toFixed(1)} ms`);
}
