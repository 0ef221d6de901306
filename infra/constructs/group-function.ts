// The one construct that owns Lambda defaults (DESIGN §11.5): every route group,
// every worker and the deploy step (functions/bootstrap.ts) is a GroupFunction, so runtime, architecture, bundling, log
// retention and the shape of the execution role are decided here and nowhere else.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssetHashType, DockerImage, RemovalPolicy, Tags, Validations, type BundlingOptions, type Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ACCESS_OPERATIONS } from '../../shared/db/access.js';
import type { TableAccess } from '../../shared/http/route.js';
import { REPO_ROOT, functionEntry, nodeOptionsOf } from '../bundling.js';

/** Tag on every GroupFunction's Lambda, so tests tell ours from CDK-internal functions. */
export const FUNCTION_KIND_TAG = 'fleet-health:function-kind';

/** A route group, a worker, or a step CloudFormation runs while deploying (a custom resource's handler). */
export type FunctionKind = 'route-group' | 'worker' | 'deploy';

export interface GroupFunctionProps {
  /** The route group, worker or deploy step name: file `functions/<name>.ts`, construct id, log `service`. */
  readonly name: string;
  readonly kind: FunctionKind;
  /** Physical function name (e.g. `fleet-health-prod-auth`), so the CLI can invoke it by name. */
  readonly functionName: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
}

/** Lambda runtime for every function. nodejs22.x is mandated (DESIGN §1, REFERENCE "Seen on these machines"). */
export const LAMBDA_RUNTIME = lambda.Runtime.NODEJS_22_X;

export class GroupFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** Its physical name as text, not a reference: what its own policy and environment may name (a reference to itself is a cycle). */
  readonly physicalName: string;

  constructor(scope: Construct, id: string, props: GroupFunctionProps) {
    super(scope, id);
    this.physicalName = props.functionName;
    if (!existsSync(functionEntry(props.name))) throw new Error(`${this.node.path}: entry functions/${props.name}.ts not found`);

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/lambda/${props.functionName}`,
      retention: logs.RetentionDays.ONE_MONTH,
      // Operational logs with a one-month retention; the audit trail lives in DynamoDB.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // An explicit role instead of the AWSLambdaBasicExecutionRole managed policy
    // (logs:* on every log group): this function may write to its own log group only.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${props.name} Lambda`,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    const nodeOptions = nodeOptionsOf(props.name);
    this.function = new NodejsFunction(this, 'Function', {
      functionName: props.functionName,
      description: props.description,
      // Bundled in-process with infra/bundling.ts, the options `npm run build` uses (see bundleFunction).
      code: lambda.Code.fromAsset(REPO_ROOT, {
        assetHashType: AssetHashType.OUTPUT,
        bundling: bundleFunction(props.name),
      }),
      handler: 'index.handler', // index.mjs (BUNDLE.outputFile), export `handler`
      runtime: LAMBDA_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      // The rest is each declared configuration concern's (the stack's bindConfig).
      environment: nodeOptions ? { NODE_OPTIONS: nodeOptions } : {},
    });
    Tags.of(this.function).add(FUNCTION_KIND_TAG, props.kind);

    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'nodejs22.x is the runtime the design mandates (DESIGN §1, REFERENCE.md): development machines and CI run Node 20, ' +
        'the code avoids APIs newer than that, and the lockfile-pinned AWS SDK supports it. Moving to a newer Lambda ' +
        'runtime is a deliberate change, tested on that runtime first.',
    });
  }

  /**
   * Least-privilege table access: the operations the DynamoDB client makes for the declared
   * access (shared/db/access.ts, ACCESS_OPERATIONS), on this table, and on its indexes when
   * the access queries; with `leadingKeys`, only on items whose partition key is one of them (IAM's StringLike:
   * a `*` takes any text). Returns whether the indexes were granted.
   */
  bindTable(table: ITable, access: TableAccess, hasIndexes: boolean, leadingKeys?: readonly string[]): boolean {
    const operations = ACCESS_OPERATIONS[access];
    const queriesIndexes = hasIndexes && operations.includes('Query');
    this.allow(
      new iam.PolicyStatement({
        actions: operations.map((operation) => `dynamodb:${operation}`),
        resources: [table.tableArn, ...(queriesIndexes ? [`${table.tableArn}/index/*`] : [])],
        ...(leadingKeys && { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...leadingKeys] } } }),
      }),
    );
    return queriesIndexes;
  }

  /** Adds a statement to this function's role. Actions must be spelled out: no wildcards. */
  allow(statement: iam.PolicyStatement): void {
    for (const action of statement.actions) {
      if (action.includes('*')) throw new Error(`${this.node.path}: wildcard action ${action} is not allowed`);
    }
    this.role.addToPrincipalPolicy(statement);
  }

  /** Acknowledges a cdk-nag finding on this function (its role and policy included), with the reason. */
  acknowledge(id: string, reason: string): void {
    Validations.of(this).acknowledge({ id, reason });
  }

  get functionName(): string {
    return this.function.functionName;
  }
}

/** Directory holding every function's bundle, built by one esbuild run on first use in this process. */
let bundleDir: string | undefined;

function bundledFunctions(): string {
  if (!bundleDir) {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-health-bundles-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    // buildFunctionBundles needs esbuild's asynchronous API (plugins), and a construct is built synchronously.
    execFileSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'infra', 'bundling.ts'), dir], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    bundleDir = dir;
  }
  return bundleDir;
}

/**
 * Asset bundling for `functions/<name>.ts` with infra/bundling.ts, the bundles
 * `npm run build` makes: `buildFunctionBundles` in one child process for all functions
 * (≈ 5 s), each function's asset then copied from it. NodejsFunction's own
 * bundler would start `npx --no-install esbuild` once per function (≈0.6 s each,
 * 18 times per synth) with the options re-spelled as CLI flags.
 * Skipped like any asset bundling when the stack is excluded via
 * `aws:cdk:bundling-stacks` (unit tests).
 */
function bundleFunction(name: string): BundlingOptions {
  return {
    local: {
      tryBundle(outputDir: string): boolean {
        cpSync(join(bundledFunctions(), name), outputDir, { recursive: true });
        return true;
      },
    },
    // No Docker fallback: local bundling above succeeds or throws (esbuild is a devDependency).
    // The command also names the entry, which keeps each function's asset-cache key distinct
    // (CDK keys its per-process bundling cache on these options, and tryBundle is a function).
    image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
    command: ['sh', '-c', `echo "functions/${name}.ts is bundled in-process by esbuild: run npm ci" >&2; exit 1`],
  };
}
