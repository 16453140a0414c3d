// A message's headers, body and attachments, rendered safely: text/plain as
// text; text/html sanitized into a sandboxed iframe whose CSP blocks remote
// content until the reader asks for it; attachments as downloads. The frame
// is as tall as its content (up to FRAME_MAX_HEIGHT, then it scrolls inside).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { FRAME_MAX_HEIGHT, hasRemoteContent, htmlFrameDocument, sanitizeHtml } from '../mail/html-frame.ts';
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
  const remoteWanted = useMemo(() => (mail.html ? hasRemoteContent(mail.html) : false), [mail.html]);
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
        // Keyed by the remote choice: "Load remote content" replaces the frame
        // instead of navigating it, so no history entry is added (Back still
        // goes to the inbox).
        <HtmlFrame key={remote ? 'remote' : 'blocked'} doc={htmlFrameDocument(sanitized, remote)} />
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

/**
 * The sandboxed frame: no scripts, ever (sandbox without allow-scripts, and a
 * CSP without script-src). allow-same-origin lets this page read the frame's
 * content height — with scripting disabled in the frame, nothing in the mail
 * can use that origin.
 */
function HtmlFrame({ doc }: { doc: string }) {
  const ref = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState<number | null>(null);
  useEffect(() => {
    const frame = ref.current;
    if (!frame) return;
    let observer: ResizeObserver | null = null;
    const fitHeight = () => {
      const d = frame.contentDocument;
      if (!d?.documentElement) return;
      const h = Math.max(d.documentElement.scrollHeight, d.body?.scrollHeight ?? 0);
      setHeight(Math.min(FRAME_MAX_HEIGHT, Math.ceil(h) + 2));
    };
    const onLoad = () => {
      fitHeight();
      const d = frame.contentDocument;
      // Images arriving later (data: now, remote once allowed) grow the content.
      d?.addEventListener('load', fitHeight, true);
      if (d?.body && typeof ResizeObserver !== 'undefined') {
        observer = new ResizeObserver(fitHeight);
        observer.observe(d.body);
      }
    };
    frame.addEventListener('load', onLoad);
    if (frame.contentDocument?.URL === 'about:srcdoc' && frame.contentDocument.readyState === 'complete')
      onLoad();
    window.addEventListener('resize', fitHeight);
    return () => {
      frame.removeEventListener('load', onLoad);
      window.removeEventListener('resize', fitHeight);
      observer?.disconnect();
    };
  }, [doc]);
  return (
    <iframe
      ref={ref}
      class="html-body"
      title="Message body"
      sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox"
      referrerpolicy="no-referrer"
      srcdoc={doc}
      style={height === null ? undefined : { height: `${height}px` }}
      data-testid="html-frame"
    />
  );
}
