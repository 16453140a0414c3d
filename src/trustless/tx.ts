// Sending a transaction through any signer (the webmail's wallets, the
// CLI's key file) and polling its signature to `confirmed`. A poll budget
// bounds the wait: past it the caller learns the transaction is still
// pending rather than failed. Shared by the webmail and the CLI; runs in
// Node and the browser.
import { type Connection, type PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { type MailProgramError, parseMailProgramError } from '../../chain/errors.ts';

/** Whatever signs for a wallet and broadcasts: resolves to the signature (not yet confirmed). */
export interface TxSubmitter {
  publicKey: PublicKey;
  submit(conn: Connection, tx: Transaction): Promise<string>;
}

export class TxFailedError extends Error {
  constructor(
    message: string,
    readonly mailError: MailProgramError | null,
    readonly signature: string | null,
  ) {
    super(message);
    this.name = 'TxFailedError';
  }
}

export type TxOutcome = { status: 'confirmed'; signature: string } | { status: 'pending'; signature: string };

export interface PollOptions {
  /** How long to poll before reporting 'pending'; default 30 s. */
  budgetMs?: number;
  intervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Called once the transaction is submitted, before polling starts. */
  onSubmitted?: (signature: string) => void;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function pollSignature(
  conn: Connection,
  signature: string,
  opts: PollOptions = {},
): Promise<TxOutcome> {
  const budget = opts.budgetMs ?? 30_000;
  const interval = opts.intervalMs ?? 400;
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? defaultSleep;
  const deadline = now() + budget;
  for (;;) {
    const { value } = await conn.getSignatureStatuses([signature]);
    const st = value[0];
    if (st?.err) {
      const parsed = parseMailProgramError(st.err);
      throw new TxFailedError(
        parsed
          ? `the mail program refused: ${parsed.name}`
          : `the transaction failed: ${JSON.stringify(st.err)}`,
        parsed,
        signature,
      );
    }
    if (st && (st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized')) {
      return { status: 'confirmed', signature };
    }
    if (now() >= deadline) return { status: 'pending', signature };
    await sleep(interval);
  }
}

/** Signs (or has the external wallet sign) and submits the instructions, then polls to commitment. */
export async function sendInstructions(
  conn: Connection,
  wallet: TxSubmitter,
  ixs: TransactionInstruction[],
  opts: PollOptions = {},
): Promise<TxOutcome> {
  let signature: string;
  try {
    signature = await wallet.submit(conn, new Transaction().add(...ixs));
  } catch (err) {
    const parsed = parseMailProgramError(err);
    if (parsed) throw new TxFailedError(`the mail program refused: ${parsed.name}`, parsed, null);
    throw err;
  }
  opts.onSubmitted?.(signature);
  return pollSignature(conn, signature, opts);
}
