// The Fleet Health stack: DynamoDB tables from shared/db/tables.ts, one Lambda per
// route group (shared/routes) and per worker (shared/workers.ts), the HTTP API built
// from the route table, schedules, alarms and dead letters (constructs/monitoring.ts),
// the SPA behind CloudFront, and the deploy step that creates the bootstrap superadmin.
// The stack loops over those declarations; nothing here repeats a route, a table or a grant.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ArnFormat, CfnElement, CfnOutput, CustomResource, Duration, Fn, RemovalPolicy, SecretValue, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { BOOTSTRAP_FUNCTION } from '../shared/auth/bootstrap-resource.js';
import { LEASES, TABLES, TABLE_NAMES, type TableName } from '../shared/db/tables.js';
import type { TableDeclaration } from '../shared/db/access.js';
import type { GroupGrant, HttpMethod as RouteMethod, TableAccess } from '../shared/http/route.js';
import { ROUTE_GROUPS } from '../shared/routes/all-groups.js';
import { concernsOf, type ConfigConcern } from '../shared/config/concerns.js';
import { type InvocableWorker, WORKER_FUNCTION_ENV } from '../shared/config/worker-functions.js';
import { rateExpression, scheduledWorkers, WORKERS, type WorkerDeclaration, type WorkerName } from '../shared/workers.js';
import { CONSOLE_OUT } from './console.js';
import { API_POLICY, deploymentPolicy } from './web/csp.js';
import { functionSize } from './function-sizes.js';
import { CONFIG_BINDINGS, originVerifySecret, type BindingContext, type SecretBinding } from './config-bindings.js';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../shared/auth/caller.js';
import type { FleetHealthStackProps } from './stack-props.js';
import { GroupFunction } from './constructs/group-function.js';
import { Monitoring } from './constructs/monitoring.js';
import { CROSS_REGION_PREFIX } from '../shared/llm/pricing.js';

export { fleetHealthPropsFromContext, type FleetHealthStackProps } from './stack-props.js';

/** A declared function's memory and timeout (function-sizes.ts). */
function sizeOf(name: string): { memorySize: number; timeout: Duration } {
  const size = functionSize(name);
  if (!size) throw new Error(`no function named ${name}`);
  return { memorySize: size.memoryMb, timeout: Duration.seconds(size.timeoutSeconds) };
}

export class FleetHealthStack extends Stack {
  readonly tables: Record<TableName, dynamodb.Table>;
  readonly groupFunctions = new Map<string, GroupFunction>();
  readonly workerFunctions = new Map<WorkerName, GroupFunction>();
  readonly api: HttpApi;
  readonly distribution: cloudfront.Distribution;
  readonly monitoring: Monitoring;
  /** The deploy step's Lambda (functions/bootstrap.ts) and the secret holding the bootstrap superadmin's password. */
  readonly bootstrap: { function: GroupFunction; secret: secretsmanager.Secret };

