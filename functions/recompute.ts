// recompute: background Lambda. Its work lands with issue #5; until then it refuses
// to run rather than pretending to succeed.
import { createLogger } from '../shared/log.js';

const log = createLogger('recompute');

export const handler = async (event: unknown): Promise<never> => {
  log.error('invoked before implementation', { event_type: typeof event });
  throw new Error('recompute is not implemented yet (issue #5)');
};
