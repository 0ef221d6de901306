// A cluster renamed, or moved to another customer, in the inventory (an ingest of its record, or the metrics
// puller's inventory): its alert issues take the new names at once, its whole history, since the lists filter
// and search by the names stored on each issue. Grouping renames only the issues it regroups (a cluster's recent
// ones), so a cluster quiet for a day kept its old names in every list. AI issues take names at their next grouping.
import { mapLimit } from '../db/client.js';
import { renameClusterIssues } from '../db/issues.js';
import type { ClusterInput } from '../fleet/records.js';
import { createLogger, errorFields } from '../log.js';

const log = createLogger('issues');

/** Renames the issues of each cluster to the names given. A failure is logged, never the caller's: the record is stored. */
export async function renameIssuesOf(clusters: readonly Pick<ClusterInput, 'cluster_id' | 'cluster_name' | 'customer_name'>[]): Promise<void> {
  await mapLimit(clusters, 4, async ({ cluster_id, cluster_name, customer_name }) => {
    try {
      const renamed = await renameClusterIssues(cluster_id, { cluster_name, customer_name });
      if (renamed > 0) log.info('issues renamed after the inventory', { cluster_id, renamed });
    } catch (error) {
      log.error('renaming the issues of a renamed cluster failed; its recent ones take the names at their next grouping', {
        cluster_id,
        ...errorFields(error),
      });
    }
  });
}
