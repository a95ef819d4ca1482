/** One figure printed by `npm run bench`. */
export interface BenchRow {
  /** What was measured, e.g. `executor overhead per call`. */
  name: string;
  value: number;
  unit: string;
  note?: string;
  /**
   * The figure Navi aims for, in the same unit: `max` when the value must stay at or below it
   * (a time, a size), `min` when it must reach it (a recall, a rate). The table prints it beside
   * the value with whether it holds.
   */
  goal?: { value: number; direction: 'max' | 'min' };
}

/** Options after the group names: `npm run bench -- streams --streams 200 --rate 50`. */
export interface BenchOptions {
  /** `--name value` pairs, as given (numbers are parsed by the group that reads them). */
  flags: Record<string, string>;
}
