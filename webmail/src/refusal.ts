// A refusal of what the holder asked, in words, before anything was spent or
// signed (bad input, a check that failed). It is shown, not logged: the
// console keeps its errors for failures the page did not expect.
export class Refusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Refusal';
  }
}
