/** One figure printed by `npm run bench`. */
export interface BenchRow {
  /** What was measured, e.g. `executor overhead per call`. */
  name: string;
  value: number;
  unit: string;
  note?: string;
}
