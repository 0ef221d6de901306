// Markdown from the service (investigation reports, patrol narratives, chat replies),
// rendered as sanitised HTML. marked and DOMPurify are imported when the first Markdown
// block mounts, so neither is in the first load. DOMPurify keeps its default safe set (no
// scripts, event handlers, iframes or javascript: URLs) less images, media, styles, forms,
// SVG and MathML (RESTYLING_TAGS):
// this text is written by a model that reads log lines and alert texts others wrote, and
// an image (or a CSS url()) it was talked into writing would be fetched by every viewer's
// browser, carrying whatever fleet data the URL holds. Every link gets
// rel="noopener noreferrer", and links to other origins open in a new tab (a click, not
// a page view); tables scroll sideways in a focusable box.
// Until the libraries arrive (or if they fail to load) the source is shown as plain text.
import { useEffect, useState } from 'react';
import './ai/markdown.css';

type Render = (source: string) => string;

/**
 * What DOMPurify's default set keeps that would let the text restyle or overlay the console,
 * or fake part of it: a `<style>` element applies to the whole page (the CSP allows inline
 * styles), forms and their controls can pose as a sign-in prompt, SVG and MathML carry their
 * own links and filters that fetch images, and dialogs and templates hold content out of view.
 */
const RESTYLING_TAGS = ['style', 'svg', 'math', 'form', 'button', 'textarea', 'select', 'option', 'dialog', 'template', 'fieldset', 'label'];
let loading: Promise<Render> | undefined;

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
    return (source: string) => {
      const body = purify.sanitize(marked.parse(source, { async: false }) as string, {
        RETURN_DOM: true,
        // Nothing that makes the browser fetch a URL on its own (a link needs a click): images and
        // media, and the attributes that load them (DOMPurify's default set keeps video, audio,
        // source and the legacy background attribute). The console's CSP refuses such fetches too.
        FORBID_TAGS: ['img', 'image', 'video', 'audio', 'source', 'track', 'picture', 'input', ...RESTYLING_TAGS],
        FORBID_ATTR: ['style', 'src', 'srcset', 'poster', 'background', 'ping', 'popover', 'popovertarget', 'popovertargetaction'],
      }) as HTMLElement;
      // Wide tables scroll inside a focusable, labelled box (keyboard users can scroll it too).
      for (const table of Array.from(body.querySelectorAll('table'))) {
        const box = document.createElement('div');
        box.className = 'markdown-table';
        box.setAttribute('role', 'region');
        box.setAttribute('aria-label', 'Table');
        box.setAttribute('tabindex', '0');
        table.replaceWith(box);
        box.append(table);
      }
      return body.innerHTML;
    };
  });
  loading.catch(() => {
    loading = undefined; // a failed chunk load can be retried by the next mount
  });
  return loading;
}

export interface MarkdownProps {
  /** Markdown text; raw HTML in it is sanitised to DOMPurify's default safe set, less images and styles. */
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
