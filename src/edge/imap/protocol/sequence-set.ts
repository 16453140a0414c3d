// Sequence sets (RFC 3501 §9 sequence-set): "1:4,7,9:*". `*` is the
// largest number in use; a range is unordered ("5:2" = "2:5").
import { ImapSyntaxError } from './tokens.ts';

export type Range = [number, number];

const MAX_RANGES = 10_000;
const MAX_NUMBER = 0xffffffff;

/** Parses a set; `star` is what `*` stands for (the largest number in use, or 0 when none). */
export function parseSequenceSet(text: string, star: number): Range[] {
  if (!/^[0-9:*,]+$/.test(text)) throw new ImapSyntaxError('invalid sequence set');
  const parts = text.split(',');
  if (parts.length > MAX_RANGES) throw new ImapSyntaxError('sequence set has too many ranges');
  return parts.map((part) => {
    const ends = part.split(':');
    if (ends.length > 2) throw new ImapSyntaxError('invalid sequence set');
    const nums = ends.map((e) => {
      if (e === '*') return star;
      if (!/^[1-9][0-9]{0,9}$/.test(e)) throw new ImapSyntaxError('invalid sequence set number');
      const n = Number(e);
      if (n > MAX_NUMBER) throw new ImapSyntaxError('sequence set number out of range');
      return n;
    });
    const a = nums[0] as number;
    const b = (nums[1] ?? a) as number;
    return a <= b ? [a, b] : [b, a];
  });
}

export function inRanges(n: number, ranges: Range[]): boolean {
  for (const [a, b] of ranges) if (n >= a && n <= b) return true;
  return false;
}

/** Compact form of ascending numbers: [1,2,3,5] → "1:3,5". */
export function formatSequenceSet(nums: number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < nums.length) {
    let j = i;
    while (j + 1 < nums.length && (nums[j + 1] as number) === (nums[j] as number) + 1) j++;
    out.push(j === i ? `${nums[i]}` : `${nums[i]}:${nums[j]}`);
    i = j + 1;
  }
  return out.join(',');
}
