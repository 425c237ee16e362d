/** How the demo writes numbers for people: thousands separated, fixed decimals. */

/** 20000 → "20,000"; non-integers keep up to `decimals` places. */
export function formatCount(n: number, decimals = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: decimals });
}
