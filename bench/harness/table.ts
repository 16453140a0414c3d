// The harness's one table: a row per measurement, a column per system, the
// ratios of Sealpost to each peer, and how far a messages/s path is from the
// floor (seal + CID + blake3). A missing peer shows as `missing: why`. The
// bare column is the library Sealpost builds on, with nothing of Sealpost's:
// where it is shown beside Postfix, its own ratio to Postfix is the most a
// Sealpost ratio could be under that load. End-to-end rows also show what
// a delivered message cost on chain: JSON-RPC calls devnet received and
// lamports the domain authority paid (rent + fees), per message.

export type Cell = { value: number; note?: string } | { missing: string } | { text: string };

/** Per delivered message, over a row's measured window (bench/harness/pipeline-load.ts ChainCost). */
export interface PerMessage {
  /** JSON-RPC calls the chain node received (a batch counts each call). */
  rpcCalls: number;
  /** Lamports the domain authority paid: its balance before − after. */
  lamports: number;
  /** Of which rent (the Email accounts) … */
  rent: number;
  /** … and transaction fees (base + priority, failed transactions too). */
  fees: number;
}

export interface Row {
  name: string;
  unit: string;
  sealpost: Cell;
  postfix?: Cell;
  haraka?: Cell;
  /** The same library bare: a Fastify route (account API row), smtp-server answering 250 to everything (MX rows). */
  bare?: Cell;
  /** A path that ends in sealing each message: show how far it is from the floor. */
  fromFloor?: boolean;
  /** End to end: what a delivered message cost on chain. */
  perMessage?: PerMessage;
}

const lamportText = (n: number) => Math.round(n).toLocaleString('en-US');

/** The two per-message columns' cells. */
export function perMessageCells(p: PerMessage | undefined): [string, string] {
  if (!p) return ['—', '—'];
  return [
    p.rpcCalls.toFixed(1),
    `${lamportText(p.lamports)} (rent ${lamportText(p.rent)} + fees ${lamportText(p.fees)})`,
  ];
}

function show(cell: Cell | undefined, unit: string): string {
  if (!cell) return '—';
  if ('missing' in cell) return `missing: ${cell.missing}`;
  if ('text' in cell) return cell.text;
  const digits = unit === 'µs/msg' || cell.value < 100 ? 1 : 0;
  return `${cell.value.toFixed(digits)}${cell.note ? ` (${cell.note})` : ''}`;
}

function ratio(a: Cell, b: Cell | undefined, label: string): string | undefined {
  if (!b || !('value' in a) || !('value' in b) || b.value === 0) return undefined;
  return `${(a.value / b.value).toFixed(2)}× ${label}`;
}

export function formatTable(rows: Row[], floorPerSecond?: number): string {
  const header = [
    'measurement',
    'unit',
    'Sealpost',
    'Postfix',
    'Haraka',
    'bare library (Fastify / smtp-server)',
    'Sealpost ÷ peer',
    'floor ÷ Sealpost',
    'RPC calls/msg',
    'lamports/msg (authority)',
  ];
  const lines = rows.map((r) => {
    const ratios = [
      ratio(r.sealpost, r.postfix, 'Postfix'),
      ratio(r.sealpost, r.haraka, 'Haraka'),
      ratio(r.sealpost, r.bare, 'bare'),
      // The MX rows: how far the library itself gets past Postfix under the same load.
      r.unit === 'msg/s' && r.bare && r.postfix ? ratio(r.bare, r.postfix, 'Postfix (bare)') : undefined,
    ]
      .filter(Boolean)
      .join(', ');
    const fromFloor =
      floorPerSecond && r.fromFloor && 'value' in r.sealpost && r.sealpost.value > 0
        ? `${(floorPerSecond / r.sealpost.value).toFixed(1)}×`
        : '—';
    return [
      r.name,
      r.unit,
      show(r.sealpost, r.unit),
      show(r.postfix, r.unit),
      show(r.haraka, r.unit),
      show(r.bare, r.unit),
      ratios || '—',
      fromFloor,
      ...perMessageCells(r.perMessage),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}
