// The stack through template assertions (DESIGN §11.6). Synthesized once, with
// Lambda bundling skipped (`aws:cdk:bundling-stacks: []`), under the feature flags
// of cdk.json, then checked against the route table, the table definitions and
// cdk-nag's AWS Solutions rules.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { FUNCTION_KIND_TAG } from '../../infra/constructs/group-function.js';
import { DURATION_ALARM_FRACTION, DURATION_ALARM_LAST_MS, WORKER_ASYNC_INVOKE } from '../../infra/constructs/monitoring.js';
import { REPO_ROOT } from '../../infra/bundling.js';
import { functionSize } from '../../infra/function-sizes.js';
import { FleetHealthStack, fleetHealthPropsFromContext } from '../../infra/fleet-health-stack.js';
import { functionConcerns } from '../../infra/local/functions.js';
import { BUILT_POLICY, SECURITY_HEADERS } from '../../infra/web/csp.js';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../../shared/auth/caller.js';
import { ldapSettings } from '../../shared/config/ldap.js';
import { TABLES, TABLE_NAMES, type TableName } from '../../shared/db/tables.js';
import type { TableAccess } from '../../shared/http/route.js';
import { ROUTE_GROUPS, allRoutes } from '../../shared/routes/all-groups.js';
import { rateExpression, scheduledWorkers, WORKERS, type WorkerDeclaration } from '../../shared/workers.js';
import { specEndpoints } from '../support/spec.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';
import { PATROL_LOCK } from '../../shared/patrol/lock.js';
import { PULL_LOCK } from '../../shared/metric-pull/lock.js';
import { refreshLockName } from '../../shared/scoring/refresh-claim.js';

type Json = Record<string, any>;

const cdkContext = (JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Json }).context;
const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
const props = fleetHealthPropsFromContext(app);
const stack = new FleetHealthStack(app, `FleetHealth-${props.stage}`, props);
const template = Template.fromStack(stack);
const resources = template.toJSON().Resources as Record<string, Json>;
const prefix = `fleet-health-${props.stage}-`;

const ofType = (type: string): [string, Json][] => Object.entries(resources).filter(([, r]) => r.Type === type);
const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** Our functions (tagged by GroupFunction), by route-group or worker name; the deploy steps (custom resources' handlers) apart. */
const functions = new Map<string, { id: string; resource: Json; kind: string }>();
const deploySteps = new Map<string, { id: string; resource: Json; kind: string }>();
for (const [id, resource] of ofType('AWS::Lambda::Function')) {
  const kind = asArray<Json>(resource.Properties.Tags).find((t) => t.Key === FUNCTION_KIND_TAG)?.Value as string | undefined;
  if (!kind) continue; // CDK-internal (the BucketDeployment handler, the custom resource provider's framework)
  const name = String(resource.Properties.FunctionName).slice(prefix.length);
  (kind === 'deploy' ? deploySteps : functions).set(name, { id, resource, kind });
}

const tableIds = new Map<TableName, string>(
  ofType('AWS::DynamoDB::Table').map(([id, r]) => [String(r.Properties.TableName).slice(prefix.length) as TableName, id]),
);

/** Statements of the identity policies attached to a function's role. */
function roleStatements(functionName: string): Json[] {
  const fn = functions.get(functionName) ?? deploySteps.get(functionName);
  if (!fn) throw new Error(`no function ${functionName}`);
  return statementsOfRole(fn.resource.Properties.Role['Fn::GetAtt'][0] as string);
}

/** Statements of the identity policies attached to a role. */
function statementsOfRole(roleId: string): Json[] {
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => asArray<Json>(p.Properties.Roles).some((r) => r.Ref === roleId))
    .flatMap(([, p]) => asArray<Json>(p.Properties.PolicyDocument.Statement));
}

/** Tables whose ARN (or index ARN) a statement names, with the statement's actions. */
function tableGrants(statements: Json[]): Map<TableName, Set<string>> {
  const byId = new Map([...tableIds].map(([name, id]) => [id, name]));
  const grants = new Map<TableName, Set<string>>();
  for (const statement of statements) {
    for (const resource of asArray<unknown>(statement.Resource)) {
      const ids = JSON.stringify(resource).match(/"Fn::GetAtt":\["([A-Za-z0-9]+)","Arn"\]/g) ?? [];
      for (const ref of ids) {
        const name = byId.get(ref.split('"')[3]!);
        if (!name) continue;
        const actions = grants.get(name) ?? new Set<string>();
        for (const action of asArray<string>(statement.Action)) actions.add(action);
        grants.set(name, actions);
      }
    }
  }
  return grants;
}

const READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem'];
const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
/** Spelled out here, not read from shared/db/access.ts, so a wrong level there fails. */
const ACCESS_ACTIONS: Record<TableAccess, string[]> = {
  read: READ_ACTIONS,
  append: ['dynamodb:PutItem'],
  readappend: [...READ_ACTIONS, 'dynamodb:PutItem'],
  readupdate: [...READ_ACTIONS, 'dynamodb:UpdateItem'],
  readputupdate: [...READ_ACTIONS, 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  readwrite: [...READ_ACTIONS, ...WRITE_ACTIONS],
};

/** Each declared table gets exactly the actions of the operations the client makes for its access: no Scan, no streams, no DescribeTable. */
function expectTableAccess(name: string, declared: Partial<Record<TableName, TableAccess>>): void {
  const granted = tableGrants(roleStatements(name));
  expect([...granted.keys()].sort(), `${name}: tables its role can touch`).toEqual(Object.keys(declared).sort());
  for (const [table, access] of Object.entries(declared) as [TableName, TableAccess][]) {
    expect([...granted.get(table)!].sort(), `${name} on ${table} (${access})`).toEqual([...ACCESS_ACTIONS[access]].sort());
  }
}

describe('HTTP API', () => {
  const routes = ofType('AWS::ApiGatewayV2::Route');

  it('has one route per declaration in the route table, keyed exactly as declared, and a HEAD beside each GET', () => {
    const declared = allRoutes().flatMap(({ route }) => [`${route.method} ${route.path}`, ...(route.method === 'GET' ? [`HEAD ${route.path}`] : [])]);
    expect(routes).toHaveLength(declared.length);
    expect(routes.map(([, r]) => r.Properties.RouteKey as string).sort()).toEqual([...declared].sort());
  });

  it('declares every endpoint of the API contract', () => {
    const declared = new Set(allRoutes().map(({ route }) => `${route.method} ${route.path}`));
    const endpoints = specEndpoints();
    expect(endpoints.length).toBeGreaterThan(50);
    expect(endpoints.filter((e) => !declared.has(e))).toEqual([]);
  });

  it("sends each route to its group's Lambda with payload format 2.0", () => {
    const integrations = Object.fromEntries(ofType('AWS::ApiGatewayV2::Integration'));
    for (const [, route] of routes) {
      const integrationId = (route.Properties.Target['Fn::Join'][1][1] as Json).Ref as string;
      const integration = integrations[integrationId]!.Properties;
      expect(integration.PayloadFormatVersion).toBe('2.0');
      const key = String(route.Properties.RouteKey).replace(/^HEAD /, 'GET ');
      const target = allRoutes().find(({ route: r }) => `${r.method} ${r.path}` === key)!;
      expect(integration.IntegrationUri['Fn::GetAtt'][0]).toBe(functions.get(target.group.name)!.id);
    }
  });

  it('leaves CORS preflight to the Lambda behind the catch-all route', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP', CorsConfiguration: Match.absent() });
    expect(routes.map(([, r]) => r.Properties.RouteKey)).toContain('ANY /api/{proxy+}');
  });

  it('logs access as JSON and throttles the $default stage', () => {
    const [[, stage]] = ofType('AWS::ApiGatewayV2::Stage') as [[string, Json]];
    expect(stage.Properties).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingBurstLimit: 200, ThrottlingRateLimit: 100 },
    });
    const format = JSON.parse(stage.Properties.AccessLogSettings.Format as string) as Json;
    expect(format).toMatchObject({ requestId: '$context.requestId', routeKey: '$context.routeKey', status: '$context.status' });
  });
});

