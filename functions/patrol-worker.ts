// patrol-worker: background Lambda. Its work lands with issue #9; until then it refuses
// to run rather than pretending to succeed.
import { createLogger } from '../shared/log.js';

const log = createLogger('patrol-worker');

export const handler = async (event: unknown): Promise<never> => {
  log.error('invoked before implementation', { event_type: typeof event });
  throw new Error('patrol-worker is not implemented yet (issue #9)');
};