  constructor(scope: Construct, id: string, props: FleetHealthStackProps) {
    super(scope, id, props);
    const prefix = `fleet-health-${props.stage}-`;

    // ── DynamoDB: one table per entry of TABLES ─────────────────────────────
    this.tables = Object.fromEntries(TABLE_NAMES.map((name) => [name, this.createTable(name, prefix)])) as Record<TableName, dynamodb.Table>;

    // ── Workers (no HTTP route) ─────────────────────────────────────────────
    for (const [name, worker] of Object.entries(WORKERS) as [WorkerName, WorkerDeclaration][]) {
      const fn = new GroupFunction(this, name, {
        name,
        kind: 'worker',
        functionName: `${prefix}${name}`,
        description: `Fleet Health worker: ${worker.summary}`,
        ...sizeOf(name),
      });
      this.bindTables(fn, worker);
      this.workerFunctions.set(name, fn);
    }

    // ── Route groups: one Lambda each ───────────────────────────────────────
    for (const group of ROUTE_GROUPS) {
      const fn = new GroupFunction(this, group.name, {
        name: group.name,
        kind: 'route-group',
        functionName: `${prefix}${group.name}`,
        description: `Fleet Health route group ${group.name}`,
        ...sizeOf(group.name),
      });
      this.bindTables(fn, group);
      this.groupFunctions.set(group.name, fn);
    }

    // Grants after every function exists, so a grant may name any worker.
    for (const group of ROUTE_GROUPS) this.applyGrants(this.groupFunctions.get(group.name)!, group.grants ?? [], props);
    for (const [name, worker] of Object.entries(WORKERS) as [WorkerName, WorkerDeclaration][]) {
      this.applyGrants(this.workerFunctions.get(name)!, worker.grants ?? [], props);
    }

    // ── HTTP API: one route per declaration ─────────────────────────────────
    this.api = new HttpApi(this, 'Api', {
      apiName: `fleet-health-${props.stage}`,
      description: 'Fleet Health Service API',
      createDefaultStage: false,
      // No corsPreflight: OPTIONS reaches the catch-all route and the Lambda answers it
      // with the same CORS rules as every other response.
    });
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, 'ApiDefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { burstLimit: 200, rateLimit: 100 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            routeKey: '$context.routeKey',
            status: '$context.status',
            method: '$context.httpMethod',
            path: '$context.path',
            ip: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
            requestTime: '$context.requestTime',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationStatus: '$context.integrationStatus',
            integrationError: '$context.integrationErrorMessage',
            error: '$context.error.message',
          }),
        ),
      },
    });

    for (const group of ROUTE_GROUPS) {
      const fn = this.groupFunctions.get(group.name)!;
      const integration = new HttpLambdaIntegration(`${group.name}-integration`, fn.function, {
        payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
        // One invoke permission per function for this API, not one per route.
        scopePermissionToRoute: false,
      });
      for (const route of Object.values(group.routes)) {
        // A HEAD beside each GET, answered as the GET without its body (shared/http/middleware.ts, resolveRoute).
        const methods = route.method === 'GET' ? [HttpMethod.GET, HttpMethod.HEAD] : [toHttpMethod(route.method)];
        this.api.addRoutes({ path: route.path, methods, integration });
      }
    }
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        "Authorization is enforced in the Lambda middleware, the one place that knows each route's roles: it verifies the " +
        "HS256 JWT (algorithm pinned, issuer, audience, expiry) and the caller's role on every user route; the ingest routes " +
        '(POST /api/ingest/*) and the Prometheus scrape (GET /api/metrics) take their own static bearer token from Secrets ' +
        'Manager instead, compared in constant time; public routes (health check, login, activate, OpenAPI, 404/preflight ' +
        'catch-all) are public by the API contract.',
    });

    // ── Monitoring: failure queues, alarms to one topic, the dashboard (infra/constructs/monitoring.ts) ──
    this.monitoring = new Monitoring(this, 'Monitoring', {
      prefix,
      dashboardName: `fleet-health-${props.stage}`,
      routeGroups: this.groupFunctions,
      workers: this.workerFunctions,
      apiStage: stage,
      alarmEmail: props.alarmEmail,
    });

    // ── Schedules: one EventBridge rule per worker declaring one (shared/workers.ts) ──
    for (const { name, schedule } of scheduledWorkers()) {
      const expression = name === 'patrol-worker' && props.patrolSchedule ? props.patrolSchedule : rateExpression(schedule.everyMinutes);
      const rule = new events.Rule(this, `${name}-schedule`, {
        description: schedule.description,
        schedule: events.Schedule.expression(expression),
        targets: [
          new targets.LambdaFunction(this.workerFunctions.get(name)!.function, {
            event: events.RuleTargetInput.fromObject(schedule.event ?? {}),
            // Undeliverable events go to the worker's failure queue, like its failed runs.
            ...this.monitoring.scheduleTargetOptions(name),
          }),
        ],
      });
      this.monitoring.watchSchedule(name, rule);
    }

    // ── SPA: private S3 bucket behind CloudFront, /api/* to the HTTP API ────
    this.distribution = this.createSite(stage.url, props);

    // ── Configuration: each function's declared concerns (infra/config-bindings.ts) ──
    const context: BindingContext = { props, stage: props.stage, siteUrl: `https://${this.distribution.distributionDomainName}`, prefix };
    for (const group of ROUTE_GROUPS) {
      this.bindConfig(this.groupFunctions.get(group.name)!, concernsOf('route-group', group.config, group.grants), group.grants ?? [], context);
    }
    for (const [name, worker] of Object.entries(WORKERS) as [WorkerName, WorkerDeclaration][]) {
      this.bindConfig(this.workerFunctions.get(name)!, concernsOf('worker', worker.config, worker.grants), worker.grants ?? [], context);
    }

    // ── The bootstrap superadmin: created by the first deployment, so someone can sign in ──
    this.bootstrap = this.createBootstrapAdmin(props, context);

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'HTTP API endpoint ($default stage)' });
    new CfnOutput(this, 'SiteUrl', {
      value: `https://${this.distribution.distributionDomainName}`,
      description: 'The SPA; the API is also served under /api on this origin',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.monitoring.topic.topicArn,
      description: 'SNS topic every alarm notifies (subscribe with -c alarmEmail=<address>, or add any subscription)',
    });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.monitoring.dashboard.dashboardName}`,
      description: 'The service dashboard: API, functions, failure queues, schedules',
    });
  }

  private readonly secrets = new Map<string, secretsmanager.Secret>();

  /**
   * Sets the variables of each concern the function reads and grants it the
   * concern's secret, created once for all the functions that declare it.
   */
  private bindConfig(fn: GroupFunction, concerns: readonly ConfigConcern[], grants: readonly GroupGrant[], context: BindingContext): void {
    if (grants.includes('bedrock:invoke') && !concerns.includes('llm'))
      throw new Error(`${fn.node.id}: granted bedrock:invoke, so it must declare config 'llm'`);
    if (grants.includes('ses:send') && !concerns.includes('mail')) throw new Error(`${fn.node.id}: granted ses:send, so it must declare config 'mail'`);
    for (const concern of concerns) {
      const binding = CONFIG_BINDINGS[concern]?.(context);
      if (!binding) continue;
      for (const [name, value] of Object.entries(binding.environment ?? {})) if (value !== undefined) fn.function.addEnvironment(name, value);
      if (binding.secret) {
        const secret = this.secretFor(binding.secret);
        secret.grantRead(fn.role);
        fn.function.addEnvironment(`${binding.secret.variable}_ARN`, secret.secretArn);
      }
    }
  }

  private secretFor(binding: Omit<SecretBinding, 'variable'>): secretsmanager.Secret {
    let secret = this.secrets.get(binding.id);
    if (!secret) {
      secret = new secretsmanager.Secret(this, binding.id, {
        description: binding.description,
        generateSecretString: { passwordLength: binding.length ?? 32, excludePunctuation: true, includeSpace: false },
      });
      Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: binding.noRotation });
      new CfnOutput(this, binding.output.id, { value: secret.secretArn, description: binding.output.description });
      this.secrets.set(binding.id, secret);
    }
    return secret;
  }

  /**
   * The bootstrap superadmin on a fresh deploy (shared/auth/bootstrap-resource.ts): a custom resource whose
   * Create and Update run functions/bootstrap.ts, which creates the account when absent with the password
   * this stack generates into a secret (output BootstrapAdminPasswordArn; only that function reads it).
   * The event carries the secret's ARN, never the password. The CDK provider framework's Lambda relays
   * CloudFormation's events; it gets a role of its own that may only invoke the deploy step.
   */
  private createBootstrapAdmin(props: FleetHealthStackProps, context: BindingContext): { function: GroupFunction; secret: secretsmanager.Secret } {
    const { name } = BOOTSTRAP_FUNCTION;
    const fn = new GroupFunction(this, name, {
      name,
      kind: 'deploy',
      functionName: `${context.prefix}${name}`,
      description: 'Fleet Health deploy step: creates the bootstrap superadmin when absent',
      ...sizeOf(name),
    });
    this.bindTables(fn, BOOTSTRAP_FUNCTION);
    this.bindConfig(fn, BOOTSTRAP_FUNCTION.config, [], context);
    const secret = this.secretFor({
      id: 'BootstrapAdminPassword',
      description: `Password of the Fleet Health (${props.stage}) bootstrap superadmin ${props.admin.username}`,
      noRotation:
        'The secret is read when a deployment creates the bootstrap superadmin, whose password is then stored as a scrypt hash: ' +
        'rotating the secret would not change it. The operator reads it once, signs in, and manages accounts in the console.',
      output: {
        id: 'BootstrapAdminPasswordArn',
        description: `Password of the bootstrap superadmin ${props.admin.username} (read it once: aws secretsmanager get-secret-value --secret-id <arn>)`,
      },
    });
    secret.grantRead(fn.role);

    // An explicit role, as for the SPA deployment: the framework's default one carries the AWSLambdaBasicExecutionRole
    // managed policy and may invoke every version of the function (`<arn>:*`). It invokes the function (and, while the
    // function is not yet active, waits for it with GetFunction), and logs to its own group.
    const { logGroup: frameworkLogs, role: frameworkRole } = this.deployTimeRole(
      'BootstrapProvider',
      'Relays CloudFormation events of the bootstrap superadmin to its deploy step',
    );
    frameworkRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction', 'lambda:GetFunction'], resources: [fn.function.functionArn] }),
    );
    const provider = new cr.Provider(this, 'BootstrapProvider', {
      onEventHandler: fn.function,
      // Immutable: the framework's own grants are dropped; the statements above are the whole policy.
      frameworkOnEventRole: frameworkRole.withoutPolicyUpdates(),
      logGroup: frameworkLogs,
    });
    Validations.of(provider.node.findChild('framework-onEvent')).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'CDK-internal provider framework handler: aws-cdk-lib picks its Node runtime (determineLatestNodeRuntime, upgraded ' +
        'with aws-cdk-lib, which can lag the newest runtime cdk-nag knows), and it runs only during deployments.',
    });

    const resource = new CustomResource(this, 'BootstrapSuperadmin', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::BootstrapSuperadmin',
      // Strings only: CloudFormation passes every property as one. The password stays in the secret.
      properties: { Username: props.admin.username, Email: props.admin.email, PasswordSecretArn: secret.secretArn },
    });
    // Invoked only once both roles' policies exist (the users table and the secret; the invoke).
    resource.node.addDependency(fn, frameworkRole);
    return { function: fn, secret };
  }

  private createTable(name: TableName, prefix: string): dynamodb.Table {
    const def = TABLES[name];
    const table = new dynamodb.Table(this, `${name}-table`, {
      tableName: `${prefix}${name}`,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: def.ttl ? 'ttl' : undefined,
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    for (const index of def.indexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
        ...(index.include
          ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }
          : { projectionType: dynamodb.ProjectionType.ALL }),
      });
    }
    return table;
  }

  private bindTables(fn: GroupFunction, { tables, leases = [] }: TableDeclaration): void {
    for (const [name, access] of Object.entries(tables) as [TableName, TableAccess][]) {
      const table = this.tables[name];
      // The lock table by the leases declared: their items' partition keys alone (shared/db/tables.ts LEASES).
      if (name === 'locks' && leases.length === 0) throw new Error(`${fn.node.id} declares table locks but no leases: name the lease locks it takes (LEASES)`);
      const leadingKeys = name === 'locks' ? leases.map((lease) => LEASES[lease]) : undefined;
      if (fn.bindTable(table, access, TABLES[name].indexes.length > 0, leadingKeys)) {
        // The grant covers the table and `<table>/index/*`: queries by any of its GSIs. A read grant carries it whether or
        // not this function's own reads use an index (the access levels do not say which), so the reason says "may".
        fn.acknowledge(
          `AwsSolutions-IAM5[Resource::<${this.logicalIdOf(table)}.Arn>/index/*]`,
          `${fn.node.id} may query the ${name} table by its GSIs (${TABLES[name].indexes.map((i) => i.name).join(', ')}) with its ` +
            `${access} access; index/* is scoped to that one table.`,
        );
      }
    }
  }

  /**
   * What invoking the configured Bedrock model takes: a foundation model ID is that model in
   * this region; a cross-region inference profile (`us.…`, `eu.…`, `global.…`) is the profile
   * in this region and its foundation model in every region it routes to; an ARN is itself,
   * and for an application inference profile, whose models the stack cannot know, any
   * foundation model. The foundation models behind a profile (`throughProfile`) are granted only
   * through that profile (the `bedrock:InferenceProfileArn` condition): not directly, in any
   * region, where an `eu.` profile chosen for data residency would not hold. `anyRegion` names
   * the foundation model granted in every region.
   */
  private bedrockModelResources(model: string): { resources: string[]; throughProfile?: { profile: string; models: string[] }; anyRegion?: string } {
    const foundation = (id: string, region = this.region) => `arn:${this.partition}:bedrock:${region}::foundation-model/${id}`;
    const viaProfile = (profile: string, modelId: string) => ({
      resources: [profile],
      throughProfile: { profile, models: [foundation(modelId, '*')] },
      anyRegion: modelId,
    });
    if (model.startsWith('arn:')) {
      const profile = /:inference-profile\/(.+)$/.exec(model)?.[1]?.replace(CROSS_REGION_PREFIX, '');
      if (profile) return viaProfile(model, profile);
      if (model.includes(':application-inference-profile/')) return viaProfile(model, '*');
      return { resources: [model] };
    }
    if (CROSS_REGION_PREFIX.test(model)) {
      return viaProfile(this.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: model }), model.replace(CROSS_REGION_PREFIX, ''));
    }
    return { resources: [foundation(model)] };
  }

  private applyGrants(fn: GroupFunction, grants: readonly GroupGrant[], props: FleetHealthStackProps): void {
    for (const grant of grants) {
      switch (grant) {
        case 'ses:send': {
          // No sender address, no mail (mailConfigured() is false: invitations answer their token): nothing to grant,
          // as no LLM provider grants no Bedrock. Granted all the same, the role could send as any verified identity.
          if (!props.sesFromAddress) break;
          const identity = props.sesIdentity;
          const resource = identity?.startsWith('arn:') ? identity : this.formatArn({ service: 'ses', resource: 'identity', resourceName: identity ?? '*' });
          // shared/mail/invitations.ts sends with SendEmail only.
          fn.allow(new iam.PolicyStatement({ actions: ['ses:SendEmail'], resources: [resource] }));
          if (!identity) {
            fn.acknowledge(
              `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]`,
              'Invitation mail may be sent from any verified SES identity of this account and region until the operator ' +
                'names one with -c sesIdentity=<identity or ARN>; the action is limited to SendEmail.',
            );
          }
          break;
        }
        case 'invoke:patrol-worker':
        case 'invoke:agent-worker':
        case 'invoke:metrics-puller':
        case 'invoke:recompute': {
          const workerName = grant.slice('invoke:'.length) as InvocableWorker;
          const worker = this.workerFunctions.get(workerName);
          if (!worker) throw new Error(`${fn.node.id}: grant ${grant} names an unknown worker`);
          // A worker invoking itself (recompute hands a queued run's wait on) names itself as text: its own ARN or
          // name as a reference would make its policy and environment depend on the function, which depends on them.
          const self = worker === fn;
          const arn = self
            ? this.formatArn({ service: 'lambda', resource: 'function', resourceName: fn.physicalName, arnFormat: ArnFormat.COLON_RESOURCE_NAME })
            : worker.function.functionArn;
          // The unqualified function ARN only (grantInvoke would add `<arn>:*` for every version/alias).
          fn.allow(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [arn] }));
          // The variable shared/config/worker-functions.ts reads (concern `worker-functions`, implied by this grant).
          fn.function.addEnvironment(WORKER_FUNCTION_ENV[workerName], self ? fn.physicalName : worker.functionName);
          break;
        }
        case 'bedrock:invoke': {
          // Only a Bedrock provider is reached through IAM; an OpenAI-compatible one, or none, needs nothing.
          if (props.llm?.provider !== 'bedrock') break;
          // The Converse API is authorised by bedrock:InvokeModel (there is no separate IAM action), on the one model configured.
          const { resources, throughProfile, anyRegion } = this.bedrockModelResources(props.llm.model);
          fn.allow(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources }));
          if (throughProfile) {
            fn.allow(
              new iam.PolicyStatement({
                actions: ['bedrock:InvokeModel'],
                resources: throughProfile.models,
                conditions: { StringEquals: { 'bedrock:InferenceProfileArn': throughProfile.profile } },
              }),
            );
          }
          if (anyRegion)
            fn.acknowledge(
              `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${anyRegion}]`,
              `The model is an inference profile (llmModel), which routes each call to ${anyRegion === '*' ? 'its foundation models' : `the foundation model ${anyRegion}`} in any of its regions; they are granted only through that profile (bedrock:InferenceProfileArn).`,
            );
          break;
        }
        case 'aps:query': {
          // Amazon Managed Service for Prometheus (auth: sigv4 in the metric-sources rule set): QueryMetrics only (the
          // puller calls query and query_range, nothing else), on the workspace named by -c prometheusWorkspaceArn,
          // or any workspace of this account and region.
          const workspace = props.prometheusWorkspaceArn ?? this.formatArn({ service: 'aps', resource: 'workspace', resourceName: '*' });
          fn.allow(new iam.PolicyStatement({ actions: ['aps:QueryMetrics'], resources: [workspace] }));
          if (!props.prometheusWorkspaceArn) {
            fn.acknowledge(
              'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:aps:<AWS::Region>:<AWS::AccountId>:workspace/*]',
              'The Prometheus workspace is configuration (the metric-sources rule set names its URL); until the operator names it ' +
                'with -c prometheusWorkspaceArn=<arn>, the puller may query any workspace of this account and region, read-only.',
            );
          }
          break;
        }
        default: {
          const unknown: never = grant;
          throw new Error(`${fn.node.id}: unknown grant ${String(unknown)}`);
        }
      }
    }
  }

  private createSite(apiUrl: string, { embed, stage: stageName, originVerifyVersionId }: FleetHealthStackProps): cloudfront.Distribution {
    const embedHost = embed?.host;
    const logsBucket = new s3.Bucket(this, 'LogsBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      // CloudFront standard logs are delivered with an ACL grant: the bucket must accept ACLs.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
    });
    Validations.of(logsBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This is the access-log destination (S3 server access logs and CloudFront logs); logging it would log its own log writes.',
    });

    const siteBucket = new s3.Bucket(this, 'SiteBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      serverAccessLogsBucket: logsBucket,
      serverAccessLogsPrefix: 'site-bucket/',
    });

    // SPA fallback at the edge: a path without a file extension is a client-side route.
    // (Distribution errorResponses would also rewrite the API's 404s into index.html.)
    const spaRewrite = this.viewerRequestFunction('SpaRewrite', 'Serve /index.html for extension-less SPA routes', [
      'if (!/\\.[^/]+$/.test(request.uri)) { request.uri = "/index.html"; }',
    ]);

    // https://<api-id>.execute-api.<region>.amazonaws.com/ → the host name.
    const apiDomain = Fn.select(2, Fn.split('/', apiUrl));

    // AWS's managed SECURITY_HEADERS (frames denied: nothing frames the console, nor the API) with a
    // Content-Security-Policy (infra/web/csp.ts, whose SECURITY_HEADERS the local server sends too).
    const securityHeaders = (contentSecurityPolicy: string): cloudfront.ResponseSecurityHeadersBehavior => ({
      contentSecurityPolicy: { contentSecurityPolicy, override: true },
      contentTypeOptions: { override: true },
      frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
      referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, override: true },
      strictTransportSecurity: { accessControlMaxAge: Duration.days(365), override: true },
      xssProtection: { protection: true, modeBlock: true, override: true },
    });
    // The console's CSP with frame-src narrowed to this deployment's BI server: the built index.html allows any frame.
    const consoleHeaders = new cloudfront.ResponseHeadersPolicy(this, 'ConsoleHeaders', {
      comment: 'Fleet Health console: security headers and its Content-Security-Policy',
      securityHeadersBehavior: securityHeaders(deploymentPolicy(embedHost)),
    });
    // API answers (JSON, the OpenAPI document, Prometheus text) get the same, so none is sniffed or framed.
    const apiHeaders = new cloudfront.ResponseHeadersPolicy(this, 'ApiHeaders', {
      comment: 'Fleet Health API: security headers',
      securityHeadersBehavior: securityHeaders(API_POLICY),
    });

    // The viewer's address for the API, written by CloudFront over whatever a caller sent under that name (the
    // route groups believe it only beside the origin token: shared/auth/caller.ts).
    const viewerAddress = this.viewerRequestFunction('ApiViewerAddress', "Hand the API the viewer's address, over any the caller sent", [
      `request.headers['${VIEWER_ADDRESS_HEADER}'] = { value: event.viewer.ip };`,
    ]);
    const originSecret = this.secretFor(originVerifySecret(stageName));
    const originToken = originVerifyVersionId
      ? SecretValue.secretsManager(originSecret.secretArn, { versionId: originVerifyVersionId })
      : originSecret.secretValue;

    const distribution = new cloudfront.Distribution(this, 'Site', {
      comment: `Fleet Health ${this.stackName}`,
      defaultRootObject: 'index.html',
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: logsBucket,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(siteBucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: consoleHeaders,
        functionAssociations: [{ function: spaRewrite, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
        compress: true,
      },
      additionalBehaviors: {
        '/api/*': {
          origin: new origins.HttpOrigin(apiDomain, {
            protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
            originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
            // The token that makes the route groups believe the viewer address viewerAddress sets: a dynamic
            // reference CloudFormation resolves from the secret (never in the template), at the version named.
            customHeaders: { [ORIGIN_VERIFY_HEADER]: originToken.unsafeUnwrap() },
          }),
          functionAssociations: [{ function: viewerAddress, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
          // A redirect would drop request bodies: API clients must speak HTTPS.
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
          cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
          // Managed-AllViewerExceptHostHeader without the cookies: CloudFront drops If-None-Match when a behaviour
          // forwards cookies (its Cookies page), which would turn every watch page's 304 into a full answer. The API
          // reads no cookie (tokens are bearer headers, the embed is cookieless).
          originRequestPolicy: new cloudfront.OriginRequestPolicy(this, 'ApiOriginRequest', {
            comment: 'Fleet Health /api/*: every viewer header but Host, every query string, no cookies',
            headerBehavior: cloudfront.OriginRequestHeaderBehavior.denyList('Host'),
            queryStringBehavior: cloudfront.OriginRequestQueryStringBehavior.all(),
            cookieBehavior: cloudfront.OriginRequestCookieBehavior.none(),
          }),
          responseHeadersPolicy: apiHeaders,
        },
      },
    });
    Validations.of(distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason: 'No geo restriction: the fleet is operated from several countries, and every API call needs a valid JWT.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No WAF web ACL: the SPA is static, the API behind /api/* is throttled at the HTTP API stage, login failures are ' +
          'throttled per user and per address (429), and every other API route needs a valid JWT. Add a web ACL when the service is exposed beyond its operators.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The distribution uses the default *.cloudfront.net certificate, whose minimum viewer protocol CloudFront fixes and ' +
          'this stack cannot raise; a custom domain (an alias with its ACM certificate and TLSv1.2_2021) is not built here yet, ' +
          'and one added by hand would be drift the next deploy reverts.',
      },
    );

    this.deploySite(siteBucket, distribution);
    return distribution;
  }

  /**
   * A deploy-time Lambda's own log group (`<id>Logs`, a month) and role (`<id>Role`) that may write only to it: the
   * CDK's default roles carry the AWSLambdaBasicExecutionRole managed policy. The caller adds what the Lambda does.
   */
  private deployTimeRole(id: string, description: string): { logGroup: logs.LogGroup; role: iam.Role } {
    const logGroup = new logs.LogGroup(this, `${id}Logs`, { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const role = new iam.Role(this, `${id}Role`, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
    return { logGroup, role };
  }

  /** A CloudFront Function run on viewer requests: `statements` change `request` (the viewer's, as `event` gives it), which goes on. */
  private viewerRequestFunction(id: string, comment: string, statements: readonly string[]): cloudfront.Function {
    return new cloudfront.Function(this, id, {
      comment,
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(
        ['function handler(event) {', '  var request = event.request;', ...statements.map((line) => `  ${line}`), '  return request;', '}'].join('\n'),
      ),
    });
  }

  /**
   * Copies the console's build (dist/web) to the site bucket, in two uploads (infra/README.md, "Console deploys"):
   * the content-hashed `assets/` first, cacheable for a year and never pruned, so a tab opened before a deploy, or an
   * index.html a cache still holds, finds the chunks it names; then the entry files (index.html, build.json),
   * revalidated on every load, and the CloudFront invalidation. The deployment Lambda gets an explicit role with
   * exactly the calls the handler makes (the construct's own grants would add s3:GetObject*, s3:List*,
   * s3:DeleteObject*, s3:Abort* and a cloudfront:* on every distribution).
   */
  private deploySite(siteBucket: s3.Bucket, distribution: cloudfront.Distribution): void {
    // The console's build (infra/console.ts): app.ts and the tests build it first when it is missing or stale.
    if (!existsSync(join(CONSOLE_OUT, 'index.html')))
      throw new Error('dist/web/index.html is missing: build the console first (npm run build, or ensureConsoleBuilt())');
    const site = new Asset(this, 'SiteContent', { path: CONSOLE_OUT });
    const { logGroup: deployLogs, role } = this.deployTimeRole('SiteDeployment', 'Copies the SPA into its bucket and invalidates the CloudFront cache');
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [site.bucket.arnForObjects(site.s3ObjectKey)] }));
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket', 's3:GetBucketTagging'], resources: [siteBucket.bucketArn] }));
    // Nothing is pruned (and the files are kept when the stack goes): no DeleteObject.
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [siteBucket.arnForObjects('*')] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudfront:CreateInvalidation', 'cloudfront:GetInvalidation'],
        resources: [distribution.distributionArn],
      }),
    );
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.logicalIdOf(siteBucket)}.Arn>/*]`,
      reason: 'The SPA deployment writes the objects of the site bucket, whose keys are the build output.',
    });

    const upload = {
      sources: [s3deploy.Source.bucket(site.bucket, site.s3ObjectKey)],
      destinationBucket: siteBucket,
      // Old hashed assets stay: an earlier index.html names them (the bucket grows by each deploy's changed chunks).
      prune: false,
      // Immutable: the construct's broad grants are dropped; the statements above are the whole policy.
      role: role.withoutPolicyUpdates(),
      logGroup: deployLogs,
      memoryLimit: 512,
    };
    // File names under assets/ carry their content's hash (Vite): a changed file is a new name.
    const assets = new s3deploy.BucketDeployment(this, 'SiteAssets', {
      ...upload,
      exclude: ['*'],
      include: ['assets/*'],
      cacheControl: [s3deploy.CacheControl.setPublic(), s3deploy.CacheControl.maxAge(Duration.days(365)), s3deploy.CacheControl.immutable()],
    });
    // The entry names this build's assets: uploaded after them, revalidated by browsers and CloudFront on every load.
    const entry = new s3deploy.BucketDeployment(this, 'SiteDeployment', {
      ...upload,
      exclude: ['assets/*'],
      cacheControl: [s3deploy.CacheControl.noCache()],
      distribution,
      distributionPaths: ['/*'],
    });
    entry.node.addDependency(assets);
    // The handler Lambda is a stack-level singleton, not a child of the deployment construct.
    const handler = this.node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (!handler) throw new Error('BucketDeployment handler not found: aws-cdk-lib changed its construct id');
    Validations.of(handler).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'CDK-internal BucketDeployment handler: aws-cdk-lib pins its Python runtime (upgraded with aws-cdk-lib), and it runs ' +
        'only during deployments, with the explicit SiteDeploymentRole.',
    });
    assets.node.addDependency(role);
    entry.node.addDependency(role);
  }

  /** The CloudFormation logical id of a resource's default child, as cdk-nag spells it in findings. */
  private logicalIdOf(resource: Construct): string {
    const cfn = resource.node.defaultChild;
    if (!(cfn instanceof CfnElement)) throw new Error(`${resource.node.path} has no CloudFormation resource`);
    return this.resolve(this.getLogicalId(cfn)) as string;
  }
}

function toHttpMethod(method: RouteMethod): HttpMethod {
  return HttpMethod[method];
}
