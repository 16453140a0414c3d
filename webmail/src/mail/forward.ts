// Forward: a prefilled draft from an opened message, either inline (the
// original's headers block, then its text) or as an attachment (the exact
// plaintext bytes as message/rfc822, the filename from the subject).
import type { Draft } from '../chain/compose.ts';
import type { LoadedMessage } from '../messages.ts';
import { bytesToBase64, forwardSubject } from './build-message.ts';

function textOf(m: LoadedMessage): string {
  const p = m.parsed;
  if (p.text) return p.text;
  if (!p.html) return '';
  // An HTML-only original: its text, without markup (parsed in an inert document).
  const doc = new DOMParser().parseFromString(p.html, 'text/html');
  return doc.body.textContent ?? '';
}

const who = (a: { name: string; address: string } | null) =>
  a ? (a.name ? `${a.name} <${a.address}>` : a.address) : '';

export function forwardDraft(m: LoadedMessage, asAttachment: boolean): Draft {
  const p = m.parsed;
  const base: Draft = {
    to: '',
    subject: forwardSubject(p.subject),
    body: '',
    bountySol: '',
    claimDays: '',
    replyTo: null,
  };
  if (asAttachment) {
    const name =
      (p.subject || 'message')
        .replace(/[^\p{L}\p{N} ._-]+/gu, '_')
        .slice(0, 80)
        .trim() || 'message';
    return {
      ...base,
      body: '\n\nThe forwarded message is attached.',
      attachments: [
        { filename: `${name}.eml`, contentType: 'message/rfc822', base64: bytesToBase64(m.opened.raw) },
      ],
    };
  }
  const lines = [
    '---------- Forwarded message ----------',
    `From: ${who(p.from) || m.opened.envelope.from}`,
    ...(p.date ? [`Date: ${p.date}`] : []),
    `Subject: ${p.subject}`,
    `To: ${p.to.map(who).join(', ') || m.opened.envelope.to}`,
    '',
    textOf(m),
  ];
  return { ...base, body: `\n\n${lines.join('\n')}` };
}
