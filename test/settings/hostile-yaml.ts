// Hostile YAML for the rule-text checks: a fast-check arbitrary of shapes a
// rule set never needs (test/settings/yaml-bounds.test.ts) and a fixed corpus
// of the worst of each, near the size limit, and the YAML bombs of a rule-set PUT
// (test/settings/rule-editing.test.ts); test/bench/rules.ts times both.
import fc from 'fast-check';
import { TEXT_LIMITS } from '../../shared/rules/check.js';

const MAX = TEXT_LIMITS.bytes;
const fitTo = (text: string) => text.slice(0, MAX);
const indent = (n: number) => ' '.repeat(n);

/** `? ? ? … x`: explicit keys nested on one line or one per line (exponential in yaml's toJS before). */
const nestedExplicitKeys = fc.record({ n: fc.integer({ min: 1, max: 2_000 }), perLine: fc.boolean(), value: fc.boolean() }).map(({ n, perLine, value }) => {
  const keys = perLine ? `${Array.from({ length: n }, (_, i) => `${indent(2 + 2 * i)}?`).join('\n')} x` : `  ${'? '.repeat(n)}x`;
  return fitTo(`scoring:\n${keys}\n${value ? '  : y\n' : ''}`);
});

/** `{{{x: y}: y}: y}`: collections as keys, nested. */
const collectionKeys = fc.record({ n: fc.integer({ min: 1, max: 3_000 }), open: fc.constantFrom('{', '['), block: fc.boolean() }).map(({ n, open, block }) => {
  let key = 'x';
  for (let i = 0; i < n && key.length < MAX; i++) key = open === '{' ? `{${key}: y}` : `[${key}]`;
  return fitTo(block ? `scoring:\n  ${key}: 1\n` : `scoring: {${key}: 1}\n`);
});

/** Flow nesting, closed or not, maps or sequences, possibly behind a quote. */
const flowNesting = fc
  .record({ n: fc.integer({ min: 1, max: MAX / 2 }), chars: fc.constantFrom('[', '{', '[{', '{['), closed: fc.boolean(), quote: fc.boolean() })
  .map(({ n, chars, closed, quote }) => {
    const open = chars.repeat(Math.ceil(n / chars.length)).slice(0, n);
    const close = closed
      ? [...open]
          .reverse()
          .map((c) => (c === '[' ? ']' : '}'))
          .join('')
      : '';
    return fitTo(`${quote ? "note: it's\n" : ''}scoring: ${open}${chars.startsWith('{') ? 'a: 1' : '1'}${close}\n`);
  });

/** Block nesting by indentation, compact `- `/`? `/`: ` indicators, or both. */
const blockNesting = fc
  .record({ n: fc.integer({ min: 1, max: 20_000 }), style: fc.constantFrom('keys', 'compact-seq', 'compact-mixed', 'seq-in-map', 'tabs') })
  .map(({ n, style }) => {
    switch (style) {
      case 'keys':
        return fitTo(`${Array.from({ length: Math.min(n, 350) }, (_, i) => `${indent(i)}k:`).join('\n')} 1\n`);
      case 'compact-seq':
        return fitTo(`scoring:\n${'- '.repeat(n)}x\n`);
      case 'compact-mixed':
        return fitTo(`scoring:\n${'- ? '.repeat(n)}x\n`);
      case 'seq-in-map':
        return fitTo(`${Array.from({ length: Math.min(n, 2_000) }, (_, i) => `${indent(i)}- k${i}:`).join('\n')} 1\n`);
      default:
        return fitTo(`scoring:\n${Array.from({ length: Math.min(n, 300) }, (_, i) => `${'\t'.repeat(i)}k:`).join('\n')}\n`);
    }
  });

/** Billion laughs, alias floods, aliases of big nodes, aliases as keys, merges. */
const aliases = fc
  .record({
    levels: fc.integer({ min: 1, max: 30 }),
    fan: fc.integer({ min: 1, max: 12 }),
    flood: fc.integer({ min: 1, max: 20_000 }),
    kind: fc.constantFrom('laughs', 'flood', 'big', 'key', 'merge'),
  })
  .map(({ levels, fan, flood, kind }) => {
    switch (kind) {
      case 'laughs': {
        const lines = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
        for (let i = 1; i <= levels; i++)
          lines.push(
            `a${i}: &a${i} [${Array(fan)
              .fill(`*a${i - 1}`)
              .join(', ')}]`,
          );
        return fitTo(`${lines.join('\n')}\nscoring: *a${levels}\n`);
      }
      case 'flood':
        return fitTo(`a: &a 1\nscoring: [${Array(flood).fill('*a').join(',')}]\n`);
      case 'big':
        return fitTo(
          `a: &a [${'1,'.repeat(Math.min(flood, 3_900))}1]\nscoring: [${Array(fan * 4)
            .fill('*a')
            .join(', ')}]\n`,
        );
      case 'key':
        return fitTo(`a: &a {x: [1, 2]}\nscoring:\n  *a : 1\n`);
      default:
        return fitTo(`base: &b {lookback_days: 7}\nscoring:\n${Array.from({ length: Math.min(flood, 2_000) }, (_, i) => `  <<: *b\n  k${i}: 1`).join('\n')}\n`);
    }
  });

