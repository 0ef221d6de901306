// Which inventory states mean a cluster has left the fleet (DESIGN §9's resource_state): every view leaves such a
// cluster out. Apart from records.ts, with no import, so the console's cluster page can say so without zod.
const GONE_STATES = new Set(['DELETED', 'DELETING', 'TERMINATED', 'RELEASED']);

/** Whether a cluster in this state has left the fleet (in any case: `terminated` too). */
export const isGone = (cluster: { resource_state: string }) => GONE_STATES.has(cluster.resource_state.toUpperCase());
