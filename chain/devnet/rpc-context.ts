// What every RPC method receives.
import type { Logger } from 'pino';
import type { Bank } from './bank.ts';
import type { Fidelity } from './fidelity.ts';

export interface RpcContext {
  bank: Bank;
  logger: Logger;
  /** host:port of this node's RPC, for getClusterNodes. */
  rpcAddress: string;
  /** Fidelity mode's switches; absent for a plain devnet. */
  fidelity?: Fidelity;
}

export type RpcMethod = (params: unknown[], ctx: RpcContext) => unknown;

export function withContext<T>(
  slot: number,
  value: T,
): { context: { apiVersion: string; slot: number }; value: T } {
  return { context: { apiVersion: DEVNET_VERSION, slot }, value };
}

/** Reported as solana-core's version: the RPC surface devnet follows. */
export const DEVNET_VERSION = '2.2.0';
export const DEVNET_FEATURE_SET = 3294202862;