describe('Lambda functions', () => {
  const expected = [...ROUTE_GROUPS.map((g) => g.name), ...Object.keys(WORKERS)];

  it('has one function per route group and per worker', () => {
    expect([...functions.keys()].sort()).toEqual([...expected].sort());
    for (const group of ROUTE_GROUPS) expect(functions.get(group.name)!.kind).toBe('route-group');
    for (const worker of Object.keys(WORKERS)) expect(functions.get(worker)!.kind).toBe('worker');
  });

  it('gives every function the runtime, architecture, memory, timeout and a log group with retention', () => {
    const logGroups = Object.fromEntries(ofType('AWS::Logs::LogGroup'));
    for (const [name, { resource }] of functions) {
      const p = resource.Properties;
      expect(p.Runtime, name).toBe('nodejs22.x');
      expect(p.Architectures, name).toEqual(['arm64']);
      expect(p.Handler, name).toBe('index.handler');
      expect(p.MemorySize, name).toBeGreaterThanOrEqual(512);
      const worker = WORKERS[name as keyof typeof WORKERS];
      expect(p.Timeout, name).toBe(worker ? worker.timeoutSeconds : 29);
      const logGroupId = p.LoggingConfig.LogGroup.Ref as string;
      expect(logGroups[logGroupId]?.Properties.RetentionInDays, name).toBeGreaterThan(0);
    }
  });

  it('sets the shared environment, the JWT key on route groups and worker names where invoked', () => {
    for (const [name, { resource, kind }] of functions) {
      const env = resource.Properties.Environment.Variables as Json;
      expect(env, name).toMatchObject({
        STAGE: props.stage,
        TABLE_PREFIX: prefix,
        SERVICE_NAME: 'fleet-health',
        LOG_LEVEL: 'info',
      });
      // No --enable-source-maps: the .map files ship beside the bundles for offline symbolication (infra/README.md).
      // The recompute worker runs V8's defaults (shared/workers.ts), every other Lambda a 64 MB young generation.
      expect(env.NODE_OPTIONS, name).toBe(name === 'recompute' ? undefined : '--max-semi-space-size=64');
      expect(typeof env.CORS_ORIGINS, name).toBe('string');
      expect(env.JWT_SECRET_ARN !== undefined, `${name} JWT_SECRET_ARN`).toBe(kind === 'route-group');
    }
    const envOf = (name: string): Json => functions.get(name)!.resource.Properties.Environment.Variables as Json;
    expect(envOf('patrol').PATROL_WORKER_FUNCTION).toEqual({ Ref: functions.get('patrol-worker')!.id });
    expect(envOf('recompute').AGENT_WORKER_FUNCTION).toEqual({ Ref: functions.get('agent-worker')!.id });
  });

  it('gives the ingest token to the ingest Lambda only, and only it may read that secret', () => {
    const [secretId] = ofType('AWS::SecretsManager::Secret').find(([id]) => id.startsWith('IngestToken'))!;
    for (const [name, { resource }] of functions) {
      const env = resource.Properties.Environment.Variables as Json;
      expect(env.INGEST_TOKEN_ARN, name).toEqual(name === 'ingest' ? { Ref: secretId } : undefined);
      const readsIt = JSON.stringify(roleStatements(name)).includes(`"Ref":"${secretId}"`);
      expect(readsIt, `${name} reads the ingest token`).toBe(name === 'ingest');
    }
  });
  it("gives the origin token CloudFront sends to the route groups that audit, and only they may read it; CloudFront's API origin sends it", () => {
    const [secretId] = ofType('AWS::SecretsManager::Secret').find(([id]) => id.startsWith('OriginVerifyToken'))!;
    const auditing = ['ai-issues', 'auth', 'issues', 'patrol', 'settings'];
    expect(
      functionConcerns()
        .filter((f) => f.concerns.includes('edge'))
        .map((f) => f.name)
        .sort(),
    ).toEqual(auditing);
    for (const [name, { resource }] of functions) {
      const env = resource.Properties.Environment.Variables as Json;
      expect(env.ORIGIN_VERIFY_TOKEN_ARN, name).toEqual(auditing.includes(name) ? { Ref: secretId } : undefined);
      const readsIt = JSON.stringify(roleStatements(name)).includes(`"Ref":"${secretId}"`);
      expect(readsIt, `${name} reads the origin token`).toBe(auditing.includes(name));
    }
    const [[, distribution]] = ofType('AWS::CloudFront::Distribution') as [[string, Json]];
    const config = distribution.Properties.DistributionConfig as Json;
    const apiOriginId = asArray<Json>(config.CacheBehaviors).find((b) => b.PathPattern === '/api/*')!.TargetOriginId;
    const apiOrigin = asArray<Json>(config.Origins).find((o) => o.Id === apiOriginId)!;
    // The value is a CloudFormation dynamic reference to the secret, resolved at deploy: the token is never in the template.
    expect(apiOrigin.OriginCustomHeaders).toEqual([
      { HeaderName: ORIGIN_VERIFY_HEADER, HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']] } },
    ]);
    const defaultOrigin = asArray<Json>(config.Origins).find((o) => o.Id === config.DefaultCacheBehavior.TargetOriginId)!;
    expect(defaultOrigin.OriginCustomHeaders).toBeUndefined();
  });
});

describe('IAM', () => {
  it('has no wildcard action in any statement that allows (identity policies: in any statement)', () => {
    const offending: string[] = [];
    const visit = (node: unknown, where: string, identityPolicy: boolean): void => {
      if (Array.isArray(node)) {
        for (const [i, n] of node.entries()) visit(n, `${where}[${i}]`, identityPolicy);
        return;
      }
      if (node === null || typeof node !== 'object') return;
      const obj = node as Json;
      for (const statement of Array.isArray(obj.Statement) ? (obj.Statement as Json[]) : []) {
        // A resource policy's Deny (enforceSSL's `s3:*` without TLS) only takes access away.
        if (!identityPolicy && statement.Effect === 'Deny') continue;
        for (const action of asArray<string>(statement.Action)) if (action.includes('*')) offending.push(`${where}: ${action}`);
      }
      for (const [key, value] of Object.entries(obj)) visit(value, `${where}.${key}`, identityPolicy);
    };
    for (const [id, resource] of Object.entries(resources)) {
      visit(resource.Properties, id, /^AWS::IAM::(Policy|ManagedPolicy|Role|User|Group)$/.test(resource.Type as string));
    }
    expect(offending).toEqual([]);
  });

  it("lets the metrics puller only query Prometheus, and CloudWatch use the alarm key only for this account's alarms", () => {
    const aps = roleStatements('metrics-puller').flatMap((statement) => asArray<string>(statement.Action).filter((action) => action.startsWith('aps:')));
    expect(aps).toEqual(['aps:QueryMetrics']);
    const statements = ofType('AWS::KMS::Key').flatMap(([, key]) => asArray<Json>(key.Properties.KeyPolicy.Statement));
    const alarms = statements.find((statement) => statement.Sid === 'PublishToTheTopicByCloudWatchAlarms')!;
    expect(Object.keys(alarms.Condition?.StringEquals ?? {})).toEqual(['aws:SourceAccount']);
    expect(JSON.stringify(alarms.Condition?.ArnLike?.['aws:SourceArn'])).toContain(':alarm:*');
  });

  it('uses no AWS managed policy on our function roles', () => {
    for (const [, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('lets each route group touch exactly the tables it declares, reading or writing as declared', () => {
    for (const group of ROUTE_GROUPS) expectTableAccess(group.name, group.tables);
  });

  it('lets each worker touch exactly the tables it declares', () => {
    for (const [name, worker] of Object.entries(WORKERS)) expectTableAccess(name, worker.tables);
  });

  it('lets a function reach only the lease locks it declares (their partition keys), and every lock its code takes is declared', () => {
    const locksId = tableIds.get('locks')!;
    // Spelled out here, not read from LEASES, so a wrong pattern there fails.
    const expected: Record<string, string[]> = {
      fleet: ['LOCK#refresh:*'],
      health: ['LOCK#refresh:*'],
      settings: ['LOCK#refresh:*'],
      recompute: ['LOCK#refresh:*'],
      patrol: ['LOCK#patrol'],
      'patrol-worker': ['LOCK#patrol'],
      'metric-sources': ['LOCK#metrics-puller'],
      'metrics-puller': ['LOCK#metrics-puller'],
    };
    const holders: string[] = [];
    for (const name of [...functions.keys(), ...deploySteps.keys()]) {
      const onLocks = roleStatements(name).filter((st) => JSON.stringify(st.Resource).includes(`"${locksId}"`));
      if (onLocks.length === 0) continue;
      holders.push(name);
      expect(
        onLocks.map((st) => st.Condition),
        name,
      ).toEqual([{ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': expected[name] } }]);
    }
    expect(holders.sort()).toEqual(Object.keys(expected).sort());
    // The names the code gives its locks are the ones granted.
    expect([`LOCK#${PATROL_LOCK}`, `LOCK#${PULL_LOCK}`, `LOCK#${refreshLockName(['risk', 'fleet'])}`]).toEqual([
      'LOCK#patrol',
      'LOCK#metrics-puller',
      'LOCK#refresh:fleet,risk',
    ]);
  });

  it('lets no function delete or batch-write the LLM ledger: what the AI cost stays, its writers only put and update', () => {
    const writers: string[] = [];
    for (const name of [...functions.keys(), ...deploySteps.keys()]) {
      const actions = [...(tableGrants(roleStatements(name)).get('llm-usage') ?? [])];
      expect(
        actions.filter((a) => /dynamodb:(DeleteItem|BatchWriteItem)/.test(a)),
        name,
      ).toEqual([]);
      if (actions.includes('dynamodb:PutItem')) writers.push(name);
    }
    expect(writers.sort()).toEqual(['agent-worker', 'chat', 'patrol-worker', 'recompute']);
  });

  it('lets no function update, delete or batch-write audit entries: its writers only put new ones, and only settings reads them', () => {
    const auditId = tableIds.get('audit')!;
    const onAudit = (name: string) => roleStatements(name).filter((st) => JSON.stringify(st.Resource).includes(`"${auditId}"`));
    const writers: string[] = [];
    const readers: string[] = [];
    for (const name of [...functions.keys(), ...deploySteps.keys()]) {
      const actions = onAudit(name).flatMap((st) => asArray<string>(st.Action));
      expect(
        actions.filter((a) => /dynamodb:(UpdateItem|DeleteItem|BatchWriteItem)/.test(a)),
        name,
      ).toEqual([]);
      if (actions.includes('dynamodb:PutItem')) writers.push(name);
      if (actions.includes('dynamodb:Query')) readers.push(name);
    }
    expect(writers.sort()).toEqual(['ai-issues', 'auth', 'bootstrap', 'issues', 'patrol', 'settings']);
    expect(readers).toEqual(['settings']);
    // Appending queries nothing, so it is granted no index of the table either.
    for (const name of ['ai-issues', 'auth', 'bootstrap', 'issues', 'patrol']) expect(JSON.stringify(onAudit(name)), name).not.toContain('/index/*');
  });

  it('spot check: llm-usage references the llm-usage table and nothing undeclared; auth never sees the issues table', () => {
    const declared = new Set(Object.keys(ROUTE_GROUPS.find((g) => g.name === 'llm-usage')!.tables));
    expect(declared.has('llm-usage')).toBe(true);
    const llmUsage = JSON.stringify(roleStatements('llm-usage'));
    for (const [table, id] of tableIds) expect(llmUsage.includes(`"${id}"`), `llm-usage → ${table}`).toBe(declared.has(table));
    expect(llmUsage).not.toMatch(/dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)/);
    expect(JSON.stringify(roleStatements('auth'))).not.toContain(`"${tableIds.get('issues')}"`);
  });

  it('lets a function read only the secrets its concerns bring (route groups: the JWT key; the puller: its credential), and invokes only the named worker', () => {
    const concerns = new Map(functionConcerns().map((f) => [f.name, f.concerns]));
    for (const [name] of functions) {
      const actions = roleStatements(name).flatMap((s) => asArray<string>(s.Action));
      // Secrets the stack always creates: the JWT key (route groups) and the Prometheus credential (the puller);
      // the optional integrations' (LLM, tickets, LDAP, embed) only when configured, which this stack is not.
      const withSecrets = concerns.get(name)!.some((c) => c === 'tokens' || c === 'prometheus');
      expect(actions.includes('secretsmanager:GetSecretValue'), name).toBe(withSecrets);
    }
    const invokes = (name: string): unknown[] =>
      roleStatements(name)
        .filter((s) => asArray<string>(s.Action).includes('lambda:InvokeFunction'))
        .flatMap((s) => asArray(s.Resource));
    expect(invokes('patrol')).toEqual([{ 'Fn::GetAtt': [functions.get('patrol-worker')!.id, 'Arn'] }]);
    // recompute invokes itself too (a queued run waits on in a new invocation), named as text: a reference to
    // itself in its policy or environment would be a dependency cycle CloudFormation refuses.
    const ownArn = {
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':lambda:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:function:${prefix}recompute`]],
    };
    expect(invokes('recompute')).toEqual([{ 'Fn::GetAtt': [functions.get('agent-worker')!.id, 'Arn'] }, ownArn]);
    expect(functions.get('recompute')!.resource.Properties.Environment.Variables).toMatchObject({ RECOMPUTE_FUNCTION: `${prefix}recompute` });
    expect(invokes('metric-sources')).toEqual([{ 'Fn::GetAtt': [functions.get('metrics-puller')!.id, 'Arn'] }]);
    expect(invokes('auth')).toEqual([]);
  });

  it("writes each function's logs only to its own log group", () => {
    for (const [name, { resource }] of functions) {
      const logStatements = roleStatements(name).filter((s) => asArray<string>(s.Action).some((a) => a.startsWith('logs:')));
      expect(logStatements, name).toHaveLength(1);
      expect(asArray<string>(logStatements[0]!.Action).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      expect(logStatements[0]!.Resource).toEqual({ 'Fn::GetAtt': [resource.Properties.LoggingConfig.LogGroup.Ref, 'Arn'] });
    }
  });
});

describe('DynamoDB', () => {
  const tables = ofType('AWS::DynamoDB::Table');

  it('has one table per definition, retained, protected, with point-in-time recovery', () => {
    expect(tables).toHaveLength(TABLE_NAMES.length);
    expect([...tableIds.keys()].sort()).toEqual([...TABLE_NAMES].sort());
    for (const [id, table] of tables) {
      expect(table.DeletionPolicy, id).toBe('Retain');
      expect(table.UpdateReplacePolicy, id).toBe('Retain');
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      });
    }
  });

  it('sets TTL and the GSIs from the definitions', () => {
    for (const name of TABLE_NAMES) {
      const table = resources[tableIds.get(name)!]!.Properties;
      const def = TABLES[name];
      expect(table.TimeToLiveSpecification, name).toEqual(def.ttl ? { AttributeName: 'ttl', Enabled: true } : undefined);
      expect(
        asArray<Json>(table.GlobalSecondaryIndexes).map((i) => i.IndexName),
        name,
      ).toEqual(def.indexes.map((i) => i.name));
      for (const [i, index] of asArray<Json>(table.GlobalSecondaryIndexes).entries()) {
        const include = def.indexes[i]!.include;
        expect(index.Projection, name).toEqual(include ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...include] } : { ProjectionType: 'ALL' });
      }
    }
  });
});

describe('schedules', () => {
  const rules = ofType('AWS::Events::Rule');
  const ruleFor = (name: string): Json | undefined =>
    rules.find(([, r]) => asArray<Json>(r.Properties.Targets).some((t) => t.Arn?.['Fn::GetAtt']?.[0] === functions.get(name)!.id))?.[1];

  it('has exactly one EventBridge rule per declared schedule, with its interval and event', () => {
    const declared = scheduledWorkers();
    expect(declared.map((d) => d.name).sort()).toEqual(['metrics-puller', 'patrol-worker', 'recompute']);
    expect(rules).toHaveLength(declared.length);
    for (const { name, schedule } of declared) {
      const rule = ruleFor(name);
      expect(rule?.Properties.ScheduleExpression, name).toBe(rateExpression(schedule.everyMinutes));
      expect(JSON.parse(rule!.Properties.Targets[0].Input as string), name).toEqual(schedule.event ?? {});
    }
  });

  it('runs the patrol every 6 hours as a scheduled report and recomputes every 15 minutes (the declared timetable)', () => {
    expect(ruleFor('patrol-worker')?.Properties.ScheduleExpression).toBe('rate(6 hours)');
    expect(JSON.parse(ruleFor('patrol-worker')!.Properties.Targets[0].Input as string)).toEqual({ report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
    expect(ruleFor('recompute')?.Properties.ScheduleExpression).toBe('rate(15 minutes)');
  });

  it('takes a patrolSchedule context value over the declared patrol timetable', () => {
    const custom = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], patrolSchedule: 'cron(0 6 * * ? *)' } });
    const stack = new FleetHealthStack(custom, 'CustomPatrol', fleetHealthPropsFromContext(custom));
    const expressions = Object.values(Template.fromStack(stack).findResources('AWS::Events::Rule')).map((r) => (r as Json).Properties.ScheduleExpression);
    expect(expressions.sort()).toEqual(['cron(0 6 * * ? *)', 'rate(15 minutes)', 'rate(5 minutes)']);
  });

  it('writes rate expressions as EventBridge requires', () => {
    expect([1, 15, 60, 360, 1440, 2880, 90].map(rateExpression)).toEqual([
      'rate(1 minute)',
      'rate(15 minutes)',
      'rate(1 hour)',
      'rate(6 hours)',
      'rate(1 day)',
      'rate(2 days)',
      'rate(90 minutes)',
    ]);
    expect(() => rateExpression(0)).toThrow();
    expect(() => rateExpression(1.5)).toThrow();
  });
});

describe('SPA', () => {
  it('serves a private, SSL-only, logged bucket through CloudFront with an SPA rewrite and /api/* to the API', () => {
    const [[, distribution]] = ofType('AWS::CloudFront::Distribution') as [[string, Json]];
    const config = distribution.Properties.DistributionConfig as Json;
    expect(config.CustomErrorResponses).toBeUndefined();
    expect(config.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(config.DefaultCacheBehavior.FunctionAssociations).toEqual([expect.objectContaining({ EventType: 'viewer-request' })]);
    const api = asArray<Json>(config.CacheBehaviors).find((b) => b.PathPattern === '/api/*');
    expect(api).toMatchObject({
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad', // Managed-CachingDisabled
    });
    // Every viewer header but Host, no cookies: with cookies forwarded, CloudFront drops If-None-Match (the watch pages' 304s).
    const [[policyId, policy]] = ofType('AWS::CloudFront::OriginRequestPolicy') as [[string, Json]];
    expect(api?.OriginRequestPolicyId).toEqual({ Ref: policyId });
    expect(policy.Properties.OriginRequestPolicyConfig).toMatchObject({
      HeadersConfig: { HeaderBehavior: 'allExcept', Headers: ['Host'] },
      QueryStringsConfig: { QueryStringBehavior: 'all' },
      CookiesConfig: { CookieBehavior: 'none' },
    });
    expect(config.Logging).toBeDefined();
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LoggingConfiguration: Match.objectLike({ LogFilePrefix: 'site-bucket/' }),
    });
  });

  /** The security headers CloudFront adds to the answers of the behaviour `pathPattern` names (the default one without). */
  const headersOf = (pathPattern?: string): Json => {
    const [[, distribution]] = ofType('AWS::CloudFront::Distribution') as [[string, Json]];
    const config = distribution.Properties.DistributionConfig as Json;
    const behaviour = pathPattern ? asArray<Json>(config.CacheBehaviors).find((b) => b.PathPattern === pathPattern)! : config.DefaultCacheBehavior;
    const policyId = (behaviour.ResponseHeadersPolicyId as Json | undefined)?.Ref as string | undefined;
    expect(policyId, `${pathPattern ?? 'default'}: a response headers policy`).toBeDefined();
    return resources[policyId!]!.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig as Json;
  };
  // What the local server sends too (infra/web/csp.ts), so the two cannot drift apart.
  const securityHeaders = {
    ContentTypeOptions: { Override: true },
    FrameOptions: { FrameOption: SECURITY_HEADERS['X-Frame-Options'], Override: true },
    ReferrerPolicy: { ReferrerPolicy: SECURITY_HEADERS['Referrer-Policy'], Override: true },
    StrictTransportSecurity: { AccessControlMaxAgeSec: 31_536_000, Override: true },
    XSSProtection: { Protection: true, ModeBlock: true },
  };

  it('sends the console security headers, its CSP allowing no frames without a BI server, and nobody may frame it', () => {
    const headers = headersOf();
    expect(headers.ContentSecurityPolicy.ContentSecurityPolicy).toBe(`${BUILT_POLICY.replace('frame-src *', "frame-src 'none'")}; frame-ancestors 'none'`);
    expect(headers).toMatchObject(securityHeaders);
    expect(SECURITY_HEADERS).toEqual({ 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'strict-origin-when-cross-origin' });
  });

  it('sends the same security headers with every API answer: nosniff, HSTS, no framing, a CSP that loads nothing', () => {
    const headers = headersOf('/api/*');
    expect(headers).toMatchObject(securityHeaders);
    expect(headers.ContentSecurityPolicy).toEqual({ ContentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'", Override: true });
  });

  it('uploads the hashed assets first, cached for a year and never pruned, then index.html revalidated on every load', () => {
    const deployments = ofType('Custom::CDKBucketDeployment');
    expect(deployments).toHaveLength(2);
    const [[assetsId, assets], [entryId, entry]] = [
      deployments.find(([, d]) => asArray(d.Properties.Include).includes('assets/*'))!,
      deployments.find(([, d]) => asArray(d.Properties.Exclude).includes('assets/*'))!,
    ];
    expect(assets.Properties).toMatchObject({ Prune: false, Exclude: ['*'], Include: ['assets/*'] });
    expect(assets.Properties.SystemMetadata).toEqual({ 'cache-control': 'public, max-age=31536000, immutable' });
    expect(assets.Properties.DistributionId).toBeUndefined();
    // Everything but assets/ (index.html, build.json): revalidated, then invalidated at the edge.
    expect(entry.Properties).toMatchObject({ Prune: false, Exclude: ['assets/*'], DistributionPaths: ['/*'] });
    expect(entry.Properties.Include).toBeUndefined();
    expect(entry.Properties.SystemMetadata).toEqual({ 'cache-control': 'no-cache' });
    expect(asArray(entry.DependsOn)).toContain(assetsId);
    expect(entryId).not.toBe(assetsId);
    // Nothing is deleted: the deployment role may not.
    const [[roleId]] = ofType('AWS::IAM::Role').filter(([id]) => id.startsWith('SiteDeploymentRole')) as [[string, Json]];
    expect(
      statementsOfRole(roleId)
        .flatMap((st) => asArray<string>(st.Action))
        .filter((a) => a.startsWith('s3:'))
        .sort(),
    ).toEqual(['s3:GetBucketTagging', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
  });

  /** A CloudFront Function's code, run as CloudFront would: its handler. */
  const cloudFrontFunction = (idPrefix: string) => {
    const [, fn] = ofType('AWS::CloudFront::Function').find(([id]) => id.startsWith(idPrefix))!;
    return new Function(`${fn.Properties.FunctionCode as string}; return handler;`)() as (e: Json) => Json;
  };

  it('rewrites extension-less paths to /index.html', () => {
    const [, fn] = ofType('AWS::CloudFront::Function').find(([id]) => id.startsWith('SpaRewrite'))!;
    const code = fn.Properties.FunctionCode as string;
    const handler = new Function(`${code}; return handler;`)() as (e: Json) => Json;
    const uri = (u: string): string => handler({ request: { uri: u } }).uri as string;
    expect(uri('/fleet/scores')).toBe('/index.html');
    expect(uri('/')).toBe('/index.html');
    expect(uri('/assets/app.3f2a.js')).toBe('/assets/app.3f2a.js');
    expect(uri('/favicon.ico')).toBe('/favicon.ico');
  });

  it("hands the API the viewer's address on every /api/* request, over any a caller sent under that name", () => {
    const [[, distribution]] = ofType('AWS::CloudFront::Distribution') as [[string, Json]];
    const config = distribution.Properties.DistributionConfig as Json;
    const api = asArray<Json>(config.CacheBehaviors).find((b) => b.PathPattern === '/api/*')!;
    const [viewerId] = ofType('AWS::CloudFront::Function').find(([id]) => id.startsWith('ApiViewerAddress'))!;
    expect(api.FunctionAssociations).toEqual([{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [viewerId, 'FunctionARN'] } }]);
    const handler = cloudFrontFunction('ApiViewerAddress');
    const forged = { [VIEWER_ADDRESS_HEADER]: { value: '10.0.0.1' }, authorization: { value: 'Bearer x' } };
    expect(handler({ viewer: { ip: '2001:db8::7' }, request: { uri: '/api/auth/login', headers: forged } })).toEqual({
      uri: '/api/auth/login',
      headers: { [VIEWER_ADDRESS_HEADER]: { value: '2001:db8::7' }, authorization: { value: 'Bearer x' } },
    });
  });

  it('sends the origin token at the secret version an originVerifyVersionId context value names, and refuses one that is not a version id', () => {
    const versionId = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
    const rotated = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], originVerifyVersionId: versionId } });
    const resourcesOf = Template.fromStack(new FleetHealthStack(rotated, 'Rotated', fleetHealthPropsFromContext(rotated))).toJSON().Resources as Record<
      string,
      Json
    >;
    const [secretId] = Object.entries(resourcesOf).find(([id, r]) => r.Type === 'AWS::SecretsManager::Secret' && id.startsWith('OriginVerifyToken'))!;
    const [, distribution] = Object.entries(resourcesOf).find(([, r]) => r.Type === 'AWS::CloudFront::Distribution')!;
    const headers = asArray<Json>(distribution.Properties.DistributionConfig.Origins).flatMap((o) => asArray<Json>(o.OriginCustomHeaders));
    expect(headers).toEqual([
      {
        HeaderName: ORIGIN_VERIFY_HEADER,
        HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, `:SecretString:::${versionId}}}`]] },
      },
    ]);
    const refused = new App({ context: { ...cdkContext, originVerifyVersionId: 'AWSCURRENT' } });
    expect(() => fleetHealthPropsFromContext(refused)).toThrow('context originVerifyVersionId=AWSCURRENT: not a Secrets Manager version id');
  });

  it('outputs the API and site URLs', () => {
    template.hasOutput('ApiUrl', {});
    template.hasOutput('SiteUrl', {});
  });
});

