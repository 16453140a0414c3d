// Zone-file text (RFC 1035 master file syntax) for the records of
// buildDnsRecords, grouped per domain, ready to paste. TXT values longer
// than 255 bytes are split into several character-strings on one line.
import type { DnsRecordSpec, DnsRecordsResult } from './dns-records.ts';

export const DEFAULT_TTL = 3600;

/** `"…" "…"` with 255-byte pieces, quotes and backslashes escaped. */
export function quoteTxt(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const pieces: string[] = [];
  for (let i = 0; i < bytes.length || pieces.length === 0; i += 255) {
    pieces.push(new TextDecoder().decode(bytes.subarray(i, i + 255)));
  }
  return pieces.map((p) => `"${p.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(' ');
}

function line(r: DnsRecordSpec, width: number): string {
  const value = r.type === 'TXT' ? quoteTxt(r.value) : r.value;
  return `${`${r.name}.`.padEnd(width)} ${DEFAULT_TTL} IN ${r.type.padEnd(5)} ${value}`;
}

export function renderZoneText(result: DnsRecordsResult): string {
  const out: string[] = ['; DNS records for this Sealpost configuration (sealpost dns-records)'];
  for (const w of result.warnings) out.push(`; WARNING: ${w}`);
  const zones = [...new Set(result.records.map((r) => r.zone))];
  for (const zone of zones) {
    const records = result.records.filter((r) => r.zone === zone);
    const width = Math.max(...records.map((r) => r.name.length + 1));
    out.push('', `; --- ${zone} ---`);
    let purpose = '';
    for (const r of records) {
      if (r.purpose !== purpose) {
        out.push(`; ${r.purpose}${r.note ? ` (${r.note})` : ''}`);
      }
      purpose = r.purpose;
      // The PTR reminder has no owner name we could know: it stays a comment.
      if (r.type === 'PTR') out.push(`;   PTR <outbound IP> -> ${r.value}`);
      else out.push(line(r, width));
    }
  }
  return `${out.join('\n')}\n`;
}
