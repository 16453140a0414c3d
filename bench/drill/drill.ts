// What every drill is: a name, a time budget, and a run that ends in a
// verdict with the figures that back it.
export interface DrillResult {
  pass: boolean;
  detail: string;
}

export interface Drill {
  name: string;
  /** What it does, one line (printed before it runs). */
  summary: string;
  /** Hard bound on the run; past it the drill fails. */
  budgetMs: number;
  run(log: (line: string) => void): Promise<DrillResult>;
}
