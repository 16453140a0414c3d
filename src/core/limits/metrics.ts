// A tiny metrics registry: counters and gauges with labels, rendered in the
// Prometheus text format for a /metrics route. One registry per process
// (serve creates it and hands it to the parts that count), so two servers in
// one test process never mix their figures.

export type Labels = Record<string, string>;

interface Series {
  labels: Labels;
  value: number;
}

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

abstract class Metric {
  protected readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
  ) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`bad metric name ${name}`);
  }

  /** The current value for these labels (0 when never touched). */
  get(labels: Labels = {}): number {
    return this.series.get(labelKey(labels))?.value ?? 0;
  }

  protected entry(labels: Labels): Series {
    const key = labelKey(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels: { ...labels }, value: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const s of this.series.values()) {
      const names = Object.keys(s.labels).sort();
      const labels = names.length
        ? `{${names.map((k) => `${k}="${escapeLabel(s.labels[k] ?? '')}"`).join(',')}}`
        : '';
      lines.push(`${this.name}${labels} ${s.value}`);
    }
    return lines.join('\n');
  }

  /**
   * The series as prom-client's metric JSON, for summing a deployment's
   * processes (src/run/serve/cluster.ts): counters add up; a gauge (a balance
   * every process reads from the chain) takes the highest value.
   */
  snapshot(): MetricSnapshot {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.type === 'counter' ? 'sum' : 'max',
      values: [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value })),
    };
  }
}

/** One metric in prom-client's `getMetricsAsJSON()` shape. */
export interface MetricSnapshot {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  aggregator: 'sum' | 'max';
  values: { labels: Labels; value: number }[];
}

export class Counter extends Metric {
  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }

  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new RangeError('a counter only goes up');
    this.entry(labels).value += by;
  }
}

export class Gauge extends Metric {
  constructor(name: string, help: string) {
    super(name, help, 'gauge');
  }

  set(value: number, labels: Labels = {}): void {
    this.entry(labels).value = value;
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  counter(name: string, help: string): Counter {
    return this.register(name, () => new Counter(name, help), Counter);
  }

  gauge(name: string, help: string): Gauge {
    return this.register(name, () => new Gauge(name, help), Gauge);
  }

  /** Every metric as prom-client metric JSON (see Metric.snapshot). */
  snapshot(): MetricSnapshot[] {
    return [...this.metrics.values()].map((m) => m.snapshot());
  }

  /** Prometheus text exposition (version 0.0.4). */
  render(): string {
    const parts = [...this.metrics.values()].map((m) => m.render());
    return parts.length ? `${parts.join('\n')}\n` : '';
  }

  private register<T extends Metric>(
    name: string,
    make: () => T,
    kind: abstract new (...args: never[]) => T,
  ): T {
    const existing = this.metrics.get(name);
    if (existing) {
      if (!(existing instanceof kind))
        throw new Error(`metric ${name} is already registered as a ${existing.type}`);
      return existing;
    }
    const metric = make();
    this.metrics.set(name, metric);
    return metric;
  }
}

/** The cost guard's series, registered once per registry. */
export function costGuardMetrics(registry: MetricsRegistry) {
  return {
    /** Messages (RCPTs) deferred by the guard, by reason. */
    deferred: registry.counter(
      'sealpost_mx_deferred_total',
      'Recipients or transactions the MX deferred with 4xx, by reason (sender, recipient, overall, null_sender, balance).',
    ),
    balance: registry.gauge(
      'sealpost_authority_balance_lamports',
      'Last read balance of the domain authority that pays for SendMail, in lamports.',
    ),
    low: registry.gauge(
      'sealpost_authority_balance_low',
      '1 while the authority balance is below [chain] min_authority_lamports (the MX defers new mail), else 0.',
    ),
    floor: registry.gauge(
      'sealpost_authority_floor_lamports',
      'The balance below which the MX defers new mail: [chain] min_authority_lamports (or, with "auto", an hour of peak spend) plus one message\'s cost.',
    ),
    peakHour: registry.gauge(
      'sealpost_publications_peak_hour',
      'The most chain publications the MX accepted in one clock hour of the last week (sizes an "auto" balance floor).',
    ),
    balanceReadErrors: registry.counter(
      'sealpost_authority_balance_read_errors_total',
      'Failed reads of the authority balance.',
    ),
  };
}

export type CostGuardMetrics = ReturnType<typeof costGuardMetrics>;
