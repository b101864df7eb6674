// The cloud-node summary of a 2.0 system tenant (T34): what the accounts routes show of its system
// (`panels` of a multi-site customer, search by node name or serial number) without loading it. The
// tenant host computes it when it loads the system and after a durable write whose patches touch
// `cloudNodes`, and hands it on to be kept in the tenant's registry row (`tenants.info`).

/** One cloud node as the summary lists it. */
export interface CloudNodeSummary {
  readonly id: string;
  readonly name: string;
  readonly serialNumber: string | null;
  readonly created: string | null;
  /** The node's self-help resets per month (I85); null: the default. */
  readonly credentialResetsPerMonth: number | null;
}

/** A system tenant's `info` in the registry. */
export interface SystemSummary {
  readonly nodes: readonly CloudNodeSummary[];
}

/** The summary of a 2.0 system's state (a snapshot, or the live state read within one synchronous stretch). */
export function systemSummary(system: unknown): SystemSummary {
  const nodes = (system as { cloudNodes?: readonly Record<string, unknown>[] } | null)?.cloudNodes ?? [];
  return {
    nodes: nodes.map((n) => ({
      id: String(n.id),
      name: typeof n.name === "string" ? n.name : "",
      serialNumber: typeof n.serialNumber === "string" ? n.serialNumber : null,
      created: typeof n.created === "string" ? n.created : null,
      credentialResetsPerMonth: typeof n.credentialResetsPerMonth === "number" ? n.credentialResetsPerMonth : null,
    })),
  };
}

/** Whether two summaries list the same nodes with the same fields, in the same order. */
export function sameSummary(a: SystemSummary, b: SystemSummary): boolean {
  return (
    a.nodes.length === b.nodes.length &&
    a.nodes.every((n, i) => {
      const m = b.nodes[i]!;
      return (
        n.id === m.id &&
        n.name === m.name &&
        n.serialNumber === m.serialNumber &&
        n.created === m.created &&
        n.credentialResetsPerMonth === m.credentialResetsPerMonth
      );
    })
  );
}

/**
 * Whether a write's patches may change the summary: a patch of the `cloudNodes` list (L21 addresses
 * elements as `[collection, key]`), or one that replaces the whole state.
 */
export function touchesCloudNodes(patches: readonly unknown[]): boolean {
  for (const p of patches) {
    const path = (p as { path?: readonly unknown[] } | null)?.path;
    if (path === undefined || path.length === 0 || path[0] === "cloudNodes") return true;
  }
  return false;
}