describe('bootstrap superadmin', () => {
  const [[, resource] = ['', {}]] = ofType('Custom::BootstrapSuperadmin') as [string, Json][];
  const [[secretId, secret] = ['', {}]] = ofType('AWS::SecretsManager::Secret').filter(([id]) => id.startsWith('BootstrapAdminPassword'));
  const frameworkId = resource.Properties?.ServiceToken['Fn::GetAtt'][0] as string;
  const step = (): { id: string; resource: Json } => deploySteps.get('bootstrap')!;

  it("is created by a custom resource whose handler is our bundled deploy step, given the secret's ARN, never a password", () => {
    expect(ofType('Custom::BootstrapSuperadmin')).toHaveLength(1);
    expect([...deploySteps.keys()]).toEqual(['bootstrap']);
    expect(resource.Properties).toEqual({
      ServiceToken: { 'Fn::GetAtt': [frameworkId, 'Arn'] },
      Username: 'admin',
      Email: 'admin@fleet-health.local',
      PasswordSecretArn: { Ref: secretId },
    });
    // The CDK provider framework's Lambda relays CloudFormation's events to functions/bootstrap.ts, bundled as every function is.
    expect(resources[frameworkId]!.Properties.Environment.Variables).toEqual({ USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': [step().id, 'Arn'] } });
    expect(step().resource.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: 60,
    });
    expect(step().resource.Properties.Environment.Variables).toMatchObject({ STAGE: props.stage, TABLE_PREFIX: prefix });
    expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 32, ExcludePunctuation: true });
    template.hasOutput('BootstrapAdminPasswordArn', { Value: { Ref: secretId } });
  });

  it('lets the deploy step read only its secret and reach only the users table (and append its audit entry), and nothing else read that secret', () => {
    expectTableAccess('bootstrap', { users: 'readputupdate', audit: 'append' });
    const statements = roleStatements('bootstrap');
    const secretStatements = statements.filter((st) => asArray<string>(st.Action).some((a) => a.startsWith('secretsmanager:')));
    expect(secretStatements.map((st) => [asArray<string>(st.Action).sort(), st.Resource])).toEqual([
      [['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'], { Ref: secretId }],
    ]);
    const others = statements.flatMap((st) => asArray<string>(st.Action)).filter((a) => !/^(dynamodb|logs|secretsmanager):/.test(a));
    expect(others).toEqual([]);
    const readers = ofType('AWS::IAM::Policy').filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes(`"Ref":"${secretId}"`));
    expect(readers.map(([, p]) => p.Properties.Roles)).toEqual([[{ Ref: step().resource.Properties.Role['Fn::GetAtt'][0] }]]);
  });

  it('lets the provider framework only invoke the deploy step (and wait for it to be active), with no managed policy', () => {
    const statements = statementsOfRole(resources[frameworkId]!.Properties.Role['Fn::GetAtt'][0] as string);
    expect(statements.filter((st) => !asArray<string>(st.Action).every((a) => a.startsWith('logs:')))).toEqual([
      { Action: ['lambda:GetFunction', 'lambda:InvokeFunction'], Effect: 'Allow', Resource: { 'Fn::GetAtt': [step().id, 'Arn'] } },
    ]);
    expect(ofType('AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(`"${step().id}"`))).toEqual([]);
  });

  it('takes adminUsername and adminEmail from context in their canonical forms, and refuses ones that have none', () => {
    const admin = (context: Json) => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, ...context } })).admin;
    expect(admin({})).toEqual({ username: 'admin', email: 'admin@fleet-health.local' });
    expect(admin({ adminUsername: ' Ops.Lead ', adminEmail: 'Ops@Example.com' })).toEqual({ username: 'ops.lead', email: 'ops@example.com' });
    expect(() => admin({ adminUsername: 'two words' })).toThrow("context adminUsername=two words: not a username (letters, digits and . _ @ + ' - only)");
    expect(() => admin({ adminEmail: 'nobody' })).toThrow('context adminEmail=nobody: not an email address');
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged error or warning', () => {
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const findings = report.violations.map((v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(findings).toEqual([]);
  });

  it('leaves no error or warning annotation from the CDK itself', () => {
    const messages = [...Annotations.fromStack(stack).findError('*', Match.anyValue()), ...Annotations.fromStack(stack).findWarning('*', Match.anyValue())].map(
      (m) => `${m.id}: ${JSON.stringify(m.entry.data)}`,
    );
    expect(messages).toEqual([]);
  });
});

