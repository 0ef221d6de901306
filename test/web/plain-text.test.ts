// The console's Markdown-to-plain-text reading for list cells (infra/web/src/components/ai/plain-text.ts).
import { describe, expect, it } from 'vitest';
import { firstLine, inlineText, plainText } from '../../infra/web/src/components/ai/plain-text.js';

describe('inlineText', () => {
  it('keeps a code span verbatim: its underscores, asterisks and tildes are no marks; only the backticks go', () => {
    expect(inlineText('Set `max_connections` to 200')).toBe('Set max_connections to 200');
    expect(inlineText('the `__init__` file')).toBe('the __init__ file');
    expect(inlineText('compute `a*b*c` and `**kwargs`, not `~~x~~`')).toBe('compute a*b*c and **kwargs, not ~~x~~');
    expect(inlineText('`_a_` and _b_')).toBe('_a_ and b');
    expect(inlineText('a tag `<div>` and a link `[x](y)` in code')).toBe('a tag <div> and a link [x](y) in code');
    expect(inlineText('an escape in code is two characters: `\\*`')).toBe('an escape in code is two characters: \\*');
  });

  it('reads a code span as CommonMark does: a longer fence holds a backtick, one space each side is padding', () => {
    expect(inlineText('``a ` b`` and `` `x` ``')).toBe('a ` b and `x`');
    expect(inlineText('an escaped \\`not_code\\` tick')).toBe('an escaped `not_code` tick');
  });

  it('still removes the marks outside code spans', () => {
    expect(inlineText('**Raise** `max_connections` *now* and __check__ ~~it~~ [here](https://x)')).toBe('Raise max_connections now and check it here');
    expect(inlineText('disk_used_pct stays, \\*literal\\*')).toBe('disk_used_pct stays, *literal*');
  });

  it('firstLine and plainText keep code spans verbatim too', () => {
    expect(firstLine('## Summary\nSet `max_connections` to **200**')).toBe('Set max_connections to 200');
    expect(plainText('- the `__init__` file\n- `*.log` files')).toBe('the __init__ file *.log files');
  });
});
