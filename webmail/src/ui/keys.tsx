// Delegated encryption key management: what is published on chain, which
// keys this browser holds, publish or rotate a new key, remove it, import a
// key file.
import { useEffect, useState } from 'preact/hooks';
import { MAILBOX_KEY_SIZE, rentExemptLamports } from '../../../chain/client/accounts/index.ts';
import { publishKeyInstruction } from '../../../chain/client/instructions.ts';
import { formatSol, SIGNATURE_FEE } from '../chain/compose.ts';
import {
  importMailboxKey,
  newMailboxKey,
  type PublishedKey,
  publishedKey,
  publishKey,
  removeKey,
} from '../chain/mailbox-key.ts';
import { type FeeQuote, quotePriorityFee } from '../chain/tx.ts';
import { forgetMessages } from '../messages.ts';
import { addMailboxKey, useApp } from '../session.ts';
import { BackupPanel } from './backup.tsx';
import { useAction } from './use-action.ts';
import { ConfirmButton, ErrorText, Field } from './widgets.tsx';

export function KeysView() {
  const app = useApp();
  const s = app.session;
  const [published, setPublished] = useState<PublishedKey | null | undefined>(undefined);
  const [importText, setImportText] = useState('');
  // Set once a key is published from here: the backup panel becomes a prompt.
  const [justPublished, setJustPublished] = useState(false);

  const [balance, setBalance] = useState<bigint | null>(null);
  const [feeQuote, setFeeQuote] = useState<FeeQuote | null>(null);
  const refresh = async () => {
    try {
      const owner = s.wallet.publicKey;
      // The priority fee of a PublishKey (its price is what the publish then pays).
      const sample = publishKeyInstruction({ programId: s.programId, owner, pubKey: owner });
      const [key, lamports, quote] = await Promise.all([
        publishedKey(s.conn, s.programId, owner),
        s.conn.getBalance(owner, 'confirmed'),
        quotePriorityFee(s.conn, [sample], owner),
      ]);
      setPublished(key);
      setBalance(BigInt(lamports));
      setFeeQuote(quote);
    } catch (err) {
      setError(app.errorText(err));
    }
  };
  const { busy, error, notice, run, setError } = useAction(refresh);
  useEffect(() => {
    void refresh();
  }, []);

  const publishNew = () =>
    run('Publishing a new mailbox key…', async () => {
      const key = newMailboxKey(Date.now());
      // Stored in the vault first: a published key whose secret was lost would lock the mail away.
      const next = await addMailboxKey(s, key);
      app.setSession(next);
      const out = await publishKey(
        next.conn,
        next.programId,
        next.wallet,
        key,
        feeQuote ? { priorityFee: feeQuote } : {},
      );
      forgetMessages();
      setJustPublished(true);
      return out.status === 'confirmed'
        ? 'Mailbox key published. New mail is sealed to it.'
        : 'Submitted; the chain has not confirmed it yet.';
    });

  const remove = () =>
    run('Removing the published key…', async () => {
      const out = await removeKey(s.conn, s.programId, s.wallet);
      return out.status === 'confirmed'
        ? 'Removed. New mail is sealed to the wallet key again.'
        : 'Submitted; not yet confirmed.';
    });

  const doImport = () =>
    run('Importing…', async () => {
      const key = importMailboxKey(importText, Date.now());
      app.setSession(await addMailboxKey(s, key));
      setImportText('');
      forgetMessages();
      return 'Key imported into this browser’s vault.';
    });

  const held = new Set(s.vault.mailboxKeys.map((k) => k.publicKey));
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title" tabIndex={-1}>
        Mailbox keys
      </h1>
      <p>
        Mail is sealed to your published mailbox key when there is one, else to your wallet key.
        {s.wallet.kind === 'external' &&
          ' A browser wallet cannot decrypt, so publish a mailbox key to read mail.'}
      </p>
      <ErrorText text={error} />
      {notice && <p role="status">{notice}</p>}
      <dl class="headers">
        <dt>Published on chain</dt>
        <dd data-testid="published-key">
          {published === undefined ? (
            '…'
          ) : published === null ? (
            'none'
          ) : (
            <>
              <code>{published.publicKey}</code>{' '}
              {held.has(published.publicKey)
                ? '(held in this browser)'
                : '(NOT held in this browser — mail sealed to it cannot be read here)'}
            </>
          )}
        </dd>
        <dt>Keys in this browser</dt>
        <dd>
          {s.vault.mailboxKeys.length === 0 ? (
            'none'
          ) : (
            <ul class="plain">
              {s.vault.mailboxKeys.map((k) => (
                <li key={k.publicKey}>
                  <code>{k.publicKey}</code>
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      <div class="toolbar">
        <ConfirmButton
          label={published ? 'Rotate: publish a new key' : 'Publish a mailbox key'}
          question={publishCost(
            published ? 0n : rentExemptLamports(MAILBOX_KEY_SIZE),
            balance,
            feeQuote?.lamports ?? 0n,
          )}
          yes="Yes, publish"
          disabled={busy}
          onConfirm={() => void publishNew()}
        />
        {published && (
          <ConfirmButton
            label="Remove the published key"
            question="Remove it from the chain? New mail is then sealed to your wallet key; mail already sealed to this key still needs it."
            yes="Yes, remove it"
            disabled={busy}
            onConfirm={() => void remove()}
          />
        )}
      </div>
      <BackupPanel prompt={justPublished} />
      <h2>Import a key file</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void doImport();
        }}
      >
        <Field label="Mailbox key file (JSON array)">
          <textarea
            rows={2}
            value={importText}
            onInput={(e) => setImportText(e.currentTarget.value)}
            spellcheck={false}
          />
        </Field>
        <button type="submit" disabled={busy}>
          Import
        </button>
      </form>
    </section>
  );
}

/** What publishing moves, in words: rent (when the account is new), the fee, the total, the balance after. */
function publishCost(rent: bigint, balance: bigint | null, priority: bigint): string {
  const total = rent + SIGNATURE_FEE + priority;
  const parts = [
    rent > 0n ? `account rent ${formatSol(rent)} SOL (returned when you remove the key)` : null,
    `network fee ${formatSol(SIGNATURE_FEE)} SOL`,
    `priority fee ${formatSol(priority)} SOL`,
  ].filter(Boolean);
  const after = balance === null ? '' : `; balance afterwards ${formatSol(balance - total)} SOL`;
  return `This writes your key on chain: ${parts.join(' + ')} = ${formatSol(total)} SOL${after}.`;
}
