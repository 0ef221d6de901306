// Alarms, dead letters and the service dashboard (issue 21 §5). Every function of the
// stack is watched the same way, every worker gets an on-failure queue, and every
// alarm notifies one topic; the stack hands over its functions, API stage and
// schedules, so nothing here names a route group or a worker by hand.
import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { WorkerName } from '../../shared/workers.js';
import type { GroupFunction } from './group-function.js';
import { functionSize } from '../function-sizes.js';

/** A function's Duration alarm fires at this share of its timeout (Maximum over 5 minutes), or later (below). */
export const DURATION_ALARM_FRACTION = 0.9;
/**
 * …but never before the timeout's last 15 s: the budgeted workers are built to run until 30 s before their
 * timeout (the agent worker claims tasks while an investigation still fits; the metrics puller keeps 30 s of
 * bookkeeping), and at 90% of 900 s or 600 s their normal runs paged.
 */
export const DURATION_ALARM_LAST_MS = 15_000;
/** The Duration alarm's threshold for a function with this timeout (and a declared run of `runsUpToMs`: a second past it, within the timeout). */
export const durationAlarmThresholdMs = (timeout: Duration, runsUpToMs = 0): number =>
  Math.min(
    Math.max(Math.round(timeout.toMilliseconds() * DURATION_ALARM_FRACTION), timeout.toMilliseconds() - DURATION_ALARM_LAST_MS, runsUpToMs + 1000),
    timeout.toMilliseconds() - 500,
  );
/**
 * The HTTP API's 5xx alarm: percentage of requests, over periods with at least API_5XX_MIN_REQUESTS requests; in
 * quieter periods, API_5XX_MIN_ERRORS 5xx answers count as a breach (a rate over a handful of requests says little,
 * and without this an outage at night, Alertmanager's few posts a period all answered 500, alarmed nobody).
 */
export const API_5XX_RATE_PERCENT = 5;
export const API_5XX_MIN_REQUESTS = 10;
export const API_5XX_MIN_ERRORS = 3;

/**
 * Asynchronous invocation of each worker (EventBridge schedules and `invokeWorker` both invoke
 * with InvocationType Event): Lambda's retries, and how long an event may wait in Lambda's
 * internal queue (throttled) before it goes to the worker's failure queue instead.
 * Typed by WorkerName, so a new worker does not compile until it is given one.
 */
export const WORKER_ASYNC_INVOKE: Record<WorkerName, { readonly retryAttempts: number; readonly maxEventAge: Duration }> = {
  // The next scheduled scan is 6 hours away, so a transient failure gets one more try; an older event is superseded by that scan.
  'patrol-worker': { retryAttempts: 1, maxEventAge: Duration.hours(6) },
  // Agent tasks keep their own retries (AGENT_RETRY_SECONDS, 3 attempts), and every recompute, 15 minutes apart, starts a worker again.
  'agent-worker': { retryAttempts: 0, maxEventAge: Duration.minutes(15) },
  // The next pull, 5 minutes later, resumes from each metric's watermark.
  'metrics-puller': { retryAttempts: 0, maxEventAge: Duration.minutes(5) },
  // The next scheduled recompute, 15 minutes later, does the same work on newer data.
  recompute: { retryAttempts: 0, maxEventAge: Duration.minutes(15) },
};

/** EventBridge's own retries when it cannot hand a scheduled event to Lambda (the event then goes to the worker's failure queue). */
const SCHEDULE_TARGET_RETRIES = 2;

const PERIOD = Duration.minutes(5);

export interface MonitoringProps {
  /** `fleet-health-<stage>-`: prefix of every alarm and queue name. */
  readonly prefix: string;
  /** `fleet-health-<stage>`: the dashboard's name. */
  readonly dashboardName: string;
  readonly routeGroups: ReadonlyMap<string, GroupFunction>;
  readonly workers: ReadonlyMap<WorkerName, GroupFunction>;
  /** The HTTP API's stage (`$default`), whose 5xx rate is alarmed. */
  readonly apiStage: HttpStage;
  /** Subscribes this address to the alarm topic (context `alarmEmail`). */
  readonly alarmEmail?: string;
}

export class Monitoring extends Construct {
  /** Every alarm's alarm and OK action. */
  readonly topic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  /** Each worker's on-failure destination (and its schedule target's dead-letter queue). */
  readonly failureQueues = new Map<WorkerName, sqs.Queue>();

