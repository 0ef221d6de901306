// The default rule sets shipped with the code (rules/*.yaml): read from the
// repository when running from source, or from `rules/` beside the bundle in
// Lambda (the build copies them there; see infra/bundling.ts).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RULE_SET_NAMES = ['health-rules', 'issue-rules', 'risk-rules'] as const;
export type RuleSetName = (typeof RULE_SET_NAMES)[number];

const here = dirname(fileURLToPath(import.meta.url));
const CANDIDATES = [join(here, '..', '..', 'rules'), join(here, 'rules')];

const cache = new Map<RuleSetName, string>();

/** The shipped YAML text of a rule set, comments included. */
export function defaultRuleText(name: RuleSetName): string {
  let text = cache.get(name);
  if (text === undefined) {
    const dir = CANDIDATES.find((d) => existsSync(join(d, `${name}.yaml`)));
    if (!dir) throw new Error(`default rule set ${name}.yaml not found (looked in ${CANDIDATES.join(', ')})`);
    text = readFileSync(join(dir, `${name}.yaml`), 'utf8');
    cache.set(name, text);
  }
  return text;
}