describe('ticket provider configuration', () => {
  it('gives only the issues Lambda the provider settings and read access to its credential', () => {
    const withJira = new App({
      context: {
        ...cdkContext,
        'aws:cdk:bundling-stacks': [],
        ticketProvider: 'jira',
        ticketBaseUrl: 'https://acme.atlassian.net',
        ticketProjectKey: 'OPS',
        ticketUserEmail: 'bot@acme.example',
      },
    });
    const jiraProps = fleetHealthPropsFromContext(withJira);
    expect(jiraProps.tickets).toMatchObject({ provider: 'jira', projectKey: 'OPS' });
    const t = Template.fromStack(new FleetHealthStack(withJira, 'TicketStack', jiraProps)).toJSON().Resources as Record<string, Json>;
    const fns = Object.values(t).filter((r) => r.Type === 'AWS::Lambda::Function');
    const withTickets = fns.filter((f) => f.Properties.Environment?.Variables?.TICKET_PROVIDER);
    expect(withTickets.map((f) => f.Properties.FunctionName)).toEqual([`${prefix}issues`]);
    expect(withTickets[0]!.Properties.Environment.Variables).toMatchObject({
      TICKET_PROVIDER: 'jira',
      TICKET_BASE_URL: 'https://acme.atlassian.net',
      TICKET_PROJECT_KEY: 'OPS',
      TICKET_USER_EMAIL: 'bot@acme.example',
      TICKET_API_TOKEN_ARN: { Ref: expect.stringMatching(/^TicketCredential/) },
    });
    const readers = Object.values(t)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((p) => JSON.stringify(p.Properties.PolicyDocument).includes('TicketCredential'));
    expect(readers).toHaveLength(1);
    expect(JSON.stringify(readers[0]!.Properties.Roles)).toMatch(/"issuesRole/);
  });

  it('refuses an incomplete ticket configuration at synth', () => {
    const broken = new App({ context: { ...cdkContext, ticketProvider: 'jira', ticketBaseUrl: 'https://acme.atlassian.net' } });
    expect(() => fleetHealthPropsFromContext(broken)).toThrow(/ticketProjectKey, ticketUserEmail/);
    expect(() => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, ticketProvider: 'servicenow' } }))).toThrow(/jira or webhook/);
  });
});

