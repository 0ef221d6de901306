// Markdown from the service (investigation reports, patrol narratives, chat replies),
// rendered as sanitised HTML. marked and DOMPurify are imported when the first Markdown
// block mounts, so neither is in the first load. This text is written by a model that reads
// log lines and alert texts others wrote, so it may say whatever it was talked into: DOMPurify
// keeps only the elements and attributes Markdown itself produces (MARKDOWN_TAGS,
// MARKDOWN_ATTRIBUTES). Raw HTML beyond them is dropped, its text kept: no script or handler,
// no image, media or CSS url() a viewer's browser would fetch with fleet data in the URL, and
// no element, class, role, id, `hidden` or `dir` that restyles the console or fakes part of it
// (its own alert box with a "sign in again" link). Every link gets rel="noopener noreferrer",
// and links to other origins open in a new tab (a click, not a page view) and say where they
// go after their text, "(host)", unless the text is that address: `[Sign in again](https://…)`
// or `[runbook](…)` cannot hide whose site it opens. Tables scroll sideways in a focusable box.
// Its headings start at h3, under the page's and the section's. Until the libraries arrive (or if they fail to load,
// or fail on the text) the source is shown as plain text.
import { useEffect, useState } from 'react';
import './ai/markdown.css';

type Render = (source: string) => string;

/** What marked writes for CommonMark and GFM (tables, strikethrough), less images and task-list checkboxes. */
const MARKDOWN_TAGS = 'p br hr h1 h2 h3 h4 h5 h6 strong em del code pre blockquote ul ol li a table thead tbody tr th td'.split(' ');
/** A link's target and title, a list's first number, a table cell's alignment: nothing that styles, hides or names an element. */
const MARKDOWN_ATTRIBUTES = ['href', 'title', 'start', 'align'];
let loading: Promise<Render> | undefined;
/** The level the text's own top heading takes (below the page's h1 and the section's h2). */
const FIRST_HEADING_LEVEL = 3;
/** The most of a link's address shown after it when it is not a web address (mailto:, tel:, …). */
const SHOWN_ADDRESS_CHARS = 60;

/**
 * Where a link to another origin goes, as shown after its text: a web address's host (an
 * international name in its ASCII form, as `URL` gives it, so look-alike letters show as
 * `xn--…`), any other address whole (percent-encoded, hence ASCII), cut. None if it does not parse.
 */
function destination(href: string): { shown: string; userPart: boolean } | undefined {
  let url: URL;
  try {
    url = new URL(href, window.location.href);
  } catch {
    return undefined;
  }
  const userPart = url.username !== '' || url.password !== '';
  if (url.protocol === 'http:' || url.protocol === 'https:') return { shown: url.host, userPart };
  const whole = url.href;
  return { shown: whole.length > SHOWN_ADDRESS_CHARS ? `${whole.slice(0, SHOWN_ADDRESS_CHARS - 1)}…` : whole, userPart };
}

