// bootstrap: the deploy step that creates the bootstrap superadmin, run by CloudFormation through
// the stack's custom resource (infra/fleet-health-stack.ts) on Create and Update, never by the API.
import type { Context } from 'aws-lambda';
import { BOOTSTRAP_FUNCTION, onBootstrapEvent, type BootstrapResponse } from '../shared/auth/bootstrap-resource.js';
import { withTableAccess } from '../shared/db/access.js';
import { withInvocation } from '../shared/log.js';

export const handler = (event: unknown, context?: Context): Promise<BootstrapResponse> =>
  // Its DynamoDB requests may reach only its declared tables, as on AWS (shared/db/access.ts).
  withTableAccess(BOOTSTRAP_FUNCTION.name, BOOTSTRAP_FUNCTION, () =>
    withInvocation({ service: BOOTSTRAP_FUNCTION.name, context }, () => onBootstrapEvent(event)),
  );
