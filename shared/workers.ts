// Background Lambdas (no HTTP route): what each may touch, read by the CDK stack.
import type { GroupGrant, TableAccess } from './http/route.js';
import type { TableName } from './db/tables.js';

export interface WorkerDeclaration {
  readonly summary: string;
  readonly tables: Partial<Record<TableName, TableAccess>>;
  readonly grants?: readonly GroupGrant[];
  /** Lambda timeout in seconds (workers run beyond API Gateway's 30 s). */
  readonly timeoutSeconds: number;
}

export const WORKERS = {
  'patrol-worker': {
    summary: 'Runs one AI patrol scan under the patrol lease lock',
    tables: {
      patrol: 'readwrite', locks: 'readwrite', 'llm-usage': 'readwrite',
      clusters: 'read', metrics: 'read', alerts: 'read', scores: 'read', issues: 'read', 'ai-issues': 'read', rules: 'read', logs: 'read',
    },
    grants: ['bedrock:invoke'],
    timeoutSeconds: 900,
  },
  'agent-worker': {
    summary: 'Claims agent tasks and writes investigations',
    tables: {
      investigations: 'readwrite', 'llm-usage': 'readwrite',
      clusters: 'read', metrics: 'read', alerts: 'read', scores: 'read', issues: 'read', rules: 'read', logs: 'read',
    },
    grants: ['bedrock:invoke'],
    timeoutSeconds: 900,
  },
  recompute: {
    summary: 'Scheduled refresh of scores, risk and issue grouping',
    tables: {
      scores: 'readwrite', issues: 'readwrite', 'ai-issues': 'readwrite', investigations: 'readwrite', 'llm-usage': 'readwrite',
      clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read',
    },
    grants: ['bedrock:invoke', 'invoke:agent-worker'],
    timeoutSeconds: 300,
  },
} as const satisfies Record<string, WorkerDeclaration>;

export type WorkerName = keyof typeof WORKERS;
