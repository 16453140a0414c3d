// "Attested sender of <domain>": read from the chain by the browser itself
// (trustless and server mode alike), from the sealed envelope's sender, never
// from the message's own header fields. Shown when the envelope sender is
// `<wallet>@<domain>` and that domain's current authority attested the
// wallet (docs/protocol.md, "Sender attestations and reputation").
import { useEffect, useState } from 'preact/hooks';
import { attestedSender } from '../../../chain/client/attest-client.ts';
import { walletSender } from '../chain/sender-wallet.ts';
import { useApp } from '../session.ts';

export function AttestedBadge({ envelopeFrom }: { envelopeFrom: string }) {
  const s = useApp().session;
  const [domain, setDomain] = useState<string | null>(null);
  useEffect(() => {
    const named = walletSender(envelopeFrom);
    if (!named) return;
    let live = true;
    attestedSender(s.conn, s.programId, named.domain, named.wallet)
      .then((hit) => {
        if (live && hit) setDomain(named.domain);
      })
      // A failed lookup shows no badge; the message itself is unaffected.
      .catch(() => {});
    return () => {
      live = false;
    };
  }, [envelopeFrom]);
  if (!domain) return null;
  return (
    <p
      class="badge attested"
      data-testid="attested-badge"
      title="attested on chain by the domain's authority"
    >
      ✓ attested sender of {domain}
    </p>
  );
}
