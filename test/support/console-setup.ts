// For files that start no DynamoDB Local of the run's (npm-start.test.ts runs `npm start`, which
// starts its own): only the console's build, so their service finds dist/web built and current.
import { ensureConsoleBuilt } from '../../infra/console.js';

export async function setup(): Promise<void> {
  await ensureConsoleBuilt();
}
