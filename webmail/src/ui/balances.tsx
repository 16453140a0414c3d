// Balances: the wallet's SOL, its mailbox on chain, and buying stamps toward
// any recipient (the same prepay card, signed by either wallet kind).
import { useEffect, useState } from 'preact/hooks';
import type { Mailbox } from '../../../chain/client/accounts/index.ts';
import { fetchStampQuote, getFrombox, getMailbox, type StampQuote } from '../../../chain/client/client.ts';
import { fromHash } from '../../../chain/client/hash.ts';
import { formatSol } from '../chain/compose.ts';
import { type ResolvedRecipient, resolveRecipient } from '../chain/recipient.ts';
import { useApp } from '../session.ts';
import { PrepayCard } from './prepay-card.tsx';
import { ErrorText, Field } from './widgets.tsx';

export function BalancesView() {
  const app = useApp();
  const s = app.session;
  const [lamports, setLamports] = useState<number | null>(null);
  const [mailbox, setMailbox] = useState<Mailbox | null | undefined>(undefined);
  const [error, setError] = useState('');
  const [to, setTo] = useState('');
  const [target, setTarget] = useState<{ r: ResolvedRecipient; quote: StampQuote; stamps: bigint } | null>(
    null,
  );
  const [notice, setNotice] = useState('');

  const refresh = async () => {
    setError('');
    try {
      const [bal, mb] = await Promise.all([
        s.conn.getBalance(s.wallet.publicKey, 'confirmed'),
        getMailbox(s.conn, s.programId, s.wallet.publicKey),
      ]);
      setLamports(bal);
      setMailbox(mb);
    } catch (err) {
      setError(app.errorText(err));
    }
  };
  useEffect(() => {
    void refresh();
  }, []);

  const quote = async () => {
    setError('');
    setNotice('');
    setTarget(null);
    try {
      const r = await resolveRecipient(s.conn, s.programId, to);
      const [q, fb] = await Promise.all([
        fetchStampQuote(s.conn, s.programId, { buyer: s.wallet.publicKey, recipient: r.wallet, stamps: 1n }),
        getFrombox(s.conn, s.programId, fromHash(s.wallet.publicKey), r.wallet),
      ]);
      setTarget({ r, quote: q, stamps: fb?.stamps ?? 0n });
    } catch (err) {
      setError(app.errorText(err));
    }
  };

  return (
    <section aria-labelledby="balances-title">
      <h1 id="balances-title" tabIndex={-1}>
        Balances
      </h1>
      <ErrorText text={error} />
      <dl class="headers">
        <dt>Wallet</dt>
        <dd>
          <code>{s.wallet.address}</code> ({s.wallet.kind === 'in-page' ? 'in-page wallet' : 'browser wallet'}
          )
        </dd>
        <dt>Balance</dt>
        <dd data-testid="balance">{lamports === null ? '…' : `${formatSol(BigInt(lamports))} SOL`}</dd>
        <dt>Mailbox</dt>
        <dd>
          {mailbox === undefined
            ? '…'
            : mailbox === null
              ? 'none on chain'
              : `${String(mailbox.mailCount)} messages received; first-contact postage ${formatSol(mailbox.defaultPostage)} SOL${mailbox.noIpfs ? '; local-only (no_ipfs)' : ''}`}
        </dd>
      </dl>
      <button type="button" onClick={refresh}>
        Refresh
      </button>
      <h2>Buy stamps</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void quote();
        }}
      >
        <Field label="Recipient (wallet address or alias)">
          <input type="text" value={to} onInput={(e) => setTo(e.currentTarget.value)} spellcheck={false} />
        </Field>
        <button type="submit">Quote</button>
      </form>
      {notice && <p role="status">{notice}</p>}
      {target && (
        <>
          <p>
            You hold {String(target.stamps)} stamp(s) toward {target.r.input}.
          </p>
          <PrepayCard
            recipient={target.r.wallet}
            recipientLabel={target.r.input}
            quote={target.quote}
            onBought={async (out) => {
              setTarget(null);
              setNotice(
                out.status === 'confirmed'
                  ? 'Stamps bought.'
                  : 'The purchase is still pending; check again shortly.',
              );
              await refresh();
            }}
          />
        </>
      )}
    </section>
  );
}
