// Rule-text checks against hostile YAML (issue 15 point 3): every rule-set PUT
// must be checked within 100 ms for any input up to the size limit. Times the
// check of each shape of the hostile corpus and of the YAML bombs of a PUT
// (test/settings/hostile-yaml.ts) and of the shipped rule sets; reports the
// worst shape. Also the severity patterns' glob matcher on the input that makes
// a backtracking matcher run for minutes (test/issues/grouping.test.ts checks
// its answers). Pure, so it runs before DynamoDB Local starts.
import { nameFits } from '../../shared/issues/grouping.js';
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText, RULE_SET_NAMES, type RuleSetName } from '../../shared/rules/defaults.js';
import { hostileCorpus, yamlBombs } from '../settings/hostile-yaml.js';
import type { Report } from './run.js';

export const title = 'Rule-text checks (hostile YAML up to 64 KB) and severity patterns';

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

function worstOf(cases: { name: string; text: string }[], ruleSet: RuleSetName) {
  let worst = { name: '', median: 0, max: 0 };
  for (const { name, text } of cases) {
    const t = timings(() => checkRuleText(ruleSet, text));
    if (t.median > worst.median) worst = { name, ...t };
  }
  return worst;
}

export async function run(report: Report): Promise<void> {
  const corpus = hostileCorpus();
  const worst = worstOf(corpus, 'health-rules');
  report(
    'rules',
    `worst check of ${corpus.length} hostile shapes (${worst.name}), median / max of ${RUNS}`,
    `${worst.median.toFixed(1)} / ${worst.max.toFixed(1)} ms (target < 100 ms)`,
  );
  const bombs = yamlBombs();
  const bomb = worstOf(bombs, 'issue-rules');
  report(
    'rules',
    `worst check of ${bombs.length} YAML bombs as issue rules (${bomb.name}), median / max of ${RUNS}`,
    `${bomb.median.toFixed(1)} / ${bomb.max.toFixed(1)} ms (target < 100 ms)`,
  );
  const shipped = RULE_SET_NAMES.map((name) => timings(() => checkRuleText(name, defaultRuleText(name))).median);
  report('rules', 'check of a shipped rule set (slowest), median', `${Math.max(...shipped).toFixed(1)} ms`);
  // Eight stars against 200 characters that never fit: C(200, 8) ≈ 5·10^13 paths for a backtracking matcher.
  const glob = timings(() => nameFits('*a*a*a*a*a*a*a*a*b', 'a'.repeat(200)));
  report(
    'rules',
    'severity pattern `*a*a*a*a*a*a*a*a*b` against 200 × `a` (no fit), median / max',
    `${(glob.median * 1000).toFixed(0)} / ${(glob.max * 1000).toFixed(0)} µs`,
  );
}
