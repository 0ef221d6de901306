// Jira Cloud REST v3, "create an issue" (REFERENCE.md): POST {base}/rest/api/3/issue
// with Basic auth (account email + API token). The description travels as an
// Atlassian Document Format (ADF) document; the browse URL is {base}/browse/{key}.
import * as z from '../zod.js';
import { mayExistAfter, TicketProviderError, type CreatedTicket, type TicketProvider, type TicketRequest } from './types.js';
import { parseJson } from '../http/outbound.js';
import { postJson, rateLimited } from './post.js';
import { cutText } from '../text.js';

export interface JiraConfig {
  /** Site URL without a trailing slash, e.g. https://acme.atlassian.net */
  baseUrl: string;
  projectKey: string;
  issueType: string;
  email: string;
  /** Resolved per call: on AWS the token comes from Secrets Manager. */
  apiToken: () => Promise<string>;
  timeoutMs: number;
}

export function jiraProvider(config: JiraConfig): TicketProvider {
  return {
    name: 'jira',
    async create(request: TicketRequest, deadline = Number.POSITIVE_INFINITY): Promise<CreatedTicket> {
      const credentials = Buffer.from(`${config.email}:${await config.apiToken()}`).toString('base64');
      const answer = await postJson(
        'Jira',
        `${config.baseUrl}/rest/api/3/issue`,
        { Authorization: `Basic ${credentials}`, Accept: 'application/json', 'Content-Type': 'application/json' },
        issueBody(request, config),
        config.timeoutMs,
        deadline,
      );
      if (answer.status >= 200 && answer.status < 300) {
        const issue = CreatedIssue.safeParse(parseJson(answer.text));
        if (!issue.success) throw new TicketProviderError('Jira answered without an issue key', answer.status, true);
        return { key: issue.data.key, url: `${config.baseUrl}/browse/${issue.data.key}` };
      }
      if (answer.status === 400) throw new TicketProviderError(refusal(answer.text), 400);
      if (answer.status === 401 || answer.status === 403) {
        throw new TicketProviderError(
          `Jira refused the credentials (HTTP ${answer.status}): check TICKET_USER_EMAIL and its API token (TICKET_API_TOKEN; on AWS the secret TicketCredentialArn names)`,
          answer.status,
        );
      }
      if (answer.status === 429) throw rateLimited('Jira', answer.headers);
      if (answer.status >= 300 && answer.status < 400) {
        throw new TicketProviderError(`Jira answered with a redirect (HTTP ${answer.status}): TICKET_BASE_URL is not the Jira site's address`, answer.status);
      }
      throw new TicketProviderError(`Jira answered HTTP ${answer.status}`, answer.status, mayExistAfter(answer.status));
    },
  };
}

// The key goes into the browse URL, so it must look like a Jira key (OPS-42).
const CreatedIssue = z.lazy(() =>
  z.object({
    id: z.string().check(z.minLength(1)),
    key: z.string().check(z.maxLength(64), z.regex(/^[A-Za-z][A-Za-z0-9_]*-\d+$/)),
    self: z.string(),
  }),
);

const JiraErrors = z.lazy(() =>
  z.object({
    errorMessages: z._default(z.array(z.string()), []),
    errors: z._default(z.record(z.string(), z.string()), {}),
  }),
);

/** Jira's field errors are written for people ("summary: Field 'summary' cannot be empty"): pass them on. */
function refusal(body: string): string {
  const parsed = JiraErrors.safeParse(parseJson(body));
  const reasons = parsed.success ? [...parsed.data.errorMessages, ...Object.entries(parsed.data.errors).map(([field, message]) => `${field}: ${message}`)] : [];
  if (reasons.length === 0) return 'Jira refused the ticket (HTTP 400)';
  return `Jira refused the ticket: ${reasons.join('; ')}`.slice(0, MAX_MESSAGE);
}

const MAX_MESSAGE = 1000; // the message reaches the UI
const SUMMARY_MAX = 255; // Jira's limit for the summary field

function issueBody(request: TicketRequest, config: JiraConfig) {
  return {
    fields: {
      project: { key: config.projectKey },
      summary: oneLine(request.summary, SUMMARY_MAX),
      issuetype: { name: config.issueType },
      description: adfDocument(request.description, request.link),
      // Jira rejects labels with spaces.
      labels: [...new Set(request.labels.map((label) => label.trim().replace(/\s+/g, '-')).filter(Boolean))],
    },
  };
}

const oneLine = (text: string, max: number): string => cutText(text.replace(/\s+/g, ' ').trim(), max);

interface AdfText {
  type: 'text';
  text: string;
  marks?: { type: 'link'; attrs: { href: string } }[];
}
type AdfInline = AdfText | { type: 'hardBreak' };
interface AdfParagraph {
  type: 'paragraph';
  content: AdfInline[];
}
interface AdfBulletList {
  type: 'bulletList';
  content: { type: 'listItem'; content: AdfParagraph[] }[];
}
interface AdfDocument {
  type: 'doc';
  version: 1;
  content: (AdfParagraph | AdfBulletList)[];
}

const BULLET = /^\s*- /;

/** Blank-line separated paragraphs and runs of "- " lines, then a paragraph linking back to the app. */
function adfDocument(description: string, link: string): AdfDocument {
  const content: AdfDocument['content'] = [];
  for (const block of description.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    // A block may mix text and bullets ("Recent alerts:\n- a\n- b"): each run becomes its own node.
    for (const run of runsOfBullets(lines)) content.push(run.bullets ? bulletList(run.lines) : paragraph(run.lines));
  }
  if (link) {
    content.push({
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Open in Fleet Health: ' },
        { type: 'text', text: link, marks: [{ type: 'link', attrs: { href: link } }] },
      ],
    });
  }
  return { type: 'doc', version: 1, content };
}

function runsOfBullets(lines: string[]): { bullets: boolean; lines: string[] }[] {
  const runs: { bullets: boolean; lines: string[] }[] = [];
  for (const line of lines) {
    const bullets = BULLET.test(line);
    const last = runs.at(-1);
    if (last?.bullets === bullets) last.lines.push(line);
    else runs.push({ bullets, lines: [line] });
  }
  return runs;
}

/** Lines of one paragraph keep their breaks. ADF forbids empty text nodes. */
function paragraph(lines: string[]): AdfParagraph {
  const texts = lines.map((line) => line.trim()).filter(Boolean);
  return {
    type: 'paragraph',
    content: texts.flatMap((text, i): AdfInline[] => (i === 0 ? [{ type: 'text', text }] : [{ type: 'hardBreak' }, { type: 'text', text }])),
  };
}

function bulletList(lines: string[]): AdfBulletList {
  return {
    type: 'bulletList',
    content: lines.map((line) => ({ type: 'listItem', content: [paragraph([line.replace(BULLET, '')])] })),
  };
}
