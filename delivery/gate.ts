// At most `limit` callers inside at once; the rest wait in arrival order.
// The pipeline runs many deliveries at once (most of them only wait for the
// chain) but seals only a few at a time, since sealing holds the message in
// memory and uses the CPU.
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next();
      else this.active--;
    }
  }
}
