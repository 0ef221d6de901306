// Agent tasks and investigations (table `investigations`; issue 10).
//   task:          pk = TASK#<task_id>, sk = TASK
//                  gsi1: gsi1pk = TASKS#OPEN while pending or running, gsi1sk = <1000 − priority, 4 digits>#<created_at>#<task_id>
//                        (ascending = most urgent first, then oldest); once done or failed
//                        gsi1pk = TASKS#CLOSED, gsi1sk = <finished_at>#<task_id>
//   cluster guard: pk = CLUSTER_TASK#<cluster_id>, sk = GUARD → { active_task_id?, last_created_at, last_finished_at? }
//                  Written in the same transaction as a new task, on the condition that no task is
//                  active and the last one is older than the cooldown: two concurrent creators cannot
//                  both win. Finishing a task (done or failed) removes active_task_id.
//   investigation: pk = INV#<investigation_id>, sk = INV
//                  gsi1: gsi1pk = INVESTIGATIONS, gsi1sk = <created_at>#<investigation_id> (time range, newest first)
import { randomUUID } from 'node:crypto';
import { InvestigationSeverity, type AgentTaskView, type Investigation, type InvestigationSummary } from '../agents/schemas.js';
import {
  ConditionFailed,
  conditionalWrite,
  getItem,
  projection,
  queryAll,
  queryPage,
  queryTimeIndex,
  tableName,
  transactWrite,
  setFields,
  updateItem,
  type TransactItem,
} from './client.js';
import { runSpend } from './llm-usage.js';
import { ttlAfterDays } from './tables.js';
import { itemReader, nullable, number, oneOf, optional, pickFields, string, type Fields } from './items.js';