describe('LLM provider configuration', () => {
  it('sets the provider on every function granted bedrock:invoke, and nowhere else', () => {
    const withLlm = new App({
      context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], llmProvider: 'bedrock', llmModel: 'anthropic.claude-3-5-haiku-20241022-v1:0' },
    });
    const llmProps = fleetHealthPropsFromContext(withLlm);
    const t = Template.fromStack(new FleetHealthStack(withLlm, 'LlmStack', llmProps)).toJSON().Resources as Record<string, Json>;
    const configured = Object.values(t)
      .filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.LLM_PROVIDER === 'bedrock')
      .map((f) => String(f.Properties.FunctionName).slice(prefix.length))
      .sort();
    const expected = [
      ...ROUTE_GROUPS.filter((g) => (g.grants ?? []).includes('bedrock:invoke')).map((g) => g.name),
      ...Object.entries(WORKERS)
        .filter(([, w]) => ((w as { grants?: readonly string[] }).grants ?? []).includes('bedrock:invoke'))
        .map(([n]) => n),
    ].sort();
    expect(configured).toEqual(expected);
    expect(configured).toContain('chat');
  });

  /** The resources of every bedrock:InvokeModel statement of a stack synthesized with `context`, and its cdk-nag findings. */
  function bedrockGrants(context: Record<string, string>) {
    const llmApp = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], ...context } });
    new FleetHealthStack(llmApp, 'LlmStack', fleetHealthPropsFromContext(llmApp));
    const resources = Object.values(Template.fromStack(llmApp.node.findChild('LlmStack') as FleetHealthStack).toJSON().Resources as Record<string, Json>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) => asArray<Json>(p.Properties.PolicyDocument.Statement))
      .filter((st) => asArray<string>(st.Action).includes('bedrock:InvokeModel'))
      .map((st) => JSON.stringify(st.Resource) + (st.Condition ? ` if ${JSON.stringify(st.Condition)}` : ''));
    const findings = new AwsSolutionsChecks(llmApp).validateScope(llmApp).violations.map((v) => v.ruleName);
    return { resources: [...new Set(resources)].sort(), findings };
  }

  it('grants bedrock:InvokeModel on the configured model only, and nothing to an OpenAI-compatible provider', () => {
    const foundation = bedrockGrants({ llmProvider: 'bedrock', llmModel: 'anthropic.claude-3-5-haiku-20241022-v1:0' });
    expect(foundation.resources).toHaveLength(1);
    expect(foundation.resources[0]).toContain('::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0');
    expect(foundation.resources[0]).not.toContain('*');
    expect(foundation.findings).toEqual([]);

    // A cross-region profile: the profile here, its foundation model in whichever region it routes to (acknowledged),
    // and that model only through the profile: not called directly, in any region.
    const profile = bedrockGrants({ llmProvider: 'bedrock', llmModel: 'us.anthropic.claude-3-5-haiku-20241022-v1:0' });
    expect(profile.resources).toHaveLength(2);
    const theProfile = profile.resources.find((r) => !r.includes(' if '))!;
    const throughIt = profile.resources.find((r) => r.includes(' if '))!;
    expect(theProfile).toContain(':inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0');
    expect(theProfile).not.toContain('foundation-model');
    expect(throughIt).toMatch(
      /:bedrock:\*::foundation-model\/anthropic\.claude-3-5-haiku-20241022-v1:0".* if \{"StringEquals":\{"bedrock:InferenceProfileArn":.*:inference-profile\/us\.anthropic\.claude-3-5-haiku-20241022-v1:0/,
    );
    expect(profile.findings).toEqual([]);

    // An application inference profile: any foundation model, but only through that profile.
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123';
    const application = bedrockGrants({ llmProvider: 'bedrock', llmModel: arn });
    expect(application.resources).toHaveLength(2);
    expect(application.resources).toContain(`"${arn}"`);
    expect(application.resources.find((r) => r.includes(' if '))).toMatch(
      /:bedrock:\*::foundation-model\/\*".* if \{"StringEquals":\{"bedrock:InferenceProfileArn":"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile\/abc123"\}\}$/,
    );
    expect(application.findings).toEqual([]);

    expect(bedrockGrants({ llmProvider: 'openai', llmModel: 'gpt-4o-mini', llmBaseUrl: 'https://llm.example.com/v1' }).resources).toEqual([]);
    expect(bedrockGrants({}).resources).toEqual([]);
  });

  it('lets the invitation sender send one kind of mail (SendEmail, what shared/mail sends with), and nothing else any; with no sender address, nobody any', () => {
    /** The SES statements of each function's role in a stack synthesized with `context`. */
    function sesGrants(context: Record<string, string>) {
      const mailApp = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], ...context } });
      new FleetHealthStack(mailApp, 'MailStack', fleetHealthPropsFromContext(mailApp));
      return Object.values(Template.fromStack(mailApp.node.findChild('MailStack') as FleetHealthStack).toJSON().Resources as Record<string, Json>)
        .filter((r) => r.Type === 'AWS::IAM::Policy')
        .flatMap((p) => asArray<Json>(p.Properties.PolicyDocument.Statement))
        .filter((st) => asArray<string>(st.Action).some((action) => action.startsWith('ses:')));
    }
    expect(props.sesFromAddress).toBeUndefined(); // cdk.json's: mail is off
    expect([...functions.keys()].flatMap(roleStatements).filter((st) => JSON.stringify(st.Action).includes('ses:'))).toEqual([]);
    const granted = sesGrants({ sesFromAddress: 'fleet@example.com' });
    expect(granted).toHaveLength(ROUTE_GROUPS.filter((g) => (g.grants ?? []).includes('ses:send')).length);
    for (const st of granted) expect(asArray<string>(st.Action)).toEqual(['ses:SendEmail']);
  });

  it('refuses an incomplete LLM configuration at synth', () => {
    expect(() => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, llmProvider: 'openai', llmModel: 'gpt-4o-mini' } }))).toThrow(/llmBaseUrl/);
    expect(() => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, llmProvider: 'bedrock' } }))).toThrow(/llmModel/);
  });
});