  private readonly prefix: string;
  private readonly action: SnsAction;
  private readonly scheduleFailures: cloudwatch.GraphWidget;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.prefix = props.prefix;
    this.topic = this.createTopic(props.alarmEmail);
    this.action = new SnsAction(this.topic);

    // ── Workers: on-failure queue with a depth alarm, explicit async invoke settings ──
    for (const [name, fn] of props.workers) {
      const queue = new sqs.Queue(this, `${name}-failures`, {
        queueName: `${props.prefix}${name}-failures`,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // The longest SQS keeps a message: time to read why a run failed before it is gone.
        retentionPeriod: Duration.days(14),
      });
      Validations.of(queue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          `This queue is itself a dead-letter destination: the on-failure destination of ${name}'s asynchronous invocations ` +
          "(and the dead-letter queue of its schedule's target); cdk-nag recognises only redrive policies and a function's DeadLetterConfig.",
      });
      const { retryAttempts, maxEventAge } = WORKER_ASYNC_INVOKE[name];
      fn.function.configureAsyncInvoke({ onFailure: new SqsDestination(queue), retryAttempts, maxEventAge });
      this.failureQueues.set(name, queue);
      this.alarm(`${name}-failures`, {
        metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: PERIOD }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        description: `A run of ${name} failed (after Lambda's retries, or EventBridge could not start it): the failed event and its error are in the SQS queue ${props.prefix}${name}-failures (kept 14 days). Read them, fix the cause, then purge the queue.`,
        // SQS publishes a queue's metrics only while it is active: one holding an unread message and asked nothing
        // stops reporting after about 6 hours, and "missing is not breaching" would clear the alarm with the
        // failure still unread. Missing keeps the state; the purge (which makes the queue active) reports the 0.
        treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      });
      // The queue alarm sees only failures that reached the queue: one Lambda could not deliver (the queue deleted,
      // its policy or key changed) is counted here, and the event itself is gone.
      this.alarm(`${name}-undelivered`, {
        metric: fn.function.metric('DestinationDeliveryFailures', { statistic: 'Sum', period: PERIOD }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        description: `Lambda could not deliver a failed ${name} run to its queue ${props.prefix}${name}-failures in the last 5 minutes: the failed event is lost. Check that the queue exists and that its policy and encryption let Lambda send to it, then look at ${name}'s log for the failure.`,
      });
    }

    // ── Every function: errors, throttles, duration near its timeout ──────────
    const all = [...props.routeGroups, ...props.workers];
    for (const [name, fn] of all) this.watchFunction(name, fn);

    // ── HTTP API: 5xx rate of the $default stage ──────────────────────────────
    // HTTP APIs publish `5xx`, `4xx` and `Count` (not the REST API's 5XXError), by ApiId and ApiId+Stage.
    const stage = props.apiStage;
    const requests = stage.metricCount({ statistic: 'Sum', period: PERIOD });
    const serverErrors = stage.metricServerError({ statistic: 'Sum', period: PERIOD });
    const errorRate = new cloudwatch.MathExpression({
      // A quiet period's breach is its true rate (3 of at most 9 is over 33%, past the threshold): one alarm, whatever
      // the traffic, and the dashboard graph shows the rate it says. Nested IFs, not OR: the simplest metric math.
      expression: `IF(requests >= ${API_5XX_MIN_REQUESTS}, 100 * errors / requests, IF(errors >= ${API_5XX_MIN_ERRORS}, 100 * errors / requests, 0))`,
      usingMetrics: { requests, errors: serverErrors },
      period: PERIOD,
      label: '5xx rate (%)',
    });
    this.alarm('api-5xx-rate', {
      metric: errorRate,
      threshold: API_5XX_RATE_PERCENT,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      description: `At least ${API_5XX_RATE_PERCENT}% of API requests answered 5xx (or, in a period of fewer than ${API_5XX_MIN_REQUESTS} requests, at least ${API_5XX_MIN_ERRORS} did) in 2 of the last 3 five-minute periods. The route groups answer their own failures as problem+json 500s, which their Errors alarms do not count: look at the API access log and the route groups' logs.`,
    });

    // ── Dashboard ─────────────────────────────────────────────────────────────
    this.scheduleFailures = new cloudwatch.GraphWidget({ title: 'Schedules: events not delivered', width: 12, left: [] });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName, defaultInterval: Duration.hours(6) });
    this.dashboard.addWidgets(
      graph(
        'API requests, 4xx, 5xx',
        [
          requests.with({ label: 'requests' }),
          stage.metricClientError({ statistic: 'Sum', period: PERIOD, label: '4xx' }),
          serverErrors.with({ label: '5xx' }),
        ],
        8,
      ),
      graph('API 5xx rate (%)', [errorRate], 8),
      graph(
        'API latency (ms)',
        [
          stage.metricLatency({ statistic: 'p50', period: PERIOD, label: 'latency p50' }),
          stage.metricLatency({ statistic: 'p99', period: PERIOD, label: 'latency p99' }),
          stage.metricIntegrationLatency({ statistic: 'p99', period: PERIOD, label: 'integration p99' }),
        ],
        8,
      ),
    );
    for (const [title, functions, durationStatistic] of [
      ['Route groups', [...props.routeGroups], 'p99'],
      ['Workers', [...props.workers], 'Maximum'],
    ] as const) {
      this.dashboard.addWidgets(
        graph(
          `${title}: invocations`,
          functions.map(([name, fn]) => fn.function.metricInvocations({ period: PERIOD, label: name })),
        ),
        graph(
          `${title}: errors`,
          functions.map(([name, fn]) => fn.function.metricErrors({ period: PERIOD, label: name })),
        ),
        graph(
          `${title}: throttles`,
          functions.map(([name, fn]) => fn.function.metricThrottles({ period: PERIOD, label: name })),
        ),
        graph(
          `${title}: duration ${durationStatistic} (ms)`,
          functions.map(([name, fn]) => fn.function.metricDuration({ statistic: durationStatistic, period: PERIOD, label: name })),
        ),
      );
    }
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Failure queues: messages visible',
        width: 12,
        left: [...this.failureQueues].map(([name, queue]) =>
          queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: PERIOD, label: name }),
        ),
      }),
      this.scheduleFailures,
    );
  }

  /** Options of a worker's schedule target: EventBridge's retries, and the worker's failure queue for events it could not deliver. */
  scheduleTargetOptions(worker: WorkerName): { deadLetterQueue: sqs.IQueue; retryAttempts: number; maxEventAge: Duration } {
    const queue = this.failureQueues.get(worker);
    if (!queue) throw new Error(`${this.node.path}: no failure queue for worker ${worker}`);
    return { deadLetterQueue: queue, retryAttempts: SCHEDULE_TARGET_RETRIES, maxEventAge: WORKER_ASYNC_INVOKE[worker].maxEventAge };
  }

  /**
   * Alarms on a schedule's events EventBridge could not deliver to the worker, and graphs them. With a dead-letter
   * queue on the target, such an event counts as DeadLetterInvocations (FailedInvocations leaves those out), or as
   * InvocationsFailedToBeSentToDlq when even the queue refused it (the event is lost); FailedInvocations, any other.
   */
  watchSchedule(worker: WorkerName, rule: events.Rule): void {
    const ruleMetric = (metricName: string) =>
      new cloudwatch.Metric({ namespace: 'AWS/Events', metricName, dimensionsMap: { RuleName: rule.ruleName }, statistic: 'Sum', period: PERIOD });
    // Ids unique across the dashboard's graph, which shows every schedule's expression.
    const id = worker.replace(/\W/g, '_');
    const undelivered = new cloudwatch.MathExpression({
      expression: `FILL(dead_${id}, 0) + FILL(unsent_${id}, 0) + FILL(failed_${id}, 0)`,
      usingMetrics: {
        [`dead_${id}`]: ruleMetric('DeadLetterInvocations'),
        [`unsent_${id}`]: ruleMetric('InvocationsFailedToBeSentToDlq'),
        [`failed_${id}`]: ruleMetric('FailedInvocations'),
      },
      period: PERIOD,
      label: worker,
    });
    this.alarm(`${worker}-schedule-failed`, {
      metric: undelivered,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      description: `EventBridge could not invoke ${worker} on its schedule (after ${SCHEDULE_TARGET_RETRIES} retries): the event is in ${this.prefix}${worker}-failures, or lost if that queue refused it too.`,
    });
    this.scheduleFailures.addLeftMetric(undelivered);
  }

  private watchFunction(name: string, fn: GroupFunction): void {
    const timeout = fn.function.timeout;
    if (!timeout) throw new Error(`${fn.node.path}: a function without a timeout cannot have a duration alarm`);
    this.alarm(`${name}-errors`, {
      metric: fn.function.metricErrors({ statistic: 'Sum', period: PERIOD }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      description: `The ${name} Lambda failed (an unhandled error, out of memory, or its timeout) in the last 5 minutes: see its log group /aws/lambda/${this.prefix}${name}.`,
    });
    this.alarm(`${name}-throttles`, {
      metric: fn.function.metricThrottles({ statistic: 'Sum', period: PERIOD }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      description: `Invocations of the ${name} Lambda were throttled (account or function concurrency limit) in the last 5 minutes.`,
    });
    const thresholdMs = durationAlarmThresholdMs(timeout, functionSize(name)?.runsUpToMs);
    this.alarm(`${name}-duration`, {
      metric: fn.function.metricDuration({ statistic: 'Maximum', period: PERIOD }),
      threshold: thresholdMs,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      description: `A run of the ${name} Lambda took at least ${thresholdMs} ms of its ${timeout.toSeconds()} s timeout: it is close to being cut off.`,
    });
  }

  /** One alarm, named `<prefix><name>`, notifying the topic when it fires and when it clears; missing data (no traffic) is not breaching unless said. */
  private alarm(
    name: string,
    options: {
      metric: cloudwatch.IMetric;
      threshold: number;
      comparisonOperator: cloudwatch.ComparisonOperator;
      description: string;
      evaluationPeriods?: number;
      datapointsToAlarm?: number;
      treatMissingData?: cloudwatch.TreatMissingData;
    },
  ): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, `${name}-alarm`, {
      alarmName: `${this.prefix}${name}`,
      alarmDescription: options.description,
      metric: options.metric,
      threshold: options.threshold,
      comparisonOperator: options.comparisonOperator,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      datapointsToAlarm: options.datapointsToAlarm,
      treatMissingData: options.treatMissingData ?? cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    return alarm;
  }

  /**
   * The alarm topic: encrypted with a key of its own (CloudWatch cannot publish to a topic under the AWS-managed SNS key),
   * publishing over TLS only, and open to CloudWatch alarms of this account.
   */
  private createTopic(alarmEmail: string | undefined): sns.Topic {
    const stack = Stack.of(this);
    const account = new iam.AccountRootPrincipal();
    // An explicit key policy: the default one grants kms:* to the account, and no policy of this stack allows a wildcard action.
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `Encrypts the Fleet Health alarm topic (${stack.stackName})`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
      policy: new iam.PolicyDocument({
        statements: [
          new iam.PolicyStatement({
            sid: 'KeyAdministrationByTheAccount',
            principals: [account],
            actions: [
              'kms:DescribeKey',
              'kms:GetKeyPolicy',
              'kms:PutKeyPolicy',
              'kms:ListKeyPolicies',
              'kms:GetKeyRotationStatus',
              'kms:EnableKeyRotation',
              'kms:DisableKeyRotation',
              'kms:ListKeyRotations',
              'kms:RotateKeyOnDemand',
              'kms:EnableKey',
              'kms:DisableKey',
              'kms:UpdateKeyDescription',
              'kms:CreateAlias',
              'kms:UpdateAlias',
              'kms:DeleteAlias',
              'kms:ListResourceTags',
              'kms:TagResource',
              'kms:UntagResource',
              'kms:ListGrants',
              'kms:RevokeGrant',
              'kms:ScheduleKeyDeletion',
              'kms:CancelKeyDeletion',
            ],
            resources: ['*'],
          }),
          new iam.PolicyStatement({
            // Principals of the account that IAM allows may publish too (e.g. a test message to check a subscription).
            sid: 'PublishToTheTopicByTheAccount',
            principals: [account],
            actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
            resources: ['*'],
          }),
          new iam.PolicyStatement({
            sid: 'PublishToTheTopicByCloudWatchAlarms',
            principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
            actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
            resources: ['*'],
            // This account's alarms only, as the topic policy below (no confused deputy).
            conditions: {
              StringEquals: { 'aws:SourceAccount': stack.account },
              ArnLike: {
                'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
              },
            },
          }),
        ],
      }),
    });
    const topic = new sns.Topic(this, 'AlarmTopic', {
      topicName: `${this.prefix}alarms`,
      displayName: `Fleet Health alarms (${stack.stackName})`,
      masterKey: key,
      enforceSSL: true,
    });
    // A topic policy replaces SNS's default one (which lets the owner account's services publish): name CloudWatch alarms explicitly.
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisAccount',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
          },
        },
      }),
    );
    if (alarmEmail) topic.addSubscription(new EmailSubscription(alarmEmail));
    return topic;
  }
}

function graph(title: string, metrics: cloudwatch.IMetric[], width = 6): cloudwatch.GraphWidget {
  return new cloudwatch.GraphWidget({ title, left: metrics, width });
}