const TAGS = [
  '!!str',
  '!!int',
  '!!float',
  '!!bool',
  '!!null',
  '!!map',
  '!!seq',
  '!!binary',
  '!!set',
  '!!omap',
  '!!timestamp',
  '!rules',
  '!',
  '!<tag:x>',
  '!e!x',
];
/** Tags anywhere, core or not, and directives before them. */
const tags = fc
  .record({ picks: fc.array(fc.constantFrom(...TAGS), { minLength: 1, maxLength: 400 }), directive: fc.boolean() })
  .map(({ picks, directive }) =>
    fitTo(
      `${directive ? '%TAG !e! tag:example.com,2000:\n---\n' : ''}scoring:\n${picks.map((t, i) => `  k${i}: ${t} ${t === '!!map' ? '{}' : t === '!!seq' ? '[]' : '1'}`).join('\n')}\n`,
    ),
  );

/** Long scalars of every style, up to the size limit. */
const longScalars = fc
  .record({ n: fc.integer({ min: 1, max: MAX }), style: fc.constantFrom('plain', 'double', 'single', 'literal', 'folded', 'escapes', 'comment', 'multiline') })
  .map(({ n, style }) => {
    const x = 'x'.repeat(n);
    switch (style) {
      case 'plain':
        return fitTo(`scoring: ${x}\n`);
      case 'double':
        return fitTo(`scoring: "${x}"\n`);
      case 'single':
        return fitTo(`scoring: '${"''".repeat(n / 2)}'\n`);
      case 'literal':
        return fitTo(`scoring: |\n  ${x}\n`);
      case 'folded':
        return fitTo(`scoring: >\n${Array.from({ length: Math.min(n, 4_000) }, () => '  word').join('\n')}\n`);
      case 'escapes':
        return fitTo(`scoring: "${'\\u0041\\"'.repeat(n / 8)}"\n`);
      case 'comment':
        return fitTo(`# ${x}\nscoring: {}\n`);
      default:
        return fitTo(`scoring: a\n${Array.from({ length: Math.min(n, 4_990) }, () => '  b').join('\n')}\n`);
    }
  });

/** Floods of items: keys, sequence entries, commas, errors, documents. */
const floods = fc
  .record({
    n: fc.integer({ min: 1, max: 30_000 }),
    kind: fc.constantFrom('keys', 'flow-keys', 'entries', 'commas', 'errors', 'docs', 'dupes', 'anchors', 'colons'),
  })
  .map(({ n, kind }) => {
    switch (kind) {
      case 'keys':
        return fitTo(Array.from({ length: n }, (_, i) => `k${i}: 1`).join('\n'));
      case 'flow-keys':
        return fitTo(`scoring: {${Array.from({ length: n }, (_, i) => `k${i}: 1`).join(', ')}}\n`);
      case 'entries':
        return fitTo(`scoring: [${'1,'.repeat(n)}1]\n`);
      case 'commas':
        return fitTo(`scoring: [${','.repeat(n)}]\n`);
      case 'errors':
        return fitTo('a: b: c\n'.repeat(n));
      case 'docs':
        return fitTo('---\nscoring: {}\n'.repeat(n));
      case 'dupes':
        return fitTo(`scoring:\n${'  k: 1\n'.repeat(n)}`);
      case 'anchors':
        return fitTo(`scoring: [${Array.from({ length: n }, (_, i) => `&a${i} x`).join(', ')}]\n`);
      default:
        return fitTo(`scoring: ${'a:'.repeat(n)}\n`);
    }
  });

/** Any hostile shape, alone or several joined (each fragment cut so the whole fits the limit). */
export const hostileYaml: fc.Arbitrary<string> = fc.oneof(
  nestedExplicitKeys,
  collectionKeys,
  flowNesting,
  blockNesting,
  aliases,
  tags,
  longScalars,
  floods,
  fc
    .array(fc.oneof(nestedExplicitKeys, collectionKeys, flowNesting, blockNesting, aliases, tags, longScalars, floods), { minLength: 2, maxLength: 4 })
    .map((parts) => parts.map((p) => p.slice(0, Math.floor(MAX / parts.length) - 1)).join('\n')),
);

export interface HostileCase {
  name: string;
  text: string;
  /** Why it is refused. */
  reason: RegExp;
}

