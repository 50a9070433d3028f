// One server per test file: `hostileSuite` starts it, seeds the shared fixtures and each table's
// own, runs the tables' cases in order, and closes it.

import { afterAll, beforeAll, describe } from 'vitest';
import { runCases } from './cases.js';
import type { HostileTable } from './cases.js';
import { seed } from './fixtures.js';
import { startHostileServer } from './harness.js';
import type { HostileServer } from './harness.js';

export function hostileSuite(title: string, tables: Readonly<Record<string, HostileTable>>,
  extra?: (h: () => HostileServer) => void): void {
  describe(title, () => {
    let h: HostileServer;
    beforeAll(async () => {
      h = await startHostileServer();
      await seed(h);
      for (const t of Object.values(tables)) {
        for (const f of t.fixtures ?? []) await h.must('POST', f.path, { body: f.body });
      }
    });
    afterAll(async () => { await h?.close(); });
    extra?.(() => h);
    for (const [name, t] of Object.entries(tables)) {
      describe(name, () => runCases(t.cases, () => h));
    }
  });
}