/** marked + a private DOMPurify instance with the link hook, built once. */
export function loadMarkdown(): Promise<Render> {
  loading ??= Promise.all([import('marked'), import('dompurify')]).then(([{ Marked }, { default: createDOMPurify }]) => {
    const marked = new Marked({ gfm: true, breaks: false });
    const purify = createDOMPurify(window);
    purify.addHook('afterSanitizeAttributes', (node) => {
      // By name, lowercased: an SVG or MathML link's tagName is `a`, not `A`.
      if (node.nodeName.toLowerCase() !== 'a') return;
      const href = node.getAttribute('href');
      if (!href) return;
      node.setAttribute('rel', 'noopener noreferrer');
      let external = false;
      try {
        external = new URL(href, window.location.href).origin !== window.location.origin;
      } catch {
        external = false;
      }
      if (external) node.setAttribute('target', '_blank');
      else node.removeAttribute('target');
    });
    const sanitised = (source: string) => {
      const body = purify.sanitize(marked.parse(source, { async: false }) as string, {
        RETURN_DOM: true,
        ALLOWED_TAGS: MARKDOWN_TAGS,
        ALLOWED_ATTR: MARKDOWN_ATTRIBUTES,
        ALLOW_ARIA_ATTR: false,
        ALLOW_DATA_ATTR: false,
      }) as HTMLElement;
      for (const link of Array.from(body.querySelectorAll('a[target="_blank"]'))) {
        const where = destination(link.getAttribute('href') ?? '');
        const text = link.textContent?.trim() ?? '';
        // An address that is its own text says where it goes, unless it carries a user part (`https://bank.example@evil.example`).
        if (!where || (!where.userPart && (text === where.shown || text === link.getAttribute('href')))) continue;
        const marker = document.createElement('span');
        marker.className = 'markdown-link-host';
        marker.textContent = ` (${where.shown})`;
        link.after(marker);
      }
      // Wide tables scroll inside a focusable, labelled box (keyboard users can scroll it too). A group, not a
      // region: a reply with two tables would be two landmarks of one name, and a landmark is a part of the page.
      for (const table of Array.from(body.querySelectorAll('table'))) {
        const box = document.createElement('div');
        box.className = 'markdown-table';
        box.setAttribute('role', 'group');
        box.setAttribute('aria-label', 'Table');
        box.setAttribute('tabindex', '0');
        table.replaceWith(box);
        box.append(table);
      }
      // The text sits under the page's h1 and its section's h2: its own outline starts at h3, its levels kept apart
      // (a report's "# Investigation: …" was a second h1 inside the "Full report" section).
      const headings = Array.from(body.querySelectorAll('h1, h2, h3, h4, h5, h6'));
      const top = Math.min(...headings.map((h) => Number(h.tagName[1])));
      for (const heading of headings) {
        const level = Math.min(6, Number(heading.tagName[1]) - top + FIRST_HEADING_LEVEL);
        if (`H${level}` === heading.tagName) continue;
        const moved = document.createElement(`h${level}`);
        moved.append(...Array.from(heading.childNodes));
        heading.replaceWith(moved);
      }
      // A code block scrolls sideways too (its lines are not wrapped): focusable and labelled the same way.
      for (const code of Array.from(body.querySelectorAll('pre'))) {
        code.setAttribute('role', 'group');
        code.setAttribute('aria-label', 'Code');
        code.setAttribute('tabindex', '0');
      }
      return body.innerHTML;
    };
    return (source: string) => {
      try {
        return sanitised(source);
      } catch {
        // marked recurses once per level of nesting: thousands of `>` or list markers from a model overflow the
        // stack (RangeError), which thrown in render took the whole page down. Shown as the text it is instead.
        const plain = document.createElement('p');
        plain.className = 'markdown-plain';
        plain.textContent = source;
        return plain.outerHTML;
      }
    };
  });
  loading.catch(() => {
    loading = undefined; // a failed chunk load can be retried by the next mount
  });
  return loading;
}

export interface MarkdownProps {
  /** Markdown text; raw HTML in it keeps only what Markdown itself would write (MARKDOWN_TAGS). */
  source: string;
  className?: string;
  /** When given, the block is a labelled region (e.g. "Investigation report"). */
  label?: string;
}

export function Markdown({ source, className, label }: MarkdownProps) {
  const [render, setRender] = useState<Render | null>(null);
  useEffect(() => {
    let live = true;
    loadMarkdown().then(
      (r) => live && setRender(() => r),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  const cls = `markdown${className ? ` ${className}` : ''}`;
  const region = label ? { role: 'region', 'aria-label': label } : {};
  if (!render) {
    return (
      <div className={`${cls} markdown-plain`} {...region} aria-busy="true">
        {source}
      </div>
    );
  }
  // biome-ignore lint/security/noDangerouslySetInnerHtml: the HTML was sanitised by DOMPurify above
  return <div className={cls} {...region} dangerouslySetInnerHTML={{ __html: render(source) }} />;
}
