// A row of the writes section's tables (bench/writes*.ts) and how a ratio is judged against its target.

export type Row = { row: string; value: string; aa: string; target: string; met: string };

/** Met, missed, or not decided: a ratio whose distance from its target is within the A/A's distance from 1. */
export function verdict(ratio: number, target: number, atLeast: boolean, aa: number): string {
  if (Math.abs(ratio / target - 1) <= Math.abs(aa - 1)) return 'not decided (within the A/A)';
  return (atLeast ? ratio >= target : ratio <= target) ? 'yes' : 'no';
}
