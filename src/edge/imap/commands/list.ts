// LIST and LSUB (RFC 3501 §6.3.8-9) with CHILDREN (RFC 3348) and
// SPECIAL-USE (RFC 6154) attributes. Every folder counts as subscribed, so
// LSUB answers like LIST. LIST-EXTENDED selection/return options are
// accepted (SPECIAL-USE selection honoured) though not advertised.
import { FOLDER_DELIMITER, specialUseOf } from '../../../core/store/index.ts';
import { str } from '../protocol/format.ts';
import { decodeMutf7, encodeMutf7 } from '../protocol/mutf7.ts';
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { mail } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

function patternRegex(pattern: string): RegExp {
  let re = '';
  for (const ch of pattern) {
    if (ch === '*') re += '.*';
    else if (ch === '%') re += '[^/]*';
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

/** INBOX matches case-insensitively; other names exactly. */
function matchesPattern(re: RegExp, name: string): boolean {
  return re.test(name) || (name === 'INBOX' && new RegExp(re.source, 'si').test(name));
}

export const listCommand: ImapCommand = {
  names: ['LIST', 'LSUB'],
  states: AUTHED,
  async handle({ conn, name }, args) {
    let specialOnly = false;
    const first = args.peek();
    if (name === 'LIST' && first?.t === 'list') {
      args.next('selection options');
      specialOnly = first.v.some((t) => t.t === 'atom' && t.v.toUpperCase() === 'SPECIAL-USE');
    }
    const reference = decodeMutf7(args.astring('reference').toString('utf8'));
    const patternTok = args.next('mailbox pattern');
    if (patternTok.t !== 'atom' && patternTok.t !== 'string')
      throw new ImapSyntaxError('expected a mailbox pattern');
    const pattern = decodeMutf7(
      (patternTok.t === 'atom' ? Buffer.from(patternTok.v, 'latin1') : patternTok.v).toString('utf8'),
    );
    if (!args.done) {
      const kw = args.atom('RETURN');
      if (kw.toUpperCase() !== 'RETURN') throw new ImapSyntaxError('unexpected extra arguments');
      args.list('return options');
    }
    args.end();
    if (pattern === '') {
      await conn.send([`* ${name} (\\Noselect) "${FOLDER_DELIMITER}" ""`]);
      return undefined;
    }
    const m = mail(conn);
    const boxes = await m.folders.listMailboxes(m.wallet);
    const names = new Set(boxes.map((b) => b.name));
    // Parents that exist only as a prefix of another folder are shown \Noselect.
    const all = new Set(names);
    for (const n of names) {
      const parts = n.split(FOLDER_DELIMITER);
      for (let i = 1; i < parts.length; i++) all.add(parts.slice(0, i).join(FOLDER_DELIMITER));
    }
    const re = patternRegex(reference + pattern);
    const sorted = [...all].sort((a, b) =>
      a === 'INBOX' ? -1 : b === 'INBOX' ? 1 : a < b ? -1 : a > b ? 1 : 0,
    );
    for (const folder of sorted) {
      if (!matchesPattern(re, folder)) continue;
      const use = specialUseOf(folder);
      if (specialOnly && !use) continue;
      const attrs: string[] = [];
      if (!names.has(folder)) attrs.push('\\Noselect');
      const hasChildren = [...all].some((o) => o.startsWith(`${folder}${FOLDER_DELIMITER}`));
      attrs.push(hasChildren ? '\\HasChildren' : '\\HasNoChildren');
      if (use) attrs.push(use);
      await conn.send([`* ${name} (${attrs.join(' ')}) "${FOLDER_DELIMITER}" `, ...str(encodeMutf7(folder))]);
    }
    return undefined;
  },
};
