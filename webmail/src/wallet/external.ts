// External wallets: the Wallet Standard (wallets announce themselves with
// the `wallet-standard:register-wallet` event) and the older injected
// provider (`window.solana`-style: connect, signAndSendTransaction,
// signMessage). Both are reduced to one small interface.

import type { Transaction } from '@solana/web3.js';
import bs58 from 'bs58';

export interface ExternalProvider {
  name: string;
  address: string;
  signMessage(message: Uint8Array): Promise<Uint8Array>;
  /** Signs and broadcasts; returns the base58 signature. */
  signAndSendTransaction(tx: Transaction): Promise<string>;
}

interface StandardAccount {
  address: string;
  publicKey: Uint8Array;
  chains: readonly string[];
}

interface StandardWallet {
  name: string;
  chains: readonly string[];
  accounts: readonly StandardAccount[];
  features: Record<string, unknown>;
}

interface InjectedProvider {
  isConnected?: boolean;
  publicKey?: { toBase58(): string } | null;
  connect(): Promise<{ publicKey: { toBase58(): string } }>;
  signAndSendTransaction(tx: Transaction): Promise<{ signature: string }>;
  signMessage(message: Uint8Array, display?: string): Promise<{ signature: Uint8Array }>;
}

export interface WalletChoice {
  name: string;
  connect(): Promise<ExternalProvider>;
}

const SIGN_AND_SEND = 'solana:signAndSendTransaction';
const SIGN_MESSAGE = 'solana:signMessage';
const CONNECT = 'standard:connect';

function standardChoice(w: StandardWallet, chain: string): WalletChoice {
  return {
    name: w.name,
    async connect() {
      const connect = w.features[CONNECT] as { connect(): Promise<{ accounts: readonly StandardAccount[] }> };
      const { accounts } = await connect.connect();
      const account = accounts[0] ?? w.accounts[0];
      if (!account) throw new Error(`${w.name} did not share an account`);
      const send = w.features[SIGN_AND_SEND] as {
        signAndSendTransaction(
          ...inputs: { account: StandardAccount; transaction: Uint8Array; chain: string }[]
        ): Promise<{ signature: Uint8Array }[]>;
      };
      const sign = w.features[SIGN_MESSAGE] as
        | {
            signMessage(
              ...inputs: { account: StandardAccount; message: Uint8Array }[]
            ): Promise<{ signature: Uint8Array }[]>;
          }
        | undefined;
      return {
        name: w.name,
        address: account.address,
        async signMessage(message) {
          if (!sign) throw new Error(`${w.name} cannot sign messages`);
          const [out] = await sign.signMessage({ account, message });
          if (!out) throw new Error(`${w.name} returned no signature`);
          return out.signature;
        },
        async signAndSendTransaction(tx) {
          const transaction = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
          const [out] = await send.signAndSendTransaction({ account, transaction, chain });
          if (!out) throw new Error(`${w.name} returned no signature`);
          return bs58.encode(out.signature);
        },
      };
    },
  };
}

function injectedChoice(name: string, p: InjectedProvider): WalletChoice {
  return {
    name,
    async connect() {
      const { publicKey } = await p.connect();
      return {
        name,
        address: publicKey.toBase58(),
        async signMessage(message) {
          return (await p.signMessage(message, 'utf8')).signature;
        },
        async signAndSendTransaction(tx) {
          return (await p.signAndSendTransaction(tx)).signature;
        },
      };
    },
  };
}

const standardWallets: StandardWallet[] = [];
let listening = false;

/** Starts listening for Wallet Standard registrations (call once, early). */
export function listenForWallets(win: Window): void {
  if (listening) return;
  listening = true;
  const api = {
    register: (...wallets: StandardWallet[]) => {
      standardWallets.push(...wallets);
      return () => {};
    },
  };
  win.addEventListener('wallet-standard:register-wallet', (e) => {
    (e as CustomEvent<(a: typeof api) => void>).detail(api);
  });
  win.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }));
}

/** The Wallet Standard chain id for an RPC URL (a loopback node is a local validator). */
export function chainIdFor(rpcUrl: string): string {
  let host = '';
  try {
    host = new URL(rpcUrl).hostname;
  } catch {
    return 'solana:localnet';
  }
  if (host === 'localhost' || host === '[::1]' || host.startsWith('127.')) return 'solana:localnet';
  if (host.includes('devnet')) return 'solana:devnet';
  if (host.includes('testnet')) return 'solana:testnet';
  return 'solana:mainnet';
}

/** Wallets the page can use: Wallet Standard ones that can sign and send on Solana, then an injected provider. */
export function availableWallets(win: Window, chain: string): WalletChoice[] {
  const out: WalletChoice[] = [];
  for (const w of standardWallets) {
    if (w.features[SIGN_AND_SEND] && w.features[CONNECT]) out.push(standardChoice(w, chain));
  }
  const injected = (win as unknown as { solana?: InjectedProvider }).solana;
  if (injected && typeof injected.signAndSendTransaction === 'function') {
    out.push(injectedChoice('Injected wallet (window.solana)', injected));
  }
  return out;
}
