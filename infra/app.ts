// CDK app: one stack, FleetHealth-<stage> (context `stage`, default prod), checked
// by cdk-nag's AWS Solutions rules at synth. Environment-agnostic: synthesizes
// offline without credentials; `cdk deploy` picks the account and region.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ensureConsoleBuilt } from './console.js';
import { FleetHealthStack, fleetHealthPropsFromContext } from './fleet-health-stack.js';

// The SPA bucket's content is the console's build: made here when missing or older than its sources.
await ensureConsoleBuilt((line) => console.error(`${line}…`));

const app = new App();
const props = fleetHealthPropsFromContext(app);
new FleetHealthStack(app, `FleetHealth-${props.stage}`, {
  ...props,
  description: `Fleet Health Service (${props.stage})`,
});
// cdk-nag 3 runs as a CDK validation plugin (it no longer is an Aspect): an unacknowledged
// finding fails the synth and is listed in cdk.out/validation-report.json.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
