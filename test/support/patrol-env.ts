// The settings a patrol lock test runs a scan under: a local OpenAI-compatible server as the model, one attempt per
// call, and a 3 s lease (renewed every second; a killed worker's lapses soon). Read per call, as the service reads them.
import { resetSettings } from '../../shared/config/env.js';

const PATROL_MODEL_ENV = {
  PATROL_LEASE_SECONDS: '3',
  LLM_PROVIDER: 'openai',
  LLM_MODEL: 'gpt-4o-mini',
  LLM_MAX_ATTEMPTS: '1',
  LLM_RETRY_BASE_MS: '1',
};

/** Sets them, with `baseUrl` as the model's server; the returned function takes them away again. */
export function usePatrolModelEnv(baseUrl: string): () => void {
  Object.assign(process.env, PATROL_MODEL_ENV, { LLM_BASE_URL: baseUrl });
  resetSettings();
  return () => {
    for (const name of [...Object.keys(PATROL_MODEL_ENV), 'LLM_BASE_URL']) delete process.env[name];
    resetSettings();
  };
}
