// One process per data directory: a `LOCK` file holding the owner's pid. A lock left by a
// process that no longer exists (crash, SIGKILL) is taken over.
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { kdpError } from '../errors.js';
import { pidAlive } from '../util/pid-alive.js';
import { openPrivate } from '../util/private-files.js';

export interface DirLock {
  release(): Promise<void>;
}


export async function acquireDirLock(dir: string): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await openPrivate(path, 'wx');
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return { release: () => unlink(path).catch(() => undefined) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(pid) && pid > 0 && pidAlive(pid)) {
      throw kdpError('KDP_STORE_LOCKED', `data directory ${dir} is in use by process ${pid}`);
    }
    await unlink(path).catch(() => undefined); // stale: its owner is gone
  }
  throw kdpError('KDP_STORE_LOCKED', `data directory ${dir}: could not take its lock`);
}
