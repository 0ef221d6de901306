// Files other processes read while the service writes them (the DynamoDB Local pid file, the
// runtime file `npm run invoke` reads, the demo feed's state): written beside and renamed into
// place, so a reader sees the old file or the whole new one, never an empty or half-written one.
import { rename, writeFile } from 'node:fs/promises';

export async function writeFileAtomically(path: string, text: string, mode?: number): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, mode === undefined ? undefined : { mode });
  await rename(temporary, path);
}
