// JSON text with exact u64s: bigints become bare digits, so lamports above
// 2^53 reach clients as the integers a real node sends.
export function toJsonText(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        return `[${value.map((v) => (v === undefined || typeof v === 'function' ? 'null' : toJsonText(v))).join(',')}]`;
      }
      const parts: string[] = [];
      for (const [k, v] of Object.entries(value)) {
        if (v === undefined || typeof v === 'function') continue;
        parts.push(`${JSON.stringify(k)}:${toJsonText(v)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return 'null';
  }
}
