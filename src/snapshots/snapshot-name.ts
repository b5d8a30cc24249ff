// The name of Nomos's snapshots: `nomos-` and the plan's id without dashes,
// cut to fit. Invariants: every name built here is a valid Proxmox snapshot
// name (a letter first, then letters, digits, '-' or '_', at most 40
// characters); a snapshot is Nomos's own only when its name starts with
// NOMOS_SNAPSHOT_PREFIX AND a guest_snapshots row records it (retention
// checks both, never the name alone).
export const NOMOS_SNAPSHOT_PREFIX = "nomos-";

const PROXMOX_SNAPSHOT_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;

export const isValidSnapshotName = (name: string): boolean => PROXMOX_SNAPSHOT_NAME.test(name);

export const hasNomosPrefix = (name: string): boolean => name.startsWith(NOMOS_SNAPSHOT_PREFIX) && isValidSnapshotName(name);

/** "nomos-3f2a9c1e0b7d": one name per plan (at most one snapshot per guest per plan). */
export function snapshotNameFor(planId: string): string {
  const id = planId.replace(/[^A-Za-z0-9]/g, "").slice(0, 16);
  if (id.length === 0) throw new Error(`plan id "${planId}" has no letters or digits to name a snapshot after`);
  return `${NOMOS_SNAPSHOT_PREFIX}${id}`;
}