describe('dashboard embed configuration', () => {
  it('gives only the dashboard-embed Lambda the BI server, its dashboard and its client secret', () => {
    const withEmbed = new App({
      context: {
        ...cdkContext,
        'aws:cdk:bundling-stacks': [],
        embedHost: 'https://bi.example.com',
        embedClientId: 'fleet',
        embedDashboard: '/embed/dashboards/7',
      },
    });
    const t = Template.fromStack(new FleetHealthStack(withEmbed, 'EmbedStack', fleetHealthPropsFromContext(withEmbed))).toJSON().Resources as Record<
      string,
      Json
    >;
    const configured = Object.values(t).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.EMBED_HOST);
    expect(configured.map((f) => f.Properties.FunctionName)).toEqual([`${prefix}dashboard-embed`]);
    expect(configured[0]!.Properties.Environment.Variables).toMatchObject({
      EMBED_CLIENT_ID: 'fleet',
      EMBED_DASHBOARD: '/embed/dashboards/7',
      EMBED_CLIENT_SECRET_ARN: { Ref: expect.stringMatching(/^EmbedClientSecret/) },
    });
    // The console may frame the BI server's origin, and only it (the API's policy frames nothing).
    const policies = Object.values(t).filter((r) => r.Type === 'AWS::CloudFront::ResponseHeadersPolicy');
    expect(policies.map((p) => p.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy).sort()).toEqual([
      "default-src 'none'; frame-ancestors 'none'",
      `${BUILT_POLICY.replace('frame-src *', 'frame-src https://bi.example.com')}; frame-ancestors 'none'`,
    ]);
    expect(() => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, embedHost: 'https://bi.example.com' } }))).toThrow(/embedClientId/);
    expect(() => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, embedDashboard: '/embed/dashboards/7' } }))).toThrow(
      'context an embed setting also needs embedHost',
    );
  });
});

describe('context settings', () => {
  /** The functions of a stack synthesized with `context` that have `variable` set, by name, with its value. */
  function withVariable(context: Json, variable: string): Record<string, unknown> {
    const settingsApp = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], ...context } });
    const t = Template.fromStack(new FleetHealthStack(settingsApp, 'SettingsStack', fleetHealthPropsFromContext(settingsApp))).toJSON().Resources as Record<
      string,
      Json
    >;
    return Object.fromEntries(
      Object.values(t)
        .filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.[variable] !== undefined)
        .map((f) => [f.Properties.FunctionName, f.Properties.Environment.Variables[variable]]),
    );
  }

  it('sets a plain variable on exactly the functions whose declared concerns read it, as text', () => {
    const settings = { EMBED_MODELS: 'thelook,orders', ALERT_CLUSTER_LABEL: 'cluster', CHAT_DAILY_BUDGET_USD: 5 };
    expect(withVariable({ settings }, 'EMBED_MODELS')).toEqual({ [`${prefix}dashboard-embed`]: 'thelook,orders' });
    expect(withVariable({ settings }, 'ALERT_CLUSTER_LABEL')).toEqual({ [`${prefix}ingest`]: 'cluster' });
    const budget = withVariable({ settings: JSON.stringify(settings) }, 'CHAT_DAILY_BUDGET_USD'); // -c settings='{…}' gives its JSON
    expect(budget[`${prefix}chat`]).toBe('5');
    expect(Object.keys(budget)).not.toContain(`${prefix}ingest`);
  });

  it('refuses secrets, what the stack sets itself, unknown names, and values the concern refuses, naming the key', () => {
    expect(() => withVariable({ settings: { LLM_API_KEY: 'sk-…' } }, 'LLM_API_KEY')).toThrow(
      'context settings.LLM_API_KEY: a secret, which the stack creates in Secrets Manager: put its value there (the outputs name it)',
    );
    expect(() => withVariable({ settings: { STAGE: 'dev' } }, 'STAGE')).toThrow('context settings.STAGE: set by the stack (context stage)');
    expect(() => withVariable({ settings: { TABLE_PREFIX: 'x-' } }, 'TABLE_PREFIX')).toThrow('context settings.TABLE_PREFIX: set by the stack');
    for (const local of [
      'AWS_ENDPOINT_URL_DYNAMODB',
      'AWS_ENDPOINT_URL_SECRETS_MANAGER',
      'AWS_ENDPOINT_URL',
      'AWS_REGION',
      'DYNAMODB_LOCAL',
      'DYNAMODB_LOCAL_KEY',
    ]) {
      expect(() => withVariable({ settings: { [local]: 'http://localhost:8000' } }, local)).toThrow(
        `context settings.${local}: the local runtime's and the tests' own`,
      );
    }
    expect(() => withVariable({ settings: { NO_SUCH_SETTING: '1' } }, 'NO_SUCH_SETTING')).toThrow(/^context settings\.NO_SUCH_SETTING: no function/);
    expect(() => withVariable({ settings: { LLM_PRICING: '[1]' } }, 'LLM_PRICING')).toThrow(/^context settings\.LLM_PRICING: LLM_PRICING must be a JSON array/);
    expect(() => withVariable({ settings: 'EMBED_MODELS=x' }, 'EMBED_MODELS')).toThrow(/^context settings: not JSON/);
    expect(() => withVariable({ settings: { EMBED_MODELS: ['x'] } }, 'EMBED_MODELS')).toThrow(/^context settings\.EMBED_MODELS: must be a string/);
  });
});

