// The receipt of a send through the server: who the server took it for, who
// it holds for postage (its 402), and one card per held recipient, which
// buys a stamp and sends that copy on chain. The heading follows as the held
// recipients are sent to, so the page always says who got it.
import type { ComponentChildren, RefObject } from 'preact';
import { useState } from 'preact/hooks';
import type { Draft } from '../chain/compose.ts';
import type { PostageHold } from '../server/api.ts';
import { HeldRecipient } from './held-recipient.tsx';

interface Props {
  msgid: string | null;
  /** Recipients the server queued the message for. */
  sentTo: string[];
  /** Recipients the server held for postage. */
  held: PostageHold[];
  draft: Draft;
  receiptRef: RefObject<HTMLElement | null>;
  actions: ComponentChildren;
}

export function ServerReceipt({ msgid, sentTo, held, draft, receiptRef, actions }: Props) {
  const [onChain, setOnChain] = useState<string[]>([]);
  const waiting = held.filter((h) => !onChain.includes(h.address));
  const heading =
    held.length === 0
      ? 'Handed to the server'
      : waiting.length === 0
        ? 'Sent to every recipient'
        : sentTo.length + onChain.length > 0
          ? 'Sent to some recipients; others wait for postage'
          : 'Held: every recipient asks for postage';
  return (
    <>
      <section
        class="card receipt"
        data-testid="server-receipt"
        aria-label="Receipt"
        tabIndex={-1}
        ref={receiptRef}
      >
        <h2 data-testid="server-receipt-title">{heading}</h2>
        {sentTo.length > 0 && (
          <>
            <p>
              The server delivers it to {sentTo.length === 1 ? 'this recipient' : 'these recipients'} (message
              id <code>{msgid}</code>); a copy is in your Sent folder:
            </p>
            <ul data-testid="sent-to">
              {sentTo.map((a) => (
                <li key={a}>{a}</li>
              ))}
            </ul>
          </>
        )}
        {onChain.length > 0 && (
          <>
            <p>Sent on chain after postage, signed by your wallet:</p>
            <ul data-testid="sent-on-chain">
              {onChain.map((a) => (
                <li key={a}>{a}</li>
              ))}
            </ul>
          </>
        )}
        {waiting.length > 0 && (
          <>
            <p>
              Not sent yet: {waiting.length === 1 ? 'this recipient asks' : 'these recipients ask'}{' '}
              first-contact senders for postage. Buy a stamp below to send to{' '}
              {waiting.length === 1 ? 'it' : 'each'}, signed by your wallet on chain.
            </p>
            <ul data-testid="held-to">
              {waiting.map((h) => (
                <li key={h.address}>{h.address}</li>
              ))}
            </ul>
          </>
        )}
        {actions}
      </section>
      {held.map((h) => (
        <HeldRecipient
          key={h.address}
          hold={h}
          draft={draft}
          onSent={() => setOnChain((list) => (list.includes(h.address) ? list : [...list, h.address]))}
        />
      ))}
    </>
  );
}
