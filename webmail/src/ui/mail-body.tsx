// A message's headers, body and attachments, rendered safely: text/plain as
// text; text/html sanitized into a sandboxed iframe whose CSP blocks remote
// content until the reader asks for it; attachments as downloads.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { hasRemoteContent, htmlFrameDocument, sanitizeHtml } from '../mail/html-frame.ts';
import type { ParsedMail } from '../mail/parse.ts';

function who(a: { name: string; address: string } | null): string {
  if (!a) return '(none)';
  return a.name ? `${a.name} <${a.address}>` : a.address;
}

function sizeText(n: number): string {
  return n < 1024
    ? `${n} B`
    : n < 1024 * 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function MailBody({ mail }: { mail: ParsedMail }) {
  const [remote, setRemote] = useState(false);
  const [showHtml, setShowHtml] = useState(mail.html !== null);
  const sanitized = useMemo(() => (mail.html ? sanitizeHtml(mail.html, remote) : ''), [mail.html, remote]);
  const remoteWanted = useMemo(
    () => (mail.html ? hasRemoteContent(sanitizeHtml(mail.html, true)) : false),
    [mail.html],
  );
  const links = useMemo(
    () =>
      mail.attachments.map((a) => ({
        a,
        url: URL.createObjectURL(
          new Blob([a.content as BlobPart], { type: a.mimeType || 'application/octet-stream' }),
        ),
      })),
    [mail],
  );
  useEffect(
    () => () => {
      for (const l of links) URL.revokeObjectURL(l.url);
    },
    [links],
  );

  return (
    <article class="mail">
      <h1 id="mail-subject" data-testid="mail-subject" tabIndex={-1}>
        {mail.subject || '(no subject)'}
      </h1>
      <dl class="headers">
        <dt>From</dt>
        <dd data-testid="mail-from">{who(mail.from)}</dd>
        <dt>To</dt>
        <dd>{mail.to.map(who).join(', ') || '(none)'}</dd>
        {mail.date && (
          <>
            <dt>Date</dt>
            <dd>{new Date(mail.date).toLocaleString()}</dd>
          </>
        )}
      </dl>
      {mail.html !== null && (
        <div class="toolbar small">
          <button type="button" onClick={() => setShowHtml(!showHtml)}>
            {showHtml ? 'Show plain text' : 'Show formatted'}
          </button>
          {showHtml && remoteWanted && !remote && (
            <>
              <span class="muted">Remote content is blocked.</span>
              <button type="button" onClick={() => setRemote(true)}>
                Load remote content
              </button>
            </>
          )}
        </div>
      )}
      {showHtml && mail.html !== null ? (
        <iframe
          class="html-body"
          title="Message body"
          sandbox="allow-popups allow-popups-to-escape-sandbox"
          referrerpolicy="no-referrer"
          srcdoc={htmlFrameDocument(sanitized, remote)}
        />
      ) : (
        <pre class="text-body" data-testid="mail-text">
          {mail.text ?? '(this message has no plain-text part)'}
        </pre>
      )}
      {links.length > 0 && (
        <section aria-label="Attachments">
          <h3>Attachments</h3>
          <ul class="plain">
            {links.map(({ a, url }) => (
              <li key={url}>
                <a href={url} download={a.filename}>
                  {a.filename}
                </a>{' '}
                <span class="muted">
                  {a.mimeType}, {sizeText(a.content.length)}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </article>
  );
}