describe('LDAP configuration', () => {
  it('refuses LDAP settings given in part, rather than deploy without LDAP', () => {
    const props = (context: Json) => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, ...context } }));
    expect(() => props({ ldapUrl: 'ldaps://ldap.example.com' })).toThrow('context an LDAP setting also needs ldapUserDnTemplate');
    expect(() => props({ ldapUserDnTemplate: 'uid={username},dc=example,dc=com' })).toThrow('context an LDAP setting also needs ldapUrl');
    expect(props({}).ldap).toBeUndefined();
  });

  it('gives only the auth Lambda the LDAP settings and read access to the CA certificate secret, created only with ldapUrl', () => {
    expect(Object.keys(resources).some((id) => id.startsWith('LdapCaCert'))).toBe(false); // not configured: no secret
    const withLdap = new App({
      context: {
        ...cdkContext,
        'aws:cdk:bundling-stacks': [],
        ldapUrl: 'ldaps://ldap.example.com',
        ldapUserDnTemplate: 'uid={username},ou=people,dc=example,dc=com',
      },
    });
    const t = Template.fromStack(new FleetHealthStack(withLdap, 'LdapStack', fleetHealthPropsFromContext(withLdap))).toJSON();
    const ldapResources = t.Resources as Record<string, Json>;
    const configured = Object.values(ldapResources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.LDAP_URL);
    expect(configured.map((f) => f.Properties.FunctionName)).toEqual([`${prefix}auth`]);
    expect(configured[0]!.Properties.Environment.Variables).toMatchObject({
      LDAP_URL: 'ldaps://ldap.example.com',
      LDAP_CA_CERT_ARN: { Ref: expect.stringMatching(/^LdapCaCert/) },
    });
    const withCa = Object.values(ldapResources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.LDAP_CA_CERT_ARN);
    expect(withCa).toHaveLength(1);
    const readers = Object.values(ldapResources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((p) => JSON.stringify(p.Properties.PolicyDocument).includes('LdapCaCert'));
    expect(readers).toHaveLength(1);
    expect(JSON.stringify(readers[0]!.Properties.Roles)).toMatch(/"authRole/);
    expect(Object.keys(t.Outputs)).toContain('LdapCaCertArn');
    expect(configured[0]!.Properties.Environment.Variables.LDAP_STARTTLS).toBeUndefined();
  });

  it('turns StartTLS on for an ldap:// server whenever the Lambda would read ldapStartTls as on, as cdk.json or -c writes it', () => {
    const ldapContext = (ldapStartTls: unknown) => ({
      ...cdkContext,
      'aws:cdk:bundling-stacks': [],
      ldapUrl: 'ldap://ldap.example.com',
      ldapUserDnTemplate: 'uid={username},dc=example,dc=com',
      ldapStartTls,
    });
    const startTlsOf = (ldapStartTls: unknown) => {
      const app = new App({ context: ldapContext(ldapStartTls) });
      const t = Template.fromStack(new FleetHealthStack(app, 'LdapTlsStack', fleetHealthPropsFromContext(app))).toJSON().Resources as Record<string, Json>;
      const auth = Object.values(t).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.LDAP_URL)!;
      const variables = auth.Properties.Environment.Variables as Record<string, string>;
      expect(variables.LDAP_URL).toBe('ldap://ldap.example.com');
      // What the auth Lambda makes of its environment.
      return ldapSettings.from(variables).startTls;
    };
    // Every spelling the Lambda reads as on (a boolean is how cdk.json writes a switch) was once dropped as off.
    for (const on of ['true', 'yes', '1', 'on', true, 1]) expect(startTlsOf(on), String(on)).toBe(true);
    for (const off of ['false', 'no', false]) expect(startTlsOf(off), String(off)).toBe(false);
    // What the Lambda would refuse fails the synth, naming the context key, rather than leaving StartTLS off.
    for (const bad of ['TRUE', 'enabled']) {
      const app = new App({ context: ldapContext(bad) });
      expect(() => new FleetHealthStack(app, 'LdapTlsRefused', fleetHealthPropsFromContext(app)), bad).toThrow(/context ldapStartTls: .*LDAP_STARTTLS/);
    }
    expect(() => fleetHealthPropsFromContext(new App({ context: ldapContext({ on: true }) }))).toThrow('context ldapStartTls: a text, a number or true/false');
    // StartTLS written off, and nothing else of LDAP: no LDAP asked for (not a half-given one).
    expect(fleetHealthPropsFromContext(new App({ context: { ...cdkContext, ldapStartTls: false } })).ldap).toBeUndefined();
  });
});

