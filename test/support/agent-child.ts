// An agent worker in a process of its own (`node --import tsx test/support/agent-child.ts`), with the environment of
// the test that starts it (its tables, its LLM server): a test can kill it mid-attempt, as Lambda ends a worker at
// its timeout or out of memory, where nothing of the attempt is written.
import { runAgentTasks } from '../../shared/agents/run-tasks.js';

await runAgentTasks();