/** The worst of each shape at or near the size limit: what `npm run bench -- rules` times. */
export function hostileCorpus(): HostileCase[] {
  const under = (unit: string, head = '', tail = '') => head + unit.repeat(Math.floor((MAX - head.length - tail.length) / unit.length)) + tail;
  const items = TEXT_LIMITS.items - 10;
  let flowKey = 'x';
  for (let i = 0; i < 30; i++) flowKey = `{${flowKey}: y}`;
  return [
    { name: '30 nested ? keys (3.4 s at 28 before)', text: `scoring:\n  ${'? '.repeat(30)}x\n`, reason: /explicit keys/ },
    { name: '30 nested flow mappings as keys', text: `scoring: ${flowKey}\n`, reason: /mapping keys must be plain text/ },
    { name: 'compact sequences 32,000 deep', text: under('- ', 'scoring:\n', 'x\n'), reason: /nested deeper than 32/ },
    { name: 'flow sequences 65,000 deep', text: under('[', 'scoring: '), reason: /nested deeper than 32/ },
    {
      name: 'billion laughs (10 × 9)',
      text: [
        'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
        ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(', ')}]`),
      ].join('\n'),
      reason: /more than 50 aliases/,
    },
    {
      name: '50 aliases of a 3,990-entry sequence',
      text: `a: &a [${'1,'.repeat(items - 200)}1]\nscoring: [${Array(50).fill('*a').join(',')}]\n`,
      reason: /aliases copy more than 64 KB/,
    },
    { name: '3,990 flow entries', text: `scoring: [${'xxxxxxxxxxxxxx,'.repeat(items)}1]\n`, reason: /^scoring[.:]/ },
    { name: '3,990 empty flow entries (an error each)', text: `scoring: [${','.repeat(items)}]\n`, reason: /Unexpected , in flow sequence/ },
    { name: '660 flow sequences 6 deep', text: `scoring: [${'[[[[[1]]]]],'.repeat(660)}1]\n`, reason: /^scoring[.:]/ },
    {
      name: '1,990 mapping entries',
      text: `scoring:\n${Array.from({ length: 1_990 }, (_, i) => `  key_${i}: value ${i}`).join('\n')}\n`,
      reason: /^scoring[.:]/,
    },
    {
      name: '199 lines of 20 compact sequences',
      text: under('- - - - - - - - - - - - - - - - - - - 1\n', 'scoring:\n').slice(0, 199 * 40 + 9),
      reason: /^scoring[.:]/,
    },
    { name: '1,300 lines of errors', text: 'a: b: c\n'.repeat(1_300), reason: /invalid YAML/ },
    { name: '1,900 anchors', text: `scoring: [${Array.from({ length: 1_900 }, (_, i) => `&a${i} x`).join(', ')}]\n`, reason: /^scoring[.:]/ },
    {
      name: '400 tags, the last not core',
      text: `scoring:\n${Array.from({ length: 399 }, (_, i) => `  k${i}: !!str x`).join('\n')}\n  z: !custom x\n`,
      reason: /the tag `!custom` is not accepted/,
    },
    { name: 'a 64 KB plain scalar', text: under('x', 'scoring: ', '\n'), reason: /^scoring[.:]/ },
    { name: 'a 64 KB double-quoted scalar of escapes', text: under('\\"', 'scoring: "', '"\n'), reason: /^scoring[.:]/ },
    {
      name: '64 KB of a: pairs on one line',
      text: under('a:', 'scoring: ', '\n'),
      reason: /invalid YAML at line 1, column 10: Nested mappings are not allowed/,
    },
    { name: '4,001 items', text: `scoring: [${'1,'.repeat(TEXT_LIMITS.items + 1)}1]\n`, reason: /more than 4000 YAML items/ },
    { name: '5,001 lines', text: '#\n'.repeat(5_001), reason: /more than 5000 lines/ },
  ];
}

/** YAML bombs a rule-set PUT must refuse (test/settings/rule-editing.test.ts), as issue rules; also timed by test/bench/rules.ts. */
export function yamlBombs(): { name: string; text: string }[] {
  const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 10; i++) {
    const [me, prev] = [String.fromCharCode(97 + i), String.fromCharCode(96 + i)];
    laughs.push(`${me}: &${me} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  return [
    { name: 'billion laughs', text: laughs.join('\n') },
    { name: 'alias flood', text: `a: &a 1\nb: [${Array(20_000).fill('*a').join(',')}]` },
    { name: 'deep flow nesting behind a quote', text: `note: it's\nx: ${'['.repeat(50_000)}` },
    { name: 'deep block nesting', text: Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k:`).join('\n') },
    { name: 'many keys', text: Array.from({ length: 6_000 }, (_, i) => `k${i}: 1`).join('\n') },
    { name: 'many keys on one line', text: `{${Array.from({ length: 5_000 }, (_, i) => `k${i}: 1`).join(', ')}}` },
  ];
}
