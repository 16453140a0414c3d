// Parsing an opened message in the page (postal-mime is browser-native).
import PostalMime from 'postal-mime';

export interface ParsedAddress {
  name: string;
  address: string;
}

export interface ParsedAttachment {
  filename: string;
  mimeType: string;
  content: Uint8Array;
}

export interface ParsedMail {
  subject: string;
  from: ParsedAddress | null;
  to: ParsedAddress[];
  date: string | null;
  messageId: string | null;
  references: string[];
  text: string | null;
  html: string | null;
  attachments: ParsedAttachment[];
}

function addr(a: { name?: string; address?: string } | undefined): ParsedAddress | null {
  if (!a?.address) return null;
  return { name: a.name ?? '', address: a.address };
}

function stripAngles(id: string | undefined): string | null {
  if (!id) return null;
  return id.trim().replace(/^<|>$/g, '') || null;
}

export async function parseMail(raw: Uint8Array): Promise<ParsedMail> {
  const email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer' });
  const to: ParsedAddress[] = [];
  for (const a of email.to ?? []) {
    const one = addr(a as { name?: string; address?: string });
    if (one) to.push(one);
    for (const member of (a as { group?: { name?: string; address?: string }[] }).group ?? []) {
      const m = addr(member);
      if (m) to.push(m);
    }
  }
  return {
    subject: email.subject ?? '',
    from: addr(email.from as { name?: string; address?: string } | undefined),
    to,
    date: email.date ?? null,
    messageId: stripAngles(email.messageId),
    references: (email.references ?? '')
      .split(/\s+/)
      .map((r) => stripAngles(r))
      .filter((r): r is string => r !== null),
    text: email.text ?? null,
    html: email.html ?? null,
    attachments: email.attachments.map((a) => ({
      filename: a.filename ?? 'attachment',
      mimeType: a.mimeType,
      content:
        a.content instanceof ArrayBuffer
          ? new Uint8Array(a.content)
          : new TextEncoder().encode(String(a.content)),
    })),
  };
}
