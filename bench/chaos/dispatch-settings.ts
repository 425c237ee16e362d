/** The dispatcher settings every backend uses, in the harness process or in a dispatcher process. */

/**
 * The dispatcher settings of every scenario. The headers timeout is short so that a hanging
 * receiver costs half a second, not ten; the lease is well above it. Concurrency and connections
 * are generous because hangs and slow accepts hold a connection each while they last.
 */
export const CHAOS_DISPATCH = {
  headersTimeoutMs: 500,
  bodyTimeoutMs: 500,
  leaseMs: 5_000,
  concurrency: 64,
  connections: 64,
} as const;

/** A customer's endpoint on the chaos receiver. */
export function customerUrl(hooksUrl: string, customer: string): string {
  return `${hooksUrl}${encodeURIComponent(customer)}`;
}
