// Commander argument parsers shared by the subcommands: each turns one
// option's text into a value or throws InvalidArgumentError, which commander
// reports as "option '--x <v>' argument 'v' is invalid. <message>" (exit 2).
import { InvalidArgumentError } from 'commander';
import { isBase58Key } from '../../chain/client/index.ts';

/** An integer in [min, max], written in decimal digits only. */
export function intOption(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(`expected an integer ${min}..${max}, got "${value}"`);
    }
    return n;
  };
}

/** An http(s) URL, without trailing slashes (callers append paths). */
export function urlOption(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value.replace(/\/+$/, '');
  } catch {}
  throw new InvalidArgumentError(`expected an http(s) URL, got "${value}"`);
}

/** Solana's cluster monikers, as `solana -u` takes them, and the public JSON-RPC URL each names. */
export const RPC_MONIKERS: Readonly<Record<string, string>> = {
  devnet: 'https://api.devnet.solana.com',
  testnet: 'https://api.testnet.solana.com',
  'mainnet-beta': 'https://api.mainnet-beta.solana.com',
  localhost: 'http://127.0.0.1:8899',
};

/** The flags of every `--rpc` option: `-u` is its short form, as in the Solana CLI. */
export const RPC_FLAGS = '-u, --rpc <url>';
/** Appended to the help of every `--rpc` option. */
export const RPC_MONIKER_HELP = ` (or ${Object.keys(RPC_MONIKERS).join(', ')})`;

/** `--rpc` / `-u`: a cluster moniker (devnet, testnet, mainnet-beta, localhost) or an http(s) URL. */
export function rpcOption(value: string): string {
  if (Object.hasOwn(RPC_MONIKERS, value)) return RPC_MONIKERS[value] as string;
  try {
    return urlOption(value);
  } catch {
    throw new InvalidArgumentError(
      `expected an http(s) URL or one of ${Object.keys(RPC_MONIKERS).join(', ')}, got "${value}"`,
    );
  }
}

/** A base58 public key; `what` names it in the error ("wallet address", "program id"). */
export function addressOption(what: string) {
  return (value: string): string => {
    if (!isBase58Key(value))
      throw new InvalidArgumentError(`expected a base58 ${what} (32 bytes), got "${value}"`);
    return value;
  };
}

const LAMPORTS_PER_SOL = 1_000_000_000n;
const U64_MAX = (1n << 64n) - 1n;

/** An amount of SOL (up to 9 decimals, e.g. `1.5`) → lamports, at most u64. */
export function solOption(value: string): bigint {
  const m = /^(\d{1,11})(?:\.(\d{1,9}))?$/.exec(value);
  const lamports = m ? BigInt(m[1] as string) * LAMPORTS_PER_SOL + BigInt((m[2] ?? '').padEnd(9, '0')) : -1n;
  if (lamports < 0n || lamports > U64_MAX)
    throw new InvalidArgumentError(
      `expected an amount of SOL (e.g. 1.5, at most 9 decimals), got "${value}"`,
    );
  return lamports;
}
