// The scrape of a fleet with no clusters yet (a fresh deploy): averages have no samples, since
// the contract's 0 would read as a fleet in ruins and fire an alert rule such as
// `fleet_health_average_score{kind="overall"} < 50` before the first cluster is ingested.
import { beforeAll, describe, expect, it } from 'vitest';
import { fleetExposition } from '../../shared/fleet/exposition.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

describe('the scrape of an empty fleet', () => {
  it('says the fleet is empty and gives no average score', async () => {
    const lines = (await fleetExposition(new Date())).split('\n');
    expect(lines).toContain('fleet_health_fleet_size 0');
    expect(lines).toContain('# TYPE fleet_health_average_score gauge');
    expect(lines.filter((l) => l.startsWith('fleet_health_average_score'))).toEqual([]);
    // The other fleet-wide families still answer their zeros: a count of nothing is 0.
    expect(lines).toContain('fleet_health_clusters{classification="Critical"} 0');
  });
});
