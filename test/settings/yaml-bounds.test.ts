// Rule text is checked within bounded work whatever its shape (issue 15 point 3).
// A fast-check fuzz builds hostile YAML (nested `?` keys, collection keys,
// flow and block nesting, anchors and aliases, merges, tags, directives, long
// scalars, floods of items) up to the size limit, and every check must answer
// a clear refusal (or a valid rule set) without an internal exception's text.
//
// Work is measured here, not time: the hostile corpus is refused by the bounds
// (each shape with its reason), and whatever data yaml builds from any text is
// linear in the size limit. The time of the worst check over the hostile
// corpus, against the 100 ms target, is measured by `npm run bench -- rules`
// (test/bench/rules.ts).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { Document, parse } from 'yaml';
import { checkRuleText, TEXT_LIMITS } from '../../shared/rules/check.js';
import { defaultRuleText, RULE_SET_NAMES, type RuleSetName } from '../../shared/rules/defaults.js';
import { HealthRules, RiskRules } from '../../shared/rules/schemas.js';
import { locate } from '../../infra/web/src/components/rules/problem-position.js';
import { hostileCorpus, hostileYaml } from './hostile-yaml.js';

const INTERNAL = /Maximum call stack|RangeError|TypeError|ReferenceError|exhaustion|\bat [\w.]+ \(|This should not happen/;

/**
 * The data a check may build from the text (as JSON): the text once, plus at
 * most the size limit again through aliases, plus JSON's quotes. An alias
 * bomb (10 levels of 9) would build gigabytes.
 */
const BUILT_LIMIT = 4 * TEXT_LIMITS.bytes;

// Every document the check turns into data (yaml's Document#toJS, passed through unchanged).
let toJS: MockInstance<Document['toJS']>;
beforeAll(() => {
  toJS = vi.spyOn(Document.prototype, 'toJS');
});
afterAll(() => {
  toJS.mockRestore();
});

function expectBoundedAnswer(name: RuleSetName, text: string) {
  const before = toJS.mock.results.length;
  const result = checkRuleText(name, text);
  for (const built of toJS.mock.results.slice(before)) {
    if (built.type === 'return') expect(JSON.stringify(built.value)?.length ?? 0, `data built from ${text.length} characters`).toBeLessThanOrEqual(BUILT_LIMIT);
  }
  if (!result.ok) {
    expect(result.message.length).toBeGreaterThan(0);
    expect(result.message.length).toBeLessThan(400);
    expect(result.message).not.toMatch(INTERNAL);
  }
  return result;
}

describe('rule text is checked within bounded work', () => {
  it('the shipped rule sets still pass', () => {
    for (const name of RULE_SET_NAMES) expect(checkRuleText(name, defaultRuleText(name)).ok).toBe(true);
  });

  it('fuzz: every hostile shape up to the size limit answers a clear refusal or a valid rule set', () => {
    fc.assert(
      fc.property(hostileYaml, fc.constantFrom(...RULE_SET_NAMES), (text, name) => {
        expectBoundedAnswer(name, text.slice(0, TEXT_LIMITS.bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('the fixed hostile corpus (the bench measures it against 100 ms) is refused, each shape with its reason', () => {
    for (const { name, text, reason } of hostileCorpus()) {
      const result = expectBoundedAnswer('health-rules', text);
      expect(result.ok, name).toBe(false);
      if (!result.ok) expect(result.message, name).toMatch(reason);
    }
    expect(toJS).toHaveBeenCalled(); // the shapes refused by the schema were built into data, and measured
  });
});

describe('shapes a rule set never needs are refused with line and column', () => {
  const cases: [string, string, RegExp][] = [
    ['an explicit key', 'scoring:\n  ? lookback_days\n  : 7\n', /line 2, column 3: explicit keys \(`\?`\) are not accepted/],
    ['nested explicit keys', `scoring:\n  ${'? '.repeat(40)}x\n`, /line 2, column 3: explicit keys/],
    ['an explicit key in a flow mapping', 'scoring: {? a : b}\n', /explicit keys/],
    ['a flow sequence as a key', 'scoring:\n  [a, b]: 1\n', /line 2, column 3: mapping keys must be plain text/],
    ['a flow mapping as a key inside a flow mapping', 'scoring: {{a: 1}: 2}\n', /line 1, column 11: mapping keys must be plain text/],
    ['an alias as a key', 'a: &k x\n*k : 1\n', /line 2, column 1: an alias is not accepted as a mapping key/],
    ['a merge key', 'base: &b {lookback_days: 7}\nscoring:\n  <<: *b\n', /line 3, column 3: merge keys \(`<<`\) are not accepted/],
    ['a custom tag', 'scoring: !rules {}\n', /line 1, column 10: the tag `!rules` is not accepted/],
    ['a YAML 1.1 tag', 'scoring:\n  lookback_days: !!binary aGk=\n', /the tag `!!binary` is not accepted/],
    ['a verbatim tag', 'scoring: !<tag:yaml.org,2002:str> x\n', /the tag `!<tag:yaml.org,2002:str>` is not accepted/],
    ['a %TAG directive', '%TAG !e! tag:example.com,2000:\n---\nscoring: !e!x 1\n', /line 1, column 1: YAML directives/],
    ['two documents', 'scoring: {}\n---\nrisk: {}\n', /line 2, column 1: more than one YAML document/],
    [
      'an alias of a node with aliases',
      'a: &a [1]\nb: &b [*a, *a]\nscoring: *b\n',
      /line 3, column 10: the alias `\*b` refers to a node that contains aliases itself/,
    ],
    ['aliases copying more than the size limit', `a: &a [${'1,'.repeat(3_000)}1]\nb: [${Array(12).fill('*a').join(', ')}]\n`, /aliases copy more than 64 KB/],
    ['51 aliases', `a: &a 1\nb: [${Array(51).fill('*a').join(', ')}]\n`, /more than 50 aliases/],
    // 50 are allowed: read, and refused for what they say (the limit's own message from 51 on)
    ['50 aliases', `a: &a 1\nb: [${Array(50).fill('*a').join(', ')}]\n`, /must have the top-level key/],
    ['an alias of no anchor', 'risk:\n  lookback_days: *d\n', /line 2, column 18: the alias `\*d` refers to no anchor defined before it/],
    ['an alias before its anchor', 'a: *x\nb: &x 1\n', /line 1, column 4: the alias `\*x` refers to no anchor defined before it/],
    [
      'block nesting of 33 levels',
      `a:\n${Array.from({ length: 33 }, (_, i) => `${' '.repeat(i + 1)}b:`).join('\n')} 1\n`,
      /line 33, column 33: collections nested deeper than 32 levels/,
    ],
    ['compact sequences 3,000 deep', `scoring:\n${'- '.repeat(3_000)}x\n`, /line 2, column 1: collections nested deeper than 32 levels/],
    // At its 33rd bracket, so the editor can go there (a one-line text named no position).
    ['flow nesting 33 deep', `scoring: ${'['.repeat(33)}${']'.repeat(33)}\n`, /line 1, column 42: collections nested deeper than 32 levels/],
    [
      'mixed block and flow nesting of 33',
      `a:\n${Array.from({ length: 20 }, (_, i) => `${' '.repeat(i + 1)}b:`).join('\n')} ${'['.repeat(13)}${']'.repeat(13)}\n`,
      /collections nested deeper than 32 levels/,
    ],
    ['4,001 items', `scoring: [${'1,'.repeat(4_001)}1]\n`, /more than 4000 YAML items/],
  ];
  it.each(cases)('%s', (_what, text, message) => {
    const result = expectBoundedAnswer('health-rules', text);
    expect(result).toEqual({ ok: false, message: expect.stringMatching(message) });
  });

  it('says an unclosed flow collection at its bracket, not as the nesting the lines after it then read as', () => {
    // Unclosed, the parser reads every later line into it, one level deeper each: in the shipped health rules
    // that was "nested deeper than 32 levels" 32 lines further down.
    const text = defaultRuleText('health-rules');
    const lines = text.split('\n');
    const at = lines.findIndex((line) => /^\s+red: \d+$/.test(line));
    expect(at).toBeGreaterThan(0);
    for (const [open, close] of [
      ['[', ']'],
      ['{', '}'],
    ]) {
      const broken = lines.map((line, i) => (i === at ? line.replace('red: ', `red: ${open}`) : line)).join('\n');
      const column = lines[at]!.indexOf('red: ') + 'red: '.length + 1;
      expect(checkRuleText('health-rules', broken)).toEqual({
        ok: false,
        message: `invalid YAML at line ${at + 1}, column ${column}: \`${open}\` is never closed with \`${close}\``,
      });
    }
  });

  it('says the first fault in the text when there are several', () => {
    expect(checkRuleText('health-rules', 'scoring:\n  a:\n    x: !one 1\n  b:\n    y: !two 2\n')).toEqual({
      ok: false,
      message: expect.stringMatching(/^invalid YAML at line 3, column 8: the tag `!one` is not accepted/),
    });
  });

  it('core tags, anchors and plain aliases of scalars or alias-free nodes are still accepted', () => {
    const text = defaultRuleText('health-rules')
      .replace('lookback_days: 7', 'lookback_days: !!int &days 7')
      .replace(/cooldown_hours: \d+/, 'cooldown_hours: *days');
    expect(text).toContain('*days');
    expect(checkRuleText('health-rules', text)).toMatchObject({ ok: true, value: { scoring: { lookback_days: 7, ai_trigger: { cooldown_hours: 7 } } } });
  });

  it('a core tag that does not fit its value is refused where written, not blamed on the value', () => {
    const base = defaultRuleText('health-rules');
    const tagged = base.replace('lookback_days: 7', 'lookback_days: !!float 7');
    const refused = checkRuleText('health-rules', tagged);
    expect(refused).toEqual({ ok: false, message: expect.stringContaining('the tag `!!float` does not fit its value') });
    const line = tagged.split('\n').findIndex((l) => l.includes('!!float 7')) + 1;
    expect(locate(refused.ok ? '' : refused.message, tagged)).toMatchObject({ line, col: tagged.split('\n')[line - 1]!.indexOf('!!float') + 1 });
    // Another core tag on a value it does not fit is said so, without the float's hint.
    const refusedInt = checkRuleText('health-rules', base.replace('lookback_days: 7', 'lookback_days: !!int 7.5'));
    expect(refusedInt).toEqual({ ok: false, message: expect.stringMatching(/the tag `!!int` does not fit its value: write the value without the tag$/) });
    // A value the tag fits reads as the number it says.
    expect(checkRuleText('health-rules', base.replace('lookback_days: 7', 'lookback_days: !!float 7.0'))).toMatchObject({
      ok: true,
      value: { scoring: { lookback_days: 7 } },
    });
  });

  it('control characters YAML does not print are refused where they stand, in comments and strings too; tab and CR are text', () => {
    const base = defaultRuleText('issue-rules');
    for (const control of ['\u0000', '\u0007', '\u001b', '\u007f', '\u009b']) {
      const text = `${base}\n# before ${control} after\n`;
      const refused = checkRuleText('issue-rules', text);
      const hex = control.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
      expect(refused).toEqual({ ok: false, message: expect.stringContaining(`the control character U+${hex} is not allowed`) });
      expect(locate(refused.ok ? '' : refused.message, text)).toMatchObject({ line: text.split('\n').length - 1, col: 10 });
    }
    expect(checkRuleText('issue-rules', `${base.replaceAll('\n', '\r\n')}#\ttab\r\n`).ok).toBe(true);
  });

  it('thresholds finer than the 6 decimals metrics are judged at are refused where written, and still load where stored', () => {
    const health = (green: string, yellow: string, red: string) =>
      defaultRuleText('health-rules').replace(/green: 100\n(\s+)yellow: 500\n(\s+)red: 1000/, `green: ${green}\n$1yellow: ${yellow}\n$2red: ${red}`);
    const risk = (warning: string, critical: string) =>
      defaultRuleText('risk-rules').replace(/warning: 500\n(\s+)critical: 1000/, `warning: ${warning}\n$1critical: ${critical}`);
    // Apart only in the 7th decimal: judged alike, the band between them could never be reached.
    const [finerHealth, finerRisk] = [health('0.000001', '0.0000015', '0.000002'), risk('0.0000015', '0.000002')];
    expect(finerHealth).toContain('0.0000015');
    expect(finerRisk).toContain('0.0000015');
    const finer = expect.stringMatching(/thresholds may have at most 6 decimals: metrics are judged at that precision$/);
    expect(checkRuleText('health-rules', finerHealth)).toEqual({ ok: false, message: finer });
    expect(checkRuleText('risk-rules', finerRisk)).toEqual({ ok: false, message: finer });
    expect(checkRuleText('health-rules', health('0.000001', '0.000002', '0.000003')).ok).toBe(true);
    expect(checkRuleText('risk-rules', risk('0.000001', '0.000002')).ok).toBe(true);
    // The schemas stored versions are read with have no such check: one stored before still loads.
    expect(HealthRules.safeParse(parse(finerHealth)).success).toBe(true);
    expect(RiskRules.safeParse(parse(finerRisk)).success).toBe(true);
  });

  it('numbers YAML cannot hold finitely (.inf, .nan, 1e400) are refused by the schema', () => {
    for (const bad of ['.inf', '-.inf', '.nan', '1e400']) {
      const text = defaultRuleText('health-rules').replace('lookback_days: 7', `lookback_days: ${bad}`);
      expect(checkRuleText('health-rules', text)).toEqual({ ok: false, message: expect.stringMatching(/^scoring\.lookback_days: /) });
    }
  });

  it('an unknown key is named by its own path, so the editor marks the line that holds it', () => {
    const base = defaultRuleText('health-rules');
    const top = `${base}\nextra_setting: 1\n`;
    const refusedTop = checkRuleText('health-rules', top);
    expect(refusedTop).toEqual({ ok: false, message: 'extra_setting: Unrecognized key: "extra_setting"' });
    expect(locate(refusedTop.ok ? '' : refusedTop.message, top)).toMatchObject({ line: top.split('\n').indexOf('extra_setting: 1') + 1, col: 1 });
    const nested = base.replace('  lookback_days: 7', '  lookback_days: 7\n  lookback_dayz: 3');
    const refusedNested = checkRuleText('health-rules', nested);
    expect(refusedNested).toEqual({ ok: false, message: 'scoring.lookback_dayz: Unrecognized key: "lookback_dayz"' });
    expect(locate(refusedNested.ok ? '' : refusedNested.message, nested)).toMatchObject({ line: nested.split('\n').indexOf('  lookback_dayz: 3') + 1, col: 3 });
  });
});
