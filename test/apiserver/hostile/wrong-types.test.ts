// Values of the wrong type for every kind's fields, by every write verb, over HTTPS: refused
// with upstream's status and Status body, with the store revision unmoved.
import { expect, it } from 'vitest';
import { hostileSuite } from './suite.js';
import { WRONG_TYPES_TABLE } from './tables/wrong-types.js';
import { WRONG_TYPES_MORE_TABLE } from './tables/wrong-types-more.js';

hostileSuite('values of the wrong type are refused by every write verb', {
  'wrong types per field per kind': WRONG_TYPES_TABLE,
  'wrong types for the other kinds': WRONG_TYPES_MORE_TABLE,
}, (h) => {
  it('the revision a list reports is the store revision and moves with each write', async () => {
    const before = await h().revision();
    const cm = await h().must('POST', '/api/v1/namespaces/hostile/configmaps',
      { body: { metadata: { name: 'rev-probe' } } });
    const after = await h().revision();
    expect(Number(cm.metadata.resourceVersion)).toBe(after);
    expect(after).toBeGreaterThan(before);
    expect(after).toBe(h().server.store.currentRevision());
  });
});