const TASK_STATUSES = ['pending', 'running', 'done', 'failed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
const SEVERITIES = InvestigationSeverity.options;
export type Severity = InvestigationSeverity;
export type { Investigation, InvestigationSummary };

/** Attempts a task gets before it ends `failed`. */
export const MAX_ATTEMPTS = 3;

/**
 * A stored agent task: the answer's fields (shared/agents/schemas.ts), any
 * status (done and failed ones are never listed), and the worker's bookkeeping.
 */
export type AgentTask = Omit<AgentTaskView, 'status'> & {
  status: TaskStatus;
  /** The worker run holding it while running (a claim older than the lease may be taken over). */
  owner: string | null;
  finished_at: string | null;
  investigation_id: string | null;
  /** After a failed attempt: not claimed again before this time (retries are spaced out). */
  not_before?: string | null;
  /**
   * The running attempt's investigation id, the run id its model calls carry in the usage ledger: set with the claim,
   * so whoever finds the attempt stopped (its worker killed) puts what the ledger charged for it on the task. Absent
   * on tasks claimed before it was kept (their stopped attempt adds nothing, as before).
   */
  attempt_id?: string | null;
  /** What its failed attempts spent on the model (the ledger charged it): added to the investigation that ends it. */
  spent_input_tokens?: number;
  spent_output_tokens?: number;
  spent_cost_usd?: number;
};

/** A failed attempt's model spend, as a task keeps it. */
export interface AttemptSpend {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** The task's earlier attempts' spend plus this attempt's, as the task's fields. */
function spentFields(
  task: Pick<AgentTask, 'spent_input_tokens' | 'spent_output_tokens' | 'spent_cost_usd'>,
  attempt: AttemptSpend | undefined,
): Record<string, number> {
  if (!attempt) return {};
  return {
    spent_input_tokens: (task.spent_input_tokens ?? 0) + attempt.input_tokens,
    spent_output_tokens: (task.spent_output_tokens ?? 0) + attempt.output_tokens,
    spent_cost_usd: Math.round(((task.spent_cost_usd ?? 0) + attempt.cost_usd) * 1e6) / 1e6,
  };
}

// Investigations and closed tasks carry a ttl (ttlAfterDays, as all history read 365 days back); open tasks and
// the per-cluster guards carry none: they live until closed.

const OPEN = 'TASKS#OPEN';
const CLOSED = 'TASKS#CLOSED';
const INVESTIGATIONS = 'INVESTIGATIONS';
const taskKey = (id: string) => ({ pk: `TASK#${id}`, sk: 'TASK' });
const guardKey = (clusterId: string) => ({ pk: `CLUSTER_TASK#${clusterId}`, sk: 'GUARD' });
const investigationKey = (id: string) => ({ pk: `INV#${id}`, sk: 'INV' });
const openSortKey = (t: Pick<AgentTask, 'priority' | 'created_at' | 'task_id'>) => `${String(1000 - t.priority).padStart(4, '0')}#${t.created_at}#${t.task_id}`;
const readTask = itemReader<AgentTask>({
  task_id: string,
  cluster_id: string,
  cluster_name: string,
  customer_name: string,
  customer_tier: string,
  trigger_reason: string,
  priority: number,
  status: oneOf(TASK_STATUSES),
  created_at: string,
  attempts: number,
  last_error: nullable(string),
  owner: nullable(string),
  claimed_at: nullable(string),
  finished_at: nullable(string),
  investigation_id: nullable(string),
  not_before: optional(nullable(string)),
  attempt_id: optional(nullable(string)),
  spent_input_tokens: optional(number),
  spent_output_tokens: optional(number),
  spent_cost_usd: optional(number),
});
/** What a listing reads of an investigation (its projection): all but the full report. */
const summaryFields: Fields<InvestigationSummary> = {
  investigation_id: string,
  task_id: string,
  cluster_id: string,
  cluster_name: string,
  customer_name: string,
  severity: oneOf(SEVERITIES),
  confidence: number,
  root_cause: string,
  recommended_actions: string,
  model: string,
  input_tokens: number,
  output_tokens: number,
  total_tokens: number,
  cost_usd: number,
  duration_seconds: number,
  created_at: string,
};
const SUMMARY_FIELDS = Object.keys(summaryFields);
const readSummary = itemReader(summaryFields);
/**
 * What the list's filters and the KPIs read of every investigation in a window: no free text.
 * A summary's root cause and actions run to kilobytes each; the window may hold thousands.
 */
const FIGURE_FIELDS = [
  'investigation_id',
  'created_at',
  'severity',
  'cluster_id',
  'customer_name',
  'confidence',
  'duration_seconds',
  'total_tokens',
  'cost_usd',
] as const;
export type InvestigationFigures = Pick<InvestigationSummary, (typeof FIGURE_FIELDS)[number]>;
const readFigures = itemReader(pickFields(summaryFields, FIGURE_FIELDS));
/** The most values DynamoDB takes in one IN (…) of an expression. */
const IN_MAX = 100;
const readInvestigation = itemReader<Investigation>({ ...summaryFields, full_report: string });
/** Resolved per call: the prefix comes from the environment. */
const table = () => tableName('investigations');

export type NewTask = Pick<
  AgentTask,
  'task_id' | 'cluster_id' | 'cluster_name' | 'customer_name' | 'customer_tier' | 'trigger_reason' | 'priority' | 'created_at'
>;

/**
 * A pending task for the cluster, unless one is pending or running or the last
 * one was created after `cooldownStart` (ISO); false when the guard refused.
 */
export async function createTask(task: NewTask, cooldownStart: string): Promise<boolean> {
  const priority = Math.max(0, Math.min(999, Math.round(task.priority)));
  const record: AgentTask = {
    ...task,
    priority,
    status: 'pending',
    attempts: 0,
    last_error: null,
    owner: null,
    claimed_at: null,
    finished_at: null,
    investigation_id: null,
  };
  try {
    await transactWrite([
      {
        Update: {
          TableName: table(),
          Key: guardKey(task.cluster_id),
          UpdateExpression: 'SET active_task_id = :task, last_created_at = :now, cluster_id = :cluster',
          ConditionExpression: 'attribute_not_exists(active_task_id) AND (attribute_not_exists(last_created_at) OR last_created_at <= :cooldown)',
          ExpressionAttributeValues: { ':task': task.task_id, ':now': task.created_at, ':cluster': task.cluster_id, ':cooldown': cooldownStart },
        },
      },
      {
        Put: {
          TableName: table(),
          Item: { ...taskKey(task.task_id), gsi1pk: OPEN, gsi1sk: openSortKey(record), ...record },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ]);
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

export async function getTask(taskId: string): Promise<AgentTask | undefined> {
  const item = await getItem('investigations', taskKey(taskId), true);
  return item ? readTask(item) : undefined;
}

/**
 * Pending and running tasks, most urgent first (then oldest); the first `limit` only, read as
 * such (a page of the index, not every open task). Read from the index: may lag a write by a moment.
 */
export async function listOpenTasks(limit = Infinity): Promise<AgentTask[]> {
  const items = await queryAll(
    'investigations',
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :open',
      ExpressionAttributeValues: { ':open': OPEN },
      ...(Number.isFinite(limit) ? { Limit: limit } : {}),
    },
    limit,
  );
  return items.map(readTask);
}

/** What choosing an open task to take reads of it (`firstOpenTask`): the state a claim decides on, no texts. */
export type OpenTaskState = Pick<AgentTask, 'task_id' | 'cluster_id' | 'status' | 'attempts' | 'claimed_at' | 'not_before' | 'attempt_id'>;
const openStateFields: Fields<OpenTaskState> = {
  task_id: string,
  cluster_id: string,
  status: oneOf(TASK_STATUSES),
  attempts: number,
  claimed_at: nullable(string),
  not_before: optional(nullable(string)),
  attempt_id: optional(nullable(string)),
};
const OPEN_STATE_FIELDS = Object.keys(openStateFields);
const readOpenState = itemReader(openStateFields);
/** Open tasks read per page while looking for one to take: it is nearly always on the first. */
const OPEN_TASKS_PAGE = 25;

/**
 * The first open task, most urgent first (then oldest), that `accept` takes, or undefined: the open
 * index a page at a time, stopping at the first accepted. A worker asks before every claim, and an
 * outage opens one task per cluster (thousands), so not every open task each time (a drain was O(n²)).
 * Read from the index: may lag a write by a moment.
 */
export async function firstOpenTask(accept: (task: OpenTaskState) => boolean): Promise<OpenTaskState | undefined> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await queryPage(
      'investigations',
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :open',
        ...projection(OPEN_STATE_FIELDS),
        ExpressionAttributeValues: { ':open': OPEN },
        Limit: OPEN_TASKS_PAGE,
      },
      start,
    );
    const found = page.items.map(readOpenState).find(accept);
    if (found) return found;
    start = page.next;
  } while (start);
  return undefined;
}

/** How many tasks are pending or running: the index's open entries, their keys only (a task's texts run to a kilobyte). */
export async function countOpenTasks(): Promise<number> {
  const keys = await queryAll('investigations', {
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :open',
    ProjectionExpression: 'gsi1sk',
    ExpressionAttributeValues: { ':open': OPEN },
  });
  return keys.length;
}

/** A running task whose claim is older than the lease: its worker is presumed dead. */
export const isStale = (task: Pick<AgentTask, 'status' | 'claimed_at'>, leaseMs: number, now = new Date()) =>
  task.status === 'running' && task.claimed_at !== null && Date.parse(task.claimed_at) < now.getTime() - leaseMs;

/**
 * What a stopped attempt spent (its worker killed, timed out, out of memory: it wrote nothing of it): its model
 * calls as the usage ledger recorded them under its id since its claim (runSpend). Undefined for a task claimed
 * before the attempt's id was kept, or an attempt that made no call.
 */
export async function stoppedAttemptSpend(task: Pick<AgentTask, 'attempt_id' | 'claimed_at'>): Promise<AttemptSpend | undefined> {
  if (!task.attempt_id || !task.claimed_at) return undefined;
  const spend = await runSpend(task.attempt_id, task.claimed_at);
  return spend && { input_tokens: spend.input_tokens, output_tokens: spend.output_tokens, cost_usd: spend.cost_usd };
}

/** A task as its claim left it: running, as the attempt the claim named. */
export type ClaimedTask = AgentTask & { attempt_id: string };

/**
 * Takes a pending task, or a running one whose claim is older than the lease,
 * for `owner` (conditional update: of two racing workers exactly one gets it),
 * as attempt `attemptId` (the investigation id its model calls carry as their run).
 * Undefined when the task is not claimable (taken, finished, out of attempts).
 */
export async function claimTask(
  taskId: string,
  owner: string,
  leaseMs: number,
  now = new Date(),
  attemptId: string = randomUUID(),
): Promise<ClaimedTask | undefined> {
  const claimedAt = now.toISOString();
  const claim = await conditionalWrite(
    'investigations',
    taskKey(taskId),
    () =>
      updateItem('investigations', taskKey(taskId), {
        UpdateExpression: 'SET #status = :running, attempts = attempts + :one, claimed_at = :now, #owner = :owner, attempt_id = :attempt',
        ConditionExpression:
          'attribute_exists(pk) AND attempts < :max AND ' +
          '((#status = :pending AND (attribute_not_exists(not_before) OR not_before <= :now)) OR (#status = :running AND claimed_at < :stale))',
        ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':pending': 'pending',
          ':one': 1,
          ':now': claimedAt,
          ':owner': owner,
          ':attempt': attemptId,
          ':max': MAX_ATTEMPTS,
          ':stale': new Date(now.getTime() - leaseMs).toISOString(),
        },
        ReturnValues: 'ALL_OLD',
      }),
    // A claim whose answer was lost, met by its own retry: the task is already this one, claimed by this owner at this instant.
    (item) => item.status === 'running' && item.owner === owner && item.claimed_at === claimedAt,
  );
  if (!claim.written) return undefined;
  // Found in place after a lost answer: the stored task is the claim (what it was before is not known, so no take-over note).
  if ('found' in claim) return { ...readTask(claim.found), attempt_id: attemptId };
  const old = readTask(claim.result!); // ALL_OLD of an item the condition required to exist
  const claimed: ClaimedTask = { ...old, status: 'running', attempts: old.attempts + 1, claimed_at: claimedAt, owner, attempt_id: attemptId };
  if (old.status === 'running') {
    // Taken over from a worker that stopped: its attempt counts, and the record says why and what it spent (the
    // ledger's calls of it), so the investigation that ends the task counts that spend too.
    claimed.last_error = `attempt ${old.attempts} stopped without finishing (its worker did not finish within the lease)`;
    const spent = spentFields(old, await stoppedAttemptSpend(old));
    Object.assign(claimed, spent);
    const set = setFields({ last_error: claimed.last_error, ...spent });
    await updateItem('investigations', taskKey(taskId), {
      UpdateExpression: set.set,
      ConditionExpression: '#owner = :owner AND attempt_id = :attempt',
      ExpressionAttributeNames: { ...set.names, '#owner': 'owner' },
      ExpressionAttributeValues: { ...set.values, ':owner': owner, ':attempt': attemptId },
      ReturnValues: 'NONE',
    }).catch(() => undefined); // the claimed task carries both: this attempt's own close writes them too
  }
  return claimed;
}

/** The claim this worker holds: still running, same owner, same attempt. */
const holdsClaim = (task: AgentTask) => ({
  ConditionExpression: '#status = :running AND #owner = :owner AND attempts = :attempts',
  names: { '#status': 'status', '#owner': 'owner' },
  values: { ':running': 'running', ':owner': task.owner, ':attempts': task.attempts },
});

/** Closes the task (done or failed) and frees its cluster's guard, in one transaction. */
function closeTask(
  task: Pick<AgentTask, 'task_id' | 'cluster_id'>,
  condition: { ConditionExpression: string; names: Record<string, string>; values: Record<string, unknown> },
  fields: Record<string, unknown>,
  now: Date,
): TransactItem[] {
  const finished = now.toISOString();
  const set = setFields({ ...fields, finished_at: finished, gsi1pk: CLOSED, gsi1sk: `${finished}#${task.task_id}`, ttl: ttlAfterDays(now) });
  return [
    {
      Update: {
        TableName: table(),
        Key: taskKey(task.task_id),
        UpdateExpression: set.set,
        ConditionExpression: condition.ConditionExpression,
        ExpressionAttributeNames: { ...condition.names, ...set.names },
        ExpressionAttributeValues: { ...condition.values, ...set.values },
      },
    },
    {
      // The guard names this task by construction (a new task needs an empty guard), so no condition here.
      Update: {
        TableName: table(),
        Key: guardKey(task.cluster_id),
        UpdateExpression: 'SET last_finished_at = :now REMOVE active_task_id',
        ExpressionAttributeValues: { ':now': finished },
      },
    },
  ];
}

/**
 * The task is done: its investigation is stored, the task closed and the guard
 * freed, all or nothing (last_error keeps why an earlier attempt failed).
 * ConditionFailed when the claim is no longer ours.
 */
export async function completeTask(task: AgentTask, investigation: Investigation, now = new Date()): Promise<void> {
  await transactWrite([
    {
      Put: {
        TableName: table(),
        Item: {
          ...investigationKey(investigation.investigation_id),
          gsi1pk: INVESTIGATIONS,
          gsi1sk: `${investigation.created_at}#${investigation.investigation_id}`,
          ...investigation,
          ttl: ttlAfterDays(now),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...closeTask(task, holdsClaim(task), { status: 'done', investigation_id: investigation.investigation_id }, now),
  ]);
}

/**
 * A failed attempt: back to `pending` with the reason while attempts remain
 * (and the failure is worth retrying), else `failed` and the guard freed.
 * Returns the new status; ConditionFailed when the claim is no longer ours.
 */
export async function failTaskAttempt(
  task: AgentTask,
  reason: string,
  retryable = true,
  now = new Date(),
  retryAt = now,
  /** What the attempt spent on the model: kept on the task, so the investigation that ends it counts it too. */
  spent?: AttemptSpend,
): Promise<'pending' | 'failed'> {
  const error = reason.slice(0, 1000);
  const spend = spentFields(task, spent);
  if (retryable && task.attempts < MAX_ATTEMPTS) {
    const c = holdsClaim(task);
    const set = setFields({ status: 'pending', last_error: error, owner: null, claimed_at: null, not_before: retryAt.toISOString(), ...spend });
    await updateItem('investigations', taskKey(task.task_id), {
      UpdateExpression: set.set,
      ConditionExpression: c.ConditionExpression,
      ExpressionAttributeNames: { ...c.names, ...set.names },
      ExpressionAttributeValues: { ...c.values, ...set.values },
      ReturnValues: 'NONE',
    });
    return 'pending';
  }
  await transactWrite(closeTask(task, holdsClaim(task), { status: 'failed', last_error: error, ...spend }, now));
  return 'failed';
}

/**
 * A running task whose worker died on its last attempt: `failed`, unless someone touched it since it was read, with
 * what that attempt spent (the ledger's calls of it) added to the spend of the task's earlier attempts.
 */
export async function expireTask(
  task: Pick<AgentTask, 'task_id' | 'cluster_id' | 'claimed_at' | 'attempts' | 'attempt_id'>,
  now = new Date(),
): Promise<boolean> {
  const condition = {
    ConditionExpression: '#status = :running AND claimed_at = :claimed AND attempts = :attempts',
    names: { '#status': 'status' },
    values: { ':running': 'running', ':claimed': task.claimed_at, ':attempts': task.attempts },
  };
  const reason = `attempt ${task.attempts} of ${MAX_ATTEMPTS} stopped without finishing (its worker did not finish within the lease)`;
  const stopped = await stoppedAttemptSpend(task);
  let spend = {};
  if (stopped) {
    // Its earlier attempts' spend, read whole (the open index does not carry it, and a take-over writes it just
    // after its claim): the condition below fails if the task moved since.
    const current = await getTask(task.task_id);
    if (!current) return false; // gone: nothing left to expire
    spend = spentFields(current, stopped);
  }
  try {
    await transactWrite(closeTask(task, condition, { status: 'failed', last_error: reason, ...spend }, now));
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

export async function getInvestigation(investigationId: string): Promise<Investigation | undefined> {
  const item = await getItem('investigations', investigationKey(investigationId), true);
  return item ? readInvestigation(item) : undefined;
}

/** Investigations created at or after `since`, newest first, without their full reports (one index range). */
export async function listInvestigationsSince(since: Date): Promise<InvestigationSummary[]> {
  return (await queryTimeIndex('investigations', INVESTIGATIONS, { since }, SUMMARY_FIELDS)).map(readSummary);
}

/** The figures (no free text) of the investigations created at or after `since`, newest first (one index range). */
export async function listInvestigationFiguresSince(since: Date): Promise<InvestigationFigures[]> {
  return (await queryTimeIndex('investigations', INVESTIGATIONS, { since }, FIGURE_FIELDS)).map(readFigures);
}

/**
 * The summaries of a page of investigations (as listInvestigationFiguresSince names them), in the
 * page's order: the index range from the page's oldest to its newest, filtered to the page's ids so
 * only they come back. Investigations never change, so each one named is found.
 */
export async function investigationSummaries(page: readonly Pick<InvestigationSummary, 'investigation_id' | 'created_at'>[]): Promise<InvestigationSummary[]> {
  const found = new Map<string, InvestigationSummary>();
  for (let i = 0; i < page.length; i += IN_MAX) {
    const chunk = page.slice(i, i + IN_MAX);
    const keys = chunk.map((inv) => `${inv.created_at}#${inv.investigation_id}`).sort();
    const ids = Object.fromEntries(chunk.map((inv, n) => [`:id${n}`, inv.investigation_id]));
    const items = await queryAll('investigations', {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi',
      FilterExpression: `investigation_id IN (${Object.keys(ids).join(', ')})`,
      ...projection(SUMMARY_FIELDS),
      ExpressionAttributeValues: { ':pk': INVESTIGATIONS, ':lo': keys[0], ':hi': keys.at(-1), ...ids },
    });
    for (const summary of items.map(readSummary)) found.set(summary.investigation_id, summary);
  }
  return page.flatMap((inv) => found.get(inv.investigation_id) ?? []);
}
