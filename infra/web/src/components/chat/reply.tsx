// The assistant's reply: Markdown written by a model that reads fleet data (log
// lines, notes by others), so it is shown only through the shared sanitising
// renderer (components/markdown.tsx: marked + DOMPurify), never as raw HTML.
// The page loads the renderer before the first answer is shown (prepareReplies),
// so a reply enters the live log once, already rendered, instead of as plain
// text that is then replaced (read out twice).
import { loadMarkdown, Markdown } from '../markdown';

let render: ((source: string) => string) | null = null;

/** Loads marked and DOMPurify; never rejects (until they load, replies show as plain text). */
export const prepareReplies = (): Promise<void> =>
  loadMarkdown().then(
    (r) => {
      render = r;
    },
    () => undefined,
  );

export function Reply({ markdown }: { markdown: string }) {
  if (!render) return <Markdown source={markdown} className="chat-reply" />;
  // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by DOMPurify in components/markdown.tsx's renderer
  return <div className="markdown chat-reply" dangerouslySetInnerHTML={{ __html: render(markdown) }} />;
}
