import { aNewPlant, uniqueId } from '../helpers/plants';
import { postPlant, storedRows } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll({ LOG_LEVEL: 'debug' });

const commits = () => app.logs.filter((line) => line.msg === 'group commit') as unknown as { rows: number }[];

describe('group commit', () => {
  it('when a batch holds conflicts, retries and new plants, then each gets its own answer in one commit', async () => {
    const existing = aNewPlant({ name: 'Existing' });
    await postPlant(app, existing);
    const shared = uniqueId();
    const before = commits().length;

    const [fresh, conflict, retry, firstForShared, secondForShared, sameAsFirst] = await Promise.all([
      postPlant(app, aNewPlant({ name: 'Fresh' })),
      postPlant(app, { ...existing, name: 'Not the same' }),
      postPlant(app, existing),
      postPlant(app, { id: shared, name: 'First' }),
      postPlant(app, { id: shared, name: 'Second' }),
      postPlant(app, { id: shared, name: 'First' }),
    ]);

    expect(fresh?.status).toBe(200);
    expect({ status: conflict?.status, error: conflict?.body.error }).toEqual({ status: 400, error: 40007 });
    expect(retry?.status).toBe(200);
    const sharedStatuses = [firstForShared?.status, secondForShared?.status, sameAsFirst?.status];
    const winner = firstForShared?.status === 200 ? 'First' : 'Second';
    expect(storedRows(app).find((row) => row.id === BigInt(shared))?.name).toBe(winner);
    expect(sharedStatuses).toEqual(winner === 'First' ? [200, 400, 200] : [400, 200, 400]);
    expect(commits().slice(before).reduce((sum, batch) => sum + batch.rows, 0)).toBe(6);
  });
});