describe('alarms and dead letters', () => {
  const alarms = ofType('AWS::CloudWatch::Alarm');
  const queues = Object.fromEntries(ofType('AWS::SQS::Queue'));
  const [[topicId, topic]] = ofType('AWS::SNS::Topic') as [[string, Json]];
  const workerNames = Object.keys(WORKERS) as (keyof typeof WORKERS)[];
  const functionNames = [...ROUTE_GROUPS.map((g) => g.name), ...workerNames];

  /** The single-metric alarms on a metric with exactly these dimensions. */
  const alarmsOn = (namespace: string, metricName: string, dimensions: Json[]): Json[] =>
    alarms
      .map(([, a]) => a.Properties as Json)
      .filter((p) => p.Namespace === namespace && p.MetricName === metricName && JSON.stringify(p.Dimensions) === JSON.stringify(dimensions));
  const onFunction = (name: string): Json[] => [{ Name: 'FunctionName', Value: { Ref: functions.get(name)!.id } }];
  const invokeConfigOf = (name: string): Json | undefined =>
    ofType('AWS::Lambda::EventInvokeConfig').find(([, c]) => c.Properties.FunctionName?.Ref === functions.get(name)!.id)?.[1].Properties;
  const failureQueueOf = (name: string): string => invokeConfigOf(name)!.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0] as string;

  it('gives every asynchronously invoked worker an on-failure destination: an encrypted, SSL-only SQS queue with its own retention', () => {
    expect(workerNames.length).toBeGreaterThan(0);
    for (const name of workerNames) {
      const config = invokeConfigOf(name);
      expect(config, `${name}: async invoke config`).toBeDefined();
      expect(config!.Qualifier, name).toBe('$LATEST');
      expect(config!.MaximumRetryAttempts, name).toBe(WORKER_ASYNC_INVOKE[name].retryAttempts);
      expect(config!.MaximumEventAgeInSeconds, name).toBe(WORKER_ASYNC_INVOKE[name].maxEventAge.toSeconds());
      const queueId = failureQueueOf(name);
      const queue = queues[queueId];
      expect(queue?.Properties.QueueName, name).toBe(`${prefix}${name}-failures`);
      expect(queue!.Properties.SqsManagedSseEnabled === true || queue!.Properties.KmsMasterKeyId !== undefined, `${name}: queue encrypted`).toBe(true);
      expect(queue!.Properties.MessageRetentionPeriod, name).toBe(14 * 24 * 3600);
      const policies = ofType('AWS::SQS::QueuePolicy').filter(([, p]) => asArray<Json>(p.Properties.Queues).some((q) => q.Ref === queueId));
      const denyWithoutTls = policies
        .flatMap(([, p]) => asArray<Json>(p.Properties.PolicyDocument.Statement))
        .some((st) => st.Effect === 'Deny' && st.Condition?.Bool?.['aws:SecureTransport'] === 'false');
      expect(denyWithoutTls, `${name}: queue enforces SSL`).toBe(true);
      // The worker's own role may send its failed events there (and no other function's role may).
      const senders = [...functions.keys()].filter((fn) =>
        roleStatements(fn).some((st) => asArray<string>(st.Action).includes('sqs:SendMessage') && JSON.stringify(st.Resource).includes(`"${queueId}"`)),
      );
      expect(senders, `${name}: roles that may send to its queue`).toEqual([name]);
    }
    expect(new Set(workerNames.map(failureQueueOf)).size, 'one queue per worker').toBe(workerNames.length);
  });

  it('sends each schedule target’s undeliverable events to its worker’s queue, with explicit retries', () => {
    for (const { name } of scheduledWorkers()) {
      const [, rule] = ofType('AWS::Events::Rule').find(([, r]) =>
        asArray<Json>(r.Properties.Targets).some((t) => t.Arn?.['Fn::GetAtt']?.[0] === functions.get(name)!.id),
      )!;
      const [target] = rule.Properties.Targets as Json[];
      expect(target!.DeadLetterConfig, name).toEqual({ Arn: { 'Fn::GetAtt': [failureQueueOf(name), 'Arn'] } });
      expect(target!.RetryPolicy, name).toEqual({ MaximumRetryAttempts: expect.any(Number), MaximumEventAgeInSeconds: expect.any(Number) });
    }
  });

  it('alarms on the depth of every failure queue (ApproximateNumberOfMessagesVisible > 0), held while the queue reports nothing, and on failures not delivered to it', () => {
    for (const name of workerNames) {
      const depth = alarmsOn('AWS/SQS', 'ApproximateNumberOfMessagesVisible', [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [failureQueueOf(name), 'QueueName'] } },
      ]);
      expect(depth, name).toHaveLength(1);
      // An idle queue stops reporting after about 6 hours, an unread failure in it or not: that must not clear the alarm.
      expect(depth[0], name).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'ignore' });
      // A failure Lambda could not put in the queue is in no queue: its own alarm.
      const undelivered = alarmsOn('AWS/Lambda', 'DestinationDeliveryFailures', onFunction(name));
      expect(undelivered, name).toHaveLength(1);
      expect(undelivered[0], name).toMatchObject({ Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    }
  });

  it('alarms on every function’s errors, throttles, and duration near its timeout', () => {
    expect([...functions.keys()].sort()).toEqual([...functionNames].sort());
    for (const name of functionNames) {
      for (const metric of ['Errors', 'Throttles']) {
        const found = alarmsOn('AWS/Lambda', metric, onFunction(name));
        expect(found, `${name} ${metric}`).toHaveLength(1);
        expect(found[0], `${name} ${metric}`).toMatchObject({ Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
      }
      const duration = alarmsOn('AWS/Lambda', 'Duration', onFunction(name));
      expect(duration, `${name} Duration`).toHaveLength(1);
      const timeoutMs = (functions.get(name)!.resource.Properties.Timeout as number) * 1000;
      const threshold = duration[0]!.Threshold as number;
      // At 90% of the timeout, or in its last 15 s when that is later, or a second past a declared run (the chat's
      // 27 s deadline: its normal answers paged at 26.1 s); always before the timeout.
      const declared = functionSize(name)?.runsUpToMs;
      expect(threshold, name).toBe(declared ? declared + 1000 : Math.max(Math.round(timeoutMs * DURATION_ALARM_FRACTION), timeoutMs - DURATION_ALARM_LAST_MS));
      expect(threshold / timeoutMs, name).toBeGreaterThanOrEqual(0.9);
      expect(threshold, name).toBeLessThan(timeoutMs);
    }
    expect(alarmsOn('AWS/Lambda', 'Duration', onFunction('chat'))[0]!.Threshold).toBe(28_000);
    // The budgeted workers end their normal runs up to 30 s before their timeout: no page for those.
    for (const name of ['agent-worker', 'metrics-puller'])
      expect(alarmsOn('AWS/Lambda', 'Duration', onFunction(name))[0]!.Threshold, name).toBeGreaterThan(
        (functions.get(name)!.resource.Properties.Timeout as number) * 1000 - 30_000,
      );
  });

  it('alarms on every schedule’s undelivered events: dead-lettered, lost, or failed otherwise', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(scheduledWorkers().length);
    for (const [ruleId] of rules) {
      const onRule = alarms
        .map(([, a]) => a.Properties as Json)
        .filter((p) =>
          asArray<Json>(p.Metrics).some(
            (m) => JSON.stringify(m.MetricStat?.Metric?.Dimensions) === JSON.stringify([{ Name: 'RuleName', Value: { Ref: ruleId } }]),
          ),
        );
      expect(onRule, ruleId).toHaveLength(1);
      const metrics = onRule[0]!.Metrics as Json[];
      expect(
        metrics
          .filter((m) => m.MetricStat)
          .map((m) => m.MetricStat.Metric.MetricName)
          .sort(),
        ruleId,
      ).toEqual(['DeadLetterInvocations', 'FailedInvocations', 'InvocationsFailedToBeSentToDlq']);
      expect(metrics.find((m) => m.Expression)?.Expression, ruleId).toMatch(/^FILL\(dead_\w+, 0\) \+ FILL\(unsent_\w+, 0\) \+ FILL\(failed_\w+, 0\)$/);
      expect(onRule[0], ruleId).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    }
  });

  it('alarms on the HTTP API’s 5xx rate: 5xx over Count of its stage, as a math expression', () => {
    const [[apiId]] = ofType('AWS::ApiGatewayV2::Api') as [[string, Json]];
    const rate = alarms.map(([, a]) => a.Properties as Json).filter((p) => asArray<Json>(p.Metrics).some((m) => m.MetricStat?.Metric?.MetricName === '5xx'));
    expect(rate).toHaveLength(1);
    const metrics = rate[0]!.Metrics as Json[];
    const stat = (name: string): Json => metrics.find((m) => m.MetricStat?.Metric?.MetricName === name)!.MetricStat;
    for (const name of ['5xx', 'Count']) {
      expect(stat(name).Metric, name).toEqual({
        Namespace: 'AWS/ApiGateway',
        MetricName: name,
        Dimensions: [
          { Name: 'ApiId', Value: { Ref: apiId } },
          { Name: 'Stage', Value: '$default' },
        ],
      });
      expect(stat(name).Stat, name).toBe('Sum');
    }
    const expression = metrics.find((m) => m.Expression)!;
    expect(expression.ReturnData).toBe(true);
    expect(expression.Expression).toMatch(/errors \/ requests/);
    // A quiet night's outage (Alertmanager's few posts a period, all 500) alarms too: a handful of 5xx breach alone.
    expect(expression.Expression).toMatch(/^IF\(requests >= 10, 100 \* errors \/ requests, IF\(errors >= 3, 100 \* errors \/ requests, 0\)\)$/);
  });

  it('notifies one encrypted, SSL-only SNS topic from every alarm, and has no alarm beyond the inventory', () => {
    expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    const topicStatements = ofType('AWS::SNS::TopicPolicy')
      .filter(([, p]) => asArray<Json>(p.Properties.Topics).some((t) => t.Ref === topicId))
      .flatMap(([, p]) => asArray<Json>(p.Properties.PolicyDocument.Statement));
    expect(topicStatements.some((st) => st.Effect === 'Deny' && st.Condition?.Bool?.['aws:SecureTransport'] === 'false')).toBe(true);
    expect(topicStatements.some((st) => st.Effect === 'Allow' && st.Principal?.Service === 'cloudwatch.amazonaws.com')).toBe(true);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions, id).toEqual([{ Ref: topicId }]);
      expect(String(alarm.Properties.AlarmName), id).toMatch(new RegExp(`^${prefix}`));
    }
    // 3 per function, 2 per failure queue (its depth, and failures not delivered to it), 1 per schedule, the API's 5xx rate.
    expect(alarms).toHaveLength(3 * functionNames.length + 2 * workerNames.length + scheduledWorkers().length + 1);
    template.hasOutput('AlarmTopicArn', {});
  });

  it('has one dashboard showing every function, every failure queue and the API', () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const [[, dashboard]] = dashboards as [[string, Json]];
    expect(dashboard.Properties.DashboardName).toBe(`fleet-health-${props.stage}`);
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const name of functionNames) {
      for (const metric of ['Invocations', 'Errors', 'Duration']) {
        expect(body, `${name} ${metric}`).toMatch(new RegExp(`\\\\"${metric}\\\\",\\\\"FunctionName\\\\",\\\\"",\\{"Ref":"${functions.get(name)!.id}"\\}`));
      }
      if ((workerNames as string[]).includes(name)) expect(body, `${name} queue`).toContain(`"${failureQueueOf(name)}","QueueName"`);
    }
    for (const metric of ['Count', '5xx', 'Latency']) expect(body, metric).toContain(`\\"AWS/ApiGateway\\",\\"${metric}\\"`);
    template.hasOutput('DashboardUrl', {});
  });

  it('subscribes an email address to the topic only with the alarmEmail context value', () => {
    expect(ofType('AWS::SNS::Subscription')).toEqual([]);
    const withEmail = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], alarmEmail: 'ops@example.com' } });
    const emailProps = fleetHealthPropsFromContext(withEmail);
    expect(emailProps.alarmEmail).toBe('ops@example.com');
    const t = Template.fromStack(new FleetHealthStack(withEmail, 'AlarmEmailStack', emailProps)).toJSON().Resources as Record<string, Json>;
    const subscriptions = Object.values(t).filter((r) => r.Type === 'AWS::SNS::Subscription');
    const [emailTopicId] = Object.entries(t).find(([, r]) => r.Type === 'AWS::SNS::Topic')!;
    expect(subscriptions.map((s) => s.Properties)).toEqual([{ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: emailTopicId } }]);
    expect(() => fleetHealthPropsFromContext(new App({ context: { ...cdkContext, alarmEmail: 'not-an-address' } }))).toThrow(/alarmEmail/);
  });
});

describe('memory budgets (issue 21 §2)', () => {
  // The declarations' own memoryMb, else the defaults: spelled out here, not read from function-sizes.ts, so a wrong default there fails.
  const declared = new Map<string, number>([
    ...Object.entries(WORKERS as Record<string, WorkerDeclaration>).map(([name, w]): [string, number] => [name, w.memoryMb ?? 1024]),
    ...ROUTE_GROUPS.map((g): [string, number] => [g.name, g.memoryMb ?? 512]),
  ]);

  it('gives every function the memory its declaration names, or the default', () => {
    expect([...functions.keys()].sort()).toEqual([...declared.keys()].sort());
    for (const [name, mb] of declared) expect(functions.get(name)!.resource.Properties.MemorySize, name).toBe(mb);
  });

  it('sizes the recompute worker from its measured refresh peak', () => {
    // 734 MB: the highest peak of one 10,000-cluster refresh measured (test/bench/refresh-memory.ts); under 60% of it.
    expect(functions.get('recompute')!.resource.Properties.MemorySize).toBeGreaterThan(734 / 0.6);
  });
});
