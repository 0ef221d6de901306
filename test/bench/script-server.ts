// A bench's stand-in server: a script run by a child `node`, so that building its answers costs
// the measured process nothing. The script reads its input (JSON) from stdin, which holds more than
// one argument may (10,000 cluster ids), and prints the port it listens on.
import { spawn } from 'node:child_process';

/** The script as a child with `input` on its stdin: its URL, and its stop. */
export async function startScriptServer(name: string, script: string, input: unknown): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin!.end(JSON.stringify(input));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('close', (code) => reject(new Error(`${name}: the stub server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The script's preamble: its input, read from stdin, as `input`, then `body` runs. */
export const withStdinInput = (body: string) => `
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
const input = JSON.parse(Buffer.concat(chunks).toString());
${body}
});
`;
